// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * fd_kinds.c - leaks a known number of file descriptors of every common kind, each kind
 * from its own function, plus descriptors that are closed again: open/close churn, a range
 * closed with close_range(), descriptors replaced by dup2()/dup3(), and a range only
 * marked close-on-exec (still open).  Every leaking call carries a marker LEAK:NAME; the
 * counts in tests/e2e/fd.sh mirror this file.  No stdio, no heap.
 *
 * Before each of these functions main() zeroes the stack below its frame (scrub_stack), so
 * that each starts on a clean stack: the libc wrappers of open() and fcntl() keep stack
 * slots they never write, and a return address an earlier, deeper call left there must not
 * decide which function a descriptor is charged to.  That case has a test of its own:
 * stale_prepare() leaves such a return address just where stale_victim()'s open() finds
 * it.
 *
 * Usage: fd_kinds DIR
 * It closes the descriptors it inherited above stderr, creates DIR/file_a and DIR/file_b,
 * leaks, then creates DIR/done holding its pid and waits for DIR/quit (at most 60 s).
 * While it waits it opens and closes nothing, so the test can count /proc/PID/fd.  Exit
 * status 4 when the kernel did not give the descriptor numbers the close_range() part
 * relies on.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
/*
 * Size of stale_prepare()'s local array: with gcc -O0 its frame is then 0x70 bytes, and the
 * return address of its call lands in the fourth word of the 0x68-byte frame glibc 2.36's
 * open() sets up under stale_victim(), a word open() never writes (seen with gdb).
 */
#ifndef STALE_PAD
#define STALE_PAD 112
#endif

static char file_a[4096], file_b[4096];

#include "fd_common.h"

/* creat() twice, each closed at once: 2 opens, 2 closes. */
NOINLINE void make_files(void)
{
	must(close(must(creat(file_a, 0644))));
	must(close(must(creat(file_b, 0644))));
}

static int first_a;	/* a descriptor of file_a, duplicated below */

/* 3 x open(file_a) */
NOINLINE void leak_open(void)
{
	for (int i = 0; i < 3; i++) {
		int fd = must(open(file_a, O_RDONLY)); /* LEAK:open */

		if (!i)
			first_a = fd;
	}
}

/* 2 x openat(file_b) */
NOINLINE void leak_openat(void)
{
	for (int i = 0; i < 2; i++)
		must(openat(AT_FDCWD, file_b, O_RDONLY)); /* LEAK:openat */
}

/* 1 x open(DIR, O_DIRECTORY) */
NOINLINE void leak_dir(const char *dir)
{
	must(open(dir, O_RDONLY | O_DIRECTORY)); /* LEAK:dir */
}

/* 1 x open() of file_a by a path copied into a local buffer (on the stack) */
NOINLINE void leak_local_path(void)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s", file_a);
	must(open(path, O_RDONLY)); /* LEAK:local_path */
}

/* 2 x socket(AF_INET, SOCK_STREAM), then 1 x socket(AF_UNIX, SOCK_DGRAM): 3 sockets */
NOINLINE void leak_socket(void)
{
	for (int i = 0; i < 3; i++) {
		int family = i < 2 ? AF_INET : AF_UNIX;
		int type = i < 2 ? SOCK_STREAM : SOCK_DGRAM;

		must(socket(family, type, 0)); /* LEAK:socket */
	}
}

/* 2 x pipe(): 4 descriptors */
NOINLINE void leak_pipe(void)
{
	int p[2];

	for (int i = 0; i < 2; i++)
		must(pipe(p)); /* LEAK:pipe */
}

/* 1 x pipe2(O_CLOEXEC): 2 descriptors */
NOINLINE void leak_pipe2(void)
{
	int p[2];

	must(pipe2(p, O_CLOEXEC)); /* LEAK:pipe2 */
}

/* 2 x dup(a descriptor of file_a) */
NOINLINE void leak_dup(void)
{
	for (int i = 0; i < 2; i++)
		must(dup(first_a)); /* LEAK:dup */
}

/* 1 x fcntl(F_DUPFD_CLOEXEC) */
NOINLINE void leak_fcntl_dupfd(void)
{
	must(fcntl(first_a, F_DUPFD_CLOEXEC, 0)); /* LEAK:fcntl */
}

/* 2 x eventfd() */
NOINLINE void leak_eventfd(void)
{
	for (int i = 0; i < 2; i++)
		must(eventfd(0, 0)); /* LEAK:eventfd */
}

/* 2 x timerfd_create() */
NOINLINE void leak_timerfd(void)
{
	for (int i = 0; i < 2; i++)
		must(timerfd_create(CLOCK_MONOTONIC, 0)); /* LEAK:timerfd */
}

