// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * oom_leak.c - leaks 1 MiB blocks from leak_mib(), each written so its pages are committed,
 * one every 20 ms, until the OOM killer takes it (tests/e2e/oom.sh runs it in a memory
 * cgroup with a small limit).  The line checked carries the marker LEAK:mib.  No stdio.
 *
 * Usage: oom_leak [DIR]
 * With DIR, it first creates DIR/ready holding its pid and waits for DIR/go (180 s at
 * most, then exits 3).  It never leaks more than 1 GiB: outside a small cgroup it exits 4.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define BLOCK_BYTES	(1 << 20)
#define MAX_BLOCKS	1024

static void *keep[MAX_BLOCKS];

static void nap_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* dir/ready (our pid, written under a temporary name and renamed), then wait for dir/go. */
static void handshake(const char *dir)
{
	char tmp[4096], path[4096], buf[32];
	int n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid()), fd, i;

	snprintf(tmp, sizeof(tmp), "%s/.ready.tmp", dir);
	snprintf(path, sizeof(path), "%s/ready", dir);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, buf, n) != n || close(fd) || rename(tmp, path))
		_exit(2);
	snprintf(path, sizeof(path), "%s/go", dir);
	for (i = 0; access(path, F_OK); i++) {
		if (i == 18000)
			_exit(3);
		nap_ms(10);
	}
}

NOINLINE void *leak_mib(void)
{
	void *p = malloc(BLOCK_BYTES); /* LEAK:mib */

	if (!p)
		_exit(2);
	memset(p, 0x5a, BLOCK_BYTES);
	return p;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		handshake(argv[1]);
	for (int i = 0; i < MAX_BLOCKS; i++) {
		keep[i] = leak_mib();
		nap_ms(20);
	}
	return 4;
}
