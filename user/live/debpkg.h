/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * debpkg.h - which installed Debian package owns a file, and its source package, asked of
 * dpkg without blocking the run loop.  A question runs /usr/bin/dpkg-query as a child
 * (execve, no shell, a fixed environment, no descriptor of leaktop's, in its own process
 * group), whose output is read without waiting; a child that takes too long is killed.
 * Only a file that is here what the traced process mapped (same device and inode) is asked
 * about, by a path dpkg takes literally (no pattern).
 */
#ifndef LEAKTOP_DEBPKG_H
#define LEAKTOP_DEBPKG_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/symhint.h"

#define DEBPKG_NAME_LEN 128

struct debpkg_query {
	/* The answer, once debpkg__step() returned true. */
	enum sym_pkg_lookup lookup;
	char package[DEBPKG_NAME_LEN];	/* dpkg's name ("libc6:amd64"); "" unless owned */
	char source[DEBPKG_NAME_LEN];	/* "" when unknown */
	char arch[32];			/* "" when unknown */
	/* Private. */
	char path[PATH_MAX];
	char alias[PATH_MAX];		/* its other name under merged /usr, or "" */
	int stage;
	pid_t pid;
	int fd;
	char out[4096];
	size_t n_out;
	bool eof;
	int status;
	uint64_t deadline_ns;
};

/*
 * Start asking about `path` (a file whose identity is dev, ino).  A path that cannot be
 * asked about (not here, another file here, a pattern, control characters) or a system
 * without dpkg is answered at once: SYM_PKG_UNKNOWN.
 */
void debpkg__init(struct debpkg_query *q, const char *path, uint64_t dev, uint64_t ino);
/*
 * Move the question on without blocking (start dpkg-query while fewer than *running
 * children run, read what it wrote, reap it); true once answered.  *running counts the
 * children of every query stepped with it.
 */
bool debpkg__step(struct debpkg_query *q, uint64_t now_ns, unsigned int *running);
/* Wait until one of the queries' children wrote or ended, or until deadline_ns. */
void debpkg__wait(struct debpkg_query *const *q, size_t n, uint64_t deadline_ns);
/* Give the question up: its child, if any, is killed and reaped (SYM_PKG_UNKNOWN). */
void debpkg__cancel(struct debpkg_query *q);
/* This build's Debian architecture ("amd64"), NULL when not known. */
const char *debpkg__native_arch(void);

#endif
