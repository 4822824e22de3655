// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * ustack.c - unwinding a stopped thread in userspace (see ustack.h).
 *
 * The rows are cfi.c's, one table per object (device and inode as the maps line gives them),
 * built before a stop by ustack__prepare from the file the mapping shows, within the scan's
 * budget: a table not done by then is continued before the next scan (its object is walked
 * by frame pointer meanwhile), one that takes CFI_MAX_BUILD_NS in all is given up.  A step follows the
 * row that covers the frame's pc (the return address minus one above the first frame: the
 * call, not what follows it) exactly as the BPF walker does, or the frame pointer where the
 * object has no row.  Every return address must be code of an executable mapping, and every
 * frame must lie above the one below it, so a wrong row or a clobbered %rbp ends the walk; it
 * never makes it loop or wander.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "live/cfi.h"
#include "live/safe_open.h"
#include "live/ustack.h"
#include "util/clock.h"
#include "util/search.h"

struct uobj {
	uint64_t dev, ino;
	struct lt_unwind_row *rows;	/* NULL: no table (none to build, or it failed) */
	size_t n;
	struct cfi_build *build;	/* its table being built */
};

struct ustack {
	int pid;
	struct uobj objs[USTACK_MAX_OBJECTS];
	size_t n_objs;
	size_t n_rows;			/* of all tables: at most USTACK_MAX_ROWS */
};

int ustack__new(struct ustack **out, int pid)
{
	struct ustack *u = calloc(1, sizeof(*u));

	if (!u)
		return -ENOMEM;
	u->pid = pid;
	*out = u;
	return 0;
}

void ustack__free(struct ustack *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->n_objs; i++) {
		free(u->objs[i].rows);
		cfi__cancel(u->objs[i].build);
	}
	free(u);
}

static struct uobj *obj_of(struct ustack *u, uint64_t dev, uint64_t ino)
{
	for (size_t i = 0; i < u->n_objs; i++)
		if (u->objs[i].dev == dev && u->objs[i].ino == ino)
			return &u->objs[i];
	return NULL;
}

/* A mapping of an object file (not anonymous, not [vdso] and the like). */
static bool file_mapping(const struct proc_map *m)
{
	return m->executable && m->ino && m->path && m->path[0] != '[';
}

/* Go on building o's table until deadline_ns; keep it when done and there is room. */
static void build_step(struct ustack *u, struct uobj *o, uint64_t deadline_ns)
{
	struct cfi_table t = {};
	int err = cfi__step(o->build, deadline_ns, &t);

	if (err == -EINPROGRESS)
		return;
	o->build = NULL;
	if (!err && t.n <= USTACK_MAX_ROWS - u->n_rows) {
		o->rows = t.rows;
		o->n = t.n;
		u->n_rows += t.n;
		t.rows = NULL;
	}
	cfi__free(&t);
}

size_t ustack__prepare(struct ustack *u, const struct proc_maps *maps, uint64_t budget_ns)
{
	uint64_t deadline = monotonic_ns() + budget_ns;
	size_t with_table = 0;

	/* Tables begun at an earlier scan first. */
	for (size_t i = 0; i < u->n_objs && monotonic_ns() < deadline; i++)
		if (u->objs[i].build)
			build_step(u, &u->objs[i], deadline);
	for (size_t i = 0; i < maps->n && monotonic_ns() < deadline; i++) {
		const struct proc_map *m = &maps->v[i];
		const struct file_id want = { .dev = m->dev, .ino = m->ino };
		struct uobj *o;
		int fd, err;

		if (!file_mapping(m) || obj_of(u, m->dev, m->ino) || u->n_objs == USTACK_MAX_OBJECTS)
			continue;
		o = &u->objs[u->n_objs++];
		*o = (struct uobj){ .dev = m->dev, .ino = m->ino };
		if (safe_open__mapped(u->pid, m->start, m->end, m->path, &want, &fd))
			continue;
		err = cfi__start(fd, &o->build);
		close(fd);
		if (!err)
			build_step(u, o, deadline);
	}
	for (size_t i = 0; i < u->n_objs; i++)
		with_table += u->objs[i].rows != NULL;
	return with_table;
}

/* The row covering pc of mapping m (file offsets), or NULL (none, or LT_UW_NONE). */
static const struct lt_unwind_row *row_at(struct ustack *u, const struct proc_map *m,
					  uint64_t pc)
{
	const struct uobj *o = file_mapping(m) ? obj_of(u, m->dev, m->ino) : NULL;
	uint64_t off = pc - m->start + m->file_offset;
	size_t lo = 0, hi;

	if (!o || !o->rows || off >> 32)
		return NULL;
	/* The last row at or below off. */
	hi = o->n;
	lo = SEARCH_FIRST(hi, mid, o->rows[mid].pc <= off);
	if (!lo || o->rows[lo - 1].kind == LT_UW_NONE)
		return NULL;
	return &o->rows[lo - 1];
}

