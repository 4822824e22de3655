// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_oom.c - OOM-kill snapshots without a kernel: the file name and directory rules
 * (cli/oom.c), the start-up check of --oom-dir, the fold of an OOM event (the oom_killed
 * flag, which analysis keeps), how long an OOM-killed image stays listed after its exit
 * (model__reap), the one-process snapshot, and the bounds: which snapshot files the caps
 * remove (oldest first, only leaktop's own), the rate limit per cgroup, the options.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>
#include <time.h>
#include <jansson.h>

#include "check.h"
#include "cli/oom.h"
#include "cli/options.h"
#include "util/atomic_file.h"
#include "core/analysis.h"
#include "core/model.h"
#include "core/sample.h"
#include "view/snapshot.h"

#define NS 1000000000ull

static void test_file_name_holds_pid_and_utc_time_in_the_directory(void)
{
	char buf[256];

	/* 2026-11-21 10:00:00 UTC */
	CHECK_EQ_INT(oom__file_name(buf, sizeof(buf), "/var/lib/leaktop", 1234, 1795255200), 0);
	CHECK_EQ_STR(buf, "/var/lib/leaktop/leaktop-oom-1234-20261121T100000Z.json");
	CHECK_EQ_INT(oom__file_name(buf, sizeof(buf), "out/", 7, 0), 0);
	CHECK_EQ_STR(buf, "out/leaktop-oom-7-19700101T000000Z.json");
	CHECK_EQ_INT(oom__file_name(buf, 20, "/var/lib/leaktop", 1234, 0), -ENAMETOOLONG);
}

static void test_dir_is_the_option_else_beside_the_json_file_else_here(void)
{
	char buf[256];

	CHECK_EQ_STR(oom__dir(buf, sizeof(buf), "/srv/oom", "out/snap.json"), "/srv/oom");
	CHECK_EQ_STR(oom__dir(buf, sizeof(buf), NULL, "out/snap.json"), "out");
	CHECK_EQ_STR(oom__dir(buf, sizeof(buf), NULL, "/a/b/snap.json"), "/a/b");
	CHECK_EQ_STR(oom__dir(buf, sizeof(buf), NULL, "/snap.json"), "/");
	CHECK_EQ_STR(oom__dir(buf, sizeof(buf), NULL, "snap.json"), ".");
	CHECK_EQ_STR(oom__dir(buf, sizeof(buf), NULL, "-"), ".");
	CHECK_EQ_STR(oom__dir(buf, sizeof(buf), NULL, NULL), ".");
}

static void test_check_dir_refuses_links_files_and_missing_directories_in_one_line(void)
{
	char dir[] = "/tmp/leaktop-test-oom.XXXXXX", path[512], msg[512];
	int fd;

	CHECK(mkdtemp(dir));
	CHECK_EQ_INT(oom__check_dir(dir, msg, sizeof(msg)), 0);
	snprintf(path, sizeof(path), "%s/link", dir);
	CHECK_EQ_INT(symlink(dir, path), 0);
	CHECK_EQ_INT(oom__check_dir(path, msg, sizeof(msg)), -ELOOP);
	CHECK(strstr(msg, "symbolic link") && strchr(msg, ';') && !strchr(msg, '\n'));
	unlink(path);
	snprintf(path, sizeof(path), "%s/file", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	CHECK(fd >= 0);
	close(fd);
	CHECK_EQ_INT(oom__check_dir(path, msg, sizeof(msg)), -ENOTDIR);
	CHECK(strstr(msg, "not a directory") && strchr(msg, ';'));
	unlink(path);
	snprintf(path, sizeof(path), "%s/missing", dir);
	CHECK_EQ_INT(oom__check_dir(path, msg, sizeof(msg)), -ENOENT);
	CHECK(strstr(msg, path) && strchr(msg, ';'));
	rmdir(dir);
}

static void test_oom_dir_option_is_kept_and_an_empty_one_refused(void)
{
	char a0[] = "leaktop", a1[] = "--oom-dir", a2[] = "/srv/oom", empty[] = "", err[256];
	char *argv[] = { a0, a1, a2, NULL };
	struct options o;

	CHECK_EQ_INT(options__parse(3, argv, &o, err, sizeof(err)), 0);
	CHECK(o.oom_dir == a2);
	argv[2] = empty;
	CHECK_EQ_INT(options__parse(3, argv, &o, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "--oom-dir"));
	argv[1] = a0;
	argv[2] = NULL;
	CHECK_EQ_INT(options__parse(1, argv, &o, err, sizeof(err)), 0);
	CHECK(!o.oom_dir);
}

/* A model holding image (pid, gen) with one heap site of `bytes`, at second `sec`. */
static void fold_heap(struct model *m, unsigned int sec, uint32_t pid, uint64_t gen,
		      int64_t bytes, enum sample_event_type ev_type, bool with_event)
{
	struct sample_site site = { .pid = pid, .kind = LT_KIND_HEAP, .gen = gen,
				    .stack_hash = 0xa, .outstanding_bytes = bytes,
				    .outstanding_count = bytes / 1024, .allocs = bytes / 1024,
				    .alloc_bytes = bytes };
	struct sample s;

	memset(&s, 0, sizeof(s));
	s.ts_ns = sec * NS;
	s.sites = &site;
	s.n_sites = bytes ? 1 : 0;
	if (with_event) {
		struct sample_event *ev = sample__add_event(&s);

		*ev = (struct sample_event){ .type = ev_type, .pid = pid,
					     .gen = ev_type == SAMPLE_EV_EXIT ? 0 : gen,
					     .old_gen = ev_type == SAMPLE_EV_EXIT ? gen : 0 };
	}
	model__apply(m, &s);
	analysis__run(m);
	s.sites = NULL;
	s.n_sites = 0;
	sample__free(&s);
}

static void test_oom_event_flags_the_image_and_analysis_keeps_the_flag(void)
{
	const struct process *p;
	struct model m;

	model__init(&m, 1.0, RES_ALL, 8);
	fold_heap(&m, 1, 100, 7, 4096, SAMPLE_EV_FIRST, true);
	p = model__find(&m, 100, 7);
	CHECK(p && !(p->flags & PROC_OOM_KILLED));
	fold_heap(&m, 2, 100, 7, 8192, SAMPLE_EV_OOM, true);
	p = model__find(&m, 100, 7);
	CHECK(p && (p->flags & PROC_OOM_KILLED) && !p->exited);
	fold_heap(&m, 3, 100, 7, 8192, SAMPLE_EV_FIRST, false);
	CHECK(model__find(&m, 100, 7)->flags & PROC_OOM_KILLED);
	model__free(&m);
}

/* One interval of the run loop: reap (the upkeep), fold, report. */
static size_t interval(struct model *m, unsigned int sec, uint32_t pid, uint64_t gen,
		       int64_t bytes, bool exit_now, struct dead_image *dead_out)
{
	struct dead_image *dead;
	size_t n = model__reap(m, &dead);

	if (n && dead_out)
		*dead_out = dead[0];
	free(dead);
	fold_heap(m, sec, pid, gen, bytes, SAMPLE_EV_EXIT, exit_now);
	model__reported(m);
	return n;
}

static void test_oom_killed_image_stays_listed_with_its_sites_for_a_minute_after_its_exit(void)
{
	struct dead_image dead = { 0 };
	const struct process *p;
	struct model m;
	unsigned int sec;

	model__init(&m, 1.0, RES_ALL, 8);
	fold_heap(&m, 1, 100, 7, 4096, SAMPLE_EV_FIRST, true);
	fold_heap(&m, 2, 100, 7, 1 << 20, SAMPLE_EV_OOM, true);
	model__reported(&m);
	/* Second 3: it exits; the kernel still has its site. */
	CHECK_EQ_INT(interval(&m, 3, 100, 7, 1 << 20, true, NULL), 0);
	/* Second 4: reported once: its records are to be purged (listed once), it stays. */
	CHECK_EQ_INT(interval(&m, 4, 100, 7, 0, false, &dead), 1);
	CHECK(dead.tgid == 100 && dead.gen == 7);
	p = model__find(&m, 100, 7);
	CHECK(p && p->exited && p->records_released && (p->flags & PROC_OOM_KILLED));
	CHECK_EQ_INT(p->n_sites, 1);
	CHECK_EQ_INT(p->heap_outstanding_bytes, 1 << 20);
	/*
	 * The kernel no longer has its site: it stays as it died, never listed again, up to
	 * the reap that comes a minute after its exit (the reap of second 64 sees second 63).
	 */
	for (sec = 5; sec <= 4 + OOM_KEEP_NS / NS; sec++)
		CHECK_EQ_INT(interval(&m, sec, 100, 7, 0, false, NULL), 0);
	p = model__find(&m, 100, 7);
	CHECK(p && p->heap_outstanding_bytes == 1 << 20 && (p->flags & PROC_OOM_KILLED));
	/* Past the minute it is gone, without a second purge. */
	CHECK_EQ_INT(interval(&m, 5 + OOM_KEEP_NS / NS, 100, 7, 0, false, NULL), 0);
	CHECK(!model__find(&m, 100, 7));
	model__free(&m);
}

static void test_other_exited_image_is_reaped_after_one_report(void)
{
	struct model m;

	model__init(&m, 1.0, RES_ALL, 8);
	fold_heap(&m, 1, 100, 7, 4096, SAMPLE_EV_FIRST, true);
	model__reported(&m);
	CHECK_EQ_INT(interval(&m, 2, 100, 7, 4096, true, NULL), 0);
	CHECK_EQ_INT(interval(&m, 3, 100, 7, 0, false, NULL), 1);
	CHECK(!model__find(&m, 100, 7));
	model__free(&m);
}

static void test_at_most_oom_keep_max_killed_images_stay_the_longest_dead_go_first(void)
{
	struct dead_image *dead;
	struct model m;
	uint32_t pid;

	model__init(&m, 1.0, RES_ALL, 8);
	/* OOM_KEEP_MAX + 2 victims, each dying one second after the one before. */
	for (pid = 1; pid <= OOM_KEEP_MAX + 2; pid++) {
		fold_heap(&m, pid, pid, pid, 4096, SAMPLE_EV_OOM, true);
		fold_heap(&m, pid, pid, pid, 0, SAMPLE_EV_EXIT, true);
		model__reported(&m);
		model__reap(&m, &dead);
		free(dead);
	}
	model__reap(&m, &dead);
	free(dead);
	CHECK(!model__find(&m, 1, 1) && !model__find(&m, 2, 2));
	CHECK(model__find(&m, 3, 3) && model__find(&m, OOM_KEEP_MAX + 2, OOM_KEEP_MAX + 2));
	CHECK_EQ_INT(m.n_procs, OOM_KEEP_MAX);
	model__free(&m);
}

static void test_process_snapshot_holds_only_that_process_and_is_private(void)
{
	char dir[] = "/tmp/leaktop-test-oom.XXXXXX", path[512];
	const struct process *p;
	json_error_t jerr;
	json_t *root;
	struct model m;
	struct stat st;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/one.json", dir);
	model__init(&m, 1.0, RES_ALL, 8);
	fold_heap(&m, 1, 100, 7, 4096, SAMPLE_EV_FIRST, true);
	fold_heap(&m, 1, 200, 8, 8192, SAMPLE_EV_FIRST, true);
	p = model__find(&m, 200, 8);
	CHECK(p);
	CHECK_EQ_INT(snapshot__write_process_file(path, &m, p), 0);
	CHECK_EQ_INT(stat(path, &st), 0);
	CHECK_EQ_INT(st.st_mode & 0777, 0600);
	root = json_load_file(path, 0, &jerr);
	CHECK(root);
	CHECK_EQ_STR(json_string_value(json_object_get(root, "schema")), SNAPSHOT_SCHEMA);
	CHECK_EQ_INT(json_array_size(json_object_get(root, "processes")), 1);
	CHECK_EQ_INT(json_integer_value(json_object_get(json_array_get(json_object_get(root,
		     "processes"), 0), "pid")), 200);
	json_decref(root);
	unlink(path);
	rmdir(dir);
	model__free(&m);
}

static void test_snapshot_names_are_only_leaktops_own(void)
{
	CHECK(oom__is_snapshot_name("leaktop-oom-1234-20261121T100000Z.json"));
	CHECK(oom__is_snapshot_name("leaktop-oom-7-19700101T000000Z-a1b2c3.json"));
	CHECK(!oom__is_snapshot_name("leaktop-oom-1234-20261121T100000Z.json.bak"));
	CHECK(!oom__is_snapshot_name(".leaktop-oom-1234-20261121T100000Z.json.Xk3j2a"));
	CHECK(!oom__is_snapshot_name("leaktop-oom--20261121T100000Z.json"));
	CHECK(!oom__is_snapshot_name("leaktop-oom-12a-20261121T100000Z.json"));
	CHECK(!oom__is_snapshot_name("leaktop-oom-1-2026112T100000Z.json"));
	CHECK(!oom__is_snapshot_name("leaktop-oom-1-20261121T100000Z-../x.json"));
	CHECK(!oom__is_snapshot_name("snap.json"));
}

static void test_retention_removes_the_oldest_until_both_caps_hold(void)
{
	/* Given newest first: the sort puts the oldest first. */
	struct oom_file f[5] = {
		{ "e", 100, 50 }, { "d", 100, 40 }, { "c", 300, 30 }, { "b", 100, 20 },
		{ "a", 100, 10 },
	};

	CHECK_EQ_INT(oom__retention(f, 5, 0, 0), 0);
	CHECK_EQ_STR(f[0].name, "a");
	CHECK_EQ_STR(f[4].name, "e");
	/* Files: 5 with a cap of 3 → the two oldest. */
	CHECK_EQ_INT(oom__retention(f, 5, 3, 0), 2);
	/* Bytes: 700 with a cap of 350 → a, b, c go (then 200). */
	CHECK_EQ_INT(oom__retention(f, 5, 0, 350), 3);
	/* Both: the stricter decides. */
	CHECK_EQ_INT(oom__retention(f, 5, 4, 350), 3);
	CHECK_EQ_INT(oom__retention(f, 5, 1, 10000), 4);
	/* The newest alone over the byte cap goes too. */
	CHECK_EQ_INT(oom__retention(f, 5, 0, 99), 5);
	CHECK_EQ_INT(oom__retention(f, 0, 1, 1), 0);
}

static void test_retention_orders_files_of_one_mtime_by_name(void)
{
	struct oom_file f[3] = { { "c", 1, 5 }, { "a", 1, 5 }, { "b", 1, 5 } };

	CHECK_EQ_INT(oom__retention(f, 3, 2, 0), 1);
	CHECK_EQ_STR(f[0].name, "a");
}

static void test_rate_limit_allows_one_snapshot_per_cgroup_per_gap(void)
{
	struct oom_rate r = { 0 };
	uint64_t a = oom__rate_key("/user.slice/a"), b = oom__rate_key("/user.slice/b");

	CHECK(a != b && a && b && oom__rate_key(NULL) == 0);
	CHECK(oom_rate__allowed(&r, a, 100, 60));
	CHECK(oom_rate__allowed(&r, a, 100, 60));	/* asking takes nothing */
	oom_rate__take(&r, a, 100);
	CHECK(!oom_rate__allowed(&r, a, 100.5, 60));
	CHECK(!oom_rate__allowed(&r, a, 159.9, 60));
	CHECK(oom_rate__allowed(&r, b, 100.5, 60));	/* another cgroup: its own */
	CHECK(oom_rate__allowed(&r, a, 160, 60));
	CHECK(oom_rate__allowed(&r, a, 100.5, 0));	/* gap 0: every victim */
}

static void test_rate_limit_forgets_the_cgroup_written_longest_ago_when_full(void)
{
	struct oom_rate r = { 0 };

	for (uint64_t k = 1; k <= OOM_RATE_SLOTS; k++)
		oom_rate__take(&r, k, 100 + k);
	CHECK_EQ_INT(r.n, OOM_RATE_SLOTS);
	oom_rate__take(&r, 1000, 200);
	CHECK_EQ_INT(r.n, OOM_RATE_SLOTS);
	CHECK(oom_rate__allowed(&r, 1, 200, 1000));	/* key 1 (at 101) was forgotten */
	CHECK(!oom_rate__allowed(&r, 2, 200, 1000));
	CHECK(!oom_rate__allowed(&r, 1000, 200, 1000));
}

static void test_oom_bound_options_parse_sizes_and_have_defaults(void)
{
	char a0[] = "leaktop", a1[] = "--oom-max-files", a2[] = "5", a3[] = "--oom-max-bytes",
	     a4[] = "2M", a5[] = "--oom-min-gap", a6[] = "0.5", bad[] = "2X", err[256];
	char *argv[] = { a0, a1, a2, a3, a4, a5, a6, NULL };
	struct options o;
	uint64_t v;

	CHECK_EQ_INT(options__parse(7, argv, &o, err, sizeof(err)), 0);
	CHECK_EQ_INT(o.oom.max_files, 5);
	CHECK_EQ_INT(o.oom.max_bytes, 2 << 20);
	CHECK(o.oom.min_gap_s == 0.5);
	argv[4] = bad;
	CHECK_EQ_INT(options__parse(7, argv, &o, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "--oom-max-bytes"));
	CHECK_EQ_INT(options__parse(1, argv, &o, err, sizeof(err)), 0);
	CHECK_EQ_INT(o.oom.max_files, OOM_DEFAULT_MAX_FILES);
	CHECK_EQ_INT(o.oom.max_bytes, OOM_DEFAULT_MAX_BYTES);
	CHECK(o.oom.min_gap_s == OOM_DEFAULT_MIN_GAP_S);
	CHECK_EQ_INT(options__parse_size("4096", &v), 0);
	CHECK_EQ_INT(v, 4096);
	CHECK_EQ_INT(options__parse_size("64MiB", &v), 0);
	CHECK_EQ_INT(v, 64 << 20);
	CHECK_EQ_INT(options__parse_size("1g", &v), 0);
	CHECK_EQ_INT(v, 1 << 30);
	CHECK_EQ_INT(options__parse_size("-1", &v), -EINVAL);
	CHECK_EQ_INT(options__parse_size("1M2", &v), -EINVAL);
	CHECK_EQ_INT(options__parse_size("99999999999T", &v), -EINVAL);
}

static void collect_line(void *ctx, const char *line)
{
	int *n = ctx;

	(void)line;
	(*n)++;
}

/* A file of `bytes` at dir/name, its mtime `sec` seconds after the epoch. */
static void plant(const char *dir, const char *name, size_t bytes, long sec)
{
	char path[512];
	struct timeval tv[2] = { { sec, 0 }, { sec, 0 } };
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return;
	for (size_t i = 0; i < bytes; i++)
		fputc('x', f);
	fclose(f);
	utimes(path, tv);
}

static int exists(const char *dir, const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return !lstat(path, &st);
}

static void test_writer_removes_the_oldest_of_its_own_files_and_nothing_else(void)
{
	char dir[] = "/tmp/leaktop-test-oom.XXXXXX", path[512], cmd[600];
	struct oom_limits lim = { .max_files = 3, .max_bytes = 0, .min_gap_s = 0 };
	struct lt_event ev = { .type = LT_EV_OOM, .tgid = 200, .new_gen = 8 };
	struct oom_writer *w;
	struct model m;
	int lines = 0, n = 0;
	DIR *d;

	CHECK(mkdtemp(dir));
	/* Already there at start: four of leaktop's (oldest first), and what is not. */
	plant(dir, "leaktop-oom-1-20260101T000000Z.json", 10, 1000);
	plant(dir, "leaktop-oom-2-20260101T000001Z.json", 10, 1001);
	plant(dir, "leaktop-oom-3-20260101T000002Z.json", 10, 1002);
	plant(dir, "leaktop-oom-4-20260101T000003Z.json", 10, 1003);
	plant(dir, "leaktop-oom-5-20260101T000000Z.json.keep", 10, 1);
	plant(dir, "notes.json", 10, 1);
	snprintf(path, sizeof(path), "%s/leaktop-oom-6-20250101T000000Z.json", dir);
	CHECK_EQ_INT(symlink("notes.json", path), 0);
	snprintf(path, sizeof(path), "%s/leaktop-oom-7-20250101T000000Z.json", dir);
	CHECK_EQ_INT(mkdir(path, 0700), 0);
	model__init(&m, 1.0, RES_ALL, 8);
	fold_heap(&m, 1, 200, 8, 8192, SAMPLE_EV_FIRST, true);
	CHECK_EQ_INT(oom_writer__new(&w, dir, true, &lim), 0);
	oom_writer__note(w, ev.tgid, ev.new_gen, &m);
	CHECK(oom_writer__pending(w));
	oom_writer__write(w, &m, collect_line, &lines);
	CHECK_EQ_INT(lines, 1);
	CHECK_EQ_INT(oom_writer__failed(w), 0);
	CHECK_EQ_INT(oom_writer__removed(w), 2);
	CHECK(!exists(dir, "leaktop-oom-1-20260101T000000Z.json"));
	CHECK(!exists(dir, "leaktop-oom-2-20260101T000001Z.json"));
	CHECK(exists(dir, "leaktop-oom-3-20260101T000002Z.json"));
	CHECK(exists(dir, "leaktop-oom-4-20260101T000003Z.json"));
	CHECK(exists(dir, "leaktop-oom-5-20260101T000000Z.json.keep"));
	CHECK(exists(dir, "notes.json"));
	CHECK(exists(dir, "leaktop-oom-6-20250101T000000Z.json"));
	CHECK(exists(dir, "leaktop-oom-7-20250101T000000Z.json"));
	d = opendir(dir);
	CHECK(d);
	for (struct dirent *de; (de = readdir(d));)
		n += !strncmp(de->d_name, "leaktop-oom-200-", 16);
	closedir(d);
	CHECK_EQ_INT(n, 1);
	oom_writer__free(w);
	model__free(&m);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK_EQ_INT(system(cmd), 0);
}

/* The OOM writer hears of victims from the model: those marked in this interval's fold only. */
static void test_writer_queues_the_victims_of_this_interval_from_the_model(void)
{
	char dir[] = "/tmp/leaktop-test-oom.XXXXXX", cmd[600];
	struct oom_limits lim = { 0 };
	struct oom_writer *w;
	struct model m;

	CHECK(mkdtemp(dir));
	model__init(&m, 1.0, RES_ALL, 8);
	fold_heap(&m, 1, 200, 8, 8192, SAMPLE_EV_FIRST, true);
	fold_heap(&m, 1, 201, 9, 8192, SAMPLE_EV_FIRST, true);
	CHECK_EQ_INT(oom_writer__new(&w, dir, true, &lim), 0);
	oom_writer__note_new(w, &m);
	CHECK(!oom_writer__pending(w));
	fold_heap(&m, 2, 200, 8, 8192, SAMPLE_EV_OOM, true);
	CHECK(model__find(&m, 200, 8)->oom_ns == m.now_ns);
	oom_writer__note_new(w, &m);
	CHECK(oom_writer__pending(w));
	oom_writer__write(w, &m, collect_line, &(int){ 0 });
	CHECK(!oom_writer__pending(w));
	/* The next interval: 200 was announced before, nothing is new. */
	fold_heap(&m, 3, 201, 9, 8192, SAMPLE_EV_FIRST, false);
	oom_writer__note_new(w, &m);
	CHECK(!oom_writer__pending(w));
	oom_writer__free(w);
	model__free(&m);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK_EQ_INT(system(cmd), 0);
}

static void test_writer_skips_a_second_victim_of_one_cgroup_within_the_gap(void)
{
	char dir[] = "/tmp/leaktop-test-oom.XXXXXX", cmd[600];
	struct oom_limits lim = { .max_files = 0, .max_bytes = 0, .min_gap_s = 3600 };
	struct lt_event ev = { .type = LT_EV_OOM, .tgid = 200, .new_gen = 8 };
	struct oom_writer *w;
	struct model m;
	int lines = 0;

	CHECK(mkdtemp(dir));
	model__init(&m, 1.0, RES_ALL, 8);
	fold_heap(&m, 1, 200, 8, 8192, SAMPLE_EV_FIRST, true);
	fold_heap(&m, 1, 201, 9, 8192, SAMPLE_EV_FIRST, true);
	CHECK_EQ_INT(oom_writer__new(&w, dir, true, &lim), 0);
	oom_writer__note(w, ev.tgid, ev.new_gen, &m);
	ev.tgid = 201;
	ev.new_gen = 9;
	oom_writer__note(w, ev.tgid, ev.new_gen, &m);
	ev.tgid = 200;
	ev.new_gen = 8;
	oom_writer__write(w, &m, collect_line, &lines);
	/* One written, one skipped: said once. */
	CHECK_EQ_INT(oom_writer__skipped(w), 1);
	CHECK_EQ_INT(lines, 2);
	oom_writer__note(w, ev.tgid, ev.new_gen, &m);
	oom_writer__write(w, &m, collect_line, &lines);
	CHECK_EQ_INT(oom_writer__skipped(w), 2);
	CHECK_EQ_INT(lines, 2);
	CHECK_EQ_INT(oom_writer__failed(w), 0);
	oom_writer__free(w);
	model__free(&m);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK_EQ_INT(system(cmd), 0);
}

static void test_writer_takes_another_name_when_something_is_planted_at_its_own(void)
{
	char dir[] = "/tmp/leaktop-test-oom.XXXXXX", path[512], cmd[600];
	struct oom_limits lim = { 0 };
	struct lt_event ev = { .type = LT_EV_OOM, .tgid = 200, .new_gen = 8 };
	struct oom_writer *w;
	struct model m;
	int lines = 0, n = 0;
	DIR *d;

	CHECK(mkdtemp(dir));
	model__init(&m, 1.0, RES_ALL, 8);
	fold_heap(&m, 1, 200, 8, 8192, SAMPLE_EV_FIRST, true);
	CHECK_EQ_INT(oom_writer__new(&w, dir, true, &lim), 0);
	oom_writer__note(w, ev.tgid, ev.new_gen, &m);
	/* The name of this second and the next: a link planted at both. */
	for (int i = 0; i < 2; i++) {
		CHECK_EQ_INT(oom__file_name(path, sizeof(path), dir, 200, time(NULL) + i), 0);
		CHECK_EQ_INT(symlink("/etc/passwd", path), 0);
	}
	oom_writer__write(w, &m, collect_line, &lines);
	CHECK_EQ_INT(oom_writer__failed(w), 0);
	d = opendir(dir);
	CHECK(d);
	for (struct dirent *de; (de = readdir(d));) {
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (oom__is_snapshot_name(de->d_name) && !lstat(path, &st) && S_ISREG(st.st_mode))
			n++;
	}
	closedir(d);
	CHECK_EQ_INT(n, 1);
	oom_writer__free(w);
	model__free(&m);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK_EQ_INT(system(cmd), 0);
}

static void test_writer_says_failed_snapshots_once_a_minute_and_counts_them_all(void)
{
	char dir[] = "/tmp/leaktop-test-oom.XXXXXX";
	struct oom_limits lim = { 0 };
	struct lt_event ev = { .type = LT_EV_OOM, .new_gen = 8 };
	struct oom_writer *w;
	struct model m;
	int lines = 0;

	CHECK(mkdtemp(dir));
	model__init(&m, 1.0, RES_ALL, 8);
	CHECK_EQ_INT(oom_writer__new(&w, dir, true, &lim), 0);
	/* Victims leaktop holds no record of: each fails. */
	for (uint32_t pid = 300; pid < 310; pid++) {
		ev.tgid = pid;
		oom_writer__note(w, ev.tgid, ev.new_gen, &m);
	}
	oom_writer__write(w, &m, collect_line, &lines);
	CHECK_EQ_INT(oom_writer__failed(w), 10);
	CHECK_EQ_INT(lines, 1);
	oom_writer__free(w);
	model__free(&m);
	rmdir(dir);
}

static void test_check_dir_refuses_a_world_writable_directory_without_sticky_bit(void)
{
	char dir[] = "/tmp/leaktop-test-oom.XXXXXX", msg[512];

	CHECK(mkdtemp(dir));
	CHECK_EQ_INT(chmod(dir, 0777), 0);
	CHECK_EQ_INT(oom__check_dir(dir, msg, sizeof(msg)), -EPERM);
	CHECK(strstr(msg, "sticky") && strchr(msg, ';') && !strchr(msg, '\n'));
	CHECK_EQ_INT(chmod(dir, 01777), 0);
	CHECK_EQ_INT(oom__check_dir(dir, msg, sizeof(msg)), 0);
	rmdir(dir);
}

static void test_atomic_file_mode_is_the_chosen_mode_less_the_umask_left_unchanged(void)
{
	char dir[] = "/tmp/leaktop-test-oom.XXXXXX", path[512];
	struct atomic_file af;
	mode_t old = umask(027);
	struct stat st;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f.json", dir);
	atomic_file__set_mode(0666);
	CHECK_EQ_INT(atomic_file__open(&af, path), 0);
	fputs("{}\n", af.f);
	CHECK_EQ_INT(atomic_file__close(&af, 1), 0);
	CHECK_EQ_INT(stat(path, &st), 0);
	CHECK_EQ_INT(st.st_mode & 0777, 0640);
	CHECK_EQ_INT(umask(old), 027);		/* never changed meanwhile */
	atomic_file__set_mode(0600);
	/* A link planted at the name is refused, the link left alone. */
	unlink(path);
	CHECK_EQ_INT(symlink("/etc/passwd", path), 0);
	CHECK_EQ_INT(atomic_file__open(&af, path), -ELOOP);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	RUN(test_file_name_holds_pid_and_utc_time_in_the_directory);
	RUN(test_dir_is_the_option_else_beside_the_json_file_else_here);
	RUN(test_oom_dir_option_is_kept_and_an_empty_one_refused);
	RUN(test_check_dir_refuses_links_files_and_missing_directories_in_one_line);
	RUN(test_oom_event_flags_the_image_and_analysis_keeps_the_flag);
	RUN(test_oom_killed_image_stays_listed_with_its_sites_for_a_minute_after_its_exit);
	RUN(test_other_exited_image_is_reaped_after_one_report);
	RUN(test_at_most_oom_keep_max_killed_images_stay_the_longest_dead_go_first);
	RUN(test_process_snapshot_holds_only_that_process_and_is_private);
	RUN(test_snapshot_names_are_only_leaktops_own);
	RUN(test_retention_removes_the_oldest_until_both_caps_hold);
	RUN(test_retention_orders_files_of_one_mtime_by_name);
	RUN(test_rate_limit_allows_one_snapshot_per_cgroup_per_gap);
	RUN(test_rate_limit_forgets_the_cgroup_written_longest_ago_when_full);
	RUN(test_oom_bound_options_parse_sizes_and_have_defaults);
	RUN(test_writer_removes_the_oldest_of_its_own_files_and_nothing_else);
	RUN(test_writer_skips_a_second_victim_of_one_cgroup_within_the_gap);
	RUN(test_writer_takes_another_name_when_something_is_planted_at_its_own);
	RUN(test_writer_says_failed_snapshots_once_a_minute_and_counts_them_all);
	RUN(test_writer_queues_the_victims_of_this_interval_from_the_model);
	RUN(test_check_dir_refuses_a_world_writable_directory_without_sticky_bit);
	RUN(test_atomic_file_mode_is_the_chosen_mode_less_the_umask_left_unchanged);
	CHECK_EXIT();
}
