// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * ptrace_stop.c - a bounded stop of a whole process for the reachability scan.
 *
 * Threads are seized one by one from /proc/PID/task (without PTRACE_O_EXITKILL: if leaktop
 * dies the kernel detaches it and the target runs on) and interrupted; the task list is
 * read again until it holds no thread not yet stopped, as a running thread may have
 * created one meanwhile.  A signal that arrives during the stop is handed back at detach.
 * A thread that did not stop in time (uninterruptible sleep) cannot be detached until it
 * does, and a thread that died while stopped (SIGKILL) stays a traced zombie until its tracer
 * waits for it: both are kept in a list, detached as soon as they stop or reaped, at every
 * reap (the run loop calls it each turn) and begin.  Memory is copied in chunks, and the
 * deadline is checked between them.  An exit status a wait of ours collects (the `-- CMD`
 * child is also our child) is kept for its parent, the launcher.
 * Nothing is ever written to the target.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <elf.h>
#include <sys/wait.h>

#include "live/ptrace_stop.h"
#include "util/clock.h"
#include "util/vec.h"

/*
 * The vector registers of a stopped thread into t->vec: XMM0-15 from the XSAVE area's legacy
 * region and, when the thread's AVX state is in use, the upper halves of YMM0-15 (the
 * standard, uncompacted layout ptrace hands out: fixed offsets).  A compiler may keep a
 * pointer only there (a struct copy, memcpy's registers).  Unreadable: none (n_vec 0), or
 * XMM alone through PTRACE_GETFPREGS.
 */
#define XSAVE_XMM_OFF		160
#define XSAVE_HDR_OFF		512
#define XSAVE_YMM_HI_OFF	576
#define XSAVE_BYTES		4096

static void read_vector_regs(struct ptrace_thread *t)
{
	static uint8_t area[XSAVE_BYTES];
	struct iovec iov = { area, sizeof(area) };
	struct user_fpregs_struct fp;
	uint64_t bv;

	t->n_vec = 0;
	if (!ptrace(PTRACE_GETREGSET, t->tid, (void *)NT_X86_XSTATE, &iov) &&
	    iov.iov_len >= XSAVE_HDR_OFF + 8) {
		memcpy(t->vec, area + XSAVE_XMM_OFF, 256);
		t->n_vec = 32;
		memcpy(&bv, area + XSAVE_HDR_OFF, sizeof(bv));
		if ((bv & 4) && iov.iov_len >= XSAVE_YMM_HI_OFF + 256) {
			memcpy(t->vec + 32, area + XSAVE_YMM_HI_OFF, 256);
			t->n_vec = 64;
		}
		return;
	}
	if (!ptrace(PTRACE_GETFPREGS, t->tid, NULL, &fp)) {
		memcpy(t->vec, fp.xmm_space, 256);
		t->n_vec = 32;
	}
}

/* Seized threads that were still running at end: detached once they stop. */
static int *pending;
static size_t n_pending, cap_pending;

/* Exit statuses our waits collected, newest last (a ring: only recent ones matter). */
#define EXITS_KEPT 16
static struct { int pid, status; } exits[EXITS_KEPT];
static size_t n_exits;

static void note_exit(int pid, int status)
{
	exits[n_exits++ % EXITS_KEPT] = (typeof(exits[0])){ pid, status };
}

bool ptrace_stop__exit_status(int pid, int *status)
{
	for (size_t i = 0; i < EXITS_KEPT && i < n_exits; i++)
		if (exits[i].pid == pid) {
			*status = exits[i].status;
			return true;
		}
	return false;
}

/* TracerPid of pid: 0 if none, -errno if unreadable. */
static long tracer_of(int pid)
{
	char path[64], line[256];
	long tracer = -ESRCH;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "TracerPid: %ld", &tracer) == 1)
			break;
	fclose(f);
	return tracer;
}

static int yama_scope(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static bool seized(const struct ptrace_stop *s, int tid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->threads[i].tid == tid)
			return true;
	return false;
}

