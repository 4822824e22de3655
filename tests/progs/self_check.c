// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * self_check.c - a process that keeps allocating and checks its own state, for the tests of
 * what leaktop's death at any moment does to a process it injects into.
 *
 * Usage: self_check DIR
 *   Two threads each keep a ring of 64 blocks: every step frees the oldest block after
 *   checking every byte of it still holds the pattern it was filled with, allocates a new
 *   one (malloc, calloc or realloc, 16..1040 bytes) and fills it; the main thread sleeps
 *   100 us after each step (a system call where an injection can stop it).  Each thread's
 *   count of steps, and a checksum kept in registers across the steps, are checked against
 *   each other every step.  The other thread sleeps 200 us every 8 steps (never busy for
 *   long, and not always in a system call).  DIR/count holds the steps so far (both threads; rewritten every
 *   64 steps); a wrong byte, sum or a failed allocation writes DIR/corrupt and aborts.
 *   Runs until DIR/quit exists (exit 0), at most 300 s (exit 3).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RING	64

static const char *dir;
static char quit_path[4096];
static int count_fd;
static time_t start;
static volatile unsigned long steps[2];
static volatile int quit;

static void corrupt(const char *what, unsigned long step)
{
	char path[4096], buf[128];
	int fd, n;

	snprintf(path, sizeof(path), "%s/corrupt", dir);
	n = snprintf(buf, sizeof(buf), "%s at step %lu\n", what, step);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		if (write(fd, buf, (size_t)n) < 0)
			n = 0;
		close(fd);
	}
	abort();
}

static void *churn(void *arg)
{
	int me = (int)(long)arg;
	unsigned char *ring[RING] = { 0 };
	size_t size[RING] = { 0 };
	unsigned long i, sum = 0;
	double dsum = 0;

	for (i = 0; !quit; i++) {
		unsigned int k = i % RING;
		unsigned char pat = (unsigned char)(i / RING * 7 + k + me);

		if (ring[k]) {
			unsigned char want = (unsigned char)((i / RING - 1) * 7 + k + me);

			for (size_t b = 0; b < size[k]; b++)
				if (ring[k][b] != want)
					corrupt("a block's byte changed", i);
		}
		size[k] = 16 + (i * 37) % 1025;
		switch (i % 3) {
		case 0:
			free(ring[k]);
			ring[k] = malloc(size[k]);
			break;
		case 1:
			free(ring[k]);
			ring[k] = calloc(1, size[k]);
			if (ring[k] && ring[k][size[k] - 1])
				corrupt("calloc's block not zeroed", i);
			break;
		default:
			ring[k] = realloc(ring[k], size[k]);
			break;
		}
		if (!ring[k])
			corrupt("an allocation failed", i);
		memset(ring[k], pat, size[k]);
		sum += i;
		dsum += (double)i;
		if (sum != i * (i + 1) / 2 || dsum != (double)sum)
			corrupt("the running sums disagree", i);
		steps[me] = i + 1;
		/* The other thread runs between system calls longer (8 steps), not forever. */
		if (me == 1 && i % 8 == 7) {
			struct timespec ts = { 0, 200 * 1000 };

			nanosleep(&ts, NULL);
		}
		if (me == 0) {
			struct timespec ts = { 0, 100 * 1000 };
			char buf[32];
			int n;

			while (nanosleep(&ts, &ts) && errno == EINTR)
				;
			if (k != RING - 1)
				continue;
			n = snprintf(buf, sizeof(buf), "%lu\n", steps[0] + steps[1]);
			if (pwrite(count_fd, buf, (size_t)n, 0) != n)
				corrupt("DIR/count unwritable", i);
			if (!access(quit_path, F_OK) || time(NULL) - start > 300)
				quit = 1;
		}
	}
	for (unsigned int k = 0; k < RING; k++)
		free(ring[k]);
	return NULL;
}

int main(int argc, char **argv)
{
	char path[4096];
	pthread_t other;

	if (argc != 2)
		return 2;
	dir = argv[1];
	start = time(NULL);
	snprintf(quit_path, sizeof(quit_path), "%s/quit", dir);
	snprintf(path, sizeof(path), "%s/count", dir);
	count_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (count_fd < 0 || pthread_create(&other, NULL, churn, (void *)1L))
		return 2;
	churn((void *)0L);
	pthread_join(other, NULL);
	close(count_fd);
	return time(NULL) - start > 300 ? 3 : 0;
}
