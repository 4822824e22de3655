/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * safe_open.h - opening a file whose name a traced process chose (a maps line, an exec file
 * name, a .gnu_debuglink) without trusting that name: nothing but a regular file is ever
 * opened (a FIFO would block leaktop, a device open can have effects), never blocking, and
 * only when it is the file expected (device and inode) if one is.  The one place leaktop
 * opens such files; every caller goes through it.
 */
#ifndef LEAKTOP_SAFE_OPEN_H
#define LEAKTOP_SAFE_OPEN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

/* A file's identity: makedev(major, minor) as stat gives it, and the inode. */
struct file_id {
	uint64_t dev, ino;
};

/* How the name is resolved (relative names from dirfd, or AT_FDCWD). */
enum safe_how {
	SAFE_FOLLOW,	/* symbolic links followed: procfs links (map_files, exe), names checked
			 * against an identity */
	SAFE_NOFOLLOW,	/* a last component that is a symbolic link is refused */
	SAFE_IN_ROOT,	/* inside dirfd as the root: "..", absolute links and procfs magic
			 * links never leave it (openat2 RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS) */
	SAFE__COUNT,
};

/*
 * Open dirfd/path read-only into *fd (O_NONBLOCK, O_NOCTTY, O_CLOEXEC).  The name is first
 * resolved O_PATH, which opens nothing; only a regular file with identity *want (NULL: any
 * regular file) on a file system leaktop may ask (live/mounts.h: not FUSE, not a network
 * file system) is then opened, through /proc/self/fd.  Returns 0; -EINVAL when the name
 * leads to something other than a regular file (FIFO, device, directory, symbolic link),
 * -ESTALE when to another file than *want, -EREMOTE when to (or through) a file system
 * leaktop does not touch; -errno otherwise (-ENOENT: nothing there).  *fd is -1 on failure.
 */
int safe_open(int dirfd, const char *path, enum safe_how how, const struct file_id *want,
	      int *fd);
/* Open path as process pid sees it, inside /proc/PID/root (SAFE_IN_ROOT).  As safe_open. */
int safe_open__in_root(int pid, const char *path, const struct file_id *want, int *fd);
/*
 * Open the file process pid maps at [start, end) (identity *want): through
 * /proc/PID/map_files/START-END (any mount namespace, deleted files too), else path
 * (absolute, may be NULL) inside /proc/PID/root.  As safe_open.
 */
int safe_open__mapped(int pid, uint64_t start, uint64_t end, const char *path,
		      const struct file_id *want, int *fd);
/*
 * The identity and file type of what a procfs link of another process (/proc/PID/exe,
 * /proc/PID/fd/N) leads to, from the kernel's inode alone: statx with AT_STATX_DONT_SYNC,
 * which FUSE and the network file systems answer from their caches without asking the
 * daemon or server (the type, device and inode of an inode never change).  0 or -errno.
 */
int safe_open__link_id(const char *link, struct file_id *id, mode_t *mode);
/*
 * Is st a regular file with identity *want?  The inode must match; the device too, except
 * on overlayfs (fd's file system), whose files some kernels list in maps with the device of
 * the layer below.
 */
bool safe_open__is(int fd, const struct stat *st, const struct file_id *want);

#endif
