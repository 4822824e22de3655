// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * strdup_leak.c - leaks through strdup(), for tests/e2e/unwind.sh.  glibc's strdup
 * (__strdup, keeping no frame pointer and using %rbp for the length) calls malloc: the
 * function that called strdup must still be the frame right above it (issue 14: stacks
 * unwound with .eh_frame).
 *
 *   leak_strdup()  4 x strdup("leaktop-cfi") (12 bytes each with its NUL): 4 blocks,
 *                  48 bytes                                                 LEAK:strdup
 *
 * Called from main; no stdio, no other heap use.
 *
 * Usage: strdup_leak DIR
 * Leaks, then creates DIR/done holding its pid and waits for DIR/quit (at most 60 s).
 */
#include <stdlib.h>
#include <string.h>

#include "fd_common.h"

static char *copies[4];

NOINLINE void leak_strdup(void)
{
	for (int i = 0; i < 4; i++) {
		copies[i] = strdup("leaktop-cfi"); /* LEAK:strdup */
		if (!copies[i])
			_exit(2);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	must(argc);
	leak_strdup();
	handshake(argv[1], "done", "quit");
	return 0;
}
