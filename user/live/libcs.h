/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * libcs.h - finding the C libraries processes actually map, to put the allocator probes in.
 */
#ifndef LEAKTOP_LIBCS_H
#define LEAKTOP_LIBCS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct libc_ref {
	char open_path[PATH_MAX];	/* a path the kernel resolves from our namespace */
	char path[PATH_MAX];		/* as the process sees it */
	uint64_t dev, ino;		/* identity, as /proc/PID/maps reports it */
	int pid;			/* a process mapping it */
};

/* Is this the file name of a C library with the allocator (glibc or musl)? */
bool libcs__is_libc_path(const char *path);
/* The libcs mapped by pid (usually one).  0, -ESRCH, or -errno. */
int libcs__of_pid(int pid, struct libc_ref *out, size_t max, size_t *n);
/*
 * Every distinct libc mapped by any process, deduplicated by (dev, ino); processes in other
 * mount namespaces are reached through /proc/PID/root.  *out is malloc'd.
 */
int libcs__scan_system(struct libc_ref **out, size_t *n);

#endif
