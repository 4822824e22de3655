// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * heapctl.c - whole-system heap tracing under an overhead budget.
 *
 * The cost of heap tracing over an interval is the probe entries the kernel counted
 * (stats.heap_calls) times the trap cost calibrated at start-up, plus the programs' own run
 * time (bpf_stats, counted while leaktop runs).  While exact, that is measured, and so is
 * what it costs per unit of the machine's work (its busy CPU time); while suspects only, the
 * cost exact tracing would have is estimated from the machine's busy time now.  core/heapmode
 * decides; this file attaches (pid-filtered links for the processes kept, the suspects and
 * the picks) and detaches.  A process released while alive keeps its heap records, frozen (the
 * model marks them); only the records of processes gone are dropped.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/model.h"
#include "core/sample.h"
#include "core/series.h"
#include "live/calibrate.h"
#include "live/collector.h"
#include "live/heapctl.h"
#include "live/allocs.h"
#include "live/attach.h"
#include "live/loader.h"
#include "live/procfs.h"
#include "live/tracker.h"
#include "util/escape.h"
#include "util/msg.h"

struct heapctl {
	struct heapmode hm;
	struct heapctl_config cfg;
	struct loader *ld;
	struct collector *col;
	struct tracker *tr;
	double trap_ns;			/* NaN: the calibration failed */
	long ncpu;
	bool have_last;
	uint64_t last_ns, last_calls, last_run_ns, last_busy_ns;
	uint64_t win_ns, win_calls, win_run_ns, win_busy_ns;	/* the window's start */
	double last_self_cpu_s;
	double cost_pct, exact_cost_pct;	/* NaN: unknown */
	double call_ns;			/* one probe entry: the trap and the programs' run time */
	uint32_t *picked;		/* the user's picks (TUI), kept in either mode */
	size_t n_picked;
	struct heapmode_traced *shown;	/* exact mode: the picks, for the model */
	const struct model *m;		/* the latest interval's (heapctl__step) */
};

int heapctl__new(struct heapctl **out, struct loader *ld, struct collector *col,
		 struct tracker *tr, const struct heapctl_config *cfg, uint64_t now_ns, char *msg,
		 size_t msg_len)
{
	struct heapmode_config hcfg = { .budget_pct = cfg->budget_pct,
					.max_suspects = cfg->max_suspects, .exact = cfg->exact,
					.interval_s = cfg->interval_s };
	struct heapctl *hc = calloc(1, sizeof(*hc));
	uint64_t run_cnt;
	int err;

	*out = NULL;
	if (!hc)
		return -ENOMEM;
	hc->cfg = *cfg;
	hc->ld = ld;
	hc->col = col;
	hc->tr = tr;
	hc->ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (hc->ncpu < 1)
		hc->ncpu = 1;
	hc->cost_pct = hc->exact_cost_pct = NAN;
	heapmode__init(&hc->hm, &hcfg, now_ns);
	err = calibrate__trap_ns(ld, &hc->trap_ns, msg, msg_len);
	if (err) {
		/* Without it the cost is unknown, and unknown never switches anything. */
		hc->trap_ns = NAN;
		if (cfg->verbose)
			err_line("%s; the overhead budget is not applied", msg);
	} else if (cfg->verbose) {
		err_line("a probe hit costs %.0f ns here (trap and return probe)", hc->trap_ns);
	}
	err = loader__count_run_time(ld);
	if (err && cfg->verbose)
		err_line("cannot count the BPF programs' run time (%s): the cost counts the traps "
			 "only", strerror(-err));
	/* The first interval is measured from here (the system-wide probes come next). */
	hc->have_last = !procfs__cpu_busy_ns(&hc->last_busy_ns);
	hc->last_ns = now_ns;
	loader__heap_run_time(ld, &hc->last_run_ns, &run_cnt);
	msg[0] = '\0';
	*out = hc;
	return 0;
}

void heapctl__free(struct heapctl *hc)
{
	if (!hc)
		return;
	heapmode__free(&hc->hm);
	free(hc->picked);
	free(hc->shown);
	free(hc);
}

