/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * heapslack.h - allocator slack of a scanned process: finds its glibc heaps (the brk heap,
 * thread arenas' heaps) among the mappings a scan copied, which of their pages are resident
 * (/proc/PID/pagemap) and what smaps says of them, and walks their chunk headers
 * (core/heapslack.c).
 */
#ifndef LEAKTOP_LIVE_HEAPSLACK_H
#define LEAKTOP_LIVE_HEAPSLACK_H

#include <stddef.h>

#include "core/heapslack.h"
#include "core/scan.h"

struct proc_maps;
struct scanmaps;

/*
 * The slack of pid's glibc heaps from a scan's copies (regions) and its tracked live
 * blocks.  out->valid false: no glibc heap was found or none walked.  0 or -ENOMEM.
 */
int heapslack__measure(int pid, const struct proc_maps *maps, const struct scanmaps *touch,
		       const struct scan_region *regions, size_t n_regions,
		       const struct scan_block *blocks, size_t n_blocks, struct heapslack *out);

#endif
