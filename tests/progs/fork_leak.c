// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * fork_leak.c - a parent and a forked child leaking from different functions.
 *
 * Usage: fork_leak DIR
 * The parent leaks 2 x 111 bytes in leak_in_parent() and forks.  The child leaks 3 x 222
 * bytes in leak_in_child(), creates DIR/child_ready, waits for DIR/quit and exits 0.  The
 * parent writes the child's pid to DIR/child_pid, reaps the child, leaks 1 x 333 bytes in
 * leak_after_fork() and exits 0.  No stdio.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static void *keep[8];
static int n_keep;

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

/* Writes "pid\n" to dir/name through a rename, so a reader never sees half of it. */
static void write_pid(const char *dir, const char *name, int pid)
{
	char tmp[4096], path[4096], buf[32];
	int n = snprintf(buf, sizeof(buf), "%d\n", pid);
	int fd;

	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, buf, n) != n || close(fd) || rename(tmp, path))
		_exit(2);
}

NOINLINE void hold(void *p)
{
	if (!p)
		_exit(2);
	keep[n_keep++] = p;
}

NOINLINE void leak_in_parent(void)
{
	for (int i = 0; i < 2; i++)
		hold(malloc(111)); /* LEAK:parent */
}

NOINLINE void leak_in_child(void)
{
	for (int i = 0; i < 3; i++)
		hold(malloc(222)); /* LEAK:child */
}

NOINLINE void leak_after_fork(void)
{
	hold(malloc(333)); /* LEAK:after_fork */
}

int main(int argc, char **argv)
{
	int status;
	pid_t child;

	if (argc < 2)
		return 2;
	leak_in_parent();
	child = fork();
	if (child < 0)
		return 2;
	if (child == 0) {
		leak_in_child();
		handshake(argv[1], "child_ready", "quit");
		_exit(0);
	}
	write_pid(argv[1], "child_pid", child);
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status))
		return 2;
	leak_after_fork();
	return 0;
}
