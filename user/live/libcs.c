// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * libcs.c - finds the C libraries to probe, from /proc/PID/maps, and opens the very file a
 * process maps.
 *
 * A maps line names a file by the path the process sees, which leaktop must not trust: in
 * another mount namespace the same string names another file, an absolute symbolic link
 * met under /proc/PID/root resolves against leaktop's root, a FIFO at the path blocks an
 * open(), a device gets opened, and the name can change between two resolutions.  So the
 * file is opened once, through /proc/PID/map_files/START-END (a link to the mapped file
 * itself, deleted or not); only when leaktop may not follow that link (no CAP_SYS_ADMIN),
 * through the same path in leaktop's namespace or inside the process's root (openat2
 * RESOLVE_IN_ROOT).  Each candidate is opened by live/safe_open.c: only a regular file with
 * the (dev, ino) of the maps line, never blocking.  The caller decodes and attaches that
 * descriptor, never a path.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "live/libcs.h"
#include "live/procmaps.h"
#include "live/safe_open.h"

bool libcs__is_libc_path(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	/* glibc: libc.so.6 or libc-2.NN.so; musl: libc.musl-*.so.1 or ld-musl-*.so.1. */
	if (!strcmp(base, "libc.so.6") || !strncmp(base, "libc.musl-", 10) ||
	    !strncmp(base, "ld-musl-", 8))
		return true;
	return !strncmp(base, "libc-", 5) && strstr(base, ".so") && isdigit((unsigned char)base[5]);
}

void libcs__ref_of_map(int pid, const struct proc_map *m, struct libc_ref *r)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->path, sizeof(r->path), "%s", m->path);
	r->start = m->start;
	r->end = m->end;
	r->dev = m->dev;
	r->ino = m->ino;
	r->pid = pid;
	r->deleted = m->deleted;
}

int libcs__of_pid(int pid, struct libc_ref *out, size_t max, size_t *n)
{
	struct proc_maps maps = {};
	int err = procmaps__read(pid, &maps);

	*n = 0;
	if (err)
		return err;
	for (size_t i = 0; i < maps.n && *n < max; i++) {
		const struct proc_map *m = &maps.v[i];
		bool dup = false;

		if (!m->path || m->path[0] != '/' || !libcs__is_libc_path(m->path))
			continue;
		for (size_t j = 0; j < *n; j++)
			dup |= out[j].dev == m->dev && out[j].ino == m->ino;
		if (!dup)
			libcs__ref_of_map(pid, m, &out[(*n)++]);
	}
	procmaps__free(&maps);
	return 0;
}

int libcs__map_files_path(int pid, uint64_t start, uint64_t end, char *buf, size_t len)
{
	int n;

	if (pid <= 0 || start >= end)
		return -EINVAL;
	n = snprintf(buf, len, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, start, end);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return 0;
}

const char *libcs__name(const struct libc_ref *ref, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", ref->path, ref->deleted ? " (deleted)" : "");
	return buf;
}

/* The ways to a mapped file, in the order they are tried. */
enum libc_way {
	WAY_MAP_FILES,		/* /proc/PID/map_files/START-END: the mapped file itself */
	WAY_HOST_PATH,		/* the same path in leaktop's namespace */
	WAY_IN_ROOT,		/* the path inside /proc/PID/root, never leaving it */
	WAY__COUNT,
};

static const char *const way_names[WAY__COUNT] = {
	[WAY_MAP_FILES]	= "/proc/PID/map_files",
	[WAY_HOST_PATH]	= "the same path here",
	[WAY_IN_ROOT]	= "the path inside its root",
};

/* One way to ref's file, opened read-only into *out when it is the mapped regular file. */
static int open_way(const struct libc_ref *ref, enum libc_way way, int *out)
{
	const struct file_id want = { .dev = ref->dev, .ino = ref->ino };
	char path[64];
	struct stat st;
	int err;

	/* A deleted file's name leads to another file, or to none. */
	if (way != WAY_MAP_FILES && (ref->deleted || ref->path[0] != '/'))
		return -ENOENT;
	if (way == WAY_HOST_PATH)
		return safe_open(AT_FDCWD, ref->path, SAFE_FOLLOW, &want, out);
	if (way == WAY_IN_ROOT)
		return safe_open__in_root(ref->pid, ref->path, &want, out);
	err = libcs__map_files_path(ref->pid, ref->start, ref->end, path, sizeof(path));
	if (err)
		return err;
	err = safe_open(AT_FDCWD, path, SAFE_FOLLOW, &want, out);
	/*
	 * Following the link needs CAP_SYS_ADMIN (or CAP_CHECKPOINT_RESTORE); without it the
	 * kernel says ENOENT, though the entry (the mapping) is there.
	 */
	if (err == -ENOENT && !lstat(path, &st))
		return -EPERM;
	return err;
}

/*
 * The names the process chose are tried only when map_files cannot be followed at all (no
 * capability): a mapping that is gone or holds another file now is no reason to.
 */
static bool try_names_after(int err)
{
	return err == -EPERM || err == -EACCES;
}

int libcs__open(const struct libc_ref *ref, int *fd, char *why, size_t why_len)
{
	char name[PATH_MAX + 16];
	int way, err = 0, first_err = 0;
	bool refused = false;

	*fd = -1;
	/* No process maps it yet (a command's library, before it runs): the path here only. */
	if (ref->pid <= 0) {
		err = open_way(ref, WAY_HOST_PATH, fd);
		if (err == -EINVAL || err == -ESTALE) {
			err = -ESTALE;
			snprintf(why, why_len, "refusing %s: it is not the regular file listed "
				 "(device %u:%u, inode %" PRIu64 ")", ref->path, major(ref->dev),
				 minor(ref->dev), ref->ino);
		} else if (err) {
			snprintf(why, why_len, "cannot open %s: %s", ref->path, strerror(-err));
		}
		return err;
	}
	for (way = 0; way < WAY__COUNT; way++) {
		err = open_way(ref, way, fd);
		if (!err)
			goto out;
		/*
		 * Refused: the mapping itself is now another file, or a name leads to something
		 * that is no regular file (-EINVAL).  A name leading to another regular file is
		 * only a mount namespace with its own files.
		 */
		if (err == -EINVAL) {
			refused = true;
			err = -ESTALE;
		}
		refused |= err == -ESTALE && way == WAY_MAP_FILES;
		if (!first_err)
			first_err = err;
		if (way == WAY_MAP_FILES && !try_names_after(err))
			break;
	}
	libcs__name(ref, name, sizeof(name));
	if (refused) {
		err = -ESTALE;
		snprintf(why, why_len, "refusing %s of process %d: neither %s, %s nor %s leads "
			 "to the regular file it maps (device %u:%u, inode %" PRIu64 "); it stays "
			 "untraced", name, ref->pid, way_names[WAY_MAP_FILES],
			 way_names[WAY_HOST_PATH], way_names[WAY_IN_ROOT], major(ref->dev),
			 minor(ref->dev), ref->ino);
	} else {
		err = first_err;
		snprintf(why, why_len, "cannot open %s of process %d through %s: %s%s", name,
			 ref->pid, way_names[WAY_MAP_FILES], strerror(-err),
			 err == -EPERM || err == -EACCES ?
			 "; run leaktop as root (map_files needs CAP_SYS_ADMIN)" : "");
	}
out:
	return err;
}
