// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * safe_open.c - opens files whose names traced processes chose (see safe_open.h): resolve
 * O_PATH (no FIFO wait, no device open, no side effect), check fstat (regular file, and
 * the expected device and inode), then reopen that very inode read-only through
 * /proc/self/fd with O_NONBLOCK | O_NOCTTY.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/magic.h>
#include <linux/openat2.h>

#include "live/safe_open.h"

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

int safe_open(int dirfd, const char *path, enum safe_how how, const struct file_id *want,
	      int *fd)
{
	struct open_how oh;
	struct stat st, again;
	char self[32];
	int pathfd, err = 0;

	*fd = -1;
	if ((unsigned int)how >= SAFE__COUNT || !path || !*path)
		return -EINVAL;
	oh = how_of[how];
	pathfd = syscall(SYS_openat2, dirfd, path, &oh, sizeof(oh));
	/* Kernels before 5.6: the ways that need no resolve flags still work. */
	if (pathfd < 0 && errno == ENOSYS && !oh.resolve)
		pathfd = openat(dirfd, path, (int)oh.flags);
	if (pathfd < 0)
		return -errno;
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

int safe_open__in_root(int pid, const char *path, const struct file_id *want, int *fd)
{
	char root_path[32];
	int root, err;

	*fd = -1;
	snprintf(root_path, sizeof(root_path), "/proc/%d/root", pid);
	root = open(root_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -errno;
	err = safe_open(root, path, SAFE_IN_ROOT, want, fd);
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
