// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_procmaps.c - unit tests of user/procmaps.c: parsing of fixed maps text (fields, paths
 * with spaces, " (deleted)", malformed lines), the binary search, and reading the maps of
 * live, large and vanished processes.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "check.h"
#include "live/procmaps.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

static void test_procmaps_parses_all_fields(void)
{
	const char *text =
		"55d0c6a00000-55d0c6a02000 r-xp 00002000 fd:01 1234567                    "
		"/usr/bin/cat\n";
	struct proc_maps maps;
	const struct proc_map *m;

	CHECK_EQ_INT(procmaps__parse(text, &maps), 0);
	CHECK_EQ_INT(maps.n, 1);
	m = &maps.v[0];
	CHECK_EQ_INT(m->start, 0x55d0c6a00000ULL);
	CHECK_EQ_INT(m->end, 0x55d0c6a02000ULL);
	CHECK_EQ_INT(m->file_offset, 0x2000);
	CHECK_EQ_INT(m->dev, makedev(0xfd, 0x01));
	CHECK_EQ_INT(m->ino, 1234567);
	CHECK(m->readable && !m->writable && m->executable && !m->shared);
	CHECK_EQ_STR(m->path, "/usr/bin/cat");
	CHECK(!m->deleted);
	procmaps__free(&maps);
	CHECK(maps.v == NULL && maps.n == 0);
}

static void test_procmaps_parses_shared_writable_and_wide_device(void)
{
	const char *text = "7f0000000000-7f0000001000 rw-s 1234abcd 103:2a 99 /dev/shm/x\n";
	struct proc_maps maps;

	CHECK_EQ_INT(procmaps__parse(text, &maps), 0);
	CHECK_EQ_INT(maps.n, 1);
	CHECK(maps.v[0].readable && maps.v[0].writable && !maps.v[0].executable);
	CHECK(maps.v[0].shared);
	CHECK_EQ_INT(maps.v[0].file_offset, 0x1234abcd);
	CHECK_EQ_INT(maps.v[0].dev, makedev(0x103, 0x2a));
	CHECK_EQ_STR(maps.v[0].path, "/dev/shm/x");
	procmaps__free(&maps);
}

static void test_procmaps_anonymous_mapping_has_no_path(void)
{
	/* With and without the trailing space older kernels print after the inode. */
	const char *text =
		"7f0000000000-7f0000001000 rw-p 00000000 00:00 0 \n"
		"7f0000002000-7f0000003000 ---p 00000000 00:00 0\n";
	struct proc_maps maps;

	CHECK_EQ_INT(procmaps__parse(text, &maps), 0);
	CHECK_EQ_INT(maps.n, 2);
	CHECK(maps.v[0].path == NULL && maps.v[1].path == NULL);
	CHECK_EQ_INT(maps.v[0].dev, 0);
	CHECK_EQ_INT(maps.v[0].ino, 0);
	CHECK(!maps.v[1].readable && !maps.v[1].writable && !maps.v[1].executable);
	procmaps__free(&maps);
}

static void test_procmaps_keeps_pseudo_paths(void)
{
	const char *text =
		"5600000000-5600021000 rw-p 00000000 00:00 0                          [heap]\n"
		"7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                      [stack]\n"
		"7ffd00100000-7ffd00102000 r-xp 00000000 00:00 0                      [vdso]\n"
		"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0              [vsyscall]\n";
	struct proc_maps maps;

	CHECK_EQ_INT(procmaps__parse(text, &maps), 0);
	CHECK_EQ_INT(maps.n, 4);
	CHECK_EQ_STR(maps.v[0].path, "[heap]");
	CHECK_EQ_STR(maps.v[1].path, "[stack]");
	CHECK_EQ_STR(maps.v[2].path, "[vdso]");
	CHECK_EQ_STR(maps.v[3].path, "[vsyscall]");
	CHECK_EQ_INT(maps.v[3].start, 0xffffffffff600000ULL);
	procmaps__free(&maps);
}

