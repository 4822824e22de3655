/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * pystack.h - a stored stack's Python frames, named and put among its native frames.
 */
#ifndef LEAKTOP_PYSTACK_H
#define LEAKTOP_PYSTACK_H

#include <stdint.h>

#include "core/frame.h"
#include "live/collector.h"

/* How many of a stack's n words are native frames (the Python frames follow them). */
uint32_t pystack__n_native(const uint64_t *ips, uint32_t n);
/*
 * Process tgid's stack ips[0..n), whose first n_native frames are resolved in *f (n_native
 * of them): *f is replaced by all n frames, the Python ones named (from py_codes) and put in
 * their place (their strings are *f's).  0 or -ENOMEM (*f unchanged).
 */
int pystack__merge(struct collector *c, uint32_t tgid, const uint64_t *ips, uint32_t n_native,
		   uint32_t n, struct sym_frame **f);

#endif
