// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_analysis.c - growth verdicts on synthetic series: what must be flagged (steady leak,
 * slow leak in noise) and what must not (plateaued cache, churn, sawtooth, one-off step),
 * with gaps, resets and restarts.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/analysis.h"
#include "check.h"
#include "cli/options.h"
#include "core/model.h"
#include "core/series.h"

#define S 1000000000ULL
#define N 40

/* Deterministic noise in [-1, 1]. */
static double noise(unsigned int *state)
{
	*state = *state * 1103515245u + 12345u;
	return ((*state >> 8) % 20001) / 10000.0 - 1.0;
}

static void times(uint64_t *ts, size_t n, double interval_s)
{
	for (size_t i = 0; i < n; i++)
		ts[i] = (uint64_t)(i * interval_s * S);
}

/* Run the verdict the way leaktop does, sample by sample, with hysteresis. */
static bool verdict_over_time(const uint64_t *ts, const double *v, size_t n, size_t *first_flag)
{
	struct trend t = {};
	bool was = false;

	*first_flag = 0;
	for (size_t k = 1; k <= n; k++) {
		size_t from = k > N ? k - N : 0;

		analysis__trend(ts + from, v + from, k - from, was, &t);
		if (t.growing && !was && !*first_flag)
			*first_flag = k;
		was = t.growing;
	}
	return was;
}

static void test_theil_sen_steady_leak_slope(void)
{
	uint64_t ts[10];
	double v[10];

	times(ts, 10, 1);
	for (int i = 0; i < 10; i++)
		v[i] = 12800.0 * i;
	CHECK(fabs(analysis__theil_sen_per_s(ts, v, 10) - 12800) < 1e-6);
}

static void test_theil_sen_ignores_one_outlier(void)
{
	uint64_t ts[9];
	double v[9];

	times(ts, 9, 0.5);
	for (int i = 0; i < 9; i++)
		v[i] = 100.0 * i;
	v[4] = 1e6;
	CHECK(fabs(analysis__theil_sen_per_s(ts, v, 9) - 200) < 1e-6);
}

static void test_mann_kendall_flat_series_is_zero(void)
{
	double v[12];

	for (int i = 0; i < 12; i++)
		v[i] = 4096;
	CHECK(analysis__mann_kendall_z(v, 12) == 0);
	CHECK(analysis__mann_kendall_z(v, 2) == 0);
}

static void test_trend_flags_steady_leak(void)
{
	uint64_t ts[20];
	double v[20];
	size_t first;

	times(ts, 20, 0.5);
	for (int i = 0; i < 20; i++)
		v[i] = 256.0 * 25 * i;	/* 256 B every 20 ms, sampled every 0.5 s */
	CHECK(verdict_over_time(ts, v, 20, &first));
	CHECK(first > 0 && first <= TREND_MIN_POINTS + 1);
}

static void test_trend_needs_minimum_history(void)
{
	uint64_t ts[TREND_MIN_POINTS];
	double v[TREND_MIN_POINTS];
	struct trend t;

	times(ts, TREND_MIN_POINTS, 1);
	for (int i = 0; i < TREND_MIN_POINTS; i++)
		v[i] = 1000.0 * i;
	analysis__trend(ts, v, TREND_MIN_POINTS - 1, false, &t);
	CHECK(!t.enough && !t.growing);
	analysis__trend(ts, v, TREND_MIN_POINTS, false, &t);
	CHECK(t.enough && t.growing);
}

static void test_trend_ignores_bounded_cache_once_plateaued(void)
{
	uint64_t ts[60];
	double v[60];
	size_t first;

	times(ts, 60, 0.5);
	/* Fills 2000 entries of 64 B over 3 s, then evicts as it inserts: flat. */
	for (int i = 0; i < 60; i++)
		v[i] = 64.0 * (i < 6 ? 2000.0 * i / 6 : 2000);
	CHECK(!verdict_over_time(ts, v, 60, &first));
	CHECK_EQ_INT(first, 0);
}

