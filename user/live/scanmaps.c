// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * scanmaps.c - which mappings of another process a scan reads (see scanmaps.h): the rule
 * the reachability scan and lastref share, and what /proc/PID/smaps says before the stop.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "live/procmaps.h"
#include "live/scanmaps.h"
#include "util/search.h"
#include "util/vec.h"

bool scanmaps__skip(const struct proc_map *pm)
{
	if (!pm->readable || !pm->writable)
		return true;
	if (!pm->path)
		return false;
	if (!strcmp(pm->path, "[vvar]") || !strcmp(pm->path, "[vvar_vclock]") ||
	    !strcmp(pm->path, "[vsyscall]"))
		return true;
	return !strncmp(pm->path, "/dev/", 5) && strcmp(pm->path, "/dev/zero") &&
	       strncmp(pm->path, "/dev/shm/", 9);
}

/* "start-end perms ..." of a mapping's first line, or false for a field line. */
static bool header(const char *line, uint64_t *start, uint64_t *end)
{
	unsigned long long lo, hi;
	int used = 0;

	if (sscanf(line, "%llx-%llx %n", &lo, &hi, &used) != 2 || !used)
		return false;
	*start = lo;
	*end = hi;
	return true;
}

/* "NAME:   N kB" of field name: N kB in bytes, added to *bytes. */
static void field_kb(const char *line, const char *name, uint64_t *bytes)
{
	size_t n = strlen(name);
	unsigned long long kb;

	if (!strncmp(line, name, n) && line[n] == ':' && sscanf(line + n + 1, "%llu kB", &kb) == 1)
		*bytes += (uint64_t)kb << 10;
}

int scanmaps__parse(const char *text, struct scanmaps *out)
{
	size_t cap = 0;

	memset(out, 0, sizeof(*out));
	for (const char *p = text; *p;) {
		const char *eol = strchr(p, '\n');
		uint64_t lo, hi;

		if (!eol)
			eol = p + strlen(p);
		if (header(p, &lo, &hi)) {
			if (VEC_RESERVE(out->v, cap, out->n + 1, 64)) {
				scanmaps__free(out);
				return -ENOMEM;
			}
			out->v[out->n++] = (struct scanmaps_touch){ lo, hi, 0, 0 };
		} else if (out->n) {
			field_kb(p, "Rss", &out->v[out->n - 1].touched_bytes);
			field_kb(p, "Rss", &out->v[out->n - 1].rss_bytes);
			field_kb(p, "Swap", &out->v[out->n - 1].touched_bytes);
		}
		p = *eol ? eol + 1 : eol;
	}
	return 0;
}

int scanmaps__prepare(int pid, struct scanmaps *out, char *msg, size_t msg_len)
{
	char *text = NULL;
	uint64_t at = 0;
	int err;

	memset(out, 0, sizeof(*out));
	err = procmaps__smaps_text(pid, &text);
	if (err == -ENOENT || err == -ESRCH) {
		snprintf(msg, msg_len, "process %d does not exist", pid);
		return -ESRCH;
	}
	if (!err && procmaps__smaps_uffd(text, &at) > 0) {
		snprintf(msg, msg_len, "process %d has memory registered with userfaultfd (at 0x%"
			 PRIx64 "), which a scan cannot read without waiting for a thread it stopped",
			 pid, at);
		err = -EOPNOTSUPP;
	}
	if (!err)
		err = scanmaps__parse(text, out);
	free(text);
	return err;
}

bool scanmaps__untouched(const struct scanmaps *s, const struct proc_map *pm)
{
	const struct scanmaps_touch *t;

	/* A shared file page written back and evicted is in neither Rss nor Swap. */
	if (pm->shared)
		return false;
	t = scanmaps__find(s, pm->start);
	return t && t->end == pm->end && !t->touched_bytes;
}

const struct scanmaps_touch *scanmaps__find(const struct scanmaps *s, uint64_t start)
{
	size_t lo = SEARCH_FIRST(s->n, i, s->v[i].start < start);

	return lo < s->n && s->v[lo].start == start ? &s->v[lo] : NULL;
}

void scanmaps__free(struct scanmaps *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}
