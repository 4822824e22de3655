/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * allocs.h - the allocators processes really use, wherever they are linked: which mapped
 * objects define an allocator (a libc, jemalloc, tcmalloc, mimalloc, a static executable,
 * an executable with its own), and which one a process's malloc binds to by the dynamic
 * linker's rules.  What is learnt of each file (its allocator, its soname and needed list)
 * is kept by (device, inode), bounded.
 */
#ifndef LEAKTOP_ALLOCS_H
#define LEAKTOP_ALLOCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "live/libcs.h"

/* One allocator object to probe. */
struct alloc_obj {
	struct libc_ref ref;		/* the file, as one process maps it (or pid 0: by path) */
	const char *kind;		/* "glibc", "musl", "jemalloc", "tcmalloc", "mimalloc",
					 * "other" (static strings) */
	bool bound;			/* the process's malloc binds here */
};

struct allocs_stats {
	uint64_t objects_read;		/* files whose ELF was examined */
	uint64_t objects_unreadable;	/* ... that could not be (refused, gone, not ELF) */
	uint64_t cache_resets;		/* the cache was full and started over */
	uint32_t scan_pending;		/* objects the last system scan left for the next */
};

struct allocs;

int allocs__new(struct allocs **out);
void allocs__free(struct allocs *a);

/*
 * The allocator objects to probe for process pid: the one its malloc binds to (marked
 * bound), and any other allocator it maps that cannot be bound to by name (an API under a
 * prefix only, like a libmimalloc built without overriding malloc; an executable's own
 * malloc it does not export): its calls to those are direct.  0 (*n may be 0: no allocator
 * found), -ESRCH (gone), -EAGAIN (a fork of leaktop that has not exec'd yet), or -errno.
 */
int allocs__of_pid(struct allocs *a, int pid, struct alloc_obj *out, size_t max, size_t *n);

/*
 * The allocator pid's malloc binds to, for reports: its path as mapped (control characters
 * are the caller's to escape) and kind.  0, -ENOENT (none found), -ESRCH, or -errno.
 */
int allocs__bound_of_pid(struct allocs *a, int pid, char *module, size_t len, const char **kind);

/*
 * The allocators the command at path will use, before it runs (leaktop's namespace and
 * environment): path itself when it has one, and what it will load (live/ldlist.c, with
 * leaktop's LD_PRELOAD and LD_LIBRARY_PATH) bound by the same rules.  0 or -errno.
 */
int allocs__of_command(struct allocs *a, const char *path, struct alloc_obj *out, size_t max,
		       size_t *n);

/*
 * The allocators process pid will use once ld.so has mapped what its program needs: pid is
 * held at exec (only the program and ld.so are mapped), so what it maps is joined by what
 * ldlist finds for its program with its environment's LD_PRELOAD and LD_LIBRARY_PATH, in
 * its root, bound by the same rules.  *env_set: either variable is set.  0, -ESRCH, -EAGAIN
 * (leaktop's own fork), or -errno.
 */
int allocs__of_exec(struct allocs *a, int pid, struct alloc_obj *out, size_t max, size_t *n,
		    bool *env_set);

/*
 * Every distinct allocator object mapped by any process but leaktop, by (dev, ino), into
 * *out (malloc'd).  Files not seen before are examined up to `budget` per call (C libraries
 * always): the rest wait for the next call (stats.scan_pending).  0 or -errno.
 */
int allocs__scan_system(struct allocs *a, size_t budget, struct alloc_obj **out, size_t *n);

void allocs__stats(const struct allocs *a, struct allocs_stats *out);

#endif
