// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_model.c - the fold (model__apply) driven by hand-built samples: lifecycle, exec
 * generations, sites that drain or vanish, fd repairs, frames that arrive late, readings,
 * and scans attached and carried from one interval to the next.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/model.h"
#include "core/sample.h"

#define NS 1000000000ull

static void model_new(struct model *m)
{
	model__init(m, 1.0, RES_ALL, 8);
}

/* A sample at second `sec` whose site records are sites[0..n) (not owned). */
static void sample_at(struct sample *s, unsigned int sec, struct sample_site *sites, size_t n)
{
	memset(s, 0, sizeof(*s));
	s->ts_ns = sec * NS;
	s->sites = sites;
	s->n_sites = n;
}

static void sample_done(struct sample *s)
{
	s->sites = NULL;
	s->n_sites = 0;
	sample__free(s);
}

static void event(struct sample *s, enum sample_event_type type, uint32_t pid, uint64_t gen,
		  uint64_t old_gen, bool target)
{
	struct sample_event *ev = sample__add_event(s);

	*ev = (struct sample_event){ type, pid, gen, old_gen, target };
}

static struct sample_site heap_site(uint32_t pid, uint64_t gen, uint64_t hash, int64_t bytes,
				    int64_t count, uint64_t allocs, uint64_t frees)
{
	return (struct sample_site){ .pid = pid, .kind = LT_KIND_HEAP, .gen = gen,
				     .stack_hash = hash, .outstanding_bytes = bytes,
				     .outstanding_count = count, .allocs = allocs, .frees = frees,
				     .alloc_bytes = bytes > 0 ? bytes : 0 };
}

static struct sample_proc *reading(struct sample *s, uint32_t pid, uint64_t gen, bool alive)
{
	struct sample_proc *p = sample__add_proc(s);

	p->pid = pid;
	p->gen = gen;
	p->alive = alive;
	p->read = alive;
	return p;
}

/* Suspects mode since second 2: 500 is traced since then (picked), 501 is not traced. */
static void test_heap_mode_marks_suspects_and_keeps_the_heap_records_of_untraced_ones(void)
{
	struct sample_site sites[] = {
		heap_site(500, 1, 0xa, 100, 1, 1, 0),
		heap_site(501, 2, 0xa, 300, 3, 3, 0),
		{ .pid = 501, .kind = LT_KIND_MMAP, .gen = 2, .stack_hash = 0xb,
		  .outstanding_bytes = 4096, .outstanding_count = 1, .allocs = 1 },
	};
	struct heapmode_traced traced = { .pid = 500, .since_ns = 2 * NS, .picked = true };
	struct sample_heap h = { .budgeted = true, .mode = HEAP_MODE_SUSPECTS, .cost_pct = 0.5,
				 .mode_since_ns = 2 * NS,
				 .exact_cost_pct = 7, .budget_pct = 2, .trap_ns = 6000,
				 .switches = 1, .traced = &traced, .n_traced = 1 };
	const struct process *a, *b;
	struct model m;
	struct sample s;

	model_new(&m);
	sample_at(&s, 3, sites, 3);
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	sample_done(&s);
	model__apply_heap(&m, &h);
	a = model__find(&m, 500, 1);
	b = model__find(&m, 501, 2);
	CHECK(a && b);
	CHECK(m.heap_budgeted && m.heap_mode == HEAP_MODE_SUSPECTS && m.heap_switches == 1);
	CHECK(a->heap_mode == PROC_HEAP_SUSPECT && a->heap_picked && a->heap_since_ns == 2 * NS);
	CHECK_EQ_INT(a->heap_outstanding_bytes, 100);
	/*
	 * Not traced, with heap records (counted while exact, too new for the decision): they
	 * are kept, released when exact tracing ended, stale; its mappings stay.
	 */
	CHECK(b->heap_mode == PROC_HEAP_RELEASED && !b->heap_picked);
	CHECK(b->heap_released_ns == h.mode_since_ns);
	CHECK_EQ_INT(b->heap_outstanding_bytes, 300);
	CHECK_EQ_INT(b->n_sites, 2);
	CHECK_EQ_INT(b->mmap_outstanding_bytes, 4096);
	/* -p and --: every image exact, nothing budgeted, costs unknown. */
	h = (struct sample_heap){ .budgeted = false };
	model__apply_heap(&m, &h);
	CHECK(!m.heap_budgeted && isnan(m.heap_cost_pct));
	CHECK(model__find(&m, 500, 1)->heap_mode == PROC_HEAP_EXACT);
	model__free(&m);
}

