// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * prefork_leak.c - a parent forks CHILDREN short-lived children one after another, as a
 * pre-forking server does; each child leaks one block from leak_in_child() (the same stack
 * in every child: they inherit the parent's layout) and exits.  While a dead child's records
 * are purged, the next child is already allocating from that very stack.  No stdio.
 *
 * Usage: prefork_leak DIR
 * The parent waits 1 s before the first fork (purges start once children die, well after
 * leaktop's first intervals).  Child k lives about 50 ms; the parent reaps it and forks the
 * next 100 ms later.  After the
 * last child, the parent creates DIR/done holding its pid and waits for DIR/quit (at most
 * 60 s, then exit 3).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define CHILDREN 40

static void *kept;

static void nap_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

NOINLINE void leak_in_child(void)
{
	kept = malloc(48); /* LEAK:child */
	if (!kept)
		_exit(2);
}

NOINLINE void child_main(void)
{
	leak_in_child();
	nap_ms(50);
	_exit(0);
}

int main(int argc, char **argv)
{
	char tmp[4096], path[4096], buf[32];
	int fd, n, status;

	if (argc < 2)
		return 2;
	nap_ms(1000);
	for (int i = 0; i < CHILDREN; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 2;
		if (!pid)
			child_main();
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			return 2;
		nap_ms(100);
	}
	n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	snprintf(tmp, sizeof(tmp), "%s/.done.tmp", argv[1]);
	snprintf(path, sizeof(path), "%s/done", argv[1]);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, buf, n) != n || close(fd) || rename(tmp, path))
		return 2;
	snprintf(path, sizeof(path), "%s/quit", argv[1]);
	for (int i = 0; access(path, F_OK); i++) {
		if (i == 6000)
			return 3;
		nap_ms(10);
	}
	return 0;
}