static int read_u64(ustack_read_fn read, void *ctx, uint64_t addr, uint64_t *v)
{
	return read(ctx, addr, v, sizeof(*v));
}

int ustack__step(const struct lt_unwind_row *row, struct ustack_regs *r, ustack_read_fn read,
		 void *ctx, struct ustack_frame *f)
{
	uint64_t cfa, ret = 0, bp = r->bp, at;
	bool signal = false;

	if (!row) {
		uint64_t fr[2];

		if (!r->bp || (r->bp & 7) || r->bp < r->sp || read(ctx, r->bp, fr, sizeof(fr)))
			return -ENOENT;
		bp = fr[0];
		ret = fr[1];
		cfa = r->bp + sizeof(fr);
	} else {
		switch (row->kind) {
		case LT_UW_RSP:
			cfa = r->sp + 8 * (int64_t)row->cfa;
			break;
		case LT_UW_RBP:
			if (!r->bp)
				return -ENOENT;
			cfa = r->bp + 8 * (int64_t)row->cfa;
			break;
		case LT_UW_PLT:
			cfa = r->sp + 8 * (int64_t)row->cfa + ((r->pc & 15) >= (uint8_t)row->rbp ? 8 : 0);
			break;
		case LT_UW_SIGNAL:
			at = r->sp + 8 * (int64_t)row->cfa;
			if (read_u64(read, ctx, at, &cfa) || read_u64(read, ctx, at + 8, &ret) ||
			    read_u64(read, ctx, r->sp + 8 * (int64_t)row->rbp, &bp))
				return -ENOENT;
			signal = true;
			break;
		default:		/* LT_UW_OUTERMOST */
			return -ENOENT;
		}
		if (!signal) {
			if (read_u64(read, ctx, cfa - 8, &ret))
				return -ENOENT;
			/* PLT rows keep %rbp; in others rbp says where it was saved. */
			if (row->kind == LT_UW_PLT || !row->rbp)
				bp = r->bp;
			else if (row->rbp == LT_UW_RBP_LOST)
				bp = 0;
			else if (read_u64(read, ctx, cfa + 8 * (int64_t)row->rbp, &bp))
				return -ENOENT;
		}
	}
	if (!ret || cfa <= r->sp)
		return -ENOENT;
	*f = (struct ustack_frame){ .pc = r->pc, .sp = r->sp, .cfa = cfa, .ret = ret,
				    .by_cfi = row != NULL };
	*r = (struct ustack_regs){ .pc = ret, .sp = cfa, .bp = bp, .exact = signal };
	return 0;
}

struct stopped_mem {
	const struct ptrace_stop *ps;
	const struct ustack_fixup *fix;
};

/* Memory of the stopped process, with the fixed-up return address read as its original. */
static int read_stopped(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct stopped_mem *sm = ctx;
	size_t got = 0;
	int err = ptrace_stop__read(sm->ps, addr, buf, len, &got);

	if (err)
		return err;
	if (got != len)
		return -EFAULT;
	if (sm->fix && sm->fix->slot >= addr && sm->fix->slot + 8 <= addr + len)
		memcpy((char *)buf + (sm->fix->slot - addr), &sm->fix->ra, 8);
	return 0;
}

/* Code a walk may go on in: executable, not the uretprobe trampoline's page. */
static bool is_code(const struct proc_maps *maps, uint64_t pc)
{
	const struct proc_map *m = procmaps__find(maps, pc);

	return m && m->executable && !(m->path && !strcmp(m->path, "[uprobes]"));
}

size_t ustack__walk(struct ustack *u, const struct proc_maps *maps, const struct ptrace_stop *ps,
		    const struct ptrace_thread *t, const struct ustack_fixup *fix,
		    struct ustack_frame *f, size_t max)
{
	struct ustack_regs r = { .pc = t->regs.rip, .sp = t->regs.rsp, .bp = t->regs.rbp,
				 .exact = true };
	struct stopped_mem sm = { .ps = ps, .fix = fix };
	size_t n = 0;

	while (n < max && n < USTACK_MAX_FRAMES) {
		uint64_t at = r.exact ? r.pc : r.pc - 1;
		const struct proc_map *m = procmaps__find(maps, at);
		const struct lt_unwind_row *row = m ? row_at(u, m, at) : NULL;

		if (!m || !m->executable || ustack__step(row, &r, read_stopped, &sm, &f[n]) ||
		    !is_code(maps, r.exact ? r.pc : r.pc - 1))
			break;
		n++;
	}
	return n;
}
