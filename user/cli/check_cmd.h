/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * check_cmd.h - `leaktop check [OPTIONS] -- CMD [ARG...]`: a leak gate for test suites.
 */
#ifndef LEAKTOP_CHECK_CMD_H
#define LEAKTOP_CHECK_CMD_H

#include <stdbool.h>
#include <stddef.h>

struct check_args {
	int exit_code;			/* --exit-code (default 23) */
	unsigned int fail_on;		/* --fail-on bits (enum check_kind) */
	const char *suppressions;	/* --suppressions FILE */
	const char *baseline;		/* --baseline FILE */
	const char *write_baseline;	/* --write-baseline FILE */
	const char *json_path;		/* -j FILE */
	const char *junit_path;		/* --junit FILE */
	bool verbose;
};

const char *check_cmd__usage(void);
/*
 * Split argv into check's own options (into a) and the live run's (run_argv: NULL-terminated,
 * at most run_max entries, pointing into argv or at constants).  0, 1 for --help, or -EINVAL
 * with one line in err.
 */
int check_cmd__parse(int argc, char **argv, struct check_args *a, char **run_argv,
		     size_t run_max, char *err, size_t len);
/* `leaktop check ...`: exit status. */
int check_cmd__main(int argc, char **argv);

#endif
