// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_snapshot_read.c - reading snapshots back: the committed golden file into the model
 * field by field, what the writer writes reads back to the same snapshot, and every bad
 * file (missing, empty, truncated, not JSON, wrong schema, missing and mistyped fields,
 * duplicate keys, JSON Lines, too deep, too large, too many values) is refused with one line
 * that says why.  Run from the repository root (tests/run.sh does).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "check.h"
#include "cli/options.h"
#include "view/snapshot.h"
#include "view/snapshot_read.h"

#define GOLDEN "tests/data/old.json"

static char err[1024];
static char tmpdir[] = "/tmp/leaktop-test-read.XXXXXX";

/* A snapshot whose processes array is procs (JSON text). */
static char *doc(const char *procs)
{
	char *s;

	if (asprintf(&s, "{\"schema\": \"leaktop.snapshot/1\", \"time\": \"2026-11-21T10:00:00Z\", "
		     "\"elapsed_s\": 2.5, \"interval_s\": 1, \"stats\": {\"events\": 9, "
		     "\"dropped\": 0}, \"processes\": [%s]}", procs) < 0)
		abort();
	return s;
}

#define PROC(sites) "{\"pid\": 42, \"comm\": \"p\", \"heap\": {\"outstanding_bytes\": 10, " \
	"\"outstanding_count\": 1, \"allocs\": 1, \"frees\": 0}, \"sites\": [" sites "]}"
#define SITE(extra) "{\"kind\": \"heap\", \"outstanding_bytes\": 10, \"outstanding_count\": 1, " \
	"\"allocs\": 1, \"frees\": 0, \"growth_per_s\": 0.5, \"flagged\": false, \"stack\": " \
	"[{\"addr\": \"0x1000\", \"symbol\": null, \"offset\": null, \"module\": null, " \
	"\"file\": null, \"line\": null}]" extra "}"

static int read_text(const char *text, struct model *m, struct snapshot_info *info)
{
	return snapshot__read_buf(text, strlen(text), "t.json", NULL, m, info, err, sizeof(err));
}

/* Read text as a document and expect a refusal whose message contains want. */
static int refuses(const char *text, const char *want)
{
	struct snapshot_info info;
	struct model m;
	int ret = read_text(text, &m, &info);

	model__free(&m);
	if (!ret) {
		printf("  accepted: %.200s\n", text);
		return 0;
	}
	if (!strstr(err, want) || strchr(err, '\n')) {
		printf("  message: %s (wanted \"%s\")\n", err, want);
		return 0;
	}
	return 1;
}

static const char *write_tmp(const char *name, const void *data, size_t len)
{
	static char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len)
		abort();
	close(fd);
	return path;
}

static const struct site *site_named(const struct process *p, const char *sym)
{
	for (size_t i = 0; i < p->n_sites; i++)
		if (p->sites[i].n_frames && p->sites[i].frames[0].symbol &&
		    !strcmp(p->sites[i].frames[0].symbol, sym))
			return &p->sites[i];
	return NULL;
}

/* ---------------------------------------------------------------- good files */

