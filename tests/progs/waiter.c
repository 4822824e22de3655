// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * waiter.c - a long-running leaker driven by files, for the -p and whole-system tests.
 *
 * Usage: waiter DIR go|nogo
 *   1. leaks 2 x 55 bytes in leak_before_go(), then creates DIR/ready (holding its pid);
 *   2. with "go", waits for DIR/go to exist (so a tracer can attach first);
 *   3. frees one of the two early blocks (free_early_block()), leaks 5 x 321 bytes in
 *      leak_after_go(), then creates DIR/done;
 *   4. waits for DIR/quit, then exits 0.
 * Every wait gives up after 180 s (exit 3), so a broken test never leaves it behind.  No
 * stdio, and nothing allocates while waiting.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static void *early[2];
static void *late[5];

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

NOINLINE void leak_before_go(void)
{
	for (int i = 0; i < 2; i++) {
		early[i] = malloc(55); /* LEAK:before_go */
		if (!early[i])
			_exit(2);
	}
}

NOINLINE void free_early_block(void)
{
	free(early[0]);
	early[0] = NULL;
}

NOINLINE void leak_after_go(void)
{
	for (int i = 0; i < 5; i++) {
		late[i] = malloc(321); /* LEAK:after_go */
		if (!late[i])
			_exit(2);
	}
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	leak_before_go();
	handshake(argv[1], "ready", strcmp(argv[2], "go") ? NULL : "go");
	free_early_block();
	leak_after_go();
	handshake(argv[1], "done", "quit");
	return 0;
}
