/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * diff.h - what grew between two snapshots (`leaktop diff OLD NEW`): processes matched by
 * pid and start time, or by command when the pids differ between runs; call sites matched by
 * their symbolized stacks (stack ids and addresses differ between runs); per process and
 * per site the outstanding bytes, blocks, mappings and descriptors before and after, the
 * change and the change per second, sorted by growth.  As text, or as "leaktop.diff/1" JSON.
 */
#ifndef LEAKTOP_DIFF_H
#define LEAKTOP_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/model.h"
#include "view/snapshot_read.h"

/*
 * `leaktop diff --json` writes one object (fields may be added, never renamed):
 *
 * {
 *   "schema": "leaktop.diff/1", "leaktop_version": "0.1.0",
 *   "old": { "path": "a.json", "time": "2026-11-21T10:00:00Z", "elapsed_s": 2.0,
 *            "host": "vm" | null },
 *   "new": { ...the same for NEW... },
 *   "seconds": 10.0 | null,                  // NEW's time minus OLD's; null: unknown (<= 0)
 *   "summary": { "matched": N, "new": N, "vanished": N },
 *   "processes": [ {                // largest heap growth first, then mmap, then fd
 *     "status": "matched" | "new" | "vanished",
 *     "matched_by": "pid" | "command" | null,  // pid: same pid and start time
 *     "old_pid": N | null, "new_pid": N | null,
 *     "comm": "leaky" | null, "cmdline": "./leaky 4" | null,   // NEW's, else OLD's
 *     "heap": { "outstanding_bytes": CHANGE, "outstanding_count": CHANGE },
 *     "fd": { "outstanding_count": CHANGE } | null,   // null: neither tracked descriptors
 *     "mmap": { "outstanding_bytes": CHANGE,           // anonymous mappings and brk growth
 *               "outstanding_count": CHANGE } | null,  // null: neither tracked mappings
 *     "sites": [ {                           // heap, mmap, fd; each largest growth first
 *       "kind": "heap" | "mmap" | "fd",
 *       "status": "grew" | "shrank" | "same" | "new" | "vanished",
 *       "outstanding_bytes": CHANGE,         // heap and mmap sites only
 *       "outstanding_count": CHANGE,         // blocks, mappings or open descriptors
 *       "stack": [ FRAME... ]                // NEW's (OLD's if vanished), as in snapshots
 *     } ]
 *   } ]
 * }
 *
 * CHANGE is { "old": N | null, "new": N | null, "delta": N, "per_s": X | null }: null "old"
 * or "new" where the process or site is absent on that side (delta counts it as 0), null
 * "per_s" when "seconds" is.  A side that did not track a resource (-r, or a snapshot from
 * before it was tracked) is absent for it: "old" or "new" null.
 */
#define DIFF_SCHEMA "leaktop.diff/1"

enum diff_status {
	DIFF_SAME,		/* in both, unchanged (a process: matched) */
	DIFF_GREW,
	DIFF_SHRANK,
	DIFF_NEW,		/* only in NEW */
	DIFF_VANISHED,		/* only in OLD */
};

enum diff_match {
	DIFF_MATCH_NONE,
	DIFF_MATCH_PID,		/* same pid and start time */
	DIFF_MATCH_COMMAND,	/* same command line, else same comm */
};

/* One number on both sides; a side where the thing is absent holds 0 and has_* false. */
struct diff_num {
	int64_t old, new_;
	bool has_old, has_new;
};

struct diff_site {
	enum lt_site_kind kind;
	enum diff_status status;
	/* A site with this stack on each side (NULL where absent): its frames are shown. */
	const struct site *old, *new_;
	struct diff_num bytes, count;	/* summed over the side's sites with this stack */
	char *key;			/* the stack as matched */
};

struct diff_proc {
	enum diff_status status;	/* DIFF_SAME (matched), DIFF_NEW or DIFF_VANISHED */
	enum diff_match how;
	const struct process *old, *new_;
	struct diff_num heap_bytes, heap_count, fds, mmap_bytes, mmap_count;
	struct diff_site *sites;	/* sorted: heap, mmap, fd, each by growth */
	size_t n_sites;
};

/* One input: its name for the output, its model and what the file said of itself. */
struct diff_side {
	const char *name;
	const struct model *m;
	const struct snapshot_info *info;
};

struct diff {
	struct diff_side old, new_;
	double seconds;			/* from OLD to NEW; 0: unknown */
	bool fd;			/* either side tracked descriptors */
	bool mmap;			/* either side tracked anonymous mappings */
	struct diff_proc *procs;	/* sorted by growth */
	size_t n_procs;
	size_t matched, added, vanished;
};

/*
 * Seconds from one snapshot to the other: from elapsed_s when both come from one run (same
 * host, elapsed time agreeing with wall time), else from their `time`; 0 when not positive.
 */
double diff__seconds(const struct snapshot_info *old, const struct snapshot_info *new_);

/* Compare; d points into both models, which must outlive it.  0 or -ENOMEM. */
int diff__compute(const struct diff_side *old, const struct diff_side *new_, struct diff *d);
void diff__free(struct diff *d);

/* The key two sites are matched by: kind and, per frame, module, function and line. */
char *diff__site_key(const struct site *s);

struct diff_text_opts {
	unsigned int top_sites;		/* changed sites shown per process; 0: all */
};

int diff__write_text(FILE *out, const struct diff *d, const struct diff_text_opts *o);
int diff__write_json(FILE *out, const struct diff *d);

#endif
