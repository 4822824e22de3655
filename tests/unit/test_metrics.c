// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_metrics.c - the model as OpenMetrics and Prometheus text (view/metrics.c): names and
 * suffixes per format, families written whole, label values a traced process controls
 * escaped, the bound on site series and which sites qualify, a site's readable name, the
 * exited image of an exec'd pid left out, unknown values left out rather than zero, and the
 * Accept header's negotiation.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "view/format.h"
#include "view/metrics.h"

static char *render(const struct model *m, enum metrics_format fmt, unsigned int max_sites)
{
	struct metrics_opts o = { .format = fmt, .max_sites = max_sites, .time_s = 1e9 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f || metrics__write(f, m, &o))
		abort();
	fclose(f);
	return buf;
}

/* Lines of text that start with prefix. */
static int count_lines(const char *text, const char *prefix)
{
	size_t n = strlen(prefix);
	int count = 0;

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		count += !strncmp(l, prefix, n);
	return count;
}

static struct sym_frame frames[4];
static struct site sites[2][4];
static struct process procs[3];
static struct model model;

/*
 * Two live processes: pid 10 "leaky" with four heap sites (three flagged) and valid
 * counters, pid 20 "quiet" with one unflagged site and counters not read.
 */
static void two_procs(void)
{
	memset(sites, 0, sizeof(sites));
	frames[0] = (struct sym_frame){ .addr = 0x10, .symbol = "operator new(unsigned long)" };
	frames[1] = (struct sym_frame){ .addr = 0x20, .symbol = "leak_new()", .file = "/src/leak.cc",
					.line = 12 };
	frames[2] = (struct sym_frame){ .addr = 0x30, .symbol = "main", .file = "/src/leak.cc",
					.line = 40 };
	frames[3] = (struct sym_frame){ .addr = 0x40, .module = "/usr/lib/libstripped.so" };
	for (int i = 0; i < 4; i++) {
		sites[0][i] = (struct site){ .kind = LT_KIND_HEAP, .stack_hash = 0x100 + i,
					     .outstanding_bytes = 1000 * (i + 1),
					     .outstanding_count = i + 1, .allocs = 10 + i,
					     .growth_per_s = 100.0 * i, .flagged = i > 0,
					     .frames = frames, .n_frames = 3 };
	}
	sites[0][3].frames = &frames[3];
	sites[0][3].n_frames = 1;
	sites[1][0] = (struct site){ .kind = LT_KIND_FD, .stack_hash = 0x200, .outstanding_count = 1,
				     .allocs = 1, .frames = &frames[2], .n_frames = 1 };
	procs[0] = (struct process){ .pid = 10, .gen = 1, .comm = "leaky", .sites = sites[0],
				     .n_sites = 4, .heap_outstanding_bytes = 10000,
				     .heap_outstanding_count = 10, .heap_allocs = 46,
				     .flags = PROC_HEAP_GROWTH | PROC_RSS_GROWTH,
				     .counters = { .rss_bytes = 5 << 20, .vm_bytes = 50 << 20,
						   .fd_count = 4, .threads = 2, .valid = true } };
	procs[1] = (struct process){ .pid = 20, .gen = 2, .comm = "quiet", .sites = sites[1],
				     .n_sites = 1, .fd_outstanding = 1, .fd_opens = 1 };
	model = (struct model){ .procs = procs, .n_procs = 2, .resources = RES_ALL,
				.interval_s = 1, .probes_attached = 17 };
}

