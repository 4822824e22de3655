// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * series.c - the bounded ring of samples behind every trend leaktop computes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/series.h"

int series__init(struct series *s, uint32_t cap)
{
	memset(s, 0, sizeof(*s));
	if (!cap)
		return 0;
	s->ts_ns = calloc(cap, sizeof(*s->ts_ns));
	s->v = calloc(cap, sizeof(*s->v));
	if (!s->ts_ns || !s->v) {
		series__free(s);
		return -ENOMEM;
	}
	s->cap = cap;
	return 0;
}

void series__free(struct series *s)
{
	free(s->ts_ns);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

void series__push(struct series *s, uint64_t ts_ns, double v)
{
	if (!s->cap)
		return;
	s->ts_ns[s->pos] = ts_ns;
	s->v[s->pos] = v;
	s->pos = (s->pos + 1) % s->cap;
	if (s->n < s->cap)
		s->n++;
}

size_t series__copy(const struct series *s, uint64_t *ts_ns, double *v)
{
	uint32_t start;

	if (!s->n)
		return 0;
	start = (s->pos + s->cap - s->n) % s->cap;
	for (uint32_t i = 0; i < s->n; i++) {
		ts_ns[i] = s->ts_ns[(start + i) % s->cap];
		v[i] = s->v[(start + i) % s->cap];
	}
	return s->n;
}

double series__last(const struct series *s)
{
	if (!s->n)
		return 0;
	return s->v[(s->pos + s->cap - 1) % s->cap];
}
