// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * heap_kinds.c - every allocator function leaktop probes, each from its own function, with
 * a known number of blocks of known sizes, so tests/e2e/heap.sh can assert exact numbers:
 * leaks, freed churn, realloc chains (moving, in place, to zero, failing, mremap'd),
 * mmap-sized blocks, free(NULL) and failed allocations.
 *
 * The lines the tests check carry a marker comment (LEAK:name); the test greps the line
 * number from this file.  No stdio: the process must make no allocation the test does not
 * know about.  Sizes and counts are mirrored in tests/e2e/heap.sh.
 *
 * Usage: heap_kinds [DIR]
 * With DIR, once everything is done it creates DIR/done and waits for DIR/quit before
 * exiting, so the test can let leaktop look at the process while it is alive.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static void *keep[256];
static int n_keep;
/* Sizes go through a volatile so the compiler neither warns about nor folds them. */
static volatile size_t huge = SIZE_MAX;

/*
 * Handshake with the test through files in dir (nothing when dir is NULL): create
 * dir/ready holding our pid (if ready is not NULL; written under a temporary name and
 * renamed, so it never appears half written), then wait for dir/go to exist (if go is not
 * NULL), for at most 180 s (then exit 3, so a broken test never leaves this program behind).
 * Nothing here allocates.
 */
static void handshake(const char *dir, const char *ready, const char *go)
{
	struct timespec ts;
	char path[4096];
	int fd, i;

	if (!dir)
		return;
	if (ready) {
		char tmp[4096], buf[32];
		int n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());

		snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, ready);
		snprintf(path, sizeof(path), "%s/%s", dir, ready);
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, buf, n) != n || close(fd) || rename(tmp, path))
			_exit(2);
	}
	if (!go)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, go);
	for (i = 0; access(path, F_OK); i++) {
		if (i == 18000)
			_exit(3);
		ts.tv_sec = 0;
		ts.tv_nsec = 10 * 1000 * 1000;
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
}

NOINLINE void hold(void *p)
{
	if (!p)
		_exit(2);
	keep[n_keep++] = p;
}

NOINLINE void leak_malloc(void)
{
	for (int i = 0; i < 3; i++) {
		void *p = malloc(101); /* LEAK:malloc */
		hold(p);
	}
}

NOINLINE void leak_calloc(void)
{
	for (int i = 0; i < 2; i++) {
		void *p = calloc(7, 13); /* LEAK:calloc */
		hold(p);
	}
}

NOINLINE void leak_realloc_null(void)
{
	for (int i = 0; i < 4; i++) {
		void *p = realloc(NULL, 211); /* LEAK:realloc_null */
		hold(p);
	}
}

NOINLINE void leak_reallocarray(void)
{
	for (int i = 0; i < 2; i++) {
		void *p = reallocarray(NULL, 5, 17); /* LEAK:reallocarray */
		hold(p);
	}
}

NOINLINE void leak_posix_memalign(void)
{
	for (int i = 0; i < 3; i++) {
		void *p = NULL;
		int err = posix_memalign(&p, 64, 300); /* LEAK:posix_memalign */
		if (err)
			_exit(2);
		hold(p);
	}
}

NOINLINE void leak_aligned_alloc(void)
{
	for (int i = 0; i < 2; i++) {
		void *p = aligned_alloc(64, 256); /* LEAK:aligned_alloc */
		hold(p);
	}
}

NOINLINE void leak_memalign(void)
{
	for (int i = 0; i < 3; i++) {
		void *p = memalign(32, 120); /* LEAK:memalign */
		hold(p);
	}
}

NOINLINE void leak_valloc(void)
{
	for (int i = 0; i < 2; i++) {
		void *p = valloc(333); /* LEAK:valloc */
		hold(p);
	}
}

NOINLINE void leak_pvalloc(void)
{
	for (int i = 0; i < 2; i++) {
		void *p = pvalloc(444); /* LEAK:pvalloc */
		hold(p);
	}
}

/* 50 malloc/free pairs: one site, everything freed. */
NOINLINE void churn_malloc(void)
{
	for (int i = 0; i < 50; i++) {
		void *p = malloc(64); /* LEAK:churn_malloc */
		if (!p)
			_exit(2);
		free(p);
	}
}

