// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * tracefs.c - owns leaktop's uprobe event definitions in tracefs and the perf events opened
 * on them for `--` (CMD and its descendants), and finds the kernel's own events there (the
 * per-syscall tracepoints the fd and mmap programs attach to).
 *
 * Why tracefs: a perf event of the uprobe PMU, or a uprobe_multi link with a pid, runs its
 * BPF program only in the process it names, not in the children that inherit it.  Every perf
 * event opened on one tracefs-defined event shares that event's BPF program array, so an
 * event opened on CMD with attr.inherit runs the programs in every task CMD creates from
 * then on; the kernel's uprobe filter matches those tasks' memory, so breakpoints go into the
 * tree's processes only (fork keeps them, exec re-inserts them), and nowhere else.
 *
 * tracefs is reached without touching the system's mounts: a detached mount of our own
 * (fsopen/fsmount: a descriptor, never attached to any directory), else one already
 * mounted.  Definitions are named "leaktop_<pid>/..." and removed at exit; a killed leaktop
 * leaves them behind, inert (no perf event, no breakpoint), and the next start removes the
 * groups of pids that no longer run.  uprobe_events is only ever appended to: opening it
 * with O_TRUNC would remove everyone's probes.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>

#include "live/tracefs.h"
#include "util/vec.h"

#define LT_TRACEFS_MAGIC	0x74726163
#define LT_FSOPEN_CLOEXEC	0x1
#define LT_FSCONFIG_CMD_CREATE	6
#define LT_FSMOUNT_CLOEXEC	0x1
#define LT_MOUNT_ATTR_NOSUID	0x2
#define LT_MOUNT_ATTR_NODEV	0x4
#define LT_MOUNT_ATTR_NOEXEC	0x8
#define GROUP_PREFIX		"leaktop_"
/* How long a definition may stay busy after its last perf event was closed. */
#define REMOVE_TRIES		20
#define REMOVE_WAIT_NS		5000000L

struct tracefs {
	int dir;		/* the tracefs root */
	int events;		/* uprobe_events, opened for appending */
	char group[32];
};

