/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * injector.h - the agent's injection and removal (live/inject.c) run by a process of their
 * own, so that leaktop's death at any moment (SIGKILL included) never leaves a process
 * stopped halfway through a call, with its registers changed.
 *
 * The kernel detaches a tracee when its tracer dies and lets it run on from whatever state
 * it was left in: a thread made to call dlopen would return to the unmapped return address
 * and die.  So leaktop never traces: it forks an injector that does (its own session,
 * SIGINT, SIGTERM, SIGHUP and the terminal's stops ignored, leaktop's descriptors closed),
 * which always finishes its calls or undoes them, puts the registers back, detaches, writes
 * one report on a pipe and exits.  When leaktop is gone (the pipe's reader closed), a started
 * agent is stopped again before the thread goes.  Every wait in it is bounded
 * (INJECT_SAFE_POINT_MS, INJECT_CALL_MS per call).
 */
#ifndef LEAKTOP_INJECTOR_H
#define LEAKTOP_INJECTOR_H

#include <signal.h>
#include <stddef.h>

#include "live/inject.h"

/*
 * Load the agent at path into pid and start it, from an injector process; its channel
 * duplicated into leaktop (out->local_fd).  stop (may be NULL): a stop signal came; leaktop
 * then stops waiting (-EINTR) and the injector undoes what it did alone.  0, or -errno with
 * one line in msg; on failure the process runs on as it was (or with the agent inert).
 */
int injector__start(int pid, const char *path, const volatile sig_atomic_t *stop,
		    struct inject_agent *out, char *msg, size_t msg_len);
/*
 * Stop the agent in the process (leaktop_agent_stop), from an injector process.  Closes
 * local_fd.  0 or -errno with msg.
 */
int injector__stop(struct inject_agent *a, char *msg, size_t msg_len);

#endif
