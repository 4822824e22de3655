// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * busy_leak.c - threads that are inside malloc()/free() all the time, as a busy server's
 * are, when a tracer attaches; then each leaks 5 x 321 bytes in leak_after_go().
 *
 * Usage: busy_leak DIR NTHREADS
 * Starts NTHREADS threads that call churn() (every allocator function, each block freed at
 * once) in a loop until DIR/go exists,
 * then each leaks from leak_after_go() (one call site: 5 * NTHREADS blocks).  main()
 * creates DIR/ready once the threads run, joins them, creates DIR/done and waits for
 * DIR/quit (every wait at most 180 s).  No stdio.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define MAX_THREADS 16
#define PER_THREAD 5

static void *keep[MAX_THREADS][PER_THREAD];
static char go_path[4096];

/*
 * Handshake with the test through files in dir (nothing when dir is NULL): create
 * dir/ready holding our pid (if ready is not NULL; written under a temporary name and
 * renamed, so it never appears half written), then wait for dir/go to exist (if go is not
 * NULL), for at most 180 s (then exit 3, so a broken test never leaves this program behind).
 * Nothing here allocates.
 */
static void handshake(const char *dir, const char *ready, const char *go)
{
	struct timespec ts;
	char path[4096];
	int fd, i;

	if (!dir)
		return;
	if (ready) {
		char tmp[4096], buf[32];
		int n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());

		snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, ready);
		snprintf(path, sizeof(path), "%s/%s", dir, ready);
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, buf, n) != n || close(fd) || rename(tmp, path))
			_exit(2);
	}
	if (!go)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, go);
	for (i = 0; access(path, F_OK); i++) {
		if (i == 18000)
			_exit(3);
		ts.tv_sec = 0;
		ts.tv_nsec = 10 * 1000 * 1000;
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
}

/* One call of every allocator function, each block freed at once. */
NOINLINE void churn(void)
{
	void *p[9] = { NULL };

	p[0] = malloc(32);
	p[1] = calloc(2, 16);
	p[2] = realloc(NULL, 48);
	p[3] = reallocarray(NULL, 4, 8);
	if (posix_memalign(&p[4], 16, 40))
		_exit(2);
	p[5] = aligned_alloc(16, 64);
	p[6] = memalign(16, 24);
	p[7] = valloc(16);
	p[8] = pvalloc(16);
	for (int i = 0; i < 9; i++) {
		if (!p[i])
			_exit(2);
		free(p[i]);
	}
}

NOINLINE void leak_after_go(int t)
{
	/* A frame at least as deep as churn()'s, as a server's request handler would have. */
	volatile char scratch[512];

	scratch[t] = 1;
	for (int i = 0; i < PER_THREAD && scratch[t]; i++) {
		keep[t][i] = malloc(321); /* LEAK:busy_after_go */
		if (!keep[t][i])
			_exit(2);
	}
}

NOINLINE void *thread_main(void *arg)
{
	time_t deadline = time(NULL) + 180;

	while (access(go_path, F_OK)) {
		churn();
		if (time(NULL) > deadline)
			_exit(3);
	}
	leak_after_go((int)(long)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[MAX_THREADS];
	int n;

	if (argc < 3)
		return 2;
	n = atoi(argv[2]);
	if (n < 1 || n > MAX_THREADS)
		return 2;
	snprintf(go_path, sizeof(go_path), "%s/go", argv[1]);
	for (long i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, thread_main, (void *)i))
			return 2;
	handshake(argv[1], "ready", NULL);
	for (int i = 0; i < n; i++)
		if (pthread_join(th[i], NULL))
			return 2;
	handshake(argv[1], "done", "quit");
	return 0;
}