static void test_golden_file_fills_header_and_process_fields(void)
{
	struct snapshot_info info;
	struct model m;
	struct process *p;

	CHECK_EQ_INT(snapshot__read_file(GOLDEN, NULL, &m, &info, err, sizeof(err)), 0);
	CHECK_EQ_INT(m.n_procs, 3);
	CHECK(fabs(model__elapsed_s(&m) - 2.0) < 1e-9);
	CHECK(m.interval_s == 1.0);
	CHECK_EQ_INT(model__events(&m), 40);
	CHECK_EQ_INT(model__dropped(&m), 3);
	CHECK_EQ_INT(m.drops[LT_DROP_RINGBUF_FULL], 2);
	CHECK_EQ_INT(m.probes_attached, 17);
	CHECK_EQ_INT(m.libcs_refused, 2);
	CHECK_EQ_STR(m.heap_attach, "tree");
	CHECK_EQ_STR(m.syscall_attach, "raw");
	CHECK(!strncmp(m.syscall_why, "tracefs cannot be had (", 23));
	CHECK(m.resources & RES_FD);
	CHECK_EQ_STR(info.time, "2026-11-21T10:00:00Z");
	CHECK(info.time_s == 1795255200.0);
	CHECK_EQ_STR(info.host, "testhost");
	p = &m.procs[0];
	CHECK_EQ_INT(p->pid, 100);
	CHECK_EQ_STR(p->comm, "leaky");
	CHECK_EQ_STR(p->cmdline, "./leaky 4");
	CHECK_EQ_INT(p->start_ticks, 5000);
	CHECK(p->counters.valid);
	CHECK_EQ_INT(p->counters.rss_bytes, 4194304);
	CHECK_EQ_INT(p->counters.threads, 1);
	CHECK(!p->counters.rss_split_valid);	/* a file from before the split */
	CHECK_EQ_INT(p->heap_outstanding_bytes, 3172);
	CHECK_EQ_INT(p->heap_outstanding_count, 7);
	CHECK_EQ_INT(p->heap_allocs, 10);
	CHECK_EQ_INT(p->heap_frees, 3);
	CHECK_EQ_INT(p->fd_outstanding, 2);
	CHECK(p->fd_census_valid);
	CHECK_EQ_INT(p->fd_untracked, 3);
	CHECK_EQ_INT(p->flags, PROC_HEAP_GROWTH);
	CHECK(!p->exited);
	CHECK(model__visible(p));
	model__free(&m);
}

static void test_golden_file_fills_sites_and_frames(void)
{
	struct snapshot_info info;
	struct model m;
	const struct site *s;

	CHECK_EQ_INT(snapshot__read_file(GOLDEN, NULL, &m, &info, err, sizeof(err)), 0);
	CHECK_EQ_INT(m.procs[0].pid, 100);
	CHECK_EQ_INT(m.procs[0].n_sites, 4);
	s = site_named(&m.procs[0], "leak_here");
	CHECK(s);
	CHECK_EQ_INT(s->kind, LT_KIND_HEAP);
	CHECK_EQ_INT(s->outstanding_bytes, 1024);
	CHECK_EQ_INT(site__outstanding(s), 4);
	CHECK_EQ_INT(s->allocs, 4);
	CHECK(s->flagged);
	CHECK(fabs(s->growth_per_s - 409.6) < 1e-9);
	CHECK_EQ_INT(s->stack_hash, 0xaaaa000000000001ull);
	CHECK_EQ_INT(s->n_frames, 2);
	CHECK_EQ_INT(s->frames[0].addr, 0x55d0c0ffee00ull);
	CHECK_EQ_INT(s->frames[0].offset, 20);
	CHECK_EQ_STR(s->frames[0].module, "/usr/local/bin/leaky");
	CHECK_EQ_STR(s->frames[0].file, "leaky.c");
	CHECK_EQ_INT(s->frames[0].line, 12);
	CHECK_EQ_STR(s->frames[1].symbol, "main");
	/* oldest_age_s 1.5 at elapsed 2.0 */
	CHECK_EQ_INT(m.now_ns - s->live_since_ns, 1500000000);
	s = site_named(&m.procs[0], "open_conn");
	CHECK(s);
	CHECK_EQ_INT(s->kind, LT_KIND_FD);
	CHECK_EQ_INT(site__outstanding(s), 2);
	CHECK_EQ_INT(s->fd_types[FD_SOCKET], 2);
	CHECK_EQ_INT(s->n_fd_samples, 1);
	CHECK_EQ_STR(s->fd_samples[0], "socket:[1234]");
	model__free(&m);
}

