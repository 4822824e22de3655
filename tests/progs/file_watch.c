// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * file_watch.c - watches one file for what leaktop must never do to it, for the tests of
 * where probes may land (tests/e2e/libc_files.sh).
 *
 * Usage: file_watch opens|patches DIR FILE
 *   opens    watches FILE with inotify (IN_OPEN): did anyone open it?  FILE may be a FIFO:
 *            this program never opens it itself.
 *   patches  maps FILE read-only and private: the kernel writes a uprobe's breakpoint into
 *            every such mapping of the probed file, so a mapping that no longer matches the
 *            file's contents (read with pread) means someone put a probe into FILE.
 * Then it creates DIR/ready (holding its pid), waits for DIR/go to exist, writes the verdict
 * to DIR/result ("not opened" / "opened N times"; "unpatched" / "patched at +0xOFFSET") and
 * exits 0.  It gives up after 600 s (exit 3), so a broken test never leaves it behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define POLL_MS		10
#define GIVE_UP_POLLS	(600 * 1000 / POLL_MS)

static void die(const char *what)
{
	perror(what);
	_exit(2);
}

/* Write text to dir/name under a temporary name, then rename: never seen half written. */
static void publish(const char *dir, const char *name, const char *text)
{
	char tmp[4096], path[4096];
	size_t len = strlen(text);
	int fd;

	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len || close(fd) || rename(tmp, path))
		die(path);
}

/* Count IN_OPEN events on ifd (-1: none watched) until dir/go exists. */
static unsigned long wait_go(const char *dir, int ifd)
{
	char go[4096], buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	unsigned long opens = 0;
	struct pollfd pfd = { .fd = ifd, .events = POLLIN };

	snprintf(go, sizeof(go), "%s/go", dir);
	for (int i = 0; access(go, F_OK); i++) {
		if (i == GIVE_UP_POLLS)
			_exit(3);
		if (poll(&pfd, ifd >= 0, POLL_MS) < 0 && errno != EINTR)
			die("poll");
		if (ifd < 0 || !(pfd.revents & POLLIN))
			continue;
		ssize_t n = read(ifd, buf, sizeof(buf));

		for (ssize_t off = 0; n > 0 && off < n;) {
			const struct inotify_event *ev = (const void *)(buf + off);

			opens += !!(ev->mask & IN_OPEN);
			off += sizeof(*ev) + ev->len;
		}
	}
	/* Events that came just before go. */
	if (ifd >= 0) {
		ssize_t n;

		while ((n = read(ifd, buf, sizeof(buf))) > 0) {
			for (ssize_t off = 0; off < n;) {
				const struct inotify_event *ev = (const void *)(buf + off);

				opens += !!(ev->mask & IN_OPEN);
				off += sizeof(*ev) + ev->len;
			}
		}
	}
	return opens;
}

static void ready(const char *dir)
{
	char pid[32];

	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	publish(dir, "ready", pid);
}

static int watch_opens(const char *dir, const char *file)
{
	char verdict[64];
	unsigned long n;
	int ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	if (ifd < 0 || inotify_add_watch(ifd, file, IN_OPEN | IN_DONT_FOLLOW) < 0)
		die("inotify");
	ready(dir);
	n = wait_go(dir, ifd);
	if (n)
		snprintf(verdict, sizeof(verdict), "opened %lu times\n", n);
	else
		snprintf(verdict, sizeof(verdict), "not opened\n");
	publish(dir, "result", verdict);
	return 0;
}

static int watch_patches(const char *dir, const char *file)
{
	char verdict[64];
	const uint8_t *map;
	uint8_t *copy;
	struct stat st;
	size_t off;
	int fd = open(file, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || !st.st_size)
		die(file);
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	copy = malloc(st.st_size);
	if (map == MAP_FAILED || !copy)
		die("mmap");
	ready(dir);
	wait_go(dir, -1);
	if (pread(fd, copy, st.st_size, 0) != st.st_size)
		die("pread");
	for (off = 0; off < (size_t)st.st_size && map[off] == copy[off]; off++)
		;
	if (off < (size_t)st.st_size)
		snprintf(verdict, sizeof(verdict), "patched at +0x%zx\n", off);
	else
		snprintf(verdict, sizeof(verdict), "unpatched\n");
	publish(dir, "result", verdict);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	if (!strcmp(argv[1], "opens"))
		return watch_opens(argv[2], argv[3]);
	if (!strcmp(argv[1], "patches"))
		return watch_patches(argv[2], argv[3]);
	return 2;
}
