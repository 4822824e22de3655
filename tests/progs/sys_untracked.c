// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * sys_untracked.c - a process whose measured part makes only syscalls leaktop does not
 * track, for tests/e2e/syscall_tracepoints.sh.
 *
 * Usage: sys_untracked DIR N
 *   1. opens 7 descriptors of /dev/null in leak_fds() and keeps them;
 *   2. creates DIR/ready (holding its pid), waits for DIR/go to exist;
 *   3. makes N getppid() syscalls (no descriptor, no mapping), then creates DIR/done;
 *   4. waits for DIR/quit, then exits 0.
 * The waits poll with access() and nanosleep() (untracked too) and give up after 180 s
 * (exit 3), so a broken test never leaves it behind.  No stdio.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#define NOINLINE __attribute__((noinline))
#define N_FDS 7

static int fds[N_FDS];

/* Create dir/name (holding our pid when pid): written under another name, then renamed. */
static void create(const char *dir, const char *name, int pid)
{
	char tmp[4096], path[4096], buf[32];
	int n = pid ? snprintf(buf, sizeof(buf), "%d\n", (int)getpid()) : 0;
	int fd;

	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, buf, n) != n || close(fd) || rename(tmp, path))
		_exit(2);
}

/* Wait (at most 180 s, then exit 3) for dir/name to exist. */
static void await(const char *dir, const char *name)
{
	struct timespec ts;
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (int i = 0; access(path, F_OK); i++) {
		if (i == 18000)
			_exit(3);
		ts.tv_sec = 0;
		ts.tv_nsec = 10 * 1000 * 1000;
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
}

NOINLINE void leak_fds(void)
{
	for (int i = 0; i < N_FDS; i++) {
		fds[i] = open("/dev/null", O_RDONLY); /* LEAK:sys_untracked */
		if (fds[i] < 0)
			_exit(2);
	}
}

NOINLINE void untracked_syscalls(long n)
{
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
}

int main(int argc, char **argv)
{
	long n;

	if (argc != 3 || (n = atol(argv[2])) <= 0)
		return 2;
	leak_fds();
	create(argv[1], "ready", 1);
	await(argv[1], "go");
	untracked_syscalls(n);
	create(argv[1], "done", 0);
	await(argv[1], "quit");
	return 0;
}
