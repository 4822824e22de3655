// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * unwind_store.c - the unwind tables the BPF walker reads (bpf/stack.bpf.c): building them
 * (live/cfi.c) for the objects traced processes map and placing them in the maps.
 *
 * `unwind_rows` is one array map, memory-mapped here page range by page range: each object's
 * rows are copied into a free extent of it, then `unwind_objects` gets the object's (first, nrows) entry, so a walk
 * never sees a table half written.  An object that has no usable CFI gets an entry with no
 * rows (the walk uses frame pointers there and stops asking).  Objects are keyed as the
 * kernel names a mapping's file, (s_dev, i_ino): the key a walk asks with is used as is, and
 * files opened here are keyed from fstat with the device re-encoded.
 *
 * Room is bounded (the map's rows, LT_MAX_UNWIND_OBJECTS entries): when a table does not
 * fit, the objects used least recently (loaded or asked for) are evicted.  An evicted
 * extent is reused only after the next drain, so a walk that looked its entry up just before
 * the eviction finishes on the rows it found.  Files that could not be opened (the process
 * exited) are not tried again for a while.
 *
 * A table is built in steps (live/cfi.c), one object at a time: a drain goes on with the
 * object being built, within its budget, and an object not done by then is continued at the
 * next drain, so no object (a crafted .eh_frame of the traced program's, say) holds the run
 * loop for longer than a drain's budget.  An object whose build takes CFI_MAX_BUILD_NS of CPU
 * in all is given up: no table, counted (too_slow).  Not thread-safe.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <bpf/bpf.h>
#include <gelf.h>
#include <libelf.h>

#include "live/cfi.h"
#include "live/ldlist.h"
#include "live/procmaps.h"
#include "live/safe_open.h"
#include "live/unwind_store.h"
#include "util/clock.h"
#include "util/msg.h"
#include "util/vec.h"

#define UW_RETRY_NS		(10ull * 1000000000)	/* a file that could not be opened */
#define UW_MAX_FAILED		256
/* Building a table asked for outside a drain (whole-system attach): this long per call. */
#define UW_LOAD_STEP_NS		(20ull * 1000000)

extern char **environ;

struct uw_obj {
	struct lt_unwind_key key;
	uint32_t first, nrows;
	uint64_t used_ns;
	uint32_t dead_tick;		/* evicted at this drain (0: in the map) */
};

struct uw_failed {
	struct lt_unwind_key key;
	uint64_t until_ns;
};

/*
 * A built table waiting for room: the extents evicted for it are reused only after the next
 * drain (a walk may still be reading them), so it is placed at a later drain.
 */
struct uw_waiting {
	bool on;
	struct lt_unwind_key key;
	struct cfi_table t;
	char what[64];
	uint64_t t0_ns;
};

/* The table being built across drains. */
struct uw_pending {
	struct cfi_build *build;	/* NULL: none */
	struct lt_unwind_key key;
	char what[64];
	uint64_t t0_ns;
};

struct unwind_store {
	struct unwind_store_fds fds;
	size_t page_bytes;
	struct uw_obj *objs;		/* in the map, and evicted ones in quarantine */
	size_t n, cap;
	struct uw_failed failed[UW_MAX_FAILED];
	size_t n_failed, next_failed;
	uint32_t tick;
	struct uw_pending pending;
	struct uw_waiting waiting;
	bool verbose;
	struct unwind_stats stats;
};

static uint32_t kernel_dev(uint64_t dev)
{
	return (uint32_t)(major(dev) << 20 | minor(dev));
}

static uint64_t user_dev(uint32_t kdev)
{
	return makedev(kdev >> 20, kdev & 0xfffff);
}

static bool same_key(const struct lt_unwind_key *a, const struct lt_unwind_key *b)
{
	return a->ino == b->ino && a->dev == b->dev;
}

static struct uw_obj *find_obj(struct unwind_store *u, const struct lt_unwind_key *key)
{
	for (size_t i = 0; i < u->n; i++) {
		if (!u->objs[i].dead_tick && same_key(&u->objs[i].key, key))
			return &u->objs[i];
	}
	return NULL;
}

/* Was key tried lately without success?  Then leave it. */
static bool failed_lately(const struct unwind_store *u, const struct lt_unwind_key *key,
			  uint64_t now)
{
	for (size_t i = 0; i < u->n_failed; i++) {
		if (same_key(&u->failed[i].key, key))
			return now < u->failed[i].until_ns;
	}
	return false;
}

static void note_failed(struct unwind_store *u, const struct lt_unwind_key *key, uint64_t now)
{
	size_t slot = u->n_failed;

	for (size_t i = 0; i < u->n_failed; i++) {
		if (same_key(&u->failed[i].key, key))
			slot = i;
	}
	if (slot == u->n_failed) {
		if (u->n_failed < UW_MAX_FAILED)
			u->n_failed++;
		else
			slot = u->next_failed++ % UW_MAX_FAILED;
	}
	u->failed[slot] = (struct uw_failed){ *key, now + UW_RETRY_NS };
	u->stats.failed++;
}

static int cmp_first(const void *a, const void *b)
{
	const struct uw_obj *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

/* Forget quarantined extents older than the last drain; sort by first row. */
static void tidy(struct unwind_store *u)
{
	size_t k = 0;

	for (size_t i = 0; i < u->n; i++) {
		if (u->objs[i].dead_tick && u->objs[i].dead_tick + 1 < u->tick)
			continue;
		u->objs[k++] = u->objs[i];
	}
	u->n = k;
	if (u->n)
		qsort(u->objs, u->n, sizeof(*u->objs), cmp_first);
}

/*
 * The first free extent of nrows rows: its first row, or -ENOSPC.  With `later`, extents
 * evicted but still in quarantine count as free (the room there will be).
 */
static long find_room(const struct unwind_store *u, uint32_t nrows, bool later)
{
	uint64_t at = 0;

	for (size_t i = 0; i < u->n; i++) {
		const struct uw_obj *o = &u->objs[i];

		if (!o->nrows || (later && o->dead_tick))
			continue;
		if (o->first >= at + nrows)
			break;
		if (o->first + (uint64_t)o->nrows > at)
			at = o->first + (uint64_t)o->nrows;
	}
	return at + nrows <= u->fds.capacity ? (long)at : -ENOSPC;
}

static int objects_in_map(const struct unwind_store *u)
{
	int n = 0;

	for (size_t i = 0; i < u->n; i++)
		n += !u->objs[i].dead_tick;
	return n;
}

/* Evict the object used least recently (not one loaded at this drain).  false: none left. */
static bool evict_one(struct unwind_store *u, uint64_t now)
{
	struct uw_obj *victim = NULL;

	for (size_t i = 0; i < u->n; i++) {
		struct uw_obj *o = &u->objs[i];

		if (o->dead_tick || o->used_ns >= now)
			continue;
		if (!victim || o->used_ns < victim->used_ns)
			victim = o;
	}
	if (!victim)
		return false;
	bpf_map_delete_elem(u->fds.objects, &victim->key);
	victim->dead_tick = u->tick;
	if (victim->nrows)
		u->stats.rows_full++;
	return true;
}

/*
 * Copy n rows to row `first` of the rows map through a mapping of only the pages they fill,
 * unmapped at once: the map's pages are the kernel's, and a mapping of the whole map would
 * make them all (16 MiB) leaktop's resident memory for the whole run.  0 or -errno.
 */
static int write_rows(const struct unwind_store *u, uint32_t first,
		      const struct lt_unwind_row *rows, uint32_t n)
{
	size_t start = (size_t)first * sizeof(*rows), len = (size_t)n * sizeof(*rows);
	size_t off = start & ~(u->page_bytes - 1);
	size_t map_bytes = (start + len - off + u->page_bytes - 1) & ~(u->page_bytes - 1);
	char *p = mmap(NULL, map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, u->fds.rows,
		       (off_t)off);

	if (p == MAP_FAILED)
		return -errno;
	memcpy(p + (start - off), rows, len);
	munmap(p, map_bytes);
	return 0;
}

/*
 * Place a built table (nrows 0: the object has no usable CFI) and publish it.  -EAGAIN: the
 * objects used least recently were evicted to make room, but their extents are still in
 * quarantine; place it again after the next drain.  Only as many objects are evicted as
 * the room needs: counting extents in quarantine as taken, every object would be evicted
 * for a large table and it would still not fit (issue 25: under a build, libLLVM's 1M rows
 * emptied the map every time, and every table was built again).
 */
static int place(struct unwind_store *u, const struct lt_unwind_key *key,
		 const struct cfi_table *t, uint64_t now)
{
	struct lt_unwind_obj val = { .nrows = t ? (uint32_t)t->n : 0 };
	struct uw_obj *o;
	long first = 0;
	int err;

	if (val.nrows > u->fds.capacity)
		return -ENOSPC;
	for (;;) {
		tidy(u);
		if (val.nrows)
			first = find_room(u, val.nrows, false);
		if (first >= 0 && objects_in_map(u) < LT_MAX_UNWIND_OBJECTS)
			break;
		if (val.nrows && find_room(u, val.nrows, true) >= 0 &&
		    objects_in_map(u) < LT_MAX_UNWIND_OBJECTS)
			return -EAGAIN;
		if (!evict_one(u, now))
			return -ENOSPC;
	}
	if (VEC_RESERVE(u->objs, u->cap, u->n + 1, 64))
		return -ENOMEM;
	val.first = (uint32_t)first;
	if (val.nrows) {
		err = write_rows(u, val.first, t->rows, val.nrows);
		if (err)
			return err;
	}
	err = bpf_map_update_elem(u->fds.objects, key, &val, BPF_ANY);
	if (err)
		return -errno;
	o = &u->objs[u->n++];
	*o = (struct uw_obj){ .key = *key, .first = val.first, .nrows = val.nrows, .used_ns = now };
	return 0;
}

/* Place what the build of key's table gave (err: its outcome; t: the table when 0). */
static int finish(struct unwind_store *u, const struct lt_unwind_key *key, const char *what,
		  int err, struct cfi_table *t, uint64_t t0, uint64_t now)
{
	if (err == -ETIME) {
		u->stats.too_slow++;
		if (u->verbose)
			err_line("unwind: %s: no table (reading its CFI took over %llu ms of CPU);"
				 " frame pointers there", what,
				 (unsigned long long)(CFI_MAX_BUILD_NS / 1000000));
		err = place(u, key, NULL, now);
	} else if (err == -ENODATA || err == -ENOEXEC || err == -ENOTSUP || err == -E2BIG ||
		   err == -EFBIG) {
		if (u->verbose)
			err_line("unwind: %s: no table (%s); frame pointers there", what,
				 strerror(-err));
		err = place(u, key, NULL, now);
	} else if (!err) {
		err = place(u, key, t, now);
		if (err == -EAGAIN) {
			/* The table waits (kept) for the extents freed for it. */
			u->waiting = (struct uw_waiting){ .on = true, .key = *key, .t = *t,
							  .t0_ns = t0 };
			snprintf(u->waiting.what, sizeof(u->waiting.what), "%s", what);
			return 0;
		}
		if (err == -ENOSPC) {
			u->stats.rows_full++;
			note_failed(u, key, now);
		} else if (!err && u->verbose) {
			err_line("unwind: %s: %zu rows (%zu unusable, %zu functions cut at %u rows), "
				 "built in %.1f ms (%.1f ms CPU)", what, t->n, t->unusable,
				 t->cut_fdes, CFI_MAX_FDE_ROWS, (monotonic_ns() - t0) / 1e6,
				 t->build_ns / 1e6);
		}
	}
	cfi__free(t);
	return err;
}

/*
 * Build and place the table of the file open at fd, known as key, until deadline_ns; past
 * it the build is the pending one (there is none: the callers see to that).  Closes fd.
 */
static int load_fd(struct unwind_store *u, const struct lt_unwind_key *key, int fd,
		   const char *what, uint64_t now, uint64_t deadline_ns)
{
	uint64_t t0 = monotonic_ns();
	struct cfi_table t = {};
	struct cfi_build *b;
	int err = cfi__start(fd, &b);

	close(fd);
	if (!err)
		err = cfi__step(b, deadline_ns, &t);
	if (err == -EINPROGRESS) {
		u->pending = (struct uw_pending){ .build = b, .key = *key, .t0_ns = t0 };
		snprintf(u->pending.what, sizeof(u->pending.what), "%s", what);
		return 0;
	}
	return finish(u, key, what, err, &t, t0, now);
}

/* Go on with the pending build until deadline_ns.  true: it is done (placed or failed). */
static bool continue_pending(struct unwind_store *u, uint64_t deadline_ns)
{
	struct uw_pending *p = &u->pending;
	struct cfi_table t = {};
	int err;

	if (!p->build)
		return false;
	err = cfi__step(p->build, deadline_ns, &t);
	if (err == -EINPROGRESS)
		return false;
	p->build = NULL;
	finish(u, &p->key, p->what, err, &t, p->t0_ns, monotonic_ns());
	return true;
}

/* The object key is known (or being loaded)?  Marks it used. */
static bool known(struct unwind_store *u, const struct lt_unwind_key *key, uint64_t now)
{
	struct uw_obj *o = find_obj(u, key);

	if (o) {
		o->used_ns = now;
		return true;
	}
	if (u->pending.build && same_key(&u->pending.key, key))
		return true;
	if (u->waiting.on && same_key(&u->waiting.key, key))
		return true;
	return failed_lately(u, key, now);
}

/*
 * Load the object mapped by pid at [start, end) (path: as maps names it, or NULL), its
 * table built until deadline_ns at most (then pending).  -EBUSY: another build is pending.
 */
static int load_mapping(struct unwind_store *u, int pid, uint64_t start, uint64_t end,
			const char *path, const struct lt_unwind_key *key, uint64_t now,
			uint64_t deadline_ns)
{
	const struct file_id want = { .dev = user_dev(key->dev), .ino = key->ino };
	char what[64];
	int fd, err;

	if (known(u, key, now))
		return 0;
	if (u->pending.build || u->waiting.on)
		return -EBUSY;
	err = safe_open__mapped(pid, start, end, path, &want, &fd);
	if (err) {
		/*
		 * Gone with its process (a short-lived compiler, say): the next process that
		 * maps the file asks again.  Anything else is not tried again for a while.
		 */
		if (err == -ENOENT || err == -ESRCH)
			u->stats.gone++;
		else
			note_failed(u, key, now);
		return err;
	}
	snprintf(what, sizeof(what), "%u:%llx", pid, (unsigned long long)start);
	return load_fd(u, key, fd, what, now, deadline_ns);
}

int unwind_store__load_mapping(struct unwind_store *u, int pid, uint64_t start, uint64_t end,
			       const char *path, uint64_t dev, uint64_t ino)
{
	struct lt_unwind_key key = { .ino = ino, .dev = kernel_dev(dev) };
	uint64_t now = monotonic_ns();

	return load_mapping(u, pid, start, end, path, &key, now, now + UW_LOAD_STEP_NS);
}

int unwind_store__load_pid(struct unwind_store *u, int pid)
{
	struct proc_maps maps = {};
	uint64_t now = monotonic_ns();
	int err = procmaps__read(pid, &maps);

	if (err)
		return err;
	for (size_t i = 0; i < maps.n; i++) {
		const struct proc_map *m = &maps.v[i];
		struct lt_unwind_key key = { .ino = m->ino, .dev = kernel_dev(m->dev) };

		if (!m->executable || !m->ino || m->shared)
			continue;
		/* Before the process is traced: each table whole (a pending one first). */
		while (u->pending.build)
			continue_pending(u, UINT64_MAX);
		load_mapping(u, pid, m->start, m->end, m->deleted ? NULL : m->path, &key, now,
			     UINT64_MAX);
	}
	procmaps__free(&maps);
	return 0;
}

/* Load the file at path (this namespace's; symbolic links followed). */
static int load_path(struct unwind_store *u, const char *path, uint64_t now)
{
	struct lt_unwind_key key;
	struct stat st;
	int fd, err;

	err = safe_open(AT_FDCWD, path, SAFE_FOLLOW, NULL, &fd);
	if (err)
		return err;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	key = (struct lt_unwind_key){ .ino = st.st_ino, .dev = kernel_dev(st.st_dev) };
	if (known(u, &key, now)) {
		close(fd);
		return 0;
	}
	while (u->pending.build)
		continue_pending(u, UINT64_MAX);
	if (u->waiting.on)
		return -EBUSY;
	/* A command not started yet: each table whole. */
	return load_fd(u, &key, fd, path, now, UINT64_MAX);
}

int unwind_store__load_command(struct unwind_store *u, const char *path)
{
	struct ld_list list;
	uint64_t now = monotonic_ns();
	int err;

	err = load_path(u, path, now);
	if (err)
		return err;
	if (ldlist__read(path, &list))
		return 0;
	for (size_t i = 0; i < list.n; i++)
		load_path(u, list.paths[i], now);
	ldlist__free(&list);
	return 0;
}

int unwind_store__drain(struct unwind_store *u, uint64_t budget_ns)
{
	struct lt_unwind_key keys[LT_MAX_UNWIND_WANTED], cur, next;
	uint64_t start = monotonic_ns(), deadline = start + budget_ns, now;
	size_t n = 0;
	int handled = 0;
	void *prev = NULL;

	u->tick++;
	if (u->waiting.on) {
		struct uw_waiting wt = u->waiting;

		u->waiting.on = false;
		/* finish() keeps it waiting again while its room is still in quarantine. */
		finish(u, &wt.key, wt.what, 0, &wt.t, wt.t0_ns, monotonic_ns());
		if (u->waiting.on)
			return 0;
		handled++;
	}
	if (u->pending.build) {
		if (!continue_pending(u, deadline))
			return 0;
		handled++;
	}
	while (n < LT_MAX_UNWIND_WANTED && !bpf_map_get_next_key(u->fds.wanted, prev, &next)) {
		keys[n++] = next;
		cur = next;
		prev = &cur;
	}
	/* One object at least, unless one is still being built: it goes on at the next drain. */
	for (size_t i = 0; i < n && !u->pending.build && !u->waiting.on; i++) {
		struct lt_unwind_want w;

		now = monotonic_ns();
		if (handled && now >= deadline)
			break;
		if (bpf_map_lookup_elem(u->fds.wanted, &keys[i], &w))
			continue;
		bpf_map_delete_elem(u->fds.wanted, &keys[i]);
		load_mapping(u, (int)w.tgid, w.start, w.end, NULL, &keys[i], now, deadline);
		handled++;
	}
	return handled;
}

void unwind_store__stats(const struct unwind_store *u, struct unwind_stats *out)
{
	*out = u->stats;
	out->cfi = true;
	out->tables = out->no_cfi = out->rows = 0;
	for (size_t i = 0; i < u->n; i++) {
		if (u->objs[i].dead_tick)
			continue;
		out->tables += u->objs[i].nrows > 0;
		out->no_cfi += !u->objs[i].nrows;
		out->rows += u->objs[i].nrows;
	}
	out->capacity_rows = u->fds.capacity;
	out->table_bytes = out->rows * sizeof(struct lt_unwind_row) +
			   (out->tables + out->no_cfi) *
			   (sizeof(struct lt_unwind_key) + sizeof(struct lt_unwind_obj));
}

int unwind_store__new(struct unwind_store **out, const struct unwind_store_fds *fds, bool verbose)
{
	struct unwind_store *u = calloc(1, sizeof(*u));
	void *probe;

	*out = NULL;
	if (!u)
		return -ENOMEM;
	u->fds = *fds;
	u->verbose = verbose;
	u->page_bytes = (size_t)sysconf(_SC_PAGESIZE);
	/* 0 marks an object in the map (dead_tick): evictions before the first drain too. */
	u->tick = 1;
	/* The map must be mappable (write_rows maps pages of it as it fills them). */
	probe = mmap(NULL, u->page_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fds->rows, 0);
	if (probe == MAP_FAILED) {
		int err = -errno;

		free(u);
		return err;
	}
	munmap(probe, u->page_bytes);
	*out = u;
	return 0;
}

void unwind_store__free(struct unwind_store *u)
{
	if (!u)
		return;
	cfi__cancel(u->pending.build);
	if (u->waiting.on)
		cfi__free(&u->waiting.t);
	free(u->objs);
	free(u);
}
