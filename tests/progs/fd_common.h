/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * fd_common.h - what the fd test programs share: the file handshake with the test script,
 * must(), closing inherited descriptors and scrubbing the stack.  Included by one program
 * each, so its functions are static.
 */
#ifndef LEAKTOP_FD_COMMON_H
#define LEAKTOP_FD_COMMON_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef NOINLINE
#define NOINLINE __attribute__((noinline))
#endif

/*
 * Handshake with the test through files in dir: create dir/ready holding our pid (written
 * under a temporary name and renamed, so it never appears half written), then wait for
 * dir/go to exist (if go is not NULL), for at most 60 s (then exit 3, so a broken test never
 * leaves this program behind).
 */
static void handshake(const char *dir, const char *ready, const char *go)
{
	struct timespec ts;
	char path[4096];
	int fd, i;

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
		if (i == 6000)
			_exit(3);
		ts.tv_sec = 0;
		ts.tv_nsec = 10 * 1000 * 1000;
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
}

static int must(int ret)
{
	if (ret < 0)
		_exit(2);
	return ret;
}

/*
 * Close every descriptor above stderr that the program inherited, so the numbers it gets
 * are the lowest ones, in order.  leaktop never saw them created: nothing to take off.
 */
NOINLINE void close_inherited(void)
{
	syscall(SYS_close_range, 3, ~0U, 0);
}

/* Zero the stack below the caller's frame. */
NOINLINE void scrub_stack(void)
{
	volatile char pad[16384];

	for (size_t i = 0; i < sizeof(pad); i++)
		pad[i] = 0;
}

#endif
