/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * calibrate.h - the cost of one allocator probe hit on this machine, measured at start-up.
 */
#ifndef LEAKTOP_CALIBRATE_H
#define LEAKTOP_CALIBRATE_H

#include <stddef.h>

struct loader;

/*
 * Time a child's malloc/free loop untraced and with the allocator probes on it alone:
 * *trap_ns gets the cost per probe entry beyond the BPF programs' own run time (about 0.1 s
 * of work).  Nothing stays attached.  0 or -errno with one line in msg.
 */
int calibrate__trap_ns(struct loader *ld, double *trap_ns, char *msg, size_t msg_len);

#endif
