// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * map_hold.c - holds a file open and mapped, for tests/e2e/hostile_fuse.sh: opens FILE (the
 * descriptor kept), maps it MAP_PRIVATE read-write without touching a page (a scan that
 * reads it faults the pages in from FILE's file system), creates DIR/ready (holding its
 * pid), then leaks 3 x 77 bytes in hold_leak() every 100 ms (so a tracer that comes later
 * has blocks allocated while it traces) until killed, at most 180 s.
 *
 *	map_hold FILE DIR
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void *kept[3];

__attribute__((noinline)) static void hold_leak(void)
{
	for (int i = 0; i < 3; i++) {
		kept[i] = malloc(77);
		memset(kept[i], i, 77);
	}
	kept[0] = kept[1] = kept[2] = NULL;
}

int main(int argc, char **argv)
{
	char path[4096], pid[32];
	void *map;
	int fd, out;

	if (argc != 3)
		return 2;
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	map = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return 1;
	snprintf(path, sizeof(path), "%s/ready", argv[2]);
	out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0)
		return 1;
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (write(out, pid, strlen(pid)) < 0)
		return 1;
	close(out);
	for (int i = 0; i < 1800; i++) {
		hold_leak();
		usleep(100000);
	}
	return 3;
}