bool heapctl__exact(const struct heapctl *hc)
{
	return hc->hm.mode == HEAP_MODE_EXACT;
}

static bool is_picked(const struct heapctl *hc, uint32_t pid)
{
	for (size_t i = 0; i < hc->n_picked; i++)
		if (hc->picked[i] == pid)
			return true;
	return false;
}

/* The interval's cost of heap tracing, and what exact tracing costs (measured or estimated). */
static void measure(struct heapctl *hc, const struct model *m, uint64_t now_ns)
{
	uint64_t calls = m->counters[LT_CNT_HEAP_CALLS], run_ns = 0, run_cnt, busy_ns = 0;
	bool busy_known = !procfs__cpu_busy_ns(&busy_ns);
	double dt_ns, cost_ns, other_busy_ns, all_ns;

	loader__heap_run_time(hc->ld, &run_ns, &run_cnt);
	if (hc->have_last && now_ns > hc->last_ns && calls >= hc->last_calls && !isnan(hc->trap_ns)) {
		dt_ns = now_ns - hc->last_ns;
		all_ns = dt_ns * hc->ncpu;
		cost_ns = (calls - hc->last_calls) * hc->trap_ns +
			  (run_ns >= hc->last_run_ns ? run_ns - hc->last_run_ns : 0);
		if (calls > hc->last_calls)
			hc->call_ns = cost_ns / (calls - hc->last_calls);
		hc->cost_pct = 100.0 * cost_ns / all_ns;
		/* /proc/stat counts in ticks, leaktop's own time is exact: never below 0. */
		other_busy_ns = busy_known && busy_ns >= hc->last_busy_ns ?
				(double)(busy_ns - hc->last_busy_ns) -
				(m->self_cpu_s - hc->last_self_cpu_s) * 1e9 : -1;
		if (busy_known && other_busy_ns < 0)
			other_busy_ns = 0;
		if (hc->hm.mode == HEAP_MODE_EXACT) {
			hc->exact_cost_pct = hc->cost_pct;
			if (other_busy_ns > 0)
				heapmode__learn(&hc->hm, cost_ns, other_busy_ns);
		} else {
			hc->exact_cost_pct = 100.0 * heapmode__estimate_exact_ns(&hc->hm,
										other_busy_ns) / all_ns;
		}
	}
	hc->have_last = true;
	hc->last_ns = now_ns;
	hc->last_calls = calls;
	hc->last_run_ns = run_ns;
	hc->last_busy_ns = busy_ns;
	hc->last_self_cpu_s = m->self_cpu_s;
}

/* What tracing p's heap costs now, % of all CPUs (NaN: not known yet). */
static double cost_of(const struct heapctl *hc, const struct process *p)
{
	if (!p->heap_calls_ns || isnan(hc->trap_ns))
		return NAN;
	return 100.0 * p->heap_calls_per_s * (hc->call_ns > 0 ? hc->call_ns : hc->trap_ns) /
	       (1e9 * hc->ncpu);
}

/* The live process (leaktop aside) whose heap tracing costs the most now; NULL: none known. */
static const struct process *costliest(const struct heapctl *hc, const struct model *m)
{
	const struct process *top = NULL;
	double top_pct = 0, pct;

	for (size_t i = 0; i < m->n_procs; i++) {
		const struct process *p = &m->procs[i];

		if (p->exited || p->pid == (uint32_t)hc->cfg.self_tgid)
			continue;
		pct = cost_of(hc, p);
		if (pct > top_pct) {
			top_pct = pct;
			top = p;
		}
	}
	return top;
}

/* The line's reason when the bucket is empty. */
static const char *over_bucket(const struct heapctl *hc, char *buf, size_t len)
{
	snprintf(buf, len, "exact tracing cost %.2f%% of the CPUs, over the budget of %.2f%% for "
		 "longer than the bucket holds", hc->exact_cost_pct, hc->cfg.budget_pct);
	return buf;
}