/* Wait (polling, bounded by the deadline) for tid's stop after PTRACE_INTERRUPT. */
static int wait_stopped(struct ptrace_stop *s, struct ptrace_thread *t)
{
	struct timespec nap = { 0, 100 * 1000 };

	for (;;) {
		int status, r = waitpid(t->tid, &status, __WALL | WNOHANG);

		if (r < 0)
			return -errno;
		if (r == t->tid) {
			if (WIFEXITED(status) || WIFSIGNALED(status)) {
				note_exit(t->tid, status);
				return -ESRCH;
			}
			/* A signal-delivery stop: the signal goes back at detach. */
			if (WIFSTOPPED(status) && !(status >> 16))
				t->sig = WSTOPSIG(status);
			t->stopped = true;
			return 0;
		}
		if (monotonic_ns() > s->deadline_ns)
			return -ETIME;
		nanosleep(&nap, NULL);
	}
}

/* Seize and stop every thread of the task list not already stopped; how many were new. */
static long stop_new_threads(struct ptrace_stop *s, char *msg, size_t msg_len)
{
	char path[64];
	struct dirent *de;
	long added = 0;
	int err = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", s->pid);
	d = opendir(path);
	if (!d) {
		snprintf(msg, msg_len, "process %d exited", s->pid);
		return -ESRCH;
	}
	while ((de = readdir(d))) {
		struct ptrace_thread *t;
		int tid = atoi(de->d_name);

		if (tid <= 0 || seized(s, tid))
			continue;
		if (VEC_RESERVE(s->threads, s->cap, s->n + 1, 16)) {
			err = -ENOMEM;
			break;
		}
		if (ptrace(PTRACE_SEIZE, tid, NULL, NULL)) {
			if (errno == ESRCH)	/* the thread exited meanwhile */
				continue;
			err = -errno;
			if (err == -EPERM && yama_scope() > 0)
				snprintf(msg, msg_len, "ptrace of process %d is not allowed "
					 "(kernel.yama.ptrace_scope=%d)", s->pid, yama_scope());
			else
				snprintf(msg, msg_len, "cannot ptrace thread %d of process %d: %s",
					 tid, s->pid, strerror(errno));
			break;
		}
		t = &s->threads[s->n++];
		memset(t, 0, sizeof(*t));
		t->tid = tid;
		added++;
		if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) && errno != ESRCH) {
			err = -errno;
			snprintf(msg, msg_len, "cannot interrupt thread %d: %s", tid,
				 strerror(errno));
			break;
		}
		err = wait_stopped(s, t);
		if (err == -ESRCH) {		/* exited: not ours any more */
			s->n--;
			err = 0;
			continue;
		}
		if (err) {
			snprintf(msg, msg_len, "thread %d of process %d did not stop within the "
				 "scan's time limit", tid, s->pid);
			break;
		}
		if (ptrace(PTRACE_GETREGS, tid, NULL, &t->regs)) {
			err = -errno;
			snprintf(msg, msg_len, "cannot read the registers of thread %d: %s", tid,
				 strerror(errno));
			break;
		}
		read_vector_regs(t);
	}
	closedir(d);
	return err ? err : added;
}

size_t ptrace_stop__reap(void)
{
	for (size_t i = 0; i < n_pending;) {
		int status, r = waitpid(pending[i], &status, __WALL | WNOHANG);
		int sig = 0;

		if (r == 0) {		/* still running: the interrupt is yet to take effect */
			i++;
			continue;
		}
		if (r == pending[i] && WIFSTOPPED(status)) {
			if (!(status >> 16))
				sig = WSTOPSIG(status);
			ptrace(PTRACE_DETACH, pending[i], NULL, (void *)(uintptr_t)sig);
		} else if (r == pending[i]) {
			note_exit(r, status);
		}
		pending[i] = pending[--n_pending];
	}
	return n_pending;
}