static void test_procmaps_parses_path_with_spaces(void)
{
	const char *text =
		"7f0000000000-7f0000001000 r-xp 00000000 08:01 42     /opt/my app/lib  x.so\n";
	struct proc_maps maps;

	CHECK_EQ_INT(procmaps__parse(text, &maps), 0);
	CHECK_EQ_INT(maps.n, 1);
	CHECK_EQ_STR(maps.v[0].path, "/opt/my app/lib  x.so");
	CHECK(!maps.v[0].deleted);
	procmaps__free(&maps);
}

static void test_procmaps_strips_deleted_suffix(void)
{
	const char *text =
		"7f0000000000-7f0000001000 r-xp 00000000 08:01 42 /tmp/a b (deleted)\n"
		"7f0000001000-7f0000002000 r-xp 00000000 08:01 43 /tmp/(deleted)\n"
		"7f0000002000-7f0000003000 rw-s 00000000 00:01 44 /memfd:jit (deleted)\n";
	struct proc_maps maps;

	CHECK_EQ_INT(procmaps__parse(text, &maps), 0);
	CHECK_EQ_INT(maps.n, 3);
	CHECK_EQ_STR(maps.v[0].path, "/tmp/a b");
	CHECK(maps.v[0].deleted);
	CHECK_EQ_STR(maps.v[1].path, "/tmp/(deleted)");	/* no space: part of the name */
	CHECK(!maps.v[1].deleted);
	CHECK_EQ_STR(maps.v[2].path, "/memfd:jit");
	CHECK(maps.v[2].deleted);
	procmaps__free(&maps);
}

static void test_procmaps_rejects_garbage_line(void)
{
	static const char *const bad[] = {
		"hello world\n",
		"1000-2000\n",
		"1000-2000 r-xp 0 08:01\n",			/* no inode */
		"1000-2000 r-xp 0 08:01 \n",
		"1000-2000 r-xq 0 08:01 1 /x\n",		/* bad sharing flag */
		"1000-2000 rxw- 0 08:01 1 /x\n",		/* bad permission order */
		"1000-2000 r-xp 0 0801 1 /x\n",			/* no ':' */
		"2000-1000 r-xp 0 08:01 1 /x\n",		/* end before start */
		"1000-1000 r-xp 0 08:01 1 /x\n",		/* empty */
		"g000-2000 r-xp 0 08:01 1 /x\n",
		"1000-2000 r-xp 0 08:01 1a /x\n",		/* inode not decimal */
		"1000-2000 r-xp 0 08:01 99999999999999999999 /x\n",	/* inode overflow */
		"11111111111111111-2000 r-xp 0 08:01 1 /x\n",	/* more than 64 bits */
		" 1000-2000 r-xp 0 08:01 1 /x\n",
	};
	struct proc_maps maps;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		maps.v = (void *)1;
		maps.n = 7;
		if (procmaps__parse(bad[i], &maps) != -EINVAL) {
			printf("FAIL %s: accepted \"%s\"\n", __func__, bad[i]);
			check__failed = 1;
			return;
		}
		CHECK(maps.v == NULL && maps.n == 0);
	}
}

static void test_procmaps_garbage_after_valid_lines_fails_whole_parse(void)
{
	const char *text =
		"1000-2000 r-xp 00000000 08:01 1 /a\n"
		"2000-3000 r--p 00000000 08:01 1 /b\n"
		"this is not a mapping\n";
	struct proc_maps maps;

	CHECK_EQ_INT(procmaps__parse(text, &maps), -EINVAL);
	CHECK(maps.v == NULL && maps.n == 0);
}

static void test_procmaps_accepts_empty_text_and_missing_final_newline(void)
{
	struct proc_maps maps;

	CHECK_EQ_INT(procmaps__parse("", &maps), 0);
	CHECK_EQ_INT(maps.n, 0);
	procmaps__free(&maps);

	CHECK_EQ_INT(procmaps__parse("1000-2000 r-xp 00000000 08:01 1 /a b", &maps), 0);
	CHECK_EQ_INT(maps.n, 1);
	CHECK_EQ_STR(maps.v[0].path, "/a b");
	procmaps__free(&maps);
}

