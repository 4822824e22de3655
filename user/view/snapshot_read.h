/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * snapshot_read.h - reads a "leaktop.snapshot/1" file back into a struct model, with the
 * JSON library that wrote it (jansson), so every view that renders live data (the text
 * report, the exports) renders saved data unchanged.  Bad input (missing, empty, truncated,
 * not JSON, wrong schema, missing or mistyped fields, too large, too deep) is an error with a
 * one-line reason; nothing in a file can crash the reader or make it use unbounded memory.
 */
#ifndef LEAKTOP_SNAPSHOT_READ_H
#define LEAKTOP_SNAPSHOT_READ_H

#include <stddef.h>
#include <stdint.h>

#include "core/model.h"

struct json_t;

/* Files larger than this are refused before they are read. */
#define SNAPSHOT_MAX_FILE_BYTES (256ull << 20)
/* Most memory the JSON library may hold for one snapshot being loaded. */
#define SNAPSHOT_MAX_JSON_BYTES (1024ull << 20)

struct snapshot_read_opts {
	uint32_t pid;		/* keep only this pid's processes (all are checked); 0: all */
};

/* What the snapshot says about itself, beside the model. */
struct snapshot_info {
	char time[40];		/* "time" as written (RFC 3339, UTC) */
	double time_s;		/* the same in seconds since the epoch */
	double elapsed_s;	/* since tracing started */
	char host[256];		/* "" when unknown */
	uint64_t dropped;	/* stats.dropped */
};

/*
 * Load path as JSON (size checked first, duplicate keys refused) and check its schema string.
 * 0, or -errno with the reason in err (one line, no "leaktop: " prefix, no newline):
 * -ENOENT and the like from open, -EFBIG too large, -ENOMEM over the memory limit,
 * -EINVAL not a snapshot.  *root is the caller's (json_decref) on success.
 */
int snapshot__load(const char *path, struct json_t **root, char *err, size_t len);

/*
 * Fill m (model__free() it, on success or failure) and info from a loaded document.  `name`
 * names the document in messages.  0 or -EINVAL / -ENOMEM with a reason in err.
 */
int snapshot__from_json(struct json_t *root, const char *name,
			const struct snapshot_read_opts *o, struct model *m,
			struct snapshot_info *info, char *err, size_t len);

/* snapshot__load() then snapshot__from_json().  o may be NULL. */
int snapshot__read_file(const char *path, const struct snapshot_read_opts *o, struct model *m,
			struct snapshot_info *info, char *err, size_t len);
/* The same from memory (the fuzz target and unit tests); `name` is used in messages. */
int snapshot__read_buf(const void *buf, size_t size, const char *name,
		       const struct snapshot_read_opts *o, struct model *m,
		       struct snapshot_info *info, char *err, size_t len);

/* Change the JSON memory limit (tests); returns the previous one. */
size_t snapshot__set_json_limit(size_t bytes);

#endif
