// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * fd_churn.c - one descriptor number reopened from two call sites at full speed: open()
 * in churn_open() and socket() in churn_socket(), each closed at once, for SECONDS seconds.
 * The lowest free number is reused, so the same number keeps alternating between the two
 * sites while leaktop's fd census reads /proc/PID/fd; nothing is ever left open, and
 * nothing is closed behind leaktop's back.  No stdio.
 *
 * Usage: fd_churn DIR [SECONDS]
 * It closes the descriptors it inherited above stderr, churns (default 6 s), then creates
 * DIR/done holding its pid and waits for DIR/quit (at most 60 s), opening nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

#include "fd_common.h"

NOINLINE void churn_open(void)
{
	must(close(must(open("/dev/null", O_RDONLY)))); /* LEAK:churn_open */
}

NOINLINE void churn_socket(void)
{
	must(close(must(socket(AF_UNIX, SOCK_STREAM, 0)))); /* LEAK:churn_socket */
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 2 ? atof(argv[2]) : 6, end;

	if (argc < 2)
		return 2;
	close_inherited();
	end = now_s() + seconds;
	while (now_s() < end) {
		for (int i = 0; i < 1000; i++) {
			churn_open();
			churn_socket();
		}
	}
	handshake(argv[1], "done", NULL);
	handshake(argv[1], NULL, "quit");
	return 0;
}
