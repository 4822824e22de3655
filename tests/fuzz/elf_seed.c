// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * elf_seed.c - the seed of fuzz_elf's corpus: built into a small program with line info, and
 * a stripped copy whose .gnu_debuglink names the split-off debug file.
 */
#include <stdlib.h>

__attribute__((noinline)) void *seed_alloc(int n)
{
	return malloc((size_t)n);
}

int main(int argc, char **argv)
{
	free(seed_alloc(argc * 16));
	return 0;
}
