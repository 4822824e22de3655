// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * early_leak.c - leaks 1000 blocks of 48 bytes in leak_at_start(), the first thing main
 * does, for tests/e2e/exec_bind.sh: a program exec'd under leaktop (by env with an
 * LD_PRELOAD, by a shell script) whose first allocations must be counted, under whichever
 * allocator it binds.  Built as is, and statically (early_leak_static).  No stdio.
 *
 * Usage: early_leak DIR
 * Leaks, then writes DIR/done (its pid) and waits for DIR/quit.
 */
#include <stdlib.h>

#include "fd_common.h"

#define EARLY_BLOCKS	1000
#define EARLY_SIZE	48

static void *keep[EARLY_BLOCKS];

NOINLINE void leak_at_start(void)
{
	for (int i = 0; i < EARLY_BLOCKS; i++) {
		keep[i] = malloc(EARLY_SIZE); /* LEAK:early */
		if (!keep[i])
			_exit(2);
	}
}

int main(int argc, char **argv)
{
	leak_at_start();
	if (argc < 2)
		return 2;
	handshake(argv[1], "done", "quit");
	return 0;
}
