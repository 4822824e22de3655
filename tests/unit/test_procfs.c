// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_procfs.c - parsing of /proc counters text, and the readers on this very process.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/capability.h>

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

static void test_status_rss_split_read_in_bytes(void)
{
	struct proc_counters c = {};

	CHECK_EQ_INT(procfs__parse_status_rss("Name:\tx\nVmRSS:\t   900 kB\nRssAnon:\t   500 kB\n"
					      "RssFile:\t   300 kB\nRssShmem:\t   100 kB\n", &c), 0);
	CHECK(c.rss_split_valid);
	CHECK_EQ_INT(c.rss_anon_bytes, 500 * 1024);
	CHECK_EQ_INT(c.rss_file_bytes, 300 * 1024);
	CHECK_EQ_INT(c.rss_shmem_bytes, 100 * 1024);
	/* one of them missing (an old kernel): all unknown */
	CHECK_EQ_INT(procfs__parse_status_rss("RssAnon:\t500 kB\nRssFile:\t300 kB\n", &c), -EINVAL);
	CHECK(!c.rss_split_valid);
	/* a key inside another line's value is not the key */
	CHECK_EQ_INT(procfs__parse_status_rss("Name:\tRssAnon: 7 kB\nRssFile:\t1 kB\n"
					      "RssShmem:\t1 kB\n", &c), -EINVAL);
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

static void test_stat_ppid_survives_parentheses_in_comm(void)
{
	int ppid = 0;

	CHECK_EQ_INT(procfs__parse_stat_ppid("42 (a) S 7 (b)) R 1234 42 42 0", &ppid), 0);
	CHECK_EQ_INT(ppid, 1234);
	CHECK_EQ_INT(procfs__parse_stat_ppid("42 no parenthesis", &ppid), -EINVAL);
	CHECK_EQ_INT(procfs__ppid(getpid(), &ppid), 0);
	CHECK_EQ_INT(ppid, getppid());
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
	/* this process has heap and mapped files: both parts of its RSS are there */
	CHECK(c.rss_split_valid);
	CHECK(c.rss_anon_bytes > 0 && c.rss_file_bytes > 0);
	CHECK(c.rss_anon_bytes + c.rss_file_bytes + c.rss_shmem_bytes <= c.rss_bytes + (1 << 20));
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

/* This process's libc as libcs__of_pid reports it. */
static bool own_libc(struct libc_ref *ref)
{
	struct libc_ref refs[4];
	size_t n = 0;

	if (libcs__of_pid(getpid(), refs, 4, &n) || n != 1)
		return false;
	*ref = refs[0];
	return true;
}

/* Is fd the file (dev, ino)? */
static bool fd_is(int fd, uint64_t dev, uint64_t ino)
{
	struct stat st;

	return fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode) && (uint64_t)st.st_dev == dev &&
	       (uint64_t)st.st_ino == ino;
}

/* A temporary directory for the files these tests make; "" when none could be made. */
static const char *scratch_dir(void)
{
	static char dir[] = "/tmp/leaktop-test-procfs.XXXXXX";
	static bool made;

	if (!made)
		made = mkdtemp(dir) != NULL;
	return made ? dir : "";
}

static void test_libc_of_self_found(void)
{
	struct libc_ref ref;
	char why[512];
	int fd = -1;

	CHECK(own_libc(&ref));
	CHECK(strstr(ref.path, "libc") != NULL);
	CHECK(!ref.deleted);
	CHECK(ref.start < ref.end);
	CHECK_EQ_INT(libcs__open(&ref, &fd, why, sizeof(why)), 0);
	CHECK(fd_is(fd, ref.dev, ref.ino));
	close(fd);
}

static void test_map_files_path_spells_range_as_kernel(void)
{
	char buf[64];

	CHECK_EQ_INT(libcs__map_files_path(42, 0x7f3a1c000000ull, 0x7f3a1c026000ull, buf,
					   sizeof(buf)), 0);
	CHECK_EQ_STR(buf, "/proc/42/map_files/7f3a1c000000-7f3a1c026000");
	/* No leading zeros (the kernel refuses "0400000-..."), but 0 itself is "0". */
	CHECK_EQ_INT(libcs__map_files_path(1, 0, 0x1000, buf, sizeof(buf)), 0);
	CHECK_EQ_STR(buf, "/proc/1/map_files/0-1000");
	CHECK_EQ_INT(libcs__map_files_path(4194304, 0xfffffffffffff000ull, UINT64_MAX, buf,
					   sizeof(buf)), 0);
	CHECK_EQ_STR(buf, "/proc/4194304/map_files/fffffffffffff000-ffffffffffffffff");
}

static void test_map_files_path_rejects_empty_range_and_bad_pid(void)
{
	char buf[64];

	CHECK_EQ_INT(libcs__map_files_path(42, 0x2000, 0x2000, buf, sizeof(buf)), -EINVAL);
	CHECK_EQ_INT(libcs__map_files_path(42, 0x3000, 0x2000, buf, sizeof(buf)), -EINVAL);
	CHECK_EQ_INT(libcs__map_files_path(0, 0x1000, 0x2000, buf, sizeof(buf)), -EINVAL);
	CHECK_EQ_INT(libcs__map_files_path(-1, 0x1000, 0x2000, buf, sizeof(buf)), -EINVAL);
}

static void test_map_files_path_never_truncates(void)
{
	char buf[64];

	/* "/proc/42/map_files/1000-2000" is 28 characters, and the terminator. */
	CHECK_EQ_INT(libcs__map_files_path(42, 0x1000, 0x2000, buf, 28), -ENAMETOOLONG);
	CHECK_EQ_INT(libcs__map_files_path(42, 0x1000, 0x2000, buf, 29), 0);
	CHECK_EQ_STR(buf, "/proc/42/map_files/1000-2000");
}

static void test_libc_open_ignores_what_the_mapped_name_leads_to(void)
{
	struct libc_ref ref;
	char why[512], fifo[256];
	int fd = -1;

	CHECK(own_libc(&ref));
	/* The name now leads to a FIFO: the mapping is still reached, and nothing blocks. */
	snprintf(fifo, sizeof(fifo), "%s/libc.so.6", scratch_dir());
	CHECK(mkfifo(fifo, 0600) == 0);
	snprintf(ref.path, sizeof(ref.path), "%s", fifo);
	CHECK_EQ_INT(libcs__open(&ref, &fd, why, sizeof(why)), 0);
	unlink(fifo);
	CHECK(fd_is(fd, ref.dev, ref.ino));
	close(fd);
}

/*
 * The exit status of fn run in a child that may not follow /proc/PID/map_files links (no
 * CAP_SYS_ADMIN, no CAP_CHECKPOINT_RESTORE), as a leaktop without them; -1 on an error.
 */
static int without_map_files(int (*fn)(void))
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		if (syscall(SYS_capget, &h, d))
			_exit(100);
		d[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective &= ~CAP_TO_MASK(CAP_SYS_ADMIN);
		d[CAP_TO_INDEX(CAP_CHECKPOINT_RESTORE)].effective &=
			~CAP_TO_MASK(CAP_CHECKPOINT_RESTORE);
		if (syscall(SYS_capset, &h, d))
			_exit(101);
		_exit(fn());
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* Own libc through its verified path: 0, or the number of the step that failed. */
static int open_own_libc_by_name(void)
{
	struct libc_ref ref;
	char why[512];
	int fd = -1;

	if (!own_libc(&ref))
		return 1;
	if (libcs__open(&ref, &fd, why, sizeof(why)))
		return 2;
	if (!fd_is(fd, ref.dev, ref.ino))
		return 3;
	close(fd);
	return 0;
}

/* Own libc's maps line, its name now a FIFO: refused (and not blocked on). */
static int refuse_fifo_by_name(void)
{
	struct libc_ref ref;
	char why[512];
	int fd = -1, err;

	if (!own_libc(&ref))
		return 1;
	snprintf(ref.path, sizeof(ref.path), "%s/libc.so.6", scratch_dir());
	if (mkfifo(ref.path, 0600))
		return 2;
	err = libcs__open(&ref, &fd, why, sizeof(why));
	unlink(ref.path);
	if (err != -ESTALE || fd != -1)
		return 3;
	return strstr(why, "refusing ") == why ? 0 : 4;
}

/* Own libc's maps line with another inode: its name leads to another regular file. */
static int other_file_by_name(void)
{
	struct libc_ref ref;
	char why[512];
	int fd = -1;

	if (!own_libc(&ref))
		return 1;
	ref.ino++;
	if (libcs__open(&ref, &fd, why, sizeof(why)) != -EPERM || fd != -1)
		return 2;
	return strstr(why, "run leaktop as root") ? 0 : 3;
}

static void test_libc_open_without_map_files_access_uses_verified_name(void)
{
	CHECK_EQ_INT(without_map_files(open_own_libc_by_name), 0);
}

static void test_libc_open_refuses_fifo_at_name_without_blocking(void)
{
	CHECK_EQ_INT(without_map_files(refuse_fifo_by_name), 0);
}

static void test_libc_open_does_not_count_another_namespace_file_as_refused(void)
{
	CHECK_EQ_INT(without_map_files(other_file_by_name), 0);
}

static void test_libc_open_refuses_mapping_of_another_file(void)
{
	struct libc_ref ref;
	char why[512];
	int fd = -1;

	/* The range now maps a file other than the one the maps line named. */
	CHECK(own_libc(&ref));
	ref.ino++;
	CHECK_EQ_INT(libcs__open(&ref, &fd, why, sizeof(why)), -ESTALE);
	CHECK_EQ_INT(fd, -1);
}

static void test_libc_open_of_vanished_mapping_tries_no_name(void)
{
	struct libc_ref ref;
	char why[512];
	int fd = -1, err;

	/* The mapping is gone; its name (a FIFO here) is never looked at. */
	CHECK(own_libc(&ref));
	ref.start = 0x1000;
	ref.end = 0x2000;
	snprintf(ref.path, sizeof(ref.path), "%s/libc.so.6", scratch_dir());
	CHECK(mkfifo(ref.path, 0600) == 0);
	err = libcs__open(&ref, &fd, why, sizeof(why));
	unlink(ref.path);
	CHECK_EQ_INT(err, -ENOENT);
	CHECK_EQ_INT(fd, -1);
}

static void test_libc_of_pid_reaches_deleted_libc(void)
{
	struct libc_ref refs[4], *del = NULL;
	char path[256], why[512];
	struct stat st;
	size_t n = 0;
	void *map;
	int fd, lfd = -1;

	/* A libc update: the mapped file is unlinked, the mapping stays. */
	snprintf(path, sizeof(path), "%s/libc.so.6", scratch_dir());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	CHECK(ftruncate(fd, 4096) == 0 && fstat(fd, &st) == 0);
	map = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	unlink(path);
	CHECK(map != MAP_FAILED);
	CHECK_EQ_INT(libcs__of_pid(getpid(), refs, 4, &n), 0);
	for (size_t i = 0; i < n; i++)
		if (refs[i].ino == st.st_ino && refs[i].dev == st.st_dev)
			del = &refs[i];
	if (del)
		CHECK_EQ_INT(libcs__open(del, &lfd, why, sizeof(why)), 0);
	munmap(map, 4096);
	CHECK(del != NULL);
	CHECK(del->deleted);
	CHECK_EQ_STR(del->path, path);
	CHECK(fd_is(lfd, st.st_dev, st.st_ino));
	close(lfd);
}

static void test_cpu_busy_ticks_leave_out_idle_and_iowait(void)
{
	uint64_t busy = 0;

	CHECK(!procfs__parse_cpu_busy_ticks("cpu  100 20 30 5000 70 1 2 3 0 0\ncpu0 1 2 3\n",
					    &busy));
	CHECK(busy == 100 + 20 + 30 + 1 + 2 + 3);
	/* An old kernel without steal still parses; a per-CPU line first does not. */
	CHECK(!procfs__parse_cpu_busy_ticks("cpu 1 2 3 4 5 6 7\n", &busy));
	CHECK(busy == 1 + 2 + 3 + 6 + 7);
	CHECK(procfs__parse_cpu_busy_ticks("cpu0 1 2 3 4 5 6 7\n", &busy) == -EINVAL);
	CHECK(procfs__parse_cpu_busy_ticks("cpu 1 2\n", &busy) == -EINVAL);
}

static void test_cgroup_v1_picks_the_memory_controller_over_the_unified_root(void)
{
	char path[256];

	CHECK_EQ_INT(procfs__parse_cgroup("9:name=systemd:/init.scope\n8:pids:/\n"
					  "4:memory,kmem:/app/x\n0::/\n", path, sizeof(path)), 0);
	CHECK_EQ_STR(path, "/app/x");
	/* Without a memory line, systemd's. */
	CHECK_EQ_INT(procfs__parse_cgroup("9:name=systemd:/user.slice\n0::/\n", path,
					  sizeof(path)), 0);
	CHECK_EQ_STR(path, "/user.slice");
	/* A controller whose name only starts like "memory" is not it. */
	CHECK_EQ_INT(procfs__parse_cgroup("3:memoryx:/no\n2:cpu:/cpu\n", path, sizeof(path)), 0);
	CHECK_EQ_STR(path, "/no");
}

static void test_cgroup_v2_path_is_the_unified_line(void)
{
	char path[256];

	CHECK_EQ_INT(procfs__parse_cgroup("0::/system.slice/redis.service\n", path, sizeof(path)),
		     0);
	CHECK_EQ_STR(path, "/system.slice/redis.service");
	/* Hybrid: a unified path that is not the root wins over v1's. */
	CHECK_EQ_INT(procfs__parse_cgroup("4:memory:/a\n0::/b\n", path, sizeof(path)), 0);
	CHECK_EQ_STR(path, "/b");
	CHECK_EQ_INT(procfs__parse_cgroup("0::/\n", path, sizeof(path)), 0);
	CHECK_EQ_STR(path, "/");
	CHECK_EQ_INT(procfs__parse_cgroup("", path, sizeof(path)), -EINVAL);
	CHECK_EQ_INT(procfs__parse_cgroup("garbage\n", path, sizeof(path)), -EINVAL);
}

static void test_container_id_from_engine_cgroup_names(void)
{
	static const char id64[] =
		"4b81ff099f883be2c8fe2eb406670bbe4b81ff099f883be2c8fe2eb406670bbe";
	char path[512], id[16];

	snprintf(path, sizeof(path), "/system.slice/docker-%s.scope", id64);
	CHECK_EQ_INT(procfs__container_id(path, id, sizeof(id)), 0);
	CHECK_EQ_STR(id, "4b81ff099f88");
	snprintf(path, sizeof(path), "/docker/%s", id64);
	CHECK_EQ_INT(procfs__container_id(path, id, sizeof(id)), 0);
	snprintf(path, sizeof(path), "/kubepods.slice/kubepods-pod1.slice/cri-containerd-%s.scope",
		 id64);
	CHECK_EQ_INT(procfs__container_id(path, id, sizeof(id)), 0);
	snprintf(path, sizeof(path), "/machine.slice/libpod-%s.scope/container", id64);
	CHECK_EQ_INT(procfs__container_id(path, id, sizeof(id)), 0);
	CHECK_EQ_STR(id, "4b81ff099f88");
	/* 32 hex digits, upper case, or a plain service: no container. */
	CHECK_EQ_INT(procfs__container_id("/process_api/4b81ff099f883be2c8fe2eb406670bbe", id,
					  sizeof(id)), -ENOENT);
	snprintf(path, sizeof(path), "/docker/%.63sG", id64);
	CHECK_EQ_INT(procfs__container_id(path, id, sizeof(id)), -ENOENT);
	CHECK_EQ_INT(procfs__container_id("/system.slice/redis.service", id, sizeof(id)), -ENOENT);
}

int main(void)
{
	RUN(test_cpu_busy_ticks_leave_out_idle_and_iowait);
	RUN(test_statm_gives_bytes_from_pages);
	RUN(test_cgroup_v1_picks_the_memory_controller_over_the_unified_root);
	RUN(test_cgroup_v2_path_is_the_unified_line);
	RUN(test_container_id_from_engine_cgroup_names);
	RUN(test_status_threads_found_after_other_fields);
	RUN(test_status_rss_split_read_in_bytes);
	RUN(test_stat_starttime_survives_parentheses_in_comm);
	RUN(test_stat_ppid_survives_parentheses_in_comm);
	RUN(test_counters_of_self_match_fd_directory);
	RUN(test_counters_of_missing_process_is_esrch);
	RUN(test_libc_names_recognised);
	RUN(test_libc_of_self_found);
	RUN(test_map_files_path_spells_range_as_kernel);
	RUN(test_map_files_path_rejects_empty_range_and_bad_pid);
	RUN(test_map_files_path_never_truncates);
	RUN(test_libc_open_ignores_what_the_mapped_name_leads_to);
	RUN(test_libc_open_refuses_mapping_of_another_file);
	RUN(test_libc_open_of_vanished_mapping_tries_no_name);
	RUN(test_libc_open_without_map_files_access_uses_verified_name);
	RUN(test_libc_open_refuses_fifo_at_name_without_blocking);
	RUN(test_libc_open_does_not_count_another_namespace_file_as_refused);
	RUN(test_libc_of_pid_reaches_deleted_libc);
	rmdir(scratch_dir());
	CHECK_EXIT();
}
