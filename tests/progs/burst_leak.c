// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * burst_leak.c - a program with a start-up burst of allocator calls between two leaks: what
 * the overhead budget must let pass (or release the program for) without losing a count.
 *
 * Usage: burst_leak DIR PAIRS
 * leak_early() leaks 1000 blocks of 64 bytes; then churn() makes PAIRS malloc/free pairs
 * (PAIRS 0: until DIR/stop exists, an allocation-heavy process); then leak_late() leaks 10
 * blocks of 128 bytes.  DIR/ready is created at the start, DIR/done once the leaks are made
 * (holding the churn's duration in ms), then it waits for DIR/quit (at most 300 s; at once if
 * it exists already).  The churn looks for DIR/stop every 4096 pairs.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static void *kept[1010];
static char path[4096];

static int exists(const char *dir, const char *name)
{
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

static int create(const char *dir, const char *name, const char *text)
{
	char tmp[4096];
	int fd;

	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (text && write(fd, text, strlen(text)) < 0) {
		close(fd);
		return -1;
	}
	close(fd);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return rename(tmp, path);
}

NOINLINE static void leak_early(void)
{
	for (int i = 0; i < 1000; i++)
		kept[i] = malloc(64);
	__asm__ volatile("" : : "r"(kept) : "memory");
}

NOINLINE static void churn(const char *dir, long pairs)
{
	for (long i = 0; pairs == 0 || i < pairs; i++) {
		void *p = malloc(32 + (i & 255));

		__asm__ volatile("" : : "r"(p) : "memory");
		free(p);
		if (!pairs && !(i & 4095) && exists(dir, "stop"))
			break;
	}
}

NOINLINE static void leak_late(void)
{
	for (int i = 0; i < 10; i++)
		kept[1000 + i] = malloc(128);
	__asm__ volatile("" : : "r"(kept) : "memory");
}

int main(int argc, char **argv)
{
	struct timespec a, b;
	char text[32];
	long pairs;

	if (argc != 3)
		return 2;
	pairs = strtol(argv[2], NULL, 10);
	if (pairs < 0 || create(argv[1], "ready", NULL))
		return 1;
	leak_early();
	clock_gettime(CLOCK_MONOTONIC, &a);
	churn(argv[1], pairs);
	clock_gettime(CLOCK_MONOTONIC, &b);
	leak_late();
	snprintf(text, sizeof(text), "%ld\n", (long)((b.tv_sec - a.tv_sec) * 1000 +
						    (b.tv_nsec - a.tv_nsec) / 1000000));
	if (create(argv[1], "done", text))
		return 1;
	for (int i = 0; i < 3000 && !exists(argv[1], "quit"); i++)
		usleep(100000);
	return 0;
}
