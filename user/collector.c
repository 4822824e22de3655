// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * collector.c - reads the kernel's per-site aggregates each interval, and keeps the maps tidy.
 *
 * The work per interval is one batched read of `sites` (O(sites), not O(live blocks)) and
 * two per-CPU arrays.  Records of processes that exited or exec'd are removed here: their
 * sites at once, their live blocks by a batched sweep of `allocs` that runs only when some
 * image died.  Stacks no site references any more are deleted after two sweeps.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collector.h"

#define BATCH 4096

struct collector {
	struct lt_map_fds fds;
	unsigned int depth;
	int ncpus;
	uint64_t *percpu;		/* scratch for per-CPU array values */
	struct lt_stack *stack_buf;	/* value of the stacks map (8 + 8 * depth bytes) */
	uint64_t *gc_candidates;	/* unreferenced at the previous sweep, sorted */
	size_t n_gc_candidates;
};

uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int collector__new(struct collector **out, const struct lt_map_fds *fds, unsigned int depth)
{
	struct collector *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->fds = *fds;
	c->depth = depth;
	c->ncpus = libbpf_num_possible_cpus();
	if (c->ncpus <= 0)
		c->ncpus = sysconf(_SC_NPROCESSORS_CONF);
	c->percpu = calloc(c->ncpus, sizeof(uint64_t));
	c->stack_buf = calloc(1, sizeof(struct lt_stack));
	if (!c->percpu || !c->stack_buf) {
		collector__free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

void collector__free(struct collector *c)
{
	if (!c)
		return;
	free(c->percpu);
	free(c->stack_buf);
	free(c->gc_candidates);
	free(c);
}

void sample__free(struct sample *s)
{
	free(s->sites);
	memset(s, 0, sizeof(*s));
}

static int cmp_site_key(const void *a, const void *b)
{
	const struct lt_site_key *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	if (x->gen != y->gen)
		return x->gen < y->gen ? -1 : 1;
	if (x->stack_hash != y->stack_hash)
		return x->stack_hash < y->stack_hash ? -1 : 1;
	return 0;
}

static int sum_percpu(struct collector *c, int fd, uint32_t n, uint64_t *out)
{
	for (uint32_t i = 0; i < n; i++) {
		uint64_t sum = 0;

		if (bpf_map_lookup_elem(fd, &i, c->percpu))
			return -errno;
		for (int cpu = 0; cpu < c->ncpus; cpu++)
			sum += c->percpu[cpu];
		out[i] = sum;
	}
	return 0;
}

/* Batched read of the whole sites map into s->sites. */
static int read_sites(struct collector *c, struct sample *s)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	struct lt_site_key *keys = malloc(BATCH * sizeof(*keys));
	struct lt_site_val *vals = malloc(BATCH * sizeof(*vals));
	struct lt_site_key in_batch, out_batch;
	size_t cap = 0, n = 0;
	bool first = true;
	int err = 0;

	free(s->sites);
	s->sites = NULL;
	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	for (;;) {
		__u32 count = BATCH;
		int ret = bpf_map_lookup_batch(c->fds.sites, first ? NULL : &in_batch, &out_batch,
					       keys, vals, &count, &opts);

		if (ret && errno != ENOENT) {
			err = -errno;
			goto out;
		}
		if (n + count > cap) {
			struct raw_site *v;

			cap = (n + count) * 2;
			v = realloc(s->sites, cap * sizeof(*v));
			if (!v) {
				err = -ENOMEM;
				goto out;
			}
			s->sites = v;
		}
		for (__u32 i = 0; i < count; i++) {
			s->sites[n].key = keys[i];
			s->sites[n].val = vals[i];
			n++;
		}
		if (ret)	/* ENOENT: that was the last batch */
			break;
		in_batch = out_batch;
		first = false;
	}
	qsort(s->sites, n, sizeof(*s->sites), cmp_site_key);
	s->n_sites = n;
out:
	free(keys);
	free(vals);
	return err;
}

/* Runs the kernel skipped (another BPF program was running on the CPU): lost events. */
static uint64_t recursion_misses(struct collector *c)
{
	uint64_t sum = 0;

	for (int i = 0; i < c->fds.n_progs; i++) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (!bpf_obj_get_info_by_fd(c->fds.progs[i], &info, &len))
			sum += info.recursion_misses;
	}
	return sum;
}

int collector__read(struct collector *c, struct sample *s)
{
	uint64_t t0 = monotonic_ns();
	int err;

	s->n_sites = 0;
	err = read_sites(c, s);
	if (err)
		return err;
	err = sum_percpu(c, c->fds.drops, LT_DROP__COUNT, s->drops);
	if (err)
		return err;
	err = sum_percpu(c, c->fds.counters, LT_CNT__COUNT, s->counters);
	if (err)
		return err;
	s->drops[LT_DROP_BPF_RECURSION] = recursion_misses(c);
	s->ts_ns = monotonic_ns();
	s->read_ms = (s->ts_ns - t0) / 1e6;
	return 0;
}

