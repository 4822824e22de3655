/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * vec.h - growable arrays: the one grow-by-doubling.  An array is a pointer, a count and a
 * capacity (size_t) its owner keeps under its own names; VEC_RESERVE makes room for `need`
 * elements, doubling the capacity (from `first` when the array is empty), so appending n
 * elements one by one reallocates O(log n) times.  VEC_INSERT and VEC_REMOVE keep a sorted
 * array sorted: an element in or out at a position its owner found (util/search.h).
 */
#ifndef LEAKTOP_VEC_H
#define LEAKTOP_VEC_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * Make *arrp (a pointer to an array of *cap elements of size bytes) hold at least need
 * elements: the capacity doubles (from first, 1 if 0) until it does.  With zero, the new
 * elements are zero-filled.  0, or -ENOMEM with *arrp and *cap unchanged.
 */
static inline int vec__reserve(void *arrp, size_t *cap, size_t need, size_t size, size_t first,
			       bool zero)
{
	size_t c = *cap ? *cap : (first ? first : 1);
	void *old, *nv;

	if (need <= *cap)
		return 0;
	while (c < need) {
		if (c > SIZE_MAX / 2)
			return -ENOMEM;
		c *= 2;
	}
	if (size && c > SIZE_MAX / size)
		return -ENOMEM;
	memcpy(&old, arrp, sizeof(old));
	nv = realloc(old, c * size);
	if (!nv)
		return -ENOMEM;
	if (zero)
		memset((char *)nv + *cap * size, 0, (c - *cap) * size);
	memcpy(arrp, &nv, sizeof(nv));
	*cap = c;
	return 0;
}

/* Room for need elements in arr (an lvalue pointer), whose capacity is cap (a size_t). */
#define VEC_RESERVE(arr, cap, need, first) \
	vec__reserve(&(arr), &(cap), (need), sizeof(*(arr)), (first), false)
/* The same, the new elements zero-filled. */
#define VEC_RESERVE_ZEROED(arr, cap, need, first) \
	vec__reserve(&(arr), &(cap), (need), sizeof(*(arr)), (first), true)

/*
 * One element more at index at (0..*n) of the array at *arrp (*n elements, capacity *cap,
 * grown as vec__reserve does): those from at on move up one.  The new element, zero-filled,
 * or NULL (out of memory: the array unchanged).
 */
static inline void *vec__insert(void *arrp, size_t *n, size_t *cap, size_t at, size_t size,
				size_t first)
{
	char *a;

	if (at > *n || vec__reserve(arrp, cap, *n + 1, size, first, false))
		return NULL;
	memcpy(&a, arrp, sizeof(a));
	memmove(a + (at + 1) * size, a + at * size, (*n - at) * size);
	memset(a + at * size, 0, size);
	(*n)++;
	return a + at * size;
}

/* The element at index at (< *n) of the array at *arrp out: those after it move down one. */
static inline void vec__remove(void *arrp, size_t *n, size_t at, size_t size)
{
	char *a;

	memcpy(&a, arrp, sizeof(a));
	memmove(a + at * size, a + (at + 1) * size, (*n - at - 1) * size);
	(*n)--;
}

/* A new zeroed element at index at of arr (n elements, capacity cap), or NULL. */
#define VEC_INSERT(arr, n, cap, at, first) \
	vec__insert(&(arr), &(n), &(cap), (at), sizeof(*(arr)), (first))
/* Element at of arr (n elements) out. */
#define VEC_REMOVE(arr, n, at) vec__remove(&(arr), &(n), (at), sizeof(*(arr)))

#endif
