/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * emit.h - the interval's outputs: the files (--pprof, --folded, -j FILE), the metrics page
 * (--listen), then stdout (the text report, or -j - lines) or the TUI; and the lines the run
 * says while it goes (on the TUI's message line, else on stderr).
 */
#ifndef LEAKTOP_EMIT_H
#define LEAKTOP_EMIT_H

#include <stdbool.h>

#include "cli/options.h"
#include "core/model.h"

struct tui;
struct metrics_server;

struct emitter {
	const struct options *o;
	struct tui *tui;		/* NULL in batch mode */
	struct metrics_server *ms;	/* --listen, or NULL */
	char *(*build_id)(void *ctx, const char *module);	/* pprof's build ids */
	void *build_id_ctx;
	bool files_failed;		/* the last interval could not write a file */
};

/* This interval's report: files, then stdout or the TUI.  0, or stdout's error (the end). */
int emit__interval(struct emitter *e, const struct model *m);
/* The TUI's `w`: a snapshot now, to the -j file or a new time-stamped one here. */
void emit__snapshot_now(struct emitter *e, const struct model *m);
/* A line the run says: on the TUI's message line, else on stderr. */
void emit__say(struct emitter *e, const struct model *m, const char *line);

#endif
