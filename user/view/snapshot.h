/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * snapshot.h - the model as a "leaktop.snapshot/1" JSON document (see README): to a file,
 * replaced atomically, or as one line of JSON Lines.
 */
#ifndef LEAKTOP_SNAPSHOT_H
#define LEAKTOP_SNAPSHOT_H

#include <stdio.h>
#include <jansson.h>

#include "core/model.h"

#define SNAPSHOT_SCHEMA "leaktop.snapshot/1"

/* 0 or -errno (-ELOOP: path is a symlink). */
int snapshot__write_file(const char *path, const struct model *m);
int snapshot__write_line(FILE *out, const struct model *m);
/* Sites' stacks kept as JSON text between snapshots (those of the last full snapshot, at most). */
size_t snapshot__cached_stacks(void);
/*
 * The same document holding only process p (every site and its whole stack, as ever),
 * shown or not: an OOM victim's snapshot.  0 or -errno.
 */
int snapshot__write_process_file(const char *path, const struct model *m,
				 const struct process *p);

/* Pieces other JSON writers share: a string (null for NULL, never invalid UTF-8) and a
 * stack frame as snapshots hold it. */
json_t *snapshot__string(const char *s);
/*
 * Write doc to path as one indented JSON document, replaced atomically (util/atomic_file.h),
 * and drop the reference to doc (NULL: -ENOMEM).  0 or -errno.
 */
int snapshot__write_doc(const char *path, json_t *doc);
json_t *snapshot__frame(const struct sym_frame *f);
/* A lastref verdict as the snapshot's process.lastref and `leaktop lastref -j` hold it. */
json_t *snapshot__lastref(const struct lastref_result *r);

#endif
