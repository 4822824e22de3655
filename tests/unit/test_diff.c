// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_diff.c - comparing snapshots: the numbers for the committed golden pair
 * (tests/data/old.json -> new.json, checked by hand), how processes are matched (pid and
 * start time, exec, restart under another pid, reused pid), how call sites are matched (by
 * symbolized stack, never by stack id or address), the time between snapshots, the order
 * of the results, the per-process mmap totals (null where a side did not track mappings) and
 * the "leaktop.diff/1" JSON.  Run from the repository root.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "check.h"
#include "view/diff.h"
#include "view/snapshot_read.h"

static char err[1024];

/* Two inputs and their comparison. */
struct pair {
	struct model m[2];
	struct snapshot_info info[2];
	struct diff_side side[2];
	struct diff d;
};

static void pair_free(struct pair *p)
{
	diff__free(&p->d);
	model__free(&p->m[0]);
	model__free(&p->m[1]);
}

static int pair_files(struct pair *p, const char *old, const char *new_)
{
	const char *path[2] = { old, new_ };

	memset(p, 0, sizeof(*p));
	for (int i = 0; i < 2; i++) {
		if (snapshot__read_file(path[i], NULL, &p->m[i], &p->info[i], err, sizeof(err))) {
			printf("  %s\n", err);
			return -1;
		}
		p->side[i] = (struct diff_side){ path[i], &p->m[i], &p->info[i] };
	}
	return diff__compute(&p->side[0], &p->side[1], &p->d);
}

/* A snapshot taken at `time`, `elapsed` seconds into its run, holding procs (freed). */
static char *doc(const char *time, double elapsed, char *procs)
{
	char *s;

	if (asprintf(&s, "{\"schema\": \"leaktop.snapshot/1\", \"time\": \"%s\", \"host\": \"h\", "
		     "\"elapsed_s\": %g, \"interval_s\": 1, \"stats\": {\"events\": 1, "
		     "\"dropped\": 0}, \"processes\": [%s]}", time, elapsed, procs) < 0)
		abort();
	free(procs);
	return s;
}

static int pair_texts(struct pair *p, char *old, char *new_)
{
	char *text[2] = { old, new_ };
	int ret = 0;

	memset(p, 0, sizeof(*p));
	for (int i = 0; i < 2 && !ret; i++) {
		ret = snapshot__read_buf(text[i], strlen(text[i]), i ? "new" : "old", NULL,
					 &p->m[i], &p->info[i], err, sizeof(err));
		if (ret)
			printf("  %s\n", err);
		p->side[i] = (struct diff_side){ i ? "new" : "old", &p->m[i], &p->info[i] };
	}
	free(old);
	free(new_);
	return ret ? ret : diff__compute(&p->side[0], &p->side[1], &p->d);
}

/* A process with one heap site of `bytes` allocated from fn at module:line (addr, id vary). */
static char *proc(int pid, long ticks, const char *cmd, const char *fn, int line, long bytes,
		  const char *addr, const char *id)
{
	char *s;

	if (asprintf(&s, "{\"pid\": %d, \"start_ticks\": %ld, \"comm\": \"%s\", \"cmdline\": "
		     "\"./%s\", \"heap\": {\"outstanding_bytes\": %ld, \"outstanding_count\": 1, "
		     "\"allocs\": 1, \"frees\": 0}, \"sites\": [{\"kind\": \"heap\", "
		     "\"outstanding_bytes\": %ld, \"outstanding_count\": 1, \"allocs\": 1, "
		     "\"frees\": 0, \"growth_per_s\": 0, \"flagged\": false, \"stack_id\": \"%s\", "
		     "\"stack\": [{\"addr\": \"%s\", \"symbol\": \"%s\", \"offset\": 4, \"module\": "
		     "\"/bin/%s\", \"file\": \"%s.c\", \"line\": %d}]}]}", pid, ticks, cmd, cmd,
		     bytes, bytes, id, addr, fn, cmd, cmd, line) < 0)
		abort();
	return s;
}

