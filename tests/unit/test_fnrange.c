// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_fnrange.c - where --stop-at's function lies: names matched raw, versioned or
 * demangled (with or without the parameter list), and the file ranges found in a real ELF
 * file (this test's own executable) against what the process itself maps there.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "check.h"
#include "live/fnrange.h"
#include "live/procmaps.h"

__attribute__((noinline, used)) int fnrange_probe_target(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 3 + 1;
}

static void test_fnrange_names_match_raw_versioned_and_demangled(void)
{
	CHECK(fnrange__name_matches("malloc", "malloc"));
	CHECK(fnrange__name_matches("memcpy@@GLIBC_2.14", "memcpy"));
	CHECK(!fnrange__name_matches("malloc_trim", "malloc"));
	CHECK(fnrange__name_matches("_Z8leak_newv", "leak_new"));
	CHECK(fnrange__name_matches("_Z8leak_newv", "leak_new()"));
	CHECK(fnrange__name_matches("_ZN2ns5Cache3putEi", "ns::Cache::put"));
	CHECK(!fnrange__name_matches("_ZN2ns5Cache3putEi", "Cache::put"));
	CHECK(!fnrange__name_matches("_Z8leak_newv", "leak_ne"));
	CHECK(!fnrange__name_matches("_Zgarbage", "leak_new"));
}

/* The range found for fnrange_probe_target holds the file offset its code is mapped from. */
static void test_fnrange_finds_a_function_of_this_executable_where_it_is_mapped(void)
{
	struct lt_stop_cfg cfg = {};
	struct proc_maps maps = {};
	uint64_t addr = (uint64_t)(uintptr_t)fnrange_probe_target, off = 0;
	struct stat st;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC), found = 0;

	CHECK(fd >= 0);
	CHECK_EQ_INT(fstat(fd, &st), 0);
	CHECK_EQ_INT(fnrange__of_fd(fd, major(st.st_dev) << 20 | minor(st.st_dev), st.st_ino,
				    "fnrange_probe_target", &cfg), 1);
	close(fd);
	CHECK_EQ_INT(cfg.nranges, 1);
	CHECK_EQ_INT(procmaps__read(getpid(), &maps), 0);
	for (size_t i = 0; i < maps.n; i++) {
		if (addr >= maps.v[i].start && addr < maps.v[i].end) {
			off = addr - maps.v[i].start + maps.v[i].file_offset;
			found = 1;
		}
	}
	procmaps__free(&maps);
	CHECK(found);
	CHECK(off >= cfg.ranges[0].start && off < cfg.ranges[0].end);
	CHECK(cfg.ranges[0].end - cfg.ranges[0].start < 4096);
	CHECK_EQ_INT(cfg.ranges[0].ino, st.st_ino);
	/* The same again adds nothing; an unknown name finds nothing. */
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	CHECK_EQ_INT(fnrange__of_fd(fd, major(st.st_dev) << 20 | minor(st.st_dev), st.st_ino,
				    "fnrange_probe_target", &cfg), 0);
	CHECK_EQ_INT(fnrange__of_fd(fd, 1, 2, "no_such_function_at_all", &cfg), 0);
	close(fd);
	CHECK_EQ_INT(cfg.nranges, 1);
	CHECK_EQ_INT(fnrange_probe_target(1), 4);
}

static void test_fnrange_of_pid_finds_functions_in_its_libraries(void)
{
	struct lt_stop_cfg cfg = {};

	/* malloc is libc's (and the test's own, under ASan): found at least once. */
	CHECK(fnrange__of_pid(getpid(), "malloc", &cfg) >= 1);
	CHECK(cfg.nranges >= 1);
	CHECK(fnrange__of_pid(getpid(), "no_such_function_at_all", &cfg) == 0);
}

static void test_fnrange_refuses_a_file_that_is_no_elf(void)
{
	struct lt_stop_cfg cfg = {};
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	CHECK(fd >= 0);
	CHECK(fnrange__of_fd(fd, 1, 2, "main", &cfg) < 0);
	close(fd);
}

int main(void)
{
	RUN(test_fnrange_names_match_raw_versioned_and_demangled);
	RUN(test_fnrange_finds_a_function_of_this_executable_where_it_is_mapped);
	RUN(test_fnrange_of_pid_finds_functions_in_its_libraries);
	RUN(test_fnrange_refuses_a_file_that_is_no_elf);
	CHECK_EXIT();
}
