// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * tracker.c - follows the traced images between and at samples.
 *
 * An image (pid, gen) is noted as soon as leaktop hears of it: its maps go to the symbolizer
 * and its name, command line and start time are read from /proc while it still exists.  A
 * process may be gone before that: a forked child's memory was its parent's, so the parent's
 * image stands in; an exec'd program's main executable is found from what the exec event
 * carried.  A young image is still mapping its libraries (ld.so runs after exec), so its
 * maps are re-read every few polls for a while.  At each sample the tracker hands over the
 * queued events, a reading of every image, and the frames of stacks its images had not
 * shown before (resolved once: a stack's frames never change; an address no mapping covers
 * makes it re-read the image's maps once per interval).  Modules those frames were resolved
 * in that have no symbols are asked about (which package owns them, live/debpkg.c) in the
 * background and go to the sample once answered.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "util/clock.h"
#include "live/allocs.h"
#include "live/collector.h"
#include "live/debpkg.h"
#include "live/procfs.h"
#include "live/pyproc.h"
#include "live/pystack.h"
#include "live/safe_open.h"
#include "live/symbolize.h"
#include "live/tracker.h"
#include "util/vec.h"
#include "util/search.h"

#define YOUNG_IMAGE_NS		(2ULL * 1000000000ULL)
#define YOUNG_REFRESH_NS	(50ULL * 1000000ULL)
/* Images whose allocator is looked for per sample, at most (each reads its maps and ELF files
 * not seen before). */
#define ALLOC_LOOKUPS_PER_SAMPLE	16
/* Images looked at for a Python interpreter per sample, at most (each: its maps read). */
#define PY_LOOKUPS_PER_SAMPLE		16
/* A process may rewrite its command line (a title): read again this often, not every interval. */
#define CMDLINE_REFRESH_NS	(10ULL * 1000000000ULL)

struct image {
	uint32_t pid;
	uint64_t gen;
	struct sample_identity id;	/* as last read while it lived */
	bool target;
	bool exited;
	bool oom;			/* the OOM killer chose it: its stacks go first */
	bool registered;		/* maps handed to the symbolizer */
	bool refreshed;			/* maps re-read this interval */
	bool maps_final;		/* /proc shows another program now: never read its maps */
	bool from_sites;		/* known from its sites before an event said what it is */
	uint64_t first_seen_ns;
	uint64_t maps_read_ns;		/* last time its maps went to the symbolizer */
	uint64_t cmdline_read_ns;	/* last time its command line was read (0: never) */
	bool alloc_asked;		/* its allocator was looked for (found or not) */
	bool py_asked;			/* its Python interpreter was looked for (found or not) */
	uint64_t *stacks;		/* stacks whose frames went to a sample, sorted */
	size_t n_stacks, cap_stacks;
	bool read_now;			/* its /proc is read this interval */
	bool seems_ended;		/* /proc showed it ended at its last reading */
	struct proc_counters counters;	/* that reading */
};

/*
 * How long a report that may be the last (a target exited) waits for the package answers
 * still open, at most: a pass over dpkg's database takes some 20 to 60 ms of reading.
 */
#define PKG_LAST_WAIT_NS	(1000ULL * 1000000ULL)
/* Modules without symbols whose package is being asked about, at most. */
#define PKG_MAX_PENDING		64
/* Answers kept per file (a module the symbolizer loads again is not asked again). */
#define PKG_CACHE		128

struct pkg_pending {
	struct sym_missing_module mod;
	struct debpkg_query q;
	bool done;
};

struct pkg_answer {
	uint64_t dev, ino;
	enum sym_pkg_lookup lookup;
	char package[DEBPKG_NAME_LEN], source[DEBPKG_NAME_LEN], arch[32];
};

/* Time the stacks of exited images may take beyond a spent interval budget. */
#define EXITED_FRAMES_RESERVE_NS	(200 * 1000000ULL)

struct tracker {
	struct symbolizer *sym;
	struct tracker_config cfg;
	struct image *images;		/* sorted by (pid, gen) */
	size_t n_images, cap_images;
	struct sample_event *queue;	/* events since the last sample */
	size_t n_queue, cap_queue;
	size_t read_cursor;		/* /proc reads resume here when a budget cut them */
	bool backlog;			/* events still wait in the ring buffer */
	struct pkg_pending *pkgs[PKG_MAX_PENDING];	/* asked of dpkg's database */
	size_t n_pkgs;
	struct debpkg_db *pkg_db;	/* dpkg's database, read for them */
	struct pkg_answer *answers;	/* PKG_CACHE, filled round robin */
	size_t n_answers;
	struct stop_record stop;	/* --stop-at: the allocation it stopped a process at */
};

int tracker__new(struct tracker **out, struct symbolizer *sym, const struct tracker_config *cfg)
{
	struct tracker *t = calloc(1, sizeof(*t));

	if (!t || debpkg_db__new(&t->pkg_db, NULL)) {
		free(t);
		return -ENOMEM;
	}
	t->sym = sym;
	t->cfg = *cfg;
	*out = t;
	return 0;
}

static void pkg_free(struct pkg_pending *p)
{
	debpkg__cancel(&p->q);
	free(p->mod.path);
	free(p->mod.build_id);
	free(p);
}

static void image_free(struct image *im)
{
	sample_identity__clear(&im->id);
	free(im->stacks);
}

void tracker__free(struct tracker *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_images; i++)
		image_free(&t->images[i]);
	for (size_t i = 0; i < t->n_pkgs; i++)
		pkg_free(t->pkgs[i]);
	debpkg_db__free(t->pkg_db);
	free(t->answers);
	free(t->images);
	free(t->queue);
	free(t);
}

