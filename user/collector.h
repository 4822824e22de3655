/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * collector.h - one timestamped sample of the BPF maps per interval, plus the upkeep of those
 * maps: dead images' sites, live-block records and unreferenced stacks are removed here.
 */
#ifndef LEAKTOP_COLLECTOR_H
#define LEAKTOP_COLLECTOR_H

#include <stddef.h>
#include <stdint.h>

#include "../bpf/leaktop.h"
#include "loader.h"

struct raw_site {
	struct lt_site_key key;
	struct lt_site_val val;
};

struct sample {
	uint64_t ts_ns;				/* CLOCK_MONOTONIC, as bpf_ktime_get_ns() */
	struct raw_site *sites;			/* sorted by key (tgid, gen, stack_hash) */
	size_t n_sites;
	uint64_t drops[LT_DROP__COUNT];
	uint64_t counters[LT_CNT__COUNT];
	double read_ms;				/* time spent reading the maps */
};

/* An image whose process exited or exec'd: its records are garbage. */
struct dead_image {
	uint32_t tgid;
	uint64_t gen;
};

struct collector;

int collector__new(struct collector **out, const struct lt_map_fds *fds, unsigned int depth);
void collector__free(struct collector *c);

/* Fill s (its arrays are reused between calls; free with sample__free). 0 or -errno. */
int collector__read(struct collector *c, struct sample *s);
void sample__free(struct sample *s);

/* Frames of a stack (innermost first).  Returns the count, 0 if unknown. */
uint32_t collector__stack(struct collector *c, uint64_t hash, uint64_t *ips, uint32_t max);

/* Forget dead images' sites (a batched sweep of `sites`).  Records removed or -errno. */
long collector__purge_sites(struct collector *c, const struct dead_image *dead, size_t n);
/* Forget dead images' live blocks (a batched sweep of `allocs`).  Records removed or -errno. */
long collector__purge_allocs(struct collector *c, const struct dead_image *dead, size_t n);

/* Delete stacks referenced by no site in `s` for two sweeps in a row.  Count or -errno. */
long collector__gc_stacks(struct collector *c, const struct sample *s);

uint64_t monotonic_ns(void);

#endif
