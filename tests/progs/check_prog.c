// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * check_prog.c - small programs for `leaktop check` (tests/e2e/check.sh): each MODE leaves
 * one known thing behind at exit (or nothing) and exits with STATUS (default 0).
 *   leak     one definite leak of 100 bytes from leak_one()   (marker LEAK:one)
 *   clean    allocates and frees everything
 *   fd       one descriptor of /dev/null left open by open_forgotten()   (marker FD:open)
 *   fork     a child that leaks 200 bytes from child_leak() and exits; the parent is clean
 *            (marker LEAK:child)
 *   mmap     one anonymous mapping of 64 KiB left mapped by map_forgotten()   (marker MMAP:map)
 *   signal   a leak as in `leak`, then killed by SIGTERM (its default action)
 *   thread_exit  a leak as in `leak`, then a second thread calls exit(STATUS) while main
 *            waits in pthread_join
 *   pthread_exit a leak as in `leak`; main ends by pthread_exit, the second thread (the
 *            last) returns: the C library's exit(0)
 *   segv, abort, kill  a leak as in `leak`, then SIGSEGV (a null write), abort() (SIGABRT),
 *            or SIGKILL to itself
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

static NOINLINE void map_forgotten(void)
{
	char *p = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);	/* MMAP:map */

	if (p != MAP_FAILED)
		memset(p, 4, 65536);
	__asm__ volatile("" : : "r"(p) : "memory");
}

static NOINLINE void churn(void)
{
	for (int i = 0; i < 100; i++) {
		char *p = malloc(32 + i);

		memset(p, 3, 32 + i);
		free(p);
	}
}

static int thread_status;

static void *exit_from_thread(void *arg)
{
	(void)arg;
	scrub();
	exit(thread_status);
}

static void *last_thread(void *arg)
{
	(void)arg;
	scrub();
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "clean";
	int status = argc > 2 ? atoi(argv[2]) : 0;

	churn();
	if (!strcmp(mode, "leak") || !strcmp(mode, "signal") || !strcmp(mode, "thread_exit") ||
	    !strcmp(mode, "pthread_exit") || !strcmp(mode, "segv") || !strcmp(mode, "abort") ||
	    !strcmp(mode, "kill")) {
		leak_one();
	} else if (!strcmp(mode, "mmap")) {
		map_forgotten();
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
	if (!strcmp(mode, "thread_exit") || !strcmp(mode, "pthread_exit")) {
		pthread_t t;
		bool last = !strcmp(mode, "pthread_exit");

		thread_status = status;
		if (pthread_create(&t, NULL, last ? last_thread : exit_from_thread, NULL))
			return 2;
		if (last)
			pthread_exit(NULL);
		pthread_join(t, NULL);
		return 2;
	}
	if (!strcmp(mode, "segv"))
		*(volatile int *)(uintptr_t)argc = 0;
	if (!strcmp(mode, "abort"))
		abort();
	if (!strcmp(mode, "kill"))
		kill(getpid(), SIGKILL);
	return status;
}
