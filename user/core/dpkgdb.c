// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * dpkgdb.c - the text of dpkg's database (/var/lib/dpkg): lines joined across the chunks a
 * reader hands over, file lists (info/PACKAGE[:ARCH].list) and status stanzas.  What dpkg
 * wrote is taken as untrusted text: names are checked against dpkg's own alphabet, lines
 * longer than any path are skipped, and nothing is kept but what fits.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/dpkgdb.h"

void dpkgdb_lines__reset(struct dpkgdb_lines *l)
{
	l->n_carry = 0;
	l->overlong = false;
}

/* Keep part of a line that goes on in the next chunk. */
static void carry(struct dpkgdb_lines *l, const char *s, size_t len)
{
	if (l->overlong)
		return;
	if (len >= sizeof(l->carry) - l->n_carry) {
		l->overlong = true;
		l->n_carry = 0;
		return;
	}
	memcpy(l->carry + l->n_carry, s, len);
	l->n_carry += len;
}

bool dpkgdb_lines__next(struct dpkgdb_lines *l, const char *buf, size_t n, size_t *pos,
			const char **line, size_t *len)
{
	while (*pos < n) {
		const char *start = buf + *pos;
		const char *nl = memchr(start, '\n', n - *pos);
		size_t part = nl ? (size_t)(nl - start) : n - *pos;

		*pos += part + (nl ? 1 : 0);
		if (!nl) {
			carry(l, start, part);
			return false;
		}
		if (!l->n_carry && !l->overlong) {
			if (part >= DPKGDB_LINE_MAX)
				continue;
			*line = start;
			*len = part;
			return true;
		}
		carry(l, start, part);
		if (l->overlong) {
			dpkgdb_lines__reset(l);
			continue;
		}
		/* l->carry stays as it is until the next call. */
		*line = l->carry;
		*len = l->n_carry;
		l->n_carry = 0;
		return true;
	}
	return false;
}

bool dpkgdb_lines__end(struct dpkgdb_lines *l, const char **line, size_t *len)
{
	bool some = l->n_carry && !l->overlong;

	*line = l->carry;
	*len = some ? l->n_carry : 0;
	dpkgdb_lines__reset(l);
	return some;
}

static bool alnum_lower(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool dpkgdb__package_name(const char *s, size_t len)
{
	const char *colon = memchr(s, ':', len);
	size_t name_len = colon ? (size_t)(colon - s) : len;

	if (!len || len >= DPKGDB_NAME_LEN || !alnum_lower(s[0]))
		return false;
	for (size_t i = 1; i < name_len; i++)
		if (!alnum_lower(s[i]) && !strchr("+.-", s[i]))
			return false;
	if (!colon)
		return true;
	if (name_len + 1 == len)
		return false;
	for (size_t i = name_len + 1; i < len; i++)
		if (!alnum_lower(s[i]) && s[i] != '-')
			return false;
	return true;
}

int dpkgdb__list_package(const char *name, char *pkg, size_t size)
{
	size_t len = strlen(name);

	if (len <= 5 || strcmp(name + len - 5, ".list"))
		return -EINVAL;
	len -= 5;
	if (len >= size || !dpkgdb__package_name(name, len))
		return -EINVAL;
	memcpy(pkg, name, len);
	pkg[len] = '\0';
	return 0;
}

bool dpkgdb__list_line_is(const char *line, size_t len, const char *path, const char *alias)
{
	size_t n = strlen(path);

	if (len == n && !memcmp(line, path, n))
		return true;
	if (!alias || !alias[0])
		return false;
	n = strlen(alias);
	return len == n && !memcmp(line, alias, n);
}

void dpkgdb_stanza__reset(struct dpkgdb_stanza *s)
{
	memset(s, 0, sizeof(*s));
}

/* Is this line field `name` (any case, as deb822 allows)?  Its value, trimmed, if so. */
static bool field(const char *line, size_t len, const char *name, const char **val,
		  size_t *val_len)
{
	size_t n = strlen(name);
	const char *v, *end = line + len;

	if (len <= n || line[n] != ':' || strncasecmp(line, name, n))
		return false;
	for (v = line + n + 1; v < end && (*v == ' ' || *v == '\t'); v++)
		;
	while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	*val = v;
	*val_len = (size_t)(end - v);
	return true;
}

/* dst = s[0..len) when it is a name (check), else "". */
static void take(char *dst, size_t size, const char *s, size_t len,
		 bool (*check)(const char *, size_t))
{
	if (len < size && check(s, len)) {
		memcpy(dst, s, len);
		dst[len] = '\0';
	} else {
		dst[0] = '\0';
	}
}

/* A bare package or source name (no qualifier). */
static bool bare_name(const char *s, size_t len)
{
	return !memchr(s, ':', len) && dpkgdb__package_name(s, len);
}

static bool word(const char *s, size_t len)
{
	if (!len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!alnum_lower(s[i]) && s[i] != '-')
			return false;
	return true;
}

bool dpkgdb_stanza__line(struct dpkgdb_stanza *s, const char *line, size_t len)
{
	const char *v;
	size_t vlen, i;

	for (i = 0; i < len && (line[i] == ' ' || line[i] == '\t'); i++)
		;
	if (i == len)
		return s->any;		/* a blank line ends the stanza */
	s->any = true;
	if (i)
		return false;		/* a continuation line */
	if (field(line, len, "Package", &v, &vlen)) {
		take(s->package, sizeof(s->package), v, vlen, bare_name);
	} else if (field(line, len, "Architecture", &v, &vlen)) {
		take(s->arch, sizeof(s->arch), v, vlen, word);
	} else if (field(line, len, "Source", &v, &vlen)) {
		/* "glibc (2.36-9+deb12u4)": the name only (the line may not end in a NUL). */
		for (i = 0; i < vlen && v[i] != ' ' && v[i] != '\t' && v[i] != '('; i++)
			;
		take(s->source, sizeof(s->source), v, i, bare_name);
	} else if (field(line, len, "Status", &v, &vlen)) {
		/* "install ok installed": the state is the last word. */
		for (i = vlen; i && v[i - 1] != ' ' && v[i - 1] != '\t'; i--)
			;
		take(s->state, sizeof(s->state), v + i, vlen - i, word);
	}
	return false;
}

enum dpkgdb_rank dpkgdb_stanza__rank(const struct dpkgdb_stanza *s, const char *package)
{
	const char *colon = strchr(package, ':');
	size_t len = colon ? (size_t)(colon - package) : strlen(package);

	if (!s->package[0] || strlen(s->package) != len || memcmp(s->package, package, len))
		return DPKGDB_NO_MATCH;
	if (colon && strcmp(s->arch, colon + 1))
		return DPKGDB_NO_MATCH;
	if (!strcmp(s->state, "not-installed"))
		return DPKGDB_NO_MATCH;		/* a name dpkg remembers, nothing of it here */
	if (!strcmp(s->state, "installed") || !strcmp(s->state, "triggers-pending") ||
	    !strcmp(s->state, "triggers-awaited"))
		return DPKGDB_INSTALLED;
	return DPKGDB_MATCH;
}

const char *dpkgdb_stanza__source(const struct dpkgdb_stanza *s)
{
	return s->source[0] ? s->source : s->package;
}
