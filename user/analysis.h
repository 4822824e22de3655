/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * analysis.h - pure functions over the model's histories: growth rates now, growth verdicts
 * (the `flagged` field and process flags) in the growth-analysis work that builds on this.
 */
#ifndef LEAKTOP_ANALYSIS_H
#define LEAKTOP_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/*
 * Theil-Sen slope (median of pairwise slopes) of ys over ts_ns, in units per second.
 * Robust to outliers and to a single step.  0 with fewer than 2 points.
 */
double analysis__theil_sen_per_s(const uint64_t *ts_ns, const int64_t *ys, size_t n);

/* Recompute growth_per_s (and verdicts) of every site of the model. */
void analysis__run(struct model *m);

#endif
