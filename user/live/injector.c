// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * injector.c - the injector process: live/inject.c's calls into a traced process made by a
 * child of leaktop's that outlives it, reported back on a pipe (see injector.h for why).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "live/injector.h"
#include "util/clock.h"
#include "util/msg.h"

/* Longest leaktop waits for a report: every bounded step of the injector, and a margin. */
#define INJECTOR_WAIT_MS	(INJECT_SAFE_POINT_MS + 6 * INJECT_CALL_MS + 2000u)
/* Longest leaktop waits for the agent's removal at its end (the injector goes on alone). */
#define INJECTOR_STOP_WAIT_MS	700u
/* How often a waiting leaktop looks at its stop flag. */
#define INJECTOR_POLL_MS	50

/* The one report, written at once (smaller than PIPE_BUF). */
struct injector_report {
	int err;
	int target_fd;
	uint64_t stop_addr, handle;
	double stopped_ms;
	char msg[512];
};
_Static_assert(sizeof(struct injector_report) <= PIPE_BUF, "one atomic write");

/* Signals that would end or stop the injector midway: ignored (SIGKILL cannot be). */
static const int ignored_sigs[] = {
	SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU, SIGUSR1, SIGUSR2,
};
/* leaktop's crash handlers (they restore its terminal): the defaults in the injector. */
static const int default_sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };

/* Is the pipe's reader (leaktop) gone? */
static bool reader_gone(void *ctx)
{
	struct pollfd p = { .fd = *(int *)ctx, .events = 0 };

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP | POLLNVAL));
}

enum injector_op { OP_START, OP_STOP };