static void test_null_frame_fields_stay_unknown(void)
{
	struct snapshot_info info;
	struct model m;
	char *text = doc(PROC(SITE("")));

	CHECK_EQ_INT(read_text(text, &m, &info), 0);
	free(text);
	CHECK_EQ_INT(m.procs[0].sites[0].n_frames, 1);
	CHECK(!m.procs[0].sites[0].frames[0].symbol);
	CHECK(!m.procs[0].sites[0].frames[0].module);
	CHECK(!m.procs[0].sites[0].frames[0].file);
	CHECK_EQ_INT(m.procs[0].sites[0].frames[0].line, 0);
	CHECK_EQ_INT(m.procs[0].sites[0].frames[0].addr, 0x1000);
	CHECK(!m.procs[0].counters.valid);
	model__free(&m);
}

static void test_fd_repairs_keep_the_outstanding_count_the_file_shows(void)
{
	struct snapshot_info info;
	struct model m;
	char *text = doc("{\"pid\": 7, \"heap\": {\"outstanding_bytes\": 0, "
			 "\"outstanding_count\": 0, \"allocs\": 0, \"frees\": 0}, \"fd\": "
			 "{\"outstanding_count\": 3, \"opens\": 6, \"closes\": 3}, \"sites\": "
			 "[{\"kind\": \"fd\", \"outstanding_bytes\": 0, \"outstanding_count\": 3, "
			 "\"allocs\": 6, \"frees\": 3, \"repaired\": 2, \"growth_per_s\": 0, "
			 "\"flagged\": false, \"stack\": []}]}");

	CHECK_EQ_INT(read_text(text, &m, &info), 0);
	free(text);
	CHECK_EQ_INT(site__outstanding(&m.procs[0].sites[0]), 3);
	CHECK_EQ_INT(site__frees(&m.procs[0].sites[0]), 3);
	CHECK_EQ_INT(m.procs[0].sites[0].repaired, 2);
	CHECK(!m.procs[0].fd_census_valid);
	model__free(&m);
}

static void test_unknown_fields_and_site_kinds_are_ignored(void)
{
	struct snapshot_info info;
	struct model m;
	char *text = doc("{\"pid\": 42, \"future\": [1, {\"x\": null}], \"heap\": "
			 "{\"outstanding_bytes\": 10, \"outstanding_count\": 1, \"allocs\": 1, "
			 "\"frees\": 0}, \"flags\": [\"heap_growth\", \"new_verdict\"], "
			 "\"sites\": [" SITE("") ", {\"kind\": \"gpu\"}]}");

	CHECK_EQ_INT(read_text(text, &m, &info), 0);
	free(text);
	CHECK_EQ_INT(m.procs[0].n_sites, 1);
	CHECK_EQ_INT(m.procs[0].flags, PROC_HEAP_GROWTH);
	model__free(&m);
}

static void test_mmap_site_and_process_totals_are_read_back(void)
{
	struct snapshot_info info;
	struct model m;
	const struct site *s;
	char *text = doc("{\"pid\": 42, \"heap\": {\"outstanding_bytes\": 0, "
			 "\"outstanding_count\": 0, \"allocs\": 0, \"frees\": 0}, "
			 "\"mmap\": {\"outstanding_bytes\": 786432, \"outstanding_count\": 2, "
			 "\"maps\": 1, \"unmaps\": 0}, \"sites\": [{\"kind\": \"mmap\", "
			 "\"outstanding_bytes\": 786432, \"outstanding_count\": 2, \"allocs\": 1, "
			 "\"frees\": 0, \"alloc_bytes\": 1048576, \"growth_per_s\": 0, "
			 "\"flagged\": false, \"stack\": []}]}");

	CHECK_EQ_INT(read_text(text, &m, &info), 0);
	free(text);
	CHECK(m.resources & RES_MMAP);
	CHECK(!(m.resources & RES_FD));
	CHECK_EQ_INT(m.procs[0].mmap_outstanding_bytes, 786432);
	CHECK_EQ_INT(m.procs[0].mmap_outstanding_count, 2);
	CHECK_EQ_INT(m.procs[0].mmap_maps, 1);
	CHECK_EQ_INT(m.procs[0].mmap_unmaps, 0);
	CHECK_EQ_INT(m.procs[0].n_sites, 1);
	s = &m.procs[0].sites[0];
	CHECK_EQ_INT(s->kind, LT_KIND_MMAP);
	CHECK_EQ_INT(s->outstanding_bytes, 786432);
	CHECK_EQ_INT(site__outstanding(s), 2);
	CHECK_EQ_INT(s->alloc_bytes, 1048576);
	model__free(&m);
}

