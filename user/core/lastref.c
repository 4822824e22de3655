// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * lastref.c - the reference bookkeeping of `leaktop lastref` (see lastref.h): a pure state
 * machine over the followed blocks, their watchable references and what ended them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/lastref.h"

const char *const lr_ref_kind_names[LR_REF__COUNT] = {
	[LR_REF_MEMORY] = "memory",
	[LR_REF_HEAP] = "heap",
	[LR_REF_STACK] = "stack",
	[LR_REF_REGISTER] = "register",
};

const char *const lr_verdict_names[LR_VERDICT__COUNT] = {
	[LR_PENDING] = "pending",
	[LR_OVERWRITTEN] = "overwritten",
	[LR_HOLDER_FREED] = "holder_freed",
	[LR_FRAME_RETURNED] = "frame_returned",
	[LR_REGISTER_ONLY] = "register_only",
	[LR_FREED] = "freed",
	[LR_UNRESOLVED] = "unresolved",
};

bool lastref__points_into(const struct lr_block *b, uint64_t v)
{
	if (b->alloc_meta && v == b->alloc_meta)
		return false;
	return v == b->addr || (v > b->addr && v - b->addr < b->size);
}

static bool same_place(const struct lr_ref *a, const struct lr_ref *b)
{
	return a->kind == b->kind && a->loc == b->loc &&
	       (a->kind != LR_REF_REGISTER || (a->tid == b->tid && a->reg == b->reg));
}

int lastref__add_ref(struct lr_block *b, const struct lr_ref *r)
{
	if (r->loc >= b->addr && r->loc - b->addr < b->size)
		return -EINVAL;
	for (uint32_t i = 0; i < b->n_refs; i++)
		if (same_place(&b->refs[i], r))
			return -EEXIST;
	if (b->n_refs == LR_MAX_REFS) {
		b->refs_over++;
		return -ENOSPC;
	}
	b->refs[b->n_refs] = *r;
	b->refs[b->n_refs].watched = false;
	b->refs[b->n_refs].last_watched_ns = 0;
	b->n_refs++;
	return 0;
}

/* Take refs[i] out; when none is left (and none was left out), b goes to confirmation. */
static size_t drop_ref(struct lr_block *b, uint32_t i, const struct lr_cause *c,
		       enum lr_verdict v)
{
	struct lr_ref gone = b->refs[i];

	b->refs[i] = b->refs[--b->n_refs];
	if (b->n_refs || b->refs_over)
		return 0;
	b->cause = *c;
	b->cause.verdict = v;
	b->cause.ref = gone;
	b->state = LR_CONFIRM;
	return 1;
}

/*
 * The word at loc now holds value, outside every block it pointed into: drop that reference
 * of each block it was one of.  reread: the value was read at a rotation, not caught by a
 * watchpoint (only unwatched words count, and the cause says since when it was unwatched).
 */
static size_t overwritten(struct lr_block *b, size_t n, uint64_t loc, uint64_t value,
			  const struct lr_cause *c, bool reread)
{
	size_t moved = 0;

	for (size_t k = 0; k < n; k++) {
		if (b[k].state != LR_TRACKING || lastref__points_into(&b[k], value))
			continue;
		for (uint32_t i = 0; i < b[k].n_refs; i++) {
			const struct lr_ref *r = &b[k].refs[i];
			struct lr_cause u = *c;

			if (r->loc != loc || (reread && r->watched))
				continue;
			u.value = value;
			if (reread) {
				u.unwatched = true;
				u.since_ns = r->unwatched_ns;
			}
			moved += drop_ref(&b[k], i, &u, LR_OVERWRITTEN);
			break;
		}
	}
	return moved;
}

size_t lastref__on_write(struct lr_block *b, size_t n, uint64_t loc, uint64_t value,
			 const struct lr_cause *c)
{
	return overwritten(b, n, loc, value, c, false);
}

size_t lastref__on_reread(struct lr_block *b, size_t n, uint64_t loc, uint64_t value,
			  const struct lr_cause *c)
{
	return overwritten(b, n, loc, value, c, true);
}

size_t lastref__on_return(struct lr_block *b, size_t n, uint32_t tid, uint64_t ret, uint64_t sp,
			  const struct lr_cause *c)
{
	size_t moved = 0;

	for (size_t k = 0; k < n; k++) {
		if (b[k].state != LR_TRACKING)
			continue;
		for (uint32_t i = 0; i < b[k].n_refs;) {
			const struct lr_ref *r = &b[k].refs[i];

			if (r->kind == LR_REF_STACK && r->tid == tid && r->frame_ret == ret &&
			    r->frame_cfa <= sp) {
				if (b[k].n_dead && b[k].dead_tid != tid)
					b[k].n_dead = 0;	/* one thread's: the latest */
				if (b[k].n_dead < LR_MAX_REFS)
					b[k].dead[b[k].n_dead++] = r->loc;
				b[k].dead_tid = tid;
				moved += drop_ref(&b[k], i, c, LR_FRAME_RETURNED);
				continue;	/* refs[i] is another one now */
			}
			i++;
		}
	}
	return moved;
}

