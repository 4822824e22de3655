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
 *   map_fixed_over		4 pages, the 2nd replaced by map_fixed_into: 2 mappings, 12288 B
 *   map_fixed_into		1 page mapped with MAP_FIXED over map_fixed_over's: 1, 4096 B
 *   map_tiles_a, _b	3 pages each, side by side in a reservation (map_tiles_reserve,
 *			nothing left), one munmap over the last 2 of a and the first 2 of
 *			b: 1 mapping, 4096 B each
 *   map_split_trim		4 pages, the 1st made read-only (a mapping split in two), the
 *			last 2 unmapped: 1 mapping, 8192 B
 *   brk_up_down		the break grown by 3 pages one at a time, then down by 1.5
 *			pages: 2 mappings, 6144 B, 1 unmapped
 *   merge_a, _b, _c	1 page each, side by side in a 4-page reservation (merge_reserve,
 *			its last page left: 1 mapping, 4096 B), merged by the kernel into
 *			one mapping; mremap moves the 3 pages away as 6 (MREMAP_MAYMOVE:
 *			the reservation's last page is in the way): merge_a 1 mapping,
 *			24576 B; merge_b and merge_c nothing left, 1 unmapped each
 *   grow_a, _b		1 page each, side by side in a 5-page reservation (grow_reserve,
 *			its last 3 pages unmapped first, the rest replaced: nothing left,
 *			1 unmapped), grown in place by mremap to 5 pages: grow_a 1 mapping,
 *			20480 B; grow_b nothing left, 1 unmapped
 * None of these needs leaktop to search its whole map of mappings (stats.mmap_scans).
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

#define PAGE 4096UL

static inline __attribute__((always_inline)) char *map_anon(void *at, size_t len, int flags)
{
	return must_map(mmap(at, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flags,
			     -1, 0));
}

static NOINLINE char *map_fixed_over(void)
{
	return map_anon(NULL, 4 * PAGE, 0);
}

static NOINLINE void map_fixed_into(char *p)
{
	map_anon(p + PAGE, PAGE, MAP_FIXED);
}

static NOINLINE char *map_tiles_reserve(void)
{
	return map_anon(NULL, 6 * PAGE, 0);
}

static NOINLINE void map_tiles_a(char *r)
{
	map_anon(r, 3 * PAGE, MAP_FIXED);
}

static NOINLINE void map_tiles_b(char *r)
{
	map_anon(r + 3 * PAGE, 3 * PAGE, MAP_FIXED);
}

static NOINLINE void map_split_trim(void)
{
	char *p = map_anon(NULL, 4 * PAGE, 0);

	must(mprotect(p, PAGE, PROT_READ));
	must(munmap(p + 2 * PAGE, 2 * PAGE));
}

static NOINLINE void brk_up_down(void)
{
	long cur = syscall(SYS_brk, 0);

	for (int i = 1; i <= 3; i++)
		if (syscall(SYS_brk, cur + i * PAGE) != (long)(cur + i * PAGE))
			_exit(2);
	if (syscall(SYS_brk, cur + PAGE + PAGE / 2) != (long)(cur + PAGE + PAGE / 2))
		_exit(2);
}

static NOINLINE char *merge_reserve(void)
{
	return map_anon(NULL, 4 * PAGE, 0);
}

static NOINLINE void merge_a(char *r)
{
	map_anon(r, PAGE, MAP_FIXED);
}

static NOINLINE void merge_b(char *r)
{
	map_anon(r + PAGE, PAGE, MAP_FIXED);
}

static NOINLINE void merge_c(char *r)
{
	map_anon(r + 2 * PAGE, PAGE, MAP_FIXED);
}

/* Three mappings merged into one, moved as a whole (the 4th page keeps it from growing). */
static NOINLINE void merge_move(void)
{
	char *r = merge_reserve();

	merge_a(r);
	merge_b(r);
	merge_c(r);
	must_map(mremap(r, 3 * PAGE, 6 * PAGE, MREMAP_MAYMOVE));
}

static NOINLINE char *grow_reserve(void)
{
	return map_anon(NULL, 5 * PAGE, 0);
}

static NOINLINE void grow_a(char *r)
{
	map_anon(r, PAGE, MAP_FIXED);
}

static NOINLINE void grow_b(char *r)
{
	map_anon(r + PAGE, PAGE, MAP_FIXED);
}

/* Two mappings merged into one, grown in place over the free pages after them. */
static NOINLINE void grow_in_place(void)
{
	char *r = grow_reserve();

	must(munmap(r + 2 * PAGE, 3 * PAGE));
	grow_a(r);
	grow_b(r);
	if (mremap(r, 2 * PAGE, 5 * PAGE, 0) != r)
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
	map_fixed_into(map_fixed_over());
	char *r = map_tiles_reserve();

	map_tiles_a(r);
	map_tiles_b(r);
	must(munmap(r + PAGE, 4 * PAGE));
	map_split_trim();
	brk_up_down();
	merge_move();
	grow_in_place();
	handshake(argv[1], "done", "quit");
	return 0;
}