static void test_drops_without_breakdown_keep_the_total(void)
{
	struct snapshot_info info;
	struct model m;
	const char *text = "{\"schema\": \"leaktop.snapshot/1\", "
			   "\"time\": \"2026-11-21T10:00:00Z\", \"elapsed_s\": 1, "
			   "\"interval_s\": 1, \"stats\": {\"events\": 1, \"dropped\": 5}, "
			   "\"processes\": []}";

	CHECK_EQ_INT(read_text(text, &m, &info), 0);
	CHECK_EQ_INT(model__dropped(&m), 5);
	CHECK_EQ_INT(info.dropped, 5);
	model__free(&m);
}

static void test_time_with_fraction_and_offset_is_read_as_utc(void)
{
	struct snapshot_info info;
	struct model m;
	const char *text = "{\"schema\": \"leaktop.snapshot/1\", "
			   "\"time\": \"2026-11-21T12:00:00.25+02:00\", \"elapsed_s\": 1, "
			   "\"interval_s\": 1, \"stats\": {\"events\": 1, \"dropped\": 0}, "
			   "\"processes\": []}";

	CHECK_EQ_INT(read_text(text, &m, &info), 0);
	CHECK(info.time_s == 1795255200.25);
	model__free(&m);
}

static void test_pid_option_keeps_only_that_process(void)
{
	struct snapshot_read_opts o = { .pid = 200 };
	struct snapshot_info info;
	struct model m;

	CHECK_EQ_INT(snapshot__read_file(GOLDEN, &o, &m, &info, err, sizeof(err)), 0);
	CHECK_EQ_INT(m.n_procs, 1);
	CHECK_EQ_INT(m.procs[0].pid, 200);
	model__free(&m);
}

/* Written by snapshot.c from a model read back: the same document, but for its time. */
static char *rewrite(const struct model *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f || snapshot__write_line(f, m))
		abort();
	fclose(f);
	return buf;
}

static void test_what_the_writer_writes_reads_back_the_same(void)
{
	struct snapshot_info info;
	struct model a, b;
	json_t *ja, *jb;
	char *ta, *tb;

	CHECK_EQ_INT(snapshot__read_file("tests/data/new.json", NULL, &a, &info, err,
					 sizeof(err)), 0);
	a.reconciled_exited = 3;
	a.reconciled_reused = 1;
	ta = rewrite(&a);
	CHECK_EQ_INT(read_text(ta, &b, &info), 0);
	CHECK_EQ_INT(b.reconciled_exited, 3);
	CHECK_EQ_INT(b.reconciled_reused, 1);
	tb = rewrite(&b);
	ja = json_loads(ta, 0, NULL);
	jb = json_loads(tb, 0, NULL);
	CHECK(ja && jb);
	json_object_del(ja, "time");
	json_object_del(jb, "time");
	CHECK(json_equal(ja, jb));
	/* and it kept what the golden file says */
	CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(json_array_get(
		json_object_get(ja, "processes"), 0), "heap"), "outstanding_bytes")), 7468);
	CHECK(a.procs[0].counters.rss_split_valid);
	CHECK_EQ_INT(a.procs[0].counters.rss_anon_bytes, 3145728);
	CHECK_EQ_INT(a.procs[0].counters.rss_file_bytes, 1572864);
	CHECK_EQ_INT(a.procs[0].counters.rss_shmem_bytes, 0);
	/* a process whose file has no split: unknown, written back as null */
	CHECK(!a.procs[1].counters.rss_split_valid);
	CHECK(json_is_null(json_object_get(json_object_get(json_array_get(
		json_object_get(ja, "processes"), 1), "counters"), "rss_anon_bytes")));
	json_decref(ja);
	json_decref(jb);
	free(ta);
	free(tb);
	model__free(&a);
	model__free(&b);
}

