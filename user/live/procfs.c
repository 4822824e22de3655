// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * procfs.c - reads per-process counters and identity from /proc.
 *
 * rss and vm come from statm (pages), threads from status, the fd count from the entries of
 * /proc/PID/fd.  A process that vanished between two reads gives -ESRCH, never a zero that
 * could be mistaken for a measurement.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "live/procfs.h"
#include "util/vec.h"

long procfs__read_file(const char *path, char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	while (got + 1 < len) {
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			return n == -ENOENT ? -ESRCH : n;
		}
		if (n == 0)
			break;
		got += n;
	}
	close(fd);
	buf[got] = '\0';
	return got;
}

int procfs__parse_statm(const char *text, long page_size, struct proc_counters *c)
{
	unsigned long long size, resident;

	if (sscanf(text, "%llu %llu", &size, &resident) != 2)
		return -EINVAL;
	c->vm_bytes = size * page_size;
	c->rss_bytes = resident * page_size;
	return 0;
}

int procfs__parse_status_threads(const char *text, uint32_t *threads)
{
	const char *p = strstr(text, "\nThreads:");
	unsigned int t;

	if (!p || sscanf(p + 9, "%u", &t) != 1)
		return -EINVAL;
	*threads = t;
	return 0;
}

/* One "Key:   N kB" line of /proc/PID/status, in bytes. */
static int status_kib(const char *text, const char *key, uint64_t *bytes)
{
	const char *p = strstr(text, key);
	unsigned long long kib;

	if (!p || (p != text && p[-1] != '\n') || sscanf(p + strlen(key), "%llu kB", &kib) != 1)
		return -EINVAL;
	*bytes = kib * 1024;
	return 0;
}

int procfs__parse_status_rss(const char *text, struct proc_counters *c)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
		{ "RssAnon:", offsetof(struct proc_counters, rss_anon_bytes) },
		{ "RssFile:", offsetof(struct proc_counters, rss_file_bytes) },
		{ "RssShmem:", offsetof(struct proc_counters, rss_shmem_bytes) },
	};
	uint64_t v[3];

	c->rss_split_valid = false;
	for (size_t i = 0; i < 3; i++)
		if (status_kib(text, keys[i].key, &v[i]))
			return -EINVAL;
	for (size_t i = 0; i < 3; i++)
		memcpy((char *)c + keys[i].off, &v[i], sizeof(v[i]));
	c->rss_split_valid = true;
	return 0;
}

int procfs__parse_stat_starttime(const char *text, uint64_t *ticks)
{
	/* comm may hold spaces and parentheses: fields restart after the last ')'. */
	const char *p = strrchr(text, ')');
	unsigned long long v;
	int field = 2;

	if (!p)
		return -EINVAL;
	p++;
	while (*p && field < 22) {
		if (*p == ' ') {
			field++;
			while (*p == ' ')
				p++;
			continue;
		}
		p++;
	}
	if (field != 22 || sscanf(p, "%llu", &v) != 1)
		return -EINVAL;
	*ticks = v;
	return 0;
}

bool procfs__exists(int pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	return access(path, F_OK) == 0;
}

static int count_fds(int pid, uint32_t *count)
{
	char path[64];
	struct dirent *de;
	uint32_t n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	*count = n;
	return 0;
}

