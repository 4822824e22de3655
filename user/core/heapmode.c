// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * heapmode.c - the overhead budget's decisions: exact or suspects only, and who is a suspect.
 *
 * Exact tracing is left when its cost stays over the budget for a few intervals, and comes
 * back when the estimate has stayed under half the budget for a hold time; each return that
 * proves too early (over budget again before twice the hold has passed) doubles the hold, up
 * to HEAPMODE_RETURN_MAX_S, so a workload that hovers around the budget does not make
 * leaktop flap.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/heapmode.h"

static uint64_t hold_ns(double intervals, double min_s, double interval_s)
{
	double s = intervals * interval_s;

	return (uint64_t)((s > min_s ? s : min_s) * 1e9);
}

void heapmode__init(struct heapmode *h, const struct heapmode_config *cfg, uint64_t now_ns)
{
	memset(h, 0, sizeof(*h));
	h->cfg = *cfg;
	h->mode = HEAP_MODE_EXACT;
	h->mode_since_ns = now_ns;
	h->cost_per_work = NAN;
	h->return_hold_s = (double)hold_ns(HEAPMODE_RETURN_INTERVALS, HEAPMODE_RETURN_MIN_S,
					   cfg->interval_s) / 1e9;
}

void heapmode__free(struct heapmode *h)
{
	free(h->traced);
	free(h->banned);
	h->traced = NULL;
	h->banned = NULL;
	h->n_traced = h->cap_traced = h->n_banned = 0;
}

/* Is pid kept out for its cost (bans that ended are dropped on the way)? */
static bool banned(struct heapmode *h, uint32_t pid, uint64_t now_ns)
{
	bool found = false;
	size_t keep = 0;

	for (size_t i = 0; i < h->n_banned; i++) {
		if (h->banned[i].until_ns <= now_ns)
			continue;
		found |= h->banned[i].pid == pid;
		h->banned[keep++] = h->banned[i];
	}
	h->n_banned = keep;
	return found;
}

