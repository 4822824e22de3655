/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * oom.h - OOM-kill snapshots: the victims the kernel announces among the watched processes
 * (the model's OOM-killed images, new in this interval) are queued, and once the interval's
 * collect has read their records (started at once, not at the next tick), each one's full snapshot is written to the OOM directory,
 * atomically, as leaktop-oom-PID-YYYYmmddTHHMMSSZ.json.
 *
 * Bounded, because any user who can OOM-kill their own processes (a memory-limited scope or
 * container) triggers them: at most one snapshot per cgroup every min_gap_s (the first victim
 * of a burst is the one worth reading; the others are counted, skipped), and the snapshot
 * files in the directory (leaktop's own: its name pattern, regular files of leaktop's uid,
 * those already there at start included) stay within max_files and max_bytes, the oldest
 * removed first.  Skipped and removed snapshots are counted and said once.
 */
#ifndef LEAKTOP_OOM_H
#define LEAKTOP_OOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "core/model.h"

/* Victims waiting for their snapshot, at most (more in one interval are counted failed). */
#define OOM_QUEUE_MAX	64
/* Defaults of --oom-max-files, --oom-max-bytes and --oom-min-gap. */
#define OOM_DEFAULT_MAX_FILES	64
#define OOM_DEFAULT_MAX_BYTES	(64ull << 20)
#define OOM_DEFAULT_MIN_GAP_S	60
/* Cgroups the rate limit remembers (the one written longest ago is forgotten first). */
#define OOM_RATE_SLOTS		64

struct oom_writer;

/*
 * Where OOM snapshots go: dir (--oom-dir) when given, else the directory of the -j file
 * when -j names a file, else ".".  Into buf; returns buf.
 */
const char *oom__dir(char *buf, size_t len, const char *dir, const char *json_path);
/* "DIR/leaktop-oom-PID-YYYYmmddTHHMMSSZ.json" (UTC) into buf.  0 or -ENAMETOOLONG. */
int oom__file_name(char *buf, size_t len, const char *dir, uint32_t pid, time_t when);
/*
 * Can snapshots be written into dir?  It must be a directory, not a symbolic link, that
 * leaktop may create files in.  0, or -errno with one line "cause; fix" in msg.
 */
int oom__check_dir(const char *dir, char *msg, size_t len);

/*
 * Is name one of leaktop's OOM snapshot names (leaktop-oom-PID-YYYYmmddTHHMMSSZ.json, or with
 * a -XXXXXX suffix before .json: oom__file_name's fallback)?  Nothing else is ever removed.
 */
bool oom__is_snapshot_name(const char *name);

/* A snapshot file found in the OOM directory. */
struct oom_file {
	char name[96];
	uint64_t size_bytes;
	int64_t mtime_ns;
};

/*
 * Retention, pure: files (any order) is sorted oldest first (mtime, then name) and the number
 * of them to remove from the front is returned, so that what stays holds at most max_files
 * files and max_bytes bytes (0: no limit of that kind).
 */
size_t oom__retention(struct oom_file *files, size_t n, size_t max_files, uint64_t max_bytes);

/* The rate limit, pure: at most one snapshot per key (a cgroup) every gap_s seconds. */
struct oom_rate {
	struct {
		uint64_t key;
		double last_s;
	} slots[OOM_RATE_SLOTS];
	size_t n;
};
/* May key have a snapshot at now_s?  Asking does not take the slot. */
bool oom_rate__allowed(const struct oom_rate *r, uint64_t key, double now_s, double gap_s);
/* key had its snapshot at now_s (the slot written longest ago goes when all are taken). */
void oom_rate__take(struct oom_rate *r, uint64_t key, double now_s);
/* The rate limit's key of a cgroup path (NULL, unknown: one key for all unknown). */
uint64_t oom__rate_key(const char *cgroup);

struct oom_limits {
	size_t max_files;		/* --oom-max-files (0: no limit) */
	uint64_t max_bytes;		/* --oom-max-bytes (0: no limit) */
	double min_gap_s;		/* --oom-min-gap: per cgroup (0: none) */
};

/* dir: where to write (looked at again before each write, oom__check_dir); strict: it was
 * given (--oom-dir).  0 or -ENOMEM. */
int oom_writer__new(struct oom_writer **out, const char *dir, bool strict,
		    const struct oom_limits *lim);
void oom_writer__free(struct oom_writer *w);
/*
 * An OOM victim (pid, gen) was announced: should the interval's collect start now?  Not when
 * m already knows the victim's cgroup and that cgroup had its snapshot less than min_gap_s
 * ago (nothing is forced for it).
 */
bool oom_writer__wants_collect(const struct oom_writer *w, const struct model *m, uint32_t pid,
			       uint64_t gen);
/*
 * Victim (pid, gen) is queued, unless m already knows its cgroup and that cgroup had its
 * snapshot less than min_gap_s ago (then it is counted skipped).
 */
void oom_writer__note(struct oom_writer *w, uint32_t pid, uint64_t gen, const struct model *m);
/* After the interval's fold: each image m marks OOM-killed in it (oom_ns is m->now_ns). */
void oom_writer__note_new(struct oom_writer *w, const struct model *m);
/* Victims wait for their snapshot: collect now. */
bool oom_writer__pending(const struct oom_writer *w);

typedef void (*oom_say_fn)(void *ctx, const char *line);
/*
 * Write the snapshot of each queued victim from m (which has read their records), one line
 * each through say naming the file or why it could not be written; the queue empties.
 */
void oom_writer__write(struct oom_writer *w, const struct model *m, oom_say_fn say, void *ctx);
/* Snapshots that could not be written so far. */
uint64_t oom_writer__failed(const struct oom_writer *w);
/* Victims whose snapshot the rate limit skipped so far. */
uint64_t oom_writer__skipped(const struct oom_writer *w);
/* Snapshot files removed so far to stay within the caps (a new one larger than max_bytes
 * alone included). */
uint64_t oom_writer__removed(const struct oom_writer *w);

#endif