/* A process with `bytes` in `count` anonymous mappings from map_arena (mmap tracked). */
static char *proc_mmap(int pid, long ticks, const char *cmd, long bytes, long count)
{
	char *s;

	if (asprintf(&s, "{\"pid\": %d, \"start_ticks\": %ld, \"comm\": \"%s\", \"cmdline\": "
		     "\"./%s\", \"heap\": {\"outstanding_bytes\": 0, \"outstanding_count\": 0, "
		     "\"allocs\": 1, \"frees\": 1}, \"mmap\": {\"outstanding_bytes\": %ld, "
		     "\"outstanding_count\": %ld, \"maps\": %ld, \"unmaps\": 0}, \"sites\": "
		     "[{\"kind\": \"mmap\", \"outstanding_bytes\": %ld, \"outstanding_count\": %ld, "
		     "\"allocs\": %ld, \"frees\": 0, \"growth_per_s\": 0, \"flagged\": false, "
		     "\"stack_id\": \"0a\", \"stack\": [{\"addr\": \"0x1000\", \"symbol\": "
		     "\"map_arena\", \"offset\": 4, \"module\": \"/bin/%s\", \"file\": \"%s.c\", "
		     "\"line\": 3}]}]}", pid, ticks, cmd, cmd, bytes, count, count, bytes, count,
		     count, cmd, cmd) < 0)
		abort();
	return s;
}

static char *join(char *a, char *b)
{
	char *s;

	if (asprintf(&s, "%s, %s", a, b) < 0)
		abort();
	free(a);
	free(b);
	return s;
}

static const struct diff_site *site_of(const struct diff_proc *dp, const char *fn)
{
	for (size_t i = 0; dp && i < dp->n_sites; i++) {
		const struct site *s = dp->sites[i].new_ ? dp->sites[i].new_ : dp->sites[i].old;

		if (s->n_frames && s->frames[0].symbol && !strcmp(s->frames[0].symbol, fn))
			return &dp->sites[i];
	}
	return NULL;
}

static int64_t dbytes(const struct diff_site *s)
{
	return s->bytes.new_ - s->bytes.old;
}

/* ---------------------------------------------------------------- the golden pair */

static void test_golden_pair_gives_hand_checked_numbers(void)
{
	const struct diff_proc *leaky, *server;
	const struct diff_site *s;
	struct pair p;

	CHECK_EQ_INT(pair_files(&p, "tests/data/old.json", "tests/data/new.json"), 0);
	CHECK(p.d.seconds == 10.0);
	CHECK_EQ_INT(p.d.matched, 2);
	CHECK_EQ_INT(p.d.added, 1);
	CHECK_EQ_INT(p.d.vanished, 1);
	leaky = &p.d.procs[0];
	CHECK_EQ_INT(leaky->new_->pid, 100);
	CHECK_EQ_INT(leaky->how, DIFF_MATCH_PID);
	CHECK_EQ_INT(leaky->heap_bytes.new_ - leaky->heap_bytes.old, 4296);
	CHECK_EQ_INT(leaky->heap_count.new_ - leaky->heap_count.old, 18);
	CHECK_EQ_INT(leaky->fds.new_ - leaky->fds.old, 3);
	s = site_of(leaky, "leak_here");
	CHECK(s && s->status == DIFF_GREW);
	CHECK_EQ_INT(dbytes(s), 4096);
	CHECK_EQ_INT(s->count.new_ - s->count.old, 16);
	s = site_of(leaky, "leak_new");
	CHECK(s && s->status == DIFF_NEW && !s->bytes.has_old);
	CHECK_EQ_INT(dbytes(s), 300);
	s = site_of(leaky, "old_site");
	CHECK(s && s->status == DIFF_VANISHED && !s->bytes.has_new);
	CHECK_EQ_INT(dbytes(s), -100);
	s = site_of(leaky, "cache_fill");
	CHECK(s && s->status == DIFF_SAME);
	s = site_of(leaky, "open_conn");
	CHECK(s && s->status == DIFF_GREW && s->kind == LT_KIND_FD);
	CHECK_EQ_INT(s->count.new_ - s->count.old, 3);
	server = &p.d.procs[1];
	CHECK_EQ_INT(server->old->pid, 200);
	CHECK_EQ_INT(server->new_->pid, 300);
	CHECK_EQ_INT(server->how, DIFF_MATCH_COMMAND);
	CHECK_EQ_INT(dbytes(site_of(server, "handle_request")), 1024);
	CHECK_EQ_INT(p.d.procs[2].status, DIFF_NEW);
	CHECK_EQ_INT(p.d.procs[2].new_->pid, 500);
	CHECK_EQ_INT(p.d.procs[3].status, DIFF_VANISHED);
	CHECK_EQ_INT(p.d.procs[3].old->pid, 400);
	pair_free(&p);
}

