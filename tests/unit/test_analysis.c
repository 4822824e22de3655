// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_analysis.c - growth estimates on synthetic series.
 */
#include <math.h>

#include "analysis.h"
#include "check.h"

#define S 1000000000ULL

static void test_theil_sen_steady_leak_slope(void)
{
	uint64_t ts[10];
	int64_t ys[10];

	for (int i = 0; i < 10; i++) {
		ts[i] = i * S;
		ys[i] = 12800 * i;
	}
	CHECK(fabs(analysis__theil_sen_per_s(ts, ys, 10) - 12800) < 1e-6);
}

static void test_theil_sen_ignores_one_outlier(void)
{
	uint64_t ts[9];
	int64_t ys[9];

	for (int i = 0; i < 9; i++) {
		ts[i] = i * S / 2;
		ys[i] = 100 * i;
	}
	ys[4] = 1000000;
	CHECK(fabs(analysis__theil_sen_per_s(ts, ys, 9) - 200) < 1e-6);
}

static void test_theil_sen_flat_series_is_zero(void)
{
	uint64_t ts[5] = { 0, S, 2 * S, 3 * S, 4 * S };
	int64_t ys[5] = { 4096, 4096, 4096, 4096, 4096 };

	CHECK(analysis__theil_sen_per_s(ts, ys, 5) == 0);
	CHECK(analysis__theil_sen_per_s(ts, ys, 1) == 0);
	CHECK(analysis__theil_sen_per_s(ts, ys, 0) == 0);
}

int main(void)
{
	RUN(test_theil_sen_steady_leak_slope);
	RUN(test_theil_sen_ignores_one_outlier);
	RUN(test_theil_sen_flat_series_is_zero);
	CHECK_EXIT();
}
