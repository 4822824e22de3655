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

double analysis__theil_sen_per_s(const uint64_t *ts_ns, const double *v, size_t n)
{
	double *slopes;
	size_t k = 0;
	double m;

	if (n < 2)
		return 0;
	slopes = malloc(n * (n - 1) / 2 * sizeof(*slopes));
	if (!slopes)
		return 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++) {
			if (ts_ns[j] <= ts_ns[i])
				continue;
			slopes[k++] = (v[j] - v[i]) * 1e9 / (double)(ts_ns[j] - ts_ns[i]);
		}
	m = median(slopes, k);
	free(slopes);
	return m;
}

double analysis__mann_kendall_z(const double *v, size_t n)
{
	double s = 0, var, *sorted;
	size_t i, j;

	if (n < 3)
		return 0;
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			s += (v[j] > v[i]) - (v[j] < v[i]);
	var = (double)n * (n - 1) * (2.0 * n + 5) / 18.0;
	/* Tie correction: runs of equal values carry no evidence. */
	sorted = malloc(n * sizeof(*sorted));
	if (!sorted)
		return 0;
	memcpy(sorted, v, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_double);
	for (i = 0; i < n; i = j) {
		double t;

		for (j = i + 1; j < n && sorted[j] == sorted[i]; j++)
			;
		t = (double)(j - i);
		if (t > 1)
			var -= t * (t - 1) * (2 * t + 5) / 18.0;
	}
	free(sorted);
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

/* A series that never changed over the window has no trend: skip the O(n^2) work. */
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
		double mmap_sites_growth_per_s = 0;
		bool heap_site_flagged = false, fd_site_flagged = false;
		struct trend heap, fds, rss;

		for (size_t j = 0; j < p->n_sites; j++) {
			struct site *s = &p->sites[j];
			struct trend t;

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
		/*
		 * A process grows when its total does, or when one of its sites does: other
		 * sites' caches and bursts can hide a steady leak in the total, never in the
		 * leaking site itself.
		 */
		p->flags = 0;
		if (heap.growing || heap_site_flagged) {
			p->flags |= PROC_HEAP_GROWTH;
			heap_explained_per_s = heap.slope_per_s > heap_sites_growth_per_s ?
					       heap.slope_per_s : heap_sites_growth_per_s;
		}
		if (fds.growing || fd_site_flagged)
			p->flags |= PROC_FD_GROWTH;
		if (rss.growing) {
			p->flags |= PROC_RSS_GROWTH;
			/*
			 * The working set grows faster than tracked memory explains: the heap,
			 * and growing anonymous mappings (brk growth under a heap also counts
			 * there: generous, never a false alarm).
			 */
			if (rss.slope_per_s > 2 * (heap_explained_per_s + mmap_sites_growth_per_s))
				p->flags |= PROC_RSS_UNEXPLAINED;
		}
		p->heap_growth_per_s = heap.slope_per_s;
	}
out:
	free(ts);
	free(v);
}
