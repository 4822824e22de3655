/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * libcs.h - finding the C libraries processes actually map, to put the allocator probes in,
 * and opening exactly the file a process maps (never what its path names now).
 */
#ifndef LEAKTOP_LIBCS_H
#define LEAKTOP_LIBCS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct libc_ref {
	char path[PATH_MAX];		/* as the process sees it; for messages only */
	uint64_t start, end;		/* one mapping of it in pid (its map_files name) */
	uint64_t dev, ino;		/* identity, as /proc/PID/maps reports it */
	int pid;			/* a process mapping it; 0: none yet (a file leaktop
					 * found by path in its own namespace) */
	bool deleted;			/* unlinked since it was mapped (a libc update) */
};

/* Is this the file name of a C library with the allocator (glibc or musl)? */
bool libcs__is_libc_path(const char *path);
/*
 * The libcs mapped by pid (usually one), deleted ones included.  0, -ESRCH, or -errno.
 */
int libcs__of_pid(int pid, struct libc_ref *out, size_t max, size_t *n);
struct proc_map;
/* The ref of mapping m of process pid. */
void libcs__ref_of_map(int pid, const struct proc_map *m, struct libc_ref *r);

/*
 * The kernel's name for the mapping [start, end) of pid: "/proc/PID/map_files/START-END",
 * lower-case hex without leading zeros (the kernel refuses any other spelling).  0,
 * -EINVAL (an empty or reversed range, a pid <= 0) or -ENAMETOOLONG.
 */
int libcs__map_files_path(int pid, uint64_t start, uint64_t end, char *buf, size_t len);

/*
 * Open the file ref names, read-only, into *fd: the very file the process maps, reached
 * through /proc/PID/map_files; only when that link may not be followed (no CAP_SYS_ADMIN),
 * the same path in leaktop's namespace, else the path inside the process's root (never
 * leaving it).  Nothing but a regular file is ever opened (no FIFO wait, no device open),
 * and only when its (dev, ino) is ref's; with pid 0, the path in leaktop's namespace only.
 * 0, -ESTALE (what it reaches is not the mapped file: refused), or -errno (-ENOENT: the
 * mapping is gone); on failure why gets one line.
 */
int libcs__open(const struct libc_ref *ref, int *fd, char *why, size_t why_len);

/* ref's path for messages, " (deleted)" appended when it was unlinked. */
const char *libcs__name(const struct libc_ref *ref, char *buf, size_t len);

#endif