static void test_golden_pair_json_has_schema_rates_and_nulls(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_t *root, *proc, *site;
	struct pair p;

	CHECK_EQ_INT(pair_files(&p, "tests/data/old.json", "tests/data/new.json"), 0);
	CHECK_EQ_INT(diff__write_json(f, &p.d), 0);
	fclose(f);
	pair_free(&p);
	root = json_loads(buf, 0, NULL);
	free(buf);
	CHECK(root);
	CHECK_EQ_STR(json_string_value(json_object_get(root, "schema")), "leaktop.diff/1");
	CHECK(json_real_value(json_object_get(root, "seconds")) == 10.0);
	proc = json_array_get(json_object_get(root, "processes"), 0);
	CHECK_EQ_STR(json_string_value(json_object_get(proc, "matched_by")), "pid");
	site = json_array_get(json_object_get(proc, "sites"), 0);
	CHECK_EQ_STR(json_string_value(json_object_get(site, "status")), "grew");
	CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(site, "outstanding_bytes"),
							"delta")), 4096);
	CHECK(fabs(json_real_value(json_object_get(json_object_get(site, "outstanding_bytes"),
						   "per_s")) - 409.6) < 1e-9);
	site = json_array_get(json_object_get(proc, "sites"), 1);
	CHECK_EQ_STR(json_string_value(json_object_get(site, "status")), "new");
	CHECK(json_is_null(json_object_get(json_object_get(site, "outstanding_bytes"), "old")));
	proc = json_array_get(json_object_get(root, "processes"), 3);
	CHECK_EQ_STR(json_string_value(json_object_get(proc, "status")), "vanished");
	CHECK(json_is_null(json_object_get(proc, "new_pid")));
	CHECK(json_is_null(json_object_get(proc, "matched_by")));
	json_decref(root);
}

/* ---------------------------------------------------------------- matching processes */

static void test_same_pid_and_start_time_match_by_pid(void)
{
	struct pair p;

	CHECK_EQ_INT(pair_texts(&p,
		doc("2026-11-21T10:00:00Z", 1, proc(10, 77, "a", "f", 1, 100, "0x1000", "01")),
		doc("2026-11-21T10:00:05Z", 6, proc(10, 77, "a", "f", 1, 300, "0x1000", "01"))), 0);
	CHECK_EQ_INT(p.d.n_procs, 1);
	CHECK_EQ_INT(p.d.procs[0].how, DIFF_MATCH_PID);
	CHECK_EQ_INT(dbytes(&p.d.procs[0].sites[0]), 200);
	pair_free(&p);
}

static void test_reused_pid_with_another_start_time_is_not_the_same_process(void)
{
	struct pair p;

	CHECK_EQ_INT(pair_texts(&p,
		doc("2026-11-21T10:00:00Z", 1, proc(10, 77, "a", "f", 1, 100, "0x1000", "01")),
		doc("2026-11-21T10:00:05Z", 6, proc(10, 99, "b", "g", 1, 300, "0x1000", "01"))), 0);
	CHECK_EQ_INT(p.d.matched, 0);
	CHECK_EQ_INT(p.d.added, 1);
	CHECK_EQ_INT(p.d.vanished, 1);
	pair_free(&p);
}

static void test_exec_in_the_same_process_matches_by_pid_and_start_time(void)
{
	struct pair p;

	CHECK_EQ_INT(pair_texts(&p,
		doc("2026-11-21T10:00:00Z", 1, proc(10, 77, "sh", "f", 1, 100, "0x1000", "01")),
		doc("2026-11-21T10:00:05Z", 6, proc(10, 77, "prog", "f", 1, 100, "0x1000", "01"))),
		0);
	CHECK_EQ_INT(p.d.matched, 1);
	CHECK_EQ_INT(p.d.procs[0].how, DIFF_MATCH_PID);
	pair_free(&p);
}