/* Index of (pid, gen), or where it would go; true if present. */
static bool image_search(const struct tracker *t, uint32_t pid, uint64_t gen, size_t *at)
{
	const struct image *v = t->images;

	*at = SEARCH_FIRST(t->n_images, mid, v[mid].pid < pid ||
			   (v[mid].pid == pid && v[mid].gen < gen));
	return *at < t->n_images && v[*at].pid == pid && v[*at].gen == gen;
}

static struct image *image_find(struct tracker *t, uint32_t pid, uint64_t gen)
{
	size_t at;

	return image_search(t, pid, gen, &at) ? &t->images[at] : NULL;
}

/* Any live image of pid. */
static struct image *image_find_live(struct tracker *t, uint32_t pid)
{
	size_t at;

	image_search(t, pid, 0, &at);
	for (; at < t->n_images && t->images[at].pid == pid; at++)
		if (!t->images[at].exited)
			return &t->images[at];
	return NULL;
}

/* Find or add (pid, gen); pointers into the table are stale after an add. */
static struct image *image_add(struct tracker *t, uint32_t pid, uint64_t gen)
{
	struct image *im;
	size_t at;

	if (image_search(t, pid, gen, &at))
		return &t->images[at];
	im = VEC_INSERT(t->images, t->n_images, t->cap_images, at, 16);
	if (!im)
		return NULL;
	im->pid = pid;
	im->gen = gen;
	im->first_seen_ns = monotonic_ns();
	return im;
}

static int queue_event(struct tracker *t, const struct sample_event *ev)
{
	if (VEC_RESERVE(t->queue, t->cap_queue, t->n_queue + 1, 16))
		return -ENOMEM;
	t->queue[t->n_queue++] = *ev;
	return 0;
}

/* comm and start time once known; the command line as /proc shows it (every few seconds). */
static void read_identity(struct image *im)
{
	uint64_t now = monotonic_ns();
	char buf[4096];

	if (!im->id.comm[0])
		procfs__comm(im->pid, im->id.comm, sizeof(im->id.comm));
	if ((!im->cmdline_read_ns || now - im->cmdline_read_ns >= CMDLINE_REFRESH_NS) &&
	    !procfs__cmdline(im->pid, buf, sizeof(buf))) {
		char *c = strdup(buf);

		im->cmdline_read_ns = now;
		if (c) {
			free(im->id.cmdline);
			im->id.cmdline = c;
		}
		/* Its cgroup, read as often: a process can be moved. */
		if (!procfs__cgroup(im->pid, buf, sizeof(buf)) && (c = strdup(buf))) {
			free(im->id.cgroup);
			im->id.cgroup = c;
			if (procfs__container_id(c, im->id.container, sizeof(im->id.container)))
				im->id.container[0] = '\0';
		}
	}
	if (!im->id.start_ticks)
		procfs__start_ticks(im->pid, &im->id.start_ticks);
}

/* Hand a live image's maps to the symbolizer and note who it is, while it still exists. */
static int note_image(struct tracker *t, struct image *im)
{
	int err = symbolizer__add_image(t->sym, im->gen, im->pid);

	if (!err) {
		im->registered = true;
		im->maps_read_ns = monotonic_ns();
	}
	read_identity(im);
	return err;
}

/* Forget what was read of an image from /proc: it may have been another program's. */
static void forget_reading(struct tracker *t, struct image *im)
{
	symbolizer__drop_image(t->sym, im->gen);
	im->registered = false;
	im->id.comm[0] = '\0';
	free(im->id.cmdline);
	im->id.cmdline = NULL;
	im->cmdline_read_ns = 0;
}

