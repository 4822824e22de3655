// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_snapshot_stacks.c - unit tests of the stacks and frames user/view/snapshot.c keeps as
 * JSON text from one snapshot to the next: a snapshot written again is the same, a site
 * resolved later gets its frames, the stacks of processes that are gone are dropped (the
 * cache holds those of the last full snapshot only), and a snapshot written in pieces reads
 * as one document, indented (a file) or on one line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "check.h"
#include "core/model.h"
#include "core/sample.h"
#include "view/snapshot.h"

#define NS 1000000000ull

static struct sample_site heap_site(uint32_t pid, uint64_t hash)
{
	return (struct sample_site){ .pid = pid, .kind = LT_KIND_HEAP, .gen = 1,
				     .stack_hash = hash, .outstanding_bytes = 64,
				     .outstanding_count = 1, .allocs = 1, .alloc_bytes = 64 };
}

/* Sample at second sec with sites[0..n), the frames of `frames_of` (0: none) and events. */
static int apply(struct model *m, unsigned int sec, struct sample_site *sites, size_t n,
		 uint32_t frames_of, const char *symbol, uint32_t exited)
{
	struct sample s;
	int err;

	memset(&s, 0, sizeof(s));
	s.ts_ns = sec * NS;
	s.sites = sites;
	s.n_sites = n;
	for (size_t i = 0; i < n; i++) {
		struct sample_event *ev;

		if (sec != 1)
			continue;
		ev = sample__add_event(&s);
		*ev = (struct sample_event){ .type = SAMPLE_EV_FIRST, .pid = sites[i].pid,
					     .gen = 1 };
	}
	/* Every stack of process frames_of: the same frame (its leaking function). */
	for (size_t i = 0; frames_of && i < n; i++) {
		struct sample_frames *sf;
		struct sym_frame f = { .addr = 0x401000, .symbol = (char *)symbol, .offset = 8,
				       .module = "/bin/prog", .file = "prog.c", .line = 7 };

		if (sites[i].pid != frames_of)
			continue;
		sf = sample__add_frames(&s);
		sf->pid = frames_of;
		sf->gen = 1;
		sf->stack_hash = sites[i].stack_hash;
		sf->frames = calloc(1, sizeof(*sf->frames));
		sf->n_frames = 1;
		if (sym_frame__copy(&sf->frames[0], &f))
			return -1;
	}
	if (exited) {
		struct sample_event *ev = sample__add_event(&s);

		*ev = (struct sample_event){ .type = SAMPLE_EV_EXIT, .pid = exited, .old_gen = 1 };
	}
	err = model__apply(m, &s);
	s.sites = NULL;
	s.n_sites = 0;
	sample__free(&s);
	return err;
}

