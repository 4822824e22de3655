// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * analysis.c - growth estimates over each site's bounded history.  No I/O: unit-tested on
 * synthetic series.
 */
#include <stdlib.h>

#include "analysis.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double analysis__theil_sen_per_s(const uint64_t *ts_ns, const int64_t *ys, size_t n)
{
	double slopes[SITE_HISTORY * (SITE_HISTORY - 1) / 2];
	size_t k = 0;

	if (n < 2)
		return 0;
	if (n > SITE_HISTORY)
		n = SITE_HISTORY;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++) {
			if (ts_ns[j] == ts_ns[i])
				continue;
			slopes[k++] = (double)(ys[j] - ys[i]) * 1e9 /
				      ((double)ts_ns[j] - (double)ts_ns[i]);
		}
	if (!k)
		return 0;
	qsort(slopes, k, sizeof(slopes[0]), cmp_double);
	return k % 2 ? slopes[k / 2] : (slopes[k / 2 - 1] + slopes[k / 2]) / 2;
}

static void site_growth(struct site *s)
{
	uint64_t ts[SITE_HISTORY];
	int64_t ys[SITE_HISTORY];
	uint32_t start = (s->hist_pos + SITE_HISTORY - s->hist_n) % SITE_HISTORY;

	for (uint32_t i = 0; i < s->hist_n; i++) {
		ts[i] = s->hist_ts_ns[(start + i) % SITE_HISTORY];
		ys[i] = s->hist_bytes[(start + i) % SITE_HISTORY];
	}
	s->growth_per_s = analysis__theil_sen_per_s(ts, ys, s->hist_n);
	s->flagged = false;
}

void analysis__run(struct model *m)
{
	for (size_t i = 0; i < m->n_procs; i++)
		for (size_t j = 0; j < m->procs[i].n_sites; j++)
			site_growth(&m->procs[i].sites[j]);
}
