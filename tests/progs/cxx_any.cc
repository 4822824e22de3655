// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * cxx_any.cc - known leaks and freed churn through C++'s operators new and delete, for
 * tests/e2e/allocator_apis.sh to run under each allocator that defines them: as built (the
 * operators are libstdc++'s, which call glibc's malloc and free), with LD_PRELOAD of
 * Debian's tcmalloc or mimalloc, and linked with Debian's jemalloc (cxx_any_je; its
 * operators come before libstdc++'s).  Unlike cxx_new.cc (tests/e2e/unwind.sh) it waits
 * for `leaktop -p` to attach and frees through every form of delete.
 *
 *   leak_new()           5 x new Node (48 bytes)                    5 blocks, 240 bytes
 *   leak_new_array()     3 x new char[200]                          3 blocks, 600 bytes
 *   leak_new_nothrow()   2 x new (std::nothrow) Node                2 blocks,  96 bytes
 *   leak_new_aligned()   2 x new Wide (alignas(64), 128 bytes)      2 blocks, 256 bytes
 *   churn_delete()       40 x new Node + delete (sized delete)      all freed
 *   churn_delete_array() 30 x new char[64] + delete[]               all freed
 *   churn_aligned()      10 x new Wide + delete (sized, aligned)    all freed
 *
 * In all: 12 blocks, 1192 bytes outstanding; 92 allocations, 80 frees.  No iostream and no
 * other heap use of the program's own after main starts (the C++ runtime's and the
 * allocators' start-up allocations come before main, at sites of their own).
 *
 * Usage: cxx_any DIR
 * Writes DIR/ready (its pid) and waits for DIR/go, allocates, writes DIR/done and waits for
 * DIR/quit (each wait at most 60 s).
 */
#include <new>
#include <stdlib.h>

#include "fd_common.h"

struct Node {
	Node *next;
	long value[5];
};
static_assert(sizeof(Node) == 48, "Node is 48 bytes");

struct alignas(64) Wide {
	char bytes[128];
};
static_assert(sizeof(Wide) == 128, "Wide is 128 bytes");

static Node *nodes[7];
static char *arrays[3];
static Wide *wides[2];

NOINLINE void leak_new()
{
	for (int i = 0; i < 5; i++) {
		nodes[i] = new Node; /* LEAK:new */
		nodes[i]->next = i ? nodes[i - 1] : nullptr;
	}
}

NOINLINE void leak_new_array()
{
	for (int i = 0; i < 3; i++) {
		arrays[i] = new char[200]; /* LEAK:new_array */
		arrays[i][0] = (char)i;
	}
}

NOINLINE void leak_new_nothrow()
{
	for (int i = 5; i < 7; i++) {
		nodes[i] = new (std::nothrow) Node; /* LEAK:new_nothrow */
		must(nodes[i] ? 0 : -1);
	}
}

NOINLINE void leak_new_aligned()
{
	for (int i = 0; i < 2; i++) {
		wides[i] = new Wide; /* LEAK:new_aligned */
		wides[i]->bytes[0] = (char)i;
	}
}

NOINLINE void churn_delete()
{
	for (int i = 0; i < 40; i++) {
		Node *volatile n = new Node;

		n->value[0] = i;
		delete n;
	}
}

NOINLINE void churn_delete_array()
{
	for (int i = 0; i < 30; i++) {
		char *volatile a = new char[64];

		a[0] = (char)i;
		delete[] a;
	}
}

NOINLINE void churn_aligned()
{
	for (int i = 0; i < 10; i++) {
		Wide *volatile w = new Wide;

		w->bytes[0] = (char)i;
		delete w;
	}
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	handshake(argv[1], "ready", "go");
	leak_new();
	leak_new_array();
	leak_new_nothrow();
	leak_new_aligned();
	churn_delete();
	churn_delete_array();
	churn_aligned();
	handshake(argv[1], "done", "quit");
	return 0;
}
