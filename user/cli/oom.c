// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * oom.c - OOM-kill snapshots: owns the queue of victims the model announced, the OOM
 * directory and the files written into it (view/snapshot.c writes them, through the atomic
 * writer: temp file + rename, never through a symbolic link, the --file-mode mode), the rate
 * limit per cgroup and the caps on the directory's snapshot files (oldest removed first).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/oom.h"
#include "util/msg.h"
#include "view/snapshot.h"
#include "util/clock.h"
#include "util/vec.h"

struct oom_victim {
	uint32_t pid;
	uint64_t gen;
	time_t when;			/* wall clock when the event was read */
};

struct oom_writer {
	char dir[4096];
	bool strict;			/* --oom-dir given (the default one is not refused early) */
	struct oom_limits lim;
	struct oom_rate rate;
	struct oom_victim queue[OOM_QUEUE_MAX];
	size_t n_queue;
	uint64_t lost;			/* victims the queue had no room for, not yet said */
	uint64_t failed;
	uint64_t skipped;		/* the rate limit's */
	uint64_t removed;		/* files removed for the caps */
	uint32_t skip_unsaid;		/* a victim skipped before it was said (its pid) */
	bool said_skipped, said_removed;	/* each said once, then only counted */
	double failed_said_s;		/* when a failure was last said (a minute apart) */
	uint64_t failed_unsaid;		/* failures since, counted but not said */
};

/* Failed snapshots are said at most once this often (the others are counted). */
#define OOM_FAILED_SAY_GAP_S	60

/* Files looked at in the OOM directory, at most (more are left alone, never removed). */
#define OOM_SCAN_MAX		65536

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

bool oom__is_snapshot_name(const char *name)
{
	static const char prefix[] = "leaktop-oom-";
	const char *s = name;
	size_t n;

	if (strncmp(s, prefix, sizeof(prefix) - 1))
		return false;
	s += sizeof(prefix) - 1;
	n = strspn(s, "0123456789");
	if (!n || n > 10 || s[n] != '-')
		return false;
	s += n + 1;
	if (strspn(s, "0123456789") != 8 || s[8] != 'T' || strspn(s + 9, "0123456789") != 6 ||
	    s[15] != 'Z')
		return false;
	s += 16;
	if (*s == '-') {
		for (n = 1; n <= 6; n++)
			if (!isalnum((unsigned char)s[n]))
				return false;
		s += 7;
	}
	return !strcmp(s, ".json");
}

