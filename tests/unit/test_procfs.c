// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_procfs.c - parsing of /proc counters text, and the readers on this very process.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <dirent.h>

#include "check.h"
#include "live/libcs.h"
#include "live/procfs.h"

static void test_statm_gives_bytes_from_pages(void)
{
	struct proc_counters c = {};

	CHECK_EQ_INT(procfs__parse_statm("1000 250 100 10 0 300 0\n", 4096, &c), 0);
	CHECK_EQ_INT(c.vm_bytes, 1000 * 4096);
	CHECK_EQ_INT(c.rss_bytes, 250 * 4096);
	CHECK_EQ_INT(procfs__parse_statm("garbage", 4096, &c), -EINVAL);
}

static void test_status_threads_found_after_other_fields(void)
{
	uint32_t t = 0;

	CHECK_EQ_INT(procfs__parse_status_threads("Name:\tx\nUmask:\t0022\nThreads:\t7\nSig:\t0\n",
						  &t), 0);
	CHECK_EQ_INT(t, 7);
	CHECK_EQ_INT(procfs__parse_status_threads("Name:\tx\n", &t), -EINVAL);
}

static void test_stat_starttime_survives_parentheses_in_comm(void)
{
	uint64_t ticks = 0;
	const char *stat = "42 (a) b) (c) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 "
			   "123456 1000 100 18446744073709551615";

	CHECK_EQ_INT(procfs__parse_stat_starttime(stat, &ticks), 0);
	CHECK_EQ_INT(ticks, 123456);
	CHECK_EQ_INT(procfs__parse_stat_starttime("42 no paren", &ticks), -EINVAL);
}

static void test_counters_of_self_match_fd_directory(void)
{
	struct proc_counters c;
	struct dirent *de;
	int n = 0, extra = open("/dev/null", O_RDONLY);
	DIR *d;

	CHECK(extra >= 0);
	CHECK_EQ_INT(procfs__counters(getpid(), &c), 0);
	d = opendir("/proc/self/fd");
	CHECK(d != NULL);
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	close(extra);
	/* Both counts include the directory fd open while counting. */
	CHECK_EQ_INT(c.fd_count, n);
	CHECK(c.valid);
	CHECK(c.rss_bytes > 0);
	CHECK(c.vm_bytes >= c.rss_bytes);
	CHECK_EQ_INT(c.threads, 1);
}

static void test_counters_of_missing_process_is_esrch(void)
{
	struct proc_counters c;

	CHECK_EQ_INT(procfs__counters(4194303, &c), -ESRCH);
	CHECK(!c.valid);
	CHECK(!procfs__exists(4194303));
}

static void test_libc_names_recognised(void)
{
	CHECK(libcs__is_libc_path("/usr/lib/x86_64-linux-gnu/libc.so.6"));
	CHECK(libcs__is_libc_path("/lib/libc-2.31.so"));
	CHECK(libcs__is_libc_path("/lib/ld-musl-x86_64.so.1"));
	CHECK(!libcs__is_libc_path("/usr/lib/libcap.so.2"));
	CHECK(!libcs__is_libc_path("/usr/lib/libc-client.so.2007"));
	CHECK(!libcs__is_libc_path("/usr/lib/libcrypt.so.1"));
}

static void test_libc_of_self_found(void)
{
	struct libc_ref refs[4];
	size_t n = 0;

	CHECK_EQ_INT(libcs__of_pid(getpid(), refs, 4, &n), 0);
	CHECK_EQ_INT(n, 1);
	CHECK(strstr(refs[0].path, "libc") != NULL);
	CHECK(access(refs[0].open_path, R_OK) == 0);
}

int main(void)
{
	RUN(test_statm_gives_bytes_from_pages);
	RUN(test_status_threads_found_after_other_fields);
	RUN(test_stat_starttime_survives_parentheses_in_comm);
	RUN(test_counters_of_self_match_fd_directory);
	RUN(test_counters_of_missing_process_is_esrch);
	RUN(test_libc_names_recognised);
	RUN(test_libc_of_self_found);
	CHECK_EXIT();
}
