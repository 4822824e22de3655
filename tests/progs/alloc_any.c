// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * alloc_any.c - a known leak through the C allocator API, for tests/e2e/allocators.sh to
 * run under each allocator: as built (glibc), with LD_PRELOAD of tcmalloc or mimalloc,
 * linked with jemalloc (alloc_any_je), or statically (alloc_any_static).  Each function
 * leaks a known number of blocks of known sizes; churn() frees all it allocates, and
 * churn_kinds() frees 5 blocks of each function here (malloc, calloc, realloc(NULL, n),
 * posix_memalign, aligned_alloc: five sites of 5 allocs and 5 frees).  In all: 15 blocks,
 * 14580 bytes outstanding; 142 allocations, 127 frees.  Sizes and counts are mirrored in the
 * tests (allocators.sh, allocator_apis.sh).  No stdio: the process makes no allocation the
 * test does not know about (the allocators' own start-up ones are at other sites).
 *
 * Usage: alloc_any DIR
 * Writes DIR/ready (its pid) and waits for DIR/go (so -p can attach first), leaks, writes
 * DIR/done and waits for DIR/quit.
 */
#include <stdlib.h>

#include "fd_common.h"

static void *keep[64];
static int n_keep;

NOINLINE static void hold(void *p)
{
	if (!p)
		_exit(2);
	keep[n_keep++] = p;
}

NOINLINE void leak_malloc(void)
{
	for (int i = 0; i < 4; i++)
		hold(malloc(1000)); /* LEAK:malloc */
}

NOINLINE void leak_calloc(void)
{
	for (int i = 0; i < 3; i++)
		hold(calloc(5, 60)); /* LEAK:calloc */
}

NOINLINE void leak_realloc_null(void)
{
	for (int i = 0; i < 2; i++)
		hold(realloc(NULL, 700));
}

NOINLINE void *small_block(void)
{
	void *p = malloc(100);

	if (!p)
		_exit(2);
	return p;
}

/* small_block()'s block grown by realloc: freed there, 3000 bytes outstanding here. */
NOINLINE void leak_realloc_grow(void)
{
	for (int i = 0; i < 2; i++)
		hold(realloc(small_block(), 3000));
}

NOINLINE void leak_posix_memalign(void)
{
	for (int i = 0; i < 2; i++) {
		void *p = NULL;

		must(-posix_memalign(&p, 64, 500));
		hold(p);
	}
}

NOINLINE void leak_aligned_alloc(void)
{
	for (int i = 0; i < 2; i++)
		hold(aligned_alloc(64, 640));
}

/* 100 blocks, every one freed. */
NOINLINE void churn(void)
{
	for (int i = 0; i < 100; i++) {
		void *p = malloc(300);

		if (!p)
			_exit(2);
		free(p);
	}
}

/* Each function's blocks freed with free(): five sites, 5 allocs and 5 frees each. */
NOINLINE void churn_kinds(void)
{
	for (int i = 0; i < 5; i++) {
		void *p[5] = { NULL };

		p[0] = malloc(10);
		p[1] = calloc(2, 10);
		p[2] = realloc(NULL, 30);
		must(-posix_memalign(&p[3], 16, 50));
		p[4] = aligned_alloc(16, 64);
		for (int j = 0; j < 5; j++) {
			if (!p[j])
				_exit(2);
			free(p[j]);
		}
	}
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	handshake(argv[1], "ready", "go");
	leak_malloc();
	leak_calloc();
	leak_realloc_null();
	leak_realloc_grow();
	leak_posix_memalign();
	leak_aligned_alloc();
	churn();
	churn_kinds();
	handshake(argv[1], "done", "quit");
	return 0;
}