static void test_trend_clears_flag_when_growth_stops(void)
{
	uint64_t ts[80];
	double v[80];
	size_t first;

	times(ts, 80, 0.5);
	/* Grows for 15 s (flagged, rightly), then plateaus: the flag must go. */
	for (int i = 0; i < 80; i++)
		v[i] = 1000.0 * (i < 30 ? i : 30);
	CHECK(!verdict_over_time(ts, v, 80, &first));
	CHECK(first > 0);
}

static void test_trend_ignores_churn(void)
{
	uint64_t ts[60];
	double v[60];
	unsigned int st = 7;
	size_t first;

	times(ts, 60, 0.5);
	for (int i = 0; i < 60; i++)
		v[i] = 4096 * (1 + noise(&st));	/* bursts of alloc/free: random level */
	CHECK(!verdict_over_time(ts, v, 60, &first));
}

static void test_trend_ignores_sawtooth(void)
{
	uint64_t ts[60];
	double v[60];
	size_t first;

	times(ts, 60, 0.5);
	/* Fills a buffer, frees it all, again: every 3 s, faster than TREND_MIN_POINTS. */
	for (int i = 0; i < 60; i++)
		v[i] = 10000.0 * (i % 6);
	CHECK(!verdict_over_time(ts, v, 60, &first));
	CHECK_EQ_INT(first, 0);
}

static void test_trend_ignores_one_off_step(void)
{
	uint64_t ts[60];
	double v[60];
	size_t first;

	times(ts, 60, 0.5);
	for (int i = 0; i < 60; i++)
		v[i] = i < 12 ? 1000 : 500000;	/* start-up allocation */
	CHECK(!verdict_over_time(ts, v, 60, &first));
	CHECK_EQ_INT(first, 0);
}

static void test_trend_flags_slow_leak_hidden_in_noise(void)
{
	uint64_t ts[120];
	double v[120];
	unsigned int st = 42;
	size_t first;

	times(ts, 120, 0.5);
	/* 100 B/s under +-2000 B of churn noise. */
	for (int i = 0; i < 120; i++)
		v[i] = 50.0 * i + 2000 * noise(&st) + 10000;
	CHECK(verdict_over_time(ts, v, 120, &first));
	CHECK(first > TREND_MIN_POINTS);	/* not at once: the evidence builds up */
}

static void test_trend_handles_gap_in_samples(void)
{
	uint64_t ts[20];
	double v[20];
	struct trend t;

	for (int i = 0; i < 20; i++) {
		ts[i] = (uint64_t)(i < 10 ? i : i + 5) * S;	/* five intervals missed */
		v[i] = 1000.0 * (ts[i] / S);
	}
	analysis__trend(ts, v, 20, false, &t);
	CHECK(t.growing);
	CHECK(fabs(t.slope_per_s - 1000) < 1e-6);
}

static void test_trend_counter_reset_is_not_a_leak(void)
{
	uint64_t ts[40];
	double v[40];
	size_t first;

	times(ts, 40, 0.5);
	/* A level that is reset to zero and comes back to the same level. */
	for (int i = 0; i < 40; i++)
		v[i] = i >= 20 && i < 24 ? 0 : 8000;
	CHECK(!verdict_over_time(ts, v, 40, &first));
	CHECK_EQ_INT(first, 0);
}

/* A site of p of the given kind, with an empty history of the model's window. */
static struct site *add_site(struct process *p, uint32_t window, enum lt_site_kind kind)
{
	struct site *s = &p->sites[p->n_sites++];

	memset(s, 0, sizeof(*s));
	s->kind = kind;
	return series__init(&s->hist, window) ? NULL : s;
}

/*
 * One process sampled every 0.5 s the way leaktop does (push, then analyse): a steady heap
 * leak (12800 B/s) beside a cache that fills and stays full and malloc/free bursts of about
 * 3 MB in half the samples; a steady fd leak (2/s) beside open/close bursts of about 470.
 * The bursts hide the leaks in the process's totals, whose own trend never turns, but not
 * in the leaking sites: whenever one is flagged, so is the process.
 */
