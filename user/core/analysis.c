// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * analysis.c - growth verdicts over bounded histories.  No I/O: unit-tested on synthetic
 * series (steady leak, plateauing cache, churn, sawtooth, one-off step, slow leak in noise,
 * gaps, resets).
 *
 * Rank-based statistics are used throughout, so a few outliers or one big step cannot make
 * a verdict: Mann-Kendall for "is there a monotone trend", Theil-Sen for "how fast", and the
 * medians of the window's quarters for "is it sustained and still going on".
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/analysis.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ------------------------------------------------ Theil-Sen: the median of pairwise slopes */

uint64_t analysis__slopes_computed;

static double pair_slope(const uint64_t *ts_ns, const double *v, size_t i, size_t j)
{
	analysis__slopes_computed++;
	return (v[j] - v[i]) * 1e9 / (double)(ts_ns[j] - ts_ns[i]);
}

/* Every pair's slope, sorted: O(n^2 log n), for short series and ones the exact path refuses. */
static double theil_sen_all_pairs(const uint64_t *ts_ns, const double *v, size_t n)
{
	double *slopes;
	size_t k = 0;
	double m;

	slopes = malloc(n * (n - 1) / 2 * sizeof(*slopes));
	if (!slopes)
		return 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++) {
			if (ts_ns[j] <= ts_ns[i])
				continue;
			slopes[k++] = pair_slope(ts_ns, v, i, j);
		}
	m = median(slopes, k);
	free(slopes);
	return m;
}

/*
 * The exact median without looking at every pair (Matousek's randomized slope selection):
 * values are integers (bytes, counts) and times strictly increase, so a slope dv/dt is an
 * exact rational and "slope(i, j) < t" is an exact 128-bit comparison of v*DT - DV*ts.  The
 * pairs below a threshold are the inversions of that key over the points, counted by merge
 * sort in O(n log n); random pairs narrow [lo, hi) around the median's rank until it holds
 * O(n) pairs, which are listed (also by merge sort) and sorted.  O(n^1.5) expected for the
 * sampling, O(n log n) per count; the result is the same pair's slope the full sort picks.
 */
struct slope_t {
	int inf;			/* -1: -infinity, 1: +infinity, 0: dv / dt */
	int64_t dv, dt;			/* dt > 0 */
};

struct ts_ctx {
	size_t n;
	int64_t *x, *y;			/* times (from the first) and values, as integers */
	__int128 *key, *tmp_key;
	uint32_t *idx, *tmp_idx;
	uint32_t (*pairs)[2];		/* listed pairs */
	size_t n_pairs, cap_pairs;
	uint64_t rng;
};

static __int128 key_at(const struct ts_ctx *c, const struct slope_t *t, uint32_t i)
{
	if (t->inf)	/* -inf: points in time order; +inf: reversed */
		return t->inf < 0 ? (__int128)i : -(__int128)i;
	return (__int128)c->y[i] * t->dt - (__int128)t->dv * c->x[i];
}

/* a < b, exactly (dt > 0). */
static bool slope_less(const struct slope_t *a, const struct slope_t *b)
{
	if (a->inf || b->inf)
		return a->inf < b->inf;
	return (__int128)a->dv * b->dt < (__int128)b->dv * a->dt;
}

/*
 * Merge sort idx[lo, hi) by key (stable); counts the inversions (an earlier element with a
 * greater key, or an equal one too with ties) and, when list, records each as a pair of
 * point indices.
 */
static uint64_t merge_count(struct ts_ctx *c, size_t lo, size_t hi, bool list, bool ties)
{
	size_t mid = lo + (hi - lo) / 2, i, j, k;
	uint64_t inv;

	if (hi - lo < 2)
		return 0;
	inv = merge_count(c, lo, mid, list, ties) + merge_count(c, mid, hi, list, ties);
	for (i = lo, j = mid, k = lo; i < mid || j < hi; k++) {
		if (j == hi || (i < mid && (ties ? c->key[i] < c->key[j] : c->key[i] <= c->key[j]))) {
			c->tmp_key[k] = c->key[i];
			c->tmp_idx[k] = c->idx[i++];
			continue;
		}
		inv += mid - i;
		for (size_t l = i; list && l < mid; l++) {
			uint32_t a = c->idx[l], b = c->idx[j];

			if (c->n_pairs < c->cap_pairs) {
				c->pairs[c->n_pairs][0] = a < b ? a : b;
				c->pairs[c->n_pairs][1] = a < b ? b : a;
			}
			c->n_pairs++;
		}
		c->tmp_key[k] = c->key[j];
		c->tmp_idx[k] = c->idx[j++];
	}
	memcpy(c->key + lo, c->tmp_key + lo, (hi - lo) * sizeof(*c->key));
	memcpy(c->idx + lo, c->tmp_idx + lo, (hi - lo) * sizeof(*c->idx));
	return inv;
}

