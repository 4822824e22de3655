// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_lastref_cmd.c - `leaktop lastref`'s command line (cli/lastref_cmd.c): which options
 * are its own and which go on to the live run it drives, within the room the caller gives.
 */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "cli/lastref_cmd.h"

#define RUN_MAX 32

static void test_options_go_to_the_run_and_to_lastref(void)
{
	char *argv[] = { "lastref", "-p", "42", "--site", "make_it", "--blocks", "2", "-v",
			 "--scan-max-stop", "50", NULL };
	char *run_argv[RUN_MAX], err[256];
	struct lastref_args a;
	int n = 0;

	CHECK_EQ_INT(lastref_cmd__parse(10, argv, &a, run_argv, RUN_MAX, err, sizeof(err)), 0);
	CHECK_EQ_INT(a.pid, 42);
	CHECK_EQ_STR(a.site, "make_it");
	CHECK_EQ_INT(a.blocks, 2);
	while (run_argv[n])
		n++;
	/* lastref -q -r heap -i 0.2, then -p 42 -v --scan-max-stop 50 */
	CHECK_EQ_INT(n, 11);
	CHECK_EQ_STR(run_argv[6], "-p");
	CHECK_EQ_STR(run_argv[8], "-v");
	CHECK_EQ_STR(run_argv[10], "50");
}

/* Each -v takes a slot of run_argv: 40 of them are refused, not written past its end. */
static void test_many_v_are_refused_within_the_run_arguments_room(void)
{
	char *argv[64], *run_argv[RUN_MAX], err[256];
	struct lastref_args a;
	int argc = 0;

	argv[argc++] = "lastref";
	argv[argc++] = "-p";
	argv[argc++] = "42";
	argv[argc++] = "--site";
	argv[argc++] = "f";
	for (int i = 0; i < 40; i++)
		argv[argc++] = "-v";
	argv[argc] = NULL;
	CHECK_EQ_INT(lastref_cmd__parse(argc, argv, &a, run_argv, RUN_MAX, err, sizeof(err)),
		     -EINVAL);
	CHECK_EQ_STR(err, "too many arguments; see leaktop lastref --help");
}

/* --snapshot is the run's -j (the snapshot, verdicts in it); lastref's own -j stays its own;
 * stdout ("-") is the verdicts', refused. */
static void test_snapshot_goes_to_the_run_as_its_json_file(void)
{
	char *argv[] = { "lastref", "-p", "42", "--site", "make_it", "-j", "v.json",
			 "--snapshot", "s.json", NULL };
	char *bad[] = { "lastref", "-p", "42", "--site", "make_it", "--snapshot", "-", NULL };
	char *run_argv[RUN_MAX], err[256];
	struct lastref_args a;
	int n = 0;

	CHECK_EQ_INT(lastref_cmd__parse(9, argv, &a, run_argv, RUN_MAX, err, sizeof(err)), 0);
	CHECK_EQ_STR(a.json_path, "v.json");
	while (run_argv[n])
		n++;
	/* lastref -q -r heap -i 0.2, then -p 42 -j s.json */
	CHECK_EQ_INT(n, 10);
	CHECK_EQ_STR(run_argv[8], "-j");
	CHECK_EQ_STR(run_argv[9], "s.json");
	CHECK_EQ_INT(lastref_cmd__parse(7, bad, &a, run_argv, RUN_MAX, err, sizeof(err)),
		     -EINVAL);
	CHECK_EQ_STR(err, "invalid --snapshot '-': give a file name");
}

int main(void)
{
	RUN(test_options_go_to_the_run_and_to_lastref);
	RUN(test_many_v_are_refused_within_the_run_arguments_room);
	RUN(test_snapshot_goes_to_the_run_as_its_json_file);
	CHECK_EXIT();
}