static void test_procmaps_sorts_unsorted_input(void)
{
	const char *text =
		"3000-4000 r-xp 00000000 08:01 1 /c\n"
		"1000-2000 r-xp 00000000 08:01 1 /a\n"
		"2000-3000 r-xp 00000000 08:01 1 /b\n";
	struct proc_maps maps;

	CHECK_EQ_INT(procmaps__parse(text, &maps), 0);
	CHECK_EQ_INT(maps.n, 3);
	CHECK_EQ_STR(maps.v[0].path, "/a");
	CHECK_EQ_STR(maps.v[1].path, "/b");
	CHECK_EQ_STR(maps.v[2].path, "/c");
	CHECK_EQ_STR(procmaps__find(&maps, 0x2fff)->path, "/b");
	procmaps__free(&maps);
}

static void test_procmaps_find_binary_search(void)
{
	enum { N = 1000 };
	struct proc_maps maps;
	char *text, *p;
	uint64_t a;
	size_t i;

	/* Mappings [0x10000 * (i + 1), + 0x3000), gaps of 0xd000 between them. */
	text = malloc(N * 80 + 1);
	CHECK(text != NULL);
	p = text;
	for (i = 0; i < N; i++) {
		a = 0x10000ULL * (i + 1);
		p += sprintf(p, "%llx-%llx r-xp 00000000 08:01 %zu /lib/%zu.so\n",
			     (unsigned long long)a, (unsigned long long)(a + 0x3000), i, i);
	}
	CHECK_EQ_INT(procmaps__parse(text, &maps), 0);
	free(text);
	CHECK_EQ_INT(maps.n, N);

	CHECK(procmaps__find(&maps, 0) == NULL);
	CHECK(procmaps__find(&maps, 0xffff) == NULL);
	for (i = 0; i < N; i++) {
		a = 0x10000ULL * (i + 1);
		CHECK(procmaps__find(&maps, a) == &maps.v[i]);
		CHECK(procmaps__find(&maps, a + 0x1234) == &maps.v[i]);
		CHECK(procmaps__find(&maps, a + 0x2fff) == &maps.v[i]);
		CHECK(procmaps__find(&maps, a + 0x3000) == NULL);	/* end is exclusive */
		CHECK(procmaps__find(&maps, a - 1) == NULL);
	}
	CHECK(procmaps__find(&maps, UINT64_MAX) == NULL);
	procmaps__free(&maps);

	memset(&maps, 0, sizeof(maps));
	CHECK(procmaps__find(&maps, 0x1000) == NULL);		/* empty */
}

static void test_procmaps_read_self_finds_code_and_stack(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const struct proc_map *m;
	struct proc_maps maps;

	CHECK(n > 0);
	exe[n] = '\0';
	CHECK_EQ_INT(procmaps__read(getpid(), &maps), 0);
	m = procmaps__find(&maps, (uintptr_t)&test_procmaps_read_self_finds_code_and_stack);
	CHECK(m != NULL);
	CHECK(m->executable && !m->writable);
	CHECK_EQ_STR(m->path, exe);
	CHECK(m->ino != 0 && m->dev != 0);
	/* The frame, not a local's address: ASan may keep locals on a heap "fake stack". */
	m = procmaps__find(&maps, (uint64_t)(uintptr_t)__builtin_frame_address(0));
	CHECK(m != NULL);
	CHECK_EQ_STR(m->path, "[stack]");
	procmaps__free(&maps);
}

