// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * map_hog.c - a process that holds more records of one kind than its share of leaktop's
 * shared maps, and a victim that leaks a known number of each kind beside it
 * (tests/e2e/hostile_maps.sh).  No stdio.
 *
 * Usage: map_hog DIR fd|mmap|heap N    hold N descriptors / one-page anonymous mappings /
 *                                      16-byte heap blocks (the descriptor soft limit raised
 *                                      to the hard one first)
 *        map_hog DIR victim            leak 5 descriptors from leak_fds(), 4 one-page
 *                                      anonymous mappings from leak_mmaps() and 7 blocks of
 *                                      48 bytes from leak_heap()
 * Then it writes DIR/done holding its pid (DIR/failed with the count it got to when it could
 * not get all N) and waits for DIR/quit (at most 180 s).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static void put_file(const char *dir, const char *name, long value)
{
	char tmp[4096], path[4096], buf[32];
	int n = snprintf(buf, sizeof(buf), "%ld\n", value), fd;

	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, buf, n) != n || close(fd) || rename(tmp, path))
		_exit(2);
}

static void wait_quit(const char *dir)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	char path[4096];

	snprintf(path, sizeof(path), "%s/quit", dir);
	for (int i = 0; access(path, F_OK); i++) {
		if (i == 18000)
			_exit(3);
		nanosleep(&ts, NULL);
	}
}

static long hold_fds(long n)
{
	struct rlimit rl;
	long i;

	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	for (i = 0; i < n; i++)
		if (open("/dev/null", O_RDONLY) < 0)
			break;
	return i;
}

static long hold_mmaps(long n)
{
	long i;

	for (i = 0; i < n; i++)
		if (mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) ==
		    MAP_FAILED)
			break;
	return i;
}

static long hold_heap(long n)
{
	long i;

	for (i = 0; i < n; i++)
		if (!malloc(16))
			break;
	return i;
}

NOINLINE void leak_fds(void)
{
	for (int i = 0; i < 5; i++)
		if (open("/dev/null", O_RDONLY) < 0)	/* LEAK:victim_fd */
			_exit(4);
}

NOINLINE void leak_mmaps(void)
{
	for (int i = 0; i < 4; i++)
		if (mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			 0) == MAP_FAILED)		/* LEAK:victim_mmap */
			_exit(4);
}

static void *kept[7];

NOINLINE void leak_heap(void)
{
	for (int i = 0; i < 7; i++) {
		kept[i] = malloc(48);			/* LEAK:victim_heap */
		__asm__ volatile("" : : "r"(kept[i]) : "memory");
	}
}

int main(int argc, char **argv)
{
	const char *dir = argv[1];
	long n = argc > 3 ? atol(argv[3]) : 0, got = 0;

	if (argc < 3)
		return 1;
	if (!strcmp(argv[2], "victim")) {
		leak_fds();
		leak_mmaps();
		leak_heap();
		put_file(dir, "done", getpid());
		wait_quit(dir);
		return 0;
	}
	if (!strcmp(argv[2], "fd"))
		got = hold_fds(n);
	else if (!strcmp(argv[2], "mmap"))
		got = hold_mmaps(n);
	else if (!strcmp(argv[2], "heap"))
		got = hold_heap(n);
	else
		return 1;
	put_file(dir, got == n ? "done" : "failed", got == n ? getpid() : got);
	wait_quit(dir);
	return 0;
}
