// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * model.c - folds samples into long-lived processes and sites: a pure function of the model
 * and the sample (no system calls, no clock; the producers in live/ did the observing).
 *
 * Processes are images (pid, gen): an exec starts a new one, so the old program's sites never
 * mix with the new one's.  Sites keep their frames (a site's stack never changes; its frames
 * may arrive in a later sample than the site) and a bounded history.  Images that exited are
 * kept for exactly one more report, then reaped, and the caller purges their kernel records.
 * Arrays are kept sorted and searched by halving; memory is bounded by the kernel maps' sizes.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model.h"
#include "core/sample.h"
#include "util/vec.h"
#include "util/search.h"

const char *const drop_names[LT_DROP__COUNT] = {
	[LT_DROP_ALLOC_MAP_FULL] = "alloc_map_full",
	[LT_DROP_SITE_MAP_FULL] = "site_map_full",
	[LT_DROP_STACK_MAP_FULL] = "stack_map_full",
	[LT_DROP_INFLIGHT_FULL] = "inflight_map_full",
	[LT_DROP_PROC_MAP_FULL] = "proc_map_full",
	[LT_DROP_RINGBUF_FULL] = "ringbuf_full",
	[LT_DROP_LOST_RETURN] = "lost_return",
	[LT_DROP_FD_MAP_FULL] = "fd_map_full",
	[LT_DROP_MMAP_MAP_FULL] = "mmap_map_full",
	[LT_DROP_BPF_RECURSION] = "bpf_recursion",
	[LT_DROP_HEAP_SHARE] = "heap_share",
	[LT_DROP_FD_SHARE] = "fd_share",
	[LT_DROP_MMAP_SHARE] = "mmap_share",
	[LT_DROP_SITE_SHARE] = "site_share",
	[LT_DROP_WATCH_RINGBUF_FULL] = "watch_ringbuf_full",
};

const char *const share_names[LT_SHARE__COUNT] = {
	[LT_SHARE_HEAP] = "heap",
	[LT_SHARE_FD] = "fd",
	[LT_SHARE_MMAP] = "mmap",
	[LT_SHARE_SITE] = "sites",
};

const char *const counter_names[LT_CNT__COUNT] = {
	[LT_CNT_EVENTS] = "events",
	[LT_CNT_FREE_UNKNOWN] = "free_unknown",
	[LT_CNT_NESTED] = "nested",
	[LT_CNT_FAILED_ALLOCS] = "failed_allocs",
	[LT_CNT_FD_EVENTS] = "fd_events",
	[LT_CNT_SELF_HITS] = "self_hits",
	[LT_CNT_SELF_SYSCALLS] = "self_syscalls",
	[LT_CNT_STACK_TRUNCATED] = "stack_truncated",
	[LT_CNT_BYSTANDER_HITS] = "bystander_hits",
	[LT_CNT_COMPAT_SKIPPED] = "compat_skipped",
	[LT_CNT_MMAP_FILE_OR_SHARED] = "mmap_file_or_shared",
	[LT_CNT_MMAP_UNMATCHED] = "mmap_unmatched",
	[LT_CNT_MMAP_SCANS] = "mmap_scans",
	[LT_CNT_WALK_LOCK_BUSY] = "walk_lock_busy",
	[LT_CNT_UNWIND_CFI_FRAMES] = "unwind_cfi_frames",
	[LT_CNT_UNWIND_FP_FRAMES] = "unwind_fp_frames",
	[LT_CNT_UNWIND_NO_TABLE] = "unwind_no_table",
	[LT_CNT_HEAP_CALLS] = "heap_calls",
	[LT_CNT_CALIBRATION_HITS] = "calibration_hits",
	[LT_CNT_OOM_VICTIMS] = "oom_victims",
	[LT_CNT_WALK_LOCK_UNKNOWN] = "walk_lock_unknown",
	[LT_CNT_COMPAT_IMAGES] = "compat_images",
	[LT_CNT_FRAME_NO_FILE] = "frames_without_file",
	[LT_CNT_PY_FRAMES] = "python_frames",
	[LT_CNT_PY_NOT_HOLDER] = "python_walks_not_gil_holder",
	[LT_CNT_PY_READ_FAILED] = "python_walks_read_failed",
	[LT_CNT_PY_CODES] = "python_codes_copied",
	[LT_CNT_PY_CODE_FAILED] = "python_codes_unreadable",
};

void model__init(struct model *m, double interval_s, unsigned int resources, uint32_t window)
{
	memset(m, 0, sizeof(*m));
	m->interval_s = interval_s;
	m->window = window;
	m->resources = resources;
	m->heap_cost_pct = m->heap_exact_cost_pct = m->heap_budget_pct = m->heap_trap_ns = NAN;
	m->heap_traced_cost_pct = m->heap_bucket_fill = NAN;
}

