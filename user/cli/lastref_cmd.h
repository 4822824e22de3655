/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * lastref_cmd.h - `leaktop lastref -p PID --site SITE [--blocks K] [-d SEC] [-j FILE]`: where
 * the last pointer to new blocks of a call site was lost.
 */
#ifndef LEAKTOP_LASTREF_CMD_H
#define LEAKTOP_LASTREF_CMD_H

#include <stddef.h>
#include <stdint.h>

struct lastref_args {
	const char *site;		/* a function name in the site's stack, or its stack_id */
	unsigned int blocks;		/* K */
	const char *json_path;		/* -j FILE, or NULL */
	int pid;
};

/*
 * Split argv into lastref's own options (into a) and those of the live run it drives,
 * written to run_argv (NULL-terminated, at most run_max entries, strings of argv or
 * literals).  0, 1 for --help, or -EINVAL with one line in err.
 */
int lastref_cmd__parse(int argc, char **argv, struct lastref_args *a, char **run_argv,
		       size_t run_max, char *err, size_t len);
const char *lastref_cmd__usage(void);
/* `leaktop lastref ...`: the exit status. */
int lastref_cmd__main(int argc, char **argv);

#endif
