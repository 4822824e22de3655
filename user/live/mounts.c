// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * mounts.c - the file system of a traced process's file without asking it (see mounts.h).
 *
 * statx(AT_STATX_DONT_SYNC, STATX_MNT_ID) gives the mount id from the open file (FUSE answers
 * from its cache, never the daemon); the type comes from a mountinfo file.  Mount ids are
 * global, but each mountinfo lists one namespace's mounts only (those under the reader's
 * root), so the traced process's own /proc/PID/mountinfo is read, else leaktop's.  The
 * entries are cached; each namespace read is kept open, and poll() on it (POLLPRI) tells of
 * any mount or unmount there: then the whole cache is forgotten, as an id freed by an
 * unmount can be given to a new mount.  A namespace kept open keeps its mounts, so at most
 * NS_HELD of them, least recently used out first.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "live/mounts.h"
#include "util/vec.h"

#ifndef STATX_MNT_ID
#define STATX_MNT_ID	0x00001000U
#endif

#define NS_HELD		16		/* mount namespaces whose mountinfo is kept open */
#define MOUNTS_MAX	(1u << 16)	/* cached mounts, all namespaces together */
#define MOUNTINFO_MAX	(64u << 20)	/* a larger mountinfo is not read */

/*
 * File systems leaktop never reads a traced process's file from.  Any wait on them is for
 * a daemon or a server, and killable only: FUSE (any user mounts one through the setuid
 * fusermount3 or in a user namespace, and its daemon can stop answering; fuseblk is FUSE
 * too), and the network file systems, whose server may be gone.  virtiofs is FUSE's
 * protocol to a daemon on the virtual machine's host, which no local user controls, and
 * the root file system of some guests: not refused.
 */
static const struct {
	const char *name;
	bool prefix;		/* name is a prefix: "fuse." covers fuse.sshfs, fuse.gvfsd-fuse */
	const char *why;
} refused_fs[] = {
	{ "fuse",	false,	"FUSE" },
	{ "fuse.",	true,	"FUSE" },
	{ "fuseblk",	false,	"FUSE" },
	{ "nfs",	false,	"network file system" },
	{ "nfs4",	false,	"network file system" },
	{ "cifs",	false,	"network file system" },
	{ "smb3",	false,	"network file system" },
	{ "smbfs",	false,	"network file system" },
	{ "ncpfs",	false,	"network file system" },
	{ "9p",		false,	"network file system" },
	{ "ceph",	false,	"network file system" },
	{ "afs",	false,	"network file system" },
	{ "coda",	false,	"network file system" },
	{ "lustre",	false,	"network file system" },
	{ "glusterfs",	false,	"network file system" },
	{ "orangefs",	false,	"network file system" },
	{ "pvfs2",	false,	"network file system" },
	{ "beegfs",	false,	"network file system" },
	{ "gpfs",	false,	"network file system" },
	{ "davfs",	false,	"network file system" },
};

const char *mounts__refusal(const char *fstype)
{
	for (size_t i = 0; i < sizeof(refused_fs) / sizeof(refused_fs[0]); i++) {
		size_t len = strlen(refused_fs[i].name);

		if (refused_fs[i].prefix ? !strncmp(fstype, refused_fs[i].name, len) :
					   !strcmp(fstype, refused_fs[i].name))
			return refused_fs[i].why;
	}
	return NULL;
}

/* Copy a mountinfo path field of len bytes, its \ooo escapes (space, tab, \n, \\) undone. */
static int unescape(const char *f, size_t len, char *out, size_t out_len)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		char c = f[i];

		if (c == '\\' && i + 3 < len &&
		    f[i + 1] >= '0' && f[i + 1] <= '3' && f[i + 2] >= '0' && f[i + 2] <= '7' &&
		    f[i + 3] >= '0' && f[i + 3] <= '7') {
			c = (char)((f[i + 1] - '0') << 6 | (f[i + 2] - '0') << 3 | (f[i + 3] - '0'));
			i += 3;
		}
		if (o + 1 >= out_len)
			return -ENAMETOOLONG;
		out[o++] = c;
	}
	out[o] = '\0';
	return 0;
}

int mounts__parse_line(const char *line, struct mount_entry *e, char *point, size_t point_len)
{
	unsigned int major, minor;
	const char *sep, *type, *f;
	size_t len;
	int id, parent, n = 0;

	memset(e, 0, sizeof(*e));
	if (sscanf(line, "%d %d %u:%u %n", &id, &parent, &major, &minor, &n) != 4 || !n ||
	    id < 0)
		return -EINVAL;
	/* The optional fields end at a lone "-"; the type follows it. */
	sep = strstr(line + n, " - ");
	if (!sep)
		return -EINVAL;
	type = sep + 3;
	len = strcspn(type, " ");
	if (!len)
		return -EINVAL;
	if (len >= sizeof(e->fstype))
		len = sizeof(e->fstype) - 1;
	memcpy(e->fstype, type, len);
	e->mnt_id = id;
	e->dev = makedev(major, minor);
	if (!point)
		return 0;
	/* Field 4 is the root within the file system, field 5 the mount point. */
	f = line + n;
	f += strcspn(f, " ");
	if (*f != ' ' || f[1] != '/')
		return -EINVAL;
	f++;
	len = strcspn(f, " ");
	return unescape(f, len, point, point_len);
}