/* "1234 (name)", the name escaped. */
static const char *who(const struct model *m, uint32_t pid, char *buf, size_t len)
{
	const struct process *p = model__find_pid(m, pid);
	char comm[64];

	/* Gone: the name of its last image. */
	for (size_t i = 0; !p && i < m->n_procs; i++)
		if (m->procs[i].pid == pid)
			p = &m->procs[i];

	escape__str(comm, sizeof(comm), p && p->comm[0] ? p->comm : "?");
	snprintf(buf, len, "%" PRIu32 " (%s)", pid, comm);
	return buf;
}

/* Pid-filtered heap probes on the allocators pid uses; 0 or -errno. */
static int attach_pid(struct heapctl *hc, uint32_t pid)
{
	struct alloc_obj objs[8];
	char msg[512];
	size_t n;
	int err = allocs__of_pid(hc->cfg.allocs, (int)pid, objs, 8, &n);

	if (!err && !n)
		err = -ENOEXEC;
	for (size_t i = 0; !err && i < n; i++)
		err = loader__attach_libc(hc->ld, &objs[i].ref, pid, msg, sizeof(msg));
	if (err && hc->cfg.verbose)
		err_line("cannot trace the heap of process %" PRIu32 ": %s", pid,
			 err == -ENOEXEC ? "it maps no allocator leaktop can probe" : strerror(-err));
	if (err)
		loader__detach_pid(hc->ld, pid);
	return err;
}

/* Stop tracing pids[]: probes off; the records of those gone are forgotten. */
static void untrace(struct heapctl *hc, const uint32_t *pids, size_t n)
{
	uint32_t *gone = calloc(n ? n : 1, sizeof(*gone));
	size_t n_gone = 0;

	for (size_t i = 0; i < n; i++) {
		loader__detach_pid(hc->ld, pids[i]);
		if (gone && !heapmode__released(&hc->hm, pids[i])) {
			gone[n_gone++] = pids[i];
			tracker__resend_frames(hc->tr, pids[i]);
		}
	}
	if (n_gone)
		collector__purge_heap(hc->col, gone, n_gone, false);
	free(gone);
}

/* Has p heap sites (records counted), and is one of them flagged? */
static bool heap_sites(const struct process *p, bool *flagged)
{
	bool any = false;

	*flagged = false;
	for (size_t i = 0; i < p->n_sites; i++) {
		if (p->sites[i].kind != LT_KIND_HEAP)
			continue;
		any = true;
		*flagged |= p->sites[i].flagged;
	}
	return any;
}

/* A process born since exact mode ended: how its anonymous memory grew since its first reading. */
static double young_growth(const struct heapctl *hc, const struct process *p)
{
	const struct series *s = &p->hist_anon;
	uint32_t first = (s->pos + s->cap - s->n) % (s->cap ? s->cap : 1);

	/* Its first reading must still be in the ring: young enough. */
	if (!s->cap || s->n < 2 || s->n == s->cap)
		return 0;
	return heapmode__young_growth_per_s(&hc->hm, p->first_seen_ns, s->ts_ns[first],
					    s->v[first], s->ts_ns[(s->pos + s->cap - 1) % s->cap],
					    series__last(s));
}

/* Every live process as heapmode sees it; *out freed by the caller.  0 or -ENOMEM. */
static int candidates(struct heapctl *hc, const struct model *m, struct heapmode_candidate **out,
		      size_t *n_out)
{
	struct heapmode_candidate *c = calloc(m->n_procs ? m->n_procs : 1, sizeof(*c));
	size_t n = 0;

	*out = c;
	*n_out = 0;
	if (!c)
		return -ENOMEM;
	for (size_t i = 0; i < m->n_procs; i++) {
		const struct process *p = &m->procs[i];
		const struct heapmode_traced *t = heapmode__traced(&hc->hm, p->pid);
		double g = p->untraced_growth_per_s;

		if (p->exited || p->pid == (uint32_t)hc->cfg.self_tgid)
			continue;
		/* A traced one's heap trend counts too (it keeps a leaking suspect in). */
		if (t && (p->flags & PROC_HEAP_GROWTH) && p->heap_growth_per_s > g)
			g = p->heap_growth_per_s;
		if (!t && !g)
			g = young_growth(hc, p);
		c[n] = (struct heapmode_candidate){ .pid = p->pid, .growing = g > 0,
						    .growth_per_s = g,
						    .picked = is_picked(hc, p->pid),
						    .cost_pct = cost_of(hc, p),
						    .uid = HEAPMODE_UID_UNKNOWN,
						    .heap_count = p->heap_outstanding_count > 0 ?
								  p->heap_outstanding_count : 0 };
		c[n].has_heap = heap_sites(p, &c[n].flagged);
		/* Whose it is, for fair slots: only what may hold or take one is asked. */
		if (t && !t->picked)
			c[n].uid = t->uid;
		else if (g > 0 && procfs__uid(p->pid, &c[n].uid))
			c[n].uid = HEAPMODE_UID_UNKNOWN;
		n++;
	}
	*n_out = n;
	return 0;
}