/* --stop-at's record, a site's lost blocks' numbers, the cgroup: written and read back. */
static void test_stop_at_lost_numbers_and_cgroup_read_back(void)
{
	struct snapshot_info info;
	struct model a, b;
	struct site *s;
	char *ta, *tb;

	CHECK_EQ_INT(snapshot__read_file("tests/data/new.json", NULL, &a, &info, err,
					 sizeof(err)), 0);
	CHECK(a.n_procs > 0 && a.procs[0].n_sites > 0);
	s = &a.procs[0].sites[0];
	s->kind = LT_KIND_HEAP;
	s->has_lost = true;
	s->lost_count[SCAN_DEFINITE] = 3;
	s->n_lost_seqs = 3;
	s->lost_seqs[0] = 3;
	s->lost_seqs[1] = 7;
	s->lost_seqs[2] = 9;
	a.procs[0].cgroup = strdup("/system.slice/x.service");
	strcpy(a.procs[0].container, "0123456789ab");
	a.stop = (struct stop_record){ .fired = true, .pid = a.procs[0].pid, .tid = 77,
				       .gen = a.procs[0].gen, .addr = 0x5000, .size_bytes = 48,
				       .seq = 7, .stack_hash = s->stack_hash };
	ta = rewrite(&a);
	CHECK_EQ_INT(read_text(ta, &b, &info), 0);
	CHECK(b.stop.fired);
	CHECK_EQ_INT(b.stop.pid, a.procs[0].pid);
	CHECK_EQ_INT(b.stop.tid, 77);
	CHECK_EQ_INT(b.stop.addr, 0x5000);
	CHECK_EQ_INT(b.stop.size_bytes, 48);
	CHECK_EQ_INT(b.stop.seq, 7);
	CHECK(b.stop.stack_hash == s->stack_hash);
	CHECK(b.procs[0].cgroup && !strcmp(b.procs[0].cgroup, "/system.slice/x.service"));
	CHECK_EQ_STR(b.procs[0].container, "0123456789ab");
	for (size_t i = 0; i < b.procs[0].n_sites; i++) {
		const struct site *t = &b.procs[0].sites[i];

		if (t->stack_hash != s->stack_hash || t->kind != LT_KIND_HEAP)
			continue;
		CHECK_EQ_INT(t->n_lost_seqs, 3);
		CHECK_EQ_INT(t->lost_seqs[1], 7);
	}
	/* and the same document again (the stop's stack found from its site) */
	tb = rewrite(&b);
	CHECK(strstr(tb, "\"stop_at\""));
	CHECK(strstr(tb, "\"seqs\": [3, 7, 9]") || strstr(tb, "\"seqs\":[3,7,9]"));
	free(ta);
	free(tb);
	model__free(&a);
	model__free(&b);
}

/* A process's records the shared maps lost (processes[].drops), and the run's totals. */
static void test_share_drops_per_process_read_back(void)
{
	struct snapshot_info info;
	struct model a, b;
	char *ta;

	CHECK_EQ_INT(snapshot__read_file("tests/data/new.json", NULL, &a, &info, err,
					 sizeof(err)), 0);
	CHECK(a.n_procs > 1);
	/* a file written before the field: none known */
	CHECK_EQ_INT(a.procs[0].share_drops[LT_SHARE_FD], 0);
	a.procs[0].share_drops[LT_SHARE_HEAP] = 11;
	a.procs[0].share_drops[LT_SHARE_FD] = 1616;
	a.procs[0].share_drops[LT_SHARE_MMAP] = 3;
	a.procs[0].share_drops[LT_SHARE_SITE] = 2;
	a.drops[LT_DROP_FD_SHARE] = 1616;
	ta = rewrite(&a);
	CHECK(strstr(ta, "\"fd_share\": 1616") || strstr(ta, "\"fd_share\":1616"));
	CHECK_EQ_INT(read_text(ta, &b, &info), 0);
	CHECK_EQ_INT(b.procs[0].share_drops[LT_SHARE_HEAP], 11);
	CHECK_EQ_INT(b.procs[0].share_drops[LT_SHARE_FD], 1616);
	CHECK_EQ_INT(b.procs[0].share_drops[LT_SHARE_MMAP], 3);
	CHECK_EQ_INT(b.procs[0].share_drops[LT_SHARE_SITE], 2);
	CHECK_EQ_INT(b.procs[1].share_drops[LT_SHARE_FD], 0);
	CHECK_EQ_INT(b.drops[LT_DROP_FD_SHARE], 1616);
	free(ta);
	model__free(&a);
	model__free(&b);
}