/*
 * Suspects mode: 600 was released at second 4, 601 is kept exact (by pid): 600's sites stay
 * as counted, frozen and stale, its verdict too; exact mode again keeps them (and when).
 */
static void test_heap_mode_released_process_keeps_its_sites_frozen_and_marked(void)
{
	struct sample_site sites[] = {
		heap_site(600, 1, 0xa, 64000, 1000, 1000, 0),
		heap_site(601, 2, 0xb, 32, 1, 1, 0),
	};
	struct heapmode_traced kept = { .pid = 601, .role = HEAPMODE_ROLE_KEPT, .since_ns = 4 * NS,
					.cost_pct = 0.25 };
	struct heapmode_released rel = { .pid = 600, .released_ns = 4 * NS };
	struct sample_heap h = { .budgeted = true, .mode = HEAP_MODE_SUSPECTS, .budget_pct = 2,
				 .traced = &kept, .n_traced = 1, .released = &rel,
				 .n_released = 1, .traced_cost_pct = 0.25 };
	const struct process *a, *b;
	struct model m;
	struct sample s;

	model_new(&m);
	sample_at(&s, 3, sites, 2);
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	sample_done(&s);
	model__apply_heap(&m, &(struct sample_heap){ .budgeted = true, .budget_pct = 2 });
	a = model__find(&m, 600, 1);
	CHECK(a && a->heap_mode == PROC_HEAP_EXACT && a->heap_since_ns == 3 * NS);
	m.procs[0].sites[0].flagged = true;
	sample_at(&s, 5, sites, 2);
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	sample_done(&s);
	model__apply_heap(&m, &h);
	a = model__find(&m, 600, 1);
	b = model__find(&m, 601, 2);
	CHECK(a && b);
	CHECK(a->heap_mode == PROC_HEAP_RELEASED && a->heap_released_ns == 4 * NS);
	CHECK_EQ_INT(a->n_sites, 1);
	CHECK_EQ_INT(a->heap_outstanding_count, 1000);
	CHECK(a->sites[0].stale && a->sites[0].flagged);
	CHECK_EQ_INT(model__heap_released(&m), 1);
	/* Kept: exact, since it was first seen, with what it costs. */
	CHECK(b->heap_mode == PROC_HEAP_EXACT && b->heap_since_ns == 3 * NS);
	CHECK(b->heap_cost_pct == 0.25 && !b->sites[0].stale);
	CHECK(m.heap_traced_cost_pct == 0.25);
	/* 601 exits while kept: it keeps how it was traced and its sites for its exit report. */
	sample_at(&s, 6, sites, 2);
	event(&s, SAMPLE_EV_EXIT, 601, 0, 2, false);
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	sample_done(&s);
	model__apply_heap(&m, &(struct sample_heap){ .budgeted = true, .budget_pct = 2,
						      .mode = HEAP_MODE_SUSPECTS,
						      .released = &rel, .n_released = 1 });
	b = model__find(&m, 601, 2);
	for (size_t i = 0; !b && i < m.n_procs; i++)
		if (m.procs[i].pid == 601)
			b = &m.procs[i];
	CHECK(b && b->exited && b->heap_mode == PROC_HEAP_EXACT);
	CHECK(b && b->n_sites == 1 && b->heap_outstanding_count == 1);
	/* Exact again: traced from the return, its release and stale sites remembered. */
	h = (struct sample_heap){ .budgeted = true, .mode = HEAP_MODE_EXACT,
				  .mode_since_ns = 6 * NS, .budget_pct = 2 };
	model__apply_heap(&m, &h);
	a = model__find(&m, 600, 1);
	CHECK(a->heap_mode == PROC_HEAP_EXACT && a->heap_since_ns == 6 * NS);
	CHECK(a->heap_released_ns == 4 * NS && a->sites[0].stale);
	CHECK(model__find(&m, 601, 2)->heap_since_ns == 3 * NS);
	model__free(&m);
}

