/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * launcher.h - `leaktop -- CMD`: start CMD held just before exec until the probes are in, so
 * its first allocation is seen; then report how it ended.
 */
#ifndef LEAKTOP_LAUNCHER_H
#define LEAKTOP_LAUNCHER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct launcher {
	pid_t pid;
	int go_fd;		/* write end: one byte releases the child */
	int err_fd;		/* read end: errno of a failed exec, EOF if exec worked */
	bool reaped;
	int status;		/* waitpid status once reaped */
};

/* Is CMD runnable (a path, or found in PATH)?  0 or -ENOENT/-EACCES. */
int launcher__check(const char *cmd);
/* The same, and the file exec will run into out (as found: relative if PATH says so). */
int launcher__which(const char *cmd, char *out, size_t len);
/*
 * Fork the held child.  own_session: it runs in a session of its own (setsid), so that a
 * stop leaktop leaves it in survives leaktop's exit (the kernel sends SIGHUP and SIGCONT to a
 * stopped process group its session's parent leaves orphaned).  0 or -errno.
 */
int launcher__start(struct launcher *l, char **argv, bool own_session);
/*
 * What `--agent` adds to CMD's start: keep_fd stays open across exec, LD_PRELOAD gets
 * preload in front of what it held, and the variable env_name is env_value.
 */
struct launcher_env {
	int keep_fd;
	const char *preload;
	const char *env_name;
	const char *env_value;
};
/* launcher__start with env (NULL: none). */
int launcher__start_env(struct launcher *l, char **argv, bool own_session,
			const struct launcher_env *env);
/* Let the child exec; 0, or -errno of a failed exec (the child is then reaped). */
int launcher__release(struct launcher *l);
/* Reap without blocking (block=false) or waiting.  true once the child has ended. */
bool launcher__poll(struct launcher *l, bool block);
/* Abandon a child never released: it exits without running CMD. */
void launcher__abort(struct launcher *l);
/* "exited with status 3" / "killed by signal 9 (Killed)". */
void launcher__describe(const struct launcher *l, char *buf, size_t len);

#endif
