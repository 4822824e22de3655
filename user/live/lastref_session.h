/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * lastref_session.h - a lastref on the live run: the heap sites of one process named by a
 * function in their stack or by their stack_id, picked from the model as it symbolizes them;
 * their stack hashes go to the watch engine (live/watch.c), and each block's verdict comes
 * back with its places named by the symbolizer, kept here and handed to the sample (so the
 * model has them: process->lastref).  Used by `leaktop lastref` and the TUI's L,
 * both through the session (live/session.h).
 */
#ifndef LEAKTOP_LASTREF_SESSION_H
#define LEAKTOP_LASTREF_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/lastref.h"

#define LASTREF_DEFAULT_BLOCKS	4

struct lastref;
struct loader;
struct collector;
struct symbolizer;
struct model;
struct sample;

/* The parts of the live side it works with. */
struct lastref_env {
	struct loader *ld;
	struct collector *col;
	struct symbolizer *sym;
	const struct model *model;
};

typedef void (*lastref_line_fn)(void *ctx, const char *line);
typedef void (*lastref_result_fn)(void *ctx, const struct lastref_result *r);

struct lastref_spec {
	int pid;
	const char *site;		/* a function name in the site's stack, or its stack_id */
	uint64_t site_id;		/* the site as a stack_id (0: site is a function name) */
	unsigned int blocks;		/* blocks to follow (0: LASTREF_DEFAULT_BLOCKS) */
	unsigned int max_stop_ms;	/* longest one scan stops the process (0: the most) */
	lastref_result_fn out;		/* each verdict */
	lastref_line_fn say;		/* progress */
	void *ctx;
};

/* NULL if out of memory. */
struct lastref *lastref__new(const struct lastref_spec *spec);
/* Its start (once, before the first step): 0 or -errno. */
int lastref__start(struct lastref *l, const struct lastref_env *env);
/* One turn of the run loop: 1 once every block has its verdict (or the process is gone), 0
 * to go on, -errno when it failed (it said why). */
int lastref__step(struct lastref *l, const struct lastref_env *env);
/* Verdicts so far (valid until lastref__free). */
size_t lastref__results(const struct lastref *l, const struct lastref_result **v);
/* The verdicts given since the last call into sm (sample__add_lastref), for the model:
 * 0 or -ENOMEM. */
int lastref__collect(struct lastref *l, struct sample *sm);
/* Whether hardware watchpoints fired in its self-test: 1, 0, -1 not run. */
int lastref__watchpoints(const struct lastref *l);
/* Remove its watchpoints (the run ends); its verdicts stay. */
void lastref__stop(struct lastref *l, const struct lastref_env *env);
/* lastref__stop, then free it; NULL is a no-op. */
void lastref__free(struct lastref *l, const struct lastref_env *env);

#endif