static void test_fold_exited_process_stays_for_one_report_then_is_reaped(void)
{
	struct sample_site sites[] = { heap_site(100, 1, 0xa, 64, 1, 1, 0) };
	struct dead_image *dead = NULL;
	struct model m;
	struct sample s;
	const struct process *p;

	model_new(&m);
	sample_at(&s, 1, sites, 1);
	event(&s, SAMPLE_EV_FIRST, 100, 1, 0, true);
	reading(&s, 100, 1, true)->counters = (struct proc_counters){ .rss_bytes = 4096,
								       .valid = true };
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	sample_done(&s);
	p = model__find(&m, 100, 1);
	CHECK(p && p->target && !p->exited && p->counters.valid);
	CHECK_EQ_INT(p->heap_outstanding_bytes, 64);
	model__reported(&m);
	CHECK_EQ_INT(model__reap(&m, &dead), 0);

	sample_at(&s, 2, sites, 1);
	event(&s, SAMPLE_EV_EXIT, 100, 0, 1, false);
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	sample_done(&s);
	p = model__find(&m, 100, 1);
	CHECK(p && p->exited);
	/* Its last counters describe a process that no longer exists. */
	CHECK(!p->counters.valid);
	CHECK_EQ_INT(p->heap_outstanding_bytes, 64);
	model__reported(&m);
	CHECK_EQ_INT(model__reap(&m, &dead), 1);
	CHECK(dead && dead[0].tgid == 100 && dead[0].gen == 1);
	CHECK_EQ_INT(m.n_procs, 0);
	free(dead);
	model__free(&m);
}

static void test_fold_exec_starts_a_new_image_generation(void)
{
	struct sample_site after[] = { heap_site(200, 2, 0xb, 32, 2, 2, 0) };
	struct model m;
	struct sample s;
	const struct process *old, *cur;

	model_new(&m);
	sample_at(&s, 1, NULL, 0);
	event(&s, SAMPLE_EV_FIRST, 200, 1, 0, true);
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	sample_done(&s);

	sample_at(&s, 2, after, 1);
	event(&s, SAMPLE_EV_EXEC, 200, 2, 1, true);
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	sample_done(&s);
	old = model__find(&m, 200, 1);
	cur = model__find(&m, 200, 2);
	CHECK(old && cur);
	CHECK(old->exited && !cur->exited);
	/* The image that did nothing before its exec (the -- child) is no news. */
	CHECK(!old->target && !model__visible(old));
	CHECK(cur->target);
	CHECK_EQ_INT(old->n_sites, 0);
	CHECK_EQ_INT(cur->n_sites, 1);
	CHECK_EQ_INT(cur->heap_outstanding_count, 2);
	CHECK(model__find_pid(&m, 200) == cur);
	model__free(&m);
}

static void test_fold_site_that_drains_to_zero_stays_until_the_kernel_drops_it(void)
{
	struct sample_site full[] = { heap_site(300, 1, 0xc, 300, 3, 3, 0) };
	struct sample_site drained[] = { heap_site(300, 1, 0xc, 0, 0, 3, 3) };
	struct model m;
	struct sample s;
	const struct process *p;

	model_new(&m);
	sample_at(&s, 1, full, 1);
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	sample_done(&s);
	sample_at(&s, 2, drained, 1);
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	sample_done(&s);
	p = model__find(&m, 300, 1);
	CHECK(p && p->n_sites == 1);
	CHECK_EQ_INT(site__outstanding(&p->sites[0]), 0);
	CHECK_EQ_INT(p->heap_outstanding_bytes, 0);
	CHECK_EQ_INT(p->heap_allocs, 3);
	CHECK_EQ_INT(p->heap_frees, 3);
	CHECK_EQ_INT(p->sites[0].hist.n, 2);
	CHECK_EQ_INT(series__last(&p->sites[0].hist), 0);
	CHECK_EQ_INT(series__last(&p->hist_heap), 0);

	/* Purged from the kernel: gone from the model too. */
	sample_at(&s, 3, NULL, 0);
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	sample_done(&s);
	p = model__find(&m, 300, 1);
	CHECK(p && p->n_sites == 0);
	model__free(&m);
}