/* The identity of the file an exec event loaded, as stat gives it. */
static struct file_id exec_file_id(const struct lt_event *ev)
{
	return (struct file_id){ .dev = makedev(ev->exe_dev >> 20, ev->exe_dev & 0xfffff),
				 .ino = ev->exe_ino };
}

/*
 * A forked child's maps and name are its parent's, as they were at the fork: borrowed from the
 * parent's image without reading /proc (maps that change later, a library loaded, are read
 * when a stack needs them).  True when both maps and name were had.
 */
static bool borrow_parent(struct tracker *t, struct image *im, uint32_t ppid)
{
	struct image *parent = image_find_live(t, ppid);

	if (!parent)
		return false;
	if (!symbolizer__clone_image(t->sym, im->gen, parent->gen)) {
		im->registered = true;
		im->maps_read_ns = monotonic_ns();
	}
	if (!im->id.comm[0])
		memcpy(im->id.comm, parent->id.comm, sizeof(im->id.comm));
	if (!im->id.cmdline && parent->id.cmdline)
		im->id.cmdline = strdup(parent->id.cmdline);
	if (!im->id.cgroup && parent->id.cgroup) {
		im->id.cgroup = strdup(parent->id.cgroup);
		memcpy(im->id.container, parent->id.container, sizeof(im->id.container));
	}
	/* A fork runs the same program: the same allocator. */
	if (!im->id.alloc_module && parent->id.alloc_module) {
		im->id.alloc_module = strdup(parent->id.alloc_module);
		memcpy(im->id.alloc_kind, parent->id.alloc_kind, sizeof(im->id.alloc_kind));
		im->alloc_asked = true;
	}
	return im->registered && im->id.comm[0];
}

/* The image is gone already: borrow the parent's image, or the exec'd executable. */
static void note_short_lived(struct tracker *t, struct image *im, const struct lt_event *ev)
{
	struct file_id id = exec_file_id(ev);
	char exe[LT_EXE_LEN + 1];

	if (ev->type == LT_EV_FORK) {
		borrow_parent(t, im, ev->ppid);
	} else if (ev->type == LT_EV_EXEC) {
		memcpy(exe, ev->exe, LT_EXE_LEN);
		exe[LT_EXE_LEN] = '\0';
		if (!symbolizer__add_exe_image(t->sym, im->gen, (int)ev->tgid, exe, &id,
					       ev->start_code, ev->end_code))
			im->registered = true;
		if (!im->id.comm[0]) {
			const char *base = strrchr(exe, '/');

			snprintf(im->id.comm, sizeof(im->id.comm), "%.15s", base ? base + 1 : exe);
		}
	}
}

/*
 * Does /proc/PID/exe still name the program this exec event loaded?  Compared by identity:
 * the event's file name is the process's, and may lead elsewhere here (never looked up).
 * The identity comes from the inode, without asking its file system (a program on a FUSE
 * file system whose daemon stopped answering would hold leaktop here).
 */
static bool still_this_exe(const struct lt_event *ev)
{
	struct file_id want = exec_file_id(ev), id;
	char link[64];

	snprintf(link, sizeof(link), "/proc/%u/exe", ev->tgid);
	if (safe_open__link_id(link, &id, NULL))
		return false;		/* gone: its maps are gone too */
	return id.ino == want.ino && id.dev == want.dev;
}

