// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * agent_attach.c - `-p PID --agent`: injection (live/inject.c) of the agent into each
 * process, the channel it returns handed to the reader (live/agent_channel.c) as if the agent
 * had sent it, and at the end the agent stopped in each (the process's allocator calls go
 * straight to its allocator again).  A process that exited meanwhile needs nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "live/agent_attach.h"
#include "live/agent_channel.h"
#include "live/injector.h"
#include "live/procfs.h"
#include "util/msg.h"
#include "util/vec.h"

int agent_attach__start(struct agent_attach *aa, struct agent_channels *ag, struct collector *col,
			const char *lib, int pid, const volatile sig_atomic_t *stop)
{
	struct inject_agent *a;
	char msg[512];
	int err;

	if (VEC_RESERVE(aa->injected, aa->cap, aa->n + 1, 8)) {
		err_line("out of memory");
		return -ENOMEM;
	}
	a = &aa->injected[aa->n];
	err = injector__start(pid, lib, stop, a, msg, sizeof(msg));
	if (err) {
		err_line("%s", msg);
		return err;
	}
	aa->n++;
	/* The reader keeps its own mapping; the descriptor is closed either way. */
	err = agent_channels__add(ag, col, a->local_fd, (uint32_t)pid);
	a->local_fd = -1;
	if (err)
		err_line("the agent's channel from process %d was refused (%s): its heap is not "
			 "traced; use -p without --agent", pid, strerror(-err));
	return err;
}

void agent_attach__stop(struct agent_attach *aa)
{
	char msg[512];

	for (size_t i = 0; i < aa->n; i++) {
		struct inject_agent *a = &aa->injected[i];

		if (!procfs__exists(a->pid))
			continue;
		if (injector__stop(a, msg, sizeof(msg)))
			err_line("%s", msg);
	}
	free(aa->injected);
	*aa = (struct agent_attach){ 0 };
}
