// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * oom.c - OOM-kill snapshots: owns the queue of victims the ring buffer announced, the OOM
 * directory and the files written into it (view/snapshot.c writes them, through the atomic
 * writer: temp file + rename, never through a symbolic link, the --file-mode mode).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/oom.h"
#include "util/msg.h"
#include "view/snapshot.h"

struct oom_victim {
	uint32_t pid;
	uint64_t gen;
	time_t when;			/* wall clock when the event was read */
};

struct oom_writer {
	char dir[4096];
	bool strict;			/* --oom-dir given: look at it before each write */
	struct oom_victim queue[OOM_QUEUE_MAX];
	size_t n_queue;
	uint64_t lost;			/* victims the queue had no room for, not yet said */
	uint64_t failed;
};

const char *oom__dir(char *buf, size_t len, const char *dir, const char *json_path)
{
	const char *slash;

	if (dir)
		snprintf(buf, len, "%s", dir);
	else if (!json_path || !strcmp(json_path, "-") || !(slash = strrchr(json_path, '/')))
		snprintf(buf, len, ".");
	else if (slash == json_path)
		snprintf(buf, len, "/");
	else
		snprintf(buf, len, "%.*s", (int)(slash - json_path), json_path);
	return buf;
}

int oom__file_name(char *buf, size_t len, const char *dir, uint32_t pid, time_t when)
{
	size_t n = strlen(dir);
	char stamp[32];
	struct tm tm;
	int ret;

	gmtime_r(&when, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	ret = snprintf(buf, len, "%s%sleaktop-oom-%u-%s.json", dir,
		       n && dir[n - 1] == '/' ? "" : "/", pid, stamp);
	return ret < 0 || (size_t)ret >= len ? -ENAMETOOLONG : 0;
}

int oom__check_dir(const char *dir, char *msg, size_t len)
{
	struct stat st;

	if (lstat(dir, &st))
		return msg__set(msg, len, -errno, "cannot write OOM snapshots to %s: %s; create "
				"it or choose another --oom-dir", dir, strerror(errno));
	if (S_ISLNK(st.st_mode))
		return msg__set(msg, len, -ELOOP, "refusing to write OOM snapshots to %s: it is "
				"a symbolic link; give the directory it points to", dir);
	if (!S_ISDIR(st.st_mode))
		return msg__set(msg, len, -ENOTDIR, "cannot write OOM snapshots to %s: not a "
				"directory; choose a directory with --oom-dir", dir);
	if (access(dir, W_OK | X_OK))
		return msg__set(msg, len, -errno, "cannot write OOM snapshots to %s: %s; make it "
				"writable or choose another --oom-dir", dir, strerror(errno));
	return 0;
}

int oom_writer__new(struct oom_writer **out, const char *dir, bool strict)
{
	struct oom_writer *w = calloc(1, sizeof(*w));

	*out = w;
	if (!w)
		return -ENOMEM;
	snprintf(w->dir, sizeof(w->dir), "%s", dir);
	w->strict = strict;
	return 0;
}

void oom_writer__free(struct oom_writer *w)
{
	free(w);
}

void oom_writer__note(struct oom_writer *w, const struct lt_event *ev)
{
	if (!w || ev->type != LT_EV_OOM)
		return;
	if (w->n_queue == OOM_QUEUE_MAX) {
		w->lost++;
		return;
	}
	w->queue[w->n_queue++] = (struct oom_victim){ .pid = ev->tgid, .gen = ev->new_gen,
						      .when = time(NULL) };
}

bool oom_writer__pending(const struct oom_writer *w)
{
	return w && (w->n_queue || w->lost);
}

/* One victim's snapshot: 0, or -errno with the line to say in msg. */
static int write_one(struct oom_writer *w, const struct model *m, const struct oom_victim *v,
		     char *msg, size_t len)
{
	const struct process *p = model__find(m, v->pid, v->gen);
	char path[4200], fail[4400];
	int err;

	if (!p)
		return msg__set(msg, len, -ENOENT, "the OOM killer chose process %u but leaktop "
				"holds no record of it; no snapshot written", v->pid);
	err = oom__file_name(path, sizeof(path), w->dir, v->pid, v->when);
	if (!err && w->strict)
		err = oom__check_dir(w->dir, msg, len);
	if (err == -ENAMETOOLONG)
		return msg__set(msg, len, err, "cannot name the OOM snapshot of process %u in %s: "
				"path too long; choose a shorter --oom-dir", v->pid, w->dir);
	if (err)
		return err;
	err = snapshot__write_process_file(path, m, p);
	if (err)
		return msg__set(msg, len, err, "OOM snapshot of process %u: %s", v->pid,
				msg__write_failed(fail, sizeof(fail), path, err));
	snprintf(msg, len, "the OOM killer chose process %u (%s): its snapshot is %s", v->pid,
		 p->comm[0] ? p->comm : "?", path);
	return 0;
}

void oom_writer__write(struct oom_writer *w, const struct model *m, oom_say_fn say, void *ctx)
{
	char msg[4600];

	if (!w)
		return;
	for (size_t i = 0; i < w->n_queue; i++) {
		if (write_one(w, m, &w->queue[i], msg, sizeof(msg)))
			w->failed++;
		say(ctx, msg);
	}
	w->n_queue = 0;
	if (w->lost) {
		snprintf(msg, sizeof(msg), "%llu more OOM victims in one interval than leaktop "
			 "writes snapshots of (%d); their snapshots are not written",
			 (unsigned long long)w->lost, OOM_QUEUE_MAX);
		say(ctx, msg);
		w->failed += w->lost;
		w->lost = 0;
	}
}

uint64_t oom_writer__failed(const struct oom_writer *w)
{
	return w ? w->failed : 0;
}
