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

/*
 * The same on a live run already going (the TUI's L): the new blocks of site site_id
 * (a stack hash) of process pid, `blocks` of them (0: the default); each verdict's line goes
 * to out, progress to say (ctx theirs).  NULL if out of memory.
 */
struct run_live;
struct lastref;
typedef void (*lastref_line_fn)(void *ctx, const char *line);
struct lastref *lastref__new(int pid, uint64_t site_id, unsigned int blocks, lastref_line_fn out,
			     lastref_line_fn say, void *ctx);
/* The longest one of its scans keeps the process stopped (--scan-max-stop; 0: the most). */
void lastref__set_max_stop(struct lastref *l, unsigned int max_stop_ms);
/* Its start (once, before the first step): 0 or -errno. */
int lastref__start(struct lastref *l, const struct run_live *lv);
/* One turn of the run loop: 1 once every block has its verdict (or the process is gone), 0
 * to go on, -errno when it failed (it said why). */
int lastref__step(struct lastref *l, const struct run_live *lv);
/* Verdicts so far. */
size_t lastref__resolved(const struct lastref *l);
/* Remove its watchpoints and free it; NULL is a no-op. */
void lastref__free(struct lastref *l, const struct run_live *lv);

#endif