/* Pairs with slope < t (or <= t with ties). */
static uint64_t count_below(struct ts_ctx *c, const struct slope_t *t, bool ties)
{
	for (size_t i = 0; i < c->n; i++) {
		c->idx[i] = i;
		c->key[i] = key_at(c, t, i);
	}
	return merge_count(c, 0, c->n, false, ties);
}

/* List the pairs with lo <= slope < hi (at most cap_pairs; n_pairs says how many there are). */
static void list_between(struct ts_ctx *c, const struct slope_t *lo, const struct slope_t *hi)
{
	/* In the order at lo (ties by time) the pairs still to cross are the inversions at hi. */
	for (size_t i = 0; i < c->n; i++) {
		c->idx[i] = i;
		c->key[i] = key_at(c, lo, i);
	}
	merge_count(c, 0, c->n, false, false);
	for (size_t i = 0; i < c->n; i++)
		c->key[i] = key_at(c, hi, c->idx[i]);
	c->n_pairs = 0;
	merge_count(c, 0, c->n, true, false);
}

static uint64_t next_rand(struct ts_ctx *c)
{
	c->rng ^= c->rng << 13;
	c->rng ^= c->rng >> 7;
	c->rng ^= c->rng << 17;
	return c->rng;
}

static int cmp_slope(const void *a, const void *b)
{
	const struct slope_t *x = a, *y = b;

	return slope_less(x, y) ? -1 : slope_less(y, x);
}

/* Can the exact path take this series?  Integer values below 2^53, increasing times. */
static bool exact_ok(const uint64_t *ts_ns, const double *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!(fabs(v[i]) < 9007199254740992.0) || v[i] != floor(v[i]))
			return false;
		if (i && (ts_ns[i] <= ts_ns[i - 1] || ts_ns[i] - ts_ns[0] > (1ull << 62)))
			return false;
	}
	return true;
}

/* The slopes at ranks r1 <= r2 (0-based, of all pairs), or false (out of memory). */
static bool select_slopes(struct ts_ctx *c, const uint64_t *ts_ns, const double *v, uint64_t r1,
			  uint64_t r2, double *s1, double *s2)
{
	const size_t n = c->n, limit = 8 * n + 64, want = n + 16;
	struct slope_t lo = { -1, 0, 1 }, hi = { 1, 0, 1 }, *sample;
	uint64_t below_lo = 0, below_hi = (uint64_t)n * (n - 1) / 2;
	double *picked;
	bool ok = false;

	sample = malloc(want * sizeof(*sample));
	picked = malloc(limit * sizeof(*picked));
	if (!sample || !picked)
		goto out;
	for (int round = 0; round < 64 && below_hi - below_lo > limit; round++) {
		uint64_t m = below_hi - below_lo, tries = 0, max_tries = 256 * (uint64_t)n;
		size_t got = 0;
		double d;
		long a, b;

		while (got < want && tries++ < max_tries) {
			size_t i = next_rand(c) % n, j = next_rand(c) % n;
			struct slope_t t;

			if (i == j)
				continue;
			if (i > j) {
				size_t x = i;

				i = j;
				j = x;
			}
			t = (struct slope_t){ 0, c->y[j] - c->y[i], c->x[j] - c->x[i] };
			if (!slope_less(&t, &lo) && slope_less(&t, &hi))
				sample[got++] = t;
		}
		if (got < 2)
			break;
		qsort(sample, got, sizeof(*sample), cmp_slope);
		/* The likeliest median first: a tied one (a flat stretch: 0) ends it here. */
		a = (long)((double)(r1 - below_lo) / m * got);
		if (count_below(c, &sample[a], false) <= r1 && count_below(c, &sample[a], true) > r2) {
			*s1 = *s2 = (double)sample[a].dv * 1e9 / (double)sample[a].dt;
			ok = true;
			goto out;
		}
		d = 2 * sqrt((double)got) + 1;
		a = (long)floor((double)(r1 - below_lo) / m * got - d);
		b = (long)ceil((double)(r2 - below_lo) / m * got + d);
		if (a >= 0) {
			uint64_t k = count_below(c, &sample[a], false);

			if (k <= r1) {
				lo = sample[a];
				below_lo = k;
			}
		}
		if (b < (long)got) {
			uint64_t k = count_below(c, &sample[b], false);

			if (k > r2) {
				hi = sample[b];
				below_hi = k;
			}
		}
	}
	if (below_hi - below_lo > limit) {
		/* Sampling did not narrow it (a very tied series): list them all. */
		void *p = realloc(c->pairs, (below_hi - below_lo) * sizeof(*c->pairs));

		if (!p)
			goto out;
		c->pairs = p;
		c->cap_pairs = below_hi - below_lo;
		free(picked);
		picked = malloc(c->cap_pairs * sizeof(*picked));
		if (!picked)
			goto out;
	}
	list_between(c, &lo, &hi);
	for (size_t k = 0; k < c->n_pairs; k++)
		picked[k] = pair_slope(ts_ns, v, c->pairs[k][0], c->pairs[k][1]);
	qsort(picked, c->n_pairs, sizeof(*picked), cmp_double);
	*s1 = picked[r1 - below_lo];
	*s2 = picked[r2 - below_lo];
	ok = true;
out:
	free(sample);
	free(picked);
	return ok;
}

