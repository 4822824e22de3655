/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * lastref_out.h - what `leaktop lastref` says about each block: one line of text, and the
 * JSON document of -j FILE (`"schema": "leaktop.lastref/1"`, described in the README).
 */
#ifndef LEAKTOP_LASTREF_OUT_H
#define LEAKTOP_LASTREF_OUT_H

#include <stddef.h>
#include <stdint.h>

#include "core/frame.h"
#include "core/lastref.h"

/*
 * The -j document, replaced atomically.  watchpoints: whether hardware watchpoints fired in
 * the self-test (1, 0; -1 not known: the watch never started).  0 or -errno.
 */
int lastref_out__write(const char *path, int pid, const char *site, int watchpoints,
		       const struct lastref_result *v, size_t n);

#endif