/* In the injector: do op, report on wfd, never return. */
static void __attribute__((noreturn)) injector_main(int wfd, enum injector_op op, int pid,
						    const char *path,
						    const struct inject_agent *a)
{
	struct injector_report rep = { .target_fd = -1 };
	struct sigaction ign = { .sa_handler = SIG_IGN }, dfl = { .sa_handler = SIG_DFL };
	struct inject_agent out;
	sigset_t none;

	for (size_t i = 0; i < sizeof(ignored_sigs) / sizeof(ignored_sigs[0]); i++)
		sigaction(ignored_sigs[i], &ign, NULL);
	for (size_t i = 0; i < sizeof(default_sigs) / sizeof(default_sigs[0]); i++)
		sigaction(default_sigs[i], &dfl, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Out of leaktop's process group: a terminal's signals, a kill of the group miss it. */
	setsid();
	prctl(PR_SET_NAME, "leaktop-inject", 0, 0, 0);
	/* leaktop's descriptors (its BPF links among them) are not held past its end. */
	if (wfd > 3)
		syscall(SYS_close_range, 3, wfd - 1, 0);
	syscall(SYS_close_range, wfd + 1, ~0u, 0);

	if (op == OP_START) {
		rep.err = inject__start_here(pid, path, &out, reader_gone, &wfd, rep.msg,
					     sizeof(rep.msg));
		rep.target_fd = out.target_fd;
		rep.stop_addr = out.stop_addr;
		rep.handle = out.handle;
		rep.stopped_ms = out.stopped_ms;
	} else {
		rep.err = inject__stop_here(a, rep.msg, sizeof(rep.msg));
	}
	/* Nobody may read it (leaktop gone): then it is lost, which is fine. */
	if (write(wfd, &rep, sizeof(rep)) < 0)
		rep.err = -errno;
	_exit(0);
}

/*
 * Run op in an injector and wait for its report until wait_ms (or leaktop's stop flag).
 * 0 with *rep, or -errno with msg.
 */
static int injector_run(enum injector_op op, int pid, const char *path,
			const struct inject_agent *a, const volatile sig_atomic_t *stop,
			unsigned int wait_ms, struct injector_report *rep, char *msg,
			size_t msg_len)
{
	uint64_t deadline = monotonic_ns() + (uint64_t)wait_ms * 1000000ull;
	size_t got = 0;
	int fds[2], err = 0, status;
	pid_t child;

	if (pipe2(fds, O_CLOEXEC))
		return msg__set(msg, msg_len, -errno, "cannot make a pipe: %s", strerror(errno));
	fflush(NULL);
	child = fork();
	if (child < 0) {
		err = -errno;
		close(fds[0]);
		close(fds[1]);
		return msg__set(msg, msg_len, err, "cannot fork the injector: %s",
				strerror(-err));
	}
	if (!child) {
		close(fds[0]);
		injector_main(fds[1], op, pid, path, a);
	}
	close(fds[1]);
	while (got < sizeof(*rep)) {
		struct pollfd p = { .fd = fds[0], .events = POLLIN };
		ssize_t n;
		int r;

		r = poll(&p, 1, INJECTOR_POLL_MS);
		if (r < 0 && errno != EINTR) {
			err = msg__set(msg, msg_len, -errno, "cannot wait for the injector: %s",
				       strerror(errno));
			break;
		}
		if (r <= 0) {
			/* A report ready is read first, whatever came meanwhile. */
			if (stop && *stop) {
				err = msg__set(msg, msg_len, -EINTR, "interrupted: the injector "
					       "(pid %d) puts process %d back alone", (int)child,
					       pid);
				break;
			}
			if (monotonic_ns() > deadline) {
				err = msg__set(msg, msg_len, -ETIME, "the injector (pid %d) did "
					       "not report within %u ms: it puts process %d back "
					       "alone", (int)child, wait_ms, pid);
				break;
			}
			continue;
		}
		n = read(fds[0], (char *)rep + got, sizeof(*rep) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = msg__set(msg, msg_len, -EPIPE, "the injector for process %d ended "
				       "without a report", pid);
			break;
		}
		got += (size_t)n;
	}
	/* Closed before the report: the injector sees leaktop gone and undoes its work. */
	close(fds[0]);
	if (!err || err == -EPIPE)
		waitpid(child, &status, 0);
	else
		waitpid(child, &status, WNOHANG);
	if (err)
		return err;
	rep->msg[sizeof(rep->msg) - 1] = 0;
	if (rep->err)
		return msg__set(msg, msg_len, rep->err, "%s", rep->msg);
	return 0;
}

int injector__start(int pid, const char *path, const volatile sig_atomic_t *stop,
		    struct inject_agent *out, char *msg, size_t msg_len)
{
	struct injector_report rep;
	int err, pidfd;

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	out->target_fd = out->local_fd = -1;
	err = injector_run(OP_START, pid, path, NULL, stop, INJECTOR_WAIT_MS, &rep, msg,
			   msg_len);
	if (err)
		return err;
	out->target_fd = rep.target_fd;
	out->stop_addr = rep.stop_addr;
	out->handle = rep.handle;
	out->stopped_ms = rep.stopped_ms;
	/* The channel, into leaktop: the process's descriptor, duplicated. */
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd >= 0) {
		out->local_fd = (int)syscall(SYS_pidfd_getfd, pidfd, out->target_fd, 0);
		close(pidfd);
	}
	if (out->local_fd < 0) {
		err = -errno;
		injector__stop(out, NULL, 0);
		return msg__set(msg, msg_len, err, "cannot take the agent's channel from "
				"process %d: %s", pid, strerror(-err));
	}
	return 0;
}

int injector__stop(struct inject_agent *a, char *msg, size_t msg_len)
{
	struct injector_report rep;
	char ignored[8];
	int err;

	if (a->local_fd >= 0)
		close(a->local_fd);
	a->local_fd = -1;
	if (!a->stop_addr)
		return 0;
	if (!msg) {
		msg = ignored;
		msg_len = sizeof(ignored);
	}
	err = injector_run(OP_STOP, a->pid, NULL, a, NULL, INJECTOR_STOP_WAIT_MS, &rep, msg,
			   msg_len);
	/* Done, or being done by the injector alone: never asked for again. */
	if (!err || err == -ETIME)
		a->stop_addr = 0;
	return err == -ETIME ? 0 : err;
}
