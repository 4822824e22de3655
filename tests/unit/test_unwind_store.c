// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_unwind_store.c - unit tests of user/live/unwind_store.c on real BPF maps (root): a
 * table that needs room evicts only the objects used least recently that make it, and waits
 * for their extents' quarantine instead of emptying the map and failing.  The objects are
 * this test's own executable mappings (its libraries).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>

#include "check.h"
#include "bpf/leaktop.h"
#include "live/procmaps.h"
#include "live/unwind_store.h"

struct obj {
	const char *name;
	struct proc_map map;
	uint32_t nrows;
};

struct maps {
	struct unwind_store_fds fds;
};

static int make_maps(struct maps *m, uint32_t capacity)
{
	LIBBPF_OPTS(bpf_map_create_opts, mmapable, .map_flags = BPF_F_MMAPABLE);

	m->fds.capacity = capacity;
	m->fds.rows = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_rows", 4,
				     sizeof(struct lt_unwind_row), capacity, &mmapable);
	m->fds.objects = bpf_map_create(BPF_MAP_TYPE_HASH, "t_objs", sizeof(struct lt_unwind_key),
					sizeof(struct lt_unwind_obj), LT_MAX_UNWIND_OBJECTS, NULL);
	m->fds.wanted = bpf_map_create(BPF_MAP_TYPE_HASH, "t_want", sizeof(struct lt_unwind_key),
				       sizeof(struct lt_unwind_want), LT_MAX_UNWIND_WANTED, NULL);
	return m->fds.rows < 0 || m->fds.objects < 0 || m->fds.wanted < 0 ? -1 : 0;
}

static void close_maps(struct maps *m)
{
	close(m->fds.rows);
	close(m->fds.objects);
	close(m->fds.wanted);
}

static struct lt_unwind_key key_of(const struct proc_map *pm)
{
	return (struct lt_unwind_key){ .ino = pm->ino,
				       .dev = (uint32_t)(major(pm->dev) << 20 | minor(pm->dev)) };
}

/* Rows of o's table in the map; -1: no entry. */
static long rows_in_map(const struct maps *m, const struct obj *o)
{
	struct lt_unwind_key k = key_of(&o->map);
	struct lt_unwind_obj v;

	if (bpf_map_lookup_elem(m->fds.objects, &k, &v))
		return -1;
	return v.nrows;
}

/* Load o, its build carried on by drains until it is in the map (or 200 drains). */
static int load(struct unwind_store *u, const struct maps *m, const struct obj *o)
{
	int err = unwind_store__load_mapping(u, getpid(), o->map.start, o->map.end, o->map.path,
					     o->map.dev, o->map.ino);

	for (int i = 0; !err && i < 200 && rows_in_map(m, o) < 0; i++)
		unwind_store__drain(u, 50000000);
	return err;
}

/* This process's executable mapping of a file whose name has `name`. */
static int find_obj(struct proc_maps *pm, struct obj *o)
{
	for (size_t i = 0; i < pm->n; i++) {
		if (pm->v[i].executable && pm->v[i].path && strstr(pm->v[i].path, o->name)) {
			o->map = pm->v[i];
			return 0;
		}
	}
	return -ENOENT;
}

static void test_unwind_large_table_evicts_only_what_makes_room(void)
{
	struct obj objs[] = { { .name = "libdw" }, { .name = "libc.so" }, { .name = "libelf" } };
	struct obj *a = &objs[0], *b = &objs[1], *c = &objs[2];
	struct proc_maps pm = {};
	struct unwind_store *u;
	struct maps m;

	CHECK_EQ_INT(procmaps__read(getpid(), &pm), 0);
	for (int i = 0; i < 3; i++)
		CHECK_EQ_INT(find_obj(&pm, &objs[i]), 0);
	/* Their sizes, each in a map of its own. */
	for (int i = 0; i < 3; i++) {
		CHECK_EQ_INT(make_maps(&m, 1u << 20), 0);
		CHECK_EQ_INT(unwind_store__new(&u, &m.fds, false), 0);
		CHECK_EQ_INT(load(u, &m, &objs[i]), 0);
		objs[i].nrows = (uint32_t)rows_in_map(&m, &objs[i]);
		unwind_store__free(u);
		close_maps(&m);
	}
	fprintf(stderr, "  rows: %s %u, %s %u, %s %u\n", a->name, a->nrows, b->name, b->nrows,
		c->name, c->nrows);
	/* c fits in a's place, not beside a and b. */
	CHECK(a->nrows > 0 && b->nrows > 0 && c->nrows > 0 && c->nrows <= a->nrows);
	CHECK_EQ_INT(make_maps(&m, a->nrows + b->nrows + c->nrows / 2), 0);
	CHECK_EQ_INT(unwind_store__new(&u, &m.fds, false), 0);
	unwind_store__drain(u, 1000000);
	CHECK_EQ_INT(load(u, &m, a), 0);
	usleep(1000);
	CHECK_EQ_INT(load(u, &m, b), 0);
	usleep(1000);
	CHECK_EQ_INT(rows_in_map(&m, a), a->nrows);
	CHECK_EQ_INT(rows_in_map(&m, b), b->nrows);
	/* c: a (used least recently) goes; c waits for a's extent (drains), then takes it. */
	CHECK_EQ_INT(load(u, &m, c), 0);
	CHECK_EQ_INT(rows_in_map(&m, a), -1);
	CHECK_EQ_INT(rows_in_map(&m, c), c->nrows);
	CHECK_EQ_INT(rows_in_map(&m, b), b->nrows);
	unwind_store__free(u);
	close_maps(&m);
	procmaps__free(&pm);
}

int main(void)
{
	if (geteuid()) {
		fprintf(stderr, "SKIP test_unwind_store: needs root (BPF maps)\n");
		return 0;
	}
	RUN(test_unwind_large_table_evicts_only_what_makes_room);
	CHECK_EXIT();
}