/* Every allocator's blocks freed with free(): nine sites, 5 allocs and 5 frees each. */
NOINLINE void churn_kinds(void)
{
	for (int i = 0; i < 5; i++) {
		void *p[9] = { NULL };

		p[0] = malloc(10);
		p[1] = calloc(2, 10);
		p[2] = realloc(NULL, 30);
		p[3] = reallocarray(NULL, 4, 10);
		if (posix_memalign(&p[4], 16, 50))
			_exit(2);
		p[5] = aligned_alloc(16, 64);
		p[6] = memalign(16, 70);
		p[7] = valloc(80);
		p[8] = pvalloc(90);
		for (int j = 0; j < 9; j++) {
			if (!p[j])
				_exit(2);
			free(p[j]);
		}
	}
}

/* A block grown through three reallocs and kept: only the last site holds it. */
static void *chain;

NOINLINE void chain_start(void)
{
	chain = malloc(16); /* LEAK:chain_start */
}

NOINLINE void chain_grow1(void)
{
	chain = realloc(chain, 48); /* LEAK:chain_grow1 */
}

NOINLINE void chain_grow2(void)
{
	chain = realloc(chain, 5000); /* LEAK:chain_grow2 */
}

NOINLINE void chain_grow3(void)
{
	chain = realloc(chain, 70000); /* LEAK:chain_grow3 */
}

NOINLINE void realloc_chain(void)
{
	chain_start();
	chain_grow1();
	chain_grow2();
	chain_grow3();
	hold(chain);
}

/* Shrinking realloc: glibc keeps the block in place; it still moves to the realloc's site. */
static void *shrunk;

NOINLINE void shrink_start(void)
{
	shrunk = malloc(1000); /* LEAK:shrink_start */
}

NOINLINE void shrink_in_place(void)
{
	void *old = shrunk;

	shrunk = realloc(shrunk, 400); /* LEAK:shrink_in_place */
	if (shrunk != old)
		_exit(3);	/* the test's premise (not moved) does not hold: say so */
	hold(shrunk);
}

/* realloc(p, 0) frees p (glibc) and allocates nothing. */
static void *zeroed;

NOINLINE void zero_start(void)
{
	zeroed = malloc(77); /* LEAK:zero_start */
}

NOINLINE void realloc_to_zero(void)
{
	void *r = realloc(zeroed, 0); /* LEAK:realloc_to_zero */
	if (r)
		_exit(2);
}

/* A realloc that fails leaves the block alive, still charged to its site. */
static void *kept_after_failed_realloc;

NOINLINE void realloc_fail_start(void)
{
	kept_after_failed_realloc = malloc(40); /* LEAK:realloc_fail_start */
}

NOINLINE void realloc_fail(void)
{
	void *r = realloc(kept_after_failed_realloc, huge); /* LEAK:realloc_fail */
	if (r)
		_exit(2);
	hold(kept_after_failed_realloc);
}

/* Blocks big enough for glibc to mmap them, and a realloc of one (mremap). */
NOINLINE void leak_big(void)
{
	void *p = malloc(1 << 20); /* LEAK:big */
	hold(p);
}

NOINLINE void churn_big(void)
{
	for (int i = 0; i < 3; i++) {
		void *p = calloc(1, 262144); /* LEAK:churn_big */
		if (!p)
			_exit(2);
		free(p);
	}
}

static void *big;

NOINLINE void big_start(void)
{
	big = malloc(300000); /* LEAK:big_start */
}

NOINLINE void big_grow(void)
{
	big = realloc(big, 600000); /* LEAK:big_grow */
	hold(big);
}

NOINLINE void free_null(void)
{
	for (int i = 0; i < 3; i++)
		free(NULL);
}

/* Two failed allocations: malloc(SIZE_MAX) and an overflowing calloc. */
NOINLINE void fail_alloc(void)
{
	void *p = malloc(huge); /* LEAK:fail_malloc */
	void *q = calloc(huge, 2); /* LEAK:fail_calloc */

	if (p || q)
		_exit(2);
}

int main(int argc, char **argv)
{
	leak_malloc();
	leak_calloc();
	leak_realloc_null();
	leak_reallocarray();
	leak_posix_memalign();
	leak_aligned_alloc();
	leak_memalign();
	leak_valloc();
	leak_pvalloc();
	churn_malloc();
	churn_kinds();
	for (int i = 0; i < 2; i++)
		realloc_chain();
	shrink_start();
	shrink_in_place();
	zero_start();
	realloc_to_zero();
	realloc_fail_start();
	realloc_fail();
	leak_big();
	churn_big();
	big_start();
	big_grow();
	free_null();
	fail_alloc();
	handshake(argc > 1 ? argv[1] : NULL, "done", "quit");
	return 0;
}