void tracker__on_event(struct tracker *t, const struct lt_event *ev)
{
	struct sample_event se = { .pid = ev->tgid, .gen = ev->new_gen, .old_gen = ev->old_gen };
	struct image *im = NULL, *old;
	bool target = false;

	switch (ev->type) {
	case LT_EV_FORK:
	case LT_EV_FIRST:
		se.type = ev->type == LT_EV_FORK ? SAMPLE_EV_FORK : SAMPLE_EV_FIRST;
		se.target = ev->type == LT_EV_FORK && t->cfg.fork_targets;
		im = image_add(t, ev->tgid, ev->new_gen);
		if (!im)
			return;
		im->target = se.target;
		if (ev->type == LT_EV_FORK && t->cfg.fork_borrows && borrow_parent(t, im, ev->ppid))
			break;
		if (note_image(t, im))
			note_short_lived(t, im, ev);
		break;
	case LT_EV_EXEC:
		se.type = SAMPLE_EV_EXEC;
		old = image_find(t, ev->tgid, ev->old_gen);
		if (old) {
			target = old->target;
			old->exited = true;
		}
		im = image_add(t, ev->tgid, ev->new_gen);
		if (!im)
			return;
		im->target = se.target = target;
		/*
		 * Only the program and ld.so are mapped yet: tracker__refresh_young() follows up.
		 * If the process has exec'd yet again by now, /proc shows the next program:
		 * never lend its maps or name to this image.
		 */
		if (!still_this_exe(ev)) {
			/* Read from /proc before this event came: that was the next program. */
			if (im->from_sites)
				forget_reading(t, im);
			note_short_lived(t, im, ev);
			im->maps_final = true;
		} else if (note_image(t, im)) {
			note_short_lived(t, im, ev);
		} else if (!still_this_exe(ev)) {
			/*
			 * It exec'd again while its maps and name were being read: what was
			 * read may be the next program's.  Only the exec'd file is its own.
			 */
			forget_reading(t, im);
			note_short_lived(t, im, ev);
			im->maps_final = true;
		}
		break;
	case LT_EV_EXIT:
		se.type = SAMPLE_EV_EXIT;
		se.gen = 0;
		im = image_find(t, ev->tgid, ev->old_gen);
		if (im)
			im->exited = true;
		break;
	case LT_EV_OOM:
		/* About to die: its stacks go first, like an exited image's. */
		se.type = SAMPLE_EV_OOM;
		se.old_gen = 0;
		im = image_find(t, ev->tgid, ev->new_gen);
		if (im)
			im->oom = true;
		break;
	case LT_EV_STOP_AT:
		if (!t->stop.fired)
			t->stop = (struct stop_record){
				.fired = true, .pid = ev->tgid, .tid = ev->stop.tid,
				.gen = ev->stop.gen, .addr = ev->stop.addr,
				.size_bytes = ev->stop.size_bytes, .seq = ev->stop.seq,
				.stack_hash = ev->stop.stack_hash,
			};
		return;
	default:
		return;
	}
	if (im)
		im->from_sites = false;
	queue_event(t, &se);
}

size_t tracker__queued_oom(const struct tracker *t, struct dead_image *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < t->n_queue; i++)
		if (t->queue[i].type == SAMPLE_EV_OOM && n++ < max)
			out[n - 1] = (struct dead_image){ .tgid = t->queue[i].pid,
							  .gen = t->queue[i].gen };
	return n;
}

const struct stop_record *tracker__stop(const struct tracker *t)
{
	return &t->stop;
}

/*
 * The allocator the image's malloc binds to, looked for while it lives: a young image may
 * not have mapped its libraries yet (only the program and ld.so right after exec), so not
 * finding one is final only once it is no longer young.
 */
static void find_allocator(struct tracker *t, struct image *im)
{
	char module[PATH_MAX];
	const char *kind;

	if (!t->cfg.allocs || im->alloc_asked || im->maps_final || im->exited)
		return;
	if (allocs__bound_of_pid(t->cfg.allocs, (int)im->pid, module, sizeof(module), &kind)) {
		im->alloc_asked = monotonic_ns() - im->first_seen_ns > YOUNG_IMAGE_NS;
		return;
	}
	im->alloc_asked = true;
	free(im->id.alloc_module);
	im->id.alloc_module = strdup(module);
	snprintf(im->id.alloc_kind, sizeof(im->id.alloc_kind), "%s", kind);
}

int tracker__add_target(struct tracker *t, uint32_t pid, uint64_t gen)
{
	struct sample_event se = { .type = SAMPLE_EV_FIRST, .pid = pid, .gen = gen, .target = true };
	struct image *im = image_add(t, pid, gen);
	int err;

	if (!im)
		return -ENOMEM;
	im->target = true;
	err = queue_event(t, &se);
	if (err)
		return err;
	err = note_image(t, im);
	find_allocator(t, im);
	return err;
}

