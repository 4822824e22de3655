// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * steady_grow.c - a process whose memory grows steadily until told to stop: what makes a
 * suspect in whole-system mode under the overhead budget.
 *
 * Usage: steady_grow DIR BYTES PERIOD_MS [COUNT]
 * Every PERIOD_MS, grow_leak() leaks BYTES from malloc and writes them (so the anonymous
 * RSS grows too), until DIR/stop exists; then it only waits (no allocation at all) for
 * DIR/quit; with COUNT it stops after COUNT leaks, and creates DIR/done once it stopped
 * growing either way, holding the number of leaks made.  BYTES 0 makes a quiet process instead: every PERIOD_MS it opens and closes
 * /dev/null (so a tracer sees it), its memory never grows.  DIR/ready is created once it runs.  Deadlines are absolute, so the rate holds
 * whatever tracing costs.  Every wait ends after 300 s.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static char path[4096];

static int exists(const char *dir, const char *name)
{
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

NOINLINE static void grow_leak(size_t bytes)
{
	char *p = malloc(bytes);

	if (p)
		memset(p, 0x5a, bytes);
	__asm__ volatile("" : : "r"(p) : "memory");
}

int main(int argc, char **argv)
{
	struct timespec next;
	size_t bytes;
	long period_ms, count = -1, leaks = 0;
	int fd;

	if (argc != 4 && argc != 5)
		return 2;
	if (argc == 5)
		count = strtol(argv[4], NULL, 10);
	bytes = strtoul(argv[2], NULL, 10);
	period_ms = strtol(argv[3], NULL, 10);
	if (period_ms <= 0)
		return 2;
	snprintf(path, sizeof(path), "%s/ready", argv[1]);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return 1;
	close(fd);
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (long i = 0; i < 300000 / period_ms && i != count && !exists(argv[1], "stop"); i++) {
		if (bytes) {
			grow_leak(bytes);
			leaks++;
		} else if (exists(argv[1], "quit")) {
			break;
		} else {
			fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
			if (fd >= 0)
				close(fd);
		}
		next.tv_nsec += period_ms * 1000000L;
		next.tv_sec += next.tv_nsec / 1000000000L;
		next.tv_nsec %= 1000000000L;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	/* DIR/done holds the number of leaks made (written, then renamed into place). */
	snprintf(path, sizeof(path), "%s/.done.tmp", argv[1]);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0) {
		char text[32], done[4096];
		int len = snprintf(text, sizeof(text), "%ld\n", bytes ? leaks : 0);

		if (write(fd, text, len) != len)
			return 1;
		close(fd);
		snprintf(done, sizeof(done), "%s/done", argv[1]);
		if (rename(path, done))
			return 1;
	}
	for (int i = 0; i < 3000 && !exists(argv[1], "quit"); i++)
		usleep(100000);
	return 0;
}