static void test_fold_mmap_sites_sum_into_the_process_mmap_totals_not_its_heap(void)
{
	struct sample_site sites[] = {
		heap_site(500, 1, 0xa, 100, 1, 1, 0),
		{ .pid = 500, .kind = LT_KIND_MMAP, .gen = 1, .stack_hash = 0xb,
		  .outstanding_bytes = 786432, .outstanding_count = 2, .allocs = 1 },
		{ .pid = 500, .kind = LT_KIND_MMAP, .gen = 1, .stack_hash = 0xc,
		  .outstanding_bytes = 131072, .outstanding_count = 2, .allocs = 3, .frees = 1 },
	};
	struct model m;
	struct sample s;
	const struct process *p;

	model_new(&m);
	sample_at(&s, 1, sites, 3);
	reading(&s, 500, 1, true);
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	sample_done(&s);
	p = model__find(&m, 500, 1);
	CHECK(p && p->n_sites == 3);
	CHECK_EQ_INT(p->mmap_outstanding_bytes, 786432 + 131072);
	CHECK_EQ_INT(p->mmap_outstanding_count, 4);
	CHECK_EQ_INT(p->mmap_maps, 4);
	CHECK_EQ_INT(p->mmap_unmaps, 1);
	CHECK_EQ_INT(p->heap_outstanding_bytes, 100);
	CHECK_EQ_INT(p->heap_allocs, 1);
	/* An mmap site's history is its bytes, like a heap site's. */
	for (size_t i = 0; i < p->n_sites; i++)
		if (p->sites[i].kind == LT_KIND_MMAP)
			CHECK_EQ_INT(series__last(&p->sites[i].hist),
				     p->sites[i].outstanding_bytes);
	model__free(&m);
}

static void test_fold_fd_repairs_close_descriptors_the_census_found_closed(void)
{
	struct sample_site sites[] = {
		{ .pid = 400, .kind = LT_KIND_FD, .gen = 1, .stack_hash = 0xfd,
		  .outstanding_count = 3, .allocs = 3 },
	};
	struct model m;
	struct sample s;
	struct sample_proc *r;
	const struct process *p;
	const struct site *st;

	model_new(&m);
	sample_at(&s, 1, sites, 1);
	r = reading(&s, 400, 1, true);
	r->census_done = true;
	r->census.valid = true;
	r->census.untracked = 4;
	r->census.repaired = malloc(sizeof(uint64_t));
	r->census.repaired[0] = 0xfd;
	r->census.n_repaired = 1;
	r->census.open = calloc(2, sizeof(*r->census.open));
	r->census.n_open = 2;
	for (int i = 0; i < 2; i++) {
		r->census.open[i] = (struct fd_seen){ .stack_hash = 0xfd, .fd = 3 + i,
						      .type = FD_SOCKET };
		strcpy(r->census.open[i].target, "inet stream");
	}
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	sample_done(&s);
	p = model__find(&m, 400, 1);
	CHECK(p && p->n_sites == 1);
	st = &p->sites[0];
	CHECK_EQ_INT(st->repaired, 1);
	CHECK_EQ_INT(site__outstanding(st), 2);
	CHECK_EQ_INT(site__frees(st), 1);
	CHECK_EQ_INT(st->fd_types[FD_SOCKET], 2);
	/* The same target is one example, not two. */
	CHECK_EQ_INT(st->n_fd_samples, 1);
	CHECK_EQ_STR(st->fd_samples[0], "inet stream");
	CHECK_EQ_INT(p->fd_outstanding, 2);
	CHECK_EQ_INT(p->fd_opens, 3);
	CHECK_EQ_INT(p->fd_closes, 1);
	CHECK_EQ_INT(p->fd_repaired, 1);
	CHECK_EQ_INT(p->fd_untracked, 4);
	CHECK(p->fd_census_valid);
	model__free(&m);
}

