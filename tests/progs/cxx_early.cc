// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * cxx_early.cc - early_leak.c in C++: 1000 objects of 48 bytes made with new in
 * leak_news_at_start(), the first thing main does, for tests/e2e/exec_bind.sh (run with a
 * preloaded jemalloc: libstdc++'s operator new calls the malloc jemalloc defines).
 *
 * Usage: cxx_early DIR
 * Leaks, then writes DIR/done (its pid) and waits for DIR/quit.
 */
#include <cstdlib>

#include "fd_common.h"

struct node {
	char bytes[48];
};

static node *keep[1000];

NOINLINE void leak_news_at_start(void)
{
	for (int i = 0; i < 1000; i++)
		keep[i] = new node(); /* LEAK:cxx_early */
}

int main(int argc, char **argv)
{
	leak_news_at_start();
	if (argc < 2)
		return 2;
	handshake(argv[1], "done", "quit");
	return 0;
}
