// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * sample.c - the memory of a sample: its growing arrays and what their entries own.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/sample.h"
#include "util/vec.h"
#include "util/search.h"

/* Room for one more element of size `size` in *v; a pointer to it, zeroed, or NULL. */
static void *grow(void **v, size_t *n, size_t *cap, size_t size)
{
	char *p;

	if (vec__reserve(v, cap, *n + 1, size, 16, false))
		return NULL;
	p = (char *)*v + (*n)++ * size;
	memset(p, 0, size);
	return p;
}

struct sample_event *sample__add_event(struct sample *s)
{
	return grow((void **)&s->events, &s->n_events, &s->cap_events, sizeof(*s->events));
}

struct sample_proc *sample__add_proc(struct sample *s)
{
	return grow((void **)&s->procs, &s->n_procs, &s->cap_procs, sizeof(*s->procs));
}

struct sample_frames *sample__add_frames(struct sample *s)
{
	return grow((void **)&s->frames, &s->n_frames, &s->cap_frames, sizeof(*s->frames));
}

struct sample_scan *sample__add_scan(struct sample *s)
{
	return grow((void **)&s->scans, &s->n_scans, &s->cap_scans, sizeof(*s->scans));
}

struct sym_missing *sample__add_missing(struct sample *s)
{
	return grow((void **)&s->missing, &s->n_missing, &s->cap_missing, sizeof(*s->missing));
}

struct lastref_result *sample__add_lastref(struct sample *s)
{
	return grow((void **)&s->lastref, &s->n_lastref, &s->cap_lastref, sizeof(*s->lastref));
}

int sample_site__cmp(const void *a, const void *b)
{
	const struct sample_site *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->gen != y->gen)
		return x->gen < y->gen ? -1 : 1;
	return x->stack_hash < y->stack_hash ? -1 : x->stack_hash > y->stack_hash;
}

struct sample_proc *sample__find_proc(const struct sample *s, uint32_t pid, uint64_t gen)
{
	size_t at = SEARCH_FIRST(s->n_procs, mid, s->procs[mid].pid < pid ||
				 (s->procs[mid].pid == pid && s->procs[mid].gen < gen));

	return at < s->n_procs && s->procs[at].pid == pid && s->procs[at].gen == gen ?
	       &s->procs[at] : NULL;
}

void sample_identity__clear(struct sample_identity *id)
{
	free(id->cmdline);
	free(id->alloc_module);
	free(id->cgroup);
	memset(id, 0, sizeof(*id));
}

void fd_census__free(struct fd_census *fc)
{
	free(fc->open);
	free(fc->repaired);
	memset(fc, 0, sizeof(*fc));
}

bool sample_fd__same_record(const struct sample_fd *seen, const struct sample_fd *now)
{
	return seen->pid == now->pid && seen->fd == now->fd && seen->gen == now->gen &&
	       seen->stack_hash == now->stack_hash && seen->ts_ns == now->ts_ns;
}

enum proc_fate proc_fate_of(uint64_t known_ticks, int read_err, uint64_t now_ticks)
{
	if (read_err == -ENOENT || read_err == -ESRCH)
		return PROC_GONE;
	if (read_err || !known_ticks || !now_ticks)
		return PROC_ALIVE;
	return now_ticks == known_ticks ? PROC_ALIVE : PROC_REUSED;
}

void sample__reset(struct sample *s)
{
	for (size_t i = 0; i < s->n_procs; i++) {
		sample_identity__clear(&s->procs[i].id);
		fd_census__free(&s->procs[i].census);
	}
	for (size_t i = 0; i < s->n_frames; i++) {
		for (uint32_t k = 0; k < s->frames[i].n_frames; k++)
			sym_frame__clear(&s->frames[i].frames[k]);
		free(s->frames[i].frames);
	}
	for (size_t i = 0; i < s->n_scans; i++)
		scan_result__free(&s->scans[i].result);
	for (size_t i = 0; i < s->n_missing; i++)
		sym_missing__clear(&s->missing[i]);
	for (size_t i = 0; i < s->n_lastref; i++)
		lastref_result__free(&s->lastref[i]);
	s->n_events = s->n_procs = s->n_frames = s->n_scans = s->n_missing = s->n_lastref = 0;
	s->stacks_pending = 0;
	s->reconciled_exited = s->reconciled_reused = 0;
	memset(&s->timing, 0, sizeof(s->timing));
}

void sample__free(struct sample *s)
{
	sample__reset(s);
	free(s->sites);
	free(s->fds);
	free(s->events);
	free(s->procs);
	free(s->frames);
	free(s->scans);
	free(s->calls);
	free(s->missing);
	free(s->lastref);
	memset(s, 0, sizeof(*s));
}