static void site_free(struct site *s)
{
	series__free(&s->hist);
	for (uint32_t i = 0; i < s->n_frames; i++)
		sym_frame__clear(&s->frames[i]);
	free(s->frames);
}

static void scan_free(struct proc_scan *ps)
{
	if (!ps)
		return;
	scan_result__free(&ps->result);
	free(ps);
}

static void process_free(struct process *p)
{
	scan_free(p->scan);
	for (size_t i = 0; i < p->n_lastref; i++)
		lastref_result__free(&p->lastref[i]);
	free(p->lastref);
	series__free(&p->hist_heap);
	series__free(&p->hist_fds);
	series__free(&p->hist_rss);
	series__free(&p->hist_vm);
	series__free(&p->hist_fd_count);
	series__free(&p->hist_threads);
	series__free(&p->hist_anon);
	series__free(&p->hist_mmap);
	for (size_t i = 0; i < p->n_sites; i++)
		site_free(&p->sites[i]);
	free(p->sites);
	free(p->cmdline);
	free(p->alloc_module);
	free(p->cgroup);
}

void model__free(struct model *m)
{
	for (size_t i = 0; i < m->n_procs; i++)
		process_free(&m->procs[i]);
	free(m->procs);
	for (size_t i = 0; i < m->n_sym_missing; i++)
		sym_missing__clear(&m->sym_missing[i]);
	free(m->sym_missing);
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
	size_t n = m->n_procs;

	*at = SEARCH_FIRST(n, mid, cmp_proc(pid, gen, &m->procs[mid]) > 0);
	return *at < n && !cmp_proc(pid, gen, &m->procs[*at]);
}

static struct process *find_mut(struct model *m, uint32_t pid, uint64_t gen)
{
	size_t at;

	return proc_search(m, pid, gen, &at) ? &m->procs[at] : NULL;
}

const struct process *model__find(const struct model *m, uint32_t pid, uint64_t gen)
{
	size_t at;

	return proc_search(m, pid, gen, &at) ? &m->procs[at] : NULL;
}

const struct process *model__find_pid(const struct model *m, uint32_t pid)
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
	p = VEC_INSERT(m->procs, m->n_procs, m->cap_procs, at, 16);
	if (!p)
		return NULL;
	p->pid = pid;
	p->gen = gen;
	p->first_seen_ns = m->now_ns;
	p->heap_cost_pct = NAN;
	if (series__init(&p->hist_heap, m->window) || series__init(&p->hist_fds, m->window) ||
	    series__init(&p->hist_rss, m->window) || series__init(&p->hist_vm, m->window) ||
	    series__init(&p->hist_fd_count, m->window) ||
	    series__init(&p->hist_threads, m->window) || series__init(&p->hist_mmap, m->window) ||
	    series__init(&p->hist_anon, m->window)) {
		process_free(p);
		VEC_REMOVE(m->procs, m->n_procs, at);
		return NULL;
	}
	return p;
}

static void mark_exited(struct model *m, uint32_t pid, uint64_t gen)
{
	struct process *p = find_mut(m, pid, gen);

	if (!p)
		return;
	if (!p->exited)
		p->exited_ns = m->now_ns;
	p->exited = true;
	/* Its last counters describe a process that no longer exists: unknown now. */
	p->counters.valid = false;
}

void model__reported(struct model *m)
{
	for (size_t i = 0; i < m->n_procs; i++)
		if (m->procs[i].exited)
			m->procs[i].exit_reported = true;
	for (size_t i = 0; i < m->n_sym_missing; i++)
		m->sym_missing[i].reported = true;
}

static bool same_answer(const struct sym_missing *a, const struct sym_missing *b)
{
	const char *x[] = { a->package, a->source, a->debug_package };
	const char *y[] = { b->package, b->source, b->debug_package };

	for (int i = 0; i < 3; i++)
		if (x[i] != y[i] && (!x[i] || !y[i] || strcmp(x[i], y[i])))
			return false;
	return a->lookup == b->lookup;
}

int model__add_missing(struct model *m, const struct sym_missing *h)
{
	struct sym_missing copy;
	size_t i;

	if (!h->module)
		return 0;
	for (i = 0; i < m->n_sym_missing; i++)
		if (sym_missing__same(&m->sym_missing[i], h))
			break;
	if (i < m->n_sym_missing && same_answer(&m->sym_missing[i], h))
		return 0;
	if (i == m->n_sym_missing && i >= SYM_MISSING_MAX)
		return 0;
	if (sym_missing__copy(&copy, h))
		return -ENOMEM;
	copy.reported = false;
	if (i < m->n_sym_missing) {
		sym_missing__clear(&m->sym_missing[i]);
		m->sym_missing[i] = copy;
		return 0;
	}
	if (VEC_RESERVE(m->sym_missing, m->cap_sym_missing, m->n_sym_missing + 1, 8)) {
		sym_missing__clear(&copy);
		return -ENOMEM;
	}
	m->sym_missing[m->n_sym_missing++] = copy;
	return 0;
}