static void test_fold_scan_result_is_attached_and_carried_to_the_next_interval(void)
{
	struct sample_site one[] = { heap_site(500, 1, 0x10, 96, 3, 3, 0) };
	struct sample_site two[] = { heap_site(500, 1, 0x10, 96, 3, 3, 0),
				     heap_site(500, 1, 0x20, 8, 1, 1, 0) };
	struct scan_site per_site = { .stack_hash = 0x10 };
	struct scan_leak leak = { .root = { 0x1000, 32, 0x10 }, .blocks = 3, .bytes = 96 };
	struct model m;
	struct sample s;
	struct sample_scan *sc;
	const struct process *p;

	model_new(&m);
	per_site.count[SCAN_DEFINITE] = 1;
	per_site.bytes[SCAN_DEFINITE] = 32;
	per_site.count[SCAN_INDIRECT] = 2;
	per_site.bytes[SCAN_INDIRECT] = 64;
	sample_at(&s, 1, one, 1);
	event(&s, SAMPLE_EV_FIRST, 500, 1, 0, true);
	sc = sample__add_scan(&s);
	sc->pid = 500;
	sc->gen = 1;
	sc->ok = true;
	sc->result.n_blocks = 3;
	sc->result.stop_ms = 1.5;
	sc->result.count[SCAN_DEFINITE] = 1;
	sc->result.sites = malloc(sizeof(per_site));
	*sc->result.sites = per_site;
	sc->result.n_sites = 1;
	sc->result.leaks = malloc(sizeof(leak));
	*sc->result.leaks = leak;
	sc->result.n_leaks = 1;
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	sample_done(&s);
	p = model__find(&m, 500, 1);
	CHECK(p && p->scan && p->scan->ok);
	CHECK_EQ_INT(p->scan->result.n_leaks, 1);
	CHECK_EQ_INT(p->scan->result.leaks[0].root.addr, 0x1000);
	CHECK(p->sites[0].has_lost);
	CHECK_EQ_INT(p->sites[0].lost_count[SCAN_INDIRECT], 2);

	/* No scan this interval: the last one stays, and a new heap site shows none lost. */
	sample_at(&s, 2, two, 2);
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	sample_done(&s);
	p = model__find(&m, 500, 1);
	CHECK(p && p->scan && p->scan->ok && p->n_sites == 2);
	CHECK_EQ_INT(p->scan->result.leaks[0].bytes, 96);
	CHECK(model__heap_site(p, 0x10)->has_lost);
	CHECK_EQ_INT(model__heap_site(p, 0x10)->lost_bytes[SCAN_DEFINITE], 32);
	CHECK(model__heap_site(p, 0x20)->has_lost);
	CHECK_EQ_INT(model__heap_site(p, 0x20)->lost_count[SCAN_DEFINITE], 0);

	/* A scan that fails keeps the last result and notes why. */
	sample_at(&s, 3, two, 2);
	sc = sample__add_scan(&s);
	*sc = (struct sample_scan){ .pid = 500, .gen = 1 };
	strcpy(sc->error, "cannot scan process 500: gone");
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	sample_done(&s);
	p = model__find(&m, 500, 1);
	CHECK(p->scan->ok);
	CHECK_EQ_STR(p->scan->error, "cannot scan process 500: gone");
	CHECK_EQ_INT(p->scan->result.n_leaks, 1);
	model__free(&m);
}

/* A lastref verdict in the sample joins its image's verdicts (its frames copied: the sample
 * is freed), stays in the next intervals, and is dropped (counted) past PROC_LASTREF_MAX; one
 * for an image the model does not know is ignored. */
static void test_fold_lastref_verdict_joins_its_image_and_stays(void)
{
	struct sample_site one[] = { heap_site(700, 1, 0x70, 64, 1, 1, 0) };
	struct lastref_result *r;
	const struct process *p;
	struct sample s;
	struct model m;

	model_new(&m);
	sample_at(&s, 1, one, 1);
	event(&s, SAMPLE_EV_FIRST, 700, 1, 0, true);
	r = sample__add_lastref(&s);
	r->pid = 700;
	r->gen = 1;
	r->b.addr = 0x5000;
	r->b.size = 64;
	r->b.stack_hash = 0x70;
	r->b.cause.verdict = LR_OVERWRITTEN;
	r->at = calloc(1, sizeof(*r->at));
	r->n_at = 1;
	r->at[0].symbol = strdup("forget_it");
	r->alloc.symbol = strdup("make_it");
	r = sample__add_lastref(&s);
	r->pid = 701;		/* not in the model */
	r->gen = 1;
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	sample_done(&s);
	p = model__find(&m, 700, 1);
	CHECK(p && p->n_lastref == 1 && p->lastref_dropped == 0);
	CHECK_EQ_INT(p->lastref[0].b.addr, 0x5000);
	CHECK_EQ_INT(p->lastref[0].b.cause.verdict, LR_OVERWRITTEN);
	CHECK_EQ_STR(p->lastref[0].at[0].symbol, "forget_it");
	CHECK_EQ_STR(p->lastref[0].alloc.symbol, "make_it");
	CHECK(!model__find_pid(&m, 701));

	/* The next interval has no verdict: the one given stays. */
	sample_at(&s, 2, one, 1);
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	sample_done(&s);
	p = model__find(&m, 700, 1);
	CHECK(p && p->n_lastref == 1);

	/* Bounded: past PROC_LASTREF_MAX verdicts are counted, not kept. */
	sample_at(&s, 3, one, 1);
	for (int i = 0; i < PROC_LASTREF_MAX + 2; i++) {
		r = sample__add_lastref(&s);
		r->pid = 700;
		r->gen = 1;
		r->b.cause.verdict = LR_UNRESOLVED;
	}
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	sample_done(&s);
	p = model__find(&m, 700, 1);
	CHECK_EQ_INT(p->n_lastref, PROC_LASTREF_MAX);
	CHECK_EQ_INT(p->lastref_dropped, 3);
	model__free(&m);
}

