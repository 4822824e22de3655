/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * analysis.h - growth verdicts: which call sites and processes keep growing (a leak), as
 * opposed to a cache that plateaus, alloc/free churn, a sawtooth or a one-off step.
 * Pure functions over the model's histories; no I/O.
 */
#ifndef LEAKTOP_ANALYSIS_H
#define LEAKTOP_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/model.h"

#define TREND_MIN_POINTS	8	/* samples before any verdict */
#define TREND_MIN_SPAN_S	2.0	/* seconds of history before any verdict */
#define TREND_Z_ENTER		2.33	/* Mann-Kendall z to start flagging (p < 0.01) */
#define TREND_Z_STAY		1.64	/* ... and to keep a flag (p < 0.05) */

struct trend {
	double slope_per_s;	/* Theil-Sen over the whole window */
	double recent_slope_per_s;	/* Theil-Sen over its later half */
	double z;		/* Mann-Kendall statistic, normalised */
	bool enough;		/* enough history for a verdict */
	bool growing;		/* the verdict */
};

/* Theil-Sen slope (median of pairwise slopes), units per second; 0 with < 2 points. */
double analysis__theil_sen_per_s(const uint64_t *ts_ns, const double *v, size_t n);
/*
 * From this many points on, Theil-Sen selects the median slope without computing every
 * pair's (O(n^1.5) expected instead of O(n^2 log n)); shorter series, and series with
 * non-integer values, sort every pair's slope.  Both give the same pair's slope.
 */
#define ANALYSIS_EXACT_MIN_POINTS 64
/* Pair slopes computed so far (for the complexity test). */
extern uint64_t analysis__slopes_computed;
/* Mann-Kendall trend statistic as a z-score (tie-corrected); 0 with < 3 points. */
double analysis__mann_kendall_z(const double *v, size_t n);

/*
 * The verdict on one series (oldest first).  Growing means: a significant monotone trend
 * (Mann-Kendall), sustained (the medians of the window's quarters rise at least twice,
 * the last time at the end) and still going on (the later half's and the last quarter's
 * slopes are positive).  A sawtooth slower than the minimum history looks like a leak until
 * its first drop; one faster never does.  A
 * series flagged before keeps its flag with weaker evidence (hysteresis), but never once the
 * later half is flat: a cache that plateaued is cleared.
 */
void analysis__trend(const uint64_t *ts_ns, const double *v, size_t n, bool was_growing,
		     struct trend *out);

/*
 * Recompute every site's growth_per_s and flag, and every process's flags.  A process has
 * heap_growth (fd_growth) when its total grows or when any of its heap (fd) sites is
 * flagged; the flag is also the totals' hysteresis state.
 */
void analysis__run(struct model *m);

#endif
