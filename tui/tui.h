/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * tui.h - the interactive curses view: a process list and, for the chosen process, its call
 * sites with the innermost frames.  The only module that touches curses.  It reads the model
 * and never changes it.
 */
#ifndef LEAKTOP_TUI_H
#define LEAKTOP_TUI_H

#include <stdbool.h>

#include "../user/model.h"

struct tui;

/* Take over the terminal.  NULL if it cannot (then fall back to batch mode). */
struct tui *tui__start(void);
/* Give the terminal back exactly as it was.  Safe to call twice. */
void tui__stop(struct tui *t);
void tui__draw(struct tui *t, const struct model *m);
/* Read pending keys (never blocks).  Returns false when the user asked to quit. */
bool tui__handle_keys(struct tui *t, const struct model *m);

#endif