static const char *why_text(enum heapmode_why why)
{
	static const char *const text[] = {
		[HEAPMODE_WHY_COST] = "it cost over the budget for its diagnosis window; its sites "
				      "are kept; t in the TUI traces it anyway",
		[HEAPMODE_WHY_DIAGNOSED] = "a site of it is flagged and it costs over the budget; "
					   "its sites are kept",
		[HEAPMODE_WHY_COSTLIEST] = "among the costliest when exact tracing ended; its "
					   "sites are kept",
		[HEAPMODE_WHY_LIMIT] = "more processes to keep traced than the limit; its sites "
				       "are kept",
		[HEAPMODE_WHY_QUIET] = "stopped growing; its sites are kept",
		[HEAPMODE_WHY_PREEMPTED] = "a stronger grower took its place; its sites are kept",
		[HEAPMODE_WHY_GONE] = "it exited",
	};

	return text[why];
}

/* Say what changed, detach the removed, attach the added (dropped again when that fails). */
static void carry_out(struct heapctl *hc, const struct model *m, struct heapmode_changes *ch,
		      uint64_t now_ns, void (*say)(void *, const char *), void *say_ctx)
{
	char line[320], name[96];

	untrace(hc, ch->removed, ch->n_removed);
	for (size_t i = 0; i < ch->n_removed; i++) {
		snprintf(line, sizeof(line), "heap tracing: released %s (%s)",
			 who(m, ch->removed[i], name, sizeof(name)), why_text(ch->why[i]));
		say(say_ctx, line);
	}
	for (size_t i = 0; i < ch->n_added; i++) {
		const struct heapmode_traced *t = heapmode__traced(&hc->hm, ch->added[i]);
		bool kept = t && t->role == HEAPMODE_ROLE_KEPT;

		if (attach_pid(hc, ch->added[i])) {
			/* A kept one's records stay, frozen: what was counted is not lost. */
			if (kept)
				heapmode__release(&hc->hm, ch->added[i], now_ns);
			else
				heapmode__drop(&hc->hm, ch->added[i]);
			continue;
		}
		if (kept || (t && t->picked))
			continue;
		snprintf(line, sizeof(line), "heap tracing: suspect %s (memory grows)",
			 who(m, ch->added[i], name, sizeof(name)));
		say(say_ctx, line);
	}
}

/* Exact mode has ended (why: the line said, after "heap tracing: suspects only"). */
static void to_suspects(struct heapctl *hc, uint64_t now_ns, const char *why,
			void (*say)(void *, const char *), void *say_ctx)
{
	struct heapmode_candidate *c = NULL;
	struct heapmode_changes ch = { 0 };
	char line[384];
	size_t n = 0, kept = 0;

	/* The kept processes' own probes go on before the system-wide ones come off. */
	loader__heap_switch_begin(hc->ld, true);
	snprintf(line, sizeof(line), "heap tracing: suspects only (%s)", why);
	say(say_ctx, line);
	/* Process by process: the costliest released, the others' counts kept exact. */
	if (hc->m && !candidates(hc, hc->m, &c, &n) &&
	    !heapmode__leave_exact(&hc->hm, now_ns, c, n, &ch))
		carry_out(hc, hc->m, &ch, now_ns, say, say_ctx);
	loader__heap_switch_end(hc->ld, true);
	heapmode_changes__free(&ch);
	free(c);
	for (size_t i = 0; i < hc->hm.n_traced; i++)
		kept += hc->hm.traced[i].role == HEAPMODE_ROLE_KEPT;
	if (kept) {
		snprintf(line, sizeof(line), "heap tracing: processes with heap records traced "
			 "exactly by pid: %zu; released, their sites kept: %zu", kept,
			 hc->hm.n_released);
		say(say_ctx, line);
	}
	/*
	 * Every record stays: a process neither kept nor released here (too new for the model)
	 * shows its records as released too (model.c), never as live counts.
	 */
}

