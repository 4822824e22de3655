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
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "live/collector.h"
#include "live/fdsys.h"
#include "live/procfs.h"
#include "util/clock.h"
#include "util/vec.h"

#define BATCH 4096

struct collector {
	struct lt_map_fds fds;
	unsigned int depth;
	int ncpus;
	uint64_t *percpu;		/* scratch for per-CPU array values */
	struct lt_stack *stack_buf;	/* value of the stacks map (8 + 24 * depth bytes) */
	uint64_t *gc_candidates;	/* unreferenced at the previous sweep, sorted */
	size_t n_gc_candidates;
};

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

/* Slot idx of a per-CPU array, summed over the CPUs; 0 or -errno. */
static int percpu_sum(struct collector *c, int fd, uint32_t idx, uint64_t *out)
{
	uint64_t sum = 0;

	if (bpf_map_lookup_elem(fd, &idx, c->percpu))
		return -errno;
	for (int cpu = 0; cpu < c->ncpus; cpu++)
		sum += c->percpu[cpu];
	*out = sum;
	return 0;
}

static int sum_percpu(struct collector *c, int fd, uint32_t n, uint64_t *out)
{
	for (uint32_t i = 0; i < n; i++) {
		int err = percpu_sum(c, fd, i, &out[i]);

		if (err)
			return err;
	}
	return 0;
}

int collector__counter(struct collector *c, uint32_t idx, uint64_t *out)
{
	return idx < LT_CNT__COUNT ? percpu_sum(c, c->fds.counters, idx, out) : -EINVAL;
}

/*
 * Batched read of a whole hash map: *out gets n records of key_size + val_size bytes each
 * (key then value), malloc'd.  0 or -errno.
 */
static int read_all(int fd, size_t key_size, size_t val_size, void **out, size_t *n_out)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	char *keys = malloc(BATCH * key_size), *vals = malloc(BATCH * val_size), *v = NULL;
	char in_batch[32], out_batch[32];
	size_t rec = key_size + val_size, cap = 0, n = 0;
	bool first = true;
	int err = 0;

	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	for (;;) {
		__u32 count = BATCH;
		int ret = bpf_map_lookup_batch(fd, first ? NULL : in_batch, out_batch, keys, vals,
					       &count, &opts);

		if (ret && errno != ENOENT) {
			err = -errno;
			goto out;
		}
		if (vec__reserve(&v, &cap, n + count, rec, BATCH, false)) {
			err = -ENOMEM;
			goto out;
		}
		for (__u32 i = 0; i < count; i++, n++) {
			memcpy(v + n * rec, keys + i * key_size, key_size);
			memcpy(v + n * rec + key_size, vals + i * val_size, val_size);
		}
		if (ret)	/* ENOENT: that was the last batch */
			break;
		memcpy(in_batch, out_batch, sizeof(in_batch));
		first = false;
	}
out:
	free(keys);
	free(vals);
	if (err) {
		free(v);
		return err;
	}
	*out = v;
	*n_out = n;
	return 0;
}

int collector__read_allocs(struct collector *c, uint32_t tgid, uint64_t gen,
			   struct raw_alloc **out, size_t *n)
{
	struct raw_alloc *v;
	size_t all, kept = 0;
	void *raw;
	int err;

	err = read_all(c->fds.allocs, sizeof(struct lt_alloc_key), sizeof(struct lt_alloc_val),
		       &raw, &all);
	if (err)
		return err;
	v = raw;
	for (size_t i = 0; i < all; i++)
		if (v[i].key.tgid == tgid && (!gen || v[i].val.gen == gen))
			v[kept++] = v[i];
	*out = v;
	*n = kept;
	return 0;
}

static int cmp_fd_key(const void *a, const void *b)
{
	const struct sample_fd *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->fd < y->fd ? -1 : x->fd > y->fd;
}

struct raw_site {
	struct lt_site_key key;
	struct lt_site_val val;
};