static void test_procmaps_read_grows_buffer_for_large_maps(void)
{
	enum { N = 3000 };	/* ~ 3000 * 2 lines of ~ 75 bytes: far above one read buffer */
	long ps = sysconf(_SC_PAGESIZE);
	struct proc_maps maps;
	char *area;
	size_t i;
	int ok = 1;

	/* Alternate protections so the kernel cannot merge the pages into one mapping. */
	area = mmap(NULL, (size_t)ps * 2 * N, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(area != MAP_FAILED);
	for (i = 0; i < N; i++)
		mprotect(area + (2 * i + 1) * (size_t)ps, (size_t)ps, PROT_NONE);

	CHECK_EQ_INT(procmaps__read(getpid(), &maps), 0);
	CHECK(maps.n >= 2 * N);
	for (i = 0; i < 2 * N && ok; i++) {
		const struct proc_map *m = procmaps__find(&maps, (uintptr_t)area + i * (size_t)ps);

		ok = m && m->start == (uintptr_t)area + i * (size_t)ps && m->readable == !(i & 1);
	}
	procmaps__free(&maps);
	munmap(area, (size_t)ps * 2 * N);
	CHECK(ok);
}

static void test_procmaps_read_vanished_process_gives_esrch(void)
{
	struct proc_maps maps;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid)
		_exit(0);
	CHECK_EQ_INT(waitpid(pid, NULL, 0), pid);
	CHECK_EQ_INT(procmaps__read(pid, &maps), -ESRCH);
	CHECK(maps.v == NULL && maps.n == 0);
	CHECK_EQ_INT(procmaps__read(INT_MAX, &maps), -ESRCH);	/* above any pid_max */
}

/* smaps: a writable mapping whose VmFlags hold "um" is found; fields starting with a hex
 * letter (Anonymous:, FilePmdMapped:) are not taken for headers. */
static void test_smaps_finds_writable_userfaultfd_mapping(void)
{
	const char *text =
		"55d0a0000000-55d0a0001000 r--p 00000000 08:01 42 /usr/bin/x\n"
		"Size:                  4 kB\n"
		"VmFlags: rd mr mw me dw sd\n"
		"7f0000000000-7f0001000000 rw-p 00000000 00:00 0 \n"
		"Anonymous:             4 kB\n"
		"FilePmdMapped:         0 kB\n"
		"VmFlags: rd wr mr mw me ac sd um\n";
	const char *none =
		"7f0000000000-7f0001000000 rw-p 00000000 00:00 0 \n"
		"VmFlags: rd wr mr mw me ac sd uv\n"
		"7f0002000000-7f0003000000 r--p 00000000 00:00 0 \n"
		"VmFlags: rd mr mw me ac sd um\n";
	uint64_t at = 0;

	CHECK_EQ_INT(procmaps__smaps_uffd(text, &at), 1);
	CHECK(at == 0x7f0000000000ull);
	CHECK_EQ_INT(procmaps__smaps_uffd(none, &at), 0);
	CHECK_EQ_INT(procmaps__smaps_uffd("", &at), 0);
}

int main(void)
{
	RUN(test_smaps_finds_writable_userfaultfd_mapping);
	RUN(test_procmaps_parses_all_fields);
	RUN(test_procmaps_parses_shared_writable_and_wide_device);
	RUN(test_procmaps_anonymous_mapping_has_no_path);
	RUN(test_procmaps_keeps_pseudo_paths);
	RUN(test_procmaps_parses_path_with_spaces);
	RUN(test_procmaps_strips_deleted_suffix);
	RUN(test_procmaps_rejects_garbage_line);
	RUN(test_procmaps_garbage_after_valid_lines_fails_whole_parse);
	RUN(test_procmaps_accepts_empty_text_and_missing_final_newline);
	RUN(test_procmaps_sorts_unsorted_input);
	RUN(test_procmaps_find_binary_search);
	RUN(test_procmaps_read_self_finds_code_and_stack);
	RUN(test_procmaps_read_grows_buffer_for_large_maps);
	RUN(test_procmaps_read_vanished_process_gives_esrch);
	CHECK_EXIT();
}
