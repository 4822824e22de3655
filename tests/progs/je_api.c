// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * je_api.c - jemalloc's own API (mallocx, rallocx, sdallocx, dallocx), linked with Debian's
 * jemalloc, for tests/e2e/allocators.sh; each function is its own site, the counts are
 * mirrored in the test.  Built only when jemalloc's header is there (make deps installs it).
 *
 * Usage: je_api DIR (DIR/done, then waits for DIR/quit)
 */
#include <jemalloc/jemalloc.h>

#include "fd_common.h"

static void *keep[16];
static int n_keep;

/* 3 blocks of 500 bytes, kept. */
NOINLINE void leak_mallocx(void)
{
	for (int i = 0; i < 3; i++) {
		keep[n_keep] = mallocx(500, 0);
		if (!keep[n_keep++])
			_exit(2);
	}
}

NOINLINE void *first_block(void)
{
	void *p = mallocx(64, 0);

	if (!p)
		_exit(2);
	return p;
}

/* 2 blocks grown by rallocx to 5000 bytes, kept (first_block's 64 freed by it). */
NOINLINE void leak_rallocx(void)
{
	for (int i = 0; i < 2; i++) {
		keep[n_keep] = rallocx(first_block(), 5000, 0);
		if (!keep[n_keep++])
			_exit(2);
	}
}

/* 8 blocks freed by sdallocx, 4 by dallocx. */
NOINLINE void churn_sdallocx(void)
{
	for (int i = 0; i < 8; i++) {
		void *p = mallocx(200, 0);

		if (!p)
			_exit(2);
		sdallocx(p, 200, 0);
	}
}

NOINLINE void churn_dallocx(void)
{
	for (int i = 0; i < 4; i++) {
		void *p = mallocx(100, 0);

		if (!p)
			_exit(2);
		dallocx(p, 0);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	must(argc);
	leak_mallocx();
	leak_rallocx();
	churn_sdallocx();
	churn_dallocx();
	handshake(argv[1], "done", "quit");
	return 0;
}
