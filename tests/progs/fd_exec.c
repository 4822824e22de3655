// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * fd_exec.c - descriptors across exec: it opens 3 descriptors with O_CLOEXEC and a pipe
 * with pipe2(O_CLOEXEC) (exec closes all 5 without a close() call), and 1 descriptor
 * without the flag (it survives exec, open in the new program that never opened it), then
 * execs itself.  The exec'd image opens nothing that stays open.  Every leaking call
 * carries a marker LEAK:NAME; the counts in tests/e2e/fd.sh mirror this file.  No stdio.
 *
 * Usage: fd_exec DIR
 * It closes the descriptors it inherited above stderr, creates DIR/cloexec and DIR/kept,
 * opens them, creates DIR/ready_exec holding its pid and waits for DIR/go_exec, then execs
 * /proc/self/exe DIR after.  The exec'd image creates DIR/done and waits for DIR/quit
 * (each wait at most 60 s), opening and closing nothing while it waits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static char cloexec_file[4096], kept_file[4096];

#include "fd_common.h"

/* creat() both files and close them: 2 opens, 2 closes. */
NOINLINE void make_files(void)
{
	must(close(must(creat(cloexec_file, 0644))));
	must(close(must(creat(kept_file, 0644))));
}

/* 3 x open(cloexec, O_CLOEXEC) */
NOINLINE void cloexec_open(void)
{
	for (int i = 0; i < 3; i++)
		must(open(cloexec_file, O_RDONLY | O_CLOEXEC)); /* LEAK:cloexec */
}

/* 1 x pipe2(O_CLOEXEC): 2 descriptors */
NOINLINE void cloexec_pipe(void)
{
	int p[2];

	must(pipe2(p, O_CLOEXEC)); /* LEAK:cloexec_pipe */
}

/* 1 x open(kept) without O_CLOEXEC */
NOINLINE void keep_open(void)
{
	must(open(kept_file, O_RDONLY)); /* LEAK:kept */
}

int main(int argc, char **argv)
{
	char *args[4];

	if (argc < 2)
		return 2;
	if (argc > 2 && !strcmp(argv[2], "after")) {
		handshake(argv[1], "done", "quit");
		return 0;
	}
	snprintf(cloexec_file, sizeof(cloexec_file), "%s/cloexec", argv[1]);
	snprintf(kept_file, sizeof(kept_file), "%s/kept", argv[1]);
	close_inherited();
	scrub_stack();
	make_files();
	scrub_stack();
	cloexec_open();
	scrub_stack();
	cloexec_pipe();
	scrub_stack();
	keep_open();
	handshake(argv[1], "ready_exec", "go_exec");
	args[0] = argv[0];
	args[1] = argv[1];
	args[2] = "after";
	args[3] = NULL;
	execv("/proc/self/exe", args);
	return 127;
}