/* A released process: its mode, when, what it cost and its stale sites read back (diff, report). */
static void test_released_heap_mode_and_stale_sites_read_back(void)
{
	struct snapshot_info info;
	struct model a, b;
	struct site *s;
	char *ta;

	CHECK_EQ_INT(snapshot__read_file("tests/data/new.json", NULL, &a, &info, err,
					 sizeof(err)), 0);
	CHECK(a.n_procs > 1 && a.procs[0].n_sites > 0);
	/* a file written before the fields: exact, never released, nothing stale */
	CHECK(a.procs[0].heap_mode == PROC_HEAP_EXACT && !a.procs[0].heap_released_ns);
	s = &a.procs[0].sites[0];
	s->kind = LT_KIND_HEAP;
	s->stale = true;
	a.procs[0].heap_mode = PROC_HEAP_RELEASED;
	a.procs[0].heap_released_ns = a.start_ns + 2500000000ull;
	a.procs[1].heap_mode = PROC_HEAP_SUSPECT;
	a.procs[1].heap_cost_pct = 1.5;
	ta = rewrite(&a);
	CHECK(strstr(ta, "\"released_at_s\": 2.5") || strstr(ta, "\"released_at_s\":2.5"));
	CHECK_EQ_INT(read_text(ta, &b, &info), 0);
	CHECK(b.procs[0].heap_mode == PROC_HEAP_RELEASED);
	CHECK_EQ_INT(b.procs[0].heap_released_ns - b.start_ns, 2500000000ull);
	CHECK(b.procs[1].heap_mode == PROC_HEAP_SUSPECT && b.procs[1].heap_cost_pct == 1.5);
	CHECK(isnan(b.procs[0].heap_cost_pct));
	for (size_t i = 0; i < b.procs[0].n_sites; i++)
		if (b.procs[0].sites[i].stack_hash == s->stack_hash &&
		    b.procs[0].sites[i].kind == LT_KIND_HEAP)
			CHECK(b.procs[0].sites[i].stale);
	model__free(&b);
	/* a mode this version does not know is refused, named */
	s = NULL;
	{
		char *at = strstr(ta, "\"released\"");

		CHECK(at != NULL);
		if (at)
			memcpy(at + 1, "nonsense", 8);
		CHECK(refuses(ta, "heap.mode"));
	}
	free(ta);
	model__free(&a);
}

/* ---------------------------------------------------------------- bad files */

static void test_missing_file_is_refused_naming_the_path(void)
{
	struct snapshot_info info;
	struct model m;

	CHECK_EQ_INT(snapshot__read_file("/nonexistent/snap.json", NULL, &m, &info, err,
					 sizeof(err)), -ENOENT);
	CHECK(strstr(err, "/nonexistent/snap.json"));
	CHECK(strstr(err, "No such file"));
	model__free(&m);
}

static void test_empty_file_is_refused_as_empty(void)
{
	struct snapshot_info info;
	struct model m;
	const char *path = write_tmp("empty.json", "", 0);

	CHECK_EQ_INT(snapshot__read_file(path, NULL, &m, &info, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "is empty"));
	model__free(&m);
}

