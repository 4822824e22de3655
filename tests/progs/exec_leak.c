// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * exec_leak.c - leaks 4 blocks of 123 bytes from leak_before_exec(), then execs another
 * program in the same process.  The pre-exec image's leaks belong to that image only; the
 * exec'd program's to the new one.  No stdio.
 *
 * Usage: exec_leak DIR PROG [ARG...]
 * After leaking it creates DIR/ready_exec and waits for DIR/go_exec, then execs PROG.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static void *keep[4];

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

NOINLINE void leak_before_exec(void)
{
	for (int i = 0; i < 4; i++) {
		keep[i] = malloc(123); /* LEAK:before_exec */
		if (!keep[i])
			_exit(2);
	}
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	leak_before_exec();
	handshake(argv[1], "ready_exec", "go_exec");
	execv(argv[2], argv + 2);
	return 127;
}