double analysis__theil_sen_per_s(const uint64_t *ts_ns, const double *v, size_t n)
{
	struct ts_ctx c = { .n = n, .rng = 0x9e3779b97f4a7c15ull };
	uint64_t k = (uint64_t)n * (n - 1) / 2;
	double s1 = 0, s2 = 0, m = 0;

	if (n < 2)
		return 0;
	if (n < ANALYSIS_EXACT_MIN_POINTS || !exact_ok(ts_ns, v, n))
		return theil_sen_all_pairs(ts_ns, v, n);
	c.x = malloc(n * sizeof(*c.x));
	c.y = malloc(n * sizeof(*c.y));
	c.key = malloc(n * sizeof(*c.key));
	c.tmp_key = malloc(n * sizeof(*c.tmp_key));
	c.idx = malloc(n * sizeof(*c.idx));
	c.tmp_idx = malloc(n * sizeof(*c.tmp_idx));
	c.cap_pairs = 8 * n + 64;
	c.pairs = malloc(c.cap_pairs * sizeof(*c.pairs));
	if (!c.x || !c.y || !c.key || !c.tmp_key || !c.idx || !c.tmp_idx || !c.pairs)
		goto out;
	for (size_t i = 0; i < n; i++) {
		c.x[i] = (int64_t)(ts_ns[i] - ts_ns[0]);
		c.y[i] = (int64_t)v[i];
	}
	if (select_slopes(&c, ts_ns, v, k % 2 ? k / 2 : k / 2 - 1, k / 2, &s1, &s2))
		m = k % 2 ? s2 : (s1 + s2) / 2;
out:
	free(c.x);
	free(c.y);
	free(c.key);
	free(c.tmp_key);
	free(c.idx);
	free(c.tmp_idx);
	free(c.pairs);
	return m;
}

/* ------------------------------------------------ Mann-Kendall */

/* Merge sort v[lo, hi) ascending; pairs i < j with v[i] > v[j]. */
static uint64_t count_inversions(double *v, double *tmp, size_t lo, size_t hi)
{
	size_t mid = lo + (hi - lo) / 2, i, j, k;
	uint64_t inv;

	if (hi - lo < 2)
		return 0;
	inv = count_inversions(v, tmp, lo, mid) + count_inversions(v, tmp, mid, hi);
	for (i = lo, j = mid, k = lo; i < mid || j < hi; k++) {
		if (j == hi || (i < mid && v[i] <= v[j])) {
			tmp[k] = v[i++];
		} else {
			inv += mid - i;
			tmp[k] = v[j++];
		}
	}
	memcpy(v + lo, tmp + lo, (hi - lo) * sizeof(*v));
	return inv;
}

