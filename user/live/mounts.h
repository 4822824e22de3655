/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * mounts.h - which file system a traced process's file lives on, found without asking that
 * file system, and which file systems leaktop never reads: FUSE (any local user can mount
 * one and make it stop answering) and network file systems.  A stat, open, read or page
 * fault on such a file waits for a daemon or a server, killably only: no signal leaktop
 * catches ends that wait.  Every path to a traced process's file asks here first.
 */
#ifndef LEAKTOP_MOUNTS_H
#define LEAKTOP_MOUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "live/procmaps.h"

/* One line of a mountinfo file: what leaktop needs of it. */
struct mount_entry {
	int mnt_id;		/* field 1: the mount's id (the kernel's, unique among live mounts) */
	uint64_t dev;		/* field 3: makedev(major, minor) of its super block */
	char fstype[32];	/* after " - ": "ext4", "fuse.sshfs" (cut to fit) */
};

/*
 * Parse one mountinfo line (without its newline); the mount point (field 5, its octal
 * escapes undone) into point[point_len] if point is not NULL.  0, or -EINVAL on a malformed
 * line (-ENAMETOOLONG: the mount point does not fit).  Pure: no file is read.
 */
int mounts__parse_line(const char *line, struct mount_entry *e, char *point, size_t point_len);
/*
 * Why leaktop never reads a file on file system type fstype: a short reason ("FUSE",
 * "network file system"), or NULL when it may.  Pure: a table lookup.
 */
const char *mounts__refusal(const char *fstype);

/*
 * May leaktop stat, open, read or fault in the file of fd (any fd of this process: an
 * O_PATH one too) that process pid led to (its maps, map_files, exe, fd; 0: leaktop's own
 * namespace)?  The mount is found by statx(AT_STATX_DONT_SYNC, STATX_MNT_ID), which no
 * file system is asked about, and its type in pid's mountinfo (else leaktop's own).
 * 0: yes; -EREMOTE: the file lives on a file system leaktop does not touch (counted); other
 * -errno: not found out (the caller refuses as well).
 */
int mounts__check_fd(int pid, int fd);
/*
 * May leaktop look path up, as process pid sees it inside its root (0: leaktop's own
 * namespace and root)?  -EREMOTE when a mount leaktop does not touch is on the way (its
 * mount point is path or a directory above it); 0 otherwise (symbolic links are not
 * followed here: the lookup that follows must not follow them either).
 */
int mounts__check_path(int pid, const char *path);
/*
 * Same for a file-backed mapping of process pid, by the device its maps line shows: true
 * when it lies on a file system leaktop does not touch (a scan must not read it: a page
 * never touched is read from the file system).  Unknown devices give false.
 */
bool mounts__map_refused(int pid, const struct proc_map *pm);

/* Files refused so far (mounts__check_fd's -EREMOTE), and the type of the last one. */
uint64_t mounts__refused_count(void);
const char *mounts__last_refused_fstype(void);
/* Forget the cache and close what it holds (at exit, and for tests). */
void mounts__reset(void);

#endif
