// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * model.c - folds samples into long-lived processes and sites.
 *
 * Processes are images (pid, gen): an exec starts a new one, so the old program's sites never
 * mix with the new one's.  Sites keep their resolved stack (resolved once: a site's stack never
 * changes) and a bounded history.  Images that exited are kept for exactly one more report,
 * then reaped, and the collector purges their kernel records.  Arrays are kept sorted and
 * searched with bsearch; memory is bounded by the kernel maps' sizes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model.h"
#include "cli/options.h"

const char *const drop_names[LT_DROP__COUNT] = {
	[LT_DROP_ALLOC_MAP_FULL] = "alloc_map_full",
	[LT_DROP_SITE_MAP_FULL] = "site_map_full",
	[LT_DROP_STACK_MAP_FULL] = "stack_map_full",
	[LT_DROP_INFLIGHT_FULL] = "inflight_map_full",
	[LT_DROP_PROC_MAP_FULL] = "proc_map_full",
	[LT_DROP_RINGBUF_FULL] = "ringbuf_full",
	[LT_DROP_LOST_RETURN] = "lost_return",
	[LT_DROP_FD_MAP_FULL] = "fd_map_full",
	[LT_DROP_BPF_RECURSION] = "bpf_recursion",
};

const char *const counter_names[LT_CNT__COUNT] = {
	[LT_CNT_EVENTS] = "events",
	[LT_CNT_FREE_UNKNOWN] = "free_unknown",
	[LT_CNT_NESTED] = "nested",
	[LT_CNT_FAILED_ALLOCS] = "failed_allocs",
	[LT_CNT_FD_EVENTS] = "fd_events",
	[LT_CNT_SELF_HITS] = "self_hits",
	[LT_CNT_SELF_SYSCALLS] = "self_syscalls",
};

const char *const process_flag_names[4] = {
	"heap_growth", "fd_growth", "rss_growth", "rss_growth_unexplained",
};

void model__init(struct model *m, double interval_s, unsigned int resources, uint32_t window)
{
	memset(m, 0, sizeof(*m));
	m->interval_s = interval_s;
	m->window = window;
	m->resources = resources;
	m->start_ns = monotonic_ns();
	m->now_ns = m->start_ns;
}

static void site_free(struct site *s)
{
	series__free(&s->hist);
	for (uint32_t i = 0; i < s->n_frames; i++)
		sym_frame__clear(&s->frames[i]);
	free(s->frames);
}

static void process_free(struct process *p)
{
	series__free(&p->hist_heap);
	series__free(&p->hist_fds);
	series__free(&p->hist_rss);
	series__free(&p->hist_vm);
	series__free(&p->hist_fd_count);
	series__free(&p->hist_threads);
	for (size_t i = 0; i < p->n_sites; i++)
		site_free(&p->sites[i]);
	free(p->sites);
	free(p->cmdline);
}

void model__free(struct model *m)
{
	for (size_t i = 0; i < m->n_procs; i++)
		process_free(&m->procs[i]);
	free(m->procs);
	memset(m, 0, sizeof(*m));
}

static int cmp_proc(uint32_t pid, uint64_t gen, const struct process *p)
{
	if (pid != p->pid)
		return pid < p->pid ? -1 : 1;
	if (gen != p->gen)
		return gen < p->gen ? -1 : 1;
	return 0;
}