static void test_process_flags_follow_flagged_sites_hidden_in_bursty_totals(void)
{
	const uint32_t window = 40;
	unsigned int heap_state = 1, fd_state = 1;
	struct site *leak, *cache, *churn, *fd_leak, *fd_churn;
	struct process *p;
	struct trend total;
	struct model m;
	uint64_t ts[40];
	double v[40];
	size_t n;

	model__init(&m, 0.5, RES_ALL, window);
	p = model__process(&m, 100, 1);
	CHECK(p);
	p->sites = calloc(5, sizeof(*p->sites));
	CHECK(p->sites);
	p->cap_sites = 5;
	leak = add_site(p, window, LT_KIND_HEAP);
	cache = add_site(p, window, LT_KIND_HEAP);
	churn = add_site(p, window, LT_KIND_HEAP);
	fd_leak = add_site(p, window, LT_KIND_FD);
	fd_churn = add_site(p, window, LT_KIND_FD);
	CHECK(leak && cache && churn && fd_leak && fd_churn);
	for (int i = 0; i < 60; i++) {
		uint64_t t = (uint64_t)i * S / 2;
		bool heap_burst = noise(&heap_state) > 0, fd_burst = noise(&fd_state) > 0;
		double heap[3] = { 6400.0 * i, 16000.0 * (i < 8 ? i : 8),
				   heap_burst ? 3e6 * (1 + 0.25 * noise(&heap_state)) : 0 };
		double fds[2] = { i, fd_burst ? round(470 * (1 + 0.25 * noise(&fd_state))) : 0 };

		series__push(&leak->hist, t, heap[0]);
		series__push(&cache->hist, t, heap[1]);
		series__push(&churn->hist, t, heap[2]);
		series__push(&fd_leak->hist, t, fds[0]);
		series__push(&fd_churn->hist, t, fds[1]);
		series__push(&p->hist_heap, t, heap[0] + heap[1] + heap[2]);
		series__push(&p->hist_fds, t, fds[0] + fds[1]);
		analysis__run(&m);
		CHECK(!leak->flagged || (p->flags & PROC_HEAP_GROWTH));
		CHECK(!fd_leak->flagged || (p->flags & PROC_FD_GROWTH));
	}
	CHECK(leak->flagged && !cache->flagged && !churn->flagged);
	CHECK(fd_leak->flagged && !fd_churn->flagged);
	/* The totals alone say nothing: only the sites tell. */
	n = series__copy(&p->hist_heap, ts, v);
	analysis__trend(ts, v, n, false, &total);
	CHECK(!total.growing);
	n = series__copy(&p->hist_fds, ts, v);
	analysis__trend(ts, v, n, false, &total);
	CHECK(!total.growing);
	model__free(&m);
}

/*
 * A process whose RSS grows 128 KiB/s, sampled every 0.5 s for 30 s; mapped says how its
 * anonymous mappings grow beside it: not at all, or as much, each 64 KiB a mapping of its own
 * call site (a new site each sample, each a one-off step that is never flagged: brk growth
 * from whichever malloc needed it looks like that).  Returns the process's last flags.
 */
static unsigned int rss_flags_with(bool mapped, bool slack)
{
	const uint32_t window = 40, samples = 60;
	unsigned int flags = 0;
	struct process *p;
	struct model m;

	model__init(&m, 0.5, RES_ALL, window);
	p = model__process(&m, 100, 1);
	if (!p)
		goto out;
	p->sites = calloc(samples, sizeof(*p->sites));
	if (!p->sites)
		goto out;
	p->cap_sites = samples;
	if (slack) {
		/* Its scan: glibc holds 32 MiB of its 40 MiB heap free. */
		p->scan = calloc(1, sizeof(*p->scan));
		if (!p->scan)
			goto out;
		p->scan->ok = true;
		p->scan->result.slack = (struct heapslack){ .valid = true, .heaps = 1,
			.resident_bytes = 40 << 20, .free_bytes = 32 << 20 };
	}
	for (uint32_t i = 0; i < samples; i++) {
		uint64_t t = (uint64_t)i * S / 2;
		struct site *s = mapped ? add_site(p, window, LT_KIND_MMAP) : NULL;

		for (size_t j = 0; j < p->n_sites; j++)
			series__push(&p->sites[j].hist, t, 65536);
		if (s)
			s->outstanding_bytes = 65536;
		series__push(&p->hist_mmap, t, mapped ? 65536.0 * (i + 1) : 0);
		series__push(&p->hist_rss, t, (64 << 20) + 65536.0 * i);
		analysis__run(&m);
		for (size_t j = 0; j < p->n_sites; j++)
			if (p->sites[j].flagged)
				goto out;	/* not the case this is about */
	}
	flags = p->flags;
out:
	model__free(&m);
	return flags;
}

