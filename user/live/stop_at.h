/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * stop_at.h - --stop-at SITE:N: what the heap probes must match (SITE resolved into a site id,
 * or into the file ranges of the function it names in the traced programs), armed before
 * the processes run.  The allocation it stopped a process at comes back as a lifecycle
 * event, which the tracker records (tracker__stop) for the sample and the model.
 */
#ifndef LEAKTOP_STOP_AT_H
#define LEAKTOP_STOP_AT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct loader;

struct stop_at_config {
	uint64_t seq;			/* N; 0: not asked */
	uint64_t stack_hash;		/* SITE as a site id, or 0: ... */
	const char *fn;			/* ... a function name */
	bool command;			/* -- CMD: look in cmd_path (NULL: not found) */
	const char *cmd_path;
	const int *pids;		/* -p: look in these processes */
	size_t n_pids;
};

/* Arm it (before the processes run).  0 (also when not asked), or -errno with one line in msg. */
int stop_at__arm(struct loader *ld, const struct stop_at_config *c, char *msg, size_t len);

#endif