static void test_metrics_counters_end_in_total_and_openmetrics_names_families_without_it(void)
{
	char *prom, *om;

	two_procs();
	prom = render(&model, METRICS_PROMETHEUS, 20);
	om = render(&model, METRICS_OPENMETRICS, 20);
	CHECK_EQ_INT(count_lines(prom, "# TYPE leaktop_heap_allocs_total counter"), 1);
	CHECK_EQ_INT(count_lines(om, "# TYPE leaktop_heap_allocs counter"), 1);
	CHECK_EQ_INT(count_lines(prom, "leaktop_heap_allocs_total{pid=\"10\",comm=\"leaky\"} 46"), 1);
	CHECK_EQ_INT(count_lines(om, "leaktop_heap_allocs_total{pid=\"10\",comm=\"leaky\"} 46"), 1);
	/* Units: OpenMetrics only. */
	CHECK_EQ_INT(count_lines(om, "# UNIT leaktop_heap_outstanding_bytes bytes"), 1);
	CHECK_EQ_INT(count_lines(prom, "# UNIT"), 0);
	/* The info type is OpenMetrics'; the Prometheus format calls it a gauge. */
	CHECK_EQ_INT(count_lines(om, "# TYPE leaktop_build info"), 1);
	CHECK_EQ_INT(count_lines(prom, "# TYPE leaktop_build_info gauge"), 1);
	CHECK_EQ_INT(count_lines(om, "leaktop_build_info{version=\"" LEAKTOP_VERSION "\"} 1"), 1);
	free(prom);
	free(om);
}

static void test_metrics_openmetrics_ends_with_eof_and_the_prometheus_format_does_not(void)
{
	char *prom, *om;
	size_t n;

	two_procs();
	prom = render(&model, METRICS_PROMETHEUS, 20);
	om = render(&model, METRICS_OPENMETRICS, 20);
	n = strlen(om);
	CHECK(n > 6 && !strcmp(om + n - 6, "# EOF\n"));
	CHECK_EQ_INT(count_lines(om, "# EOF"), 1);
	CHECK_EQ_INT(count_lines(prom, "# EOF"), 0);
	free(prom);
	free(om);
}

/* Is every family's block of samples in one piece (no name comes back after another)? */
static bool families_contiguous(char *text)
{
	char seen[256][96], cur[96] = "";
	int n_seen = 0;

	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
		char name[96];
		size_t len;

		if (l[0] == '#') {
			/* "# TYPE name ..." starts a family. */
			if (sscanf(l, "# TYPE %95s", name) != 1)
				continue;
		} else {
			len = strcspn(l, "{ ");
			snprintf(name, sizeof(name), "%.*s", (int)len, l);
			/* A sample of the family just declared (its name plus a suffix). */
			if (cur[0] && !strncmp(name, cur, strlen(cur)))
				continue;
		}
		for (int i = 0; i < n_seen; i++)
			if (!strcmp(seen[i], name))
				return false;
		if (n_seen < 256)
			snprintf(seen[n_seen++], sizeof(seen[0]), "%s", name);
		snprintf(cur, sizeof(cur), "%s", name);
	}
	return true;
}

static void test_metrics_each_family_is_written_in_one_block_after_its_metadata(void)
{
	char *prom, *om;

	two_procs();
	prom = render(&model, METRICS_PROMETHEUS, 20);
	om = render(&model, METRICS_OPENMETRICS, 20);
	CHECK(families_contiguous(prom));
	CHECK(families_contiguous(om));
	free(prom);
	free(om);
}

static void test_metrics_label_values_escape_quotes_backslashes_and_control_bytes(void)
{
	char *om;

	two_procs();
	strcpy(procs[0].comm, "a\"b\\c\n\x01\xff");
	procs[0].cgroup = "/x\x1b[2J";
	om = render(&model, METRICS_OPENMETRICS, 20);
	/* Shown as the views show it (\xHH), then the exposition's escapes. */
	CHECK_EQ_INT(count_lines(om, "leaktop_heap_outstanding_bytes{pid=\"10\","
				 "comm=\"a\\\"b\\\\c\\\\x0a\\\\x01\\\\xff\","
				 "cgroup=\"/x\\\\x1b[2J\"} 10000"), 1);
	for (const unsigned char *p = (const unsigned char *)om; *p; p++)
		CHECK((*p >= 0x20 && *p < 0x7f) || *p == '\n');
	free(om);
	procs[0].cgroup = NULL;
}

