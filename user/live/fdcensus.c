// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * fdcensus.c - the fd census: each live image's tracked descriptors reconciled with
 * /proc/PID/fd.  A record whose descriptor /proc shows closed (a close leaktop did not see:
 * a lost event, a close from another process) is deleted from the `fds` map here, and
 * counted as a repair in the sample; open ones are classified (file, socket, pipe, ...) with
 * an example target.  Sockets of another process are described through a duplicate taken
 * with pidfd_getfd, never by touching the target.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/clock.h"
#include "live/collector.h"
#include "live/fdcensus.h"
#include "live/fdsys.h"
#include "live/procfs.h"
#include "live/safe_open.h"
#include "util/search.h"
#include "util/vec.h"

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

/* Sorted open descriptor numbers of pid. */
static int open_fds(uint32_t pid, int **out, size_t *n)
{
	char path[64];
	struct dirent *de;
	size_t cap = 64, cnt = 0;
	int *v = malloc(cap * sizeof(*v));
	DIR *d;

	if (!v)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/proc/%u/fd", pid);
	d = opendir(path);
	if (!d) {
		free(v);
		return errno == ENOENT ? -ESRCH : -errno;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		if (VEC_RESERVE(v, cap, cnt + 1, 0))
			break;
		v[cnt++] = atoi(de->d_name);
	}
	closedir(d);
	qsort(v, cnt, sizeof(*v), cmp_int);
	*out = v;
	*n = cnt;
	return 0;
}

static const char *sock_family(int f)
{
	static const struct { int family; const char *name; } names[] = {
		{ AF_UNIX, "unix" }, { AF_INET, "inet" }, { AF_INET6, "inet6" },
		{ AF_NETLINK, "netlink" }, { AF_PACKET, "packet" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].family == f)
			return names[i].name;
	return "other";
}

static const char *sock_type(int t)
{
	switch (t) {
	case SOCK_STREAM: return "stream";
	case SOCK_DGRAM: return "dgram";
	case SOCK_SEQPACKET: return "seqpacket";
	case SOCK_RAW: return "raw";
	default: return "other";
	}
}

/*
 * Family and type of a socket of another process: a duplicate taken with pidfd_getfd (the
 * target is not touched), asked with getsockopt, and closed.
 */
static void describe_socket(int pidfd, int fd, char *buf, size_t len)
{
	int dup, family = -1, type = -1;
	socklen_t sl = sizeof(int);

	if (pidfd < 0)
		return;
	dup = syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	if (dup < 0)
		return;
	if (!getsockopt(dup, SOL_SOCKET, SO_DOMAIN, &family, &sl)) {
		sl = sizeof(int);
		getsockopt(dup, SOL_SOCKET, SO_TYPE, &type, &sl);
		snprintf(buf, len, "%s %s", sock_family(family), sock_type(type));
	}
	close(dup);
}

/*
 * Is pid on its way out?  The kernel drops a process's memory (statm reads zeros) before it
 * closes its files, so a listing of /proc/PID/fd taken before this check and missing fds
 * is only trusted if the memory is still there.
 */
static bool process_exiting(uint32_t pid)
{
	struct proc_counters pc;

	return procfs__counters(pid, &pc) || pc.vm_bytes == 0;
}

/*
 * Reconcile image (pid, gen)'s tracked descriptors in s with /proc/PID/fd: records of
 * descriptors no longer open are deleted from the map (repairs), open ones are classified.
 * 0 or -errno.
 */
static int census_one(struct collector *c, const struct sample *s, uint32_t pid, uint64_t gen,
		      struct fd_census *out)
{
	size_t n_open = 0, lo = 0, hi = s->n_fds, tracked_open = 0;
	int *open = NULL, pidfd = -1, err;
	bool exiting_checked = false, exiting = false;

	memset(out, 0, sizeof(*out));
	err = open_fds(pid, &open, &n_open);
	if (err)
		return err;
	/* First record of pid. */
	lo = SEARCH_FIRST(hi, mid, s->fds[mid].pid < pid);
	for (size_t i = lo; i < s->n_fds && s->fds[i].pid == pid; i++) {
		const struct sample_fd *r = &s->fds[i];
		char link[128], target[96] = "";
		struct fd_seen *f;
		mode_t mode;
		ssize_t ln;

		if (r->gen != gen)
			continue;
		if (!bsearch(&r->fd, open, n_open, sizeof(int), cmp_int)) {
			if (!exiting_checked) {
				exiting_checked = true;
				exiting = process_exiting(pid);
			}
			/* An exiting process closes everything: that is not a missed close. */
			if (exiting)
				continue;
			/*
			 * Closed without a close we saw: only the one who deletes repairs it, and
			 * only the record read in the sample (the number may be open again by now,
			 * after the listing, from another site).
			 */
			if (collector__forget_fd(c, r))
				continue;
			if (!VEC_RESERVE(out->repaired, out->cap_repaired, out->n_repaired + 1, 8))
				out->repaired[out->n_repaired++] = r->stack_hash;
			continue;
		}
		tracked_open++;
		if (VEC_RESERVE(out->open, out->cap_open, out->n_open + 1, 8))
			continue;
		f = &out->open[out->n_open++];
		memset(f, 0, sizeof(*f));
		f->stack_hash = r->stack_hash;
		f->fd = r->fd;
		snprintf(link, sizeof(link), "/proc/%u/fd/%d", pid, r->fd);
		ln = readlink(link, target, sizeof(target) - 1);
		target[ln > 0 ? ln : 0] = '\0';
		f->type = fdsys__classify(target);
		/* The type from the inode: stat would ask a FUSE daemon, which may never answer. */
		if (f->type == FD_FILE && !safe_open__link_id(link, NULL, &mode) &&
		    mode == S_IFDIR)
			f->type = FD_DIR;
		snprintf(f->target, sizeof(f->target), "%s", target);
		if (f->type == FD_SOCKET) {
			if (pidfd < 0)
				pidfd = syscall(SYS_pidfd_open, pid, 0);
			describe_socket(pidfd, r->fd, f->target, sizeof(f->target));
		}
	}
	if (pidfd >= 0)
		close(pidfd);
	free(open);
	/* A listing taken while the process closed everything on its way out says nothing. */
	if (exiting || (!exiting_checked && process_exiting(pid))) {
		fd_census__free(out);
		return -ESRCH;
	}
	out->untracked = n_open - tracked_open;
	out->valid = true;
	return 0;
}

int fdcensus__fill(struct collector *c, struct sample *s)
{
	uint64_t t0 = monotonic_ns();

	for (size_t i = 0; i < s->n_procs; i++) {
		struct sample_proc *p = &s->procs[i];

		fd_census__free(&p->census);
		if (!p->alive || !p->read)
			continue;
		p->census_done = !census_one(c, s, p->pid, p->gen, &p->census);
	}
	s->timing.census_ms = (monotonic_ns() - t0) / 1e6;
	return 0;
}
