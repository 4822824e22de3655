/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * fdcensus.h - the fd census producer: reconciles each live image of a sample with
 * /proc/PID/fd (repairs of closes leaktop missed, kinds and examples of open descriptors).
 */
#ifndef LEAKTOP_FDCENSUS_H
#define LEAKTOP_FDCENSUS_H

#include "core/sample.h"

struct collector;

/*
 * For every live image in s->procs: its census from s->fds and /proc/PID/fd (records of
 * descriptors found closed are deleted from the map).  Images whose /proc could not be
 * read, or that were exiting, keep census_done false.  Sets timing.census_ms.  0.
 */
int fdcensus__fill(struct collector *c, struct sample *s);

#endif
