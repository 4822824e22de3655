// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_checkgate.c - `leaktop check`'s verdicts (core/checkgate.c): --fail-on lists, the
 * suppressions file (comments, globs on a function or a module's base name or path, which
 * kinds each prefix covers, errors by line), baseline keys as `leaktop diff` matches sites
 * (module base name, function, file base name and line), what fails, totals, and the exit
 * status (CMD's own, 128 + signal, or the leak status, which wins).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "check.h"
#include "core/checkgate.h"

static struct sym_frame frames_leak[2] = {
	{ .addr = 0x1000, .symbol = "leak_one", .module = "/usr/bin/prog", .file = "src/prog.c",
	  .line = 31 },
	{ .addr = 0x2000, .symbol = "main", .module = "/usr/bin/prog", .file = "src/prog.c",
	  .line = 69 },
};

static struct check_finding finding(enum check_kind kind, uint64_t objects)
{
	struct check_finding f = { .kind = kind, .objects = objects, .bytes = objects * 100,
				   .frames = frames_leak, .n_frames = 2 };
	return f;
}

static void test_fail_on_parses_kinds_and_all(void)
{
	unsigned int m;
	char err[256];

	CHECK_EQ_INT(checkgate__parse_fail_on("definite,fd", &m, err, sizeof(err)), 0);
	CHECK_EQ_INT(m, (1u << CHECK_DEFINITE) | (1u << CHECK_FD));
	CHECK_EQ_INT(checkgate__parse_fail_on("all", &m, err, sizeof(err)), 0);
	CHECK_EQ_INT(m, (1u << CHECK__COUNT) - 1);
	CHECK_EQ_INT(checkgate__parse_fail_on("definite,leaks", &m, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "invalid --fail-on 'definite,leaks'") != NULL);
	CHECK_EQ_INT(checkgate__parse_fail_on("", &m, err, sizeof(err)), -EINVAL);
}

static void test_suppression_globs_match_function_or_module(void)
{
	struct check_rules r = { 0 };
	struct check_finding f[4] = { finding(CHECK_DEFINITE, 1), finding(CHECK_INDIRECT, 2),
				      finding(CHECK_FD, 1), finding(CHECK_MMAP, 1) };
	struct check_proc p = { .pid = 1, .findings = f, .n_findings = 4 };
	char err[256];

	CHECK_EQ_INT(checkgate__parse_rules(&r, "# comment\n\n  leak:leak_*  \nfd:pro?\n",
					    err, sizeof(err)), 0);
	CHECK_EQ_INT(r.n, 2);
	checkgate__apply(&r, &p);
	CHECK(f[0].suppressed && f[1].suppressed && f[2].suppressed && !f[3].suppressed);
	CHECK_EQ_STR(f[0].suppressed_by, "leak:leak_*");
	CHECK_EQ_STR(f[2].suppressed_by, "fd:pro?");
	CHECK_EQ_INT(r.rules[0].used, 2);
	CHECK_EQ_INT(r.rules[1].used, 1);
	check_rules__free(&r);
}

static void test_suppression_that_matches_nothing_suppresses_nothing(void)
{
	struct check_rules r = { 0 };
	struct check_finding f = finding(CHECK_DEFINITE, 1);
	struct check_proc p = { .pid = 1, .findings = &f, .n_findings = 1 };
	char err[256];

	CHECK_EQ_INT(checkgate__parse_rules(&r, "leak:other\nleak:/usr/lib/*\nmmap:leak_one\n",
					    err, sizeof(err)), 0);
	checkgate__apply(&r, &p);
	CHECK(!f.suppressed);
	CHECK(checkgate__fails(&f, CHECK_FAIL_DEFAULT));
	check_rules__free(&r);
}

static void test_bad_suppression_line_is_named(void)
{
	struct check_rules r = { 0 };
	char err[256];

	CHECK_EQ_INT(checkgate__parse_rules(&r, "leak:a\nleak:\n", err, sizeof(err)), -EINVAL);
	CHECK_EQ_STR(err, "suppressions line 2: empty pattern");
	CHECK_EQ_INT(checkgate__parse_rules(&r, "leak:a\nfoo:bar\n", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "line 2: expected leak:PATTERN") != NULL);
	check_rules__free(&r);
}

static void test_baseline_matches_by_symbolized_stack_not_address(void)
{
	struct check_rules r = { 0 };
	struct check_finding f = finding(CHECK_DEFINITE, 1), g = finding(CHECK_INDIRECT, 1);
	struct sym_frame moved[2], other[2];
	struct check_proc p = { .pid = 1, .findings = &g, .n_findings = 1 };
	char *key = checkgate__finding_key(&f);

	CHECK(key != NULL);
	CHECK_EQ_STR(key, "heap\x1eprog!leak_one:prog.c:31\x1eprog!main:prog.c:69");
	CHECK_EQ_INT(checkgate__add_baseline(&r, &key, 1), 0);
	/* Other addresses (another run, ASLR), the same lines: known. */
	memcpy(moved, frames_leak, sizeof(moved));
	moved[0].addr = 0x7000;
	moved[1].addr = 0x8000;
	g.frames = moved;
	checkgate__apply(&r, &p);
	CHECK(g.suppressed);
	CHECK_EQ_STR(g.suppressed_by, "baseline");
	/* Another line: new. */
	memcpy(other, frames_leak, sizeof(other));
	other[0].line = 32;
	g.frames = other;
	checkgate__apply(&r, &p);
	CHECK(!g.suppressed);
	free(key);
	check_rules__free(&r);
}

static void test_only_kinds_in_the_mask_fail_and_totals_count_them(void)
{
	struct check_finding f[3] = { finding(CHECK_DEFINITE, 2), finding(CHECK_POSSIBLE, 1),
				      finding(CHECK_FD, 1) };
	struct check_proc p = { .pid = 1, .findings = f, .n_findings = 3 };
	struct check_totals t;

	f[2].suppressed = true;
	checkgate__totals(&p, CHECK_FAIL_DEFAULT, &t);
	CHECK_EQ_INT(t.failing, 1);
	CHECK_EQ_INT(t.objects[CHECK_DEFINITE], 2);
	CHECK_EQ_INT(t.bytes[CHECK_DEFINITE], 200);
	CHECK_EQ_INT(t.objects[CHECK_POSSIBLE], 1);
	CHECK_EQ_INT(t.suppressed[CHECK_FD], 1);
	checkgate__totals(&p, (1u << CHECK_POSSIBLE) | (1u << CHECK_FD), &t);
	CHECK_EQ_INT(t.failing, 1);
}

static void test_exit_status_is_the_commands_unless_a_finding_fails(void)
{
	CHECK_EQ_INT(checkgate__exit_status(false, 3 << 8, 23), 3);
	CHECK_EQ_INT(checkgate__exit_status(false, 0, 23), 0);
	CHECK_EQ_INT(checkgate__exit_status(false, SIGTERM, 23), 128 + SIGTERM);
	CHECK_EQ_INT(checkgate__exit_status(true, 0, 23), 23);
	CHECK_EQ_INT(checkgate__exit_status(true, SIGKILL, 7), 7);
}

int main(void)
{
	RUN(test_fail_on_parses_kinds_and_all);
	RUN(test_suppression_globs_match_function_or_module);
	RUN(test_suppression_that_matches_nothing_suppresses_nothing);
	RUN(test_bad_suppression_line_is_named);
	RUN(test_baseline_matches_by_symbolized_stack_not_address);
	RUN(test_only_kinds_in_the_mask_fail_and_totals_count_them);
	RUN(test_exit_status_is_the_commands_unless_a_finding_fails);
	CHECK_EXIT();
}
