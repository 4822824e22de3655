/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * series.h - a bounded time series (a ring of the latest samples), the history the growth
 * analysis reads.  Pure data structure, unit-tested.
 */
#ifndef LEAKTOP_SERIES_H
#define LEAKTOP_SERIES_H

#include <stddef.h>
#include <stdint.h>

struct series {
	uint64_t *ts_ns;
	double *v;
	uint32_t cap, n, pos;	/* the next sample goes to pos */
};

/* 0 or -ENOMEM.  A zeroed struct series with cap 0 holds nothing and costs nothing. */
int series__init(struct series *s, uint32_t cap);
void series__free(struct series *s);
void series__push(struct series *s, uint64_t ts_ns, double v);
/* Copy the samples oldest first into ts/v (each cap long); returns the count. */
size_t series__copy(const struct series *s, uint64_t *ts_ns, double *v);
/* The latest value (0 if empty). */
double series__last(const struct series *s);

#endif
