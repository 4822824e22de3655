// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * libcs.c - finds the C libraries to probe, from /proc/PID/maps.
 *
 * A library is named by the process that maps it; to attach from leaktop's own mount
 * namespace the file is reached through /proc/PID/root, unless the same path here is the
 * same file (same device and inode), which gives nicer messages.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "live/libcs.h"
#include "live/procfs.h"
#include "live/procmaps.h"

bool libcs__is_libc_path(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	/* glibc: libc.so.6 or libc-2.NN.so; musl: libc.musl-*.so.1 or ld-musl-*.so.1. */
	if (!strcmp(base, "libc.so.6") || !strncmp(base, "libc.musl-", 10) ||
	    !strncmp(base, "ld-musl-", 8))
		return true;
	return !strncmp(base, "libc-", 5) && strstr(base, ".so") && isdigit((unsigned char)base[5]);
}

static void fill_ref(int pid, const struct proc_map *m, struct libc_ref *r)
{
	struct stat st;

	memset(r, 0, sizeof(*r));
	snprintf(r->path, sizeof(r->path), "%s", m->path);
	r->dev = m->dev;
	r->ino = m->ino;
	r->pid = pid;
	if (!stat(m->path, &st) && st.st_ino == m->ino && st.st_dev == m->dev)
		snprintf(r->open_path, sizeof(r->open_path), "%s", m->path);
	else
		snprintf(r->open_path, sizeof(r->open_path), "/proc/%d/root%s", pid, m->path);
}

int libcs__of_pid(int pid, struct libc_ref *out, size_t max, size_t *n)
{
	struct proc_maps maps = {};
	int err = procmaps__read(pid, &maps);

	*n = 0;
	if (err)
		return err;
	for (size_t i = 0; i < maps.n && *n < max; i++) {
		const struct proc_map *m = &maps.v[i];
		bool dup = false;

		if (!m->path || m->path[0] != '/' || m->deleted || !libcs__is_libc_path(m->path))
			continue;
		for (size_t j = 0; j < *n; j++)
			dup |= out[j].dev == m->dev && out[j].ino == m->ino;
		if (!dup)
			fill_ref(pid, m, &out[(*n)++]);
	}
	procmaps__free(&maps);
	return 0;
}

int libcs__scan_system(struct libc_ref **out, size_t *n)
{
	struct libc_ref *v = NULL, found[4];
	size_t cnt = 0, cap = 0, nf, np;
	int *pids, err;

	err = procfs__list_pids(&pids, &np);
	if (err)
		return err;
	for (size_t i = 0; i < np; i++) {
		if (libcs__of_pid(pids[i], found, 4, &nf))
			continue;	/* gone, or a kernel thread */
		for (size_t k = 0; k < nf; k++) {
			bool dup = false;

			for (size_t j = 0; j < cnt && !dup; j++)
				dup = v[j].dev == found[k].dev && v[j].ino == found[k].ino;
			if (dup)
				continue;
			if (cnt == cap) {
				struct libc_ref *nv;

				cap = cap ? cap * 2 : 4;
				nv = realloc(v, cap * sizeof(*v));
				if (!nv) {
					err = -ENOMEM;
					goto out;
				}
				v = nv;
			}
			v[cnt++] = found[k];
		}
	}
out:
	free(pids);
	if (err) {
		free(v);
		return err;
	}
	*out = v;
	*n = cnt;
	return 0;
}