void ptrace_stop__stopped(int tid, int status)
{
	int sig = WIFSTOPPED(status) && !(status >> 16) ? WSTOPSIG(status) : 0;

	for (size_t i = 0; i < n_pending; i++)
		if (pending[i] == tid) {
			pending[i] = pending[--n_pending];
			break;
		}
	ptrace(PTRACE_DETACH, tid, NULL, (void *)(uintptr_t)sig);
}

static void defer_detach(int tid)
{
	if (VEC_RESERVE(pending, cap_pending, n_pending + 1, 16))
		return;	/* detached when leaktop exits */
	pending[n_pending++] = tid;
}

int ptrace_stop__begin(struct ptrace_stop *s, int pid, unsigned int max_ms, char *msg,
		       size_t msg_len)
{
	long tracer, r;

	ptrace_stop__reap();
	memset(s, 0, sizeof(*s));
	s->pid = pid;
	tracer = tracer_of(pid);
	if (tracer < 0) {
		snprintf(msg, msg_len, "process %d does not exist", pid);
		return -ESRCH;
	}
	if (tracer == getpid()) {
		snprintf(msg, msg_len, "process %d has not yet stopped for the previous scan, "
			 "which gave up on it", pid);
		return -EBUSY;
	}
	if (tracer > 0) {
		snprintf(msg, msg_len, "process %d is already being traced by process %ld "
			 "(a debugger?)", pid, tracer);
		return -EBUSY;
	}
	s->start_ns = monotonic_ns();
	s->deadline_ns = s->start_ns + (uint64_t)max_ms * 1000000ULL;
	do {
		r = stop_new_threads(s, msg, msg_len);
	} while (r > 0);
	if (!r && !s->n) {
		snprintf(msg, msg_len, "process %d has no thread left to stop", pid);
		r = -ESRCH;
	}
	if (r < 0) {
		ptrace_stop__end(s);
		return r;
	}
	return 0;
}

int ptrace_stop__overdue(const struct ptrace_stop *s)
{
	return monotonic_ns() > s->deadline_ns;
}

int ptrace_stop__read(const struct ptrace_stop *s, uint64_t addr, void *buf, size_t len,
		      size_t *copied)
{
	const size_t page = 4096;
	size_t done = 0, skip;

	*copied = 0;
	while (done < len) {
		size_t want = len - done < PTRACE_STOP_CHUNK ? len - done : PTRACE_STOP_CHUNK;
		struct iovec local = { (char *)buf + done, want };
		struct iovec remote = { (void *)(uintptr_t)(addr + done), want };
		ssize_t n;

		if (ptrace_stop__overdue(s))
			return -ETIME;
		n = process_vm_readv(s->pid, &local, 1, &remote, 1, 0);

		if (n > 0) {
			done += n;
			*copied = done;
			continue;
		}
		if (n < 0 && errno == ESRCH)
			return -ESRCH;
		/* An unreadable page: zeros, and on with the next one. */
		skip = page - ((addr + done) & (page - 1));
		if (skip > len - done)
			skip = len - done;
		memset((char *)buf + done, 0, skip);
		done += skip;
		*copied = done;
	}
	return 0;
}

double ptrace_stop__end(struct ptrace_stop *s)
{
	double ms;

	for (size_t i = 0; i < s->n; i++) {
		int tid = s->threads[i].tid, status;

		if (!s->threads[i].stopped) {
			defer_detach(tid);
			continue;
		}
		if (!ptrace(PTRACE_DETACH, tid, NULL, (void *)(uintptr_t)s->threads[i].sig))
			continue;
		/* Killed while stopped: a traced zombie, ours to wait for (now, or at a reap). */
		if (errno == ESRCH) {
			int r = waitpid(tid, &status, __WALL | WNOHANG);

			if (r == tid)
				note_exit(tid, status);
			else if (r == 0)
				defer_detach(tid);
		}
	}
	ms = s->start_ns ? (monotonic_ns() - s->start_ns) / 1e6 : 0;
	free(s->threads);
	s->threads = NULL;
	s->n = s->cap = 0;
	return ms;
}
