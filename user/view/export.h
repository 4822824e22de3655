/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * export.h - the model's heap (and mmap) call sites in formats other tools read: a gzipped
 * pprof profile (--pprof) and folded stacks for flame graphs (--folded).  Both work on a
 * live model and on one read back from a snapshot.
 */
#ifndef LEAKTOP_EXPORT_H
#define LEAKTOP_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/model.h"

struct export_opts {
	double time_s;			/* when the data was taken (Unix s); 0: unknown */
	double duration_s;		/* how long tracing had run by then */
	/*
	 * pprof mappings carry the build id of each module, as build_id(build_id_ctx, module)
	 * gives it (malloc'd hex, NULL: unknown); NULL: no build ids.  A live run passes
	 * symbolizer__build_id, which knows the files it opened; a module name alone is never
	 * opened (it is the process's name, and can lead anywhere here).
	 */
	char *(*build_id)(void *ctx, const char *module);
	void *build_id_ctx;
};

/*
 * Folded stacks: one line per heap site with outstanding bytes, "outer;...;inner BYTES".  A
 * frame is its symbol, else "[module]" (file name), else its address.  0 or -EIO.
 */
int export__folded(FILE *out, const struct model *m);

/*
 * The pprof profile (perftools.profiles.Profile, proto/profile.proto), gzipped, in *buf
 * (malloc'd, *len bytes).  Sample types inuse_objects/count and inuse_space/bytes (the
 * default), and when the model tracked mappings mmap_objects/count and mmap_space/bytes; one
 * sample per heap or mmap site with something outstanding, its values in its own kind's
 * types (0 in the other's), labelled with pid and comm.  0 or -errno.
 */
int export__pprof_pack(const struct model *m, const struct export_opts *o, uint8_t **buf,
		       size_t *len);
int export__pprof(FILE *out, const struct model *m, const struct export_opts *o);

/* Either export to path, replaced atomically (-ELOOP: path is a symbolic link). */
int export__folded_file(const char *path, const struct model *m);
int export__pprof_file(const char *path, const struct model *m, const struct export_opts *o);

#endif
