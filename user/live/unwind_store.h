/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * unwind_store.h - the unwind tables in the BPF maps (--unwind cfi): which objects have one,
 * where their rows lie in `unwind_rows`, loading the tables a traced process needs (its
 * mappings at attach, a command's libraries before it runs, the objects a walk asked for
 * since), and the bounded room they share.
 */
#ifndef LEAKTOP_UNWIND_STORE_H
#define LEAKTOP_UNWIND_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/sample.h"

struct unwind_store;

struct unwind_store_fds {
	int rows, objects, wanted;	/* the maps' descriptors (the loader's) */
	uint32_t capacity;		/* rows the rows map holds */
};

int unwind_store__new(struct unwind_store **out, const struct unwind_store_fds *fds, bool verbose);
void unwind_store__free(struct unwind_store *u);
/*
 * The table of the file pid maps at [start, end) (path: as its maps name it, or NULL; dev,
 * ino: its identity as the maps give it).  0 or -errno.
 */
int unwind_store__load_mapping(struct unwind_store *u, int pid, uint64_t start, uint64_t end,
			       const char *path, uint64_t dev, uint64_t ino);
/* Tables for every executable file pid maps now.  0, or -ESRCH when the process is gone. */
int unwind_store__load_pid(struct unwind_store *u, int pid);
/*
 * Tables for the program at path and the libraries the dynamic linker would load for it
 * (asked from the system's dynamic linker in list mode, which runs none of its code), for a
 * command not started yet.  0 or -errno; missing pieces are left to the walks to ask for.
 */
int unwind_store__load_command(struct unwind_store *u, const char *path);
/*
 * Load what walks asked for since the last call, for at most budget_ns (one object at least).
 * Returns the number of objects handled.
 */
int unwind_store__drain(struct unwind_store *u, uint64_t budget_ns);
void unwind_store__stats(const struct unwind_store *u, struct unwind_stats *out);

#endif
