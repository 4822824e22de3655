// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * cxx_new.cc - leaks through C++'s operator new and operator new[], for tests/e2e/unwind.sh.
 * The allocation happens in libstdc++ (operator new calls malloc), which keeps no frame
 * pointer: the function that said `new` must still be the frame right above operator new
 * (issue 14: stacks unwound with .eh_frame).
 *
 *   leak_new()        5 x new Node (48 bytes each): 5 blocks, 240 bytes      LEAK:new
 *   leak_new_array()  3 x new char[200]: 3 blocks, 600 bytes                 LEAK:new_array
 *
 * Both are called from main.  libstdc++'s operator new[] may tail-call operator new (GCC
 * 12's does: `jmp _Znwm@plt`), so the array's stack can begin with operator new alone.
 * No iostream, no other heap use of the program's own (the C++ runtime's start-up
 * allocations are sites of their own, before main).
 *
 * Usage: cxx_new DIR
 * Leaks, then creates DIR/done holding its pid and waits for DIR/quit (at most 60 s).
 */
#include <stdlib.h>

#include "fd_common.h"

struct Node {
	Node *next;
	long value[5];
};
static_assert(sizeof(Node) == 48, "Node is 48 bytes");

static Node *nodes[5];
static char *arrays[3];

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

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	must(argc);
	leak_new();
	leak_new_array();
	handshake(argv[1], "done", "quit");
	return 0;
}
