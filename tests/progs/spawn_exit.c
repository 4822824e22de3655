// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * spawn_exit.c - a descendant of the command that runs short-lived programs, then leaks.
 *
 * Usage: spawn_exit DIR
 * The process started (the command) forks a worker and waits for it.  The worker pins itself
 * to the CPU it runs on (its children inherit that), then 6 times runs /bin/true, by fork
 * and execve three times and by posix_spawn three times, waiting for each: with parent and
 * child on one CPU, the worker's wait switches straight to the child.  Then it leaks
 * 5 x 777 bytes in leak_after_spawns(), mallocs and frees 100 x 55 bytes in
 * churn_after_spawns(), writes its pid to DIR/done and waits for DIR/quit (at most 180 s,
 * then exit 3).  No stdio in the worker.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

extern char **environ;

static void *volatile keep[5];
static void *volatile sink;

static NOINLINE void leak_after_spawns(void)
{
	for (int i = 0; i < 5; i++)
		keep[i] = malloc(777); /* LEAK:spawns */
}

static NOINLINE void churn_after_spawns(void)
{
	for (int i = 0; i < 100; i++) {
		sink = malloc(55);
		free(sink);
	}
}

/* Run /bin/true once (by fork and execve, or posix_spawn) and wait for it; 0 or -1. */
static int run_true(int spawn)
{
	char *argv[] = { "/bin/true", NULL };
	pid_t pid;
	int st;

	if (spawn) {
		if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ))
			return -1;
	} else {
		pid = fork();
		if (pid < 0)
			return -1;
		if (!pid) {
			execve(argv[0], argv, environ);
			_exit(127);
		}
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

static void write_pid(const char *dir)
{
	char tmp[4096], path[4096], buf[32];
	int n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid()), fd;

	snprintf(tmp, sizeof(tmp), "%s/.done.tmp", dir);
	snprintf(path, sizeof(path), "%s/done", dir);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, buf, n) != n || close(fd) || rename(tmp, path))
		_exit(2);
}

static void wait_quit(const char *dir)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	char path[4096];

	snprintf(path, sizeof(path), "%s/quit", dir);
	for (int i = 0; access(path, F_OK); i++) {
		if (i == 18000)
			_exit(3);
		nanosleep(&ts, NULL);
	}
}

static int worker(const char *dir)
{
	cpu_set_t one;
	int cpu = sched_getcpu();

	CPU_ZERO(&one);
	CPU_SET(cpu < 0 ? 0 : cpu, &one);
	sched_setaffinity(0, sizeof(one), &one);
	for (int i = 0; i < 6; i++)
		if (run_true(i & 1))
			return 4;
	leak_after_spawns();
	churn_after_spawns();
	write_pid(dir);
	wait_quit(dir);
	return 0;
}

int main(int argc, char **argv)
{
	pid_t pid;
	int st;

	if (argc != 2) {
		fprintf(stderr, "usage: spawn_exit DIR\n");
		return 2;
	}
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid)
		_exit(worker(argv[1]));
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
