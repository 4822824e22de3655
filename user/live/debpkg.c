// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * debpkg.c - asks dpkg which installed package owns a module's file (`dpkg-query -S PATH`)
 * and which source package that was built from (`dpkg-query -W`), each a child process run
 * with posix_spawn: execve of a fixed program, no shell, a fixed environment, stdin and
 * stderr /dev/null, every other descriptor closed, default signals, its own process group
 * (the terminal's Ctrl-C is leaktop's).  Its stdout is a non-blocking pipe read at each
 * step; a child still running after DEBPKG_TIMEOUT_NS is killed.  The path comes from a
 * traced process: it is asked about only when it names here the very file that process
 * mapped, and only as a literal path (dpkg takes names with *?[\ as patterns: refused).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "live/debpkg.h"
#include "util/clock.h"

#define DPKG_QUERY		"/usr/bin/dpkg-query"
#define DEBPKG_TIMEOUT_NS	(10ULL * 1000000000ULL)
#define DEBPKG_MAX_RUNNING	2

enum stage {
	STAGE_WAITING,		/* -S not started: too many children run */
	STAGE_SEARCH,		/* dpkg-query -S runs */
	STAGE_SOURCE,		/* dpkg-query -W runs */
	STAGE_DONE,
};

const char *debpkg__native_arch(void)
{
#if defined(__x86_64__)
	return "amd64";
#elif defined(__aarch64__)
	return "arm64";
#elif defined(__i386__)
	return "i386";
#else
	return NULL;
#endif
}

/* A path dpkg takes literally: absolute, clean, no pattern or control characters. */
static bool askable_path(const char *p)
{
	const char *c;

	if (p[0] != '/' || strlen(p) >= PATH_MAX - 8)
		return false;
	for (c = p; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f || strchr("*?[\\", *c))
			return false;
	for (c = p; (c = strstr(c, "/.")); c++)
		if (c[2] == '/' || !c[2] || (c[2] == '.' && (c[3] == '/' || !c[3])))
			return false;
	return true;
}

/* A package name as dpkg prints it: [a-z0-9+.-], maybe ":arch". */
static bool package_name(const char *s, size_t len)
{
	if (!len || len >= DEBPKG_NAME_LEN)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		      strchr("+.-:", s[i])))
			return false;
	return true;
}

/*
 * Debian 12 merged /usr, but dpkg still lists most files under /lib, /bin, /sbin: the
 * kernel shows /usr/lib/x86_64-linux-gnu/libc.so.6 for what dpkg knows as
 * /lib/x86_64-linux-gnu/libc.so.6.  The other name of path, or "".
 */
static void merged_usr_alias(const char *path, char *alias, size_t size)
{
	static const char *const dirs[] = { "bin/", "sbin/", "lib/", "lib32/", "lib64/",
					    "libx32/" };

	alias[0] = '\0';
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		size_t len = strlen(dirs[i]);

		if (!strncmp(path, "/usr/", 5) && !strncmp(path + 5, dirs[i], len))
			snprintf(alias, size, "%s", path + 4);
		else if (path[0] == '/' && !strncmp(path + 1, dirs[i], len))
			snprintf(alias, size, "/usr%s", path);
	}
}

static void finish(struct debpkg_query *q, enum sym_pkg_lookup lookup)
{
	q->lookup = lookup;
	q->stage = STAGE_DONE;
}

void debpkg__init(struct debpkg_query *q, const char *path, uint64_t dev, uint64_t ino)
{
	struct stat st;

	memset(q, 0, sizeof(*q));
	q->fd = -1;
	q->stage = STAGE_WAITING;
	if (!path || !askable_path(path) || access(DPKG_QUERY, X_OK) ||
	    stat(path, &st) || !S_ISREG(st.st_mode) || st.st_dev != dev || st.st_ino != ino) {
		finish(q, SYM_PKG_UNKNOWN);
		return;
	}
	snprintf(q->path, sizeof(q->path), "%s", path);
	merged_usr_alias(path, q->alias, sizeof(q->alias));
}

/* Run dpkg-query with argv; its stdout is q->fd.  0 or -errno. */
static int spawn(struct debpkg_query *q, char *const argv[], uint64_t now_ns)
{
	static char *const envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, all;
	int p[2], err;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	if (fcntl(p[0], F_SETFL, O_NONBLOCK)) {
		err = -errno;
		close(p[0]);
		close(p[1]);
		return err;
	}
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addclosefrom_np(&fa, STDERR_FILENO + 1);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setpgroup(&attr, 0);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
					POSIX_SPAWN_SETPGROUP);
	err = -posix_spawn(&q->pid, DPKG_QUERY, &fa, &attr, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(p[1]);
	if (err) {
		close(p[0]);
		q->pid = 0;
		return err;
	}
	q->fd = p[0];
	q->n_out = 0;
	q->eof = false;
	q->deadline_ns = now_ns + DEBPKG_TIMEOUT_NS;
	return 0;
}

static int start_search(struct debpkg_query *q, uint64_t now_ns)
{
	char *argv[] = { "dpkg-query", "-S", "--", q->path, q->alias[0] ? q->alias : NULL,
			 NULL };

	return spawn(q, argv, now_ns);
}

