// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * cxx_delete.cc - C++ blocks freed by every form of operator delete, for tests/e2e/
 * allocators.sh: built with jemalloc (cxx_delete_je), whose operators leaktop probes
 * directly.  Each function is its own site; the counts are mirrored in the test.
 *
 * Usage: cxx_delete DIR (DIR/done, then waits for DIR/quit)
 */
#include <new>

#include "fd_common.h"

struct Node {
	Node *next;
	long value[5];
};
static_assert(sizeof(Node) == 48, "Node is 48 bytes");

struct alignas(64) Wide {
	char bytes[128];
};

static Node *kept;

/* 10 nodes, 9 freed by (sized) delete: one outstanding. */
NOINLINE void churn_delete()
{
	for (int i = 0; i < 10; i++) {
		Node *n = new Node;

		if (i == 9)
			kept = n;
		else
			delete n;
	}
}

/* 6 arrays, every one freed by delete[]. */
NOINLINE void churn_delete_array()
{
	for (int i = 0; i < 6; i++) {
		char *a = new char[300];

		a[0] = (char)i;
		delete[] a;
	}
}

/* 4 over-aligned objects (aligned new and delete), every one freed. */
NOINLINE void churn_aligned()
{
	for (int i = 0; i < 4; i++) {
		Wide *w = new Wide;

		w->bytes[0] = (char)i;
		delete w;
	}
}

/* 5 nothrow allocations, every one freed. */
NOINLINE void churn_nothrow()
{
	for (int i = 0; i < 5; i++) {
		Node *n = new (std::nothrow) Node;

		delete n;
	}
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	must(argc);
	churn_delete();
	churn_delete_array();
	churn_aligned();
	churn_nothrow();
	handshake(argv[1], "done", "quit");
	return 0;
}
