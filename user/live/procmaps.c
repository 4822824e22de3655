// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * procmaps.c - parsing of /proc/PID/maps.
 *
 * Owns the text format of the maps file: one mapping per line,
 * "start-end perms offset major:minor inode [path]", numbers in hex except the inode, the
 * path (which may contain spaces) padded to a column and suffixed " (deleted)" when the file
 * was unlinked.  procmaps__read() is the only function doing I/O; everything else works on
 * text or on the parsed array, which is kept sorted by start address for procmaps__find().
 */
#include "live/procmaps.h"
#include "util/search.h"
#include "util/vec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/sysmacros.h>

#define DELETED_SUFFIX " (deleted)"

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Parses at least one hex digit at *p (before end); advances *p.  0 or -EINVAL. */
static int parse_hex(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int d, n = 0;

	while (s < end && (d = hex_digit(*s)) >= 0) {
		if (v >> 60)
			return -EINVAL;		/* more than 64 bits */
		v = v << 4 | (uint64_t)d;
		s++;
		n++;
	}
	if (!n)
		return -EINVAL;
	*p = s;
	*out = v;
	return 0;
}

static int parse_dec(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int n = 0;

	while (s < end && *s >= '0' && *s <= '9') {
		uint64_t d = (uint64_t)(*s - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
		s++;
		n++;
	}
	if (!n)
		return -EINVAL;
	*p = s;
	*out = v;
	return 0;
}

static int expect(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return -EINVAL;
	(*p)++;
	return 0;
}

static int perm(char c, char yes, bool *out)
{
	if (c == yes) {
		*out = true;
		return 0;
	}
	if (c == '-') {
		*out = false;
		return 0;
	}
	return -EINVAL;
}

/* Parses one line [s, end) (no newline) into *m, allocating m->path.  0, -EINVAL, -ENOMEM. */
static int parse_line(const char *s, const char *end, struct proc_map *m)
{
	uint64_t major, minor;
	size_t len;
	int err;

	memset(m, 0, sizeof(*m));
	err = parse_hex(&s, end, &m->start);
	err = err ?: expect(&s, end, '-');
	err = err ?: parse_hex(&s, end, &m->end);
	err = err ?: expect(&s, end, ' ');
	if (err)
		return err;
	if (end - s < 5 || s[4] != ' ')
		return -EINVAL;
	err = perm(s[0], 'r', &m->readable);
	err = err ?: perm(s[1], 'w', &m->writable);
	err = err ?: perm(s[2], 'x', &m->executable);
	if (err)
		return err;
	if (s[3] == 's')
		m->shared = true;
	else if (s[3] != 'p')
		return -EINVAL;
	s += 5;
	err = parse_hex(&s, end, &m->file_offset);
	err = err ?: expect(&s, end, ' ');
	err = err ?: parse_hex(&s, end, &major);
	err = err ?: expect(&s, end, ':');
	err = err ?: parse_hex(&s, end, &minor);
	err = err ?: expect(&s, end, ' ');
	err = err ?: parse_dec(&s, end, &m->ino);
	if (err)
		return err;
	if (m->start >= m->end || major > UINT32_MAX || minor > UINT32_MAX)
		return -EINVAL;
	m->dev = makedev((unsigned int)major, (unsigned int)minor);

	/* Inode then, if there is a name, spaces up to a column; the name runs to the end. */
	if (s < end && *s != ' ')
		return -EINVAL;
	while (s < end && *s == ' ')
		s++;
	len = (size_t)(end - s);
	if (!len)
		return 0;
	if (len > strlen(DELETED_SUFFIX) &&
	    !memcmp(end - strlen(DELETED_SUFFIX), DELETED_SUFFIX, strlen(DELETED_SUFFIX))) {
		m->deleted = true;
		len -= strlen(DELETED_SUFFIX);
	}
	m->path = strndup(s, len);
	if (!m->path)
		return -ENOMEM;
	return 0;
}

static int map_cmp(const void *a, const void *b)
{
	const struct proc_map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int procmaps__parse(const char *text, struct proc_maps *out)
{
	struct proc_maps maps = {};
	size_t cap = 0;
	bool sorted = true;
	const char *s = text;
	int err = 0;

	while (*s) {
		const char *nl = strchr(s, '\n');
		const char *end = nl ?: s + strlen(s);

		if (end == s) {			/* tolerate blank lines */
			s = nl ? nl + 1 : end;
			continue;
		}
		if (VEC_RESERVE(maps.v, cap, maps.n + 1, 64)) {
			err = -ENOMEM;
			goto out;
		}
		err = parse_line(s, end, &maps.v[maps.n]);
		if (err)
			goto out;
		if (maps.n && maps.v[maps.n].start < maps.v[maps.n - 1].start)
			sorted = false;
		maps.n++;
		s = nl ? nl + 1 : end;
	}
	/* The kernel prints in address order; sort anyway so procmaps__find() can rely on it. */
	if (!sorted)
		qsort(maps.v, maps.n, sizeof(*maps.v), map_cmp);
out:
	if (err) {
		procmaps__free(&maps);
		memset(out, 0, sizeof(*out));
		return err;
	}
	*out = maps;
	return 0;
}

/* All of /proc/PID/NAME, NUL-terminated, in *text (malloc'd).  0, -ESRCH or -errno. */
static int read_proc_text(int pid, const char *name, char **text)
{
	char path[64], *buf = NULL;
	size_t len = 0, cap = 64 * 1024;
	int fd = -1, err = 0;

	*text = NULL;
	if (pid <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno == ENOENT || errno == ESRCH ? -ESRCH : -errno;
		goto out;
	}
	buf = malloc(cap);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	for (;;) {
		ssize_t n;

		if (cap - len < 4096 + 1 && VEC_RESERVE(buf, cap, cap * 2, 0)) {
			err = -ENOMEM;
			goto out;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = errno == ESRCH ? -ESRCH : -errno;
			goto out;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	if (memchr(buf, '\0', len)) {
		err = -EINVAL;
		goto out;
	}
	*text = buf;
	buf = NULL;
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	return err;
}

int procmaps__read(int pid, struct proc_maps *out)
{
	char *text;
	int err;

	memset(out, 0, sizeof(*out));
	err = read_proc_text(pid, "maps", &text);
	if (!err)
		err = procmaps__parse(text, out);
	free(text);
	return err;
}

/* Does a VmFlags line's value hold one of the userfaultfd registrations (um, uw, ui)? */
static bool vmflags_uffd(const char *p, const char *eol)
{
	while (p + 2 <= eol) {
		while (p < eol && *p == ' ')
			p++;
		if (eol - p >= 2 && p[0] == 'u' && (p[1] == 'm' || p[1] == 'w' || p[1] == 'i') &&
		    (eol - p == 2 || p[2] == ' '))
			return true;
		while (p < eol && *p != ' ')
			p++;
	}
	return false;
}

int procmaps__smaps_uffd(const char *text, uint64_t *start)
{
	uint64_t cur = 0;
	bool rw = false;

	for (const char *p = text; *p;) {
		const char *eol = strchr(p, '\n');

		if (!eol)
			eol = p + strlen(p);
		if (!strncmp(p, "VmFlags:", 8)) {
			if (rw && vmflags_uffd(p + 8, eol)) {
				*start = cur;
				return 1;
			}
		} else if (hex_digit(*p) >= 0) {
			/* A mapping's header "start-end perms ...", not a field ("Anonymous:"). */
			const char *q = p;
			uint64_t lo, hi;

			if (!parse_hex(&q, eol, &lo) && !expect(&q, eol, '-') &&
			    !parse_hex(&q, eol, &hi) && eol - q >= 3 && q[0] == ' ') {
				cur = lo;
				rw = q[1] == 'r' && q[2] == 'w';
			}
		}
		p = *eol ? eol + 1 : eol;
	}
	return 0;
}

int procmaps__smaps_text(int pid, char **text)
{
	return read_proc_text(pid, "smaps", text);
}

int procmaps__uffd(int pid, uint64_t *start)
{
	char *text;
	int err = read_proc_text(pid, "smaps", &text);

	if (!err)
		err = procmaps__smaps_uffd(text, start);
	free(text);
	return err;
}

static bool starts_at_or_below(const void *addr, const void *map)
{
	return ((const struct proc_map *)map)->start <= *(const uint64_t *)addr;
}

const struct proc_map *procmaps__find(const struct proc_maps *maps, uint64_t addr)
{
	/* One past the last mapping starting at or below addr. */
	size_t lo = search__partition(maps->v, maps->n, sizeof(*maps->v), &addr,
				      starts_at_or_below);

	if (!lo || addr >= maps->v[lo - 1].end)
		return NULL;
	return &maps->v[lo - 1];
}

void procmaps__free(struct proc_maps *maps)
{
	size_t i;

	for (i = 0; i < maps->n; i++)
		free(maps->v[i].path);
	free(maps->v);
	maps->v = NULL;
	maps->n = 0;
}
