// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_allocs.c - unit tests of user/live/allocs.c on real processes and Debian's real
 * allocators (installed by make deps): which object a process's malloc binds to, with
 * LD_PRELOAD and without, what a command will bind before it runs, and what a program held
 * at exec will bind once ld.so has mapped its libraries.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "live/allocs.h"

extern char **environ;

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/*
 * Start `sleep 30` with env_extra (NULL: none) added to the environment; wait until it has
 * exec'd and mapped its libraries (its comm is "sleep" and libc is in its maps).
 */
static pid_t start_sleeper(char *env_extra)
{
	char *argv[] = { "/bin/sleep", "30", NULL };
	char *envp[64];
	size_t n = 0;
	pid_t pid;

	for (char **e = environ; *e && n < 62; e++)
		if (strncmp(*e, "LD_PRELOAD=", 11))
			envp[n++] = *e;
	if (env_extra)
		envp[n++] = env_extra;
	envp[n] = NULL;
	if (posix_spawn(&pid, argv[0], NULL, NULL, argv, envp))
		return -1;
	for (int i = 0; i < 500; i++) {
		char path[64], buf[256] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/maps", pid);
		f = fopen(path, "re");
		while (f && fgets(buf, sizeof(buf), f))
			if (strstr(buf, "libc.so.6")) {
				fclose(f);
				return pid;
			}
		if (f)
			fclose(f);
		usleep(10000);
	}
	return pid;
}

static void stop_sleeper(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void test_allocs_plain_program_binds_glibc(void)
{
	struct allocs *a;
	struct alloc_obj objs[8];
	char module[PATH_MAX];
	const char *kind = NULL;
	size_t n = 0;
	pid_t pid;
	int err;

	CHECK_EQ_INT(allocs__new(&a), 0);
	pid = start_sleeper(NULL);
	CHECK(pid > 0);
	err = allocs__bound_of_pid(a, pid, module, sizeof(module), &kind);
	if (!err)
		err = allocs__of_pid(a, pid, objs, 8, &n);
	stop_sleeper(pid);
	allocs__free(a);
	CHECK_EQ_INT(err, 0);
	CHECK_EQ_STR(kind, "glibc");
	CHECK_EQ_STR(base(module), "libc.so.6");
	CHECK_EQ_INT(n, 1);
	CHECK(objs[0].bound);
	CHECK_EQ_STR(base(objs[0].ref.path), "libc.so.6");
}

static void test_allocs_preloaded_tcmalloc_wins_over_libc(void)
{
	struct allocs *a;
	struct alloc_obj objs[8];
	size_t n = 0;
	pid_t pid;
	int err;

	CHECK_EQ_INT(allocs__new(&a), 0);
	pid = start_sleeper("LD_PRELOAD=libtcmalloc_minimal.so.4");
	CHECK(pid > 0);
	err = allocs__of_pid(a, pid, objs, 8, &n);
	stop_sleeper(pid);
	allocs__free(a);
	CHECK_EQ_INT(err, 0);
	/* libc is mapped too, but nothing binds its malloc: only tcmalloc is probed. */
	CHECK_EQ_INT(n, 1);
	CHECK(objs[0].bound);
	CHECK_EQ_STR(objs[0].kind, "tcmalloc");
	CHECK(!strncmp(base(objs[0].ref.path), "libtcmalloc_minimal.so.4", 24));
}

static void test_allocs_first_of_two_preloads_wins(void)
{
	struct allocs *a;
	char module[PATH_MAX];
	const char *kind = NULL;
	pid_t pid;
	int err;

	CHECK_EQ_INT(allocs__new(&a), 0);
	pid = start_sleeper("LD_PRELOAD=libmimalloc.so.2:libjemalloc.so.2");
	CHECK(pid > 0);
	err = allocs__bound_of_pid(a, pid, module, sizeof(module), &kind);
	stop_sleeper(pid);
	allocs__free(a);
	CHECK_EQ_INT(err, 0);
	CHECK_EQ_STR(kind, "mimalloc");
}

static void test_allocs_command_linked_with_jemalloc_is_predicted(void)
{
	struct allocs *a;
	struct alloc_obj objs[8];
	size_t n = 0;
	bool je_bound = false;
	int err;

	CHECK_EQ_INT(allocs__new(&a), 0);
	/* Debian's redis-server needs libjemalloc.so.2 before libc. */
	err = allocs__of_command(a, "/usr/bin/redis-server", objs, 8, &n);
	allocs__free(a);
	CHECK_EQ_INT(err, 0);
	for (size_t i = 0; i < n; i++)
		je_bound |= objs[i].bound && !strcmp(objs[i].kind, "jemalloc");
	CHECK(je_bound);
}

static void test_allocs_command_that_is_missing_is_an_error(void)
{
	struct allocs *a;
	struct alloc_obj objs[8];
	size_t n = 0;

	CHECK_EQ_INT(allocs__new(&a), 0);
	CHECK_EQ_INT(allocs__of_command(a, "/nonexistent/leaktop-test", objs, 8, &n), -ENOENT);
	CHECK_EQ_INT(n, 0);
	allocs__free(a);
}

static void test_allocs_gone_process_is_esrch(void)
{
	struct allocs *a;
	struct alloc_obj objs[8];
	size_t n = 0;
	pid_t pid = start_sleeper(NULL);

	stop_sleeper(pid);
	CHECK_EQ_INT(allocs__new(&a), 0);
	CHECK_EQ_INT(allocs__of_pid(a, pid, objs, 8, &n), -ESRCH);
	allocs__free(a);
}

/*
 * Start /bin/sleep under PTRACE_TRACEME with env_extra in its environment: it stops at exec
 * (SIGTRAP) before its first instruction, only the program and ld.so mapped, as leaktop's
 * exec stop holds a process.  -1 on failure.
 */
static pid_t start_held(char *env_extra)
{
	char *argv[] = { "/bin/sleep", "30", NULL };
	char *envp[64];
	size_t n = 0;
	int status;
	pid_t pid;

	for (char **e = environ; *e && n < 62; e++)
		if (strncmp(*e, "LD_PRELOAD=", 11) && strncmp(*e, "LD_LIBRARY_PATH=", 16))
			envp[n++] = *e;
	if (env_extra)
		envp[n++] = env_extra;
	envp[n] = NULL;
	pid = fork();
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status))
		return -1;
	return pid;
}