size_t lastref__on_free(struct lr_block *b, size_t n, uint64_t addr, const struct lr_cause *c)
{
	size_t moved = 0;

	for (size_t k = 0; k < n; k++) {
		if (b[k].state == LR_DONE)
			continue;
		if (b[k].addr == addr) {
			b[k].cause = *c;
			b[k].cause.verdict = LR_FREED;
			b[k].state = LR_DONE;
			b[k].n_refs = 0;
			moved++;
			continue;
		}
		if (b[k].state != LR_TRACKING)
			continue;
		for (uint32_t i = 0; i < b[k].n_refs;) {
			if (b[k].refs[i].kind == LR_REF_HEAP && b[k].refs[i].holder == addr) {
				moved += drop_ref(&b[k], i, c, LR_HOLDER_FREED);
				continue;
			}
			i++;
		}
	}
	return moved;
}

/* Is f the same place as r, in the same frame when r is a stack word in a known frame? */
static bool still_there(const struct lr_ref *r, const struct lr_ref *f)
{
	if (r->loc != f->loc || r->kind != f->kind)
		return false;
	if (r->kind != LR_REF_STACK)
		return r->kind != LR_REF_HEAP || r->holder == f->holder;
	return r->tid == f->tid && (!r->frame_ret ||
		(r->frame_ret == f->frame_ret && r->frame_cfa == f->frame_cfa));
}

size_t lastref__verify(struct lr_block *b, const struct lr_ref *found, size_t n_found,
		       uint64_t now_ns)
{
	size_t moved = 0;

	for (uint32_t i = 0; b->state == LR_TRACKING && i < b->n_refs;) {
		struct lr_ref *r = &b->refs[i];
		struct lr_cause c = { .at_ns = now_ns, .unwatched = true,
				      .since_ns = r->unwatched_ns };
		enum lr_verdict v = LR_OVERWRITTEN;
		bool same = false, moved_frame = false;

		for (size_t j = 0; j < n_found && !same; j++) {
			same = still_there(r, &found[j]);
			moved_frame |= r->kind == LR_REF_STACK && r->frame_ret &&
				       found[j].loc == r->loc && found[j].tid == r->tid;
		}
		if (same) {
			r->unwatched_ns = now_ns;	/* last known good */
			i++;
			continue;
		}
		if (moved_frame) {
			/* Its word lies in another frame now: its own returned. */
			v = LR_FRAME_RETURNED;
			if (b->n_dead && b->dead_tid != r->tid)
				b->n_dead = 0;
			if (b->n_dead < LR_MAX_REFS)
				b->dead[b->n_dead++] = r->loc;
			b->dead_tid = r->tid;
		}
		moved += drop_ref(b, i, &c, v);
	}
	return moved;
}

/* Is r a word of a frame of b's that returned since the last scan? */
static bool dead_word(const struct lr_block *b, const struct lr_ref *r)
{
	if (r->kind != LR_REF_STACK || r->tid != b->dead_tid)
		return false;
	for (uint32_t i = 0; i < b->n_dead; i++)
		if (b->dead[i] == r->loc)
			return true;
	return false;
}

bool lastref__confirm(struct lr_block *b, const struct lr_ref *found, size_t n_found,
		      const struct lr_ref *regs, size_t n_regs, uint64_t now_ns)
{
	b->scans++;
	for (size_t i = 0; i < n_found; i++)
		if (!dead_word(b, &found[i]))
			lastref__add_ref(b, &found[i]);
	b->n_dead = 0;
	if (b->n_refs || b->refs_over) {
		b->state = LR_TRACKING;
		return true;
	}
	if (n_regs) {
		memset(&b->cause, 0, sizeof(b->cause));
		b->cause.verdict = LR_REGISTER_ONLY;
		b->cause.ref = regs[0];
		b->cause.tid = regs[0].tid;
		b->cause.ip = regs[0].ip;
		b->cause.at_ns = now_ns;
	} else if (b->state != LR_CONFIRM || b->cause.verdict == LR_PENDING) {
		memset(&b->cause, 0, sizeof(b->cause));
		b->cause.verdict = LR_UNRESOLVED;
		b->cause.at_ns = now_ns;
	} else if (b->events_lost) {
		/* The event that named the cause may not be the one that ended it. */
		memset(&b->cause, 0, sizeof(b->cause));
		b->cause.verdict = LR_UNRESOLVED;
		b->cause.at_ns = now_ns;
		snprintf(b->cause.why, sizeof(b->cause.why), "unresolved: events lost (the watch "
			 "ring buffer was full): its last pointer went, where is not known");
	}
	b->state = LR_DONE;
	return false;
}