int procfs__counters(int pid, struct proc_counters *c)
{
	char path[64], buf[4096];
	long n;
	int err;

	memset(c, 0, sizeof(*c));
	snprintf(path, sizeof(path), "/proc/%d/statm", pid);
	n = procfs__read_file(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	err = procfs__parse_statm(buf, sysconf(_SC_PAGESIZE), c);
	if (err)
		return err;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	n = procfs__read_file(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	err = procfs__parse_status_threads(buf, &c->threads);
	if (err)
		return err;
	procfs__parse_status_rss(buf, c);	/* kernel threads have none: left unknown */
	err = count_fds(pid, &c->fd_count);
	if (err)
		return err;
	c->valid = true;
	return 0;
}

int procfs__comm(int pid, char *buf, size_t len)
{
	char path[64];
	long n;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	n = procfs__read_file(path, buf, len);
	if (n < 0)
		return n;
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return 0;
}

/* Does the comma-separated list [p, end) hold item? */
static bool list_has(const char *p, const char *end, const char *item)
{
	size_t n = strlen(item);

	while (p < end) {
		const char *comma = memchr(p, ',', end - p), *item_end = comma ? comma : end;

		if ((size_t)(item_end - p) == n && !strncmp(p, item, n))
			return true;
		p = item_end + 1;
	}
	return false;
}

int procfs__parse_cgroup(const char *text, char *path, size_t len)
{
	/* Where each hierarchy's path starts and ends: unified, memory, systemd, any. */
	enum { UNIFIED, MEMORY, SYSTEMD, ANY, N_PICK };
	const char *start[N_PICK] = { NULL }, *stop[N_PICK] = { NULL };
	const char *line = text;

	while (line && *line) {
		const char *end = strchr(line, '\n'), *c1, *c2;
		int k = -1;

		if (!end)
			end = line + strlen(line);
		c1 = memchr(line, ':', end - line);
		c2 = c1 ? memchr(c1 + 1, ':', end - c1 - 1) : NULL;
		if (c2) {
			if (c2 == c1 + 1)
				k = UNIFIED;
			else if (list_has(c1 + 1, c2, "memory"))
				k = MEMORY;
			else if (list_has(c1 + 1, c2, "name=systemd"))
				k = SYSTEMD;
			if (k >= 0 && !start[k]) {
				start[k] = c2 + 1;
				stop[k] = end;
			}
			if (!start[ANY]) {
				start[ANY] = c2 + 1;
				stop[ANY] = end;
			}
		}
		line = *end ? end + 1 : NULL;
	}
	if (!start[ANY])
		return -EINVAL;
	/* The unified root says nothing where the controllers live on v1. */
	if (start[UNIFIED] && stop[UNIFIED] - start[UNIFIED] == 1 && *start[UNIFIED] == '/' &&
	    (start[MEMORY] || start[SYSTEMD]))
		start[UNIFIED] = NULL;
	for (int k = 0; k < N_PICK; k++) {
		if (start[k]) {
			snprintf(path, len, "%.*s", (int)(stop[k] - start[k]), start[k]);
			return 0;
		}
	}
	return -EINVAL;
}

/* Is s (n bytes) all lower-case hex digits? */
static bool all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return n > 0;
}

int procfs__container_id(const char *cgroup_path, char *id, size_t len)
{
	static const char *const prefixes[] = { "docker-", "cri-containerd-", "crio-",
						"libpod-", "" };
	const char *comp = cgroup_path, *found = NULL;

	/* The innermost component that names a container. */
	while (comp && *comp) {
		const char *slash = strchr(comp, '/');
		size_t n = slash ? (size_t)(slash - comp) : strlen(comp);

		for (size_t k = 0; k < sizeof(prefixes) / sizeof(prefixes[0]); k++) {
			size_t pl = strlen(prefixes[k]), body = n - pl;

			if (n < pl + 64 || strncmp(comp, prefixes[k], pl))
				continue;
			if (n > 6 && !strncmp(comp + n - 6, ".scope", 6))
				body -= 6;
			if (body == 64 && all_hex(comp + pl, 64)) {
				found = comp + pl;
				break;
			}
		}
		comp = slash ? slash + 1 : NULL;
	}
	if (!found || len < 13)
		return -ENOENT;
	snprintf(id, len, "%.12s", found);
	return 0;
}

int procfs__cgroup(int pid, char *path, size_t len)
{
	char file[64], buf[4096];
	long n;

	snprintf(file, sizeof(file), "/proc/%d/cgroup", pid);
	n = procfs__read_file(file, buf, sizeof(buf));
	if (n < 0)
		return n;
	return procfs__parse_cgroup(buf, path, len);
}

int procfs__cmdline(int pid, char *buf, size_t len)
{
	char path[64];
	long n;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	n = procfs__read_file(path, buf, len);
	if (n < 0)
		return n;
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	for (long i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	return 0;
}

int procfs__environ_value(int pid, const char *name, char *buf, size_t len)
{
	size_t name_len = strlen(name), cap = 64 * 1024;
	char path[64], *env = malloc(cap);
	long n;
	int err = -ENOENT;

	if (!env)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	n = procfs__read_file(path, env, cap);
	if (n < 0) {
		err = (int)n;
		goto out;
	}
	/* NUL-separated NAME=VALUE strings; a cut last one (past 64 KiB) is not trusted. */
	for (long i = 0; i < n; i += (long)strlen(env + i) + 1) {
		const char *e = env + i;

		if (i + (long)strlen(e) >= n)
			break;
		if (strncmp(e, name, name_len) || e[name_len] != '=')
			continue;
		snprintf(buf, len, "%s", e + name_len + 1);
		err = 0;
		break;
	}
out:
	free(env);
	return err;
}

/* /proc/PID/stat into buf (len bytes); its length or -errno. */
static long read_stat(int pid, char *buf, size_t len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	return procfs__read_file(path, buf, len);
}

int procfs__start_ticks(int pid, uint64_t *ticks)
{
	char buf[1024];
	long n = read_stat(pid, buf, sizeof(buf));

	return n < 0 ? (int)n : procfs__parse_stat_starttime(buf, ticks);
}

int procfs__parse_stat_ppid(const char *text, int *ppid)
{
	/* comm may hold spaces and parentheses: ") STATE PPID" follows the last ')'. */
	const char *p = strrchr(text, ')');

	if (!p || sscanf(p + 1, " %*c %d", ppid) != 1)
		return -EINVAL;
	return 0;
}

int procfs__ppid(int pid, int *ppid)
{
	char buf[1024];
	long n = read_stat(pid, buf, sizeof(buf));

	return n < 0 ? (int)n : procfs__parse_stat_ppid(buf, ppid);
}

int procfs__tgid(int tid, int *tgid)
{
	char path[64], buf[4096], *p;
	long n;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	n = procfs__read_file(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	p = strstr(buf, "\nTgid:");
	if (!p || sscanf(p + 6, "%d", tgid) != 1)
		return -EINVAL;
	return 0;
}

int procfs__uid(int pid, uint32_t *uid)
{
	char path[64], buf[4096], *p;
	unsigned int v;
	long n;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	n = procfs__read_file(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	p = strstr(buf, "\nUid:");
	if (!p || sscanf(p + 5, "%u", &v) != 1)
		return -EINVAL;
	*uid = v;
	return 0;
}

/* Is thread tid of pid alive (its state not Z or X)? */
static bool thread_live(int pid, int tid)
{
	char path[96], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	if (procfs__read_file(path, buf, sizeof(buf)) < 0)
		return false;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] && p[2] != 'Z' && p[2] != 'X';
}

int procfs__live_thread(int pid, int prefer)
{
	char path[64];
	struct dirent *de;
	int tid = -ESRCH;
	DIR *d;

	if (prefer > 0 && thread_live(pid, prefer))
		return prefer;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((de = readdir(d)) && tid < 0) {
		int t = atoi(de->d_name);

		if (t > 0 && thread_live(pid, t))
			tid = t;
	}
	closedir(d);
	return tid;
}

int procfs__list_pids(int **pids, size_t *n)
{
	size_t cap = 256, cnt = 0;
	int *v = malloc(cap * sizeof(*v)), err = 0;
	struct dirent *de;
	DIR *d;

	if (!v)
		return -ENOMEM;
	d = opendir("/proc");
	if (!d) {
		err = -errno;
		goto out;
	}
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if (VEC_RESERVE(v, cap, cnt + 1, 0)) {
			err = -ENOMEM;
			goto out;
		}
		v[cnt++] = atoi(de->d_name);
	}
out:
	if (d)
		closedir(d);
	if (err) {
		free(v);
		return err;
	}
	*pids = v;
	*n = cnt;
	return 0;
}

int procfs__parse_cpu_busy_ticks(const char *stat, uint64_t *busy_ticks)
{
	unsigned long long user, nice, system, idle, iowait, irq, softirq, steal = 0;

	if (strncmp(stat, "cpu ", 4) ||
	    sscanf(stat + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &system,
		   &idle, &iowait, &irq, &softirq, &steal) < 7)
		return -EINVAL;
	*busy_ticks = user + nice + system + irq + softirq + steal;
	return 0;
}

int procfs__cpu_busy_ns(uint64_t *busy_ns)
{
	char buf[512];
	uint64_t ticks;
	long hz = sysconf(_SC_CLK_TCK);
	int err;

	if (procfs__read_file("/proc/stat", buf, sizeof(buf)) < 0)
		return -EIO;
	err = procfs__parse_cpu_busy_ticks(buf, &ticks);
	if (err)
		return err;
	*busy_ns = ticks * (1000000000ULL / (hz > 0 ? hz : 100));
	return 0;
}