enum reap_fate {
	REAP_KEEP,			/* alive, or not yet in a report */
	REAP_RELEASE,			/* OOM-killed: purge its records, keep it listed */
	REAP_EXPIRE,			/* a kept OOM-killed image whose time is up: remove */
	REAP_REMOVE,			/* exited and reported: purge its records, remove */
};

static bool oom_kept(const struct process *p)
{
	return p->exit_reported && (p->flags & PROC_OOM_KILLED);
}

/*
 * The exit time before which kept OOM-killed images expire: OOM_KEEP_NS ago, or later
 * when more than OOM_KEEP_MAX are kept (the longest dead go first).
 */
static uint64_t oom_cutoff_ns(const struct model *m)
{
	uint64_t cutoff = m->now_ns > OOM_KEEP_NS ? m->now_ns - OOM_KEEP_NS : 0;
	size_t kept = 0;

	for (size_t i = 0; i < m->n_procs; i++)
		kept += oom_kept(&m->procs[i]) && m->procs[i].exited_ns >= cutoff;
	/* Move the cutoff past the oldest until few enough are left. */
	while (kept > OOM_KEEP_MAX) {
		uint64_t oldest = UINT64_MAX;

		for (size_t i = 0; i < m->n_procs; i++)
			if (oom_kept(&m->procs[i]) && m->procs[i].exited_ns >= cutoff &&
			    m->procs[i].exited_ns < oldest)
				oldest = m->procs[i].exited_ns;
		cutoff = oldest + 1;
		kept = 0;
		for (size_t i = 0; i < m->n_procs; i++)
			kept += oom_kept(&m->procs[i]) && m->procs[i].exited_ns >= cutoff;
	}
	return cutoff;
}

static enum reap_fate reap_fate(const struct process *p, uint64_t oom_cutoff_ns)
{
	if (!p->exit_reported)
		return REAP_KEEP;
	if (!(p->flags & PROC_OOM_KILLED) || p->exited_ns < oom_cutoff_ns)
		return p->records_released ? REAP_EXPIRE : REAP_REMOVE;
	return p->records_released ? REAP_KEEP : REAP_RELEASE;
}

size_t model__reap(struct model *m, struct dead_image **dead)
{
	uint64_t cutoff = oom_cutoff_ns(m);
	size_t n = 0, keep = 0;

	*dead = NULL;
	for (size_t i = 0; i < m->n_procs; i++) {
		enum reap_fate f = reap_fate(&m->procs[i], cutoff);

		n += f == REAP_RELEASE || f == REAP_REMOVE;
		keep += f == REAP_EXPIRE;
	}
	if (!n && !keep)
		return 0;
	*dead = n ? calloc(n, sizeof(**dead)) : NULL;
	n = keep = 0;
	for (size_t i = 0; i < m->n_procs; i++) {
		struct process *p = &m->procs[i];
		enum reap_fate f = reap_fate(p, cutoff);

		if ((f == REAP_RELEASE || f == REAP_REMOVE) && *dead)
			(*dead)[n++] = (struct dead_image){ .tgid = p->pid, .gen = p->gen };
		if (f == REAP_RELEASE)
			p->records_released = true;
		if (f == REAP_KEEP || f == REAP_RELEASE) {
			m->procs[keep++] = *p;
			continue;
		}
		process_free(p);
	}
	m->n_procs = keep;
	return n;
}

static int cmp_site(const struct site *s, uint32_t kind, uint64_t hash)
{
	if (s->kind != kind)
		return s->kind < kind ? -1 : 1;
	if (s->stack_hash != hash)
		return s->stack_hash < hash ? -1 : 1;
	return 0;
}

/* The site (kind, hash) of p, or NULL. */
static struct site *site_find(struct process *p, uint32_t kind, uint64_t hash)
{
	size_t at = SEARCH_FIRST(p->n_sites, mid, cmp_site(&p->sites[mid], kind, hash) < 0);

	return at < p->n_sites && !cmp_site(&p->sites[at], kind, hash) ? &p->sites[at] : NULL;
}