static void test_allocs_exec_held_preload_by_path_predicted(void)
{
	struct allocs *a;
	struct alloc_obj objs[8];
	bool env_set = false;
	size_t n = 0;
	pid_t pid;
	int err;

	CHECK_EQ_INT(allocs__new(&a), 0);
	pid = start_held("LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4");
	CHECK(pid > 0);
	err = allocs__of_exec(a, pid, objs, 8, &n, &env_set);
	stop_sleeper(pid);
	allocs__free(a);
	CHECK_EQ_INT(err, 0);
	CHECK(env_set);
	/* Not mapped yet: found from the program's files and its environment. */
	CHECK_EQ_INT(n, 1);
	CHECK(objs[0].bound);
	CHECK_EQ_STR(objs[0].kind, "tcmalloc");
	CHECK_EQ_STR(base(objs[0].ref.path), "libtcmalloc_minimal.so.4");
}

static void test_allocs_exec_held_plain_program_binds_glibc(void)
{
	struct allocs *a;
	struct alloc_obj objs[8];
	bool env_set = true;
	size_t n = 0;
	pid_t pid;
	int err;

	CHECK_EQ_INT(allocs__new(&a), 0);
	pid = start_held(NULL);
	CHECK(pid > 0);
	err = allocs__of_exec(a, pid, objs, 8, &n, &env_set);
	stop_sleeper(pid);
	allocs__free(a);
	CHECK_EQ_INT(err, 0);
	CHECK(!env_set);
	CHECK_EQ_INT(n, 1);
	CHECK(objs[0].bound);
	CHECK_EQ_STR(objs[0].kind, "glibc");
	CHECK_EQ_STR(base(objs[0].ref.path), "libc.so.6");
}

/* maps lists the file the preload's symbolic link leads to (...so.4.5.10): still bound. */
static void test_allocs_preload_by_symlink_path_binds(void)
{
	struct allocs *a;
	char module[PATH_MAX];
	const char *kind = NULL;
	pid_t pid;
	int err;

	CHECK_EQ_INT(allocs__new(&a), 0);
	pid = start_sleeper("LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4");
	CHECK(pid > 0);
	err = allocs__bound_of_pid(a, pid, module, sizeof(module), &kind);
	stop_sleeper(pid);
	allocs__free(a);
	CHECK_EQ_INT(err, 0);
	CHECK_EQ_STR(kind, "tcmalloc");
}

int main(void)
{
	RUN(test_allocs_plain_program_binds_glibc);
	RUN(test_allocs_preloaded_tcmalloc_wins_over_libc);
	RUN(test_allocs_first_of_two_preloads_wins);
	RUN(test_allocs_command_linked_with_jemalloc_is_predicted);
	RUN(test_allocs_command_that_is_missing_is_an_error);
	RUN(test_allocs_gone_process_is_esrch);
	RUN(test_allocs_exec_held_preload_by_path_predicted);
	RUN(test_allocs_exec_held_plain_program_binds_glibc);
	RUN(test_allocs_preload_by_symlink_path_binds);
	CHECK_EXIT();
}
