// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * cfi_target.c - an object whose unwind rows test_cfi knows: built with frame pointers at
 * -O0, so framed() opens with push %rbp; mov %rsp,%rbp, and its rows are fixed by the ABI.
 */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int framed(int x)
{
	volatile int a[4] = { x, x + 1, x + 2, x + 3 };

	return a[0] + a[3];
}

int main(int argc, char **argv)
{
	printf("%d\n", framed(argc));
	free(malloc(16));	/* a PLT call */
	return 0;
}
