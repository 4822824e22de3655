// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_check_cmd.c - `leaktop check`'s command line (cli/check_cmd.c): its own options, the
 * live run's arguments it makes (quiet, heap and fd tracked, mmap only when it can fail, the
 * command after -- untouched, options of CMD included), and the errors, one line each.
 */
#include <string.h>

#include "check.h"
#include "cli/check_cmd.h"
#include "core/checkgate.h"

static char err[512];

static int joined(char **v, char *out, size_t len)
{
	out[0] = '\0';
	for (; *v; v++) {
		strncat(out, *v, len - strlen(out) - 1);
		strncat(out, " ", len - strlen(out) - 1);
	}
	return 0;
}

static void test_defaults_and_the_run_it_makes(void)
{
	char *argv[] = { "check", "--", "prog", "-v", "--fail-on", "x", NULL }, *run[32];
	struct check_args a;
	char line[256];

	CHECK_EQ_INT(check_cmd__parse(6, argv, &a, run, 32, err, sizeof(err)), 0);
	CHECK_EQ_INT(a.exit_code, 23);
	CHECK_EQ_INT(a.fail_on, 1u << CHECK_DEFINITE);
	CHECK(!a.verbose);
	joined(run, line, sizeof(line));
	CHECK_EQ_STR(line, "check -q -r heap,fd -- prog -v --fail-on x ");
}

static void test_own_options_and_mmap_tracked_only_when_it_can_fail(void)
{
	char *argv[] = { "check", "--fail-on", "definite,mmap", "--exit-code", "9", "-j", "o.json",
			 "--junit", "o.xml", "--suppressions", "s", "--baseline", "b.json",
			 "--write-baseline", "w.json", "--scan-max-stop", "500", "-v", "--", "p",
			 NULL }, *run[32];
	struct check_args a;
	char line[256];

	CHECK_EQ_INT(check_cmd__parse(20, argv, &a, run, 32, err, sizeof(err)), 0);
	CHECK_EQ_INT(a.exit_code, 9);
	CHECK_EQ_INT(a.fail_on, (1u << CHECK_DEFINITE) | (1u << CHECK_MMAP));
	CHECK_EQ_STR(a.json_path, "o.json");
	CHECK_EQ_STR(a.junit_path, "o.xml");
	CHECK_EQ_STR(a.suppressions, "s");
	CHECK_EQ_STR(a.baseline, "b.json");
	CHECK_EQ_STR(a.write_baseline, "w.json");
	CHECK(a.verbose);
	joined(run, line, sizeof(line));
	CHECK_EQ_STR(line, "check -q --scan-max-stop 500 -r heap,fd,mmap -- p ");
}

static void test_errors_are_one_line_each(void)
{
	char *no_cmd[] = { "check", "-j", "x.json", NULL };
	char *empty[] = { "check", "--", NULL };
	char *bad_code[] = { "check", "--exit-code", "300", "--", "p", NULL };
	char *unknown[] = { "check", "--frobnicate", "1", "--", "p", NULL };
	char *stdout_json[] = { "check", "-j", "-", "--", "p", NULL };
	char *run[32];
	struct check_args a;

	CHECK_EQ_INT(check_cmd__parse(3, no_cmd, &a, run, 32, err, sizeof(err)), -EINVAL);
	CHECK_EQ_STR(err, "check needs a command: leaktop check [OPTIONS] -- CMD [ARG...]");
	CHECK_EQ_INT(check_cmd__parse(2, empty, &a, run, 32, err, sizeof(err)), -EINVAL);
	CHECK_EQ_INT(check_cmd__parse(5, bad_code, &a, run, 32, err, sizeof(err)), -EINVAL);
	CHECK_EQ_STR(err, "invalid --exit-code '300': expected 1 to 255");
	CHECK_EQ_INT(check_cmd__parse(5, unknown, &a, run, 32, err, sizeof(err)), -EINVAL);
	CHECK_EQ_STR(err, "unknown check argument '--frobnicate'; see leaktop check --help");
	CHECK_EQ_INT(check_cmd__parse(5, stdout_json, &a, run, 32, err, sizeof(err)), -EINVAL);
	CHECK(strchr(err, '\n') == NULL);
}

int main(void)
{
	RUN(test_defaults_and_the_run_it_makes);
	RUN(test_own_options_and_mmap_tracked_only_when_it_can_fail);
	RUN(test_errors_are_one_line_each);
	CHECK_EXIT();
}
