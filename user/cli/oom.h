/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * oom.h - OOM-kill snapshots: the victims the kernel announces (LT_EV_OOM) among the watched
 * processes are queued, and once the interval's collect has read their records (started at
 * once, not at the next tick), each one's full snapshot is written to the OOM directory,
 * atomically, as leaktop-oom-PID-YYYYmmddTHHMMSSZ.json.
 */
#ifndef LEAKTOP_OOM_H
#define LEAKTOP_OOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "bpf/leaktop.h"
#include "core/model.h"

/* Victims waiting for their snapshot, at most (more in one interval are counted failed). */
#define OOM_QUEUE_MAX	64

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

/* dir: where to write; checked (each write looks at it again, oom__check_dir) when
 * strict.  0 or -ENOMEM. */
int oom_writer__new(struct oom_writer **out, const char *dir, bool strict);
void oom_writer__free(struct oom_writer *w);
/* A lifecycle event: an LT_EV_OOM queues its victim (others are ignored). */
void oom_writer__note(struct oom_writer *w, const struct lt_event *ev);
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

#endif
