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
 * refused file system is mounted on its way; the kernel follows no symbolic link then (one
 * could lead anywhere): leaktop reads each link and checks the name it leads to first.
 * Names under leaktop's /proc are procfs's: its magic links lead to the file with no lookup
 * on the file's file system.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
 * Make path (absolute) plain in place: no "." or "..", no repeated "/".  Lexical, so only
 * right for a name with no symbolic link on its way, as a name with one is never
 * looked up here.  0, or -ENAMETOOLONG.
 */
static int plain_name(char *path, size_t size)
{
	char out[PATH_MAX];
	size_t n = 0;
	const char *p = path;

	while (*p) {
		const char *c;
		size_t len;

		while (*p == '/')
			p++;
		c = p;
		while (*p && *p != '/')
			p++;
		len = (size_t)(p - c);
		if (!len || (len == 1 && c[0] == '.'))
			continue;
		if (len == 2 && c[0] == '.' && c[1] == '.') {
			while (n && out[n - 1] != '/')
				n--;
			if (n)
				n--;
			continue;
		}
		if (n + 1 + len >= sizeof(out))
			return -ENAMETOOLONG;
		out[n++] = '/';
		memcpy(out + n, c, len);
		n += len;
	}
	if (!n)
		out[n++] = '/';
	out[n] = '\0';
	if (n >= size)
		return -ENAMETOOLONG;
	memcpy(path, out, n + 1);
	return 0;
}

/* A plain name of the frame as the *at calls take it: relative to a process's root. */
static const char *at_name(const char *name, bool in_root)
{
	return !in_root ? name : name[1] ? name + 1 : ".";
}

/*
 * The real lookup of a plain absolute name, in leaktop's namespace (dirfd AT_FDCWD) or
 * inside a process's root (dirfd, in_root), following symbolic links by hand: each name
 * looked up (the given one, then what each link leads to) is checked first for a refused
 * file system on its way and looked up with no link followed by the kernel; a link found
 * on the way is read (readlink of the prefix up to it, whose components are no links) and
 * the name built anew.  At most 40 links, as the kernel.  fd, or -errno.
 */
static int lookup_by_hand(int pid, int dirfd, bool in_root, const char *path,
			  struct open_how oh)
{
	char name[PATH_MAX], prefix[PATH_MAX], target[PATH_MAX];
	int links = 0;

	if (snprintf(name, sizeof(name), "%s", path) >= (int)sizeof(name))
		return -ENAMETOOLONG;
	oh.resolve |= RESOLVE_NO_SYMLINKS;
	for (;;) {
		size_t i, dir;
		int fd, err;

		err = plain_name(name, sizeof(name));
		if (err)
			return err;
		if (mounts__check_path(pid, name) == -EREMOTE)
			return -EREMOTE;
		/* (O_PATH | O_NOFOLLOW still opens a last component that is a link.) */
		fd = syscall(SYS_openat2, dirfd, at_name(name, in_root), &oh, sizeof(oh));
		if (fd >= 0 || errno != ELOOP)
			return fd >= 0 ? fd : -errno;
		/* The first component that is a link: every prefix before it is none. */
		for (i = 1;; i++) {
			ssize_t len;

			if (name[i] != '/' && name[i] != '\0')
				continue;
			memcpy(prefix, name, i);
			prefix[i] = '\0';
			len = readlinkat(dirfd, at_name(prefix, in_root), target,
					 sizeof(target) - 1);
			if (len >= 0) {
				target[len] = '\0';
				break;
			}
			if (errno != EINVAL)
				return -errno;
			if (name[i] == '\0')
				return -ELOOP;
		}
		if (++links > 40)
			return -ELOOP;
		/* The target, then the rest of the name; a relative one from the link's dir. */
		dir = 0;
		if (target[0] != '/') {
			dir = i;
			while (dir > 0 && name[dir - 1] != '/')
				dir--;
		}
		if (snprintf(prefix, sizeof(prefix), "%.*s%s%s", (int)dir, name, target,
			     name + i) >= (int)sizeof(prefix))
			return -ENAMETOOLONG;
		memcpy(name, prefix, sizeof(name));
	}
}

/*
 * Resolve dirfd/path O_PATH the way how says without waiting on a refused file system;
 * pid's namespace and root are the name's frame (0: leaktop's).  fd, or -errno.
 */
static int resolve(int pid, int dirfd, const char *path, struct open_how oh)
{
	struct open_how cached = oh;
	char in_root[PATH_MAX];
	int fd;

	if (dirfd == AT_FDCWD && !strncmp(path, "/proc/", 6))
		goto lookup;
	cached.resolve |= RESOLVE_CACHED;
	fd = syscall(SYS_openat2, dirfd, path, &cached, sizeof(cached));
	/* EAGAIN: not all in the cache; EINVAL: a kernel before 5.12; ENOSYS: before 5.6. */
	if (fd >= 0 || (errno != EAGAIN && errno != EINVAL && errno != ENOSYS))
		return fd >= 0 ? fd : -errno;
	/* A name of leaktop's namespace: links followed by hand, each name checked. */
	if (dirfd == AT_FDCWD && path[0] == '/')
		return lookup_by_hand(pid, AT_FDCWD, false, path, oh);
	/* A name inside a process's root: the same, in its root. */
	if (oh.resolve & RESOLVE_IN_ROOT) {
		if (snprintf(in_root, sizeof(in_root), "/%s", path) >= (int)sizeof(in_root))
			return -ENAMETOOLONG;
		return lookup_by_hand(pid, dirfd, true, in_root, oh);
	}
	/* Another directory of the caller's (a relative name) is the caller's to trust. */
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
