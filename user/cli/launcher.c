// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * launcher.c - starts CMD for `leaktop -- CMD`.
 *
 * The child is forked first and blocks reading a pipe; leaktop attaches its probes, marks the
 * child as traced, then writes one byte and the child execs.  A second, close-on-exec pipe
 * carries errno back if exec fails, so "command not found" is one clear line, not a silent
 * exit.  If leaktop dies before releasing it, the child reads EOF and exits without running
 * CMD.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/launcher.h"
#include "live/ptrace_stop.h"

int launcher__which(const char *cmd, char *out, size_t len)
{
	const char *path = getenv("PATH");
	char buf[4096];
	struct stat st;

	if (strchr(cmd, '/')) {
		if (stat(cmd, &st))
			return -errno;
		if (!S_ISREG(st.st_mode) || access(cmd, X_OK))
			return -EACCES;
		snprintf(out, len, "%s", cmd);
		return 0;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)(n ? n : 1), n ? path : ".", cmd);
		if (!stat(buf, &st) && S_ISREG(st.st_mode) && !access(buf, X_OK)) {
			snprintf(out, len, "%s", buf);
			return 0;
		}
		path += n;
		if (*path == ':')
			path++;
	}
	return -ENOENT;
}

int launcher__check(const char *cmd)
{
	char buf[4096];

	return launcher__which(cmd, buf, sizeof(buf));
}

/* In the child, before exec: what --agent adds.  0 or -1. */
static int apply_env(const struct launcher_env *env)
{
	const char *old = getenv("LD_PRELOAD");
	char buf[8192];
	int flags = fcntl(env->keep_fd, F_GETFD);

	if (flags < 0 || fcntl(env->keep_fd, F_SETFD, flags & ~FD_CLOEXEC))
		return -1;
	if ((size_t)snprintf(buf, sizeof(buf), "%s%s%s", env->preload, old && *old ? " " : "",
			     old ? old : "") >= sizeof(buf))
		return -1;
	if (setenv("LD_PRELOAD", buf, 1) || setenv(env->env_name, env->env_value, 1))
		return -1;
	return 0;
}

int launcher__start(struct launcher *l, char **argv, bool own_session)
{
	return launcher__start_env(l, argv, own_session, NULL);
}

int launcher__start_env(struct launcher *l, char **argv, bool own_session,
			const struct launcher_env *env)
{
	int go[2], errp[2];
	char c;

	memset(l, 0, sizeof(*l));
	l->pid = -1;
	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(errp, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		return -errno;
	}
	l->pid = fork();
	if (l->pid < 0) {
		int err = -errno;

		close(go[0]);
		close(go[1]);
		close(errp[0]);
		close(errp[1]);
		return err;
	}
	if (l->pid == 0) {
		int e;

		close(go[1]);
		close(errp[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		if (own_session && setsid() < 0)
			_exit(127);
		if (env && apply_env(env))
			_exit(127);
		execvp(argv[0], argv);
		e = errno;
		if (write(errp[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(errp[1]);
	l->go_fd = go[1];
	l->err_fd = errp[0];
	return 0;
}

int launcher__release(struct launcher *l)
{
	char c = 1;
	int e = 0;
	ssize_t n;

	if (write(l->go_fd, &c, 1) != 1)
		return -errno;
	close(l->go_fd);
	l->go_fd = -1;
	do
		n = read(l->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(l->err_fd);
	l->err_fd = -1;
	if (n == sizeof(e)) {
		launcher__poll(l, true);
		return -e;
	}
	return 0;
}

/*
 * A scan makes leaktop CMD's tracer too, so a wait for CMD can return a ptrace stop: that is
 * no end, the stopped thread is detached (a scan gave up on it) and the wait goes on.  A
 * scan's own wait may have collected CMD's exit: its status is taken from there.
 */
bool launcher__poll(struct launcher *l, bool block)
{
	int status;
	pid_t r;

	if (l->reaped || l->pid <= 0)
		return true;
	for (;;) {
		r = waitpid(l->pid, &status, block ? 0 : WNOHANG);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == l->pid && WIFSTOPPED(status)) {
			ptrace_stop__stopped(l->pid, status);
			if (block)
				continue;
			return false;
		}
		break;
	}
	if (r == l->pid) {
		l->status = status;
		l->reaped = true;
	} else if (r < 0 && errno == ECHILD) {
		if (!ptrace_stop__exit_status(l->pid, &l->status))
			l->status = 0;
		l->reaped = true;
	}
	return l->reaped;
}

void launcher__abort(struct launcher *l)
{
	if (l->go_fd >= 0)
		close(l->go_fd);
	if (l->err_fd >= 0)
		close(l->err_fd);
	l->go_fd = l->err_fd = -1;
	launcher__poll(l, true);
}

void launcher__describe(const struct launcher *l, char *buf, size_t len)
{
	if (!l->reaped)
		snprintf(buf, len, "is still running");
	else if (WIFEXITED(l->status))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(l->status));
	else if (WIFSIGNALED(l->status))
		snprintf(buf, len, "was killed by signal %d (%s)", WTERMSIG(l->status),
			 strsignal(WTERMSIG(l->status)));
	else
		snprintf(buf, len, "ended (status 0x%x)", l->status);
}
