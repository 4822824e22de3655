/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * debpkg.h - which installed Debian package owns a file, and its source package, read from
 * dpkg's database (/var/lib/dpkg: the file lists info/PACKAGE.list, and status) inside leaktop
 * without blocking the run loop: no dpkg-query child, whose allocator calls would trap in
 * leaktop's own probes in whole-system mode.  One pass over the database, a bounded slice of
 * work at a time, answers every question in flight.  Only a file that is here what the traced
 * process mapped (same device and inode) is asked about.
 */
#ifndef LEAKTOP_DEBPKG_H
#define LEAKTOP_DEBPKG_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/dpkgdb.h"
#include "core/symhint.h"

#define DEBPKG_NAME_LEN DPKGDB_NAME_LEN

/* dpkg's database being read for the questions in flight, which it links. */
struct debpkg_db;

struct debpkg_query {
	/* The answer, once debpkg__step() returned true. */
	enum sym_pkg_lookup lookup;
	char package[DEBPKG_NAME_LEN];	/* dpkg's name ("libc6:amd64"); "" unless owned */
	char source[DEBPKG_NAME_LEN];	/* "" when unknown */
	char arch[DPKGDB_ARCH_LEN];	/* "" when unknown */
	/* Private. */
	char path[PATH_MAX];
	char alias[PATH_MAX];		/* its other name under merged /usr, or "" */
	size_t path_len, alias_len;
	int stage;
	int join;			/* how much of the pass it is in it has seen */
	char from[NAME_MAX + 1];	/* the file list it joined a pass at */
	size_t from_stanza;		/* the status stanza it joined a pass at */
	enum dpkgdb_rank rank;		/* the best status stanza so far */
	struct debpkg_db *db;
	struct debpkg_query *next;	/* in db's list */
};

/* A reader of the database under admindir (NULL: /var/lib/dpkg).  0 or -ENOMEM. */
int debpkg_db__new(struct debpkg_db **out, const char *admindir);
/* Free db; questions still linked to it are given up first (SYM_PKG_UNKNOWN). */
void debpkg_db__free(struct debpkg_db *db);

/*
 * Start asking about `path` (a file whose identity is dev, ino).  A path that cannot be
 * asked about (not here, another file here, control characters) is answered at once:
 * SYM_PKG_UNKNOWN.
 */
void debpkg__init(struct debpkg_query *q, const char *path, uint64_t dev, uint64_t ino);
/*
 * Move the question on without blocking: it joins db's pass at its first step; a step does
 * at most about 2 ms of reading for every question in db, and none while db rests (four
 * times what it last worked: a fifth of a CPU at most).  True once answered; a system
 * without dpkg's database answers SYM_PKG_UNKNOWN.
 */
bool debpkg__step(struct debpkg_query *q, uint64_t now_ns, struct debpkg_db *db);
/*
 * Read for the questions q (stepped once already) without resting, for a slice of at most
 * 20 ms and not past deadline_ns; the answers are then taken with debpkg__step().
 */
void debpkg__wait(struct debpkg_query *const *q, size_t n, uint64_t deadline_ns);
/*
 * For tests: q joins db without reading; db reads `rounds` times a unit of each of its passes
 * under way (the file lists' and the status file's; a unit lists the lists, opens a file or
 * reads a chunk of it).
 */
void debpkg__join(struct debpkg_query *q, struct debpkg_db *db);
void debpkg_db__read(struct debpkg_db *db, unsigned int rounds);
/* Give the question up (SYM_PKG_UNKNOWN unless answered): it leaves its db. */
void debpkg__cancel(struct debpkg_query *q);
/* This build's Debian architecture ("amd64"), NULL when not known. */
const char *debpkg__native_arch(void);

#endif