static void test_fold_frames_arriving_later_attach_to_their_site(void)
{
	struct sample_site sites[] = { heap_site(600, 1, 0x60, 16, 1, 1, 0),
				       { .pid = 600, .kind = LT_KIND_FD, .gen = 1,
					 .stack_hash = 0x60, .outstanding_count = 1, .allocs = 1 } };
	struct sym_frame f[2] = { { .addr = 0x401000, .symbol = "leak_here", .offset = 8,
				    .module = "/bin/prog", .file = "prog.c", .line = 7 },
				  { .addr = 0x401100 } };
	struct model m;
	struct sample s;
	struct sample_frames *sf;
	const struct process *p;

	model_new(&m);
	sample_at(&s, 1, sites, 2);
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	sample_done(&s);
	p = model__find(&m, 600, 1);
	CHECK(p && p->n_sites == 2 && !p->sites[0].resolved && !p->sites[0].n_frames);

	sample_at(&s, 2, sites, 2);
	sf = sample__add_frames(&s);
	sf->pid = 600;
	sf->gen = 1;
	sf->stack_hash = 0x60;
	sf->frames = calloc(2, sizeof(*sf->frames));
	sf->n_frames = 2;
	CHECK_EQ_INT(sym_frame__copy(&sf->frames[0], &f[0]), 0);
	CHECK_EQ_INT(sym_frame__copy(&sf->frames[1], &f[1]), 0);
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	sample_done(&s);
	p = model__find(&m, 600, 1);
	/* Both kinds with that stack get the frames; the sample's copy was freed. */
	for (size_t i = 0; i < p->n_sites; i++) {
		CHECK(p->sites[i].resolved);
		CHECK_EQ_INT(p->sites[i].n_frames, 2);
		CHECK_EQ_STR(p->sites[i].frames[0].symbol, "leak_here");
		CHECK_EQ_INT(p->sites[i].frames[0].line, 7);
		CHECK(!p->sites[i].frames[1].symbol);
	}
	model__free(&m);
}

static void test_fold_takes_counters_of_live_images_and_names_of_all(void)
{
	struct model m;
	struct sample s;
	struct sample_proc *r;
	const struct process *p;

	model_new(&m);
	sample_at(&s, 1, NULL, 0);
	event(&s, SAMPLE_EV_FIRST, 700, 1, 0, true);
	r = reading(&s, 700, 1, true);
	strcpy(r->id.comm, "first");
	r->id.cmdline = strdup("./first --flag");
	r->id.start_ticks = 1234;
	r->counters = (struct proc_counters){ .rss_bytes = 8192, .threads = 2, .valid = true };
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	sample_done(&s);
	p = model__find(&m, 700, 1);
	CHECK_EQ_STR(p->comm, "first");
	CHECK_EQ_STR(p->cmdline, "./first --flag");
	CHECK_EQ_INT(p->counters.rss_bytes, 8192);
	CHECK_EQ_INT(p->hist_rss.n, 1);

	/* comm and start time are kept once known; an exited image's counters stay unknown. */
	sample_at(&s, 2, NULL, 0);
	event(&s, SAMPLE_EV_EXIT, 700, 0, 1, false);
	r = reading(&s, 700, 1, false);
	strcpy(r->id.comm, "second");
	r->id.start_ticks = 99;
	r->counters = (struct proc_counters){ .rss_bytes = 1, .valid = true };
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	sample_done(&s);
	p = model__find(&m, 700, 1);
	CHECK_EQ_STR(p->comm, "first");
	CHECK_EQ_INT(p->start_ticks, 1234);
	CHECK(!p->counters.valid);
	CHECK_EQ_INT(p->hist_rss.n, 1);
	model__free(&m);
}

static void test_fold_keeps_last_counters_when_the_reading_was_deferred(void)
{
	struct model m;
	struct sample s;
	struct sample_proc *r;
	const struct process *p;

	model_new(&m);
	sample_at(&s, 1, NULL, 0);
	event(&s, SAMPLE_EV_FIRST, 710, 1, 0, true);
	reading(&s, 710, 1, true)->counters =
		(struct proc_counters){ .rss_bytes = 8192, .threads = 2, .valid = true };
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	sample_done(&s);

	/* The budget ran out before its /proc: the last reading stands, no new history point. */
	sample_at(&s, 2, NULL, 0);
	r = reading(&s, 710, 1, true);
	r->read = false;
	s.procs_deferred = 1;
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	sample_done(&s);
	p = model__find(&m, 710, 1);
	CHECK(p && p->counters.valid && !p->counters_fresh);
	CHECK_EQ_INT(p->counters.rss_bytes, 8192);
	CHECK_EQ_INT(p->hist_rss.n, 1);
	CHECK_EQ_INT(m.procs_deferred, 1);
	model__free(&m);
}

