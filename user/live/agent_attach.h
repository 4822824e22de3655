/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * agent_attach.h - `leaktop -p PID --agent`: the agent injected into each process traced,
 * its channel read as a preloaded agent's, and taken out again when the session closes.
 */
#ifndef LEAKTOP_AGENT_ATTACH_H
#define LEAKTOP_AGENT_ATTACH_H

#include <signal.h>
#include <stddef.h>

#include "live/inject.h"

struct agent_channels;
struct collector;

struct agent_attach {
	struct inject_agent *injected;	/* the processes it went into */
	size_t n, cap;
};

/*
 * Inject the agent at lib into pid (traced already: its image known to the collector) and
 * read its channel from now on.  0, or -errno with the reason on stderr (one line); on
 * failure the process runs on as it was.  stop (may be NULL): a stop signal ends the wait.
 */
int agent_attach__start(struct agent_attach *aa, struct agent_channels *ag, struct collector *col,
			const char *lib, int pid, const volatile sig_atomic_t *stop);
/*
 * Take the agent out of every process it went into (its GOTs as they were, the agent inert),
 * and free the list.
 */
void agent_attach__stop(struct agent_attach *aa);

#endif
