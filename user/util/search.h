/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * search.h - the binary search over sorted arrays: where a key belongs.  bsearch(3)
 * only says whether it is there; inserting in order, finding the first record of a group
 * or the last entry at or below a value all need the position.
 */
#ifndef LEAKTOP_SEARCH_H
#define LEAKTOP_SEARCH_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The first index i of [0, n) where before(key, elem i) is false, n if there is none.
 * before must be true for a prefix of the array and false after it (the array is sorted
 * by what it looks at).  With before = "elem < key" that is the lower bound (the first
 * element >= key, where key would be inserted); with "elem <= key" the upper bound (one
 * past the last element <= key).
 */
static inline size_t search__partition(const void *base, size_t n, size_t size, const void *key,
				       bool (*before)(const void *key, const void *elem))
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (before(key, (const char *)base + mid * size))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The same search inline, for any array and any test: the first index i of [0, n) where the
 * expression `before` (written in terms of the index i; true for a prefix of the array) is
 * false, n if there is none.  A GNU statement expression (leaktop builds with gnu11).
 */
#define SEARCH_FIRST(n, i, before)						\
	({									\
		size_t search_lo_ = 0, search_hi_ = (n);			\
										\
		while (search_lo_ < search_hi_) {				\
			size_t i = search_lo_ + (search_hi_ - search_lo_) / 2;	\
										\
			if (before)						\
				search_lo_ = i + 1;				\
			else							\
				search_hi_ = i;					\
		}								\
		search_lo_;							\
	})

#endif
