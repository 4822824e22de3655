// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * seq_leak.c - ten blocks from one call site, of which the 3rd, 7th and 9th leak: for
 * allocation sequence numbers, the scan's list of them and --stop-at.
 *
 * Usage: seq_leak DIR
 *   1. creates DIR/ready (holding its pid) and waits for DIR/go (so a tracer can attach);
 *   2. make_block() allocates ten 48-byte blocks, one after the other, all kept;
 *   3. frees every one but the 3rd, 7th and 9th, forgetting those pointers (the leak);
 *   4. writes DIR/blocks ("N 0xADDR" for each block N) and creates DIR/done;
 *   5. waits for DIR/quit, then exits 0.
 * Every wait gives up after 180 s (exit 3).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define N_BLOCKS 10

static char path[4096];

static int touch(const char *dir, const char *name, const char *text)
{
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	if (text && write(fd, text, strlen(text)) < 0) {
		close(fd);
		return -1;
	}
	return close(fd);
}

static int wait_for(const char *dir, const char *name)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (int i = 0; i < 18000; i++) {
		if (!access(path, F_OK))
			return 0;
		nanosleep(&ts, NULL);
	}
	return -1;
}

NOINLINE static void *make_block(int i)
{
	char *p = malloc(48);

	if (p)
		memset(p, i, 48);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

int main(int argc, char **argv)
{
	static void *blocks[N_BLOCKS];
	char text[64 * N_BLOCKS] = "", pid[32];
	size_t used = 0;

	if (argc != 2)
		return 2;
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (touch(argv[1], "ready", pid) || wait_for(argv[1], "go"))
		return 3;
	for (int i = 0; i < N_BLOCKS; i++)
		blocks[i] = make_block(i + 1);
	for (int i = 0; i < N_BLOCKS; i++) {
		used += snprintf(text + used, sizeof(text) - used, "%d %p\n", i + 1, blocks[i]);
		if (i + 1 != 3 && i + 1 != 7 && i + 1 != 9)
			free(blocks[i]);
		/* The leaked ones are forgotten: no pointer to them stays anywhere. */
		blocks[i] = NULL;
	}
	__asm__ volatile("" : : "r"(blocks) : "memory");
	if (touch(argv[1], "blocks", text) || touch(argv[1], "done", pid))
		return 1;
	return wait_for(argv[1], "quit") ? 3 : 0;
}