uint32_t collector__stack(struct collector *c, uint64_t hash, uint64_t *ips, uint32_t max)
{
	uint32_t nr;

	if (!hash || bpf_map_lookup_elem(c->fds.stacks, &hash, c->stack_buf))
		return 0;
	nr = c->stack_buf->nr;
	if (nr > c->depth)
		nr = c->depth;
	if (nr > max)
		nr = max;
	memcpy(ips, c->stack_buf->ips, nr * sizeof(*ips));
	return nr;
}

static bool is_dead(const struct dead_image *dead, size_t n, uint32_t tgid, uint64_t gen)
{
	for (size_t i = 0; i < n; i++)
		if (dead[i].tgid == tgid && dead[i].gen == gen)
			return true;
	return false;
}

/* Batched sweep of one hash map, deleting the keys `doomed` selects. */
static long sweep(int fd, size_t key_size, size_t val_size,
		  bool (*doomed)(const void *key, const void *val, const void *ctx),
		  const void *ctx)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	char *keys = malloc(BATCH * key_size), *vals = malloc(BATCH * val_size);
	char *del = malloc(BATCH * key_size);
	char in_batch[32], out_batch[32];
	bool first = true;
	long removed = 0;

	if (!keys || !vals || !del) {
		removed = -ENOMEM;
		goto out;
	}
	for (;;) {
		__u32 count = BATCH, n_del = 0;
		int ret = bpf_map_lookup_batch(fd, first ? NULL : in_batch, out_batch, keys,
					       vals, &count, &opts);

		if (ret && errno != ENOENT) {
			removed = -errno;
			goto out;
		}
		for (__u32 i = 0; i < count; i++)
			if (doomed(keys + i * key_size, vals + i * val_size, ctx))
				memcpy(del + n_del++ * key_size, keys + i * key_size, key_size);
		/*
		 * One syscall per batch.  A key a racing free already removed stops the batch
		 * with ENOENT after `done` keys: skip it and go on with the rest.
		 */
		for (__u32 at = 0; at < n_del;) {
			__u32 done = n_del - at;
			int r = bpf_map_delete_batch(fd, del + at * key_size, &done, &opts);

			removed += done;
			at += done;
			if (r && errno == ENOENT)
				at++;
			else if (r)
				break;
		}
		if (ret)
			break;
		memcpy(in_batch, out_batch, sizeof(in_batch));
		first = false;
	}
out:
	free(keys);
	free(vals);
	free(del);
	return removed;
}

struct dead_set {
	const struct dead_image *v;
	size_t n;
};

static bool alloc_is_dead(const void *key, const void *val, const void *ctx)
{
	const struct lt_alloc_key *k = key;
	const struct lt_alloc_val *v = val;
	const struct dead_set *d = ctx;

	return is_dead(d->v, d->n, k->tgid, v->gen);
}

static bool site_is_dead(const void *key, const void *val, const void *ctx)
{
	const struct lt_site_key *k = key;
	const struct dead_set *d = ctx;

	return is_dead(d->v, d->n, k->tgid, k->gen);
}

long collector__purge_sites(struct collector *c, const struct dead_image *dead, size_t n)
{
	struct dead_set d = { dead, n };

	if (!n)
		return 0;
	return sweep(c->fds.sites, sizeof(struct lt_site_key), sizeof(struct lt_site_val),
		     site_is_dead, &d);
}

long collector__purge_allocs(struct collector *c, const struct dead_image *dead, size_t n)
{
	struct dead_set d = { dead, n };

	if (!n)
		return 0;
	return sweep(c->fds.allocs, sizeof(struct lt_alloc_key), sizeof(struct lt_alloc_val),
		     alloc_is_dead, &d);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

long collector__gc_stacks(struct collector *c, const struct sample *s)
{
	uint64_t *live = malloc((s->n_sites + 1) * sizeof(*live));
	uint64_t *unref = NULL, key, next;
	size_t n_live = 0, n_unref = 0, cap = 0;
	long removed = 0;
	bool first = true;

	if (!live)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_sites; i++)
		live[n_live++] = s->sites[i].key.stack_hash;
	qsort(live, n_live, sizeof(*live), cmp_u64);
	while (!bpf_map_get_next_key(c->fds.stacks, first ? NULL : &key, &next)) {
		first = false;
		key = next;
		if (bsearch(&key, live, n_live, sizeof(*live), cmp_u64))
			continue;
		/* Unreferenced twice in a row: no site can still be on its way to use it. */
		if (c->gc_candidates && bsearch(&key, c->gc_candidates, c->n_gc_candidates,
						sizeof(key), cmp_u64)) {
			if (!bpf_map_delete_elem(c->fds.stacks, &key))
				removed++;
			continue;
		}
		if (n_unref == cap) {
			uint64_t *v;

			cap = cap ? cap * 2 : 256;
			v = realloc(unref, cap * sizeof(*v));
			if (!v) {
				removed = -ENOMEM;
				break;
			}
			unref = v;
		}
		unref[n_unref++] = key;
	}
	free(live);
	if (removed < 0) {
		free(unref);
		return removed;
	}
	qsort(unref, n_unref, sizeof(*unref), cmp_u64);
	free(c->gc_candidates);
	c->gc_candidates = unref;
	c->n_gc_candidates = n_unref;
	return removed;
}