static struct site *site_find_or_add(struct process *p, uint32_t kind, uint64_t hash,
				     uint32_t window, bool *added)
{
	size_t lo = 0, hi = p->n_sites;
	struct site *s;

	*added = false;
	lo = SEARCH_FIRST(hi, mid, cmp_site(&p->sites[mid], kind, hash) < 0);
	if (lo < hi && !cmp_site(&p->sites[lo], kind, hash))
		return &p->sites[lo];
	s = VEC_INSERT(p->sites, p->n_sites, p->cap_sites, lo, 8);
	if (!s)
		return NULL;
	s->kind = kind;
	s->stack_hash = hash;
	if (series__init(&s->hist, window)) {
		VEC_REMOVE(p->sites, p->n_sites, lo);
		return NULL;
	}
	*added = true;
	return s;
}

/* The heap sites' lost classes from the process's latest scan (zeros: none of its blocks). */
static void apply_site_lost(struct process *p)
{
	const struct scan_result *r = p->scan && p->scan->ok ? &p->scan->result : NULL;

	for (size_t i = 0; i < p->n_sites; i++) {
		struct site *s = &p->sites[i];
		size_t lo = 0, hi = r ? r->n_sites : 0;

		s->has_lost = r && s->kind == LT_KIND_HEAP;
		memset(s->lost_count, 0, sizeof(s->lost_count));
		memset(s->lost_bytes, 0, sizeof(s->lost_bytes));
		s->n_lost_seqs = 0;
		if (!s->has_lost)
			continue;
		lo = SEARCH_FIRST(hi, mid, r->sites[mid].stack_hash < s->stack_hash);
		if (lo < r->n_sites && r->sites[lo].stack_hash == s->stack_hash) {
			memcpy(s->lost_count, r->sites[lo].count, sizeof(s->lost_count));
			memcpy(s->lost_bytes, r->sites[lo].bytes, sizeof(s->lost_bytes));
			memcpy(s->lost_seqs, r->sites[lo].definite_seqs, sizeof(s->lost_seqs));
			s->n_lost_seqs = r->sites[lo].n_definite_seqs;
		}
	}
}

int64_t site__outstanding(const struct site *s)
{
	return s->outstanding_count - (int64_t)s->repaired;
}