static void test_metrics_container_and_cgroup_labels_only_when_known(void)
{
	char *om;

	two_procs();
	procs[0].cgroup = "/system.slice/docker-0123456789ab.scope";
	strcpy(procs[0].container, "0123456789ab");
	om = render(&model, METRICS_OPENMETRICS, 20);
	CHECK_EQ_INT(count_lines(om, "leaktop_process_threads{pid=\"10\",comm=\"leaky\","
				 "container=\"0123456789ab\","
				 "cgroup=\"/system.slice/docker-0123456789ab.scope\"} 2"), 1);
	CHECK_EQ_INT(count_lines(om, "leaktop_fd_outstanding{pid=\"20\",comm=\"quiet\"} 1"), 1);
	free(om);
	procs[0].cgroup = NULL;
}

/* The distinct site_id labels of the lines starting with prefix. */
static int site_ids(const char *text, const char *prefix, char ids[][17], int max)
{
	int n = 0;

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		const char *id;
		bool dup = false;

		if (strncmp(l, prefix, strlen(prefix)) || !(id = strstr(l, "site_id=\"")))
			continue;
		id += 9;
		for (int i = 0; i < n; i++)
			dup |= !strncmp(ids[i], id, 16);
		if (!dup && n < max) {
			memcpy(ids[n], id, 16);
			ids[n++][16] = '\0';
		}
	}
	return n;
}

static void test_metrics_sites_are_the_flagged_ones_at_most_max_sites(void)
{
	char ids[8][17], *om;
	int n;

	two_procs();
	om = render(&model, METRICS_OPENMETRICS, 2);
	n = site_ids(om, "leaktop_site_outstanding_objects{", ids, 8);
	CHECK_EQ_INT(n, 2);
	/* The unflagged site (0x100) and the fd site of pid 20 are never series. */
	for (int i = 0; i < n; i++) {
		CHECK(strcmp(ids[i], "0000000000000100"));
		CHECK(strcmp(ids[i], "0000000000000200"));
	}
	/* Every flagged site is counted, exported or not. */
	CHECK_EQ_INT(count_lines(om, "leaktop_flagged_sites 3"), 1);
	free(om);
	om = render(&model, METRICS_OPENMETRICS, 20);
	CHECK_EQ_INT(site_ids(om, "leaktop_site_outstanding_objects{", ids, 8), 3);
	free(om);
	om = render(&model, METRICS_OPENMETRICS, 0);
	CHECK_EQ_INT(site_ids(om, "leaktop_site_", ids, 8), 0);
	free(om);
}

static void test_metrics_site_is_named_by_its_first_frame_with_a_source_line(void)
{
	char *om;

	two_procs();
	om = render(&model, METRICS_OPENMETRICS, 20);
	/* operator new has no line: the site is leak_new's, file name without its directory. */
	CHECK_EQ_INT(count_lines(om, "leaktop_site_outstanding_bytes{pid=\"10\",comm=\"leaky\","
				 "kind=\"heap\",site=\"leak_new() leak.cc:12\","
				 "site_id=\"0000000000000101\"} 2000"), 1);
	/* No symbol anywhere: the module. */
	CHECK_EQ_INT(count_lines(om, "leaktop_site_outstanding_bytes{pid=\"10\",comm=\"leaky\","
				 "kind=\"heap\",site=\"(unknown in libstripped.so)\","
				 "site_id=\"0000000000000103\"} 4000"), 1);
	free(om);
}

