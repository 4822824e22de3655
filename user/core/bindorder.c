// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * bindorder.c - the dynamic linker's symbol search order over the objects a process maps,
 * and the object its malloc binds to (see bindorder.h).
 */
#include <string.h>

#include "core/bindorder.h"

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Does the DT_NEEDED or LD_PRELOAD entry `name` name object o? */
static bool names(const struct bind_obj *o, const char *name)
{
	if (!o->path || !name || !name[0])
		return false;
	if (strchr(name, '/'))
		return !strcmp(o->path, name);
	if (o->soname && !strcmp(o->soname, name))
		return true;
	return !strcmp(base_name(o->path), name);
}

static int find(const struct bind_obj *objs, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (names(&objs[i], name))
			return (int)i;
	return -1;
}

int bind_order__pick(const struct bind_obj *objs, size_t n, size_t exe,
		     const char *const *preload, size_t n_preload)
{
	unsigned short queue[BIND_MAX_OBJS];
	bool queued[BIND_MAX_OBJS] = { false };
	size_t head = 0, tail = 0;

	if (n > BIND_MAX_OBJS)
		n = BIND_MAX_OBJS;
	if (exe >= n)
		return -1;
	queue[tail++] = (unsigned short)exe;
	queued[exe] = true;
	for (size_t i = 0; i < n_preload; i++) {
		int k = find(objs, n, preload[i]);

		if (k >= 0 && !queued[k]) {
			queue[tail++] = (unsigned short)k;
			queued[k] = true;
		}
	}
	/* Breadth first: each object's needed libraries join the end of the scope once. */
	while (head < tail) {
		const struct bind_obj *o = &objs[queue[head++]];

		if (o->exports_malloc)
			return queue[head - 1];
		for (size_t i = 0; i < o->n_needed; i++) {
			int k = find(objs, n, o->needed[i]);

			if (k >= 0 && !queued[k]) {
				queue[tail++] = (unsigned short)k;
				queued[k] = true;
			}
		}
	}
	return -1;
}

size_t bind_order__split_preload(char *buf, const char **out, size_t max)
{
	size_t n = 0;
	char *save = NULL, *tok;

	for (tok = strtok_r(buf, " :", &save); tok && n < max; tok = strtok_r(NULL, " :", &save))
		out[n++] = tok;
	return n;
}
