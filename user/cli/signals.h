/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * signals.h - how signals end a live run: the first SIGINT, SIGTERM or SIGHUP only sets a
 * flag every stretch of work looks at; a second one ends leaktop at once; a crash releases
 * the processes held at exec first.
 */
#ifndef LEAKTOP_CLI_SIGNALS_H
#define LEAKTOP_CLI_SIGNALS_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

/* The first stop signal's number (0: none yet): the flag the session's work looks at. */
extern volatile sig_atomic_t signals__stop;

/* Install the handlers (stop signals, crash signals; SIGPIPE ignored). */
void signals__install(void);
/* When the first stop signal came (monotonic_ns), 0 when none came. */
uint64_t signals__stop_ns(void);
/* The TUI owns the terminal: a second signal restores it before exiting. */
void signals__tui_active(bool active);

#endif
