// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_util.c - the shared helpers of user/util/: growable arrays (vec.h: doubling, the
 * first capacity, zero-filling, no change on a refused size, insert and remove in a sorted
 * array), the binary search
 * (search.h: lower and upper bounds, empty arrays) and the monotonic clock (clock.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "util/clock.h"
#include "util/search.h"
#include "util/vec.h"

static void test_vec_reserve_starts_at_first_then_doubles(void)
{
	int *v = NULL;
	size_t cap = 0, n;

	CHECK_EQ_INT(VEC_RESERVE(v, cap, 1, 16), 0);
	CHECK_EQ_INT((int)cap, 16);
	for (n = 0; n < 16; n++)
		v[n] = (int)n;
	CHECK_EQ_INT(VEC_RESERVE(v, cap, 16, 16), 0);
	CHECK_EQ_INT((int)cap, 16);
	CHECK_EQ_INT(VEC_RESERVE(v, cap, 17, 16), 0);
	CHECK_EQ_INT((int)cap, 32);
	CHECK_EQ_INT(VEC_RESERVE(v, cap, 100, 16), 0);
	CHECK_EQ_INT((int)cap, 128);
	for (n = 0; n < 16; n++)
		CHECK_EQ_INT(v[n], (int)n);
	free(v);
}

static void test_vec_reserve_zeroed_fills_only_new_elements(void)
{
	uint64_t *v = NULL;
	size_t cap = 0;

	CHECK_EQ_INT(VEC_RESERVE_ZEROED(v, cap, 2, 2), 0);
	CHECK_EQ_INT((int)cap, 2);
	CHECK(v[0] == 0 && v[1] == 0);
	v[0] = 7;
	v[1] = 8;
	CHECK_EQ_INT(VEC_RESERVE_ZEROED(v, cap, 3, 2), 0);
	CHECK_EQ_INT((int)cap, 4);
	CHECK(v[0] == 7 && v[1] == 8 && v[2] == 0 && v[3] == 0);
	free(v);
}

static void test_vec_reserve_refuses_overflow_and_keeps_array(void)
{
	char *v = NULL;
	size_t cap = 0;

	CHECK_EQ_INT(VEC_RESERVE(v, cap, 4, 0), 0);
	CHECK_EQ_INT((int)cap, 4);
	{
		char *before = v;
		uint64_t *w = (uint64_t *)NULL;
		size_t wcap = 8;

		CHECK_EQ_INT(VEC_RESERVE(w, wcap, SIZE_MAX / 4, 8), -ENOMEM);
		CHECK_EQ_INT((int)wcap, 8);
		CHECK(w == NULL);
		CHECK(v == before);
	}
	free(v);
}

static bool int_before(const void *key, const void *elem)
{
	return *(const int *)elem < *(const int *)key;
}

static bool int_at_or_before(const void *key, const void *elem)
{
	return *(const int *)elem <= *(const int *)key;
}

/* Find-or-insert keeps a sorted array sorted: the new element zeroed at its place, the rest
 * moved up; one out moves the rest down. */
static void test_vec_insert_at_the_search_position_keeps_the_array_sorted(void)
{
	static const int order[] = { 50, 10, 30, 70, 20, 60, 40, 0 };
	struct item { int key; int val; } *v = NULL, *it;
	size_t n = 0, cap = 0;

	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		size_t at = SEARCH_FIRST(n, mid, v[mid].key < order[k]);

		it = VEC_INSERT(v, n, cap, at, 2);
		CHECK(it != NULL);
		CHECK_EQ_INT(it->val, 0);
		it->key = order[k];
		it->val = order[k] + 1;
	}
	CHECK_EQ_INT((int)n, 8);
	CHECK_EQ_INT((int)cap, 8);
	for (size_t i = 0; i < n; i++)
		CHECK(v[i].key == (int)i * 10 && v[i].val == (int)i * 10 + 1);
	CHECK(VEC_INSERT(v, n, cap, n + 1, 2) == NULL);	/* past the end: refused */
	CHECK_EQ_INT((int)n, 8);
	VEC_REMOVE(v, n, 0);
	VEC_REMOVE(v, n, 3);
	VEC_REMOVE(v, n, n - 1);
	CHECK_EQ_INT((int)n, 5);
	CHECK(v[0].key == 10 && v[1].key == 20 && v[2].key == 30 && v[3].key == 50 &&
	      v[4].key == 60);
	free(v);
}

static void test_search_partition_gives_lower_and_upper_bounds(void)
{
	static const int a[] = { 1, 3, 3, 3, 7 };
	int k;

	k = 3;
	CHECK_EQ_INT((int)search__partition(a, 5, sizeof(a[0]), &k, int_before), 1);
	CHECK_EQ_INT((int)search__partition(a, 5, sizeof(a[0]), &k, int_at_or_before), 4);
	k = 0;
	CHECK_EQ_INT((int)search__partition(a, 5, sizeof(a[0]), &k, int_before), 0);
	k = 9;
	CHECK_EQ_INT((int)search__partition(a, 5, sizeof(a[0]), &k, int_before), 5);
	CHECK_EQ_INT((int)search__partition(a, 0, sizeof(a[0]), &k, int_before), 0);
}

static void test_monotonic_clock_never_goes_back(void)
{
	uint64_t t0 = monotonic_ns(), t1 = monotonic_ns();
	double s = monotonic_s();

	CHECK(t0 > 0);
	CHECK(t1 >= t0);
	CHECK(s * 1e9 >= (double)t0 - 1e3);
}

int main(void)
{
	RUN(test_vec_reserve_starts_at_first_then_doubles);
	RUN(test_vec_reserve_zeroed_fills_only_new_elements);
	RUN(test_vec_reserve_refuses_overflow_and_keeps_array);
	RUN(test_vec_insert_at_the_search_position_keeps_the_array_sorted);
	RUN(test_search_partition_gives_lower_and_upper_bounds);
	RUN(test_monotonic_clock_never_goes_back);
	CHECK_EXIT();
}