static void test_fold_takes_time_drops_and_timings_from_the_sample(void)
{
	struct model m;
	struct sample s;

	model_new(&m);
	m.start_ns = 5 * NS;
	sample_at(&s, 7, NULL, 0);
	s.drops[LT_DROP_RINGBUF_FULL] = 3;
	s.counters[LT_CNT_EVENTS] = 42;
	s.probes_attached = 17;
	s.timing = (struct sample_timing){ .read_ms = 1, .track_ms = 2, .census_ms = 4 };
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	sample_done(&s);
	CHECK_EQ_INT(m.now_ns, 7 * NS);
	CHECK(model__elapsed_s(&m) == 2.0);
	CHECK_EQ_INT(model__dropped(&m), 3);
	CHECK_EQ_INT(model__events(&m), 42);
	CHECK_EQ_INT(m.probes_attached, 17);
	CHECK(m.collect_ms == 7.0);
	model__free(&m);
}

/*
 * A process's losses in the shared maps come with its probe entries from the procs map: an
 * image without heap calls (one that only opens descriptors) gets them too, and its call
 * rate stays unknown.
 */
static void test_fold_takes_each_images_share_drops_from_the_sample(void)
{
	struct sample_site sites[] = {
		heap_site(600, 1, 0xa, 64, 1, 1, 0),
		{ .pid = 601, .kind = LT_KIND_FD, .gen = 2, .stack_hash = 0xb,
		  .outstanding_count = 1, .allocs = 1 },
	};
	struct sample_calls calls[] = {
		{ .pid = 600, .gen = 1, .heap_calls = 10, .share_drops = { [LT_SHARE_HEAP] = 5 } },
		{ .pid = 601, .gen = 2, .share_drops = { [LT_SHARE_FD] = 1616 } },
	};
	const struct process *a, *b;
	struct model m;
	struct sample s;

	model_new(&m);
	sample_at(&s, 3, sites, 2);
	s.calls = calls;
	s.n_calls = 2;
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	s.calls = NULL;
	s.n_calls = 0;
	sample_done(&s);
	a = model__find(&m, 600, 1);
	b = model__find(&m, 601, 2);
	CHECK(a && b);
	CHECK_EQ_INT(a->share_drops[LT_SHARE_HEAP], 5);
	CHECK_EQ_INT(a->heap_calls, 10);
	CHECK_EQ_INT(b->share_drops[LT_SHARE_FD], 1616);
	CHECK_EQ_INT(b->share_drops[LT_SHARE_HEAP], 0);
	CHECK_EQ_INT(b->heap_calls_ns, 0);
	model__free(&m);
}

/*
 * Reconciling with /proc: a pid with no /proc entry is gone; one whose start time differs
 * from the image's is a newer process; a read error or an unknown start time says nothing.
 */
static void test_reconcile_tells_gone_and_reused_pid_from_live(void)
{
	CHECK_EQ_INT(proc_fate_of(5000, 0, 5000), PROC_ALIVE);
	CHECK_EQ_INT(proc_fate_of(5000, -ENOENT, 0), PROC_GONE);
	CHECK_EQ_INT(proc_fate_of(5000, -ESRCH, 0), PROC_GONE);
	CHECK_EQ_INT(proc_fate_of(0, -ENOENT, 0), PROC_GONE);
	CHECK_EQ_INT(proc_fate_of(5000, 0, 9000), PROC_REUSED);
	CHECK_EQ_INT(proc_fate_of(0, 0, 9000), PROC_ALIVE);
	CHECK_EQ_INT(proc_fate_of(5000, -EACCES, 0), PROC_ALIVE);
	CHECK_EQ_INT(proc_fate_of(5000, -EINVAL, 0), PROC_ALIVE);
}

/*
 * A process whose exit event was lost, found ended in /proc: the sample carries the EXIT
 * event and the counts.  It is reported exited once and then reaped (its maps' records are
 * purged with it); the counts add up over the run.
 */