static void test_restarted_program_matches_by_command_line(void)
{
	struct pair p;

	CHECK_EQ_INT(pair_texts(&p,
		doc("2026-11-21T10:00:00Z", 1, join(proc(10, 77, "a", "f", 1, 100, "0x1000", "01"),
						    proc(11, 78, "b", "f", 1, 100, "0x1000", "02"))),
		doc("2026-11-22T09:00:00Z", 3, join(proc(21, 5, "b", "f", 1, 150, "0x2000", "03"),
						    proc(20, 4, "a", "f", 1, 900, "0x3000", "04")))),
		0);
	CHECK_EQ_INT(p.d.matched, 2);
	CHECK_EQ_INT(p.d.procs[0].old->pid, 10);
	CHECK_EQ_INT(p.d.procs[0].new_->pid, 20);
	CHECK_EQ_INT(p.d.procs[0].how, DIFF_MATCH_COMMAND);
	CHECK_EQ_INT(p.d.procs[1].old->pid, 11);
	CHECK_EQ_INT(p.d.procs[1].new_->pid, 21);
	pair_free(&p);
}

/* ---------------------------------------------------------------- matching sites */

static void test_sites_match_by_symbolized_stack_not_stack_id_or_address(void)
{
	struct pair p;
	const struct diff_site *s;

	CHECK_EQ_INT(pair_texts(&p,
		doc("2026-11-21T10:00:00Z", 1, proc(10, 1, "a", "f", 7, 100, "0x55aa0000", "aa")),
		doc("2026-11-22T10:00:00Z", 1, proc(20, 2, "a", "f", 7, 100, "0x7fbb0000", "bb"))),
		0);
	CHECK_EQ_INT(p.d.procs[0].n_sites, 1);
	s = &p.d.procs[0].sites[0];
	CHECK(s->old && s->new_);
	CHECK_EQ_INT(s->status, DIFF_SAME);
	pair_free(&p);
}

static void test_same_function_at_another_line_is_another_site(void)
{
	struct pair p;

	CHECK_EQ_INT(pair_texts(&p,
		doc("2026-11-21T10:00:00Z", 1, proc(10, 1, "a", "f", 7, 100, "0x1000", "01")),
		doc("2026-11-21T10:00:05Z", 6, proc(10, 1, "a", "f", 8, 100, "0x1004", "02"))), 0);
	CHECK_EQ_INT(p.d.procs[0].n_sites, 2);
	CHECK_EQ_INT(p.d.procs[0].sites[0].status, DIFF_NEW);
	CHECK_EQ_INT(p.d.procs[0].sites[1].status, DIFF_VANISHED);
	pair_free(&p);
}

static void test_site_key_uses_module_file_name_function_and_line(void)
{
	struct sym_frame fr[2] = {
		{ .addr = 0x1234, .symbol = "leak", .offset = 4, .module = "/usr/bin/prog",
		  .file = "/src/prog.c", .line = 12 },
		{ .addr = 0x5678, .module = "/lib/libc.so.6" },
	};
	struct site s = { .kind = LT_KIND_HEAP, .frames = fr, .n_frames = 2 };
	char *key = diff__site_key(&s);

	CHECK_EQ_STR(key, "heap\x1eprog!leak:prog.c:12\x1elibc.so.6!?");
	free(key);
}

static void test_sites_sorted_heap_first_then_by_growth(void)
{
	struct pair p;
	const struct diff_proc *dp;

	CHECK_EQ_INT(pair_files(&p, "tests/data/old.json", "tests/data/new.json"), 0);
	dp = &p.d.procs[0];
	CHECK_EQ_INT(dp->n_sites, 5);
	for (size_t i = 0; i + 1 < dp->n_sites; i++) {
		const struct diff_site *a = &dp->sites[i], *b = &dp->sites[i + 1];

		CHECK(a->kind <= b->kind);
		CHECK(a->kind != b->kind || dbytes(a) >= dbytes(b));
	}
	CHECK_EQ_INT(dp->sites[4].kind, LT_KIND_FD);
	for (size_t i = 0; i + 1 < p.d.n_procs; i++)
		CHECK(p.d.procs[i].heap_bytes.new_ - p.d.procs[i].heap_bytes.old >=
		      p.d.procs[i + 1].heap_bytes.new_ - p.d.procs[i + 1].heap_bytes.old);
	pair_free(&p);
}