static void test_truncated_file_is_refused_as_truncated(void)
{
	struct snapshot_info info;
	struct model m;
	char *text = doc(PROC(SITE("")));
	const char *path;

	for (size_t cut = 1; cut < strlen(text); cut += 7) {
		path = write_tmp("cut.json", text, cut);
		CHECK(snapshot__read_file(path, NULL, &m, &info, err, sizeof(err)) == -EINVAL);
		model__free(&m);
		if (!strstr(err, "is truncated")) {
			printf("  cut at %zu: %s\n", cut, err);
			CHECK(!"every cut names truncation");
		}
	}
	free(text);
}

static void test_non_json_is_refused_as_not_json(void)
{
	CHECK(refuses("hello world", "is not valid JSON (line 1"));
	CHECK(refuses("{\"schema\": leaktop}", "is not valid JSON"));
}

static void test_wrong_schema_is_refused_naming_both_schemas(void)
{
	CHECK(refuses("{\"schema\": \"leaktop.diff/1\"}", "schema \"leaktop.diff/1\", expected "
		      "\"leaktop.snapshot/1\""));
	CHECK(refuses("{\"time\": 1}", "no \"schema\" field"));
	CHECK(refuses("[1, 2]", "not a leaktop snapshot (a JSON array"));
}

static void test_missing_field_is_named_by_its_path(void)
{
	char *text = doc(PROC("{\"kind\": \"heap\", \"outstanding_bytes\": 1, \"outstanding_count\""
			      ": 1, \"frees\": 0, \"growth_per_s\": 0, \"flagged\": false, "
			      "\"stack\": []}"));

	CHECK(refuses(text, "processes[0].sites[0].allocs is missing"));
	free(text);
	CHECK(refuses("{\"schema\": \"leaktop.snapshot/1\"}", "elapsed_s is missing"));
}

static void test_mistyped_field_is_named_with_its_type(void)
{
	char *text = doc("{\"pid\": \"42\"}");

	CHECK(refuses(text, "processes[0].pid is a string, expected an integer"));
	free(text);
	text = doc(PROC(SITE(", \"stack_id\": 3")));
	CHECK(refuses(text, "processes[0].sites[0].stack_id is an integer, expected a string"));
	free(text);
	text = doc(PROC("{\"kind\": \"heap\", \"outstanding_bytes\": 1, \"outstanding_count\": 1, "
			"\"allocs\": 1, \"frees\": 0, \"growth_per_s\": 0, \"flagged\": false, "
			"\"stack\": [{\"addr\": 4096}]}"));
	CHECK(refuses(text, "sites[0].stack[0].addr is an integer, expected a string"));
	free(text);
}

static void test_out_of_range_values_are_refused(void)
{
	char *text = doc("{\"pid\": 0}");

	CHECK(refuses(text, "processes[0].pid is 0, expected 1 to 2147483647"));
	free(text);
	text = doc(PROC(SITE(", \"oldest_age_s\": -1")));
	CHECK(refuses(text, "oldest_age_s is -1"));
	free(text);
	text = doc("{\"pid\": 1, \"heap\": {\"outstanding_bytes\": 1e400}}");
	CHECK(refuses(text, "number out of range"));
	free(text);
	CHECK(refuses("{\"schema\": \"leaktop.snapshot/1\", \"time\": \"yesterday\", "
		      "\"elapsed_s\": 1, \"interval_s\": 1}",
		      "time is \"yesterday\", expected an RFC 3339 time"));
}

static void test_duplicate_key_is_refused(void)
{
	CHECK(refuses("{\"schema\": \"leaktop.snapshot/1\", \"schema\": \"x\"}", "duplicate key"));
}

static void test_json_lines_file_is_refused_with_a_hint(void)
{
	char *one = doc(""), *two;

	if (asprintf(&two, "%s\n%s\n", one, one) < 0)
		abort();
	CHECK(refuses(two, "more than one JSON value"));
	CHECK(refuses(two, "tail -n 1"));
	free(one);
	free(two);
}