/* ---------------------------------------------------------------- the cache */

struct held_ns {
	uint64_t ns_ino;	/* the mount namespace (inode of /proc/PID/ns/mnt) */
	int fd;			/* its mountinfo, open (-1: slot free) */
	bool loaded;		/* its entries are in the cache */
	uint64_t used;		/* last use, for the least recently used */
};

/* Where a refused file system is mounted, as its namespace's mountinfo shows it. */
struct refused_point {
	uint64_t ns_ino;
	char *point;
	char fstype[32];
};

static struct {
	struct mount_entry *v;
	size_t n, cap;
	struct refused_point *points;	/* mount points of refused mounts, per namespace */
	size_t n_points, cap_points;
	struct held_ns held[NS_HELD];
	bool held_init;
	uint64_t tick;
	uint64_t refused;
	char last_refused[32];
} cache;

static void held_init(void)
{
	if (cache.held_init)
		return;
	for (int i = 0; i < NS_HELD; i++)
		cache.held[i].fd = -1;
	cache.held_init = true;
}

static void forget_entries(void)
{
	for (size_t i = 0; i < cache.n_points; i++)
		free(cache.points[i].point);
	free(cache.points);
	cache.points = NULL;
	cache.n_points = 0;
	cache.n = 0;
	for (int i = 0; i < NS_HELD; i++)
		cache.held[i].loaded = false;
}

void mounts__reset(void)
{
	held_init();
	for (int i = 0; i < NS_HELD; i++) {
		if (cache.held[i].fd >= 0)
			close(cache.held[i].fd);
		cache.held[i] = (struct held_ns){ .fd = -1 };
	}
	forget_entries();
	free(cache.v);
	cache.v = NULL;
	cache.n = cache.cap = 0;
	cache.refused = 0;
	cache.last_refused[0] = '\0';
}

/* A mount or unmount in any namespace held: every entry may be stale (ids are reused). */
static void notice_changes(void)
{
	struct pollfd pfd[NS_HELD];
	int n = 0;

	for (int i = 0; i < NS_HELD; i++)
		if (cache.held[i].fd >= 0)
			pfd[n++] = (struct pollfd){ .fd = cache.held[i].fd, .events = POLLPRI };
	if (n && poll(pfd, n, 0) > 0)
		for (int i = 0; i < n; i++)
			if (pfd[i].revents & (POLLPRI | POLLERR)) {
				forget_entries();
				return;
			}
}

static const struct mount_entry *find_id(int mnt_id)
{
	for (size_t i = 0; i < cache.n; i++)
		if (cache.v[i].mnt_id == mnt_id)
			return &cache.v[i];
	return NULL;
}

static const struct mount_entry *find_dev(uint64_t dev)
{
	for (size_t i = 0; i < cache.n; i++)
		if (cache.v[i].dev == dev)
			return &cache.v[i];
	return NULL;
}

static int add_entry(const struct mount_entry *e)
{
	if (find_id(e->mnt_id))
		return 0;
	if (cache.n == cache.cap) {
		if ((cache.cap ? cache.cap * 2 : 256) > MOUNTS_MAX)
			return -ENOSPC;
		if (VEC_RESERVE(cache.v, cache.cap, cache.n + 1, 256))
			return -ENOMEM;
	}
	cache.v[cache.n++] = *e;
	return 0;
}

static int add_point(uint64_t ns_ino, const char *point, const char *fstype)
{
	struct refused_point *v;

	if (cache.n_points >= MOUNTS_MAX)
		return -ENOSPC;
	if (VEC_RESERVE(cache.points, cache.cap_points, cache.n_points + 1, 8))
		return -ENOMEM;
	v = cache.points;
	v[cache.n_points].ns_ino = ns_ino;
	snprintf(v[cache.n_points].fstype, sizeof(v[cache.n_points].fstype), "%s", fstype);
	v[cache.n_points].point = strdup(point);
	if (!v[cache.n_points].point)
		return -ENOMEM;
	cache.n_points++;
	return 0;
}

/* Read an open mountinfo of namespace ns_ino from its start and cache its entries. */
static int load_fd(int fd, uint64_t ns_ino)
{
	size_t cap = 64 << 10, got = 0;
	char *buf = malloc(cap), *line, *nl, point[4096];
	struct mount_entry e;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	if (lseek(fd, 0, SEEK_SET) < 0) {
		err = -errno;
		goto out;
	}
	for (;;) {
		ssize_t n;

		if (got + 1 == cap && (cap * 2 > MOUNTINFO_MAX ||
					VEC_RESERVE(buf, cap, cap * 2, 0))) {
			err = -ENOMEM;
			goto out;
		}
		n = read(fd, buf + got, cap - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			goto out;
		}
		if (!n)
			break;
		got += n;
	}
	buf[got] = '\0';
	for (line = buf; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (!mounts__parse_line(line, &e, point, sizeof(point))) {
			err = add_entry(&e);
			if (!err && mounts__refusal(e.fstype))
				err = add_point(ns_ino, point, e.fstype);
			if (err)
				break;
		}
		if (!nl)
			break;
	}
out:
	free(buf);
	return err;
}