/* S = rises - falls over all pairs, in O(n log n): falls are the inversions, ties are runs. */
double analysis__mann_kendall_z(const double *v, size_t n)
{
	double s, var, *sorted, *tmp;
	uint64_t falls, ties = 0;
	size_t i, j;

	if (n < 3)
		return 0;
	var = (double)n * (n - 1) * (2.0 * n + 5) / 18.0;
	sorted = malloc(n * sizeof(*sorted));
	tmp = malloc(n * sizeof(*tmp));
	if (!sorted || !tmp) {
		free(sorted);
		free(tmp);
		return 0;
	}
	memcpy(sorted, v, n * sizeof(*sorted));
	falls = count_inversions(sorted, tmp, 0, n);
	/* Tie correction: runs of equal values carry no evidence. */
	for (i = 0; i < n; i = j) {
		double t;

		for (j = i + 1; j < n && sorted[j] == sorted[i]; j++)
			;
		t = (double)(j - i);
		ties += (uint64_t)(j - i) * (j - i - 1) / 2;
		if (t > 1)
			var -= t * (t - 1) * (2 * t + 5) / 18.0;
	}
	free(sorted);
	free(tmp);
	s = (double)((uint64_t)n * (n - 1) / 2 - ties - falls) - (double)falls;
	if (var <= 0)
		return 0;
	if (s > 0)
		return (s - 1) / sqrt(var);
	if (s < 0)
		return (s + 1) / sqrt(var);
	return 0;
}

/* Medians of the four quarters of v (in order). */
static void quarter_medians(const double *v, size_t n, double q[4])
{
	double *tmp = malloc(n * sizeof(*tmp));

	for (int k = 0; k < 4; k++) {
		size_t lo = n * k / 4, hi = n * (k + 1) / 4;

		q[k] = 0;
		if (!tmp || hi <= lo)
			continue;
		memcpy(tmp, v + lo, (hi - lo) * sizeof(*tmp));
		q[k] = median(tmp, hi - lo);
	}
	free(tmp);
}

void analysis__trend(const uint64_t *ts_ns, const double *v, size_t n, bool was_growing,
		     struct trend *out)
{
	size_t half = n / 2;
	double q[4], last;
	int rises = 0;

	memset(out, 0, sizeof(*out));
	out->slope_per_s = analysis__theil_sen_per_s(ts_ns, v, n);
	if (n < TREND_MIN_POINTS || (ts_ns[n - 1] - ts_ns[0]) / 1e9 < TREND_MIN_SPAN_S)
		return;
	out->enough = true;
	out->z = analysis__mann_kendall_z(v, n);
	out->recent_slope_per_s = analysis__theil_sen_per_s(ts_ns + half, v + half, n - half);
	if (out->slope_per_s <= 0 || out->recent_slope_per_s <= 0)
		return;
	if (was_growing) {
		out->growing = out->z >= TREND_Z_STAY;
		return;
	}
	quarter_medians(v, n, q);
	for (int k = 0; k < 3; k++)
		rises += q[k + 1] > q[k];
	/* Still rising at the very end: a cache that just filled up does not qualify. */
	last = analysis__theil_sen_per_s(ts_ns + n * 3 / 4, v + n * 3 / 4, n - n * 3 / 4);
	out->growing = out->z >= TREND_Z_ENTER && rises >= 2 && q[3] > q[2] && last > 0;
}

/* The trend of one series (scratch buffers sized to the window). */
static void series_trend(const struct series *s, uint64_t *ts, double *v, bool was,
			 struct trend *t)
{
	size_t n = series__copy(s, ts, v);

	analysis__trend(ts, v, n, was, t);
}

/* A series that never changed over the window has no trend: skip the work. */
static bool series_constant(const struct series *s)
{
	for (uint32_t i = 1; i < s->n; i++)
		if (s->v[(s->pos + s->cap - s->n + i) % s->cap] !=
		    s->v[(s->pos + s->cap - s->n) % s->cap])
			return false;
	return true;
}

