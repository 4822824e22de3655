// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * preflight.c - what the live run checks before anything loads (see preflight.h): its
 * privileges, the output paths (never a symbolic link, a directory that takes files), the
 * OOM directory when given, the -p processes and the command.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/launcher.h"
#include "cli/oom.h"
#include "cli/preflight.h"
#include "live/session.h"
#include "util/atomic_file.h"
#include "util/msg.h"

static int check_json_path(const char *path)
{
	char dir[4096], msg[4200], *slash;
	struct stat st;

	if (!path || !strcmp(path, "-"))
		return 0;
	if (!lstat(path, &st) && (S_ISLNK(st.st_mode) || !S_ISREG(st.st_mode))) {
		int err = S_ISLNK(st.st_mode) ? -ELOOP : -EISDIR;

		err_line("%s", msg__write_failed(msg, sizeof(msg), path, err));
		return err;
	}
	/* The snapshot is written beside its final name: that directory must take files. */
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	if (access(dir, W_OK | X_OK)) {
		err_line("cannot write %s: directory %s: %s; create it or choose another path",
			 path, dir, strerror(errno));
		return -errno;
	}
	return 0;
}

int preflight__check(const struct options *o, char *oom_dir, size_t oom_len)
{
	char msg[4200];
	int err;

	if (session__check_privileges()) {
		err_line("not enough privileges: needs root, or CAP_BPF + CAP_PERFMON + "
			 "CAP_SYS_PTRACE; run it with sudo");
		return 1;
	}
	atomic_file__set_mode(o->file_mode);
	if (check_json_path(o->json_path) || check_json_path(o->pprof_path) ||
	    check_json_path(o->folded_path))
		return 1;
	/* An --oom-dir given is checked like -j; the default one is tried when needed. */
	oom__dir(oom_dir, oom_len, o->oom_dir, o->json_path);
	if (o->oom_dir && oom__check_dir(oom_dir, msg, sizeof(msg))) {
		err_line("%s", msg);
		return 1;
	}
	for (size_t i = 0; i < o->n_pids; i++) {
		if (o->pids[i] == getpid()) {
			err_line("PID %d is leaktop itself; choose another process", o->pids[i]);
			return 2;
		}
		if (!session__process_exists(o->pids[i])) {
			err_line("PID %d not found; check it with 'ps -p %d'", o->pids[i], o->pids[i]);
			return 1;
		}
	}
	if (o->mode == MODE_COMMAND) {
		err = launcher__check(o->cmd[0]);
		if (err) {
			err_line("cannot run '%s': %s; check the command name and PATH", o->cmd[0],
				 err == -ENOENT ? "command not found" : strerror(-err));
			return 1;
		}
	}
	return 0;
}
