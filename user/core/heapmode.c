// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * heapmode.c - the overhead budget's decisions: exact or not, who stays traced, who is a
 * suspect, who is released.
 *
 * Exact tracing is left when its token bucket runs dry (a sustained overspend), and comes
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
#include "util/vec.h"

static uint64_t hold_ns(double intervals, double min_s, double interval_s)
{
	double s = intervals * interval_s;

	return (uint64_t)((s > min_s ? s : min_s) * 1e9);
}

static double capacity(const struct heapmode *h)
{
	return h->cfg.budget_pct * HEAPMODE_BUCKET_S;
}

void heapmode__init(struct heapmode *h, const struct heapmode_config *cfg, uint64_t now_ns)
{
	memset(h, 0, sizeof(*h));
	h->cfg = *cfg;
	h->mode = HEAP_MODE_EXACT;
	h->mode_since_ns = now_ns;
	h->bucket_pct_s = capacity(h);
	h->bucket_ns = now_ns;
	h->cost_per_work = NAN;
	h->return_hold_s = (double)hold_ns(HEAPMODE_RETURN_INTERVALS, HEAPMODE_RETURN_MIN_S,
					   cfg->interval_s) / 1e9;
}

void heapmode__free(struct heapmode *h)
{
	free(h->traced);
	free(h->banned);
	free(h->released);
	h->traced = NULL;
	h->banned = NULL;
	h->released = NULL;
	h->n_traced = h->cap_traced = h->n_banned = h->n_released = 0;
	h->cap_banned = h->cap_released = 0;
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

/* How long a process released for costing cost_pct is kept out: its cost averages out. */
static uint64_t ban_ns(const struct heapmode *h, double cost_pct)
{
	double s = HEAPMODE_DIAGNOSIS_S * (cost_pct / h->cfg.budget_pct - 1);
	double min_s = HEAPMODE_RELEASE_INTERVALS * h->cfg.interval_s;

	if (!(s > min_s))
		s = min_s;
	if (s > HEAPMODE_BAN_MAX_S)
		s = HEAPMODE_BAN_MAX_S;
	return (uint64_t)(s * 1e9);
}

static int ban(struct heapmode *h, uint32_t pid, uint64_t until_ns)
{
	if (VEC_RESERVE(h->banned, h->cap_banned, h->n_banned + 1, 8))
		return -ENOMEM;
	h->banned[h->n_banned++] = (struct heapmode_ban){ pid, until_ns };
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
	h->under_since_ns = 0;
	h->hot_since_ns = 0;
	h->hot_readings = 0;
	h->n_traced = 0;
	h->n_released = 0;
	h->switches++;
	return HEAPMODE_TO_SUSPECTS;
}

/* Pay for the time since the bucket was last spent from at cost_pct; true when it is dry. */
static bool spend(struct heapmode *h, uint64_t now_ns, double cost_pct)
{
	if (now_ns > h->bucket_ns) {
		h->bucket_pct_s += (h->cfg.budget_pct - cost_pct) * ((now_ns - h->bucket_ns) / 1e9);
		if (h->bucket_pct_s > capacity(h))
			h->bucket_pct_s = capacity(h);
		h->bucket_ns = now_ns;
	}
	return h->bucket_pct_s <= 0;
}

double heapmode__bucket_fill(const struct heapmode *h)
{
	double f = h->bucket_pct_s / capacity(h);

	return f < 0 ? 0 : f > 1 ? 1 : f;
}

enum heapmode_change heapmode__window(struct heapmode *h, uint64_t now_ns, uint64_t window_ns,
				      double cost_pct)
{
	if (h->cfg.exact || h->mode != HEAP_MODE_EXACT || isnan(cost_pct) || !window_ns ||
	    window_ns > now_ns)
		return HEAPMODE_SAME;
	/* A gap before the window (nothing measured) costs nothing. */
	if (h->bucket_ns < now_ns - window_ns)
		h->bucket_ns = now_ns - window_ns;
	return spend(h, now_ns, cost_pct) ? to_suspects(h, now_ns) : HEAPMODE_SAME;
}

enum heapmode_change heapmode__hot(struct heapmode *h, uint64_t now_ns, double top_cost_pct)
{
	if (h->cfg.exact || h->mode != HEAP_MODE_EXACT)
		return HEAPMODE_SAME;
	if (!(top_cost_pct > h->cfg.budget_pct * HEAPMODE_HOT_FACTOR)) {
		h->hot_since_ns = 0;
		h->hot_readings = 0;
		return HEAPMODE_SAME;
	}
	if (!h->hot_since_ns)
		h->hot_since_ns = now_ns;
	h->hot_readings++;
	if (h->hot_readings < 2 || now_ns - h->hot_since_ns < HEAPMODE_HOT_S * 1e9)
		return HEAPMODE_SAME;
	return to_suspects(h, now_ns);
}

enum heapmode_change heapmode__step(struct heapmode *h, uint64_t now_ns, double exact_cost_pct)
{
	double budget = h->cfg.budget_pct;

	if (h->cfg.exact || isnan(exact_cost_pct))
		return HEAPMODE_SAME;
	if (h->mode == HEAP_MODE_EXACT)
		return spend(h, now_ns, exact_cost_pct) ? to_suspects(h, now_ns) : HEAPMODE_SAME;
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
	h->under_since_ns = 0;
	h->bucket_pct_s = capacity(h);
	h->bucket_ns = now_ns;
	h->n_traced = 0;
	h->n_released = 0;
	h->switches++;
	return HEAPMODE_TO_EXACT;
}

static int push_pid(uint32_t **v, size_t *n, size_t *cap, uint32_t pid)
{
	if (vec__reserve(v, cap, *n + 1, sizeof(**v), 16, false))
		return -ENOMEM;
	(*v)[(*n)++] = pid;
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

const struct heapmode_released *heapmode__released(const struct heapmode *h, uint32_t pid)
{
	for (size_t i = 0; i < h->n_released; i++)
		if (h->released[i].pid == pid)
			return &h->released[i];
	return NULL;
}

double heapmode__traced_cost_pct(const struct heapmode *h)
{
	double sum = NAN;

	for (size_t i = 0; i < h->n_traced; i++)
		if (!isnan(h->traced[i].cost_pct))
			sum = (isnan(sum) ? 0 : sum) + h->traced[i].cost_pct;
	return sum;
}

static void unrelease(struct heapmode *h, uint32_t pid)
{
	for (size_t i = 0; i < h->n_released; i++)
		if (h->released[i].pid == pid)
			h->released[i--] = h->released[--h->n_released];
}

static int add_released(struct heapmode *h, uint32_t pid, uint64_t now_ns)
{
	if (heapmode__released(h, pid))
		return 0;
	if (VEC_RESERVE(h->released, h->cap_released, h->n_released + 1, 8))
		return -ENOMEM;
	h->released[h->n_released++] = (struct heapmode_released){ .pid = pid,
								     .released_ns = now_ns };
	return 0;
}

static int add_traced(struct heapmode *h, const struct heapmode_candidate *c,
		      enum heapmode_role role, uint64_t now_ns, struct heapmode_changes *out)
{
	if (VEC_RESERVE(h->traced, h->cap_traced, h->n_traced + 1, 16))
		return -ENOMEM;
	if (push_pid(&out->added, &out->n_added, &out->cap_added, c->pid))
		return -ENOMEM;
	unrelease(h, c->pid);
	h->traced[h->n_traced++] = (struct heapmode_traced){
		.pid = c->pid, .role = role, .since_ns = now_ns, .last_growth_ns = now_ns,
		.growth_per_s = c->growth_per_s, .picked = c->picked, .uid = c->uid,
		.cost_pct = c->cost_pct, .seen_ns = now_ns,
		.allowance_pct_s = h->cfg.budget_pct * HEAPMODE_DIAGNOSIS_S };
	return 0;
}

/* Say pid stopped being traced, and why; one still alive keeps its records, released. */
static int note_removed(struct heapmode *h, uint32_t pid, enum heapmode_why why,
			uint64_t now_ns, struct heapmode_changes *out)
{
	if (VEC_RESERVE(out->why, out->cap_why, out->n_removed + 1, 16))
		return -ENOMEM;
	out->why[out->n_removed] = why;
	if (push_pid(&out->removed, &out->n_removed, &out->cap_removed, pid))
		return -ENOMEM;
	return why == HEAPMODE_WHY_GONE ? 0 : add_released(h, pid, now_ns);
}

static int remove_traced(struct heapmode *h, size_t i, enum heapmode_why why, uint64_t now_ns,
			 struct heapmode_changes *out)
{
	uint32_t pid = h->traced[i].pid;

	h->traced[i] = h->traced[--h->n_traced];
	return note_removed(h, pid, why, now_ns, out);
}

static double known(double cost_pct)
{
	return cost_pct > 0 ? cost_pct : 0;
}

/* Costliest first (unknown costs nothing), then by pid. */
static int cmp_cost(const void *a, const void *b)
{
	const struct heapmode_candidate *x = *(const struct heapmode_candidate *const *)a;
	const struct heapmode_candidate *y = *(const struct heapmode_candidate *const *)b;

	if (known(x->cost_pct) != known(y->cost_pct))
		return known(x->cost_pct) > known(y->cost_pct) ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Most outstanding blocks first, then by pid. */
static int cmp_count(const void *a, const void *b)
{
	const struct heapmode_candidate *x = *(const struct heapmode_candidate *const *)a;
	const struct heapmode_candidate *y = *(const struct heapmode_candidate *const *)b;

	if (x->heap_count != y->heap_count)
		return x->heap_count > y->heap_count ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

int heapmode__leave_exact(struct heapmode *h, uint64_t now_ns, const struct heapmode_candidate *c,
			  size_t n, struct heapmode_changes *out)
{
	const struct heapmode_candidate **v;
	double rest = 0, limit = h->cfg.budget_pct * HEAPMODE_UNDER_FRACTION;
	size_t m = 0, i, kept = 0;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (h->mode != HEAP_MODE_SUSPECTS)
		return 0;
	v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < n && !err; i++) {
		if (c[i].picked) {
			err = add_traced(h, &c[i], HEAPMODE_ROLE_SUSPECT, now_ns, out);
			continue;
		}
		v[m++] = &c[i];
		rest += known(c[i].cost_pct);
	}
	qsort(v, m, sizeof(*v), cmp_cost);
	/* The costliest go, until the others cost well under the budget. */
	for (i = 0; i < m && !err && rest > limit && known(v[i]->cost_pct) > 0; i++) {
		rest -= known(v[i]->cost_pct);
		err = ban(h, v[i]->pid, now_ns + ban_ns(h, v[i]->cost_pct));
		if (!err && v[i]->has_heap)
			err = note_removed(h, v[i]->pid, HEAPMODE_WHY_COSTLIEST, now_ns, out);
		out->n_expensive += v[i]->has_heap;
	}
	/* The others' counts stay exact: traced by pid, most blocks first, up to the limit. */
	qsort(v + i, m - i, sizeof(*v), cmp_count);
	for (; i < m && !err; i++) {
		if (!v[i]->has_heap)
			continue;
		if (kept < HEAPMODE_MAX_KEPT) {
			err = add_traced(h, v[i], HEAPMODE_ROLE_KEPT, now_ns, out);
			kept++;
		} else {
			err = note_removed(h, v[i]->pid, HEAPMODE_WHY_LIMIT, now_ns, out);
		}
	}
	free(v);
	return err;
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

/* Does t hold a suspect slot (traced for its growth, not picked nor kept)? */
static bool holds_slot(const struct heapmode_traced *t)
{
	return !t->picked && t->role == HEAPMODE_ROLE_SUSPECT;
}

/* Suspect slots of user uid. */
static size_t slots_of(const struct heapmode *h, uint32_t uid)
{
	size_t n = 0;

	for (size_t i = 0; i < h->n_traced; i++)
		n += holds_slot(&h->traced[i]) && h->traced[i].uid == uid;
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

		if (!holds_slot(t) || (t->uid != uid && slots_of(h, t->uid) < own + 2))
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
		if (!holds_slot(&h->traced[i]))
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

		if (holds_slot(t) && t->uid == uid &&
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
		err = remove_traced(h, w, HEAPMODE_WHY_PREEMPTED, now_ns, out);
		if (err)
			return err;
		(*n_suspects)--;
	}
	err = add_traced(h, k, HEAPMODE_ROLE_SUSPECT, now_ns, out);
	if (err)
		return err;
	(*n_suspects)++;
	return 1;
}

/*
 * Traced t (candidate k) costs over the budget: is its diagnosis window over?  Its why, or -1
 * while it goes on.
 */
static int window_over(struct heapmode *h, struct heapmode_traced *t,
		       const struct heapmode_candidate *k, uint64_t now_ns)
{
	uint64_t dt_ns = now_ns > t->seen_ns ? now_ns - t->seen_ns : 0;

	t->seen_ns = now_ns;
	t->cost_pct = k->cost_pct;
	t->picked = k->picked;
	if (t->picked || !(k->cost_pct > h->cfg.budget_pct)) {
		t->over_since_ns = 0;
		return -1;
	}
	if (!t->over_since_ns)
		t->over_since_ns = now_ns - dt_ns;
	t->allowance_pct_s -= (k->cost_pct - h->cfg.budget_pct) * (dt_ns / 1e9);
	if (k->flagged)
		return HEAPMODE_WHY_DIAGNOSED;
	if (t->allowance_pct_s <= 0 || now_ns - t->over_since_ns >= HEAPMODE_DIAGNOSIS_S * 1e9)
		return HEAPMODE_WHY_COST;
	return -1;
}

int heapmode__choose(struct heapmode *h, uint64_t now_ns, const struct heapmode_candidate *c,
		     size_t n, struct heapmode_changes *out)
{
	uint64_t release = hold_ns(HEAPMODE_RELEASE_INTERVALS, 0, h->cfg.interval_s);
	const struct heapmode_candidate **fresh = NULL;
	size_t n_fresh = 0, n_suspects = 0;
	int err = 0, why;

	memset(out, 0, sizeof(*out));
	if (h->mode == HEAP_MODE_EXACT) {
		h->n_traced = 0;
		h->n_banned = 0;
		h->n_released = 0;
		return 0;
	}
	/* The released that are gone are forgotten. */
	for (size_t i = 0; i < h->n_released; i++)
		if (!candidate_of(c, n, h->released[i].pid))
			h->released[i--] = h->released[--h->n_released];
	/* Over the budget past its diagnosis window: released first (so listed first), kept out. */
	for (size_t i = 0; i < h->n_traced;) {
		const struct heapmode_candidate *k = candidate_of(c, n, h->traced[i].pid);
		double cost = k ? k->cost_pct : NAN;

		why = k ? window_over(h, &h->traced[i], k, now_ns) : -1;
		if (why < 0) {
			i++;
			continue;
		}
		err = ban(h, k->pid, now_ns + ban_ns(h, cost));
		if (!err)
			err = remove_traced(h, i, why, now_ns, out);
		if (err)
			return err;
		out->n_expensive++;
	}
	/* Those traced already: still there, still growing or picked (or kept)? */
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
		if (!k || (!t->picked && t->role == HEAPMODE_ROLE_SUSPECT &&
			   now_ns - t->last_growth_ns >= release)) {
			why = k ? HEAPMODE_WHY_QUIET : HEAPMODE_WHY_GONE;
			err = remove_traced(h, i, why, now_ns, out);
			if (err)
				return err;
			continue;
		}
		n_suspects += holds_slot(t);
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
			err = add_traced(h, &c[i], HEAPMODE_ROLE_SUSPECT, now_ns, out);
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

double heapmode__young_growth_per_s(const struct heapmode *h, uint64_t first_seen_ns,
				    uint64_t first_ts_ns, double first, uint64_t last_ts_ns,
				    double last)
{
	if (h->mode != HEAP_MODE_SUSPECTS || first_seen_ns < h->mode_since_ns ||
	    last_ts_ns < first_seen_ns + (uint64_t)(HEAPMODE_YOUNG_MIN_S * 1e9) ||
	    last_ts_ns <= first_ts_ns || !(last > first))
		return 0;
	return (last - first) / ((last_ts_ns - first_ts_ns) / 1e9);
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
	err = add_traced(h, &c, HEAPMODE_ROLE_SUSPECT, now_ns, &out);
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

bool heapmode__release(struct heapmode *h, uint32_t pid, uint64_t now_ns)
{
	if (!heapmode__drop(h, pid))
		return false;
	add_released(h, pid, now_ns);
	return true;
}

void heapmode_changes__free(struct heapmode_changes *c)
{
	free(c->added);
	free(c->removed);
	free(c->why);
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
		[PROC_HEAP_RELEASED] = "released",
	};

	return names[mode];
}