void lastref__give_up(struct lr_block *b, const char *why, uint64_t now_ns)
{
	if (b->state == LR_DONE)
		return;
	memset(&b->cause, 0, sizeof(b->cause));
	b->cause.verdict = LR_UNRESOLVED;
	b->cause.at_ns = now_ns;
	snprintf(b->cause.why, sizeof(b->cause.why), "%s", why);
	b->state = LR_DONE;
}

void lastref__events_lost(struct lr_block *b, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (b[k].state != LR_DONE)
			b[k].events_lost = true;
}

void lastref__end(struct lr_block *b, uint64_t now_ns)
{
	if (b->state == LR_DONE)
		return;
	if (b->state == LR_TRACKING || b->cause.verdict == LR_PENDING) {
		memset(&b->cause, 0, sizeof(b->cause));
		b->cause.verdict = LR_UNRESOLVED;
		b->cause.at_ns = now_ns;
	}
	b->state = LR_DONE;
}

size_t lastref__watchable(const struct lr_block *b, size_t n)
{
	size_t w = 0;

	for (size_t k = 0; k < n; k++)
		if (b[k].state == LR_TRACKING)
			w += b[k].n_refs;
	return w;
}

void lastref__mark(struct lr_ref *r, bool watched, uint64_t now_ns)
{
	if (watched && !r->watched)
		r->last_watched_ns = now_ns;
	if (!watched && r->watched)
		r->unwatched_ns = now_ns;
	r->watched = watched;
}

/* Is (k, i) already in out[0..n)? */
static bool picked(const struct lr_pick *out, size_t n, size_t k, uint32_t i)
{
	for (size_t j = 0; j < n; j++)
		if (out[j].block == k && out[j].ref == i)
			return true;
	return false;
}

size_t lastref__pick(const struct lr_block *b, size_t n, unsigned int slots, bool rotate,
		     struct lr_pick *out, size_t max)
{
	size_t got = 0;

	if (slots > max)
		slots = max;
	/* Kept: what is watched now, unless it is time to rotate (or everything fits). */
	if (!rotate && lastref__watchable(b, n) > slots) {
		for (size_t k = 0; k < n && got < slots; k++)
			for (uint32_t i = 0; b[k].state == LR_TRACKING && i < b[k].n_refs &&
			     got < slots; i++)
				if (b[k].refs[i].watched)
					out[got++] = (struct lr_pick){ k, i };
	}
	/* The rest: least recently watched first, in order on ties. */
	while (got < slots) {
		size_t best_k = 0;
		uint32_t best_i = 0;
		uint64_t best_t = UINT64_MAX;
		bool any = false;

		for (size_t k = 0; k < n; k++)
			for (uint32_t i = 0; b[k].state == LR_TRACKING && i < b[k].n_refs; i++) {
				uint64_t t = b[k].refs[i].last_watched_ns;

				/* On a rotation, what was watched until now goes last. */
				if (rotate && b[k].refs[i].watched)
					t = UINT64_MAX - 1;
				if (picked(out, got, k, i) || (any && t >= best_t))
					continue;
				best_k = k;
				best_i = i;
				best_t = t;
				any = true;
			}
		if (!any)
			break;
		out[got++] = (struct lr_pick){ best_k, best_i };
	}
	return got;
}

void lastref_result__free(struct lastref_result *r)
{
	sym_frame__clear(&r->alloc);
	sym_frame__clear(&r->frame);
	for (uint32_t i = 0; i < r->n_at; i++)
		sym_frame__clear(&r->at[i]);
	free(r->at);
	r->at = NULL;
	r->n_at = 0;
}

int lastref_result__copy(struct lastref_result *dst, const struct lastref_result *src)
{
	*dst = *src;
	dst->at = NULL;
	dst->n_at = 0;
	memset(&dst->alloc, 0, sizeof(dst->alloc));
	memset(&dst->frame, 0, sizeof(dst->frame));
	if (sym_frame__copy(&dst->alloc, &src->alloc) ||
	    sym_frame__copy(&dst->frame, &src->frame))
		goto fail;
	if (src->n_at) {
		dst->at = calloc(src->n_at, sizeof(*dst->at));
		if (!dst->at)
			goto fail;
	}
	for (; dst->n_at < src->n_at; dst->n_at++)
		if (sym_frame__copy(&dst->at[dst->n_at], &src->at[dst->n_at]))
			goto fail;
	return 0;
fail:
	lastref_result__free(dst);
	return -ENOMEM;
}