void analysis__run(struct model *m)
{
	uint32_t cap = m->window ? m->window : 1;
	uint64_t *ts = malloc(cap * sizeof(*ts));
	double *v = malloc(cap * sizeof(*v));

	if (!ts || !v)
		goto out;
	for (size_t i = 0; i < m->n_procs; i++) {
		struct process *p = &m->procs[i];
		double heap_sites_growth_per_s = 0, heap_explained_per_s = 0;
		double mmap_sites_growth_per_s = 0, mmap_explained_per_s;
		bool heap_site_flagged = false, fd_site_flagged = false;
		struct trend heap, fds, rss, mmap, anon;

		/* A kept OOM-killed image: no new samples, its last verdicts stand. */
		if (p->records_released)
			continue;

		for (size_t j = 0; j < p->n_sites; j++) {
			struct site *s = &p->sites[j];
			struct trend t;

			/* Released: its heap sites are frozen, their last verdicts stand. */
			if (s->kind == LT_KIND_HEAP && p->heap_mode == PROC_HEAP_RELEASED) {
				heap_site_flagged |= s->flagged;
				heap_sites_growth_per_s += s->flagged ? s->growth_per_s : 0;
				continue;
			}
			if (series_constant(&s->hist)) {
				s->growth_per_s = 0;
				s->flagged = false;
				continue;
			}
			series_trend(&s->hist, ts, v, s->flagged, &t);
			s->growth_per_s = t.slope_per_s;
			s->flagged = t.growing;
			s->trend_z = t.z;
			if (s->flagged && s->kind == LT_KIND_HEAP) {
				heap_site_flagged = true;
				heap_sites_growth_per_s += s->growth_per_s;
			} else if (s->flagged && s->kind == LT_KIND_FD) {
				fd_site_flagged = true;
			} else if (s->flagged && s->kind == LT_KIND_MMAP) {
				mmap_sites_growth_per_s += s->growth_per_s;
			}
		}
		series_trend(&p->hist_heap, ts, v, p->flags & PROC_HEAP_GROWTH, &heap);
		series_trend(&p->hist_fds, ts, v, p->flags & PROC_FD_GROWTH, &fds);
		series_trend(&p->hist_rss, ts, v, p->flags & PROC_RSS_GROWTH, &rss);
		series_trend(&p->hist_mmap, ts, v, p->mmap_growing, &mmap);
		p->mmap_growing = mmap.growing;
		/* Like the heap: the total, or its flagged sites, whichever says more. */
		mmap_explained_per_s = mmap_sites_growth_per_s;
		if (mmap.growing && mmap.slope_per_s > mmap_explained_per_s)
			mmap_explained_per_s = mmap.slope_per_s;
		/*
		 * A process grows when its total does, or when one of its sites does: other
		 * sites' caches and bursts can hide a steady leak in the total, never in the
		 * leaking site itself.
		 */
		p->flags &= PROC_FLAGS_STICKY;
		if (heap.growing || heap_site_flagged) {
			p->flags |= PROC_HEAP_GROWTH;
			heap_explained_per_s = heap.slope_per_s > heap_sites_growth_per_s ?
					       heap.slope_per_s : heap_sites_growth_per_s;
		}
		if (fds.growing || fd_site_flagged)
			p->flags |= PROC_FD_GROWTH;
		/*
		 * The allocator, not the program, holds much of the heap (its latest scan):
		 * RSS that grows or stays while the live heap does not is explained.
		 */
		if (p->scan && p->scan->ok && heapslack__retention(&p->scan->result.slack))
			p->flags |= PROC_ALLOC_RETENTION;
		if (rss.growing) {
			p->flags |= PROC_RSS_GROWTH;
			/*
			 * The working set grows faster than tracked memory explains: the heap,
			 * and growing anonymous mappings (brk growth under a heap also counts
			 * there: generous, never a false alarm).  The mappings' total counts
			 * too: brk growth lands on whichever malloc needed it, so it spreads
			 * over sites none of which grows steadily.
			 */
			if (rss.slope_per_s > 2 * (heap_explained_per_s + mmap_explained_per_s) &&
			    !(p->flags & PROC_ALLOC_RETENTION))
				p->flags |= PROC_RSS_UNEXPLAINED;
		}
		p->heap_growth_per_s = heap.slope_per_s;
		/* What picks suspects when heap probes are off: growth no probe is needed for. */
		series_trend(&p->hist_anon, ts, v, p->untraced_growth_per_s > 0, &anon);
		p->untraced_growth_per_s = anon.growing && anon.slope_per_s > 0 ? anon.slope_per_s : 0;
		if (mmap_explained_per_s > p->untraced_growth_per_s)
			p->untraced_growth_per_s = mmap_explained_per_s;
	}
out:
	free(ts);
	free(v);
}
