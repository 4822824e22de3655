/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * scanmaps.h - which mappings of another process a scan reads: the one rule the reachability
 * scan (scanner.c) and lastref's scans (watch.c) share.  Before the stop, /proc/PID/smaps
 * says whether memory is registered with userfaultfd (such a process is not scanned) and
 * which mappings were never touched (no page resident or swapped: they hold only zeros and
 * are not read, so an ASan shadow or a reserved heap costs nothing); during the stop,
 * scanmaps__skip says which mappings are not the process's memory at all.
 */
#ifndef LEAKTOP_SCANMAPS_H
#define LEAKTOP_SCANMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct proc_map;

/* What smaps said of one mapping before the stop. */
struct scanmaps_touch {
	uint64_t start, end;
	uint64_t touched_bytes;		/* Rss + Swap */
	uint64_t rss_bytes;		/* Rss */
};

struct scanmaps {
	struct scanmaps_touch *v;	/* sorted by start */
	size_t n;
};

/*
 * Parse smaps text: each mapping's range and touched bytes.  0, -EINVAL, -ENOMEM.
 */
int scanmaps__parse(const char *text, struct scanmaps *out);

/*
 * Read /proc/PID/smaps, before the process is stopped (its page-table walk then costs the
 * target nothing).  0; -EOPNOTSUPP when memory is registered with userfaultfd (msg: one line:
 * reading it would wait for a thread the scan stopped, with no time limit); -ESRCH, -errno.
 */
int scanmaps__prepare(int pid, struct scanmaps *out, char *msg, size_t msg_len);

/* A mapping whose contents are not the process's memory, or must not be read. */
bool scanmaps__skip(const struct proc_map *pm);

/*
 * Was this private mapping never touched when smaps was read (same range, nothing resident
 * or swapped: a page written since is anonymous, counted in one of them)?  A shared mapping,
 * or one smaps did not list, is taken as touched.
 */
bool scanmaps__untouched(const struct scanmaps *s, const struct proc_map *pm);

/* What smaps said of the mapping starting at start, or NULL. */
const struct scanmaps_touch *scanmaps__find(const struct scanmaps *s, uint64_t start);

void scanmaps__free(struct scanmaps *s);

#endif
