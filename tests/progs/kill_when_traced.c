// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * kill_when_traced.c - SIGKILLs a process at a chosen moment after another one comes under
 * ptrace: for the tests of leaktop's death in the middle of an injection.
 *
 * Usage: kill_when_traced TARGET VICTIM DELAY_US
 *   Polls /proc/TARGET/status (every ~20 us) until its TracerPid is not 0, waits DELAY_US,
 *   then sends SIGKILL to VICTIM.  Prints "traced" when the tracer was seen, or "untraced"
 *   when VICTIM ended (or 30 s passed) first, in which case VICTIM is killed anyway.
 *   Exit 0, or 2 on bad arguments.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long tracer_of(int fd)
{
	char buf[4096], *p;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return -1;
	buf[n] = 0;
	p = strstr(buf, "TracerPid:");
	return p ? strtol(p + 10, NULL, 10) : -1;
}

int main(int argc, char **argv)
{
	struct timespec poll_ts = { 0, 20 * 1000 }, delay;
	char path[64];
	long us, tries;
	int victim, fd;

	if (argc != 4)
		return 2;
	victim = atoi(argv[2]);
	us = atol(argv[3]);
	if (victim <= 0 || us < 0)
		return 2;
	snprintf(path, sizeof(path), "/proc/%d/status", atoi(argv[1]));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 2;
	for (tries = 0; tries < 30L * 1000 * 1000 / 30; tries++) {
		if (tracer_of(fd) > 0)
			break;
		if (kill(victim, 0)) {
			puts("untraced");
			return 0;
		}
		nanosleep(&poll_ts, NULL);
	}
	delay.tv_sec = us / 1000000;
	delay.tv_nsec = us % 1000000 * 1000;
	nanosleep(&delay, NULL);
	kill(victim, SIGKILL);
	puts(tries < 30L * 1000 * 1000 / 30 ? "traced" : "untraced");
	return 0;
}