static int older_first(const void *a, const void *b)
{
	const struct oom_file *x = a, *y = b;

	if (x->mtime_ns != y->mtime_ns)
		return x->mtime_ns < y->mtime_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

size_t oom__retention(struct oom_file *files, size_t n, size_t max_files, uint64_t max_bytes)
{
	uint64_t bytes = 0;
	size_t k = 0;

	qsort(files, n, sizeof(*files), older_first);
	for (size_t i = 0; i < n; i++)
		bytes += files[i].size_bytes;
	while (k < n && ((max_files && n - k > max_files) || (max_bytes && bytes > max_bytes)))
		bytes -= files[k++].size_bytes;
	return k;
}

bool oom_rate__allowed(const struct oom_rate *r, uint64_t key, double now_s, double gap_s)
{
	if (gap_s <= 0)
		return true;
	for (size_t i = 0; i < r->n; i++)
		if (r->slots[i].key == key)
			return now_s - r->slots[i].last_s >= gap_s || now_s < r->slots[i].last_s;
	return true;
}

void oom_rate__take(struct oom_rate *r, uint64_t key, double now_s)
{
	size_t i, oldest = 0;

	for (i = 0; i < r->n; i++)
		if (r->slots[i].key == key)
			break;
	if (i == r->n && r->n < OOM_RATE_SLOTS) {
		r->n++;
	} else if (i == r->n) {
		for (i = 1; i < r->n; i++)
			if (r->slots[i].last_s < r->slots[oldest].last_s)
				oldest = i;
		i = oldest;
	}
	r->slots[i].key = key;
	r->slots[i].last_s = now_s;
}

uint64_t oom__rate_key(const char *cgroup)
{
	uint64_t h = 1469598103934665603ull;	/* FNV-1a */

	if (!cgroup)
		return 0;
	for (const unsigned char *c = (const unsigned char *)cgroup; *c; c++)
		h = (h ^ *c) * 1099511628211ull;
	return h | 1;		/* never 0, the unknown cgroup's */
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
	/* Anyone could rename or replace what leaktop writes there, and remove its files. */
	if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
		return msg__set(msg, len, -EPERM, "refusing to write OOM snapshots to %s: every "
				"user may write to it and it is not sticky; choose a private "
				"directory with --oom-dir", dir);
	if (access(dir, W_OK | X_OK))
		return msg__set(msg, len, -errno, "cannot write OOM snapshots to %s: %s; make it "
				"writable or choose another --oom-dir", dir, strerror(errno));
	return 0;
}

int oom_writer__new(struct oom_writer **out, const char *dir, bool strict,
		    const struct oom_limits *lim)
{
	struct oom_writer *w = calloc(1, sizeof(*w));

	*out = w;
	if (!w)
		return -ENOMEM;
	snprintf(w->dir, sizeof(w->dir), "%s", dir);
	w->strict = strict;
	w->lim = *lim;
	return 0;
}

void oom_writer__free(struct oom_writer *w)
{
	free(w);
}

bool oom_writer__wants_collect(const struct oom_writer *w, const struct model *m, uint32_t pid,
			       uint64_t gen)
{
	const struct process *p = model__find(m, pid, gen);

	/* A cgroup known to have had its snapshot lately: no forced collect for it. */
	return w && !(p && p->cgroup && !oom_rate__allowed(&w->rate, oom__rate_key(p->cgroup),
							   monotonic_s(), w->lim.min_gap_s));
}

void oom_writer__note(struct oom_writer *w, uint32_t pid, uint64_t gen, const struct model *m)
{
	const struct process *p;

	if (!w)
		return;
	/* A cgroup known to have had its snapshot lately: skipped. */
	p = m ? model__find(m, pid, gen) : NULL;
	if (p && p->cgroup && !oom_rate__allowed(&w->rate, oom__rate_key(p->cgroup), monotonic_s(),
						 w->lim.min_gap_s)) {
		w->skipped++;
		if (!w->said_skipped && !w->skip_unsaid)
			w->skip_unsaid = pid;
		return;
	}
	if (w->n_queue == OOM_QUEUE_MAX) {
		w->lost++;
		return;
	}
	w->queue[w->n_queue++] = (struct oom_victim){ .pid = pid, .gen = gen, .when = time(NULL) };
}

void oom_writer__note_new(struct oom_writer *w, const struct model *m)
{
	for (size_t i = 0; w && i < m->n_procs; i++) {
		const struct process *p = &m->procs[i];

		if ((p->flags & PROC_OOM_KILLED) && p->oom_ns == m->now_ns)
			oom_writer__note(w, p->pid, p->gen, m);
	}
}

bool oom_writer__pending(const struct oom_writer *w)
{
	return w && (w->n_queue || w->lost);
}

/*
 * The snapshot files in the directory beyond the caps, oldest first, removed (only names of
 * oom__is_snapshot_name, regular files of leaktop's uid, never through a link).  Returns
 * how many; *newest_gone: the one just written (named newest) was one of them.
 */
static size_t prune(struct oom_writer *w, const char *newest, bool *newest_gone)
{
	struct oom_file *files = NULL;
	size_t n = 0, cap = 0, k, removed = 0;
	struct dirent *de;
	DIR *d = NULL;
	int fd;

	*newest_gone = false;
	if (!w->lim.max_files && !w->lim.max_bytes)
		return 0;
	fd = open(w->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((de = readdir(d)) && n < OOM_SCAN_MAX) {
		struct stat st;

		if (!oom__is_snapshot_name(de->d_name) || strlen(de->d_name) >= sizeof(files->name))
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode) ||
		    st.st_uid != geteuid())
			continue;
		if (VEC_RESERVE(files, cap, n + 1, 64))
			break;
		snprintf(files[n].name, sizeof(files[n].name), "%s", de->d_name);
		files[n].size_bytes = st.st_size;
		files[n].mtime_ns = st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec;
		/* The one just written stays the newest whatever the clock did. */
		if (!strcmp(de->d_name, newest))
			files[n].mtime_ns = INT64_MAX;
		n++;
	}
	k = oom__retention(files, n, w->lim.max_files, w->lim.max_bytes);
	for (size_t i = 0; i < k; i++) {
		if (unlinkat(fd, files[i].name, 0))
			continue;
		removed++;
		if (!strcmp(files[i].name, newest))
			*newest_gone = true;
	}
	/* The removals survive a crash as the new file does. */
	if (removed)
		fsync(fd);
	closedir(d);
	free(files);
	return removed;
}

