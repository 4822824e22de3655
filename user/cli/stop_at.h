/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * stop_at.h - --stop-at SITE:N: what the heap probes must match (SITE resolved into a site id,
 * or into the file ranges of the function it names in the traced programs), armed before
 * the processes run; and the allocation it stopped a process at, from the ring buffer.
 */
#ifndef LEAKTOP_STOP_AT_H
#define LEAKTOP_STOP_AT_H

#include <stddef.h>

#include "bpf/leaktop.h"
#include "cli/options.h"
#include "core/types.h"
#include "live/loader.h"

/*
 * Arm --stop-at for the -p targets, or for the program at cmd_path (-- CMD, before it
 * runs).  0 (also when not asked), or -errno with one line in msg.
 */
int stop_at__arm(struct loader *ld, const struct options *o, const char *cmd_path, char *msg,
		 size_t len);
/* Note an LT_EV_STOP_AT event in rec (other events are ignored). */
void stop_at__note(struct stop_record *rec, const struct lt_event *ev);

#endif
