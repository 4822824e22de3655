// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * own_syscall.c - descriptors made by a syscall wrapper of the program's own, with 4 KiB of
 * locals between the syscall's stack pointer and the wrapper's return address, in code built
 * without frame pointers (-O2 -fomit-frame-pointer; see the Makefile).  Nothing here is a
 * libc wrapper, so no knowledge of any libc's code layout can find the callers: only the
 * program's own CFI can.
 *
 *   dup_through_own_wrapper	3 x own_dup(0) (dup in inline asm)
 *
 * Usage: own_syscall DIR
 * Creates DIR/done holding its pid, then waits for DIR/quit (at most 60 s).
 */
#define _GNU_SOURCE
#include <sys/syscall.h>
#include <unistd.h>

#include "fd_common.h"

#define NOINLINE __attribute__((noinline, noclone, noipa))

static int kept[8];

/* dup(fd) by the syscall instruction itself, under a 4 KiB frame. */
static NOINLINE long own_dup(int fd)
{
	volatile char pad[4096];
	long ret;

	pad[0] = 1;
	__asm__ volatile("syscall" : "=a"(ret) : "0"((long)SYS_dup), "D"((long)fd)
			 : "rcx", "r11", "memory");
	pad[sizeof(pad) - 1] = 2;
	return ret;
}

static NOINLINE void dup_through_own_wrapper(int n)
{
	for (int i = 0; i < n; i++) {
		kept[i] = (int)own_dup(0);
		__asm__ volatile("" ::: "memory");
	}
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	close_inherited();
	dup_through_own_wrapper(3);
	__asm__ volatile("" ::: "memory");
	handshake(argv[1], "done", "quit");
	return 0;
}
