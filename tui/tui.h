/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * tui.h - the interactive curses view, a top for leaks: processes, a process's call sites,
 * a site's stack.  The only module that touches curses.  It reads the model and never
 * changes it; what it cannot do itself (write a snapshot, quit) it asks of the run loop.
 */
#ifndef LEAKTOP_TUI_H
#define LEAKTOP_TUI_H

#include <stdbool.h>

#include "core/model.h"

struct tui;

enum tui_request {
	TUI_NONE,
	TUI_QUIT,
	TUI_WRITE_SNAPSHOT,	/* the run loop writes one and reports with tui__message */
	TUI_SCAN,		/* scan the selected process (tui__selected_pid) for lost blocks */
	TUI_TOGGLE_HEAP,	/* trace / untrace the selected process's heap (whole system) */
	TUI_LASTREF,		/* where the last pointer to new blocks of the selected site is
				 * lost (tui__selected_site) */
};

/* The process selected in the list (or shown in the sites and stack views), 0 if none. */
uint32_t tui__selected_pid(const struct tui *t);
/* The site selected in the sites view (or shown in the stack view): true, with its process
 * and kind and stack hash; false in the process list or with nothing selected. */
bool tui__selected_site(const struct tui *t, uint32_t *pid, uint32_t *kind, uint64_t *hash);

/* Take over the terminal.  NULL if it cannot (the run loop then falls back to batch). */
struct tui *tui__start(void);
/* Give the terminal back as it was.  Safe with NULL. */
void tui__stop(struct tui *t);
/* A new sample arrived: redraw, unless the view is paused. */
void tui__update(struct tui *t, const struct model *m);
/* Read pending keys (never blocks), redraw what they changed, say what the loop must do. */
enum tui_request tui__handle_keys(struct tui *t, const struct model *m);
/* Show a one-line message in the footer (e.g. the snapshot file written) now. */
void tui__message(struct tui *t, const struct model *m, const char *msg);

#endif
