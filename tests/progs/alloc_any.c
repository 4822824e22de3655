// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * alloc_any.c - a known leak through the C allocator API that every allocator defines, for
 * tests/e2e/allocators.sh to run under each: as built (glibc), with LD_PRELOAD of Debian's
 * tcmalloc or mimalloc, linked with Debian's jemalloc (alloc_any_je) and linked statically
 * (alloc_any_static, glibc's malloc inside the executable).  Only functions all of them
 * define: no reallocarray, memalign, valloc or pvalloc (jemalloc lacks some, and glibc's
 * would then serve them from another heap).
 *
 *   leak_malloc()          4 x malloc(1000)                      4 blocks, 4000 bytes
 *   leak_calloc()          3 x calloc(5, 60)                     3 blocks,  900 bytes
 *   leak_realloc_null()    2 x realloc(NULL, 700)                2 blocks, 1400 bytes
 *   small_block()          2 x malloc(100), each grown by ...    (freed by the realloc)
 *   leak_realloc_grow()    2 x realloc(small_block(), 3000)      2 blocks, 6000 bytes
 *   leak_posix_memalign()  2 x posix_memalign(64, 500)           2 blocks, 1000 bytes
 *   leak_aligned_alloc()   2 x aligned_alloc(64, 640)            2 blocks, 1280 bytes
 *   churn_malloc()         100 x malloc(300) + free              all freed
 *   churn_kinds()          5 x each of malloc, calloc, realloc(NULL), posix_memalign,
 *                          aligned_alloc, all freed: 5 sites of 5 allocs and 5 frees
 *
 * In all: 15 blocks, 14580 bytes outstanding; 142 allocations, 127 frees.  Every function
 * is called from main.  No stdio, nothing else on the heap: the process makes no
 * allocation the test does not know about (an allocator's own start-up allocations, made
 * before main, are at sites of their own, which the test does not look at).
 *
 * Usage: alloc_any DIR
 * Writes DIR/ready (its pid) and waits for DIR/go (so that `leaktop -p` can attach first),
 * allocates, writes DIR/done and waits for DIR/quit (each wait at most 60 s).
 */
#include <stdlib.h>

#include "fd_common.h"

static void *keep[32];
static int n_keep;

NOINLINE static void hold(void *p)
{
	if (!p || n_keep == (int)(sizeof(keep) / sizeof(keep[0])))
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
		hold(realloc(NULL, 700)); /* LEAK:realloc_null */
}

NOINLINE void *small_block(void)
{
	void *p = malloc(100);

	if (!p)
		_exit(2);
	return p;
}

/* small_block()'s block grown: freed at small_block's site, 3000 bytes held here. */
NOINLINE void leak_realloc_grow(void)
{
	for (int i = 0; i < 2; i++)
		hold(realloc(small_block(), 3000)); /* LEAK:realloc_grow */
}

NOINLINE void leak_posix_memalign(void)
{
	for (int i = 0; i < 2; i++) {
		void *p = NULL;

		must(-posix_memalign(&p, 64, 500)); /* LEAK:posix_memalign */
		hold(p);
	}
}

NOINLINE void leak_aligned_alloc(void)
{
	for (int i = 0; i < 2; i++)
		hold(aligned_alloc(64, 640)); /* LEAK:aligned_alloc */
}

/* 100 malloc/free pairs at one site: everything freed. */
NOINLINE void churn_malloc(void)
{
	for (int i = 0; i < 100; i++) {
		void *p = malloc(300); /* LEAK:churn_malloc */

		if (!p)
			_exit(2);
		*(volatile char *)p = (char)i;
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
	churn_malloc();
	churn_kinds();
	handshake(argv[1], "done", "quit");
	return 0;
}