void heapctl__window(struct heapctl *hc, uint64_t now_ns, void (*say)(void *ctx, const char *line),
		     void *say_ctx)
{
	uint64_t calls = 0, run_ns = 0, run_cnt, busy_ns = 0, dt_ns = now_ns - hc->win_ns;
	bool busy_known;
	double cost_ns, cost_pct;
	char why[192];

	if (hc->hm.mode != HEAP_MODE_EXACT || hc->cfg.exact || isnan(hc->trap_ns)) {
		hc->win_ns = 0;		/* a return to exact starts a new window */
		return;
	}
	if ((hc->win_ns && dt_ns < HEAPMODE_WINDOW_S * 1e9) ||
	    collector__counter(hc->col, LT_CNT_HEAP_CALLS, &calls))
		return;
	loader__heap_run_time(hc->ld, &run_ns, &run_cnt);
	busy_known = !procfs__cpu_busy_ns(&busy_ns);
	if (hc->win_ns && calls >= hc->win_calls) {
		cost_ns = (calls - hc->win_calls) * hc->trap_ns +
			  (run_ns >= hc->win_run_ns ? run_ns - hc->win_run_ns : 0);
		/* The window teaches the share of the work too (suspects mode estimates with it). */
		if (busy_known && busy_ns > hc->win_busy_ns)
			heapmode__learn(&hc->hm, cost_ns, busy_ns - hc->win_busy_ns);
		cost_pct = 100.0 * cost_ns / ((double)dt_ns * hc->ncpu);
		if (heapmode__window(&hc->hm, now_ns, dt_ns, cost_pct) == HEAPMODE_TO_SUSPECTS) {
			hc->exact_cost_pct = cost_pct;
			to_suspects(hc, now_ns, over_bucket(hc, why, sizeof(why)), say, say_ctx);
		}
	}
	hc->win_ns = now_ns;
	hc->win_calls = calls;
	hc->win_run_ns = run_ns;
	hc->win_busy_ns = busy_ns;
}

void heapctl__step(struct heapctl *hc, const struct model *m, uint64_t now_ns,
		   void (*say)(void *ctx, const char *line), void *say_ctx)
{
	struct heapmode_candidate *c;
	struct heapmode_changes ch;
	enum heapmode_change change;
	const struct process *top;
	size_t n = 0;
	char line[256];

	hc->m = m;
	measure(hc, m, now_ns);
	top = costliest(hc, m);
	change = heapmode__hot(&hc->hm, now_ns, top ? cost_of(hc, top) : NAN);
	if (change == HEAPMODE_TO_SUSPECTS) {
		char name[96], why[256];

		snprintf(why, sizeof(why), "tracing %s alone cost %.2f%% of the CPUs, over %g "
			 "times the budget of %.2f%% for %g s", who(m, top->pid, name, sizeof(name)),
			 cost_of(hc, top), HEAPMODE_HOT_FACTOR, hc->cfg.budget_pct, HEAPMODE_HOT_S);
		to_suspects(hc, now_ns, why, say, say_ctx);
		return;
	}
	change = heapmode__step(&hc->hm, now_ns, hc->exact_cost_pct);
	if (change == HEAPMODE_TO_SUSPECTS) {
		char why[192];

		to_suspects(hc, now_ns, over_bucket(hc, why, sizeof(why)), say, say_ctx);
		return;
	} else if (change == HEAPMODE_TO_EXACT) {
		/*
		 * The system-wide probes go in, then the pid-filtered ones come off (no call
		 * missed nor seen twice in between).  Every record stays.
		 */
		loader__heap_switch_begin(hc->ld, false);
		snprintf(line, sizeof(line), "heap tracing: exact again (exact tracing would cost "
			 "%.2f%% of the CPUs, under half the budget of %.2f%%)",
			 hc->exact_cost_pct, hc->cfg.budget_pct);
		say(say_ctx, line);
		attach__system(hc->cfg.attach, true);
		loader__heap_switch_end(hc->ld, false);
	}
	if (hc->hm.mode != HEAP_MODE_SUSPECTS)
		return;
	if (candidates(hc, m, &c, &n)) {
		free(c);
		return;
	}
	if (!heapmode__choose(&hc->hm, now_ns, c, n, &ch)) {
		carry_out(hc, m, &ch, now_ns, say, say_ctx);
		heapmode_changes__free(&ch);
	}
	free(c);
}

