// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * fd_repair.c - descriptors closed in a way leaktop does not fully see: it opens 40
 * descriptors with consecutive numbers from one call site, then closes them all with one
 * close_range(first, ~0U, 0).  leaktop takes at most 32 descriptors off their site per
 * close_range(); the rest must be repaired from /proc/PID/fd by the collector.  Before
 * that, 2 descriptors are leaked from another site below the range, which must stay open.
 * Every leaking call carries a marker LEAK:NAME; the counts in tests/e2e/fd.sh mirror this
 * file.  No stdio.
 *
 * Usage: fd_repair DIR
 * It closes the descriptors it inherited above stderr, creates DIR/file, leaks, opens the
 * range, creates DIR/ready holding its pid, closes the range, renames DIR/ready to DIR/done
 * (opening nothing after the close_range) and waits for DIR/quit (at most 60 s), opening
 * and closing nothing while it waits.  Exit status 4 when the kernel did not give
 * consecutive descriptor numbers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define N_RANGE 40

static char file[4096];

#include "fd_common.h"

/* creat() the file and close it: 1 open, 1 close. */
NOINLINE void make_file(void)
{
	must(close(must(creat(file, 0644))));
}

/* 2 x open(file), kept */
NOINLINE void leak_below(void)
{
	for (int i = 0; i < 2; i++)
		must(open(file, O_RDONLY)); /* LEAK:below */
}

/* N_RANGE x open(file), consecutive numbers; the first one is returned. */
NOINLINE int repair_open(void)
{
	int first = -1;

	for (int i = 0; i < N_RANGE; i++) {
		int fd = must(open(file, O_RDONLY)); /* LEAK:repair */

		if (!i)
			first = fd;
		else if (fd != first + i)
			_exit(4);
	}
	return first;
}

/* close_range(first, ~0U, 0): every descriptor from first up */
NOINLINE void close_from(int first)
{
	must(syscall(SYS_close_range, first, ~0U, 0));
}

int main(int argc, char **argv)
{
	char ready[4096], done[4096];
	int first;

	if (argc < 2)
		return 2;
	snprintf(file, sizeof(file), "%s/file", argv[1]);
	close_inherited();
	scrub_stack();
	make_file();
	scrub_stack();
	leak_below();
	scrub_stack();
	first = repair_open();
	handshake(argv[1], "ready", NULL);
	close_from(first);
	/*
	 * Announce "done" by renaming: opening a file now would get number `first` again, and
	 * leaktop would retire that record when the number is reused instead of repairing it.
	 */
	snprintf(ready, sizeof(ready), "%s/ready", argv[1]);
	snprintf(done, sizeof(done), "%s/done", argv[1]);
	if (rename(ready, done))
		return 2;
	handshake(argv[1], NULL, "quit");
	return 0;
}
