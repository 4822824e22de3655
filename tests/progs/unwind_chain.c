// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * unwind_chain.c - leaks from code that keeps no frame pointers, at known depths, for
 * tests/e2e/unwind.sh (stacks unwound with the binaries' .eh_frame, issue 14).
 *
 * The Makefile builds this one source twice:
 *   build/tests/progs/unwind_chain     -O2 -fomit-frame-pointer: %rbp is a general register
 *                                      everywhere in this program (as in Debian's binaries)
 *   build/tests/progs/unwind_chain_fp  -O2 -fno-omit-frame-pointer: the same code with a
 *                                      frame-pointer chain
 * and both must give the same stacks.  Every function below is noinline, noclone and noipa
 * (no inlining, no clones, no identical-code folding) and puts a compiler barrier after its
 * call, so each call stays a real call (never a tail call) and each function keeps a frame
 * of its own in the stack.  Loop counts are arguments, which noipa keeps unknown to the
 * callee, so no loop is unrolled into two call sites (two sites in leaktop's eyes):
 *
 *   main -> level1 -> level2 -> level3 -> level4 -> malloc(72) x 5      LEAK:level4
 *           heap site: 5 blocks, 360 bytes, 5 allocs, 0 frees;
 *           frames up to main: level4 level3 level2 level1 main
 *   main -> make_resources -> open_files    -> open(DIR/file) x 3       LEAK:open
 *                          -> open_sockets  -> socket(AF_UNIX) x 2      LEAK:socket
 *                          -> make_pipe     -> pipe() x 1 (2 fds)       LEAK:pipe
 *                          -> dup_fds       -> dup(first file) x 2      LEAK:dup
 *                          -> map_anon      -> mmap(64 KiB anon) x 2    LEAK:mmap
 *           each an fd (mmap) site whose frames up to main are LEAF make_resources main
 *           (fd sites begin at the function that called the libc wrapper).
 *
 * No stdio, no other heap use.  make_resources zeroes the stack below its frame before
 * each call (scrub_stack, see fd_kinds.c): a stale return address left by an earlier call
 * must not decide where a descriptor is charged.
 *
 * Usage: unwind_chain DIR
 * Closes the descriptors it inherited above stderr, creates DIR/file, leaks, then creates
 * DIR/done holding its pid and waits for DIR/quit (at most 60 s).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

/* A real call with a frame of its own, whatever -O says. */
#define NOINLINE __attribute__((noinline, noclone, noipa))
/* After a call: nothing may move across it, so the call cannot become a jump. */
#define BARRIER() __asm__ volatile("" ::: "memory")

#include "fd_common.h"

static void *blocks[5];
static char file[4096];
static int first_fd = -1;

NOINLINE int level4(int n)
{
	for (int i = 0; i < n; i++) {
		blocks[i] = malloc(72); /* LEAK:level4 */
		BARRIER();
		if (!blocks[i])
			_exit(2);
	}
	return n + 4;
}

NOINLINE int level3(int n)
{
	int r = level4(n);

	BARRIER();
	return r + 3;
}

NOINLINE int level2(int n)
{
	int r = level3(n);

	BARRIER();
	return r + 2;
}

NOINLINE int level1(int n)
{
	int r = level2(n);

	BARRIER();
	return r + 1;
}

NOINLINE void open_files(int n)
{
	for (int i = 0; i < n; i++) {
		int fd = must(open(file, O_RDONLY)); /* LEAK:open */

		BARRIER();
		if (first_fd < 0)
			first_fd = fd;
	}
}

NOINLINE void open_sockets(int n)
{
	for (int i = 0; i < n; i++) {
		must(socket(AF_UNIX, SOCK_DGRAM, 0)); /* LEAK:socket */
		BARRIER();
	}
}

NOINLINE void make_pipe(void)
{
	int p[2];

	must(pipe(p)); /* LEAK:pipe */
	BARRIER();
}

NOINLINE void dup_fds(int n)
{
	for (int i = 0; i < n; i++) {
		must(dup(first_fd)); /* LEAK:dup */
		BARRIER();
	}
}

NOINLINE void map_anon(int n)
{
	const int prot = PROT_READ | PROT_WRITE, flags = MAP_PRIVATE | MAP_ANONYMOUS;

	for (int i = 0; i < n; i++) {
		void *p = mmap(NULL, 65536, prot, flags, -1, 0); /* LEAK:mmap */

		BARRIER();
		if (p == MAP_FAILED)
			_exit(2);
	}
}

NOINLINE void make_resources(void)
{
	scrub_stack();
	open_files(3);
	BARRIER();
	scrub_stack();
	open_sockets(2);
	BARRIER();
	scrub_stack();
	make_pipe();
	BARRIER();
	scrub_stack();
	dup_fds(2);
	BARRIER();
	scrub_stack();
	map_anon(2);
	BARRIER();
}

int main(int argc, char **argv)
{
	int r;

	if (argc != 2)
		return 2;
	close_inherited();
	snprintf(file, sizeof(file), "%s/file", argv[1]);
	must(close(must(creat(file, 0644))));
	r = level1(5);
	BARRIER();
	if (r != 15)
		return 2;
	make_resources();
	BARRIER();
	handshake(argv[1], "done", "quit");
	return 0;
}
