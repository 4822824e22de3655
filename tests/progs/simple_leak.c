// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * simple_leak.c - leaks 3 blocks of 64 bytes from leak_simple() and exits 0.  No stdio.
 * The line checked carries the marker LEAK:simple.  Exec'd by exec_leak.c.
 *
 * Usage: simple_leak [DIR]
 * With DIR, after leaking it creates DIR/done and waits for DIR/quit; without, it exits at
 * once.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static void *keep[3];

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

NOINLINE void leak_simple(void)
{
	for (int i = 0; i < 3; i++) {
		keep[i] = malloc(64); /* LEAK:simple */
		if (!keep[i])
			_exit(2);
	}
}

int main(int argc, char **argv)
{
	leak_simple();
	handshake(argc > 1 ? argv[1] : NULL, "done", "quit");
	return 0;
}
