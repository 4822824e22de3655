// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * fifo_burst.c - a process that waits on a FIFO, then allocates a burst at once: what a
 * script does that waits for leaktop's first snapshot before it starts its workload.
 *
 * Usage: fifo_burst DIR N
 *   1. creates DIR/ready (holding its pid), then blocks reading the FIFO DIR/go (made by the
 *      test): no allocation, no polling, until a byte comes;
 *   2. leaks N blocks of 48 bytes in burst() at once, then creates DIR/done;
 *   3. blocks reading DIR/go again until the next byte or end of file, then exits 0.
 * A blocked read ends it after 180 s (SIGALRM), so a broken test never leaves it behind.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static void **blocks;

static void mark(const char *dir, const char *name)
{
	char tmp[4096], path[4096], buf[32];
	int n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid()), fd;

	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, buf, n) != n || close(fd) || rename(tmp, path))
		_exit(2);
}

NOINLINE void burst(long n)
{
	for (long i = 0; i < n; i++) {
		blocks[i] = malloc(48); /* LEAK:burst */
		if (!blocks[i])
			_exit(2);
	}
}

int main(int argc, char **argv)
{
	char path[4096], c;
	long n;
	int fd;

	if (argc != 3 || (n = atol(argv[2])) <= 0)
		return 1;
	/* The array before the wait: the burst is the only allocation after it. */
	blocks = calloc(n, sizeof(*blocks));
	if (!blocks)
		return 2;
	signal(SIGALRM, SIG_DFL);
	alarm(180);
	snprintf(path, sizeof(path), "%s/go", argv[1]);
	mark(argv[1], "ready");
	fd = open(path, O_RDONLY);
	if (fd < 0 || read(fd, &c, 1) != 1)
		return 3;
	burst(n);
	mark(argv[1], "done");
	alarm(180);
	if (read(fd, &c, 1) < 0)
		return 3;
	return 0;
}