/* 1 x epoll_create1() */
NOINLINE void leak_epoll(void)
{
	must(epoll_create1(0)); /* LEAK:epoll */
}

/* 2 x memfd_create("lt_memfd") */
NOINLINE void leak_memfd(void)
{
	for (int i = 0; i < 2; i++)
		must(memfd_create("lt_memfd", 0)); /* LEAK:memfd */
}

/* 1 x signalfd(-1, ...) */
NOINLINE void leak_signalfd(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	must(signalfd(-1, &set, 0)); /* LEAK:signalfd */
}

/* 1 x inotify_init1() */
NOINLINE void leak_inotify(void)
{
	must(inotify_init1(0)); /* LEAK:inotify */
}

/* 1 x pidfd_open(self) */
NOINLINE void leak_pidfd(void)
{
	must(syscall(SYS_pidfd_open, getpid(), 0)); /* LEAK:pidfd */
}

/* 20 x open + close: nothing outstanding */
NOINLINE void churn_open(void)
{
	for (int i = 0; i < 20; i++)
		must(close(must(open(file_b, O_RDONLY)))); /* LEAK:churn */
}

/* 5 x open, consecutive numbers (the lowest free), then one close_range() over them. */
NOINLINE int range_open(void)
{
	int first = -1;

	for (int i = 0; i < 5; i++) {
		int fd = must(open(file_a, O_RDONLY)); /* LEAK:range */

		if (!i)
			first = fd;
		else if (fd != first + i)
			_exit(4);
	}
	return first;
}

NOINLINE void close_range_all(int first)
{
	must(syscall(SYS_close_range, first, first + 4, 0));
}

/* open 1, then dup2() file_a's descriptor over it: the open is released, dup2 holds it. */
NOINLINE int victim_open(void)
{
	return must(open(file_b, O_RDONLY));
}

NOINLINE void dup2_over(int victim)
{
	must(dup2(first_a, victim)); /* LEAK:dup2 */
}

/* The same with dup3(O_CLOEXEC). */
NOINLINE int victim3_open(void)
{
	return must(open(file_b, O_RDONLY));
}

NOINLINE void dup3_over(int victim)
{
	must(dup3(first_a, victim, O_CLOEXEC)); /* LEAK:dup3 */
}

/* 2 x open, then close_range(CLOSE_RANGE_CLOEXEC) over them: only marked, still open. */
NOINLINE int cloexec_range_open(void)
{
	int first = -1;

	for (int i = 0; i < 2; i++) {
		int fd = must(open(file_a, O_RDONLY)); /* LEAK:cloexec_range */

		if (!i)
			first = fd;
		else if (fd != first + i)
			_exit(4);
	}
	return first;
}

NOINLINE void mark_cloexec(int first)
{
	must(syscall(SYS_close_range, first, first + 1, 4 /* CLOSE_RANGE_CLOEXEC */));
}

/*
 * A call from a function with a larger frame than stale_victim's leaves its return address
 * in the part of the stack open()'s frame will cover without writing it.
 */
NOINLINE void stale_prepare(void)
{
	volatile char pad[STALE_PAD];

	pad[0] = 0;
	must(getppid() + pad[0]);
}

/* 2 x open(file_b), after stale_prepare() and without a scrub in between */
NOINLINE void stale_victim(void)
{
	for (int i = 0; i < 2; i++)
		must(open(file_b, O_RDONLY)); /* LEAK:stale */
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	snprintf(file_a, sizeof(file_a), "%s/file_a", argv[1]);
	snprintf(file_b, sizeof(file_b), "%s/file_b", argv[1]);
	close_inherited();
	scrub_stack();
	make_files();
	scrub_stack();
	leak_open();
	scrub_stack();
	leak_openat();
	scrub_stack();
	leak_dir(argv[1]);
	scrub_stack();
	leak_local_path();
	scrub_stack();
	leak_socket();
	scrub_stack();
	leak_pipe();
	scrub_stack();
	leak_pipe2();
	scrub_stack();
	leak_dup();
	scrub_stack();
	leak_fcntl_dupfd();
	scrub_stack();
	leak_eventfd();
	scrub_stack();
	leak_timerfd();
	scrub_stack();
	leak_epoll();
	scrub_stack();
	leak_memfd();
	scrub_stack();
	leak_signalfd();
	scrub_stack();
	leak_inotify();
	scrub_stack();
	leak_pidfd();
	scrub_stack();
	churn_open();
	scrub_stack();
	close_range_all(range_open());
	scrub_stack();
	dup2_over(victim_open());
	scrub_stack();
	dup3_over(victim3_open());
	scrub_stack();
	mark_cloexec(cloexec_range_open());
	scrub_stack();
	stale_prepare();
	stale_victim();
	handshake(argv[1], "done", "quit");
	return 0;
}