void tracker__refresh_young(struct tracker *t)
{
	uint64_t now = monotonic_ns();

	if (!t->cfg.refresh_young)
		return;
	for (size_t i = 0; i < t->n_images; i++) {
		struct image *im = &t->images[i];

		if (im->exited || im->maps_final || now - im->first_seen_ns > YOUNG_IMAGE_NS ||
		    now - im->maps_read_ns < YOUNG_REFRESH_NS)
			continue;
		note_image(t, im);
		find_allocator(t, im);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool has_stack(const struct image *im, uint64_t hash)
{
	return im->n_stacks && bsearch(&hash, im->stacks, im->n_stacks, sizeof(hash), cmp_u64);
}

static int add_stack(struct image *im, uint64_t hash)
{
	size_t at = SEARCH_FIRST(im->n_stacks, mid, im->stacks[mid] < hash);
	uint64_t *slot = VEC_INSERT(im->stacks, im->n_stacks, im->cap_stacks, at, 16);

	if (!slot)
		return -ENOMEM;
	*slot = hash;
	return 0;
}

/*
 * A Python interpreter in image im (live/pyproc.c): its frames are walked from now on.  A
 * young image may not have mapped libpython yet: looked for again until it is no longer
 * young.
 */
static void find_python(struct collector *c, struct image *im)
{
	struct lt_py_proc py;

	if (im->py_asked || im->maps_final || im->exited)
		return;
	if (pyproc__find((int)im->pid, &py)) {
		im->py_asked = monotonic_ns() - im->first_seen_ns > YOUNG_IMAGE_NS;
		return;
	}
	im->py_asked = true;
	py.gen = im->gen;
	collector__py_register(c, im->pid, &py);
}

/* Images read this interval that were never looked at for Python, a few at a time. */
static void find_pythons(struct tracker *t, struct collector *c)
{
	unsigned int lookups = 0;

	for (size_t i = 0; i < t->n_images && lookups < PY_LOOKUPS_PER_SAMPLE; i++) {
		struct image *im = &t->images[i];

		if (!im->read_now || im->py_asked)
			continue;
		find_python(c, im);
		lookups++;
	}
}

/*
 * Frame f (address ip) without a module: by the file BPF found it in when the stack was
 * stored (the image's maps were never read, or lack it: its process was gone).
 */
static void resolve_by_file(struct tracker *t, struct collector *c, uint64_t ip,
			    const struct lt_frame_file *ff, struct sym_frame *f)
{
	struct file_id id = { .dev = makedev(ff->dev >> 20, ff->dev & 0xfffff), .ino = ff->ino };
	char path[LT_PATH_LEN];
	bool named;

	if (!ff->ino)
		return;
	named = !collector__file_path(c, ff->dev, ff->ino, path, sizeof(path));
	sym_frame__clear(f);
	symbolizer__resolve_file(t->sym, ip, &id, named ? path : NULL, ff->off, true, NULL, f);
}

/*
 * The frames of stack `hash` of image im; re-read its maps once if an address is unmapped,
 * and name what they still lack by the files the stack walk found.
 */
static int resolve_stack(struct tracker *t, struct collector *c, struct image *im,
			 uint64_t hash, struct sample_frames *out)
{
	uint64_t ips[LT_MAX_STACK_DEPTH];
	struct lt_frame_file files[LT_MAX_STACK_DEPTH];
	uint32_t n = collector__stack(c, hash, ips, files, LT_MAX_STACK_DEPTH), n_native = 0;
	struct sym_frame *f;
	bool missing;
	int err;

	if (!n)
		return 0;
	n_native = pystack__n_native(ips, n);
	f = calloc(n, sizeof(*f));
	if (!f)
		return -ENOMEM;
	for (int pass = 0; pass < 2; pass++) {
		missing = false;
		for (uint32_t i = 0; i < n_native; i++) {
			if (f[i].symbol || (pass && f[i].module))
				continue;
			sym_frame__clear(&f[i]);
			if (symbolizer__resolve(t->sym, im->gen, ips[i], true, &f[i]) == -ENOENT)
				missing = true;
		}
		if (!missing || im->refreshed || im->exited || im->maps_final)
			break;
		im->refreshed = true;
		if (symbolizer__add_image(t->sym, im->gen, im->pid))
			break;
		im->registered = true;
	}
	for (uint32_t i = 0; i < n_native; i++)
		if (!f[i].module)
			resolve_by_file(t, c, ips[i], &files[i], &f[i]);
	if (n_native < n) {
		err = pystack__merge(c, im->pid, ips, n_native, n, &f);
		if (err) {
			for (uint32_t i = 0; i < n_native; i++)
				sym_frame__clear(&f[i]);
			free(f);
			return err;
		}
	}
	out->frames = f;
	out->n_frames = n;
	return 0;
}

/* Images the sites show that no event announced (a lost event, a process from before). */
static int discover(struct tracker *t, const struct sample *s)
{
	for (size_t i = 0; i < s->n_sites; i++) {
		const struct sample_site *r = &s->sites[i];
		struct image *im;

		if (image_find(t, r->pid, r->gen))
			continue;
		im = image_add(t, r->pid, r->gen);
		if (!im)
			return -ENOMEM;
		im->from_sites = true;
	}
	return 0;
}

/*
 * Frames of stacks new to their image (only of images that exited or that the OOM killer
 * chose, with exited_only), as far as the budget goes; the rest wait (counted in the last
 * call).
 */
static int add_frames(struct tracker *t, struct collector *c, struct sample *s,
		      const struct work_budget *b, bool exited_only)
{
	for (size_t i = 0; i < s->n_sites; i++) {
		const struct sample_site *r = &s->sites[i];
		struct image *im = image_find(t, r->pid, r->gen);
		struct sample_frames *sf;
		int err;

		if (!im || (exited_only && !im->exited && !im->oom) || has_stack(im, r->stack_hash))
			continue;
		/*
		 * An image known only from its sites while lifecycle events still wait in the
		 * ring buffer has no maps yet: its fork or exec event brings them (a parent's
		 * copy, the exec'd file).  Resolved now, its frames would stay without modules.
		 */
		if (!im->registered && t->backlog) {
			s->stacks_pending += !exited_only;
			continue;
		}
		if (work_budget__spent(b, monotonic_ns())) {
			s->stacks_pending += !exited_only;
			continue;
		}
		sf = sample__add_frames(s);
		if (!sf)
			return -ENOMEM;
		sf->pid = r->pid;
		sf->gen = r->gen;
		sf->stack_hash = r->stack_hash;
		err = resolve_stack(t, c, im, r->stack_hash, sf);
		if (!err)
			err = add_stack(im, r->stack_hash);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Reconcile a live image with /proc (its exit event may have been lost: the ring buffer was
 * full).  Found gone, or its pid held by a process started at another time, at two readings
 * in a row (an exit event still in the ring buffer at the first is consumed by the second):
 * it has ended.  The sample gets the EXIT event that was lost, and the count.
 */
static int reconcile(struct tracker *t, struct image *im, struct sample *s)
{
	struct sample_event *ev;
	enum proc_fate fate;
	uint64_t ticks = 0;
	int err;

	err = procfs__start_ticks(im->pid, &ticks);
	fate = proc_fate_of(im->id.start_ticks, err, ticks);
	/* Its exit event may be among those still waiting: decide at a later reading. */
	if (fate != PROC_ALIVE && t->backlog)
		return 0;
	if (fate == PROC_ALIVE || !im->seems_ended) {
		im->seems_ended = fate != PROC_ALIVE;
		return 0;
	}
	ev = sample__add_event(s);
	if (!ev)
		return -ENOMEM;
	*ev = (struct sample_event){ .type = SAMPLE_EV_EXIT, .pid = im->pid, .old_gen = im->gen };
	im->exited = true;
	im->read_now = false;
	if (fate == PROC_GONE)
		s->reconciled_exited++;
	else
		s->reconciled_reused++;
	return 0;
}

/*
 * Which live images get their /proc read now: round robin from where the last cut fell, as
 * far as the budget goes; the others keep their last reading in the model (counted).  Each
 * one read is also reconciled with /proc.  0 or -ENOMEM.
 */
static int plan_reads(struct tracker *t, struct sample *s, const struct work_budget *b)
{
	size_t n = t->n_images, start = n ? t->read_cursor % n : 0;
	unsigned int alloc_lookups = 0;
	bool spent = false;

	for (size_t k = 0; k < n; k++) {
		struct image *im = &t->images[(start + k) % n];

		im->read_now = false;
		/*
		 * Not when /proc shows the program it exec'd next (nothing there is its own), nor
		 * while an image known only from its sites may have its event still waiting in
		 * the ring buffer (which program /proc shows is not known yet).
		 */
		if (im->exited || im->maps_final || (im->from_sites && t->backlog))
			continue;
		if (!spent && work_budget__spent(b, monotonic_ns())) {
			spent = true;
			t->read_cursor = (start + k) % n;
		}
		if (spent) {
			s->procs_deferred++;
			continue;
		}
		/* Read it now: the reading itself is the costly part, done in sorted order. */
		im->read_now = true;
		if (!im->registered && !im->maps_final &&
		    !symbolizer__add_image(t->sym, im->gen, im->pid)) {
			im->registered = true;
			im->maps_read_ns = monotonic_ns();
		}
		read_identity(im);
		if (!im->alloc_asked && t->cfg.allocs && alloc_lookups < ALLOC_LOOKUPS_PER_SAMPLE) {
			find_allocator(t, im);
			alloc_lookups++;
		}
		if (procfs__counters(im->pid, &im->counters))
			im->counters.valid = false;
		if (reconcile(t, im, s))
			return -ENOMEM;
	}
	return 0;
}

/* A reading of every image: identity always, counters of the live ones read this interval. */
static int add_readings(struct tracker *t, struct sample *s)
{
	for (size_t i = 0; i < t->n_images; i++) {
		struct image *im = &t->images[i];
		struct sample_proc *p;

		p = sample__add_proc(s);
		if (!p)
			return -ENOMEM;
		p->pid = im->pid;
		p->gen = im->gen;
		p->alive = !im->exited;
		p->read = im->read_now;
		p->target = im->target;
		memcpy(p->id.comm, im->id.comm, sizeof(p->id.comm));
		p->id.start_ticks = im->id.start_ticks;
		if (im->id.cmdline && !(p->id.cmdline = strdup(im->id.cmdline)))
			return -ENOMEM;
		if (im->id.cgroup && !(p->id.cgroup = strdup(im->id.cgroup)))
			return -ENOMEM;
		memcpy(p->id.container, im->id.container, sizeof(p->id.container));
		if (im->id.alloc_module && !(p->id.alloc_module = strdup(im->id.alloc_module)))
			return -ENOMEM;
		memcpy(p->id.alloc_kind, im->id.alloc_kind, sizeof(p->id.alloc_kind));
		if (p->read)
			p->counters = im->counters;
	}
	return 0;
}

static struct pkg_answer *answer_find(struct tracker *t, uint64_t dev, uint64_t ino)
{
	for (size_t i = 0; t->answers && i < t->n_answers && i < PKG_CACHE; i++)
		if (t->answers[i].dev == dev && t->answers[i].ino == ino)
			return &t->answers[i];
	return NULL;
}

/* The answer to question p, into a. */
static void answer_of(const struct pkg_pending *p, struct pkg_answer *a)
{
	a->dev = p->mod.dev;
	a->ino = p->mod.ino;
	a->lookup = p->q.lookup;
	snprintf(a->package, sizeof(a->package), "%s", p->q.package);
	snprintf(a->source, sizeof(a->source), "%s", p->q.source);
	snprintf(a->arch, sizeof(a->arch), "%s", p->q.arch);
}

static int dup_or_null(char **dst, const char *src)
{
	*dst = src && *src ? strdup(src) : NULL;
	return src && *src && !*dst ? -ENOMEM : 0;
}

/* The sample's entry for module mod, with the package answer a.  0 or -ENOMEM. */
static int add_missing(struct sample *s, const struct sym_missing_module *mod,
		       const struct pkg_answer *a)
{
	struct sym_missing *h = sample__add_missing(s);
	char debug[2 * DEBPKG_NAME_LEN];

	if (!h)
		return -ENOMEM;
	h->lookup = a->lookup;
	if (dup_or_null(&h->module, mod->path) || dup_or_null(&h->build_id, mod->build_id))
		return -ENOMEM;
	if (a->lookup != SYM_PKG_OWNED)
		return 0;
	if (dup_or_null(&h->package, a->package) || dup_or_null(&h->source, a->source))
		return -ENOMEM;
	if (!symhint__debug_package(a->package, a->source[0] ? a->source : NULL,
				    a->arch[0] ? a->arch : NULL, debpkg__native_arch(), debug,
				    sizeof(debug)))
		return dup_or_null(&h->debug_package, debug);
	return 0;
}

/*
 * Step every question without blocking; an answered one is kept (the cache) and, with a
 * sample s, handed over to it.  0 or -ENOMEM.
 */
static int step_packages(struct tracker *t, struct sample *s)
{
	size_t keep = 0;
	int err = 0;

	for (size_t i = 0; i < t->n_pkgs; i++) {
		struct pkg_pending *p = t->pkgs[i];
		struct pkg_answer a;

		if (!p->done && debpkg__step(&p->q, monotonic_ns(), t->pkg_db)) {
			p->done = true;
			if (t->answers || (t->answers = calloc(PKG_CACHE, sizeof(*t->answers))))
				answer_of(p, &t->answers[t->n_answers++ % PKG_CACHE]);
		}
		if (p->done && s && !err) {
			answer_of(p, &a);
			err = add_missing(s, &p->mod, &a);
			pkg_free(p);
			continue;
		}
		t->pkgs[keep++] = p;
	}
	t->n_pkgs = keep;
	return err;
}

/*
 * Modules found without symbols: one asked about before gets the answer kept, the others
 * are asked about (dpkg's database, read a slice at a time); answers go to the sample when
 * they are in.  A report that may be the last (b->last, or `final`: a target exited, which ends -p
 * and --) waits for the questions still open, for PKG_LAST_WAIT_NS at most.
 */
static int symbols_missing(struct tracker *t, struct sample *s, const struct work_budget *b,
			   bool final)
{
	struct work_budget wait = { .stop = b ? b->stop : NULL };
	struct sym_missing_module *v;
	size_t n, i;
	int err = 0;

	symbolizer__take_missing(t->sym, &v, &n);
	for (i = 0; i < n && !err; i++) {
		const struct pkg_answer *a = answer_find(t, v[i].dev, v[i].ino);
		struct pkg_pending *p;

		if (a) {
			err = add_missing(s, &v[i], a);
			continue;
		}
		p = t->n_pkgs < PKG_MAX_PENDING ? calloc(1, sizeof(*p)) : NULL;
		if (!p) {
			struct pkg_answer unknown = { .lookup = SYM_PKG_UNKNOWN };

			err = add_missing(s, &v[i], &unknown);
			continue;
		}
		p->mod = v[i];
		v[i].path = v[i].build_id = NULL;	/* moved */
		debpkg__init(&p->q, p->mod.path, p->mod.dev, p->mod.ino);
		t->pkgs[t->n_pkgs++] = p;
	}
	sym_missing_module__free(v, n);
	if (!err)
		err = step_packages(t, s);
	if (!final && !(b && b->last))
		return err;
	/* Within the report's own deadline: a stop signal's final report has little time. */
	wait.deadline_ns = monotonic_ns() + PKG_LAST_WAIT_NS;
	if (b && b->deadline_ns && b->deadline_ns < wait.deadline_ns)
		wait.deadline_ns = b->deadline_ns;
	while (!err && t->n_pkgs && !work_budget__spent(&wait, monotonic_ns())) {
		struct debpkg_query *q[PKG_MAX_PENDING];

		for (i = 0; i < t->n_pkgs; i++)
			q[i] = &t->pkgs[i]->q;
		debpkg__wait(q, t->n_pkgs, wait.deadline_ns);
		err = step_packages(t, s);
	}
	return err;
}

void tracker__step_packages(struct tracker *t)
{
	if (t->n_pkgs)
		step_packages(t, NULL);
}

int tracker__fill(struct tracker *t, struct collector *c, struct sample *s,
		  const struct work_budget *b)
{
	uint64_t t0 = monotonic_ns();
	bool target_ended = false;
	int err;

	for (size_t i = 0; i < t->n_queue; i++) {
		struct sample_event *ev = sample__add_event(s);
		struct image *old;

		if (!ev)
			return -ENOMEM;
		*ev = t->queue[i];
		old = ev->type == SAMPLE_EV_EXIT ? image_find(t, ev->pid, ev->old_gen) : NULL;
		target_ended |= old && old->target;
	}
	t->n_queue = 0;
	s->stop = t->stop;
	for (size_t i = 0; i < t->n_images; i++)
		t->images[i].refreshed = false;
	s->stacks_pending = 0;
	s->procs_deferred = 0;
	s->reconciled_exited = s->reconciled_reused = 0;
	err = discover(t, s);
	/*
	 * Stacks of images that exited first, before the /proc reads spend the budget: this is
	 * their last report, and a stack left for later would never get its frames.  /proc
	 * reads that wait lose nothing.
	 */
	if (!err) {
		/*
		 * With a reserve of their own: the interval's budget may be gone already (the
		 * first symbols of a library read from a cold disk), and what is not resolved
		 * now never will be.  Bounded: EXITED_FRAMES_RESERVE_NS past the start of this.
		 */
		struct work_budget exited = *b;
		uint64_t reserve = monotonic_ns() + EXITED_FRAMES_RESERVE_NS;

		if (exited.deadline_ns && exited.deadline_ns < reserve)
			exited.deadline_ns = reserve;
		err = add_frames(t, c, s, &exited, true);
	}
	if (!err)
		err = plan_reads(t, s, b);
	if (!err)
		find_pythons(t, c);
	if (!err)
		err = add_readings(t, s);
	if (!err)
		err = add_frames(t, c, s, b, false);
	if (!err)
		err = symbols_missing(t, s, b, target_ended);
	s->timing.track_ms = (monotonic_ns() - t0) / 1e6;
	return err;
}

void tracker__set_backlog(struct tracker *t, bool backlog)
{
	t->backlog = backlog;
}

void tracker__forget(struct tracker *t, const struct dead_image *dead, size_t n)
{
	size_t keep = 0;

	for (size_t i = 0; i < t->n_images; i++) {
		struct image *im = &t->images[i];
		bool gone = false;

		for (size_t k = 0; k < n && !gone; k++)
			gone = dead[k].tgid == im->pid && dead[k].gen == im->gen;
		if (gone) {
			/* Its sites were reported: its maps and modules need not stay open. */
			symbolizer__drop_image(t->sym, im->gen);
			image_free(im);
			continue;
		}
		t->images[keep++] = *im;
	}
	t->n_images = keep;
}

void tracker__resend_frames(struct tracker *t, int pid)
{
	for (size_t i = 0; i < t->n_images; i++)
		if (pid < 0 || t->images[i].pid == (uint32_t)pid)
			t->images[i].n_stacks = 0;
}
