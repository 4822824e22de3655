/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * exitcheck.h - `leaktop check`'s look at one traced process held at its exit (the exit stop,
 * live/loader.c): its heap scanned for lost blocks, its descriptors and anonymous mappings
 * made during the run and still there, each finding with its symbolized stack.
 */
#ifndef LEAKTOP_EXITCHECK_H
#define LEAKTOP_EXITCHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "core/checkgate.h"

struct collector;
struct symbolizer;

struct agent_channels;

struct exitcheck_env {
	struct collector *col;
	struct symbolizer *sym;
	int fds_map;			/* the `fds` map (-1: descriptors not tracked) */
	int mmaps_map;			/* the `mmaps` map (-1: mappings not tracked) */
	int procs_map;			/* the `procs` map: the held image's generation */
	unsigned int max_stop_ms;	/* longest the scan's ptrace stop may last */
	struct agent_channels *agent;	/* --agent: the blocks are the agent's (NULL: BPF's) */
};

/*
 * Inspect process pid, held at its exit (stopped): fills out (check_proc__free).  A scan that
 * fails leaves out->scanned false with the cause in out->scan_msg; descriptors and mappings
 * are still listed.  0 or -ENOMEM.
 */
int exitcheck__process(const struct exitcheck_env *env, int pid, struct check_proc *out);

#endif
