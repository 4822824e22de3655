/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * collector.h - one timestamped sample of the BPF maps per interval, plus the upkeep of those
 * maps: dead images' sites, live-block records and unreferenced stacks are removed here.
 */
#ifndef LEAKTOP_COLLECTOR_H
#define LEAKTOP_COLLECTOR_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/leaktop.h"
#include "core/types.h"
#include "live/loader.h"

struct raw_site {
	struct lt_site_key key;
	struct lt_site_val val;
};

struct raw_fd {
	struct lt_fd_key key;
	struct lt_fd_val val;
};

struct sample {
	uint64_t ts_ns;				/* CLOCK_MONOTONIC, as bpf_ktime_get_ns() */
	struct raw_site *sites;			/* sorted by key (tgid, kind, gen, stack_hash) */
	size_t n_sites;
	struct raw_fd *fds;			/* tracked open descriptors, sorted by (tgid, fd) */
	size_t n_fds;
	uint64_t drops[LT_DROP__COUNT];
	uint64_t counters[LT_CNT__COUNT];
	double read_ms;				/* time spent reading the maps */
};

struct collector;

int collector__new(struct collector **out, const struct lt_map_fds *fds, unsigned int depth);
void collector__free(struct collector *c);

/* Fill s (its arrays are reused between calls; free with sample__free). 0 or -errno. */
int collector__read(struct collector *c, struct sample *s);
void sample__free(struct sample *s);

/* One live block record of the `allocs` map. */
struct raw_alloc {
	struct lt_alloc_key key;
	struct lt_alloc_val val;
};

/*
 * The live blocks of image (tgid, gen) (any image of tgid when gen is 0): one batched read
 * of `allocs`, kept records malloc'd in *out (free()).  0 or -errno.
 */
int collector__read_allocs(struct collector *c, uint32_t tgid, uint64_t gen,
			   struct raw_alloc **out, size_t *n);

/* Frames of a stack (innermost first).  Returns the count, 0 if unknown. */
uint32_t collector__stack(struct collector *c, uint64_t hash, uint64_t *ips, uint32_t max);

/*
 * Forget dead images' sites (a batched sweep of `sites`), and the stacks only they used
 * (`live`: the latest sample, whose other sites keep theirs).  Records removed or -errno.
 */
long collector__purge_sites(struct collector *c, const struct dead_image *dead, size_t n,
			    const struct sample *live);
/* Forget dead images' live blocks (a batched sweep of `allocs`).  Records removed or -errno. */
long collector__purge_allocs(struct collector *c, const struct dead_image *dead, size_t n);
/* Forget dead images' descriptors (a batched sweep of `fds`).  Records removed or -errno. */
long collector__purge_fds(struct collector *c, const struct dead_image *dead, size_t n);

/* One tracked descriptor that /proc shows open. */
struct fd_seen {
	uint64_t stack_hash;
	int fd;
	int type;				/* enum fd_type */
	char target[96];			/* link target, socket family/type */
};

/* A process's descriptors reconciled with /proc/PID/fd. */
struct fd_census {
	struct fd_seen *open;			/* tracked and open */
	size_t n_open;
	uint64_t *repaired;			/* stack hash of each record /proc showed closed */
	size_t n_repaired;
	uint32_t untracked;			/* open, but leaktop did not see them created */
	bool valid;				/* /proc/PID/fd could be read */
};

/*
 * Reconcile image (pid, gen)'s tracked descriptors in `s` with /proc/PID/fd: records of
 * descriptors no longer open are deleted from the map (repairs), open ones are classified.
 * 0 or -errno.  Free with fd_census__free.
 */
int collector__fd_census(struct collector *c, const struct sample *s, uint32_t pid,
			 uint64_t gen, struct fd_census *out);
void fd_census__free(struct fd_census *fc);

/* Delete stacks referenced by no site in `s` for two sweeps in a row.  Count or -errno. */
long collector__gc_stacks(struct collector *c, const struct sample *s);


#endif
