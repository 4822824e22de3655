// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * debpkg.c - reads dpkg's database inside leaktop to say which installed package owns a
 * module's file and which source package that was built from (what `dpkg-query -S PATH` and
 * `dpkg-query -W -f '${source:Package}'` say).  No child process: in whole-system mode every
 * allocator call of a dpkg-query child (tens of thousands, reading this same database) would
 * trap in leaktop's own probes, while leaktop's own allocator never does.
 *
 * Owner: a pass over the file lists (ADMINDIR/info/PACKAGE[:ARCH].list, one installed path a
 * line), in name order, compares each line with the path of every question in flight and its
 * other name under merged /usr (a bit filter on each line's length and last bytes dismisses
 * most lines at once); the first list that has it names the owner.  A question that joins a
 * pass midway goes on into the next pass up to where it joined; one that has seen every list
 * without a match is not owned.  Source: a pass over ADMINDIR/status, joined the same way
 * (up to the stanza it joined at), finds the owner's stanza (Package, and Architecture for a
 * "name:arch" owner), an installed one at once, else the best at the end.  A database that
 * changes under a pass (a package installed) may be read partly old, partly new.
 *
 * Reading goes in units (open the directory, read 256 of its entries, open a file, read
 * 64 KiB of it), about 2 ms of them a step, after which the reader rests four times as long
 * as it worked (a fifth of a CPU at most; debpkg__wait does not rest).  Files are opened
 * O_NOFOLLOW | O_NONBLOCK, must be regular and are read up to a bound (16 MiB a list, 64 MiB
 * the status); no database is no answer.  The path comes from a traced process: it is asked
 * about only when it names here the very file that process mapped, never with control
 * characters.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "live/debpkg.h"
#include "util/clock.h"
#include "util/vec.h"

#define DEBPKG_ADMINDIR		"/var/lib/dpkg"
#define DEBPKG_CHUNK		(64 * 1024)
#define DEBPKG_LIST_MAX		(16ULL << 20)
#define DEBPKG_STATUS_MAX	(64ULL << 20)
#define DEBPKG_LISTS_MAX	(256 * 1024)	/* file lists a pass reads at most */
#define DEBPKG_LIST_ENTRIES	256		/* directory entries a unit reads */
#define DEBPKG_STEP_NS		(2ULL * 1000000ULL)
#define DEBPKG_REST		4		/* a step rests this many times its work */
#define DEBPKG_WAIT_NS		(20ULL * 1000000ULL)
#define DEBPKG_FILTER_BITS	4096

enum stage {
	STAGE_NEW,		/* not in a db yet */
	STAGE_OWNER,		/* in db->owners: its path is looked for in the file lists */
	STAGE_SOURCE,		/* in db->sources: owned, its stanza is looked for in status */
	STAGE_DONE,
};

/* How much of the pass under way a question has seen. */
enum join {
	JOIN_NEXT,		/* waits for the next pass to begin */
	JOIN_WHOLE,		/* was there when it began */
	JOIN_MIDWAY,		/* joined it at file list `from` (stanza from_stanza) */
	JOIN_WRAPPED,		/* that pass ended: sees this one up to where it joined */
};

/* One file read a chunk at a time. */
struct reading {
	int fd;
	uint64_t left;		/* bytes it may still read */
	struct dpkgdb_lines lines;
};