/* The snapshot line, less the parts that change by themselves (time, leaktop's own cost). */
static char *snapshot_line(const struct model *m)
{
	char *buf = NULL, *stats;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	if (snapshot__write_line(f, m)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	stats = strstr(buf, "\"processes\"");
	if (stats)
		memmove(buf, stats, strlen(stats) + 1);
	return buf;
}

static void test_snapshot_stacks_are_made_once_and_dropped_with_their_process(void)
{
	struct sample_site sites[] = { heap_site(200, 0x60), heap_site(100, 0x60),
				       heap_site(100, 0x61) };
	struct dead_image *dead = NULL;
	struct model m;
	char *first, *again, *later;

	model__init(&m, 1.0, RES_ALL, 8);
	CHECK_EQ_INT(apply(&m, 1, sites, 3, 100, "leak_a", 0), 0);
	first = snapshot_line(&m);
	CHECK(first != NULL);
	/* Process 100's two stacks resolved, 200's not yet: only 100's are kept. */
	CHECK_EQ_INT(snapshot__cached_stacks(), 2);
	CHECK(strstr(first, "\"stack\":[{\"addr\":\"0x401000\",\"symbol\":\"leak_a\",\"offset\":8,"
		     "\"module\":\"/bin/prog\",\"file\":\"prog.c\",\"line\":7}]") != NULL);
	again = snapshot_line(&m);
	CHECK(again != NULL);
	CHECK_EQ_STR(again, first);
	model__reported(&m);

	/* Process 200's frames come, process 100 exits: both stacks are shown. */
	CHECK_EQ_INT(apply(&m, 2, sites, 3, 200, "leak_b", 100), 0);
	later = snapshot_line(&m);
	CHECK(later != NULL);
	CHECK(strstr(later, "\"symbol\":\"leak_a\"") && strstr(later, "\"symbol\":\"leak_b\""));
	CHECK_EQ_INT(snapshot__cached_stacks(), 3);
	model__reported(&m);
	CHECK_EQ_INT(model__reap(&m, &dead), 1);
	free(dead);
	free(later);

	/* Process 100 is gone: its stack is no longer held. */
	CHECK_EQ_INT(apply(&m, 3, sites, 1, 0, NULL, 0), 0);
	later = snapshot_line(&m);
	CHECK(later != NULL);
	CHECK(!strstr(later, "leak_a") && strstr(later, "\"symbol\":\"leak_b\""));
	CHECK_EQ_INT(snapshot__cached_stacks(), 1);
	free(first);
	free(again);
	free(later);
	model__free(&m);
}

/* The document less the parts that change by themselves (time, leaktop's own cost). */
static json_t *steady(json_t *doc)
{
	json_t *stats = json_object_get(doc, "stats");

	json_object_del(doc, "time");
	json_object_del(doc, "elapsed_s");
	json_object_del(stats, "self_rss_bytes");
	json_object_del(stats, "self_cpu_s");
	return doc;
}

static void test_snapshot_file_and_line_are_the_same_document(void)
{
	struct sample_site sites[] = { heap_site(100, 0x60), heap_site(100, 0x61),
				       heap_site(200, 0x70) };
	char dir[] = "/tmp/lt-stacks-XXXXXX", path[64], *line, *text;
	json_t *from_line, *from_file, *procs, *site;
	json_error_t e;
	struct model m;
	size_t len;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/snap.json", dir);
	model__init(&m, 1.0, RES_ALL, 8);
	CHECK_EQ_INT(apply(&m, 1, sites, 3, 100, "leak_a", 0), 0);
	line = NULL;
	f = open_memstream(&line, &len);
	CHECK(f != NULL);
	CHECK_EQ_INT(snapshot__write_line(f, &m), 0);
	fclose(f);
	CHECK_EQ_INT(snapshot__write_file(path, &m), 0);
	/* One line, ended by a newline; the file is indented over many. */
	CHECK(len > 0 && line[len - 1] == '\n' && !memchr(line, '\n', len - 1));
	from_line = json_loads(line, 0, &e);
	from_file = json_load_file(path, 0, &e);
	CHECK(from_line != NULL && from_file != NULL);
	f = fopen(path, "r");
	CHECK(f != NULL);
	text = calloc(1, 1 << 16);
	CHECK(fread(text, 1, (1 << 16) - 1, f) > 0);
	fclose(f);
	CHECK(strstr(text, "\n          \"stack\": [\n            {\n              \"addr\": "
		     "\"0x401000\",") != NULL);
	CHECK(json_equal(steady(from_line), steady(from_file)));
	/* Both processes, every site with its stack (the unresolved one's empty). */
	procs = json_object_get(from_line, "processes");
	CHECK_EQ_INT(json_array_size(procs), 2);
	for (size_t i = 0; i < json_array_size(procs); i++) {
		json_t *p = json_array_get(procs, i), *ss = json_object_get(p, "sites");
		long pid = (long)json_integer_value(json_object_get(p, "pid"));

		CHECK_EQ_INT(json_array_size(ss), pid == 100 ? 2 : 1);
		for (size_t k = 0; k < json_array_size(ss); k++) {
			site = json_array_get(ss, k);
			CHECK_EQ_INT(json_array_size(json_object_get(site, "stack")),
				     pid == 100 ? 1 : 0);
			CHECK(json_object_get(site, "outstanding_bytes") != NULL);
		}
		CHECK(json_object_get(p, "counters") != NULL);
	}
	CHECK(json_is_array(json_object_get(from_line, "symbols_missing")));
	json_decref(from_line);
	json_decref(from_file);
	free(text);
	free(line);
	unlink(path);
	rmdir(dir);
	model__free(&m);
}

/* text re-dumped by jansson with flags: the same bytes as text (less its final newline)? */
static bool janssons_own_dump(const char *text, size_t flags)
{
	json_error_t e;
	json_t *doc = json_loads(text, 0, &e);
	char *again;
	bool same;

	if (!doc) {
		fprintf(stderr, "  not JSON: %s (line %d, column %d)\n", e.text, e.line, e.column);
		return false;
	}
	again = json_dumps(doc, flags);
	same = again && strlen(text) == strlen(again) + 1 && !strncmp(text, again, strlen(again));
	if (!same) {
		size_t i = 0;

		while (again && text[i] && text[i] == again[i])
			i++;
		fprintf(stderr, "  differs at byte %zu: ...%.60s\n  jansson: ...%.60s\n", i,
			text + (i > 20 ? i - 20 : 0), again ? again + (i > 20 ? i - 20 : 0) : "");
	}
	if (again) {
		json_malloc_t alloc;
		json_free_t release;

		json_get_alloc_funcs(&alloc, &release);
		release(again);
	}
	json_decref(doc);
	return same;
}

/*
 * Sites and frames are written as text directly, not through jansson values: what they write
 * must be what jansson would, strings a traced program controls included (control
 * characters, quotes, backslashes, UTF-8 and bytes that are not), numbers large, small and
 * negative, unknowns null.
 */
static void test_snapshot_sites_and_frames_read_as_janssons_own_dump(void)
{
	static const struct sym_frame frames[] = {
		{ .addr = 0x401000, .symbol = "ctl\x01\x1f\x7f \"q\" \\ \b\f\n\r\t end", .offset = 8,
		  .module = "/bin/\xc3\xbcn\xc3\xaf", .file = NULL, .line = 0 },
		{ .addr = 0x7fffffffffffULL, .symbol = NULL, .module = "bad\xff\xfe utf8 \xc3\xa9",
		  .file = "a/b.c", .line = 12 },
		{ .addr = 0, .symbol = "\xe2\x82\xac\xf0\x9d\x84\x9e ok", .offset = 0,
		  .file = "app.py", .line = 42, .python = true },
		{ .addr = 1, .symbol = "overlong \xc0\xaf", .module = "surrogate \xed\xa0\x80" },
		{ .addr = 2, .symbol = "past \xf4\x90\x80\x80", .module = "cut \xe2\x82", .line = -1 },
		{ .addr = ~0ULL, .symbol = "", .offset = ~0ULL >> 1, .module = "", .file = "",
		  .line = 2147483647 },
	};
	static const double reals[] = { 0, -0.0, 1, -1.5, 1e-7, 123456789012.5, 1e300, 0.1,
					2.0 / 3, 1e21, -4e-310 };
	struct sample_site sites[12];
	char dir[] = "/tmp/lt-stacks-XXXXXX", path[64], *line = NULL, *text;
	struct sample s;
	struct model m;
	size_t len, n = sizeof(sites) / sizeof(sites[0]);
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/snap.json", dir);
	model__init(&m, 1.0, RES_ALL, 8);
	memset(&s, 0, sizeof(s));
	s.ts_ns = 5 * NS;
	for (size_t i = 0; i < n; i++) {
		struct sample_frames *sf;

		sites[i] = heap_site(100, 0x100 + i);
		sites[i].outstanding_bytes = i * 1000003;
		sites[i].alloc_bytes = (uint64_t)1 << (i * 5);
		sites[i].live_since_ns = i % 3 ? NS + i * 7777 : 0;
		if (i == 11) {
			sites[i].kind = LT_KIND_FD;
			sites[i].outstanding_bytes = 0;
		}
		sf = sample__add_frames(&s);
		sf->pid = 100;
		sf->gen = 1;
		sf->stack_hash = sites[i].stack_hash;
		/* Site i: frames i.. of the list (the last ones: none). */
		sf->n_frames = i < 6 ? 6 - i : 0;
		sf->frames = calloc(6, sizeof(*sf->frames));
		for (uint32_t k = 0; k < sf->n_frames; k++)
			CHECK_EQ_INT(sym_frame__copy(&sf->frames[k], &frames[i + k]), 0);
	}
	*sample__add_event(&s) = (struct sample_event){ .type = SAMPLE_EV_FIRST, .pid = 100,
							 .gen = 1 };
	s.sites = sites;
	s.n_sites = n;
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	s.sites = NULL;
	s.n_sites = 0;
	sample__free(&s);
	CHECK_EQ_INT(m.n_procs, 1);
	CHECK_EQ_INT(m.procs[0].n_sites, n);
	for (size_t i = 0; i < m.procs[0].n_sites; i++) {
		m.procs[0].sites[i].growth_per_s = reals[i % 11];
		m.procs[0].sites[i].trend_z = -reals[(i + 3) % 11];
	}
	/* Twice each: the second from the stacks' cache. */
	for (int round = 0; round < 2; round++) {
		f = open_memstream(&line, &len);
		CHECK(f != NULL);
		CHECK_EQ_INT(snapshot__write_line(f, &m), 0);
		fclose(f);
		CHECK(strstr(line, "\"symbol\":\"ctl\\u0001\\u001F\x7f \\\"q\\\" \\\\ "
			     "\\b\\f\\n\\r\\t end\"") != NULL);
		CHECK(strstr(line, "\"module\":\"bad\xef\xbf\xbd\xef\xbf\xbd utf8 "
			     "\xef\xbf\xbd\xef\xbf\xbd\"") != NULL);
		CHECK(janssons_own_dump(line, JSON_COMPACT | JSON_REAL_PRECISION(10)));
		/* A Python frame as snapshot__frame() makes it: no offset, "lang" last. */
		CHECK(strstr(line, "\"symbol\":\"\xe2\x82\xac\xf0\x9d\x84\x9e ok\",\"offset\":null,"
			     "\"module\":null,\"file\":\"app.py\",\"line\":42,\"lang\":\"python\"}")
		      != NULL);
		free(line);
		CHECK_EQ_INT(snapshot__write_file(path, &m), 0);
		f = fopen(path, "r");
		CHECK(f != NULL);
		text = calloc(1, 1 << 20);
		CHECK(fread(text, 1, (1 << 20) - 1, f) > 0);
		fclose(f);
		CHECK(janssons_own_dump(text, JSON_INDENT(2) | JSON_REAL_PRECISION(10)));
		free(text);
	}
	unlink(path);
	rmdir(dir);
	model__free(&m);
}

int main(void)
{
	RUN(test_snapshot_file_and_line_are_the_same_document);
	RUN(test_snapshot_stacks_are_made_once_and_dropped_with_their_process);
	RUN(test_snapshot_sites_and_frames_read_as_janssons_own_dump);
	CHECK_EXIT();
}
