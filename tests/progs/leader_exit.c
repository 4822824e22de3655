// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * leader_exit.c - a process whose main thread exits first (pthread_exit) while a worker goes
 * on allocating, for `-p`: the probes must keep firing after the thread they were attached
 * with is gone.
 *
 * Usage: leader_exit DIR.  Creates DIR/ready (pid), waits for DIR/go, starts a worker that
 * leaks a 48-byte block every 10 ms in leak_in_worker() until DIR/quit exists (then the
 * process exits 0), and exits the main thread.  Every wait gives up after 180 s (exit 3).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static const char *dir;

static void nap_10ms(void)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int exists(const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return !access(path, F_OK);
}

NOINLINE void *leak_in_worker(void)
{
	return malloc(48);
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 18000 && !exists("quit"); i++) {
		if (!leak_in_worker())
			exit(2);
		nap_10ms();
	}
	exit(0);
}

int main(int argc, char **argv)
{
	char tmp[4096], path[4096], buf[32];
	pthread_t t;
	int fd, n;

	if (argc != 2)
		return 2;
	dir = argv[1];
	n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	snprintf(tmp, sizeof(tmp), "%s/.ready.tmp", dir);
	snprintf(path, sizeof(path), "%s/ready", dir);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, buf, n) != n || close(fd) || rename(tmp, path))
		return 2;
	for (int i = 0; !exists("go"); i++) {
		if (i == 18000)
			return 3;
		nap_10ms();
	}
	if (pthread_create(&t, NULL, worker, NULL))
		return 4;
	pthread_exit(NULL);
}
