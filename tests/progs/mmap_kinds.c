// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * mmap_kinds.c - keeps a known set of anonymous mappings and brk growth, each from its own
 * function, after partial unmaps and a remap; the numbers in tests/e2e/mmap.sh mirror it:
 *   map_three_unmap_one	3 x 64 KiB mapped at one call, 1 unmapped: 2 mappings, 131072 B
 *   map_punch_hole		1 MiB mapped, its middle 256 KiB unmapped: 2 mappings, 786432 B
 *   map_then_remap		128 KiB mapped, mremap'd to 256 KiB: 1 mapping, 262144 B
 *   map_file			/proc/self/exe mapped privately: a file mapping, no site
 *   grow_brk			the break grown by 3 pages: 12288 B
 *   grow_brk_unaligned	the break grown by 100 B (the kernel maps a page): 100 B
 * No stdio, no heap (the heap would grow the break from malloc).
 *
 * Usage: mmap_kinds DIR
 * Creates DIR/done holding its pid, then waits for DIR/quit (at most 60 s).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fd_common.h"

#define KIB 1024UL

static void *must_map(void *p)
{
	if (p == MAP_FAILED)
		_exit(2);
	return p;
}

static NOINLINE void map_three_unmap_one(void)
{
	char *p[3];

	for (int i = 0; i < 3; i++)
		p[i] = mmap(NULL, 64 * KIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0);
	for (int i = 0; i < 3; i++)
		must_map(p[i]);
	must(munmap(p[1], 64 * KIB));
}

static NOINLINE void map_punch_hole(void)
{
	char *p = mmap(NULL, 1024 * KIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	must_map(p);
	must(munmap(p + 384 * KIB, 256 * KIB));
}

static NOINLINE void map_then_remap(void)
{
	char *p = mmap(NULL, 128 * KIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	must_map(p);
	must_map(mremap(must_map(p), 128 * KIB, 256 * KIB, MREMAP_MAYMOVE));
}

static NOINLINE void map_file(void)
{
	int fd = must(open("/proc/self/exe", O_RDONLY | O_CLOEXEC));

	char *p = must_map(mmap(NULL, 8192, PROT_READ, MAP_PRIVATE, fd, 0));

	must(munmap(p + 4096, 4096));	/* a file mapping's unmap: nothing of ours */
	must(close(fd));
}

static NOINLINE void grow_brk(void)
{
	long cur = syscall(SYS_brk, 0);

	if (syscall(SYS_brk, cur + 3 * 4096) != cur + 3 * 4096)
		_exit(2);
}

static NOINLINE void grow_brk_unaligned(void)
{
	long cur = syscall(SYS_brk, 0);

	if (syscall(SYS_brk, cur + 100) != cur + 100)
		_exit(2);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 1;
	map_three_unmap_one();
	map_punch_hole();
	map_then_remap();
	map_file();
	grow_brk();
	grow_brk_unaligned();
	handshake(argv[1], "done", "quit");
	return 0;
}