static const char *const mounted_at[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

/* A detached mount of tracefs: a directory descriptor no path leads to. */
static int mount_detached(void)
{
	int fs, mnt;

	fs = syscall(__NR_fsopen, "tracefs", LT_FSOPEN_CLOEXEC);
	if (fs < 0)
		return -errno;
	mnt = -1;
	if (!syscall(__NR_fsconfig, fs, LT_FSCONFIG_CMD_CREATE, NULL, NULL, 0))
		mnt = syscall(__NR_fsmount, fs, LT_FSMOUNT_CLOEXEC,
			      LT_MOUNT_ATTR_NOSUID | LT_MOUNT_ATTR_NODEV | LT_MOUNT_ATTR_NOEXEC);
	if (mnt < 0)
		mnt = -errno;
	close(fs);
	return mnt;
}

/* A tracefs root already mounted (statfs says tracefs), or -errno. */
static int open_mounted(void)
{
	struct statfs sf;
	int err = -ENOENT;

	for (size_t i = 0; i < sizeof(mounted_at) / sizeof(mounted_at[0]); i++) {
		int fd = open(mounted_at[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (fd < 0)
			continue;
		if (!fstatfs(fd, &sf) && sf.f_type == LT_TRACEFS_MAGIC)
			return fd;
		close(fd);
	}
	return err;
}

int tracefs__root(void)
{
	int dir = mount_detached(), err = dir;

	if (dir < 0)
		dir = open_mounted();
	/* The detached mount's failure says more than "none mounted" (ENOENT). */
	return dir < 0 ? err : dir;
}

int tracefs__event_id(int root, const char *group, const char *name, int *id)
{
	char path[160], buf[32];
	int fd, err = 0;
	ssize_t n;

	if ((size_t)snprintf(path, sizeof(path), "events/%s/%s/id", group, name) >= sizeof(path))
		return -ENAMETOOLONG;
	fd = openat(root, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0) {
		err = n < 0 ? -errno : -EIO;
		goto out;
	}
	buf[n] = '\0';
	if (sscanf(buf, "%d", id) != 1)
		err = -EINVAL;
out:
	close(fd);
	return err;
}

int tracefs__open(struct tracefs **out)
{
	struct tracefs *t;
	struct stat st;
	int err;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->events = -1;
	t->dir = tracefs__root();
	if (t->dir < 0) {
		err = t->dir;
		goto fail;
	}
	t->events = openat(t->dir, "uprobe_events", O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (t->events < 0) {
		err = -errno;
		goto fail;
	}
	if (fstat(t->events, &st) || !S_ISREG(st.st_mode)) {
		err = -EINVAL;
		goto fail;
	}
	snprintf(t->group, sizeof(t->group), GROUP_PREFIX "%d", (int)getpid());
	*out = t;
	return 0;
fail:
	if (t->events >= 0)
		close(t->events);
	if (t->dir >= 0)
		close(t->dir);
	free(t);
	return err;
}

/* One command to uprobe_events; 0 or -errno. */
static int command(struct tracefs *t, const char *cmd)
{
	size_t len = strlen(cmd);
	ssize_t n = write(t->events, cmd, len);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/* The whole of uprobe_events (malloc'd, NUL-terminated), or NULL. */
static char *read_definitions(struct tracefs *t)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	int fd = openat(t->dir, "uprobe_events", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n;

	if (fd < 0 || !buf)
		goto fail;
	for (;;) {
		if (cap - len < 2 && VEC_RESERVE(buf, cap, cap * 2, 0))
			goto fail;
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail;
		if (n == 0)
			break;
		len += n;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
fail:
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

/*
 * Remove every event of group, one "-:GROUP/NAME" each (older kernels know no removal of a
 * whole group).  With retry_busy, a definition busy a moment after our perf events on it
 * were closed is tried again; another leaktop's (one in another pid namespace looks dead
 * to us) stays busy and stays.
 */
static int remove_group(struct tracefs *t, const char *group, bool retry_busy)
{
	struct timespec wait = { 0, REMOVE_WAIT_NS };
	char *defs = read_definitions(t), *line, *save = NULL;
	size_t glen = strlen(group);
	int err = 0;

	if (!defs)
		return -EIO;
	for (line = strtok_r(defs, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char cmd[160], *name = strchr(line, ':'), *end;
		int e;

		if (!name || strncmp(name + 1, group, glen) || name[1 + glen] != '/')
			continue;
		name += 1 + glen + 1;
		end = strchr(name, ' ');
		if (!end || end - name >= 96)
			continue;
		snprintf(cmd, sizeof(cmd), "-:%s/%.*s", group, (int)(end - name), name);
		for (int i = 0; (e = command(t, cmd)) == -EBUSY && retry_busy && i < REMOVE_TRIES; i++)
			nanosleep(&wait, NULL);
		if (e && !err)
			err = e;
	}
	free(defs);
	return err;
}

int tracefs__remove_stale(struct tracefs *t)
{
	char *defs = read_definitions(t), *p;
	char done[64][32];
	int n_done = 0, removed = 0;

	if (!defs)
		return 0;
	for (p = defs; (p = strstr(p, ":" GROUP_PREFIX)); p++) {
		char group[32], *end;
		long pid = strtol(p + 1 + strlen(GROUP_PREFIX), &end, 10);
		bool seen = false;

		if (*end != '/' || pid <= 0 || pid > 0x7fffffff)
			continue;
		if (!kill((pid_t)pid, 0) || errno != ESRCH)
			continue;
		snprintf(group, sizeof(group), GROUP_PREFIX "%ld", pid);
		for (int i = 0; i < n_done; i++)
			seen |= !strcmp(done[i], group);
		if (seen || n_done == 64)
			continue;
		strcpy(done[n_done++], group);
		removed += !remove_group(t, group, false);
	}
	free(defs);
	return removed;
}

void tracefs__close(struct tracefs *t)
{
	if (!t)
		return;
	remove_group(t, t->group, true);
	close(t->events);
	close(t->dir);
	free(t);
}

int tracefs__define(struct tracefs *t, const char *name, bool ret_probe, const char *path,
		    uint64_t offset, int *id)
{
	char cmd[256];
	int err;

	snprintf(cmd, sizeof(cmd), "%c:%s/%s %s:0x%llx", ret_probe ? 'r' : 'p', t->group, name,
		 path, (unsigned long long)offset);
	err = command(t, cmd);
	if (err)
		return err;
	return tracefs__event_id(t->dir, t->group, name, id);
}

/* perf_event_open of a tracefs event on pid; a descriptor or -errno. */
static int open_event(const struct perf_event_attr *attr, int pid)
{
	long fd = syscall(__NR_perf_event_open, attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : (int)fd;
}

/*
 * Why an inherited event asks for PERF_SAMPLE_READ (it is never sampled: no period, no
 * buffer): the kernel treats the perf contexts of a task and of a child that inherited all of
 * its events as clones, and when it switches straight from one to the other it swaps them
 * instead of scheduling their events out and in.  Each event still names the task it was
 * made for (the uprobe filter matches that task's memory), but it now lives in the other
 * task's context: when the child exits, it closes the parent's events, and the uprobe filter,
 * left with no event of the parent's memory, takes the breakpoints out of the parent (a
 * descendant of CMD that ran a short-lived program lost its probes; CMD itself, whose
 * children are no clones, never did).  A context holding an inherited event with
 * PERF_SAMPLE_READ is never swapped (Linux 6.12 and later); older kernels refuse the
 * combination (EINVAL): the event is opened without it, and *swappable is set.
 */
int tracefs__open_event(int id, int pid, bool inherit, bool *swappable)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
		.config = (uint64_t)id,
		.disabled = 1,
		.inherit = inherit,
		.sample_type = inherit ? PERF_SAMPLE_READ | PERF_SAMPLE_TID : 0,
	};
	int fd = open_event(&attr, pid);

	if (fd == -EINVAL && inherit) {
		attr.sample_type = 0;
		fd = open_event(&attr, pid);
		if (fd >= 0 && swappable)
			*swappable = true;
	}
	return fd;
}

int tracefs__open_system_event(int id)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
		.config = (uint64_t)id,
	};
	/* One CPU's event: the programs attached to a tracepoint run on every CPU. */
	long fd = syscall(__NR_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : (int)fd;
}
