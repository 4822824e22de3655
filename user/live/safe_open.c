// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * safe_open.c - opens files whose names traced processes chose (see safe_open.h): resolve
 * O_PATH (no FIFO wait, no device open, no side effect), check the file system without
 * asking it (live/mounts.h: never FUSE or a network file system, whose answers a traced
 * process's owner may withhold), check fstat (regular file, and the expected device and
 * inode), then reopen that very inode read-only through /proc/self/fd with O_NONBLOCK |
 * O_NOCTTY.
 *
 * The name's lookup itself could ask a FUSE daemon (a directory entry whose time ran out).
 * So a name is first looked up in the dentry cache only (RESOLVE_CACHED: no file system is
 * asked); only when that cannot be done is it looked up for real, and then only when no
 * refused file system is mounted on its way, with no symbolic link followed (which could
 * lead anywhere).  Names under leaktop's /proc are procfs's: its magic links lead to the
 * file with no lookup on the file's file system.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/magic.h>
#include <linux/openat2.h>

#include "live/mounts.h"
#include "live/safe_open.h"

#ifndef RESOLVE_CACHED
#define RESOLVE_CACHED	0x20
#endif

/* The O_PATH resolution of each way. */
static const struct open_how how_of[SAFE__COUNT] = {
	[SAFE_FOLLOW]	= { .flags = O_PATH | O_CLOEXEC },
	[SAFE_NOFOLLOW]	= { .flags = O_PATH | O_CLOEXEC | O_NOFOLLOW },
	[SAFE_IN_ROOT]	= { .flags = O_PATH | O_CLOEXEC,
			    .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS },
};

bool safe_open__is(int fd, const struct stat *st, const struct file_id *want)
{
	struct statfs sfs;

	if (!S_ISREG(st->st_mode))
		return false;
	if (!want)
		return true;
	if ((uint64_t)st->st_ino != want->ino)
		return false;
	return (uint64_t)st->st_dev == want->dev ||
	       (!fstatfs(fd, &sfs) && sfs.f_type == OVERLAYFS_SUPER_MAGIC);
}

int safe_open__link_id(const char *link, struct file_id *id, mode_t *mode)
{
	struct statx stx;

	if (statx(AT_FDCWD, link, AT_STATX_DONT_SYNC, STATX_TYPE | STATX_INO, &stx))
		return -errno;
	if ((stx.stx_mask & (STATX_TYPE | STATX_INO)) != (STATX_TYPE | STATX_INO))
		return -EOPNOTSUPP;
	if (id) {
		id->dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
		id->ino = stx.stx_ino;
	}
	if (mode)
		*mode = stx.stx_mode & S_IFMT;
	return 0;
}

/* The pid N of a name "/proc/N/..." (whose links lead into N's mount namespace), else 0. */
static int proc_pid_of(const char *path)
{
	char *end;
	long pid;

	if (strncmp(path, "/proc/", 6) || path[6] < '1' || path[6] > '9')
		return 0;
	pid = strtol(path + 6, &end, 10);
	return *end == '/' && pid > 0 && pid < (1L << 22) ? (int)pid : 0;
}

/*
 * Resolve dirfd/path O_PATH the way how says without waiting on a refused file system;
 * pid's namespace and root are the name's frame (0: leaktop's).  fd, or -errno.
 */
static int resolve(int pid, int dirfd, const char *path, struct open_how oh)
{
	struct open_how cached = oh;
	int fd, err;

	if (dirfd == AT_FDCWD && !strncmp(path, "/proc/", 6))
		goto lookup;
	cached.resolve |= RESOLVE_CACHED;
	fd = syscall(SYS_openat2, dirfd, path, &cached, sizeof(cached));
	/* EAGAIN: not all in the cache; EINVAL: a kernel before 5.12; ENOSYS: before 5.6. */
	if (fd >= 0 || (errno != EAGAIN && errno != EINVAL && errno != ENOSYS))
		return fd >= 0 ? fd : -errno;
	/* Another directory of the caller's is the caller's to trust. */
	if (dirfd == AT_FDCWD || (oh.resolve & RESOLVE_IN_ROOT)) {
		err = mounts__check_path(pid, path);
		if (err)
			return -EREMOTE;
		oh.resolve |= RESOLVE_NO_SYMLINKS;
	}
lookup:
	fd = syscall(SYS_openat2, dirfd, path, &oh, sizeof(oh));
	/* Kernels before 5.6: the ways that need no resolve flags still work. */
	if (fd < 0 && errno == ENOSYS && !oh.resolve)
		fd = openat(dirfd, path, (int)oh.flags);
	return fd >= 0 ? fd : -errno;
}

/* safe_open, with pid's mount namespace the one the name leads into (0: leaktop's). */
static int open_in(int pid, int dirfd, const char *path, enum safe_how how,
		   const struct file_id *want, int *fd)
{
	struct stat st, again;
	char self[32];
	int pathfd, err = 0;

	*fd = -1;
	if ((unsigned int)how >= SAFE__COUNT || !path || !*path)
		return -EINVAL;
	if (!pid && dirfd == AT_FDCWD)
		pid = proc_pid_of(path);
	pathfd = resolve(pid, dirfd, path, how_of[how]);
	if (pathfd < 0)
		return pathfd;
	/* Before anything asks the file's file system: is it one leaktop may ask? */
	if (mounts__check_fd(pid, pathfd)) {
		err = -EREMOTE;
		goto out;
	}
	if (fstat(pathfd, &st)) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -EINVAL;
		goto out;
	}
	if (!safe_open__is(pathfd, &st, want)) {
		err = -ESTALE;
		goto out;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pathfd);
	*fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (*fd < 0) {
		err = -errno;
		goto out;
	}
	/* The same inode, reopened: still checked, a procfs surprise must not slip through. */
	if (fstat(*fd, &again) || again.st_dev != st.st_dev || again.st_ino != st.st_ino ||
	    !S_ISREG(again.st_mode)) {
		close(*fd);
		*fd = -1;
		err = -ESTALE;
	}
out:
	close(pathfd);
	return err;
}

int safe_open(int dirfd, const char *path, enum safe_how how, const struct file_id *want,
	      int *fd)
{
	return open_in(0, dirfd, path, how, want, fd);
}

int safe_open__in_root(int pid, const char *path, const struct file_id *want, int *fd)
{
	char root_path[32];
	int root, err;

	*fd = -1;
	snprintf(root_path, sizeof(root_path), "/proc/%d/root", pid);
	root = open(root_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -errno;
	err = open_in(pid, root, path, SAFE_IN_ROOT, want, fd);
	close(root);
	return err;
}

int safe_open__mapped(int pid, uint64_t start, uint64_t end, const char *path,
		      const struct file_id *want, int *fd)
{
	char name[64];
	int err;

	snprintf(name, sizeof(name), "/proc/%d/map_files/%llx-%llx", pid,
		 (unsigned long long)start, (unsigned long long)end);
	err = safe_open(AT_FDCWD, name, SAFE_FOLLOW, want, fd);
	if (!err || !path || path[0] != '/')
		return err;
	return safe_open__in_root(pid, path, want, fd);
}