struct raw_fd {
	struct lt_fd_key key;
	struct lt_fd_val val;
};

static int read_sites(struct collector *c, struct sample *s)
{
	struct raw_site *raw;
	size_t n;
	void *v;
	int err;

	free(s->sites);
	s->sites = NULL;
	s->n_sites = 0;
	err = read_all(c->fds.sites, sizeof(struct lt_site_key), sizeof(struct lt_site_val), &v,
		       &n);
	if (err)
		return err;
	raw = v;
	s->sites = malloc((n + 1) * sizeof(*s->sites));
	if (!s->sites) {
		free(raw);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		s->sites[i] = (struct sample_site){
			.pid = raw[i].key.tgid,
			.kind = raw[i].key.kind,
			.gen = raw[i].key.gen,
			.stack_hash = raw[i].key.stack_hash,
			.outstanding_bytes = raw[i].val.outstanding_bytes,
			.outstanding_count = raw[i].val.outstanding_count,
			.allocs = raw[i].val.allocs,
			.frees = raw[i].val.frees,
			.alloc_bytes = raw[i].val.alloc_bytes,
			.live_since_ns = raw[i].val.live_since_ns,
			.last_alloc_ns = raw[i].val.last_alloc_ns,
		};
	free(raw);
	s->n_sites = n;
	qsort(s->sites, s->n_sites, sizeof(*s->sites), sample_site__cmp);
	return 0;
}

static int read_fds(struct collector *c, struct sample *s)
{
	struct raw_fd *raw;
	size_t n;
	void *v;
	int err;

	free(s->fds);
	s->fds = NULL;
	s->n_fds = 0;
	err = read_all(c->fds.fds, sizeof(struct lt_fd_key), sizeof(struct lt_fd_val), &v, &n);
	if (err)
		return err;
	raw = v;
	s->fds = malloc((n + 1) * sizeof(*s->fds));
	if (!s->fds) {
		free(raw);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		s->fds[i] = (struct sample_fd){
			.pid = raw[i].key.tgid,
			.fd = raw[i].key.fd,
			.gen = raw[i].val.gen,
			.stack_hash = raw[i].val.stack_hash,
			.ts_ns = raw[i].val.ts_ns,
		};
	free(raw);
	s->n_fds = n;
	qsort(s->fds, s->n_fds, sizeof(*s->fds), cmp_fd_key);
	return 0;
}

int collector__forget_fd(struct collector *c, const struct sample_fd *seen)
{
	struct lt_fd_key key = { .tgid = seen->pid, .fd = seen->fd };
	struct lt_fd_val v;
	struct sample_fd now;

	if (bpf_map_lookup_elem(c->fds.fds, &key, &v))
		return -errno;
	now = (struct sample_fd){ .pid = seen->pid, .fd = seen->fd, .gen = v.gen,
				  .stack_hash = v.stack_hash, .ts_ns = v.ts_ns };
	if (!sample_fd__same_record(seen, &now))
		return -ESTALE;
	/*
	 * Not atomic with the lookup: a close and a reopen of this number in the few
	 * microseconds between the two would still lose the new record.  Closing and then
	 * reopening it once, between the census's listing and here, the common case, is safe.
	 */
	return bpf_map_delete_elem(c->fds.fds, &key) ? -errno : 0;
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

/* Each image's allocator probe entries, for its cost, and the records it lost. */
static int read_calls(struct collector *c, struct sample *s)
{
	/* read_all packs key and value: a 4-byte key puts the value off its alignment. */
	const size_t rec = sizeof(__u32) + sizeof(struct lt_proc);
	char *raw;
	size_t n;
	void *v;
	int err;

	free(s->calls);
	s->calls = NULL;
	s->n_calls = 0;
	err = read_all(c->fds.procs, sizeof(__u32), sizeof(struct lt_proc), &v, &n);
	if (err)
		return err;
	raw = v;
	s->calls = malloc((n + 1) * sizeof(*s->calls));
	if (!s->calls) {
		free(raw);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		struct lt_proc p;
		__u32 tgid;

		memcpy(&tgid, raw + i * rec, sizeof(tgid));
		memcpy(&p, raw + i * rec + sizeof(tgid), sizeof(p));
		bool lost = false;

		for (int k = 0; k < LT_SHARE__COUNT; k++)
			lost |= p.share_drops[k] != 0;
		if (!p.heap_calls && !lost)
			continue;
		s->calls[s->n_calls] = (struct sample_calls){
			.pid = tgid, .gen = p.gen, .heap_calls = p.heap_calls };
		memcpy(s->calls[s->n_calls].share_drops, p.share_drops, sizeof(p.share_drops));
		s->n_calls++;
	}
	free(raw);
	return 0;
}

int collector__read(struct collector *c, struct sample *s)
{
	uint64_t t0 = monotonic_ns();
	int err;

	err = read_sites(c, s);
	if (err)
		return err;
	err = read_fds(c, s);
	if (err)
		return err;
	err = read_calls(c, s);
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
	s->timing.read_ms = (s->ts_ns - t0) / 1e6;
	return 0;
}

uint32_t collector__stack(struct collector *c, uint64_t hash, uint64_t *ips,
			  struct lt_frame_file *files, uint32_t max)
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
	/* After the run's depth of addresses, one struct lt_frame_file per frame. */
	if (files)
		memcpy(files, &c->stack_buf->w[c->depth], nr * sizeof(*files));
	return nr;
}

int collector__put_stack(struct collector *c, uint64_t hash, const uint64_t *ips,
			 const struct lt_frame_file *files, uint32_t nr)
{
	if (!hash)
		return -EINVAL;
	if (nr > c->depth)
		nr = c->depth;
	memset(c->stack_buf, 0, 8 + 24 * (size_t)c->depth);
	c->stack_buf->nr = nr;
	memcpy(c->stack_buf->ips, ips, nr * sizeof(*ips));
	if (files)
		memcpy(&c->stack_buf->w[c->depth], files, nr * sizeof(*files));
	if (bpf_map_update_elem(c->fds.stacks, &hash, c->stack_buf, BPF_NOEXIST) &&
	    errno != EEXIST)
		return -errno;
	return 0;
}

int collector__proc_gen(struct collector *c, uint32_t tgid, uint64_t *gen, uint64_t *start_ns)
{
	struct lt_proc p;

	if (bpf_map_lookup_elem(c->fds.procs, &tgid, &p))
		return -errno;
	*gen = p.gen;
	*start_ns = p.start_ns;
	return 0;
}

int collector__file_path(struct collector *c, uint32_t dev, uint64_t ino, char *buf,
			 size_t len)
{
	struct lt_unwind_key key = { .ino = ino, .dev = dev };
	struct lt_file_path v;

	if (!len || c->fds.file_paths < 0 || bpf_map_lookup_elem(c->fds.file_paths, &key, &v))
		return -ENOENT;
	v.path[LT_PATH_LEN - 1] = '\0';
	if (!v.path[0])
		return -ENOENT;
	snprintf(buf, len, "%s", v.path);
	return 0;
}

int collector__py_register(struct collector *c, uint32_t tgid, const struct lt_py_proc *py)
{
	if (c->fds.py_procs <= 0)
		return -ENOTSUP;
	return bpf_map_update_elem(c->fds.py_procs, &tgid, py, BPF_ANY) ? -errno : 0;
}

int collector__py_code(struct collector *c, uint32_t tgid, uint64_t code, struct lt_py_code *out)
{
	struct lt_py_code_key key = { .tgid = tgid, .code = code };

	if (c->fds.py_codes <= 0 || bpf_map_lookup_elem(c->fds.py_codes, &key, out))
		return -ENOENT;
	return 0;
}

/* Dead images' Python registrations (an exec'd image's is replaced when found again). */
static void py_forget(struct collector *c, const struct dead_image *dead, size_t n)
{
	struct lt_py_proc py;

	for (size_t i = 0; c->fds.py_procs > 0 && i < n; i++)
		if (!bpf_map_lookup_elem(c->fds.py_procs, &dead[i].tgid, &py) &&
		    py.gen == dead[i].gen)
			bpf_map_delete_elem(c->fds.py_procs, &dead[i].tgid);
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

static bool fd_is_dead(const void *key, const void *val, const void *ctx)
{
	const struct lt_fd_key *k = key;
	const struct lt_fd_val *v = val;
	const struct dead_set *d = ctx;

	return is_dead(d->v, d->n, k->tgid, v->gen);
}

static bool mmap_is_dead(const void *key, const void *val, const void *ctx)
{
	const struct lt_mmap_key *k = key;
	const struct lt_mmap_val *v = val;
	const struct dead_set *d = ctx;

	return is_dead(d->v, d->n, k->tgid, v->gen);
}

struct purge_ctx {
	struct dead_set dead;
	uint64_t *hashes;		/* stacks of the sites removed */
	size_t n, cap;
};

static bool site_is_dead_note(const void *key, const void *val, const void *ctx)
{
	const struct lt_site_key *k = key;
	struct purge_ctx *pc = (struct purge_ctx *)ctx;

	if (!is_dead(pc->dead.v, pc->dead.n, k->tgid, k->gen))
		return false;
	if (VEC_RESERVE(pc->hashes, pc->cap, pc->n + 1, 64))
		return true;	/* the stack stays until a later sweep */
	pc->hashes[pc->n++] = k->stack_hash;
	return true;
}

static int cmp_u64(const void *a, const void *b);

/*
 * Delete the stacks hashes[0..n) (sorted; changed) that no site uses.  A BPF program may be
 * making a site on one of them right now, so each is deleted first and the sites map read
 * next: the stacks a site uses then are put back.  A site made after that read finds its
 * stack gone and puts it back itself (keep_stack() in bpf/common.bpf.h).  Number deleted.
 */
static long delete_stacks(struct collector *c, uint64_t *hashes, size_t n)
{
	size_t vsz = 8 + 24 * (size_t)c->depth, n_sites = 0, n_del = 0, n_used = 0;
	struct {
		struct lt_site_key key;
		struct lt_site_val val;
	} *sites = NULL;
	uint64_t *used = NULL;
	char *saved;
	long removed = 0;

	if (!n)
		return 0;
	saved = malloc(n * vsz);
	if (!saved)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (i && hashes[i] == hashes[i - 1])
			continue;
		if (bpf_map_lookup_elem(c->fds.stacks, &hashes[i], saved + n_del * vsz) ||
		    bpf_map_delete_elem(c->fds.stacks, &hashes[i]))
			continue;
		hashes[n_del++] = hashes[i];
	}
	if (read_all(c->fds.sites, sizeof(sites->key), sizeof(sites->val), (void **)&sites,
		     &n_sites) == 0)
		used = malloc((n_sites + 1) * sizeof(*used));
	if (used) {
		for (size_t i = 0; i < n_sites; i++)
			used[n_used++] = sites[i].key.stack_hash;
		qsort(used, n_used, sizeof(*used), cmp_u64);
	}
	for (size_t i = 0; i < n_del; i++) {
		/* Unsure which are used (no memory to read the sites): put every one back. */
		if (!used || bsearch(&hashes[i], used, n_used, sizeof(*used), cmp_u64))
			bpf_map_update_elem(c->fds.stacks, &hashes[i], saved + i * vsz, BPF_NOEXIST);
		else
			removed++;
	}
	free(used);
	free(sites);
	free(saved);
	return removed;
}

long collector__purge_sites(struct collector *c, const struct dead_image *dead, size_t n)
{
	struct purge_ctx pc = { .dead = { dead, n } };
	long removed;

	if (!n)
		return 0;
	py_forget(c, dead, n);
	removed = sweep(c->fds.sites, sizeof(struct lt_site_key), sizeof(struct lt_site_val),
			site_is_dead_note, &pc);
	/* Stacks are shared by every site with the same frames: delete the unused ones. */
	if (pc.n) {
		qsort(pc.hashes, pc.n, sizeof(*pc.hashes), cmp_u64);
		delete_stacks(c, pc.hashes, pc.n);
	}
	free(pc.hashes);
	return removed;
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

/* Heap records and sites removed of one live image, for its share (share_purges). */
struct purged_image {
	struct lt_share_purge v;
	uint32_t tgid;
};

/* A set of tgids (sorted) and whether the heap records of those in it or of the others go. */
struct heap_purge {
	struct purge_ctx pc;
	const uint32_t *tgids;
	size_t n;
	bool keep;
	struct purged_image *images;	/* what went, per image */
	size_t n_images, cap_images;
};

/* The count of image (tgid, gen) in hp (a new one if there is room; NULL if not). */
static struct purged_image *purged_of(struct heap_purge *hp, uint32_t tgid, uint64_t gen)
{
	for (size_t i = hp->n_images; i-- > 0;)
		if (hp->images[i].tgid == tgid && hp->images[i].v.gen == gen)
			return &hp->images[i];
	if (VEC_RESERVE(hp->images, hp->cap_images, hp->n_images + 1, 64))
		return NULL;
	hp->images[hp->n_images] = (struct purged_image){ .tgid = tgid, .v.gen = gen };
	return &hp->images[hp->n_images++];
}

/*
 * Tell BPF what each live image lost of its records here (added to what it lost before), so
 * its share of the maps counts only what it holds.  The newest image of a pid wins (gens
 * only grow).
 */
static void note_purged(struct collector *c, const struct heap_purge *hp)
{
	for (size_t i = 0; i < hp->n_images; i++) {
		const struct purged_image *im = &hp->images[i];
		struct lt_share_purge v;

		if (bpf_map_lookup_elem(c->fds.share_purges, &im->tgid, &v) || v.gen < im->v.gen) {
			v = im->v;
		} else if (v.gen == im->v.gen) {
			v.heap += im->v.heap;
			v.sites += im->v.sites;
		} else {
			continue;	/* an older image's: its share is not counted any more */
		}
		bpf_map_update_elem(c->fds.share_purges, &im->tgid, &v, BPF_ANY);
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static bool heap_tgid_goes(const struct heap_purge *hp, uint32_t tgid)
{
	bool in = hp->n && bsearch(&tgid, hp->tgids, hp->n, sizeof(tgid), cmp_u32);

	return in != hp->keep;
}

static bool heap_site_goes(const void *key, const void *val, const void *ctx)
{
	const struct lt_site_key *k = key;
	struct heap_purge *hp = (struct heap_purge *)ctx;
	struct purged_image *im;

	if (k->kind != LT_KIND_HEAP || !heap_tgid_goes(hp, k->tgid))
		return false;
	im = purged_of(hp, k->tgid, k->gen);
	if (im)
		im->v.sites++;
	if (VEC_RESERVE(hp->pc.hashes, hp->pc.cap, hp->pc.n + 1, 64))
		return true;	/* the stack stays until a later sweep */
	hp->pc.hashes[hp->pc.n++] = k->stack_hash;
	return true;
}

static bool heap_alloc_goes(const void *key, const void *val, const void *ctx)
{
	const struct lt_alloc_key *k = key;
	const struct lt_alloc_val *v = val;
	struct heap_purge *hp = (struct heap_purge *)ctx;
	struct purged_image *im;

	if (!heap_tgid_goes(hp, k->tgid))
		return false;
	im = purged_of(hp, k->tgid, v->gen);
	if (im)
		im->v.heap++;
	return true;
}

long collector__purge_heap(struct collector *c, const uint32_t *tgids, size_t n, bool keep)
{
	struct heap_purge hp = { .n = n, .keep = keep };
	uint32_t *sorted = NULL;
	long removed;

	if (n) {
		sorted = malloc(n * sizeof(*sorted));
		if (!sorted)
			return -ENOMEM;
		memcpy(sorted, tgids, n * sizeof(*sorted));
		qsort(sorted, n, sizeof(*sorted), cmp_u32);
	}
	hp.tgids = sorted;
	removed = sweep(c->fds.sites, sizeof(struct lt_site_key), sizeof(struct lt_site_val),
			heap_site_goes, &hp);
	if (hp.pc.n) {
		qsort(hp.pc.hashes, hp.pc.n, sizeof(*hp.pc.hashes), cmp_u64);
		delete_stacks(c, hp.pc.hashes, hp.pc.n);
	}
	free(hp.pc.hashes);
	if (removed >= 0)
		sweep(c->fds.allocs, sizeof(struct lt_alloc_key), sizeof(struct lt_alloc_val),
		      heap_alloc_goes, &hp);
	note_purged(c, &hp);
	free(hp.images);
	free(sorted);
	return removed;
}

long collector__gc_stacks(struct collector *c, const struct sample *s)
{
	uint64_t *live = malloc((s->n_sites + 1) * sizeof(*live));
	uint64_t *unref = NULL, *doomed, key, next;
	size_t n_live = 0, n_unref = 0, cap = 0, n_doomed = 0, n_keep = 0;
	long removed = 0;
	bool first = true;

	if (!live)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_sites; i++)
		live[n_live++] = s->sites[i].stack_hash;
	qsort(live, n_live, sizeof(*live), cmp_u64);
	while (!bpf_map_get_next_key(c->fds.stacks, first ? NULL : &key, &next)) {
		first = false;
		key = next;
		if (bsearch(&key, live, n_live, sizeof(*live), cmp_u64))
			continue;
		if (VEC_RESERVE(unref, cap, n_unref + 1, 256)) {
			removed = -ENOMEM;
			break;
		}
		unref[n_unref++] = key;
	}
	free(live);
	doomed = removed < 0 ? NULL : malloc((n_unref + 1) * sizeof(*doomed));
	if (!doomed) {
		free(unref);
		return removed < 0 ? removed : -ENOMEM;
	}
	/*
	 * Delete after the walk: get_next_key from a deleted key starts over from the first,
	 * which would make the walk quadratic.  Unreferenced twice in a row: deleted, unless a
	 * site uses it by the time of the deletion (see delete_stacks).  The others are
	 * candidates for the next sweep.
	 */
	qsort(unref, n_unref, sizeof(*unref), cmp_u64);
	for (size_t i = 0; i < n_unref; i++) {
		if (c->gc_candidates && bsearch(&unref[i], c->gc_candidates, c->n_gc_candidates,
						sizeof(*unref), cmp_u64))
			doomed[n_doomed++] = unref[i];
		else
			unref[n_keep++] = unref[i];
	}
	n_unref = n_keep;
	removed = delete_stacks(c, doomed, n_doomed);
	free(doomed);
	free(c->gc_candidates);
	c->gc_candidates = unref;
	c->n_gc_candidates = n_unref;
	return removed;
}

long collector__purge_fds(struct collector *c, const struct dead_image *dead, size_t n)
{
	struct dead_set d = { dead, n };

	if (!n)
		return 0;
	return sweep(c->fds.fds, sizeof(struct lt_fd_key), sizeof(struct lt_fd_val), fd_is_dead,
		     &d);
}

long collector__purge_mmaps(struct collector *c, const struct dead_image *dead, size_t n)
{
	struct dead_set d = { dead, n };

	if (!n || c->fds.mmaps < 0)
		return 0;
	return sweep(c->fds.mmaps, sizeof(struct lt_mmap_key), sizeof(struct lt_mmap_val),
		     mmap_is_dead, &d);
}