/* ---------------------------------------------------------------- time between snapshots */

static void test_seconds_come_from_elapsed_within_one_run(void)
{
	struct snapshot_info a = { .time_s = 1000, .elapsed_s = 2.25, .host = "h" };
	struct snapshot_info b = { .time_s = 1000, .elapsed_s = 2.75, .host = "h" };

	CHECK(diff__seconds(&a, &b) == 0.5);
	b.time_s = 1001;
	CHECK(diff__seconds(&a, &b) == 0.5);
}

static void test_seconds_come_from_wall_time_across_runs(void)
{
	struct snapshot_info a = { .time_s = 1000, .elapsed_s = 50, .host = "h" };
	struct snapshot_info b = { .time_s = 1600, .elapsed_s = 3, .host = "h" };

	CHECK(diff__seconds(&a, &b) == 600);
	/* another host: its elapsed time is no clock of ours */
	b = (struct snapshot_info){ .time_s = 1010, .elapsed_s = 60.5, .host = "other" };
	CHECK(diff__seconds(&a, &b) == 10);
}

static void test_unknown_time_between_snapshots_gives_null_rates(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct pair p;
	json_t *root;

	CHECK_EQ_INT(pair_texts(&p,
		doc("2026-11-21T10:00:00Z", 9, proc(10, 1, "a", "f", 7, 100, "0x1000", "01")),
		doc("2026-11-21T10:00:00Z", 1, proc(10, 1, "a", "f", 7, 300, "0x1000", "01"))), 0);
	CHECK(p.d.seconds == 0);
	CHECK_EQ_INT(diff__write_json(f, &p.d), 0);
	fclose(f);
	pair_free(&p);
	root = json_loads(buf, 0, NULL);
	free(buf);
	CHECK(root);
	CHECK(json_is_null(json_object_get(root, "seconds")));
	CHECK(json_is_null(json_object_get(json_object_get(json_object_get(json_array_get(
		json_object_get(root, "processes"), 0), "heap"), "outstanding_bytes"), "per_s")));
	json_decref(root);
}

/* ---------------------------------------------------------------- mmap totals */

/* The diff as JSON (parsed; NULL if either output failed) and as text; the pair is freed. */
static json_t *diff_outputs(struct pair *p, char **text)
{
	struct diff_text_opts o = {};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_t *root;
	int err;

	err = diff__write_json(f, &p->d);
	fclose(f);
	root = json_loads(buf, 0, NULL);
	free(buf);
	f = open_memstream(text, &len);
	err = err ? err : diff__write_text(f, &p->d, &o);
	fclose(f);
	pair_free(p);
	if (err) {
		json_decref(root);
		return NULL;
	}
	return root;
}

static void test_mmap_totals_of_a_process_give_old_new_delta_and_rate(void)
{
	json_t *root, *mm;
	struct pair p;
	char *text;

	CHECK_EQ_INT(pair_texts(&p,
		doc("2026-11-21T10:00:00Z", 1, proc_mmap(10, 7, "jit", 1 << 20, 1)),
		doc("2026-11-21T10:00:05Z", 6, proc_mmap(10, 7, "jit", 3 << 20, 3))), 0);
	CHECK(p.d.mmap);
	CHECK_EQ_INT(p.d.procs[0].mmap_bytes.old, 1 << 20);
	CHECK_EQ_INT(p.d.procs[0].mmap_bytes.new_, 3 << 20);
	CHECK_EQ_INT(p.d.procs[0].mmap_count.new_ - p.d.procs[0].mmap_count.old, 2);
	CHECK_EQ_INT(p.d.procs[0].sites[0].kind, LT_KIND_MMAP);
	root = diff_outputs(&p, &text);
	CHECK(root);
	mm = json_object_get(json_array_get(json_object_get(root, "processes"), 0), "mmap");
	CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(mm, "outstanding_bytes"),
							"delta")), 2 << 20);
	CHECK(fabs(json_real_value(json_object_get(json_object_get(mm, "outstanding_bytes"),
						   "per_s")) - (2 << 20) / 5.0) < 1e-6);
	CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(mm, "outstanding_count"),
							"old")), 1);
	CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(mm, "outstanding_count"),
							"new")), 3);
	CHECK(strstr(text, "\n  mmap: 1.0 MiB -> 3.0 MiB (+2.0 MiB, +409.6 KiB/s), mappings "
		      "1 -> 3 (+2)\n"));
	CHECK(strstr(text, "    +2.0 MiB, +409.6 KiB/s, +2 mappings  (1.0 MiB -> 3.0 MiB)  grew  "
		      "map_arena jit.c:3\n"));
	json_decref(root);
	free(text);
}

