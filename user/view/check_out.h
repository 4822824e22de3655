/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * check_out.h - what `leaktop check` writes: the text report (LSan's shape), the JSON
 * document (leaktop.check/1, also the baseline --write-baseline writes and --baseline reads)
 * and the JUnit XML file (one test case per traced process).
 */
#ifndef LEAKTOP_CHECK_OUT_H
#define LEAKTOP_CHECK_OUT_H

#include <stdbool.h>
#include <stdio.h>

#include "core/checkgate.h"

struct check_run {
	char **cmd;			/* CMD and its arguments */
	const struct check_proc *procs;	/* in the order they exited */
	size_t n_procs;
	int cmd_pid;
	int cmd_status;			/* CMD's wait status (cmd_reaped) */
	bool cmd_reaped;
	unsigned int fail_on;		/* bits of enum check_kind */
	int exit_code;			/* --exit-code */
	int status;			/* leaktop's exit status */
	bool failed;			/* a finding fails */
	const struct check_rules *rules;
	bool verbose;			/* -v: list suppressed findings too */
};

/* The report of one process (its findings, suppressed ones with verbose). */
void check_out__process_text(FILE *out, const struct check_run *r, const struct check_proc *p);
/* The whole report: each process with findings, then the summary line. */
void check_out__text(FILE *out, const struct check_run *r);
/* "exited with status 3" / "killed by signal 9 (Killed)" for CMD. */
void check_out__describe_status(int status, char *buf, size_t len);

/* The JSON document / the JUnit file, written atomically.  0 or -errno. */
int check_out__write_json(const char *path, const struct check_run *r);
int check_out__write_junit(const char *path, const struct check_run *r);

/*
 * The keys of the findings of a leaktop.check/1 document (a --write-baseline file, or -j's)
 * into *keys (malloc'd strings, free each and the array).  0, or -EINVAL with one line in err.
 */
int check_out__read_baseline(const char *path, char ***keys, size_t *n, char *err, size_t len);

#endif
