// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * alloc_slack.c - memory the allocator holds and the program does not: allocates MIB MiB
 * (default 200) of BLOCK-byte blocks (default 16384) from slack_block, frees every other
 * one and keeps the rest, so glibc's heap stays resident with half of it in free chunks
 * between live ones (no free chunk can merge with another or with the top).  Then, on
 * request, calls malloc_trim(0), which gives back the whole pages inside those chunks.
 *
 * Usage: alloc_slack DIR [BLOCK [MIB]].  Creates DIR/ready (pid) and waits for DIR/go
 * (leaktop traces it), allocates and frees, creates DIR/done and waits for DIR/trim, calls
 * malloc_trim(0), creates DIR/trimmed and waits for DIR/quit, then exits 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define MAX_BLOCKS (1 << 20)

static char *blocks[MAX_BLOCKS];

/* Create dir/NAME holding our pid (atomically) and/or wait for dir/WAIT. */
static void handshake(const char *dir, const char *name, const char *wait)
{
	struct timespec ts;
	char path[4096];
	int fd, i;

	if (name) {
		char tmp[4096], buf[32];
		int n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());

		snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, buf, n) != n || close(fd) || rename(tmp, path))
			_exit(2);
	}
	if (!wait)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, wait);
	for (i = 0; access(path, F_OK); i++) {
		if (i == 18000)
			_exit(3);
		ts.tv_sec = 0;
		ts.tv_nsec = 10 * 1000 * 1000;
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
}

NOINLINE char *slack_block(size_t n)
{
	char *p = malloc(n);

	/* Resident, as a program's data would be. */
	if (p)
		memset(p, 0x5a, n);
	return p;
}

int main(int argc, char **argv)
{
	size_t block = argc > 2 ? strtoul(argv[2], NULL, 0) : 16384;
	size_t mib = argc > 3 ? strtoul(argv[3], NULL, 0) : 200;
	size_t n;

	if (argc < 2 || !block)
		return 1;
	n = (mib << 20) / block;
	if (n > MAX_BLOCKS)
		n = MAX_BLOCKS;
	handshake(argv[1], "ready", "go");
	for (size_t i = 0; i < n; i++)
		if (!(blocks[i] = slack_block(block)))
			return 1;
	for (size_t i = 0; i < n; i += 2) {
		free(blocks[i]);
		blocks[i] = NULL;
	}
	handshake(argv[1], "done", "trim");
	malloc_trim(0);
	handshake(argv[1], "trimmed", "quit");
	return 0;
}
