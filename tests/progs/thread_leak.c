// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * thread_leak.c - two threads each leak 8 blocks of 56 bytes from the same function,
 * leak_in_thread(), reached the same way: one call site holding 16 blocks.  Both also run
 * 5000 malloc/free pairs side by side in churn_in_thread(), and thread 1 frees the 10
 * blocks main() allocated in handoff_alloc() before starting them.  No stdio.
 *
 * Usage: thread_leak [DIR [go]]
 * With DIR, after joining the threads it creates DIR/done and waits for DIR/quit.  With
 * "go", the threads are started first and wait; main() then creates DIR/ready and waits
 * for DIR/go before letting them allocate (for `leaktop -p` on a running process).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define PER_THREAD 8

#define CHURN 5000
#define HANDOFF 10

static void *keep[2][PER_THREAD];
static void *handoff[HANDOFF];
static pthread_barrier_t start;

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

NOINLINE void leak_in_thread(int t)
{
	for (int i = 0; i < PER_THREAD; i++) {
		keep[t][i] = malloc(56); /* LEAK:thread */
		if (!keep[t][i])
			_exit(2);
	}
}

NOINLINE void churn_in_thread(void)
{
	for (int i = 0; i < CHURN; i++) {
		void *p = malloc(24 + (i & 63)); /* LEAK:thread_churn */
		if (!p)
			_exit(2);
		free(p);
	}
}

NOINLINE void handoff_alloc(void)
{
	for (int i = 0; i < HANDOFF; i++) {
		handoff[i] = malloc(16); /* LEAK:handoff */
		if (!handoff[i])
			_exit(2);
	}
}

NOINLINE void *thread_main(void *arg)
{
	int t = (int)(long)arg;

	/* Both threads exist before either allocates, so they really run side by side. */
	pthread_barrier_wait(&start);
	leak_in_thread(t);
	churn_in_thread();
	if (t == 1)
		for (int i = 0; i < HANDOFF; i++)
			free(handoff[i]);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : NULL;
	int go = argc > 2 && !strcmp(argv[2], "go");
	pthread_t th[2];

	if (pthread_barrier_init(&start, NULL, go ? 3 : 2))
		return 2;
	handoff_alloc();
	for (long i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, thread_main, (void *)i))
			return 2;
	if (go) {
		handshake(dir, "ready", "go");
		pthread_barrier_wait(&start);
	}
	for (int i = 0; i < 2; i++)
		if (pthread_join(th[i], NULL))
			return 2;
	handshake(dir, "done", "quit");
	return 0;
}