static void test_fold_reconciled_exit_reaps_process_and_counts(void)
{
	struct sample_site sites[] = { heap_site(300, 1, 0xc, 16, 1, 1, 0),
				       heap_site(301, 2, 0xd, 16, 1, 1, 0) };
	struct dead_image *dead = NULL;
	struct model m;
	struct sample s;
	const struct process *p;

	model_new(&m);
	sample_at(&s, 1, sites, 2);
	event(&s, SAMPLE_EV_FIRST, 300, 1, 0, false);
	event(&s, SAMPLE_EV_FIRST, 301, 2, 0, false);
	reading(&s, 300, 1, true);
	reading(&s, 301, 2, true);
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	sample_done(&s);
	model__reported(&m);
	CHECK_EQ_INT(model__reap(&m, &dead), 0);

	/* 300 is gone, 301's pid is a newer process: both ended without an event. */
	sample_at(&s, 2, sites, 2);
	event(&s, SAMPLE_EV_EXIT, 300, 0, 1, false);
	event(&s, SAMPLE_EV_EXIT, 301, 0, 2, false);
	s.reconciled_exited = 1;
	s.reconciled_reused = 1;
	reading(&s, 300, 1, false);
	reading(&s, 301, 2, false);
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	sample_done(&s);
	p = model__find(&m, 300, 1);
	CHECK(p && p->exited && !p->counters.valid);
	p = model__find(&m, 301, 2);
	CHECK(p && p->exited);
	CHECK_EQ_INT(m.reconciled_exited, 1);
	CHECK_EQ_INT(m.reconciled_reused, 1);
	model__reported(&m);
	CHECK_EQ_INT(model__reap(&m, &dead), 2);
	free(dead);
	dead = NULL;

	/* Counts are totals since the start. */
	sample_at(&s, 3, NULL, 0);
	s.reconciled_exited = 2;
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	sample_done(&s);
	CHECK_EQ_INT(m.reconciled_exited, 3);
	CHECK_EQ_INT(m.reconciled_reused, 1);
	model__free(&m);
}

/*
 * The census deletes a record of a descriptor /proc showed closed only if the map still holds
 * the record it read: closed and created again since (at another site, or at the same one a
 * moment later), the number's record is the new descriptor's and stays.
 */
static void test_census_keeps_reopened_fd(void)
{
	struct sample_fd seen = { .pid = 40, .fd = 5, .gen = 3, .stack_hash = 0xa, .ts_ns = 100 };
	struct sample_fd now = seen;

	CHECK(sample_fd__same_record(&seen, &now));
	now.stack_hash = 0xb;
	now.ts_ns = 250;
	CHECK(!sample_fd__same_record(&seen, &now));
	now = seen;
	now.ts_ns = 101;
	CHECK(!sample_fd__same_record(&seen, &now));
	now = seen;
	now.gen = 4;
	CHECK(!sample_fd__same_record(&seen, &now));
	now = seen;
	now.fd = 6;
	CHECK(!sample_fd__same_record(&seen, &now));
}

int main(void)
{
	RUN(test_heap_mode_marks_suspects_and_keeps_the_heap_records_of_untraced_ones);
	RUN(test_heap_mode_released_process_keeps_its_sites_frozen_and_marked);
	RUN(test_fold_exited_process_stays_for_one_report_then_is_reaped);
	RUN(test_fold_mmap_sites_sum_into_the_process_mmap_totals_not_its_heap);
	RUN(test_fold_exec_starts_a_new_image_generation);
	RUN(test_fold_site_that_drains_to_zero_stays_until_the_kernel_drops_it);
	RUN(test_fold_fd_repairs_close_descriptors_the_census_found_closed);
	RUN(test_census_keeps_reopened_fd);
	RUN(test_reconcile_tells_gone_and_reused_pid_from_live);
	RUN(test_fold_reconciled_exit_reaps_process_and_counts);
	RUN(test_fold_scan_result_is_attached_and_carried_to_the_next_interval);
	RUN(test_fold_lastref_verdict_joins_its_image_and_stays);
	RUN(test_fold_frames_arriving_later_attach_to_their_site);
	RUN(test_fold_takes_counters_of_live_images_and_names_of_all);
	RUN(test_fold_keeps_last_counters_when_the_reading_was_deferred);
	RUN(test_fold_takes_time_drops_and_timings_from_the_sample);
	RUN(test_fold_takes_each_images_share_drops_from_the_sample);
	CHECK_EXIT();
}
