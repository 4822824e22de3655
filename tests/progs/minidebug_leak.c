// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * minidebug_leak.c - a leaky program stripped the way Fedora strips one, keeping
 * MiniDebugInfo: its .gnu_debugdata section holds, xz-compressed, an ELF whose .symtab
 * names the functions .dynsym does not (tests/progs/minidebuginfo.sh, run by the
 * Makefile's rule).  Every 100 ms leak_in_minidebug() (a static function, in no dynamic
 * symbol table) leaks 40 bytes, COUNT times (default 20), then it exits 0.
 *
 * Usage: minidebug_leak [COUNT]
 */
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static void *keep[256];

static NOINLINE void *leak_in_minidebug(void)
{
	return malloc(40);
}

int main(int argc, char **argv)
{
	struct timespec ts = { .tv_nsec = 100 * 1000 * 1000 };
	int n = argc > 1 ? atoi(argv[1]) : 20;

	if (n < 0 || n > 256)
		n = 256;
	for (int i = 0; i < n; i++) {
		keep[i] = leak_in_minidebug();
		nanosleep(&ts, NULL);
	}
	return keep[0] ? 0 : 1;
}