static int set_picked(struct heapctl *hc, uint32_t pid, bool on)
{
	uint32_t *v;

	if (!on) {
		for (size_t i = 0; i < hc->n_picked; i++)
			if (hc->picked[i] == pid)
				hc->picked[i] = hc->picked[--hc->n_picked];
		return 0;
	}
	if (is_picked(hc, pid))
		return 0;
	v = realloc(hc->picked, (hc->n_picked + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	v[hc->n_picked++] = pid;
	hc->picked = v;
	return 0;
}

void heapctl__toggle(struct heapctl *hc, const struct model *m, uint32_t pid, uint64_t now_ns,
		     char *msg, size_t msg_len)
{
	char name[96];
	bool on = !is_picked(hc, pid) && !heapmode__traced(&hc->hm, pid);

	who(m, pid, name, sizeof(name));
	if (set_picked(hc, pid, on)) {
		msg__set(msg, msg_len, 0, "out of memory");
		return;
	}
	if (hc->hm.mode == HEAP_MODE_EXACT) {
		msg__set(msg, msg_len, 0, on ? "%s stays heap-traced if leaktop goes to suspects only"
				       : "%s no longer kept heap-traced in suspects mode", name);
		return;
	}
	if (!on) {
		if (heapmode__release(&hc->hm, pid, now_ns))
			untrace(hc, &pid, 1);
		msg__set(msg, msg_len, 0, "heap tracing of %s stopped; its sites are kept", name);
		return;
	}
	if (heapmode__pick(&hc->hm, pid, now_ns) || attach_pid(hc, pid)) {
		heapmode__drop(&hc->hm, pid);
		set_picked(hc, pid, false);
		msg__set(msg, msg_len, 0, "cannot trace the heap of %s (no C library to probe, or "
			 "gone); run with -v for the cause", name);
		return;
	}
	msg__set(msg, msg_len, 0, "heap tracing of %s started: blocks allocated from now on",
		 name);
}

void heapctl__describe(struct heapctl *hc, struct sample_heap *out)
{
	memset(out, 0, sizeof(*out));
	out->traced_cost_pct = NAN;
	out->budgeted = true;
	out->mode = hc->hm.mode;
	out->mode_since_ns = hc->hm.mode_since_ns;
	out->cost_pct = hc->cost_pct;
	out->exact_cost_pct = hc->exact_cost_pct;
	out->budget_pct = hc->cfg.budget_pct;
	out->trap_ns = hc->trap_ns;
	out->switches = hc->hm.switches;
	out->bucket_fill = heapmode__bucket_fill(&hc->hm);
	if (hc->hm.mode == HEAP_MODE_SUSPECTS) {
		out->traced = hc->hm.traced;
		out->n_traced = hc->hm.n_traced;
		out->released = hc->hm.released;
		out->n_released = hc->hm.n_released;
		out->traced_cost_pct = heapmode__traced_cost_pct(&hc->hm);
		return;
	}
	/* Exact: every process is traced; the picks are shown as such. */
	free(hc->shown);
	hc->shown = calloc(hc->n_picked ? hc->n_picked : 1, sizeof(*hc->shown));
	for (size_t i = 0; hc->shown && i < hc->n_picked; i++)
		hc->shown[i] = (struct heapmode_traced){ .pid = hc->picked[i], .picked = true };
	out->traced = hc->shown;
	out->n_traced = hc->shown ? hc->n_picked : 0;
}