static unsigned int rss_flags_with_mappings(bool mapped)
{
	return rss_flags_with(mapped, false);
}

static void test_rss_growth_without_tracked_growth_is_unexplained(void)
{
	unsigned int flags = rss_flags_with_mappings(false);

	CHECK(flags & PROC_RSS_GROWTH);
	CHECK(flags & PROC_RSS_UNEXPLAINED);
}

static void test_rss_growth_while_glibc_holds_the_heap_free_is_allocator_retention(void)
{
	unsigned int flags = rss_flags_with(false, true);

	CHECK(flags & PROC_RSS_GROWTH);
	CHECK(flags & PROC_ALLOC_RETENTION);
	CHECK(!(flags & PROC_RSS_UNEXPLAINED));
	CHECK(!(flags & PROC_HEAP_GROWTH));
}

static void test_rss_growth_matched_by_mappings_spread_over_sites_is_explained(void)
{
	unsigned int flags = rss_flags_with_mappings(true);

	CHECK(flags & PROC_RSS_GROWTH);
	CHECK(!(flags & PROC_RSS_UNEXPLAINED));
}

static void test_series_ring_keeps_latest_in_order(void)
{
	struct series s;
	uint64_t ts[4];
	double v[4];

	CHECK_EQ_INT(series__init(&s, 4), 0);
	for (int i = 0; i < 6; i++)
		series__push(&s, i * S, i * 10.0);
	CHECK_EQ_INT(series__copy(&s, ts, v), 4);
	CHECK(v[0] == 20 && v[3] == 50);
	CHECK(ts[0] == 2 * S);
	CHECK(series__last(&s) == 50);
	series__free(&s);
}

/* ------------------------------------------------ the previous, all-pairs algorithms */

static int ref_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double ref_theil_sen(const uint64_t *ts, const double *v, size_t n)
{
	double *sl = malloc((n * (n - 1) / 2 + 1) * sizeof(*sl)), m;
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (ts[j] > ts[i])
				sl[k++] = (v[j] - v[i]) * 1e9 / (double)(ts[j] - ts[i]);
	qsort(sl, k, sizeof(*sl), ref_cmp);
	m = !k ? 0 : k % 2 ? sl[k / 2] : (sl[k / 2 - 1] + sl[k / 2]) / 2;
	free(sl);
	return m;
}

static double ref_mann_kendall_z(const double *v, size_t n)
{
	double s = 0, var, *sorted;
	size_t i, j;

	if (n < 3)
		return 0;
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			s += (v[j] > v[i]) - (v[j] < v[i]);
	var = (double)n * (n - 1) * (2.0 * n + 5) / 18.0;
	sorted = malloc(n * sizeof(*sorted));
	memcpy(sorted, v, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), ref_cmp);
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
	return s > 0 ? (s - 1) / sqrt(var) : s < 0 ? (s + 1) / sqrt(var) : 0;
}

/* Integer series of several shapes, as leaktop's are (bytes, counts). */
static void random_series(unsigned int *st, int shape, uint64_t *ts, double *v, size_t n)
{
	double x = 1000;

	for (size_t i = 0; i < n; i++) {
		ts[i] = i * S + (uint64_t)((noise(st) + 1) * 1000);	/* jittered ticks */
		switch (shape) {
		case 0:		/* random walk */
			x += floor(noise(st) * 50);
			break;
		case 1:		/* steps: long flat stretches, mostly tied slopes */
			if (noise(st) > 0.9)
				x += floor(noise(st) * 4000);
			break;
		case 2:		/* slow leak in noise */
			x = 1000 + i * 3 + floor(noise(st) * 300);
			break;
		default:	/* few distinct values */
			x = floor((noise(st) + 1) * 2);
			break;
		}
		v[i] = x;
	}
}

