/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * dpkgdb.h - the text of dpkg's database, in pure logic: lines cut from chunks read one at a
 * time, a file list (info/PACKAGE.list: the paths a package installed, one a line) that owns
 * a path, and a stanza of the status file (Package, Architecture, Source, Status) matched
 * against a package as dpkg names it ("libc6:amd64", "python3.11").  live/debpkg.c does the
 * reading; nothing here makes a system call.
 */
#ifndef LEAKTOP_DPKGDB_H
#define LEAKTOP_DPKGDB_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/* A package name, maybe ":arch"-qualified, and a source name: shorter than this. */
#define DPKGDB_NAME_LEN 128
#define DPKGDB_ARCH_LEN 32
/* Longer lines are skipped whole: no path dpkg lists, no field read here is that long. */
#define DPKGDB_LINE_MAX PATH_MAX

/* Lines cut from text that comes in chunks: a line split across two is joined here. */
struct dpkgdb_lines {
	char carry[DPKGDB_LINE_MAX];
	size_t n_carry;
	bool overlong;			/* the line being carried is skipped */
};

/* Forget any line in progress (a new file). */
void dpkgdb_lines__reset(struct dpkgdb_lines *l);
/*
 * The next whole line of chunk buf[*pos..n) ("\n" not included): true with *line, *len (into
 * buf, or into l for a line joined across chunks), *pos moved past it; false once the chunk
 * is used up (a line not ended yet is kept for the next chunk).
 */
bool dpkgdb_lines__next(struct dpkgdb_lines *l, const char *buf, size_t n, size_t *pos,
			const char **line, size_t *len);
/* At the end of the text: its last line if it had no "\n" (true), then the state is reset. */
bool dpkgdb_lines__end(struct dpkgdb_lines *l, const char **line, size_t *len);

/* A package name as dpkg writes it: [a-z0-9+.-], maybe ":arch" ([a-z0-9-]). */
bool dpkgdb__package_name(const char *s, size_t len);
/*
 * The package whose file list is info file `name` ("libc6:amd64.list": "libc6:amd64"), into
 * pkg; 0, or -EINVAL (not a file list, or not a package's name).
 */
int dpkgdb__list_package(const char *name, char *pkg, size_t size);
/* Is file-list line `line` the path `path` or its other name `alias` ("" or NULL: none)? */
bool dpkgdb__list_line_is(const char *line, size_t len, const char *path, const char *alias);

/* A stanza of dpkg's status file, as far as read. */
struct dpkgdb_stanza {
	char package[DPKGDB_NAME_LEN];	/* "" when it had none (or a bad one) */
	char arch[DPKGDB_ARCH_LEN];
	char source[DPKGDB_NAME_LEN];	/* the source package's name without its "(version)" */
	char state[32];			/* Status's last word: "installed", "unpacked"... */
	bool any;			/* a line of it was read */
};

void dpkgdb_stanza__reset(struct dpkgdb_stanza *s);
/*
 * Feed one line of the status file.  True when it ended a stanza that had lines (a blank
 * line): the caller reads s, then resets it.  The end of the file ends a stanza too.
 */
bool dpkgdb_stanza__line(struct dpkgdb_stanza *s, const char *line, size_t len);

/* How well stanza s answers for `package` ("name" or "name:arch"): higher is better. */
enum dpkgdb_rank {
	DPKGDB_NO_MATCH,
	DPKGDB_MATCH,			/* the package, not (or not fully) installed */
	DPKGDB_INSTALLED,		/* the package, installed: the answer */
};

enum dpkgdb_rank dpkgdb_stanza__rank(const struct dpkgdb_stanza *s, const char *package);
/* Its source package: Source's name, else the package's own name (dpkg's source:Package). */
const char *dpkgdb_stanza__source(const struct dpkgdb_stanza *s);

#endif