uint64_t site__frees(const struct site *s)
{
	return s->frees + s->repaired;
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

static void push_history(struct site *s, uint64_t ts)
{
	series__push(&s->hist, ts, s->kind == LT_KIND_FD ? site__outstanding(s)
							  : s->outstanding_bytes);
}

/* The process's own series, once its totals and counters are known. */
static void push_process_history(struct process *p, uint64_t ts)
{
	series__push(&p->hist_heap, ts, p->heap_outstanding_bytes);
	series__push(&p->hist_fds, ts, p->fd_outstanding);
	series__push(&p->hist_mmap, ts, p->mmap_outstanding_bytes);
	if (!p->counters.valid || !p->counters_fresh)
		return;
	series__push(&p->hist_rss, ts, p->counters.rss_bytes);
	series__push(&p->hist_vm, ts, p->counters.vm_bytes);
	series__push(&p->hist_fd_count, ts, p->counters.fd_count);
	series__push(&p->hist_threads, ts, p->counters.threads);
	if (p->counters.rss_split_valid)
		series__push(&p->hist_anon, ts, p->counters.rss_anon_bytes);
}

bool model__visible(const struct process *p)
{
	return p->heap_allocs > 0 || p->fd_opens > 0 || p->mmap_maps > 0 || p->target;
}

/* comm and start time are kept once known (a later exec's name belongs to another image);
 * the command line follows what /proc shows. */
static int apply_identity(struct process *p, const struct sample_identity *id)
{
	if (!p->comm[0] && id->comm[0])
		memcpy(p->comm, id->comm, sizeof(p->comm));
	if (!p->start_ticks)
		p->start_ticks = id->start_ticks;
	/* The allocator an image binds is fixed at its start: kept once known. */
	if (!p->alloc_module && id->alloc_module) {
		p->alloc_module = strdup(id->alloc_module);
		if (!p->alloc_module)
			return -ENOMEM;
		memcpy(p->alloc_kind, id->alloc_kind, sizeof(p->alloc_kind));
		p->alloc_kind[sizeof(p->alloc_kind) - 1] = '\0';
	}
	if (id->cgroup) {
		char *c = strdup(id->cgroup);

		if (!c)
			return -ENOMEM;
		free(p->cgroup);
		p->cgroup = c;
		memcpy(p->container, id->container, sizeof(p->container));
		p->container[sizeof(p->container) - 1] = '\0';
	}
	if (id->cmdline) {
		char *c = strdup(id->cmdline);

		if (!c)
			return -ENOMEM;
		free(p->cmdline);
		p->cmdline = c;
	}
	return 0;
}

static int apply_event(struct model *m, const struct sample_event *ev)
{
	struct process *p, *old;
	bool target = ev->target;

	switch (ev->type) {
	case SAMPLE_EV_EXIT:
		mark_exited(m, ev->pid, ev->old_gen);
		return 0;
	case SAMPLE_EV_EXEC:
		old = find_mut(m, ev->pid, ev->old_gen);
		/* An image that did nothing (the `--` child before its exec) is no news. */
		if (old && !old->n_sites)
			old->target = false;
		mark_exited(m, ev->pid, ev->old_gen);
		break;
	case SAMPLE_EV_OOM:
		p = find_mut(m, ev->pid, ev->gen);
		if (!p)
			p = model__process(m, ev->pid, ev->gen);
		if (!p)
			return -ENOMEM;
		p->flags |= PROC_OOM_KILLED;
		p->oom_ns = m->now_ns;
		return 0;
	case SAMPLE_EV_FIRST:
	case SAMPLE_EV_FORK:
		break;
	}
	p = model__process(m, ev->pid, ev->gen);
	if (!p)
		return -ENOMEM;
	p->target = target;
	return 0;
}

/* Site s gets a copy of frames[0..n), unless it has its frames already. */
static int attach_frames(struct site *s, const struct sym_frame *frames, uint32_t n)
{
	static uint64_t last_serial;

	if (!s || s->resolved)
		return 0;
	s->resolved = true;
	s->frames_serial = ++last_serial;
	if (!n)
		return 0;
	s->frames = calloc(n, sizeof(*s->frames));
	if (!s->frames)
		return -ENOMEM;
	for (uint32_t k = 0; k < n; k++) {
		if (sym_frame__copy(&s->frames[k], &frames[k])) {
			for (uint32_t j = 0; j < k; j++)
				sym_frame__clear(&s->frames[j]);
			free(s->frames);
			s->frames = NULL;
			return -ENOMEM;
		}
	}
	s->n_frames = n;
	return 0;
}

/* The sites of (pid, gen) with this stack, of any kind, get its frames. */
static int apply_frames(struct model *m, const struct sample_frames *sf)
{
	struct process *p = find_mut(m, sf->pid, sf->gen);
	int err;

	if (!p)
		return 0;
	err = attach_frames(site_find(p, LT_KIND_HEAP, sf->stack_hash), sf->frames, sf->n_frames);
	if (!err)
		err = attach_frames(site_find(p, LT_KIND_FD, sf->stack_hash), sf->frames,
				    sf->n_frames);
	if (!err)
		err = attach_frames(site_find(p, LT_KIND_MMAP, sf->stack_hash), sf->frames,
				    sf->n_frames);
	return err;
}

/* Who it is, whatever its state; counters and census only of a live image. */
static int apply_readings(struct model *m, struct process *p, const struct sample_proc *r)
{
	int err = apply_identity(p, &r->id);

	if (p->exited || !r->alive)
		return err;
	/* Not read this interval (the budget deferred it): the last reading stands. */
	p->counters_fresh = r->read;
	if (!r->read)
		return err;
	p->counters = r->counters;
	if (r->census_done && (m->resources & RES_FD))
		apply_census(p, &r->census);
	return err;
}

/* A copy of r without the per-block classes (the model keeps what the views show). */
static int scan_result_copy(struct scan_result *dst, const struct scan_result *r)
{
	*dst = *r;
	dst->cls = NULL;
	dst->sites = r->n_sites ? malloc(r->n_sites * sizeof(*r->sites)) : NULL;
	dst->leaks = r->n_leaks ? malloc(r->n_leaks * sizeof(*r->leaks)) : NULL;
	if ((r->n_sites && !dst->sites) || (r->n_leaks && !dst->leaks)) {
		free(dst->sites);
		free(dst->leaks);
		memset(dst, 0, sizeof(*dst));
		return -ENOMEM;
	}
	if (r->n_sites)
		memcpy(dst->sites, r->sites, r->n_sites * sizeof(*r->sites));
	if (r->n_leaks)
		memcpy(dst->leaks, r->leaks, r->n_leaks * sizeof(*r->leaks));
	return 0;
}

/* A scan replaces the image's previous result; a failed one only notes its error. */
static int apply_scan(struct model *m, const struct sample_scan *sc)
{
	struct process *p = find_mut(m, sc->pid, sc->gen);
	struct scan_result copy;

	if (!p)
		return 0;
	if (!p->scan) {
		p->scan = calloc(1, sizeof(*p->scan));
		if (!p->scan)
			return -ENOMEM;
	}
	if (!sc->ok) {
		snprintf(p->scan->error, sizeof(p->scan->error), "%s", sc->error);
		p->scan->partial = sc->result.partial;
		return 0;
	}
	if (scan_result_copy(&copy, &sc->result))
		return -ENOMEM;
	scan_result__free(&p->scan->result);
	p->scan->result = copy;
	p->scan->ok = true;
	p->scan->error[0] = '\0';
	memset(&p->scan->partial, 0, sizeof(p->scan->partial));
	return 0;
}

/* A lastref verdict joins its image's (kept up to PROC_LASTREF_MAX; later ones counted). */
static int apply_lastref(struct model *m, const struct lastref_result *r)
{
	struct process *p = find_mut(m, r->pid, r->gen);

	if (!p)
		return 0;
	if (p->n_lastref >= PROC_LASTREF_MAX) {
		p->lastref_dropped++;
		return 0;
	}
	if (VEC_RESERVE(p->lastref, p->cap_lastref, p->n_lastref + 1, 4) ||
	    lastref_result__copy(&p->lastref[p->n_lastref], r))
		return -ENOMEM;
	p->n_lastref++;
	return 0;
}

/* The process's totals over its sites. */
static void sum_sites(struct process *q)
{
	q->heap_outstanding_bytes = q->heap_outstanding_count = 0;
	q->heap_allocs = q->heap_frees = 0;
	q->fd_outstanding = 0;
	q->fd_opens = q->fd_closes = 0;
	q->mmap_outstanding_bytes = q->mmap_outstanding_count = 0;
	q->mmap_maps = q->mmap_unmaps = 0;
	for (size_t j = 0; j < q->n_sites; j++) {
		const struct site *st = &q->sites[j];

		if (st->kind == LT_KIND_FD) {
			q->fd_outstanding += site__outstanding(st);
			q->fd_opens += st->allocs;
			q->fd_closes += site__frees(st);
			continue;
		}
		if (st->kind == LT_KIND_MMAP) {
			q->mmap_outstanding_bytes += st->outstanding_bytes;
			q->mmap_outstanding_count += st->outstanding_count;
			q->mmap_maps += st->allocs;
			q->mmap_unmaps += st->frees;
			continue;
		}
		q->heap_outstanding_bytes += st->outstanding_bytes;
		q->heap_outstanding_count += st->outstanding_count;
		q->heap_allocs += st->allocs;
		q->heap_frees += st->frees;
	}
}

/* Drop the sites the kernel no longer has (purged with a dead image). */
static void drop_unseen_sites(struct process *q)
{
	size_t keep = 0;

	for (size_t j = 0; j < q->n_sites; j++) {
		struct site *st = &q->sites[j];

		if (!st->seen) {
			site_free(st);
			continue;
		}
		q->sites[keep++] = *st;
	}
	q->n_sites = keep;
}

static int apply_sites(struct model *m, const struct sample *s)
{
	struct process *p = NULL;

	for (size_t i = 0; i < s->n_sites; i++) {
		const struct sample_site *r = &s->sites[i];
		struct site *site;
		bool added;

		if (!p || p->pid != r->pid || p->gen != r->gen) {
			p = model__process(m, r->pid, r->gen);
			if (!p)
				return -ENOMEM;
		}
		site = site_find_or_add(p, r->kind, r->stack_hash, m->window, &added);
		if (!site)
			return -ENOMEM;
		site->outstanding_bytes = r->outstanding_bytes;
		site->outstanding_count = r->outstanding_count;
		site->allocs = r->allocs;
		site->frees = r->frees;
		site->alloc_bytes = r->alloc_bytes;
		site->live_since_ns = r->live_since_ns;
		site->last_alloc_ns = r->last_alloc_ns;
		site->seen = true;
		push_history(site, s->ts_ns);
	}
	return 0;
}

static void apply_heap_mode_summary(struct model *m, const struct sample_heap *h)
{
	m->heap_budgeted = h->budgeted;
	m->heap_mode = h->budgeted ? h->mode : HEAP_MODE_EXACT;
	m->heap_cost_pct = h->budgeted ? h->cost_pct : NAN;
	m->heap_exact_cost_pct = h->budgeted ? h->exact_cost_pct : NAN;
	m->heap_budget_pct = h->budgeted ? h->budget_pct : NAN;
	m->heap_trap_ns = h->budgeted ? h->trap_ns : NAN;
	m->heap_traced_cost_pct = h->budgeted ? h->traced_cost_pct : NAN;
	m->heap_bucket_fill = h->budgeted ? h->bucket_fill : NAN;
	m->heap_switches = h->switches;
}

static bool has_heap_sites(const struct process *q)
{
	for (size_t j = 0; j < q->n_sites; j++)
		if (q->sites[j].kind == LT_KIND_HEAP)
			return true;
	return false;
}

/* Released: its heap sites stay as counted; with frees unseen from now on, they are stale. */
static void freeze_heap_sites(struct process *q)
{
	for (size_t j = 0; j < q->n_sites; j++)
		if (q->sites[j].kind == LT_KIND_HEAP)
			q->sites[j].stale = true;
}

/*
 * How q's heap is traced: exact since it was first seen or exact mode began (or kept exact
 * by pid since), as a suspect since it was attached, released (its sites kept, frozen), or
 * watched (not traced).
 */
static void apply_heap_mode(struct model *m, struct process *q, const struct sample_heap *h)
{
	q->heap_cost_pct = NAN;
	if (!h->budgeted || h->mode == HEAP_MODE_EXACT) {
		uint64_t since = h->budgeted && h->mode_since_ns > q->first_seen_ns ?
				 h->mode_since_ns : q->first_seen_ns;

		/* Exact all along, or again: a released one is traced again from the return. */
		if (q->heap_mode != PROC_HEAP_EXACT || !q->heap_since_ns)
			q->heap_since_ns = since > m->start_ns ? since : m->start_ns;
		q->heap_mode = PROC_HEAP_EXACT;
		q->heap_picked = false;
		for (size_t i = 0; i < h->n_traced; i++)
			q->heap_picked |= h->traced[i].pid == q->pid && h->traced[i].picked;
		return;
	}
	/* Gone: it keeps how it was traced, and its last sites, for its exit report. */
	if (q->exited)
		return;
	for (size_t i = 0; i < h->n_traced; i++) {
		const struct heapmode_traced *t = &h->traced[i];

		if (t->pid != q->pid)
			continue;
		q->heap_picked = t->picked;
		q->heap_cost_pct = t->cost_pct;
		if (t->role == HEAPMODE_ROLE_KEPT) {
			/* Exact since before: its since stays. */
			if (q->heap_mode != PROC_HEAP_EXACT || !q->heap_since_ns)
				q->heap_since_ns = t->since_ns;
			q->heap_mode = PROC_HEAP_EXACT;
		} else {
			if (q->heap_mode != PROC_HEAP_SUSPECT)
				q->heap_since_ns = t->since_ns;
			q->heap_mode = PROC_HEAP_SUSPECT;
		}
		return;
	}
	q->heap_picked = false;
	for (size_t i = 0; i < h->n_released; i++) {
		if (h->released[i].pid != q->pid)
			continue;
		q->heap_mode = PROC_HEAP_RELEASED;
		q->heap_released_ns = h->released[i].released_ns;
		freeze_heap_sites(q);
		return;
	}
	/*
	 * Not traced now, yet heap records: counted while it was (one the decision did not see:
	 * it was too new for the model, or its records came late).  Released when exact
	 * tracing ended, unless it was released before.
	 */
	if (q->heap_outstanding_count || has_heap_sites(q)) {
		if (q->heap_mode != PROC_HEAP_RELEASED)
			q->heap_released_ns = h->mode_since_ns;
		q->heap_mode = PROC_HEAP_RELEASED;
		freeze_heap_sites(q);
		return;
	}
	q->heap_mode = PROC_HEAP_WATCH;
	q->heap_since_ns = 0;
}

/* Each image's allocator call rate: its probe entries since the last sample. */
static void apply_calls(struct model *m, const struct sample *s)
{
	for (size_t i = 0; i < m->n_procs; i++)
		m->procs[i].heap_calls_per_s = 0;
	for (size_t i = 0; i < s->n_calls; i++) {
		struct process *p = find_mut(m, s->calls[i].pid, s->calls[i].gen);
		uint64_t calls = s->calls[i].heap_calls;

		if (!p)
			continue;
		memcpy(p->share_drops, s->calls[i].share_drops, sizeof(p->share_drops));
		p->heap_via_agent |= s->calls[i].via_agent;
		if (!calls)
			continue;
		if (p->heap_calls_ns && s->ts_ns > p->heap_calls_ns && calls >= p->heap_calls)
			p->heap_calls_per_s = (calls - p->heap_calls) / ((s->ts_ns - p->heap_calls_ns) / 1e9);
		p->heap_calls = calls;
		p->heap_calls_ns = s->ts_ns;
	}
}

size_t model__heap_released(const struct model *m)
{
	size_t n = 0;

	for (size_t i = 0; i < m->n_procs; i++)
		n += !m->procs[i].exited && m->procs[i].heap_mode == PROC_HEAP_RELEASED;
	return n;
}

void model__apply_heap(struct model *m, const struct sample_heap *h)
{
	apply_heap_mode_summary(m, h);
	/* An OOM-killed image that exited keeps the sites it died with. */
	for (size_t i = 0; i < m->n_procs; i++)
		if (!(m->procs[i].exited && (m->procs[i].flags & PROC_OOM_KILLED)))
			apply_heap_mode(m, &m->procs[i], h);
}

int model__apply(struct model *m, const struct sample *s)
{
	int err;

	m->now_ns = s->ts_ns;
	memcpy(m->drops, s->drops, sizeof(m->drops));
	memcpy(m->counters, s->counters, sizeof(m->counters));
	m->probes_attached = s->probes_attached;
	m->libcs_refused = s->libcs_refused;
	m->files_refused_fs = s->files_refused_fs;
	m->alloc_unreadable = s->alloc_unreadable;
	m->alloc_scan_pending = s->alloc_scan_pending;
	m->unwind = s->unwind;
	snprintf(m->heap_attach, sizeof(m->heap_attach), "%s", s->heap_attach ? s->heap_attach : "");
	snprintf(m->syscall_attach, sizeof(m->syscall_attach), "%s",
		 s->syscall_attach ? s->syscall_attach : "");
	snprintf(m->syscall_why, sizeof(m->syscall_why), "%s", s->syscall_why ? s->syscall_why : "");
	m->stacks_pending = s->stacks_pending;
	m->procs_deferred = s->procs_deferred;
	m->reconciled_exited += s->reconciled_exited;
	m->reconciled_reused += s->reconciled_reused;
	m->self_rss_bytes = s->self_rss_bytes;
	m->self_cpu_s = s->self_cpu_s;
	m->oom_snapshots_failed = s->oom_snapshots_failed;
	m->oom_snapshots_skipped = s->oom_snapshots_skipped;
	m->oom_snapshots_removed = s->oom_snapshots_removed;
	if (s->stop.fired)
		m->stop = s->stop;
	/* The producers' time; scans are reported on their own (stop_ms). */
	m->collect_ms = s->timing.read_ms + s->timing.track_ms + s->timing.census_ms;
	for (size_t i = 0; i < s->n_events; i++) {
		err = apply_event(m, &s->events[i]);
		if (err)
			return err;
	}
	for (size_t i = 0; i < m->n_procs; i++)
		for (size_t j = 0; j < m->procs[i].n_sites; j++)
			m->procs[i].sites[j].seen = false;
	err = apply_sites(m, s);
	if (err)
		return err;
	/* A kept OOM-killed image's records are gone: its sites stay as they were. */
	for (size_t i = 0; i < m->n_procs; i++)
		if (!m->procs[i].records_released)
			drop_unseen_sites(&m->procs[i]);
	for (size_t i = 0; i < s->n_frames; i++) {
		err = apply_frames(m, &s->frames[i]);
		if (err)
			return err;
	}
	for (size_t i = 0; i < s->n_scans; i++) {
		err = apply_scan(m, &s->scans[i]);
		if (err)
			return err;
	}
	for (size_t i = 0; i < s->n_lastref; i++) {
		err = apply_lastref(m, &s->lastref[i]);
		if (err)
			return err;
	}
	apply_calls(m, s);
	for (size_t i = 0; i < s->n_missing; i++) {
		err = model__add_missing(m, &s->missing[i]);
		if (err)
			return err;
	}
	for (size_t i = 0; i < m->n_procs; i++) {
		struct process *q = &m->procs[i];
		const struct sample_proc *r;

		r = sample__find_proc(s, q->pid, q->gen);
		if (r) {
			err = apply_readings(m, q, r);
			if (err)
				return err;
		}
		apply_site_lost(q);
		sum_sites(q);
		if (!q->exited)
			push_process_history(q, s->ts_ns);
	}
	return 0;
}

const struct scan_site *model__scan_site(const struct process *p, uint64_t stack_hash)
{
	const struct scan_result *r = p->scan && p->scan->ok ? &p->scan->result : NULL;
	size_t lo = 0, hi = r ? r->n_sites : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->sites[mid].stack_hash < stack_hash)
			lo = mid + 1;
		else
			hi = mid;
	}
	return r && lo < r->n_sites && r->sites[lo].stack_hash == stack_hash ?
	       &r->sites[lo] : NULL;
}

const struct site *model__heap_site(const struct process *p, uint64_t stack_hash)
{
	size_t at = SEARCH_FIRST(p->n_sites, mid,
				 cmp_site(&p->sites[mid], LT_KIND_HEAP, stack_hash) < 0);

	return at < p->n_sites && !cmp_site(&p->sites[at], LT_KIND_HEAP, stack_hash) ?
	       &p->sites[at] : NULL;
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
	if (x->outstanding_bytes != y->outstanding_bytes)
		return x->outstanding_bytes > y->outstanding_bytes ? -1 : 1;
	if (site__outstanding(x) != site__outstanding(y))
		return site__outstanding(x) > site__outstanding(y) ? -1 : 1;
	if (x->allocs != y->allocs)
		return x->allocs > y->allocs ? -1 : 1;
	return x->stack_hash < y->stack_hash ? -1 : 1;
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