/* A name nobody can guess, for when the plain one is taken: -XXXXXX before .json. */
static int random_name(char *path, size_t len)
{
	static const char alnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char rnd[6];
	size_t n = strlen(path);

	if (n < 5 || n + 7 >= len || getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		return -ENAMETOOLONG;
	path[n - 5] = '-';
	for (size_t i = 0; i < 6; i++)
		path[n - 4 + i] = alnum[rnd[i] % (sizeof(alnum) - 1)];
	memcpy(path + n + 2, ".json", 6);
	return 0;
}

/* One victim's snapshot: 0, or -errno with the line to say in msg. */
static int write_one(struct oom_writer *w, const struct model *m, const struct oom_victim *v,
		     char *msg, size_t len)
{
	const struct process *p = model__find(m, v->pid, v->gen);
	char path[4200], fail[4400];
	const char *base;
	struct stat st;
	bool gone;
	size_t n;
	int err;

	if (!p)
		return msg__set(msg, len, -ENOENT, "the OOM killer chose process %u but leaktop "
				"holds no record of it; no snapshot written", v->pid);
	if (!oom_rate__allowed(&w->rate, oom__rate_key(p->cgroup), monotonic_s(), w->lim.min_gap_s))
		return 1;
	err = oom__file_name(path, sizeof(path), w->dir, v->pid, v->when);
	/* Something already at the name (planted in a shared directory, say): another name. */
	if (!err && !lstat(path, &st))
		err = random_name(path, sizeof(path));
	if (!err)
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
	oom_rate__take(&w->rate, oom__rate_key(p->cgroup), monotonic_s());
	base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	n = prune(w, base, &gone);
	w->removed += n;
	if (gone)
		return msg__set(msg, len, -EFBIG, "the OOM killer chose process %u (%s): its "
				"snapshot alone is larger than --oom-max-bytes; removed", v->pid,
				p->comm[0] ? p->comm : "?");
	snprintf(msg, len, "the OOM killer chose process %u (%s): its snapshot is %s", v->pid,
		 p->comm[0] ? p->comm : "?", path);
	if (n && !w->said_removed) {
		size_t used = strlen(msg);

		w->said_removed = true;
		snprintf(msg + used, len - used, " (older OOM snapshots removed to stay within "
			 "--oom-max-files %zu, --oom-max-bytes %llu; counted in "
			 "stats.oom_snapshots_removed from now on)", w->lim.max_files,
			 (unsigned long long)w->lim.max_bytes);
	}
	return 0;
}

void oom_writer__write(struct oom_writer *w, const struct model *m, oom_say_fn say, void *ctx)
{
	char msg[4600];

	if (!w)
		return;
	for (size_t i = 0; i < w->n_queue; i++) {
		int ret = write_one(w, m, &w->queue[i], msg, sizeof(msg));

		if (ret == 1) {
			w->skipped++;
			if (!w->said_skipped && !w->skip_unsaid)
				w->skip_unsaid = w->queue[i].pid;
			continue;
		} else if (ret && ret != -EFBIG) {
			double now = monotonic_s();

			w->failed++;
			if (w->failed > 1 && now - w->failed_said_s < OOM_FAILED_SAY_GAP_S) {
				w->failed_unsaid++;
				continue;
			}
			if (w->failed_unsaid) {
				size_t used = strlen(msg);

				snprintf(msg + used, sizeof(msg) - used, " (and %llu more failed "
					 "since the last such line, counted in "
					 "stats.oom_snapshots_failed)",
					 (unsigned long long)w->failed_unsaid);
			}
			w->failed_said_s = now;
			w->failed_unsaid = 0;
		}
		say(ctx, msg);
	}
	w->n_queue = 0;
	if (w->skip_unsaid && !w->said_skipped) {
		w->said_skipped = true;
		snprintf(msg, sizeof(msg), "the OOM killer chose process %u in a cgroup whose "
			 "snapshot was written less than %g s ago (--oom-min-gap): not written; "
			 "such victims are counted in stats.oom_snapshots_skipped from now on",
			 w->skip_unsaid, w->lim.min_gap_s);
		say(ctx, msg);
	}
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

uint64_t oom_writer__skipped(const struct oom_writer *w)
{
	return w ? w->skipped : 0;
}

uint64_t oom_writer__removed(const struct oom_writer *w)
{
	return w ? w->removed : 0;
}
