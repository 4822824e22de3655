/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * run.h - `leaktop [OPTIONS]`: the live run (set-up, interval loop, teardown).
 */
#ifndef LEAKTOP_RUN_H
#define LEAKTOP_RUN_H

#include "cli/options.h"

/*
 * Returns the process exit status: 0, 1 (runtime failure) or 2 (usage), for the caller to
 * exit with at once: the probes are gone, the model's and the symbols' memory is left to the
 * exit (freeing it took a good part of the second after Ctrl-C).
 */
int run__main(const struct options *o);

struct session;
struct model;
struct launcher;

/* What a mode built on the live run (`leaktop lastref`, `check`) sees of it. */
struct run_live {
	struct session *sess;		/* the live side (live/session.h) */
	const struct model *model;	/* the latest interval's */
	const struct launcher *child;	/* CMD (under --), else NULL */
};

/* A mode built on the live run: called from its loop, on the run's own machinery. */
struct run_hooks {
	/* The probes are in, before the first interval: 0, or -errno to end (status 1). */
	int (*start)(void *ctx, const struct run_live *lv);
	/* Each turn of the loop (a poll slice): 1 ends the run, 0 goes on, -errno ends it with
	 * status 1. */
	int (*step)(void *ctx, const struct run_live *lv);
	/* The run ended, whichever way: before the BPF side is torn down. */
	void (*finish)(void *ctx, const struct run_live *lv);
	void *ctx;
};

/* run__main with a mode's hooks (NULL: none). */
int run__main_hooked(const struct options *o, const struct run_hooks *hooks);
/* `leaktop scan ...`: exit status. */
int run__scan_main(int argc, char **argv);

#endif
