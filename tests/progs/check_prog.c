// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * check_prog.c - small programs for `leaktop check` (tests/e2e/check.sh): each MODE leaves
 * one known thing behind at exit (or nothing) and exits with STATUS (default 0).
 *   leak     one definite leak of 100 bytes from leak_one()   (marker LEAK:one)
 *   clean    allocates and frees everything
 *   fd       one descriptor of /dev/null left open by open_forgotten()   (marker FD:open)
 *   fork     a child that leaks 200 bytes from child_leak() and exits; the parent is clean
 *            (marker LEAK:child)
 *   signal   a leak as in `leak`, then killed by SIGTERM (its default action)
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

/* Calls that overwrite what a leaked pointer left in registers and below the stack. */
static NOINLINE void scrub(void)
{
	volatile char buf[4096];

	memset((char *)buf, 0, sizeof(buf));
}

static NOINLINE void leak_one(void)
{
	char *p = malloc(100);	/* LEAK:one */

	memset(p, 1, 100);
	__asm__ volatile("" : : "r"(p) : "memory");
}

static NOINLINE void child_leak(void)
{
	char *p = malloc(200);	/* LEAK:child */

	memset(p, 2, 200);
	__asm__ volatile("" : : "r"(p) : "memory");
}

static NOINLINE void open_forgotten(void)
{
	int fd = open("/dev/null", O_RDONLY);	/* FD:open */

	__asm__ volatile("" : : "r"(fd) : "memory");
}

static NOINLINE void churn(void)
{
	for (int i = 0; i < 100; i++) {
		char *p = malloc(32 + i);

		memset(p, 3, 32 + i);
		free(p);
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "clean";
	int status = argc > 2 ? atoi(argv[2]) : 0;

	churn();
	if (!strcmp(mode, "leak") || !strcmp(mode, "signal")) {
		leak_one();
	} else if (!strcmp(mode, "fd")) {
		open_forgotten();
	} else if (!strcmp(mode, "fork")) {
		pid_t pid = fork();

		if (pid == 0) {
			child_leak();
			scrub();
			exit(0);
		}
		if (pid < 0 || waitpid(pid, NULL, 0) != pid)
			return 2;
	}
	scrub();
	if (!strcmp(mode, "signal"))
		kill(getpid(), SIGTERM);
	return status;
}