static bool same_slope(double a, double b)
{
	return a == b || fabs(a - b) <= 1e-12 * fmax(fabs(a), fabs(b));
}

/*
 * The median-of-slopes selection and the O(n log n) Mann-Kendall give what sorting every
 * pair gave, on random series of every shape (ties included), whole and split as
 * analysis__trend splits them.
 */
static void test_trend_statistics_equal_the_all_pairs_algorithms_on_random_series(void)
{
	static const size_t sizes[] = { 8, 40, 63, 64, 65, 100, 257, 600 };
	uint64_t ts[600];
	double v[600];
	unsigned int st = 7;

	for (int rep = 0; rep < 4; rep++)
		for (int shape = 0; shape < 4; shape++)
			for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
				size_t n = sizes[k], h = n / 2;
				double want, got;

				random_series(&st, shape, ts, v, n);
				want = ref_theil_sen(ts, v, n);
				got = analysis__theil_sen_per_s(ts, v, n);
				if (!same_slope(want, got))
					fprintf(stderr, "n %zu shape %d: %.17g vs %.17g\n", n, shape,
						want, got);
				CHECK(same_slope(want, got));
				CHECK(same_slope(ref_theil_sen(ts + h, v + h, n - h),
						 analysis__theil_sen_per_s(ts + h, v + h, n - h)));
				CHECK(ref_mann_kendall_z(v, n) == analysis__mann_kendall_z(v, n));
			}
}

/* Growth verdicts at window 3600: the same, computing O(n) pair slopes, not n^2 / 2. */
static void test_trend_at_window_3600_equals_all_pairs_and_computes_few_slopes(void)
{
	enum { W = 3600 };
	static uint64_t ts[W];
	static double v[W];
	unsigned int st = 11;

	for (int shape = 0; shape < 4; shape++) {
		struct trend t;
		uint64_t before;

		random_series(&st, shape, ts, v, W);
		before = analysis__slopes_computed;
		analysis__trend(ts, v, W, false, &t);
		/* Three Theil-Sen runs (whole, later half, last quarter), each O(n). */
		CHECK(analysis__slopes_computed - before < 3 * (8 * W + 64));
		CHECK(same_slope(t.slope_per_s, ref_theil_sen(ts, v, W)));
		CHECK(t.z == ref_mann_kendall_z(v, W));
	}
}

int main(void)
{
	RUN(test_theil_sen_steady_leak_slope);
	RUN(test_trend_statistics_equal_the_all_pairs_algorithms_on_random_series);
	RUN(test_trend_at_window_3600_equals_all_pairs_and_computes_few_slopes);
	RUN(test_theil_sen_ignores_one_outlier);
	RUN(test_mann_kendall_flat_series_is_zero);
	RUN(test_trend_flags_steady_leak);
	RUN(test_trend_needs_minimum_history);
	RUN(test_trend_ignores_bounded_cache_once_plateaued);
	RUN(test_trend_clears_flag_when_growth_stops);
	RUN(test_trend_ignores_churn);
	RUN(test_trend_ignores_sawtooth);
	RUN(test_trend_ignores_one_off_step);
	RUN(test_trend_flags_slow_leak_hidden_in_noise);
	RUN(test_trend_handles_gap_in_samples);
	RUN(test_trend_counter_reset_is_not_a_leak);
	RUN(test_series_ring_keeps_latest_in_order);
	RUN(test_process_flags_follow_flagged_sites_hidden_in_bursty_totals);
	RUN(test_rss_growth_without_tracked_growth_is_unexplained);
	RUN(test_rss_growth_matched_by_mappings_spread_over_sites_is_explained);
	RUN(test_rss_growth_while_glibc_holds_the_heap_free_is_allocator_retention);
	CHECK_EXIT();
}