static void test_metrics_site_name_skips_wrappers_and_runtimes_not_callers_without_lines(void)
{
	struct sym_frame f[5] = {
		{ .addr = 1, .symbol = "zmalloc", .module = "/usr/bin/redis-server" },
		{ .addr = 2, .symbol = "dictAddRaw", .module = "/usr/bin/redis-server" },
		{ .addr = 3, .symbol = "main", .module = "/usr/bin/redis-server" },
		{ .addr = 4, .symbol = "__libc_start_call_main", .file = "libc_start_call_main.h",
		  .line = 58, .module = "/usr/lib/x86_64-linux-gnu/libc.so.6" },
	};
	struct site s = { .kind = LT_KIND_HEAP, .frames = f, .n_frames = 4 };
	char name[256];

	/* A deeper frame with a line (libc's) does not win over the named caller of the
	 * wrapper. */
	CHECK_EQ_STR(fmt__site_name(name, sizeof(name), &s), "dictAddRaw");
	/* strdup inside libc, then the program's function with its line. */
	f[0] = (struct sym_frame){ .addr = 1, .symbol = "__strdup",
				   .module = "/usr/lib/x86_64-linux-gnu/libc.so.6" };
	f[1] = (struct sym_frame){ .addr = 2, .symbol = "copy_name", .file = "/src/names.c",
				   .line = 7, .module = "/usr/bin/prog" };
	CHECK_EQ_STR(fmt__site_name(name, sizeof(name), &s), "copy_name names.c:7");
	/* Only wrappers: the innermost. */
	f[1] = (struct sym_frame){ .addr = 2, .symbol = "xmalloc", .module = "/usr/bin/prog" };
	s.n_frames = 2;
	CHECK_EQ_STR(fmt__site_name(name, sizeof(name), &s), "__strdup");
}

static void test_metrics_exited_image_of_an_execd_pid_is_left_out(void)
{
	char *om;

	two_procs();
	/* pid 10 exec'd: its old image (gen 1) exited, the new one (gen 3) runs. */
	procs[2] = procs[0];
	procs[2].gen = 3;
	strcpy(procs[2].comm, "newprog");
	procs[2].sites = NULL;
	procs[2].n_sites = 0;
	procs[0].exited = true;
	/* Sorted by (pid, gen). */
	model.procs[1] = procs[2];
	model.procs[2] = (struct process){ .pid = 20, .gen = 2, .comm = "quiet",
					   .sites = sites[1], .n_sites = 1, .fd_outstanding = 1,
					   .fd_opens = 1 };
	model.n_procs = 3;
	om = render(&model, METRICS_OPENMETRICS, 20);
	CHECK_EQ_INT(count_lines(om, "leaktop_heap_outstanding_bytes{pid=\"10\""), 1);
	CHECK_EQ_INT(count_lines(om, "leaktop_heap_outstanding_bytes{pid=\"10\",comm=\"newprog\""),
		     1);
	CHECK_EQ_INT(count_lines(om, "leaktop_processes 2"), 1);
	free(om);
	/* Exited without an exec: still there, once. */
	model.n_procs = 1;
	om = render(&model, METRICS_OPENMETRICS, 20);
	CHECK_EQ_INT(count_lines(om, "leaktop_heap_outstanding_bytes{pid=\"10\",comm=\"leaky\""), 1);
	free(om);
}

static void test_metrics_two_exited_images_of_one_pid_are_one_series_the_newer(void)
{
	char *om;

	two_procs();
	/* Two OOM-killed images of pid 10 kept after their exit (the pid reused between). */
	procs[2] = procs[0];
	procs[2].gen = 5;
	procs[2].heap_outstanding_bytes = 7777;
	procs[0].exited = procs[2].exited = true;
	model.procs[1] = procs[2];
	model.procs[2] = (struct process){ .pid = 20, .gen = 2, .comm = "quiet",
					   .sites = sites[1], .n_sites = 1, .fd_outstanding = 1,
					   .fd_opens = 1 };
	model.n_procs = 3;
	om = render(&model, METRICS_OPENMETRICS, 20);
	CHECK_EQ_INT(count_lines(om, "leaktop_heap_outstanding_bytes{pid=\"10\""), 1);
	CHECK_EQ_INT(count_lines(om, "leaktop_heap_outstanding_bytes{pid=\"10\",comm=\"leaky\"} "
				 "7777"), 1);
	CHECK_EQ_INT(count_lines(om, "leaktop_processes 2"), 1);
	/* Each flagged site once. */
	CHECK_EQ_INT(count_lines(om, "leaktop_site_outstanding_bytes{pid=\"10\""), 3);
	free(om);
}