static void test_deep_nesting_is_refused_without_crashing(void)
{
	size_t depth = 200000;
	char *text = malloc(depth * 2 + 1);

	for (size_t i = 0; i < depth; i++) {
		text[i] = '[';
		text[depth + i] = ']';
	}
	text[2 * depth] = '\0';
	CHECK(refuses(text, "deeper than 2048 levels"));
	free(text);
}

static void test_file_over_the_size_limit_is_refused_before_reading(void)
{
	struct snapshot_info info;
	struct model m;
	const char *path = write_tmp("huge.json", "{", 1);

	CHECK_EQ_INT(truncate(path, SNAPSHOT_MAX_FILE_BYTES + 1), 0);
	CHECK_EQ_INT(snapshot__read_file(path, NULL, &m, &info, err, sizeof(err)), -EFBIG);
	CHECK(strstr(err, "more than the 256 MiB"));
	model__free(&m);
}

static void test_many_tiny_values_stop_at_the_memory_limit(void)
{
	size_t n = 200000, old = snapshot__set_json_limit(1 << 20);
	char *text = malloc(n * 3 + 64), *w = text;
	struct snapshot_info info;
	struct model m;
	int ret;

	w += sprintf(w, "{\"schema\": \"leaktop.snapshot/1\", \"x\": [");
	for (size_t i = 0; i < n; i++)
		w += sprintf(w, "[],");
	strcpy(w, "[]]}");
	ret = snapshot__read_buf(text, strlen(text), "bomb.json", NULL, &m, &info, err,
				 sizeof(err));
	snapshot__set_json_limit(old);
	free(text);
	model__free(&m);
	CHECK_EQ_INT(ret, -ENOMEM);
	CHECK(strstr(err, "too large to load"));
}

static void test_messages_stay_on_one_line(void)
{
	struct snapshot_info info;
	struct model m;

	CHECK(snapshot__read_file("/nonexistent/a\nb.json", NULL, &m, &info, err, sizeof(err)));
	CHECK(!strchr(err, '\n'));
	model__free(&m);
	CHECK(refuses("{\"schema\": \"x\\ny\"}", "schema \"x?y\""));
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		return 1;
	RUN(test_golden_file_fills_header_and_process_fields);
	RUN(test_golden_file_fills_sites_and_frames);
	RUN(test_null_frame_fields_stay_unknown);
	RUN(test_fd_repairs_keep_the_outstanding_count_the_file_shows);
	RUN(test_unknown_fields_and_site_kinds_are_ignored);
	RUN(test_mmap_site_and_process_totals_are_read_back);
	RUN(test_drops_without_breakdown_keep_the_total);
	RUN(test_time_with_fraction_and_offset_is_read_as_utc);
	RUN(test_pid_option_keeps_only_that_process);
	RUN(test_what_the_writer_writes_reads_back_the_same);
	RUN(test_stop_at_lost_numbers_and_cgroup_read_back);
	RUN(test_missing_file_is_refused_naming_the_path);
	RUN(test_empty_file_is_refused_as_empty);
	RUN(test_truncated_file_is_refused_as_truncated);
	RUN(test_non_json_is_refused_as_not_json);
	RUN(test_wrong_schema_is_refused_naming_both_schemas);
	RUN(test_missing_field_is_named_by_its_path);
	RUN(test_mistyped_field_is_named_with_its_type);
	RUN(test_out_of_range_values_are_refused);
	RUN(test_duplicate_key_is_refused);
	RUN(test_json_lines_file_is_refused_with_a_hint);
	RUN(test_deep_nesting_is_refused_without_crashing);
	RUN(test_file_over_the_size_limit_is_refused_before_reading);
	RUN(test_many_tiny_values_stop_at_the_memory_limit);
	RUN(test_messages_stay_on_one_line);
	RUN(test_share_drops_per_process_read_back);
	RUN(test_released_heap_mode_and_stale_sites_read_back);
	unlink(write_tmp("empty.json", "", 0));
	unlink(write_tmp("cut.json", "", 0));
	unlink(write_tmp("huge.json", "", 0));
	rmdir(tmpdir);
	CHECK_EXIT();
}