/* Index of (pid, gen), or of where it would go, in *at; true if present. */
static bool proc_search(const struct model *m, uint32_t pid, uint64_t gen, size_t *at)
{
	size_t lo = 0, hi = m->n_procs;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = cmp_proc(pid, gen, &m->procs[mid]);

		if (!c) {
			*at = mid;
			return true;
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	*at = lo;
	return false;
}

struct process *model__find(struct model *m, uint32_t pid, uint64_t gen)
{
	size_t at;

	return proc_search(m, pid, gen, &at) ? &m->procs[at] : NULL;
}

struct process *model__find_pid(struct model *m, uint32_t pid)
{
	for (size_t i = 0; i < m->n_procs; i++)
		if (m->procs[i].pid == pid && !m->procs[i].exited)
			return &m->procs[i];
	return NULL;
}

struct process *model__process(struct model *m, uint32_t pid, uint64_t gen)
{
	struct process *p;
	size_t at;

	if (proc_search(m, pid, gen, &at))
		return &m->procs[at];
	if (m->n_procs == m->cap_procs) {
		size_t cap = m->cap_procs ? m->cap_procs * 2 : 16;
		struct process *v = realloc(m->procs, cap * sizeof(*v));

		if (!v)
			return NULL;
		m->procs = v;
		m->cap_procs = cap;
	}
	memmove(&m->procs[at + 1], &m->procs[at], (m->n_procs - at) * sizeof(*p));
	m->n_procs++;
	p = &m->procs[at];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->gen = gen;
	p->first_seen_ns = monotonic_ns();
	if (series__init(&p->hist_heap, m->window) || series__init(&p->hist_fds, m->window) ||
	    series__init(&p->hist_rss, m->window) || series__init(&p->hist_vm, m->window) ||
	    series__init(&p->hist_fd_count, m->window) ||
	    series__init(&p->hist_threads, m->window)) {
		process_free(p);
		memmove(&m->procs[at], &m->procs[at + 1], (m->n_procs - at - 1) * sizeof(*p));
		m->n_procs--;
		return NULL;
	}
	return p;
}

void model__mark_exited(struct model *m, uint32_t pid, uint64_t gen)
{
	struct process *p = model__find(m, pid, gen);

	if (!p)
		return;
	p->exited = true;
	/* Its last counters describe a process that no longer exists: unknown now. */
	p->counters.valid = false;
}

void model__reported(struct model *m)
{
	for (size_t i = 0; i < m->n_procs; i++)
		if (m->procs[i].exited)
			m->procs[i].exit_reported = true;
}

size_t model__reap(struct model *m, struct dead_image **dead)
{
	size_t n = 0, keep = 0;

	*dead = NULL;
	for (size_t i = 0; i < m->n_procs; i++)
		n += m->procs[i].exit_reported;
	if (!n)
		return 0;
	*dead = calloc(n, sizeof(**dead));
	n = 0;
	for (size_t i = 0; i < m->n_procs; i++) {
		struct process *p = &m->procs[i];

		if (!p->exit_reported) {
			m->procs[keep++] = *p;
			continue;
		}
		if (*dead)
			(*dead)[n++] = (struct dead_image){ .tgid = p->pid, .gen = p->gen };
		process_free(p);
	}
	m->n_procs = keep;
	return n;
}

static int cmp_site(const struct site *s, uint32_t kind, uint64_t hash)
{
	if (s->key.kind != kind)
		return s->key.kind < kind ? -1 : 1;
	if (s->key.stack_hash != hash)
		return s->key.stack_hash < hash ? -1 : 1;
	return 0;
}

/* The site (kind, hash) of p, or NULL. */
static struct site *site_find(struct process *p, uint32_t kind, uint64_t hash)
{
	size_t lo = 0, hi = p->n_sites;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = cmp_site(&p->sites[mid], kind, hash);

		if (!c)
			return &p->sites[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static struct site *site_find_or_add(struct process *p, uint32_t kind, uint64_t hash,
				     uint32_t window, bool *added)
{
	size_t lo = 0, hi = p->n_sites;
	struct site *s;

	*added = false;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = cmp_site(&p->sites[mid], kind, hash);

		if (!c)
			return &p->sites[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (p->n_sites == p->cap_sites) {
		size_t cap = p->cap_sites ? p->cap_sites * 2 : 8;
		struct site *v = realloc(p->sites, cap * sizeof(*v));

		if (!v)
			return NULL;
		p->sites = v;
		p->cap_sites = cap;
	}
	memmove(&p->sites[lo + 1], &p->sites[lo], (p->n_sites - lo) * sizeof(*s));
	p->n_sites++;
	s = &p->sites[lo];
	memset(s, 0, sizeof(*s));
	s->key.kind = kind;
	s->key.stack_hash = hash;
	if (series__init(&s->hist, window)) {
		memmove(&p->sites[lo], &p->sites[lo + 1], (p->n_sites - lo - 1) * sizeof(*s));
		p->n_sites--;
		return NULL;
	}
	*added = true;
	return s;
}

int64_t site__outstanding(const struct site *s)
{
	return s->val.outstanding_count - (int64_t)s->repaired;
}

uint64_t site__frees(const struct site *s)
{
	return s->val.frees + s->repaired;
}

/* Fold a reconciliation with /proc/PID/fd into p's fd sites. */
static void apply_census(struct process *p, const struct fd_census *fc)
{
	for (size_t i = 0; i < p->n_sites; i++) {
		struct site *s = &p->sites[i];

		if (s->kind != LT_KIND_FD)
			continue;
		memset(s->fd_types, 0, sizeof(s->fd_types));
		s->n_fd_samples = 0;
	}
	for (size_t i = 0; i < fc->n_repaired; i++) {
		struct site *s = site_find(p, LT_KIND_FD, fc->repaired[i]);

		if (s)
			s->repaired++;
		p->fd_repaired++;
	}
	for (size_t i = 0; i < fc->n_open; i++) {
		const struct fd_seen *f = &fc->open[i];
		struct site *s = site_find(p, LT_KIND_FD, f->stack_hash);

		if (!s)
			continue;
		s->fd_types[f->type]++;
		if (s->n_fd_samples < FD_SAMPLES && f->target[0]) {
			bool dup = false;

			for (uint32_t k = 0; k < s->n_fd_samples; k++)
				dup |= !strcmp(s->fd_samples[k], f->target);
			if (!dup)
				snprintf(s->fd_samples[s->n_fd_samples++], sizeof(s->fd_samples[0]),
					 "%s", f->target);
		}
	}
	p->fd_untracked = fc->untracked;
	p->fd_census_valid = fc->valid;
}

static void register_image(struct process *p, struct symbolizer *sym)
{
	if (p->image_registered || p->exited || p->maps_final)
		return;
	if (!symbolizer__add_image(sym, p->gen, p->pid)) {
		p->image_registered = true;
		p->maps_read_ns = monotonic_ns();
	}
}

/* Resolve a new site's frames; re-read the maps once per interval if an address is unmapped. */
static void resolve_site(struct process *p, struct site *s, struct collector *c,
			 struct symbolizer *sym)
{
	uint64_t ips[LT_MAX_STACK_DEPTH];
	uint32_t n = collector__stack(c, s->key.stack_hash, ips, LT_MAX_STACK_DEPTH);
	bool missing = false;

	s->resolved = true;
	s->frames = n ? calloc(n, sizeof(*s->frames)) : NULL;
	if (!s->frames)
		return;
	s->n_frames = n;
	for (int pass = 0; pass < 2; pass++) {
		missing = false;
		for (uint32_t i = 0; i < n; i++) {
			if (s->frames[i].symbol || (pass && s->frames[i].module))
				continue;
			sym_frame__clear(&s->frames[i]);
			if (symbolizer__resolve(sym, p->gen, ips[i], true, &s->frames[i]) == -ENOENT)
				missing = true;
		}
		if (!missing || p->refreshed || p->exited || p->maps_final)
			break;
		p->refreshed = true;
		if (symbolizer__add_image(sym, p->gen, p->pid))
			break;
		p->image_registered = true;
	}
}

static void push_history(struct site *s, uint64_t ts)
{
	series__push(&s->hist, ts, s->kind == LT_KIND_FD ? site__outstanding(s)
							  : s->val.outstanding_bytes);
}

/* The process's own series, once its totals and counters are known. */
static void push_process_history(struct process *p, uint64_t ts)
{
	series__push(&p->hist_heap, ts, p->heap_outstanding_bytes);
	series__push(&p->hist_fds, ts, p->fd_outstanding);
	if (!p->counters.valid)
		return;
	series__push(&p->hist_rss, ts, p->counters.rss_bytes);
	series__push(&p->hist_vm, ts, p->counters.vm_bytes);
	series__push(&p->hist_fd_count, ts, p->counters.fd_count);
	series__push(&p->hist_threads, ts, p->counters.threads);
}

bool model__visible(const struct process *p)
{
	return p->heap_allocs > 0 || p->fd_opens > 0 || p->target;
}

void model__refresh_identity(struct process *p)
{
	char buf[4096];

	if (!p->comm[0])
		procfs__comm(p->pid, p->comm, sizeof(p->comm));
	if (!procfs__cmdline(p->pid, buf, sizeof(buf))) {
		free(p->cmdline);
		p->cmdline = strdup(buf);
	}
	if (!p->start_ticks)
		procfs__start_ticks(p->pid, &p->start_ticks);
}

int model__update(struct model *m, const struct sample *s, struct collector *c,
		  struct symbolizer *sym)
{
	uint64_t t0 = monotonic_ns();
	struct process *p = NULL;

	m->now_ns = s->ts_ns;
	memcpy(m->drops, s->drops, sizeof(m->drops));
	memcpy(m->counters, s->counters, sizeof(m->counters));
	for (size_t i = 0; i < m->n_procs; i++) {
		m->procs[i].refreshed = false;
		for (size_t j = 0; j < m->procs[i].n_sites; j++)
			m->procs[i].sites[j].seen = false;
	}

	for (size_t i = 0; i < s->n_sites; i++) {
		const struct raw_site *r = &s->sites[i];
		struct site *site;
		bool added;

		if (!p || p->pid != r->key.tgid || p->gen != r->key.gen) {
			p = model__process(m, r->key.tgid, r->key.gen);
			if (!p)
				return -ENOMEM;
			register_image(p, sym);
		}
		site = site_find_or_add(p, r->key.kind, r->key.stack_hash, m->window, &added);
		if (!site)
			return -ENOMEM;
		site->key = r->key;
		site->val = r->val;
		site->kind = r->key.kind;
		site->seen = true;
		if (!site->resolved)
			resolve_site(p, site, c, sym);
		push_history(site, s->ts_ns);
	}

	for (size_t i = 0; i < m->n_procs; i++) {
		struct process *q = &m->procs[i];
		size_t keep = 0;

		q->heap_outstanding_bytes = q->heap_outstanding_count = 0;
		q->heap_allocs = q->heap_frees = 0;
		for (size_t j = 0; j < q->n_sites; j++) {
			struct site *st = &q->sites[j];

			/* A site the kernel no longer has was purged: drop it too. */
			if (!st->seen) {
				site_free(st);
				continue;
			}
			q->sites[keep++] = *st;
		}
		q->n_sites = keep;
		if (!q->exited) {
			struct fd_census fc;

			register_image(q, sym);
			model__refresh_identity(q);
			if (procfs__counters(q->pid, &q->counters))
				q->counters.valid = false;
			if ((m->resources & RES_FD) &&
			    !collector__fd_census(c, s, q->pid, q->gen, &fc)) {
				apply_census(q, &fc);
				fd_census__free(&fc);
			}
		}
		q->fd_outstanding = 0;
		q->fd_opens = q->fd_closes = 0;
		for (size_t j = 0; j < q->n_sites; j++) {
			struct site *st = &q->sites[j];

			if (st->kind == LT_KIND_FD) {
				q->fd_outstanding += site__outstanding(st);
				q->fd_opens += st->val.allocs;
				q->fd_closes += site__frees(st);
				continue;
			}
			q->heap_outstanding_bytes += st->val.outstanding_bytes;
			q->heap_outstanding_count += st->val.outstanding_count;
			q->heap_allocs += st->val.allocs;
			q->heap_frees += st->val.frees;
		}
		if (!q->exited)
			push_process_history(q, s->ts_ns);
	}
	m->collect_ms = s->read_ms + (monotonic_ns() - t0) / 1e6;
	return 0;
}

uint64_t model__events(const struct model *m)
{
	return m->counters[LT_CNT_EVENTS];
}

uint64_t model__dropped(const struct model *m)
{
	uint64_t sum = 0;

	for (int i = 0; i < LT_DROP__COUNT; i++)
		sum += m->drops[i];
	return sum;
}

double model__elapsed_s(const struct model *m)
{
	return (m->now_ns - m->start_ns) / 1e9;
}

static int cmp_proc_outstanding(const void *a, const void *b)
{
	const struct process *x = *(struct process *const *)a, *y = *(struct process *const *)b;

	if (!!x->flags != !!y->flags)
		return x->flags ? -1 : 1;
	if (x->heap_outstanding_bytes != y->heap_outstanding_bytes)
		return x->heap_outstanding_bytes > y->heap_outstanding_bytes ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->gen < y->gen ? -1 : x->gen > y->gen;
}

static int cmp_site_outstanding(const void *a, const void *b)
{
	const struct site *x = *(struct site *const *)a, *y = *(struct site *const *)b;

	if (x->flagged != y->flagged)
		return x->flagged ? -1 : 1;
	if (x->flagged && x->trend_z != y->trend_z)
		return x->trend_z > y->trend_z ? -1 : 1;
	if (site__outstanding(x) > 0 && site__outstanding(y) <= 0)
		return -1;
	if (site__outstanding(y) > 0 && site__outstanding(x) <= 0)
		return 1;
	if (x->val.outstanding_bytes != y->val.outstanding_bytes)
		return x->val.outstanding_bytes > y->val.outstanding_bytes ? -1 : 1;
	if (site__outstanding(x) != site__outstanding(y))
		return site__outstanding(x) > site__outstanding(y) ? -1 : 1;
	if (x->val.allocs != y->val.allocs)
		return x->val.allocs > y->val.allocs ? -1 : 1;
	return x->key.stack_hash < y->key.stack_hash ? -1 : 1;
}

struct process **model__procs_by_outstanding(const struct model *m, size_t *n)
{
	struct process **v = malloc((m->n_procs + 1) * sizeof(*v));

	*n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < m->n_procs; i++)
		v[i] = &m->procs[i];
	qsort(v, m->n_procs, sizeof(*v), cmp_proc_outstanding);
	*n = m->n_procs;
	return v;
}

struct site **model__sites_by_outstanding(const struct process *p)
{
	struct site **v = malloc((p->n_sites + 1) * sizeof(*v));

	if (!v)
		return NULL;
	for (size_t i = 0; i < p->n_sites; i++)
		v[i] = &p->sites[i];
	qsort(v, p->n_sites, sizeof(*v), cmp_site_outstanding);
	return v;
}