static void test_metrics_unknown_values_are_left_out_not_zero(void)
{
	char *om;

	two_procs();
	/* pid 20's counters were not read; its heap is not traced (watch mode). */
	procs[1].heap_mode = PROC_HEAP_WATCH;
	om = render(&model, METRICS_OPENMETRICS, 20);
	CHECK_EQ_INT(count_lines(om, "leaktop_process_resident_memory_bytes{pid=\"10\""), 1);
	CHECK_EQ_INT(count_lines(om, "leaktop_process_resident_memory_bytes{pid=\"20\""), 0);
	CHECK_EQ_INT(count_lines(om, "leaktop_heap_outstanding_bytes{pid=\"20\""), 0);
	CHECK_EQ_INT(count_lines(om, "leaktop_fd_outstanding{pid=\"20\""), 1);
	/* Resources not tracked have no families. */
	model.resources = RES_HEAP;
	free(om);
	om = render(&model, METRICS_OPENMETRICS, 20);
	CHECK_EQ_INT(count_lines(om, "# TYPE leaktop_fd_outstanding"), 0);
	CHECK_EQ_INT(count_lines(om, "# TYPE leaktop_mmap_outstanding_bytes"), 0);
	free(om);
}

static void test_metrics_one_flag_series_per_flag_set(void)
{
	char *om;

	two_procs();
	om = render(&model, METRICS_OPENMETRICS, 20);
	CHECK_EQ_INT(count_lines(om, "leaktop_process_flag{"), 2);
	CHECK_EQ_INT(count_lines(om, "leaktop_process_flag{pid=\"10\",comm=\"leaky\","
				 "flag=\"heap_growth\"} 1"), 1);
	CHECK_EQ_INT(count_lines(om, "leaktop_process_flag{pid=\"10\",comm=\"leaky\","
				 "flag=\"rss_growth\"} 1"), 1);
	free(om);
}

static void test_metrics_negotiate_openmetrics_from_prometheus_accept_header(void)
{
	CHECK_EQ_INT(metrics__negotiate("application/openmetrics-text;version=1.0.0,"
					"application/openmetrics-text;version=0.0.1;q=0.75,"
					"text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
		     METRICS_OPENMETRICS);
	CHECK_EQ_INT(metrics__negotiate("text/plain"), METRICS_PROMETHEUS);
	CHECK_EQ_INT(metrics__negotiate(NULL), METRICS_PROMETHEUS);
	CHECK(strstr(metrics__content_type(METRICS_OPENMETRICS), "application/openmetrics-text"));
	CHECK(strstr(metrics__content_type(METRICS_PROMETHEUS), "version=0.0.4"));
}

int main(void)
{
	RUN(test_metrics_counters_end_in_total_and_openmetrics_names_families_without_it);
	RUN(test_metrics_openmetrics_ends_with_eof_and_the_prometheus_format_does_not);
	RUN(test_metrics_each_family_is_written_in_one_block_after_its_metadata);
	RUN(test_metrics_label_values_escape_quotes_backslashes_and_control_bytes);
	RUN(test_metrics_container_and_cgroup_labels_only_when_known);
	RUN(test_metrics_sites_are_the_flagged_ones_at_most_max_sites);
	RUN(test_metrics_site_is_named_by_its_first_frame_with_a_source_line);
	RUN(test_metrics_site_name_skips_wrappers_and_runtimes_not_callers_without_lines);
	RUN(test_metrics_exited_image_of_an_execd_pid_is_left_out);
	RUN(test_metrics_two_exited_images_of_one_pid_are_one_series_the_newer);
	RUN(test_metrics_unknown_values_are_left_out_not_zero);
	RUN(test_metrics_one_flag_series_per_flag_set);
	RUN(test_metrics_negotiate_openmetrics_from_prometheus_accept_header);
	CHECK_EXIT();
}