static int ban(struct heapmode *h, uint32_t pid, uint64_t until_ns)
{
	struct heapmode_ban *v = realloc(h->banned, (h->n_banned + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	v[h->n_banned++] = (struct heapmode_ban){ pid, until_ns };
	h->banned = v;
	return 0;
}

static enum heapmode_change to_suspects(struct heapmode *h, uint64_t now_ns)
{
	/* Back in exact mode too soon after the last return: wait longer next time. */
	if (h->switches && now_ns - h->mode_since_ns < 2 * h->return_hold_s * 1e9) {
		h->return_hold_s *= 2;
		if (h->return_hold_s > HEAPMODE_RETURN_MAX_S)
			h->return_hold_s = HEAPMODE_RETURN_MAX_S;
	}
	h->mode = HEAP_MODE_SUSPECTS;
	h->mode_since_ns = now_ns;
	h->over_since_ns = h->under_since_ns = h->far_since_ns = 0;
	h->n_traced = 0;
	h->switches++;
	return HEAPMODE_TO_SUSPECTS;
}

enum heapmode_change heapmode__window(struct heapmode *h, uint64_t now_ns, uint64_t window_ns,
				      double cost_pct)
{
	if (h->cfg.exact || h->mode != HEAP_MODE_EXACT || isnan(cost_pct) || !window_ns)
		return HEAPMODE_SAME;
	if (cost_pct <= HEAPMODE_FAR_OVER_FACTOR * h->cfg.budget_pct) {
		h->far_since_ns = 0;
		return HEAPMODE_SAME;
	}
	if (!h->far_since_ns)
		h->far_since_ns = now_ns > window_ns ? now_ns - window_ns : 1;
	if (now_ns - h->far_since_ns < HEAPMODE_FAR_OVER_MIN_S * 1e9)
		return HEAPMODE_SAME;
	return to_suspects(h, now_ns);
}

enum heapmode_change heapmode__step(struct heapmode *h, uint64_t now_ns, double exact_cost_pct)
{
	double budget = h->cfg.budget_pct;

	if (h->cfg.exact || isnan(exact_cost_pct))
		return HEAPMODE_SAME;
	if (h->mode == HEAP_MODE_EXACT) {
		if (exact_cost_pct <= budget) {
			h->over_since_ns = 0;
			return HEAPMODE_SAME;
		}
		/*
		 * The interval that measured it was over already: a cost many times the budget
		 * (every allocator call of a build trapping) is not waited out for seconds.
		 */
		if (!h->over_since_ns)
			h->over_since_ns = now_ns - (uint64_t)(h->cfg.interval_s * 1e9);
		if (exact_cost_pct > HEAPMODE_FAR_OVER_FACTOR * budget ?
		    now_ns - h->over_since_ns < hold_ns(1, HEAPMODE_FAR_OVER_MIN_S,
							h->cfg.interval_s) :
		    now_ns - h->over_since_ns < hold_ns(HEAPMODE_OVER_INTERVALS,
							HEAPMODE_OVER_MIN_S, h->cfg.interval_s))
			return HEAPMODE_SAME;
		return to_suspects(h, now_ns);
	}
	if (exact_cost_pct >= budget * HEAPMODE_UNDER_FRACTION) {
		h->under_since_ns = 0;
		return HEAPMODE_SAME;
	}
	if (!h->under_since_ns)
		h->under_since_ns = now_ns;
	if (now_ns - h->under_since_ns < h->return_hold_s * 1e9)
		return HEAPMODE_SAME;
	h->mode = HEAP_MODE_EXACT;
	h->mode_since_ns = now_ns;
	h->over_since_ns = h->under_since_ns = 0;
	h->n_traced = 0;
	h->switches++;
	return HEAPMODE_TO_EXACT;
}

static int push_pid(uint32_t **v, size_t *n, uint32_t pid)
{
	uint32_t *w = realloc(*v, (*n + 1) * sizeof(**v));

	if (!w)
		return -ENOMEM;
	w[(*n)++] = pid;
	*v = w;
	return 0;
}

static const struct heapmode_candidate *candidate_of(const struct heapmode_candidate *c,
						     size_t n, uint32_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (c[i].pid == pid)
			return &c[i];
	return NULL;
}

const struct heapmode_traced *heapmode__traced(const struct heapmode *h, uint32_t pid)
{
	for (size_t i = 0; i < h->n_traced; i++)
		if (h->traced[i].pid == pid)
			return &h->traced[i];
	return NULL;
}

static int add_traced(struct heapmode *h, const struct heapmode_candidate *c, uint64_t now_ns,
		      struct heapmode_changes *out)
{
	if (h->n_traced == h->cap_traced) {
		size_t cap = h->cap_traced ? h->cap_traced * 2 : 16;
		struct heapmode_traced *v = realloc(h->traced, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		h->traced = v;
		h->cap_traced = cap;
	}
	if (push_pid(&out->added, &out->n_added, c->pid))
		return -ENOMEM;
	h->traced[h->n_traced++] = (struct heapmode_traced){
		.pid = c->pid, .since_ns = now_ns, .last_growth_ns = now_ns,
		.growth_per_s = c->growth_per_s, .picked = c->picked, .uid = c->uid };
	return 0;
}

static int remove_traced(struct heapmode *h, size_t i, struct heapmode_changes *out)
{
	if (push_pid(&out->removed, &out->n_removed, h->traced[i].pid))
		return -ENOMEM;
	h->traced[i] = h->traced[--h->n_traced];
	return 0;
}

/* Growing, unpicked and untraced candidates, strongest first. */
static int cmp_growth(const void *a, const void *b)
{
	const struct heapmode_candidate *x = *(const struct heapmode_candidate *const *)a;
	const struct heapmode_candidate *y = *(const struct heapmode_candidate *const *)b;

	if (x->growth_per_s != y->growth_per_s)
		return x->growth_per_s > y->growth_per_s ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Suspect slots (unpicked traced processes) of user uid. */
static size_t slots_of(const struct heapmode *h, uint32_t uid)
{
	size_t n = 0;

	for (size_t i = 0; i < h->n_traced; i++)
		n += !h->traced[i].picked && h->traced[i].uid == uid;
	return n;
}

/*
 * The unpicked suspect that grows least among those a grower of user uid may replace (its
 * own user's, or of a user holding at least two slots more), or -1.
 */
static long weakest(const struct heapmode *h, uint32_t uid)
{
	size_t own = slots_of(h, uid);
	long at = -1;

	for (size_t i = 0; i < h->n_traced; i++) {
		const struct heapmode_traced *t = &h->traced[i];

		if (t->picked || (t->uid != uid && slots_of(h, t->uid) < own + 2))
			continue;
		if (at < 0 || t->growth_per_s < h->traced[at].growth_per_s)
			at = i;
	}
	return at;
}

/* The weakest suspect of the user holding the most slots, if it holds two or more; or -1. */
static long weakest_of_most(const struct heapmode *h)
{
	size_t most = 1, n;
	uint32_t uid = 0;
	long at = -1;

	for (size_t i = 0; i < h->n_traced; i++) {
		if (h->traced[i].picked)
			continue;
		n = slots_of(h, h->traced[i].uid);
		if (n > most) {
			most = n;
			uid = h->traced[i].uid;
		}
	}
	if (most < 2)
		return -1;
	for (size_t i = 0; i < h->n_traced; i++) {
		const struct heapmode_traced *t = &h->traced[i];

		if (!t->picked && t->uid == uid &&
		    (at < 0 || t->growth_per_s < h->traced[at].growth_per_s))
			at = i;
	}
	return at;
}

/*
 * Let fresh grower k (strongest first) in: into a free slot, else in place of a suspect
 * (as heapmode__choose says).  1 when it got in, 0 when not, or -ENOMEM.
 */
static int let_in(struct heapmode *h, const struct heapmode_candidate *k, uint64_t now_ns,
		  size_t *n_suspects, struct heapmode_changes *out)
{
	long w = -1;
	int err;

	if (*n_suspects >= h->cfg.max_suspects) {
		if (!slots_of(h, k->uid))
			w = weakest_of_most(h);
		if (w < 0) {
			w = weakest(h, k->uid);
			if (w >= 0 && k->growth_per_s <=
				      HEAPMODE_PREEMPT_FACTOR * h->traced[w].growth_per_s)
				w = -1;
		}
		if (w < 0)
			return 0;
		err = remove_traced(h, w, out);
		if (err)
			return err;
		(*n_suspects)--;
	}
	err = add_traced(h, k, now_ns, out);
	if (err)
		return err;
	(*n_suspects)++;
	return 1;
}

int heapmode__choose(struct heapmode *h, uint64_t now_ns, const struct heapmode_candidate *c,
		     size_t n, struct heapmode_changes *out)
{
	uint64_t release = hold_ns(HEAPMODE_RELEASE_INTERVALS, 0, h->cfg.interval_s);
	const struct heapmode_candidate **fresh = NULL;
	size_t n_fresh = 0, n_suspects = 0;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (h->mode == HEAP_MODE_EXACT) {
		h->n_traced = 0;
		h->n_banned = 0;
		return 0;
	}
	/* Too expensive on its own: released first (so listed first), and kept out a while. */
	for (size_t i = 0; i < h->n_traced;) {
		const struct heapmode_candidate *k = candidate_of(c, n, h->traced[i].pid);

		if (!k || k->picked ||
		    !(k->cost_pct > HEAPMODE_SUSPECT_COST_FACTOR * h->cfg.budget_pct)) {
			i++;
			continue;
		}
		err = ban(h, k->pid, now_ns + release);
		if (!err)
			err = remove_traced(h, i, out);
		if (err)
			return err;
		out->n_expensive++;
	}
	/* Those traced already: still there, still growing or picked? */
	for (size_t i = 0; i < h->n_traced;) {
		struct heapmode_traced *t = &h->traced[i];
		const struct heapmode_candidate *k = candidate_of(c, n, t->pid);

		if (k) {
			t->picked = k->picked;
			if (k->growing) {
				t->last_growth_ns = now_ns;
				t->growth_per_s = k->growth_per_s;
			}
		}
		if (!k || (!t->picked && now_ns - t->last_growth_ns >= release)) {
			err = remove_traced(h, i, out);
			if (err)
				return err;
			continue;
		}
		n_suspects += !t->picked;
		i++;
	}
	fresh = malloc((n ? n : 1) * sizeof(*fresh));
	if (!fresh)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (heapmode__traced(h, c[i].pid))
			continue;
		if (!c[i].picked && banned(h, c[i].pid, now_ns))
			continue;
		if (c[i].picked) {
			err = add_traced(h, &c[i], now_ns, out);
			if (err)
				goto out;
		} else if (c[i].growing && c[i].growth_per_s > 0) {
			fresh[n_fresh++] = &c[i];
		}
	}
	qsort(fresh, n_fresh, sizeof(*fresh), cmp_growth);
	/* First the strongest grower of each user without a slot, then the others. */
	for (int pass = 0; pass < 2 && h->cfg.max_suspects; pass++) {
		for (size_t i = 0; i < n_fresh; i++) {
			if (!fresh[i] || (pass == 0 && slots_of(h, fresh[i]->uid)))
				continue;
			err = let_in(h, fresh[i], now_ns, &n_suspects, out);
			if (err < 0)
				goto out;
			if (err)
				fresh[i] = NULL;
			err = 0;
		}
	}
out:
	free(fresh);
	return err;
}

void heapmode__learn(struct heapmode *h, double cost_ns, double busy_ns)
{
	double r;

	/* An idle interval says nothing about the cost of work. */
	if (h->mode != HEAP_MODE_EXACT || cost_ns < 0 || busy_ns <= 0)
		return;
	/*
	 * The traps are paid inside the busy time (as system time of the traced processes),
	 * so the share is at most 1 whatever rounding says: a trap-bound workload teaches
	 * "all of the work", not a multiple of it.
	 */
	r = cost_ns < busy_ns ? cost_ns / busy_ns : 1;
	h->cost_per_work = isnan(h->cost_per_work) ? r : 0.7 * h->cost_per_work + 0.3 * r;
}

double heapmode__estimate_exact_ns(const struct heapmode *h, double busy_ns)
{
	return busy_ns < 0 ? NAN : h->cost_per_work * busy_ns;
}

int heapmode__pick(struct heapmode *h, uint32_t pid, uint64_t now_ns)
{
	struct heapmode_candidate c = { .pid = pid, .picked = true };
	struct heapmode_changes out = { 0 };
	int err;

	if (h->mode != HEAP_MODE_SUSPECTS || heapmode__traced(h, pid))
		return 0;
	err = add_traced(h, &c, now_ns, &out);
	heapmode_changes__free(&out);
	return err;
}

bool heapmode__drop(struct heapmode *h, uint32_t pid)
{
	for (size_t i = 0; i < h->n_traced; i++) {
		if (h->traced[i].pid == pid) {
			h->traced[i] = h->traced[--h->n_traced];
			return true;
		}
	}
	return false;
}

void heapmode_changes__free(struct heapmode_changes *c)
{
	free(c->added);
	free(c->removed);
	memset(c, 0, sizeof(*c));
}

const char *heapmode__name(enum heap_mode mode)
{
	return mode == HEAP_MODE_SUSPECTS ? "suspects" : "exact";
}

const char *heapmode__proc_name(enum proc_heap_mode mode)
{
	static const char *const names[] = {
		[PROC_HEAP_EXACT] = "exact",
		[PROC_HEAP_SUSPECT] = "suspect",
		[PROC_HEAP_WATCH] = "watch",
	};

	return names[mode];
}
