// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * alloc_api.c - a known leak through an allocator's own API, not the C one, for
 * tests/e2e/allocator_apis.sh: built with -DUSE_MI and linked with Debian's mimalloc
 * (alloc_api_mi: mi_malloc, mi_calloc, mi_realloc, mi_malloc_aligned, mi_free,
 * mi_free_size), with -DUSE_TC and linked with Debian's tcmalloc (alloc_api_tc: tc_malloc,
 * tc_calloc, tc_realloc, tc_memalign, tc_free, tc_free_sized), or plain (alloc_api: the C
 * API, free for the sized free).  Each function is its own site:
 *
 *   leak_api_malloc()       3 x malloc(400)                     3 blocks, 1200 bytes
 *   leak_api_calloc()       2 x calloc(10, 30)                  2 blocks,  600 bytes
 *   api_block()             2 x malloc(50), each grown by ...   (freed by the realloc)
 *   leak_api_realloc()      2 x realloc(api_block(), 2000)      2 blocks, 4000 bytes
 *   leak_api_aligned()      2 x aligned(64, 320)                2 blocks,  640 bytes
 *   churn_api_free()        20 x malloc(100) + free             all freed
 *   churn_api_free_sized()  20 x malloc(100) + sized free       all freed
 *
 * In all: 9 blocks, 6440 bytes outstanding; 51 allocations, 42 frees.  No stdio, nothing
 * else on the heap after main starts.
 *
 * Usage: alloc_api DIR
 * Writes DIR/ready (its pid) and waits for DIR/go, allocates, writes DIR/done and waits for
 * DIR/quit (each wait at most 60 s).
 */
#include <stdlib.h>

#include "fd_common.h"

#if defined(USE_MI)
#include <mimalloc.h>
#define A_MALLOC(n)		mi_malloc(n)
#define A_CALLOC(n, s)		mi_calloc(n, s)
#define A_REALLOC(p, n)		mi_realloc(p, n)
#define A_ALIGNED(al, n)	mi_malloc_aligned(n, al)
#define A_FREE(p)		mi_free(p)
#define A_FREE_SIZED(p, n)	mi_free_size(p, n)
#elif defined(USE_TC)
/* gperftools/tcmalloc.h (libgoogle-perftools-dev) is not needed for these. */
void *tc_malloc(size_t size);
void *tc_calloc(size_t n, size_t size);
void *tc_realloc(void *p, size_t size);
void *tc_memalign(size_t align, size_t size);
void tc_free(void *p);
void tc_free_sized(void *p, size_t size);
#define A_MALLOC(n)		tc_malloc(n)
#define A_CALLOC(n, s)		tc_calloc(n, s)
#define A_REALLOC(p, n)		tc_realloc(p, n)
#define A_ALIGNED(al, n)	tc_memalign(al, n)
#define A_FREE(p)		tc_free(p)
#define A_FREE_SIZED(p, n)	tc_free_sized(p, n)
#else
#define A_MALLOC(n)		malloc(n)
#define A_CALLOC(n, s)		calloc(n, s)
#define A_REALLOC(p, n)		realloc(p, n)
#define A_ALIGNED(al, n)	aligned_alloc(al, n)
#define A_FREE(p)		free(p)
#define A_FREE_SIZED(p, n)	free(p)
#endif

static void *keep[16];
static int n_keep;

NOINLINE static void hold(void *p)
{
	if (!p || n_keep == (int)(sizeof(keep) / sizeof(keep[0])))
		_exit(2);
	keep[n_keep++] = p;
}

NOINLINE void leak_api_malloc(void)
{
	for (int i = 0; i < 3; i++)
		hold(A_MALLOC(400));
}

NOINLINE void leak_api_calloc(void)
{
	for (int i = 0; i < 2; i++)
		hold(A_CALLOC(10, 30));
}

NOINLINE void *api_block(void)
{
	void *p = A_MALLOC(50);

	must(p ? 0 : -1);
	return p;
}

NOINLINE void leak_api_realloc(void)
{
	for (int i = 0; i < 2; i++)
		hold(A_REALLOC(api_block(), 2000));
}

NOINLINE void leak_api_aligned(void)
{
	for (int i = 0; i < 2; i++)
		hold(A_ALIGNED(64, 320));
}

NOINLINE void churn_api_free(void)
{
	for (int i = 0; i < 20; i++) {
		char *p = A_MALLOC(100);

		must(p ? 0 : -1);
		*(volatile char *)p = (char)i;
		A_FREE(p);
	}
}

NOINLINE void churn_api_free_sized(void)
{
	for (int i = 0; i < 20; i++) {
		char *p = A_MALLOC(100);

		must(p ? 0 : -1);
		*(volatile char *)p = (char)i;
		A_FREE_SIZED(p, 100);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	handshake(argv[1], "ready", "go");
	leak_api_malloc();
	leak_api_calloc();
	leak_api_realloc();
	leak_api_aligned();
	churn_api_free();
	churn_api_free_sized();
	handshake(argv[1], "done", "quit");
	return 0;
}
