// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * calibrate.c - what one allocator probe hit costs on this machine, measured at start-up.
 *
 * A child of leaktop's calls its libc's malloc and free (libc's own, looked up with dlsym:
 * leaktop's allocator is linked into its executable) in a timed loop, once untraced and once
 * with the allocator probes attached to it alone; the difference per probe entry is the
 * trap's cost (the entry trap, the return probe's, the kernel's single-step or emulation of
 * the probed instruction), which no BPF statistic shows.  The BPF programs recognise the
 * child (loader__set_calibration_tgid) and only count its hits, so it never appears as a
 * traced process; their own run time is measured separately (bpf_stats).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "live/calibrate.h"
#include "live/libcs.h"
#include "live/loader.h"
#include "util/msg.h"
#include "util/clock.h"

#define CALIB_PAIRS	5000	/* malloc+free pairs per timed loop (about 0.1 s traced) */
#define CALIB_ROUNDS	3	/* the fastest of these loops counts (others ran meanwhile) */
#define CALIB_WAIT_MS	5000	/* the longest leaktop waits for one of the child's results */

typedef void *(*malloc_fn)(size_t);
typedef void (*free_fn)(void *);

/* The child's timed loop: ns for n pairs of libc's malloc(64) and free, the fastest of
 * `rounds` (what else the machine runs only ever makes a loop slower). */
static uint64_t timed_pairs(malloc_fn m, free_fn f, unsigned int n, int rounds)
{
	uint64_t best = UINT64_MAX;

	for (int r = 0; r < rounds; r++) {
		uint64_t t0 = monotonic_ns(), ns;

		for (unsigned int i = 0; i < n; i++) {
			void *volatile p = m(64);

			f(p);
		}
		ns = monotonic_ns() - t0;
		best = ns < best ? ns : best;
	}
	return best;
}

/* The child: untraced loop, report, wait for "go" (probes attached), traced loop, report. */
static void child_main(int go_fd, int out_fd)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	malloc_fn m = libc ? (malloc_fn)dlsym(libc, "malloc") : NULL;
	free_fn f = libc ? (free_fn)dlsym(libc, "free") : NULL;
	uint64_t ns[2];
	char go;

	if (!m || !f)
		_exit(1);
	timed_pairs(m, f, CALIB_PAIRS / 10, 1);	/* warm: libc's arena exists */
	ns[0] = timed_pairs(m, f, CALIB_PAIRS, CALIB_ROUNDS);
	if (write(out_fd, &ns[0], sizeof(ns[0])) != sizeof(ns[0]))
		_exit(1);
	if (read(go_fd, &go, 1) != 1)
		_exit(1);
	ns[1] = timed_pairs(m, f, CALIB_PAIRS, CALIB_ROUNDS);
	if (write(out_fd, &ns[1], sizeof(ns[1])) != sizeof(ns[1]))
		_exit(1);
	_exit(0);
}

/* One result from the child, waiting at most CALIB_WAIT_MS. */
static int read_result(int fd, uint64_t *ns)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	if (poll(&pfd, 1, CALIB_WAIT_MS) != 1)
		return -ETIMEDOUT;
	return read(fd, ns, sizeof(*ns)) == sizeof(*ns) ? 0 : -EIO;
}

int calibrate__trap_ns(struct loader *ld, double *trap_ns, char *msg, size_t msg_len)
{
	struct libc_ref ref;
	int go[2] = { -1, -1 }, out[2] = { -1, -1 }, err, status;
	uint64_t untraced_ns, traced_ns;
	size_t n;
	pid_t pid = -1;

	*trap_ns = 0;
	msg[0] = '\0';
	err = libcs__of_pid(getpid(), &ref, 1, &n);
	if (!err && !n)
		err = -ENOEXEC;
	if (err) {
		msg__set(msg, msg_len, 0, "cannot find leaktop's own C library: %s",
			 strerror(-err));
		return err;
	}
	if (pipe2(go, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) {
		err = -errno;
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto out;
	}
	if (!pid) {
		/* A Ctrl-C at start-up is leaktop's to handle: the child just ends with it. */
		signal(SIGINT, SIG_DFL);
		close(go[1]);
		close(out[0]);
		child_main(go[0], out[1]);
	}
	close(go[0]);
	close(out[1]);
	go[0] = out[1] = -1;
	err = read_result(out[0], &untraced_ns);
	if (err)
		goto out;
	loader__set_calibration_tgid(ld, pid);
	err = loader__attach_libc(ld, &ref, pid, msg, msg_len);
	if (err)
		goto out;
	err = write(go[1], "g", 1) == 1 ? 0 : -EIO;
	if (!err)
		err = read_result(out[0], &traced_ns);
	loader__detach_pid(ld, pid);
	if (err)
		goto out;
	/* Two probe entries per pair (malloc's and free's): the budget counts entries. */
	*trap_ns = traced_ns > untraced_ns ? (double)(traced_ns - untraced_ns) / (2.0 * CALIB_PAIRS)
					   : 0;
out:
	if (err && !msg[0])
		msg__set(msg, msg_len, 0, "cannot calibrate the probes' cost: %s", strerror(-err));
	for (int k = 0; k < 2; k++) {
		if (go[k] >= 0)
			close(go[k]);
		if (out[k] >= 0)
			close(out[k]);
	}
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	loader__set_calibration_tgid(ld, 0);
	return err;
}
