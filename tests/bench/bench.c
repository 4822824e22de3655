// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * bench.c - the workload of `make bench` (tests/bench/run.sh).
 *
 *   bench [-n] pairs N [ROUNDS]   time ROUNDS rounds (default 5) of N malloc(64)+free pairs
 *   bench [-n] heap MB            allocate MB MiB in 4 KiB blocks (written, so resident),
 *                                 keep them, print "done", wait until killed (the scan's
 *                                 stop time on a large heap)
 *   bench [-n] live N             allocate N 32-byte blocks from 4 call sites, keep them,
 *                                 print "done", then sleep until killed
 *   bench [-n] openclose N [ROUNDS]
 *                                 time ROUNDS rounds (default 5) of N open("/dev/null")+close
 *                                 pairs; then, without -n, print "done" and sleep until
 *                                 killed (so the harness reads leaktop's numbers for a live
 *                                 process)
 *   bench [-n] deep DEPTH N [ROUNDS]
 *                                 pairs, timed DEPTH calls deep: main -> run_deep -> descend
 *                                 x DEPTH (a recursion that stays DEPTH real frames: the
 *                                 recursive call is no tail call) -> time_rounds -> pairs ->
 *                                 malloc, so every malloc's stack is over DEPTH + 3 frames
 *                                 deep (the stack-walk cost of section 9 of run.sh); then,
 *                                 without -n, print "done" and sleep until killed
 *
 * Unless -n is given, the program first prints "ready pid=PID" and waits for SIGUSR1, so the
 * harness can attach leaktop -p PID (and wait for its first snapshot) before the measured
 * part starts.  Everything it allocates before the signal (stdio's buffer) is untraced; the
 * only descriptors it opens after the signal are openclose's.
 *
 * Output, one "key value" per line so the harness can grep it:
 *   pairs, openclose: "round I ns_per_pair X" per round, then "median_ns_per_pair X" (a pair
 *          is malloc(64)+free, or open+close)
 *   live:  "alloc_ns_per_block X", then "done N"
 * Built by the Makefile with -O2 -g -fno-omit-frame-pointer (stack walks need the frames), and
 * again with -O2 -g -fomit-frame-pointer as build/bench/bench_nofp (code like Debian's own,
 * whose stacks only call frame information unwinds).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MAX_ROUNDS	101
#define WARMUP_PAIRS	2000

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * The measured loop.  The empty asm makes the pointer escape, so the compiler can neither
 * drop the malloc/free pair (GCC removes an unused one) nor merge iterations.
 */
__attribute__((noinline)) static void pairs(long n)
{
	for (long i = 0; i < n; i++) {
		char *p = malloc(64);

		if (!p)
			abort();
		p[0] = (char)i;
		__asm__ volatile("" : : "r"(p) : "memory");
		free(p);
	}
}

/*
 * The measured loop of openclose: one call site for the opens (leaktop's fd tracking keys
 * descriptors by the site that created them), noinline so that site keeps its frame.
 */
__attribute__((noinline)) static void openclose(long n)
{
	for (long i = 0; i < n; i++) {
		int fd = open("/dev/null", O_RDONLY);

		if (fd < 0)
			abort();
		close(fd);
	}
}

/* Distinct call sites for the live-block run (distinct stacks, distinct leaktop sites). */
#define SITE(name)							\
	__attribute__((noinline)) static void *name(void)		\
	{								\
		void *p = malloc(32);					\
		__asm__ volatile("" : : "r"(p) : "memory");		\
		return p;						\
	}
SITE(site_a)
SITE(site_b)
SITE(site_c)
SITE(site_d)

__attribute__((noinline)) static void fill(void **v, long n)
{
	for (long i = 0; i < n; i++) {
		switch (i & 3) {
		case 0: v[i] = site_a(); break;
		case 1: v[i] = site_b(); break;
		case 2: v[i] = site_c(); break;
		default: v[i] = site_d(); break;
		}
		if (!v[i])
			abort();
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void wait_for_start(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	/* Blocked before "ready" is printed, so an early SIGUSR1 stays pending, never lost. */
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready pid=%d\n", (int)getpid());
	fflush(stdout);
	while (sigwait(&set, &sig) || sig != SIGUSR1)
		;
}

static int usage(void)
{
	fprintf(stderr, "usage: bench [-n] pairs N [ROUNDS]\n"
			"       bench [-n] live N\n"
			"       bench [-n] heap MB\n"
			"       bench [-n] openclose N [ROUNDS]\n"
			"       bench [-n] deep DEPTH N [ROUNDS]\n"
			"  -n  start at once instead of printing 'ready pid=PID' and waiting for "
			"SIGUSR1\n");
	return 2;
}

static long parse_count(const char *s, long min, long max)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v < min || v > max)
		return -1;
	return v;
}

/* Warm up, then time ROUNDS calls of loop(n); prints each round's and the median ns/pair. */
static void time_rounds(void (*loop)(long), long n, int rounds)
{
	double ns[MAX_ROUNDS];

	/* Warm the caches and the probes' first-hit paths (XOL slot, maps, fd table). */
	loop(WARMUP_PAIRS);
	for (int r = 0; r < rounds; r++) {
		uint64_t t0 = now_ns();

		loop(n);
		ns[r] = (double)(now_ns() - t0) / (double)n;
		printf("round %d ns_per_pair %.1f\n", r, ns[r]);
	}
	qsort(ns, rounds, sizeof(ns[0]), cmp_double);
	printf("median_ns_per_pair %.1f\n",
	       rounds % 2 ? ns[rounds / 2] : (ns[rounds / 2 - 1] + ns[rounds / 2]) / 2);
	fflush(stdout);
}

static int run_pairs(long n, int rounds, int wait)
{
	if (wait)
		wait_for_start();
	time_rounds(pairs, n, rounds);
	return 0;
}

/*
 * deep's recursion: DEPTH frames of descend() above time_rounds.  noipa keeps the callers'
 * arguments opaque (no clone specialised for one depth) and the barrier after the call
 * keeps it a call, not a jump.
 */
__attribute__((noinline, noclone, noipa)) static long descend(int depth, long n, int rounds)
{
	long r;

	if (depth == 0) {
		time_rounds(pairs, n, rounds);
		return 0;
	}
	r = descend(depth - 1, n, rounds);
	__asm__ volatile("" : : : "memory");
	return r + 1;
}

/* The loops are over: with a waiting start, say "done" and stay until killed (the bench
 * reads the tracer's last snapshots with every allocation still live). */
static int stay_done(int wait)
{
	if (!wait)
		return 0;
	printf("done\n");
	fflush(stdout);
	for (;;)
		pause();
	return 0;
}

static int run_deep(int depth, long n, int rounds, int wait)
{
	if (wait)
		wait_for_start();
	if (descend(depth, n, rounds) != depth)
		return 1;
	return stay_done(wait);
}

static int run_openclose(long n, int rounds, int wait)
{
	if (wait)
		wait_for_start();
	time_rounds(openclose, n, rounds);
	return stay_done(wait);
}

static int run_live(long n, int wait)
{
	/* The pointer array comes from mmap so the live count is exactly n malloc'd blocks. */
	void **v = mmap(NULL, n * sizeof(void *), PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	uint64_t t0;

	if (v == MAP_FAILED) {
		perror("bench: mmap");
		return 1;
	}
	if (wait)
		wait_for_start();
	t0 = now_ns();
	fill(v, n);
	printf("alloc_ns_per_block %.1f\n", (double)(now_ns() - t0) / (double)n);
	printf("done %ld\n", n);
	fflush(stdout);
	for (;;)
		pause();
	return 0;
}

__attribute__((noinline)) static void *heap_block(void)
{
	void *p = malloc(4096);

	if (p)
		memset(p, 0x5a, 4096);
	return p;
}

static int run_heap(long mib, int wait)
{
	long n = mib * 256;
	void **v = mmap(NULL, n * sizeof(void *), PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (v == MAP_FAILED) {
		perror("bench: mmap");
		return 1;
	}
	if (wait)
		wait_for_start();
	for (long i = 0; i < n; i++)
		v[i] = heap_block();
	printf("done %ld\n", n);
	fflush(stdout);
	for (;;)
		pause();
	return 0;
}

int main(int argc, char **argv)
{
	int wait = 1, a = 1;
	long n, rounds = 5;

	if (argc > 1 && !strcmp(argv[1], "-n")) {
		wait = 0;
		a++;
	}
	if (argc - a < 2)
		return usage();
	n = parse_count(argv[a + 1], 1, 1L << 32);
	if (n < 0)
		return usage();
	if (!strcmp(argv[a], "pairs") || !strcmp(argv[a], "openclose")) {
		if (argc - a > 3)
			return usage();
		if (argc - a == 3 && (rounds = parse_count(argv[a + 2], 1, MAX_ROUNDS)) < 0)
			return usage();
		if (!strcmp(argv[a], "openclose"))
			return run_openclose(n, (int)rounds, wait);
		return run_pairs(n, (int)rounds, wait);
	}
	if (!strcmp(argv[a], "deep")) {
		long depth = n;

		if (depth > 1000 || argc - a < 3 || argc - a > 4)
			return usage();
		if ((n = parse_count(argv[a + 2], 1, 1L << 32)) < 0)
			return usage();
		if (argc - a == 4 && (rounds = parse_count(argv[a + 3], 1, MAX_ROUNDS)) < 0)
			return usage();
		return run_deep((int)depth, n, (int)rounds, wait);
	}
	if (!strcmp(argv[a], "live") && argc - a == 2)
		return run_live(n, wait);
	if (!strcmp(argv[a], "heap") && argc - a == 2)
		return run_heap(n, wait);
	return usage();
}
