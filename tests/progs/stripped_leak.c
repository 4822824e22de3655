// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * stripped_leak.c - a leaky program shipped the way a careless build ships it: stripped of
 * every symbol table (`objcopy --strip-all`, the Makefile's rule), no debug file anywhere,
 * its build id kept.  Every 100 ms leak_stripped() leaks 48 bytes and a JSON object from
 * Debian's jansson (a library with no .symtab whose debug package is not installed) is kept
 * too, COUNT times (default 20), then it exits 0.
 *
 * Usage: stripped_leak [COUNT]
 */
#include <stdlib.h>
#include <time.h>
#include <jansson.h>

#define NOINLINE __attribute__((noinline))

static void *keep[256];
static json_t *objects[256];

static NOINLINE void *leak_stripped(void)
{
	return malloc(48);
}

int main(int argc, char **argv)
{
	struct timespec ts = { .tv_nsec = 100 * 1000 * 1000 };
	int n = argc > 1 ? atoi(argv[1]) : 20;

	if (n < 0 || n > 256)
		n = 256;
	for (int i = 0; i < n; i++) {
		keep[i] = leak_stripped();
		objects[i] = json_object();
		nanosleep(&ts, NULL);
	}
	return keep[0] && objects[0] ? 0 : 1;
}