/* The held slot of pid's mount namespace (0: leaktop's), opened and loaded if need be. */
static struct held_ns *held_of(int pid)
{
	char path[64];
	struct held_ns *h = NULL;
	struct stat st;
	int fd, lru = 0;

	if (pid > 0)
		snprintf(path, sizeof(path), "/proc/%d/ns/mnt", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/ns/mnt");
	if (stat(path, &st))
		return NULL;
	for (int i = 0; i < NS_HELD; i++) {
		if (cache.held[i].fd >= 0 && cache.held[i].ns_ino == (uint64_t)st.st_ino)
			h = &cache.held[i];
		else if (cache.held[lru].fd >= 0 &&
			 (cache.held[i].fd < 0 || cache.held[i].used < cache.held[lru].used))
			lru = i;
	}
	if (!h) {
		if (pid > 0)
			snprintf(path, sizeof(path), "/proc/%d/mountinfo", pid);
		else
			snprintf(path, sizeof(path), "/proc/self/mountinfo");
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return NULL;
		h = &cache.held[lru];
		if (h->fd >= 0) {
			/* Its entries go too: nothing would tell of their unmount any more. */
			close(h->fd);
			forget_entries();
		}
		*h = (struct held_ns){ .ns_ino = st.st_ino, .fd = fd };
	}
	h->used = ++cache.tick;
	if (!h->loaded) {
		/* Loaded now: a change before this read is in it, one after is polled. */
		struct pollfd pfd = { .fd = h->fd, .events = POLLPRI };

		poll(&pfd, 1, 0);
		if (load_fd(h->fd, h->ns_ino)) {
			/* Half a table would say "not refused" of what it left out. */
			forget_entries();
			return NULL;
		}
		h->loaded = true;
	}
	return h;
}

/* The mount of id mnt_id (dev: by device instead, mnt_id < 0) as pid sees it, or NULL. */
static const struct mount_entry *lookup(int pid, int mnt_id, uint64_t dev)
{
	const struct mount_entry *e;

	held_init();
	notice_changes();
	e = mnt_id >= 0 ? find_id(mnt_id) : find_dev(dev);
	if (e)
		return e;
	if (pid > 0 && held_of(pid)) {
		e = mnt_id >= 0 ? find_id(mnt_id) : find_dev(dev);
		if (e)
			return e;
	}
	if (!held_of(0))
		return NULL;
	return mnt_id >= 0 ? find_id(mnt_id) : find_dev(dev);
}

int mounts__check_fd(int pid, int fd)
{
	const struct mount_entry *e;
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID,
		  &stx))
		return -errno;
	if (!(stx.stx_mask & STATX_MNT_ID))
		return -EOPNOTSUPP;
	e = lookup(pid, (int)stx.stx_mnt_id, 0);
	if (!e)
		return -ENOENT;
	if (!mounts__refusal(e->fstype))
		return 0;
	cache.refused++;
	snprintf(cache.last_refused, sizeof(cache.last_refused), "%s", e->fstype);
	return -EREMOTE;
}

/* Is dir (a mount point) path itself or a directory above it? */
static bool is_under(const char *path, const char *dir)
{
	size_t len = strlen(dir);

	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (len == 1 && dir[0] == '/')
		return true;
	return !strncmp(path, dir, len) && (path[len] == '/' || !path[len]);
}

int mounts__check_path(int pid, const char *path)
{
	const struct held_ns *h;

	/* Only a plain absolute name says by its text where it leads. */
	if (path[0] != '/' || strstr(path, "/../") || strstr(path, "/./") ||
	    (strlen(path) >= 3 && !strcmp(path + strlen(path) - 3, "/..")))
		return -EINVAL;
	held_init();
	notice_changes();
	h = held_of(pid);
	if (!h)
		return -ENOENT;
	for (size_t i = 0; i < cache.n_points; i++)
		if (cache.points[i].ns_ino == h->ns_ino && is_under(path, cache.points[i].point)) {
			cache.refused++;
			snprintf(cache.last_refused, sizeof(cache.last_refused), "%s",
				 cache.points[i].fstype);
			return -EREMOTE;
		}
	return 0;
}

bool mounts__map_refused(int pid, const struct proc_map *pm)
{
	const struct mount_entry *e;

	if (!pm->path || pm->path[0] != '/' || (!pm->dev && !pm->ino))
		return false;
	e = lookup(pid, -1, pm->dev);
	return e && mounts__refusal(e->fstype);
}

uint64_t mounts__refused_count(void)
{
	return cache.refused;
}

const char *mounts__last_refused_fstype(void)
{
	return cache.last_refused;
}
