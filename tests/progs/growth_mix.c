// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * growth_mix.c - one leak of each kind among look-alikes, for the growth verdicts.
 *
 * Usage: growth_mix SECONDS
 * Threads, each from its own function:
 *   leak_heap()   leaks 256 bytes every 20 ms (12800 B/s)              -> must be flagged
 *   cache_fill()  keeps a cache of 2000 x 64 B: fills it, then evicts the oldest entry
 *                 for each new one (outstanding stays at 2000)          -> never flagged
 *   churn()       every 50 ms allocates 100 blocks and frees them all   -> never flagged
 *   leak_fd()     opens /dev/null every 100 ms and keeps it             -> must be flagged
 *   fd_churn()    opens and closes /dev/null every 10 ms               -> never flagged
 * Deadlines are absolute (clock_nanosleep), so the rates hold whatever the tracing costs.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define CACHE 2000

static double run_s;

static void next_tick(struct timespec *t, long ns)
{
	t->tv_nsec += ns;
	while (t->tv_nsec >= 1000000000L) {
		t->tv_nsec -= 1000000000L;
		t->tv_sec++;
	}
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, t, NULL);
}

static int running(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - start->tv_sec) + (now.tv_nsec - start->tv_nsec) / 1e9 < run_s;
}

NOINLINE void *leak_heap_alloc(void)
{
	return malloc(256); /* LEAK:heap */
}

static void *leak_heap(void *arg)
{
	struct timespec start, t;

	clock_gettime(CLOCK_MONOTONIC, &start);
	t = start;
	while (running(&start)) {
		void *p = leak_heap_alloc();

		(void)p;
		next_tick(&t, 20 * 1000 * 1000);
	}
	return NULL;
}

NOINLINE void *cache_insert(void)
{
	return malloc(64);
}

static void *cache_fill(void *arg)
{
	static void *cache[CACHE];
	struct timespec start, t;
	unsigned int i = 0;

	clock_gettime(CLOCK_MONOTONIC, &start);
	t = start;
	while (running(&start)) {
		free(cache[i % CACHE]);		/* NULL while filling */
		cache[i % CACHE] = cache_insert();
		i++;
		next_tick(&t, 250 * 1000);	/* 4000 inserts/s: full after 0.5 s */
	}
	return NULL;
}

NOINLINE void churn_burst(void)
{
	void *p[100];

	for (int i = 0; i < 100; i++)
		p[i] = malloc(128);
	for (int i = 0; i < 100; i++)
		free(p[i]);
}

static void *churn(void *arg)
{
	struct timespec start, t;

	clock_gettime(CLOCK_MONOTONIC, &start);
	t = start;
	while (running(&start)) {
		churn_burst();
		next_tick(&t, 50 * 1000 * 1000);
	}
	return NULL;
}

NOINLINE int leak_fd_open(void)
{
	return open("/dev/null", O_RDONLY); /* LEAK:fd */
}

static void *leak_fd(void *arg)
{
	struct timespec start, t;

	clock_gettime(CLOCK_MONOTONIC, &start);
	t = start;
	while (running(&start)) {
		leak_fd_open();
		next_tick(&t, 100 * 1000 * 1000);
	}
	return NULL;
}

NOINLINE void fd_churn_once(void)
{
	close(open("/dev/null", O_RDONLY));
}

static void *fd_churn(void *arg)
{
	struct timespec start, t;

	clock_gettime(CLOCK_MONOTONIC, &start);
	t = start;
	while (running(&start)) {
		fd_churn_once();
		next_tick(&t, 10 * 1000 * 1000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	void *(*fns[])(void *) = { leak_heap, cache_fill, churn, leak_fd, fd_churn };
	pthread_t th[5];

	run_s = argc > 1 ? atof(argv[1]) : 20;
	for (int i = 0; i < 5; i++)
		pthread_create(&th[i], NULL, fns[i], NULL);
	for (int i = 0; i < 5; i++)
		pthread_join(th[i], NULL);
	return 0;
}
