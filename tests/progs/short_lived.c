// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * short_lived.c - a program that leaks in its own shared library and in itself, and exits
 * at once: a whole-system leaktop seldom reads its memory map before it is gone.
 *
 * Usage: short_lived [PIDFILE]
 * Leaks 1 x 111 bytes in leak_in_lib() (libshort_lived.so, through short_lib_leak()) and
 * 1 x 222 bytes in leak_in_main(), appends its pid to PIDFILE (when given) and exits 0.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "short_lived.h"

#define NOINLINE __attribute__((noinline))

static void *keep;

static NOINLINE void leak_in_main(void)
{
	keep = malloc(222);
}

int main(int argc, char **argv)
{
	char buf[32];
	int fd, n;

	short_lib_leak();
	leak_in_main();
	if (argc > 1) {
		n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
		fd = open(argv[1], O_WRONLY | O_APPEND | O_CREAT, 0644);
		if (fd < 0 || write(fd, buf, n) != n)
			return 2;
		close(fd);
	}
	return keep ? 0 : 1;
}
