// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * realloc_race.c - one thread reallocs while another mallocs, so that the second is handed
 * the block the first one's realloc has just freed inside libc, before that realloc has
 * returned.  leaktop must still count every block exactly.
 *
 * One arena (mallopt) and blocks of 2 KiB (above the thread cache's largest size) make
 * glibc hand a block a moving realloc freed to the next malloc of its size, whichever
 * thread calls it.
 *   - Thread "mover" runs ROUNDS times: p = malloc(2048) in move_start(); a 2 KiB guard
 *     block after it, so the realloc cannot grow p in place; realloc(p, 8192) in
 *     move_grow(); then frees both.  Nothing it allocates is left.
 *   - Thread "taker" runs ROUNDS times malloc(2048): every KEEP_EVERY-th in keep_block()
 *     (kept: KEPT blocks), the others in take_block(), freed at once.
 * The mover publishes the pointer it passes to realloc until realloc returns; each time the
 * taker's malloc returns that very pointer while the mover's realloc has not returned yet,
 * the race happened (counted in "hits").
 *
 * Usage: realloc_race [DIR]
 * With DIR, after joining the threads it writes the hit count to DIR/hits, creates DIR/done
 * holding its pid and waits for DIR/quit (at most 180 s, then exit 3).  No stdio in the
 * threads.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

#define BLOCK 2048
#define ROUNDS 60000
#define KEEP_EVERY 50
#define KEPT (ROUNDS / KEEP_EVERY)

static void *kept[KEPT];
static void *published;			/* the mover's realloc argument, while in realloc */
static long hits;
static pthread_barrier_t start;

/* Write v (a decimal line) to dir/name, under a temporary name and renamed. */
static void put_file(const char *dir, const char *name, long v)
{
	char tmp[4096], path[4096], buf[32];
	int n = snprintf(buf, sizeof(buf), "%ld\n", v);
	int fd;

	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, buf, n) != n || close(fd) || rename(tmp, path))
		_exit(2);
}

static void wait_file(const char *dir, const char *name)
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

NOINLINE void *move_start(void)
{
	return malloc(BLOCK); /* LEAK:move_start */
}

NOINLINE void *move_guard(void)
{
	return malloc(BLOCK); /* LEAK:move_guard */
}

NOINLINE void *move_grow(void *p)
{
	void *q;

	__atomic_store_n(&published, p, __ATOMIC_SEQ_CST);
	q = realloc(p, 4 * BLOCK); /* LEAK:move_grow */
	__atomic_store_n(&published, NULL, __ATOMIC_SEQ_CST);
	return q;
}

NOINLINE void *mover(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&start);
	for (int i = 0; i < ROUNDS; i++) {
		void *p = move_start(), *g = move_guard(), *q;

		if (!p || !g)
			_exit(2);
		q = move_grow(p);
		if (!q)
			_exit(2);
		free(g);
		free(q);
	}
	return NULL;
}

NOINLINE void *keep_block(void)
{
	return malloc(BLOCK); /* LEAK:keep_block */
}

NOINLINE void *take_block(void)
{
	return malloc(BLOCK); /* LEAK:take_block */
}

NOINLINE void *taker(void *arg)
{
	int k = 0;

	(void)arg;
	pthread_barrier_wait(&start);
	for (int i = 0; i < ROUNDS; i++) {
		int keep = i % KEEP_EVERY == 0;
		void *x = keep ? keep_block() : take_block();

		if (!x)
			_exit(2);
		if (x == __atomic_load_n(&published, __ATOMIC_SEQ_CST))
			hits++;
		if (keep)
			kept[k++] = x;
		else
			free(x);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : NULL;
	pthread_t th[2];

	if (!mallopt(M_ARENA_MAX, 1) || pthread_barrier_init(&start, NULL, 2))
		return 2;
	if (pthread_create(&th[0], NULL, mover, NULL) || pthread_create(&th[1], NULL, taker, NULL))
		return 2;
	for (int i = 0; i < 2; i++)
		if (pthread_join(th[i], NULL))
			return 2;
	if (dir) {
		put_file(dir, "hits", hits);
		put_file(dir, "done", getpid());
		wait_file(dir, "quit");
	}
	return 0;
}