static void test_mmap_totals_are_null_where_a_side_did_not_track_mappings(void)
{
	json_t *root, *mm;
	struct pair p;
	char *text;

	/* OLD from a run without -r mmap (or an older leaktop): no "mmap" object. */
	CHECK_EQ_INT(pair_texts(&p,
		doc("2026-11-21T10:00:00Z", 1, proc(10, 7, "jit", "f", 1, 100, "0x1000", "01")),
		doc("2026-11-21T10:00:05Z", 6, proc_mmap(10, 7, "jit", 1 << 20, 1))), 0);
	CHECK(!p.d.procs[0].mmap_bytes.has_old);
	CHECK(p.d.procs[0].mmap_bytes.has_new);
	root = diff_outputs(&p, &text);
	CHECK(root);
	mm = json_object_get(json_array_get(json_object_get(root, "processes"), 0), "mmap");
	CHECK(json_is_null(json_object_get(json_object_get(mm, "outstanding_bytes"), "old")));
	CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(mm, "outstanding_bytes"),
							"new")), 1 << 20);
	CHECK(strstr(text, "\n  mmap: none -> 1.0 MiB (+1.0 MiB, +204.8 KiB/s), mappings none -> "
		      "1 (+1)\n"));
	json_decref(root);
	free(text);
}

static void test_golden_pair_without_mappings_has_null_mmap_and_no_mmap_line(void)
{
	json_t *root;
	struct pair p;
	char *text;

	CHECK_EQ_INT(pair_files(&p, "tests/data/old.json", "tests/data/new.json"), 0);
	CHECK(!p.d.mmap);
	root = diff_outputs(&p, &text);
	CHECK(root);
	for (size_t i = 0; i < json_array_size(json_object_get(root, "processes")); i++) {
		json_t *proc = json_array_get(json_object_get(root, "processes"), i);

		CHECK(json_is_null(json_object_get(proc, "mmap")));
	}
	CHECK(!strstr(text, "mmap:"));
	json_decref(root);
	free(text);
}

int main(void)
{
	RUN(test_golden_pair_gives_hand_checked_numbers);
	RUN(test_golden_pair_json_has_schema_rates_and_nulls);
	RUN(test_same_pid_and_start_time_match_by_pid);
	RUN(test_reused_pid_with_another_start_time_is_not_the_same_process);
	RUN(test_exec_in_the_same_process_matches_by_pid_and_start_time);
	RUN(test_restarted_program_matches_by_command_line);
	RUN(test_sites_match_by_symbolized_stack_not_stack_id_or_address);
	RUN(test_same_function_at_another_line_is_another_site);
	RUN(test_site_key_uses_module_file_name_function_and_line);
	RUN(test_sites_sorted_heap_first_then_by_growth);
	RUN(test_seconds_come_from_elapsed_within_one_run);
	RUN(test_seconds_come_from_wall_time_across_runs);
	RUN(test_unknown_time_between_snapshots_gives_null_rates);
	RUN(test_mmap_totals_of_a_process_give_old_new_delta_and_rate);
	RUN(test_mmap_totals_are_null_where_a_side_did_not_track_mappings);
	RUN(test_golden_pair_without_mappings_has_null_mmap_and_no_mmap_line);
	CHECK_EXIT();
}