static int start_source(struct debpkg_query *q, uint64_t now_ns)
{
	char *argv[] = { "dpkg-query", "-W", "-f=${Package}\t${source:Package}\t${Architecture}\n",
			 "--", q->package, NULL };

	return spawn(q, argv, now_ns);
}

/* Read what the child wrote; then reap it.  true once it has ended (status in q). */
static bool collect(struct debpkg_query *q, uint64_t now_ns)
{
	char buf[1024];
	ssize_t n;
	int status;

	while (!q->eof) {
		n = read(q->fd, buf, sizeof(buf));
		if (n > 0) {
			size_t keep = sizeof(q->out) - 1 - q->n_out;

			keep = (size_t)n < keep ? (size_t)n : keep;
			memcpy(q->out + q->n_out, buf, keep);
			q->n_out += keep;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		q->eof = true;
	}
	q->out[q->n_out] = '\0';
	if (now_ns >= q->deadline_ns) {
		kill(q->pid, SIGKILL);
		waitpid(q->pid, &status, 0);
		q->status = -1;
		goto ended;
	}
	if (!q->eof || waitpid(q->pid, &status, WNOHANG) != q->pid)
		return false;
	q->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
ended:
	close(q->fd);
	q->fd = -1;
	q->pid = 0;
	return true;
}

/* "libc6:amd64, libc6-dev:amd64: /lib/x86_64-linux-gnu/libc.so.6": the first owner of ours. */
static bool parse_search(struct debpkg_query *q)
{
	char *line, *save = NULL;

	for (line = strtok_r(q->out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sep = strstr(line, ": ");
		size_t len;

		if (!sep || !strncmp(line, "diversion ", 10))
			continue;
		if (strcmp(sep + 2, q->path) && (!q->alias[0] || strcmp(sep + 2, q->alias)))
			continue;
		len = strcspn(line, ",:");
		if (line[len] == ':' && line + len != sep)	/* "pkg:arch" */
			len += strcspn(line + len + 1, ",:") + 1;
		if (!package_name(line, len))
			continue;
		memcpy(q->package, line, len);
		q->package[len] = '\0';
		return true;
	}
	return false;
}

/* "libc6\tglibc\tamd64". */
static void parse_source(struct debpkg_query *q)
{
	char *src = strchr(q->out, '\t'), *arch;
	size_t len;

	if (!src)
		return;
	src++;
	len = strcspn(src, "\t\n");
	if (package_name(src, len)) {
		memcpy(q->source, src, len);
		q->source[len] = '\0';
	}
	arch = src[len] == '\t' ? src + len + 1 : NULL;
	len = arch ? strcspn(arch, "\t\n") : 0;
	if (arch && len < sizeof(q->arch) && package_name(arch, len)) {
		memcpy(q->arch, arch, len);
		q->arch[len] = '\0';
	}
}

bool debpkg__step(struct debpkg_query *q, uint64_t now_ns, unsigned int *running)
{
	switch (q->stage) {
	case STAGE_WAITING:
		if (*running >= DEBPKG_MAX_RUNNING)
			return false;
		if (start_search(q, now_ns)) {
			finish(q, SYM_PKG_UNKNOWN);
			return true;
		}
		(*running)++;
		q->stage = STAGE_SEARCH;
		return false;
	case STAGE_SEARCH:
		if (!collect(q, now_ns))
			return false;
		(*running)--;
		/* 0: every name found; 1: some not found; anything else: no answer. */
		if (q->status == 0 || q->status == 1) {
			if (!parse_search(q)) {
				finish(q, q->status == 1 ? SYM_PKG_NOT_OWNED : SYM_PKG_UNKNOWN);
				return true;
			}
		} else {
			finish(q, SYM_PKG_UNKNOWN);
			return true;
		}
		q->lookup = SYM_PKG_OWNED;
		if (start_source(q, now_ns)) {
			q->stage = STAGE_DONE;		/* owned, source unknown */
			return true;
		}
		(*running)++;
		q->stage = STAGE_SOURCE;
		return false;
	case STAGE_SOURCE:
		if (!collect(q, now_ns))
			return false;
		(*running)--;
		if (q->status == 0)
			parse_source(q);
		q->stage = STAGE_DONE;
		return true;
	default:
		return true;
	}
}

void debpkg__wait(struct debpkg_query *const *q, size_t n, uint64_t deadline_ns)
{
	struct pollfd fds[16];
	nfds_t nfds = 0;
	uint64_t now = monotonic_ns();

	for (size_t i = 0; i < n && nfds < 16; i++)
		if (q[i]->fd >= 0 && !q[i]->eof)
			fds[nfds++] = (struct pollfd){ .fd = q[i]->fd, .events = POLLIN };
	if (deadline_ns <= now)
		return;
	if (!nfds) {
		/* Children that closed their output and are still exiting: a short nap. */
		struct timespec ts = { .tv_nsec = 2 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		return;
	}
	poll(fds, nfds, (int)((deadline_ns - now + 999999) / 1000000));
}

void debpkg__cancel(struct debpkg_query *q)
{
	int status;

	if (q->pid > 0) {
		kill(q->pid, SIGKILL);
		waitpid(q->pid, &status, 0);
	}
	if (q->fd >= 0)
		close(q->fd);
	q->fd = -1;
	q->pid = 0;
	if (q->stage != STAGE_DONE)
		finish(q, SYM_PKG_UNKNOWN);
}