struct debpkg_db {
	char *admindir;
	struct debpkg_query *owners, *sources;
	/* The pass over the file lists: their names in order, the next to open. */
	DIR *info;		/* NULL: no pass under way */
	bool listing;		/* their names are still being read */
	char **names;
	size_t n_names, cap_names, next;
	char list_pkg[DPKGDB_NAME_LEN];	/* the package of the list being read */
	struct reading list;
	uint64_t wanted[DEBPKG_FILTER_BITS / 64];	/* line_key()s of the owners' names */
	/* The pass over the status file. */
	struct reading status;
	struct dpkgdb_stanza stanza;
	size_t stanza_no;		/* the stanza being read, from 0 */
	uint64_t rest_until_ns;
	char chunk[DEBPKG_CHUNK];
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

/* A path a file list may hold: absolute, clean, no control characters. */
static bool askable_path(const char *p)
{
	const char *c;

	if (p[0] != '/' || strlen(p) >= PATH_MAX - 8)
		return false;
	for (c = p; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return false;
	for (c = p; (c = strstr(c, "/.")); c++)
		if (c[2] == '/' || !c[2] || (c[2] == '.' && (c[3] == '/' || !c[3])))
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

static void unlink_query(struct debpkg_query **list, struct debpkg_query *q)
{
	for (; *list; list = &(*list)->next) {
		if (*list == q) {
			*list = q->next;
			break;
		}
	}
	q->next = NULL;
}

/* q leaves its db's lists with this answer. */
static void finish(struct debpkg_query *q, enum sym_pkg_lookup lookup)
{
	if (q->db && q->stage == STAGE_OWNER)
		unlink_query(&q->db->owners, q);
	else if (q->db && q->stage == STAGE_SOURCE)
		unlink_query(&q->db->sources, q);
	q->lookup = lookup;
	q->stage = STAGE_DONE;
	q->db = NULL;
}

void debpkg__init(struct debpkg_query *q, const char *path, uint64_t dev, uint64_t ino)
{
	struct stat st;

	memset(q, 0, sizeof(*q));
	q->stage = STAGE_NEW;
	if (!path || !askable_path(path) || stat(path, &st) || !S_ISREG(st.st_mode) ||
	    st.st_dev != dev || st.st_ino != ino) {
		finish(q, SYM_PKG_UNKNOWN);
		return;
	}
	snprintf(q->path, sizeof(q->path), "%s", path);
	merged_usr_alias(path, q->alias, sizeof(q->alias));
	q->path_len = strlen(q->path);
	q->alias_len = strlen(q->alias);
}

int debpkg_db__new(struct debpkg_db **out, const char *admindir)
{
	struct debpkg_db *db = calloc(1, sizeof(*db));

	if (!db || !(db->admindir = strdup(admindir ? admindir : DEBPKG_ADMINDIR))) {
		free(db);
		return -ENOMEM;
	}
	db->list.fd = db->status.fd = -1;
	*out = db;
	return 0;
}

static void reading_close(struct reading *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	dpkgdb_lines__reset(&r->lines);
}

/* Open file name under dirfd for reading, at most max bytes.  0 or -errno. */
static int reading_open(struct reading *r, int dirfd, const char *name, uint64_t max)
{
	struct stat st;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
		close(fd);
		return -EINVAL;
	}
	r->fd = fd;
	r->left = max;
	dpkgdb_lines__reset(&r->lines);
	return 0;
}

/* The next chunk of r into buf: its length, 0 at its end (or an error), -EINTR: again. */
static ssize_t reading_chunk(struct reading *r, char *buf, size_t size)
{
	size_t want = r->left < size ? (size_t)r->left : size;
	ssize_t n;

	if (!want)
		return 0;
	n = read(r->fd, buf, want);
	if (n < 0)
		return errno == EINTR ? -EINTR : 0;
	r->left -= (uint64_t)n;
	return n;
}

static void free_names(struct debpkg_db *db)
{
	for (size_t i = 0; i < db->n_names; i++)
		free(db->names[i]);
	free(db->names);
	db->names = NULL;
	db->n_names = db->cap_names = db->next = 0;
}

/* The pass over the file lists stops (no question left, or it ended). */
static void list_pass_drop(struct debpkg_db *db)
{
	reading_close(&db->list);
	free_names(db);
	if (db->info)
		closedir(db->info);
	db->info = NULL;
	db->listing = false;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every question looking for an owner is answered: the database cannot be read. */
static void owners_unknown(struct debpkg_db *db)
{
	while (db->owners)
		finish(db->owners, SYM_PKG_UNKNOWN);
}

/* A pass over the file lists begins: their directory is opened. */
static void list_pass_begin(struct debpkg_db *db)
{
	char dir[PATH_MAX];
	int fd;

	snprintf(dir, sizeof(dir), "%s/info", db->admindir);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || !(db->info = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		owners_unknown(db);
		return;
	}
	db->listing = true;
}

/* A unit of listing the file lists; once all are, they are put in name order. */
static void list_names(struct debpkg_db *db)
{
	char pkg[DPKGDB_NAME_LEN];
	struct dirent *de = NULL;
	unsigned int seen = 0;

	while (seen++ < DEBPKG_LIST_ENTRIES && (de = readdir(db->info))) {
		if (dpkgdb__list_package(de->d_name, pkg, sizeof(pkg)))
			continue;
		if (db->n_names == DEBPKG_LISTS_MAX)
			break;
		if (VEC_RESERVE(db->names, db->cap_names, db->n_names + 1, 1024))
			goto nomem;
		if (!(db->names[db->n_names] = strdup(de->d_name)))
			goto nomem;
		db->n_names++;
	}
	if (de && db->n_names < DEBPKG_LISTS_MAX)
		return;
	db->listing = false;
	if (db->n_names)
		qsort(db->names, db->n_names, sizeof(*db->names), cmp_names);
	for (struct debpkg_query *q = db->owners; q; q = q->next)
		if (q->join == JOIN_NEXT)
			q->join = JOIN_WHOLE;
	return;
nomem:
	list_pass_drop(db);
	owners_unknown(db);
}

/* The pass has read every file list: who saw them all is not owned. */
static void list_pass_end(struct debpkg_db *db)
{
	struct debpkg_query *q, *next;

	for (q = db->owners; q; q = next) {
		next = q->next;
		if (q->join == JOIN_WHOLE || q->join == JOIN_WRAPPED)
			finish(q, SYM_PKG_NOT_OWNED);
		else if (q->join == JOIN_MIDWAY)
			q->join = JOIN_WRAPPED;
	}
	list_pass_drop(db);
}

/* Questions back where they joined, at file list `name`, have seen every list. */
static void list_reached(struct debpkg_db *db, const char *name)
{
	struct debpkg_query *q, *next;

	for (q = db->owners; q; q = next) {
		next = q->next;
		if (q->join == JOIN_WRAPPED && strcmp(name, q->from) >= 0)
			finish(q, SYM_PKG_NOT_OWNED);
	}
}

/* q owns its path: it goes on to look for its source package. */
static void owned(struct debpkg_query *q, const char *pkg)
{
	struct debpkg_db *db = q->db;

	unlink_query(&db->owners, q);
	snprintf(q->package, sizeof(q->package), "%s", pkg);
	q->lookup = SYM_PKG_OWNED;
	q->stage = STAGE_SOURCE;
	q->join = db->status.fd >= 0 ? JOIN_MIDWAY : JOIN_NEXT;
	q->from_stanza = db->stanza_no;
	q->rank = DPKGDB_NO_MATCH;
	q->next = db->sources;
	db->sources = q;
}

/*
 * A line's bit in db->wanted: its length and last 8 bytes, mixed.  Most lines of a list are
 * dismissed by it, whatever the number of questions; a line whose bit is set is compared.
 */
static unsigned int line_key(const char *line, size_t len)
{
	size_t n = len < 8 ? len : 8;
	uint64_t tail = 0;

	memcpy(&tail, line + len - n, n);
	return (unsigned int)(((tail ^ len) * 0x9e3779b97f4a7c15ULL) >> 52) % DEBPKG_FILTER_BITS;
}

static void want(struct debpkg_db *db, const char *name, size_t len)
{
	unsigned int k = line_key(name, len);

	db->wanted[k / 64] |= 1ULL << (k % 64);
}

/* db->wanted for the questions looking for an owner now. */
static void list_wanted(struct debpkg_db *db)
{
	memset(db->wanted, 0, sizeof(db->wanted));
	for (struct debpkg_query *q = db->owners; q; q = q->next) {
		want(db, q->path, q->path_len);
		if (q->alias_len)
			want(db, q->alias, q->alias_len);
	}
}

static void list_line(struct debpkg_db *db, const char *line, size_t len)
{
	struct debpkg_query *q, *next;
	unsigned int k = line_key(line, len);

	if (!(db->wanted[k / 64] & (1ULL << (k % 64))))
		return;
	for (q = db->owners; q; q = next) {
		next = q->next;
		if ((len == q->path_len || len == q->alias_len) &&
		    dpkgdb__list_line_is(line, len, q->path, q->alias))
			owned(q, db->list_pkg);
	}
}

/* One unit of the pass over the file lists. */
static void list_work(struct debpkg_db *db)
{
	const char *line;
	size_t len, pos = 0;
	ssize_t n;

	if (!db->info) {
		list_pass_begin(db);
		return;
	}
	if (db->listing) {
		list_names(db);
		return;
	}
	if (db->list.fd < 0) {
		const char *name;

		if (db->next == db->n_names) {
			list_pass_end(db);
			return;
		}
		name = db->names[db->next++];
		list_reached(db, name);
		if (dpkgdb__list_package(name, db->list_pkg, sizeof(db->list_pkg)) ||
		    reading_open(&db->list, dirfd(db->info), name, DEBPKG_LIST_MAX))
			db->list.fd = -1;	/* gone since, or not a file: skipped */
		return;
	}
	n = reading_chunk(&db->list, db->chunk, sizeof(db->chunk));
	if (n == -EINTR)
		return;
	list_wanted(db);
	while (n > 0 && db->owners &&
	       dpkgdb_lines__next(&db->list.lines, db->chunk, (size_t)n, &pos, &line, &len))
		list_line(db, line, len);
	if (n > 0 && db->owners)
		return;
	if (dpkgdb_lines__end(&db->list.lines, &line, &len))
		list_line(db, line, len);
	reading_close(&db->list);
}

/*
 * The stanza just read answers the questions it matches (an installed one at once); those
 * back where they joined have seen every stanza (the best of them is their answer).
 */
static void stanza_read(struct debpkg_db *db)
{
	const struct dpkgdb_stanza *s = &db->stanza;
	struct debpkg_query *q, *next;

	for (q = db->sources; q; q = next) {
		enum dpkgdb_rank rank;

		next = q->next;
		if (q->join == JOIN_WRAPPED && db->stanza_no >= q->from_stanza) {
			finish(q, SYM_PKG_OWNED);
			continue;
		}
		rank = dpkgdb_stanza__rank(s, q->package);
		if (rank <= q->rank)
			continue;
		q->rank = rank;
		snprintf(q->source, sizeof(q->source), "%s", dpkgdb_stanza__source(s));
		snprintf(q->arch, sizeof(q->arch), "%s", s->arch);
		if (rank == DPKGDB_INSTALLED)
			finish(q, SYM_PKG_OWNED);
	}
	db->stanza_no++;
}

/* Every question of the pass that ended has its answer: the best stanza, or no source. */
static void status_pass_end(struct debpkg_db *db, bool all)
{
	struct debpkg_query *q, *next;

	for (q = db->sources; q; q = next) {
		next = q->next;
		if (all || q->join == JOIN_WHOLE || q->join == JOIN_WRAPPED)
			finish(q, SYM_PKG_OWNED);
		else if (q->join == JOIN_MIDWAY)
			q->join = JOIN_WRAPPED;
	}
	reading_close(&db->status);
}

static void status_line(struct debpkg_db *db, const char *line, size_t len)
{
	if (dpkgdb_stanza__line(&db->stanza, line, len)) {
		stanza_read(db);
		dpkgdb_stanza__reset(&db->stanza);
	}
}

/* One unit of the pass over the status file. */
static void status_work(struct debpkg_db *db)
{
	const char *line;
	size_t len, pos = 0;
	ssize_t n;

	if (db->status.fd < 0) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/status", db->admindir);
		if (reading_open(&db->status, AT_FDCWD, path, DEBPKG_STATUS_MAX)) {
			status_pass_end(db, true);	/* owned, source unknown */
			return;
		}
		dpkgdb_stanza__reset(&db->stanza);
		db->stanza_no = 0;
		for (struct debpkg_query *q = db->sources; q; q = q->next)
			if (q->join == JOIN_NEXT)
				q->join = JOIN_WHOLE;
		return;
	}
	n = reading_chunk(&db->status, db->chunk, sizeof(db->chunk));
	if (n == -EINTR)
		return;
	while (n > 0 && dpkgdb_lines__next(&db->status.lines, db->chunk, (size_t)n, &pos, &line,
					   &len))
		status_line(db, line, len);
	if (n > 0)
		return;
	if (dpkgdb_lines__end(&db->status.lines, &line, &len))
		status_line(db, line, len);
	status_line(db, "", 0);			/* the end of the file ends a stanza */
	status_pass_end(db, false);
}

/* Read in units until until_ns or until no question is left. */
static void work(struct debpkg_db *db, uint64_t until_ns)
{
	do {
		if (db->sources)
			status_work(db);
		if (db->owners)
			list_work(db);
	} while ((db->owners || db->sources) && monotonic_ns() < until_ns);
	if (!db->owners && db->info)
		list_pass_drop(db);
	if (!db->sources && db->status.fd >= 0)
		reading_close(&db->status);
}

void debpkg__join(struct debpkg_query *q, struct debpkg_db *db)
{
	if (q->stage != STAGE_NEW)
		return;
	if (!db) {
		finish(q, SYM_PKG_UNKNOWN);
		return;
	}
	q->db = db;
	q->stage = STAGE_OWNER;
	q->join = JOIN_NEXT;
	if (db->info && !db->next) {
		q->join = JOIN_WHOLE;		/* no list opened yet */
	} else if (db->info && db->next < db->n_names) {
		q->join = JOIN_MIDWAY;
		snprintf(q->from, sizeof(q->from), "%s", db->names[db->next]);
	}
	q->next = db->owners;
	db->owners = q;
}

bool debpkg__step(struct debpkg_query *q, uint64_t now_ns, struct debpkg_db *db)
{
	uint64_t start, end;

	debpkg__join(q, db);
	db = q->db;
	if (q->stage == STAGE_DONE || now_ns < db->rest_until_ns)
		return q->stage == STAGE_DONE;
	start = monotonic_ns();
	work(db, start + DEBPKG_STEP_NS);
	end = monotonic_ns();
	db->rest_until_ns = end + DEBPKG_REST * (end - start);
	return q->stage == STAGE_DONE;
}

void debpkg_db__read(struct debpkg_db *db, unsigned int rounds)
{
	while (rounds-- && (db->owners || db->sources))
		work(db, 0);
}

void debpkg__wait(struct debpkg_query *const *q, size_t n, uint64_t deadline_ns)
{
	uint64_t now = monotonic_ns();
	struct debpkg_db *db = NULL;

	for (size_t i = 0; i < n && !db; i++)
		if (q[i]->stage != STAGE_DONE)
			db = q[i]->db;
	if (!db || deadline_ns <= now)
		return;
	work(db, deadline_ns < now + DEBPKG_WAIT_NS ? deadline_ns : now + DEBPKG_WAIT_NS);
}

void debpkg__cancel(struct debpkg_query *q)
{
	if (q->stage != STAGE_DONE)
		finish(q, SYM_PKG_UNKNOWN);
}

void debpkg_db__free(struct debpkg_db *db)
{
	if (!db)
		return;
	owners_unknown(db);
	while (db->sources)
		finish(db->sources, SYM_PKG_UNKNOWN);
	list_pass_drop(db);
	reading_close(&db->status);
	free(db->admindir);
	free(db);
}
