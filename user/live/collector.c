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
	free(s->fds);
	memset(s, 0, sizeof(*s));
}

static int cmp_site_key(const void *a, const void *b)
{
	const struct lt_site_key *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
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
		if (n + count > cap) {
			char *nv;

			cap = (n + count) * 2;
			nv = realloc(v, cap * rec);
			if (!nv) {
				err = -ENOMEM;
				goto out;
			}
			v = nv;
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
	const struct lt_fd_key *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->fd < y->fd ? -1 : x->fd > y->fd;
}

static int read_sites(struct collector *c, struct sample *s)
{
	void *v;
	int err;

	free(s->sites);
	s->sites = NULL;
	s->n_sites = 0;
	err = read_all(c->fds.sites, sizeof(struct lt_site_key), sizeof(struct lt_site_val), &v,
		       &s->n_sites);
	if (err)
		return err;
	s->sites = v;
	qsort(s->sites, s->n_sites, sizeof(*s->sites), cmp_site_key);
	return 0;
}

static int read_fds(struct collector *c, struct sample *s)
{
	void *v;
	int err;

	free(s->fds);
	s->fds = NULL;
	s->n_fds = 0;
	err = read_all(c->fds.fds, sizeof(struct lt_fd_key), sizeof(struct lt_fd_val), &v,
		       &s->n_fds);
	if (err)
		return err;
	s->fds = v;
	qsort(s->fds, s->n_fds, sizeof(*s->fds), cmp_fd_key);
	return 0;
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

	err = read_sites(c, s);
	if (err)
		return err;
	err = read_fds(c, s);
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

static bool fd_is_dead(const void *key, const void *val, const void *ctx)
{
	const struct lt_fd_key *k = key;
	const struct lt_fd_val *v = val;
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
	if (pc->n == pc->cap) {
		size_t cap = pc->cap ? pc->cap * 2 : 64;
		uint64_t *v = realloc(pc->hashes, cap * sizeof(*v));

		if (!v)
			return true;	/* the stack stays until a later sweep */
		pc->hashes = v;
		pc->cap = cap;
	}
	pc->hashes[pc->n++] = k->stack_hash;
	return true;
}

static int cmp_u64(const void *a, const void *b);

long collector__purge_sites(struct collector *c, const struct dead_image *dead, size_t n,
			    const struct sample *live)
{
	struct purge_ctx pc = { .dead = { dead, n } };
	uint64_t *keep = NULL;
	size_t n_keep = 0;
	long removed;

	if (!n)
		return 0;
	removed = sweep(c->fds.sites, sizeof(struct lt_site_key), sizeof(struct lt_site_val),
			site_is_dead_note, &pc);
	/* Stacks are shared by every site with the same frames: keep the ones still used. */
	keep = malloc((live->n_sites + 1) * sizeof(*keep));
	if (keep) {
		for (size_t i = 0; i < live->n_sites; i++)
			if (!is_dead(dead, n, live->sites[i].key.tgid, live->sites[i].key.gen))
				keep[n_keep++] = live->sites[i].key.stack_hash;
		qsort(keep, n_keep, sizeof(*keep), cmp_u64);
		for (size_t i = 0; i < pc.n; i++)
			if (!bsearch(&pc.hashes[i], keep, n_keep, sizeof(*keep), cmp_u64))
				bpf_map_delete_elem(c->fds.stacks, &pc.hashes[i]);
	}
	free(keep);
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
	/*
	 * Delete after the walk: get_next_key from a deleted key starts over from the first,
	 * which would make the walk quadratic.  Unreferenced twice in a row: no site can still
	 * be on its way to use it.  The others are candidates for the next sweep.
	 */
	for (size_t i = 0; i < n_unref;) {
		if (c->gc_candidates && bsearch(&unref[i], c->gc_candidates, c->n_gc_candidates,
						sizeof(*unref), cmp_u64)) {
			if (!bpf_map_delete_elem(c->fds.stacks, &unref[i]))
				removed++;
			unref[i] = unref[--n_unref];
			continue;
		}
		i++;
	}
	qsort(unref, n_unref, sizeof(*unref), cmp_u64);
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

void fd_census__free(struct fd_census *fc)
{
	free(fc->open);
	free(fc->repaired);
	memset(fc, 0, sizeof(*fc));
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

/* Sorted open descriptor numbers of pid. */
static int open_fds(uint32_t pid, int **out, size_t *n)
{
	char path[64];
	struct dirent *de;
	size_t cap = 64, cnt = 0;
	int *v = malloc(cap * sizeof(*v));
	DIR *d;

	if (!v)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/proc/%u/fd", pid);
	d = opendir(path);
	if (!d) {
		free(v);
		return errno == ENOENT ? -ESRCH : -errno;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		if (cnt == cap) {
			int *nv = realloc(v, cap * 2 * sizeof(*v));

			if (!nv)
				break;
			v = nv;
			cap *= 2;
		}
		v[cnt++] = atoi(de->d_name);
	}
	closedir(d);
	qsort(v, cnt, sizeof(*v), cmp_int);
	*out = v;
	*n = cnt;
	return 0;
}

static const char *sock_family(int f)
{
	static const struct { int family; const char *name; } names[] = {
		{ AF_UNIX, "unix" }, { AF_INET, "inet" }, { AF_INET6, "inet6" },
		{ AF_NETLINK, "netlink" }, { AF_PACKET, "packet" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].family == f)
			return names[i].name;
	return "other";
}

static const char *sock_type(int t)
{
	switch (t) {
	case SOCK_STREAM: return "stream";
	case SOCK_DGRAM: return "dgram";
	case SOCK_SEQPACKET: return "seqpacket";
	case SOCK_RAW: return "raw";
	default: return "other";
	}
}

/*
 * Family and type of a socket of another process: a duplicate taken with pidfd_getfd (the
 * target is not touched), asked with getsockopt, and closed.
 */
static void describe_socket(int pidfd, int fd, char *buf, size_t len)
{
	int dup, family = -1, type = -1;
	socklen_t sl = sizeof(int);

	if (pidfd < 0)
		return;
	dup = syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	if (dup < 0)
		return;
	if (!getsockopt(dup, SOL_SOCKET, SO_DOMAIN, &family, &sl)) {
		sl = sizeof(int);
		getsockopt(dup, SOL_SOCKET, SO_TYPE, &type, &sl);
		snprintf(buf, len, "%s %s", sock_family(family), sock_type(type));
	}
	close(dup);
}

/*
 * Is pid on its way out?  The kernel drops a process's memory (statm reads zeros) before it
 * closes its files, so a listing of /proc/PID/fd taken before this check and missing fds
 * is only trusted if the memory is still there.
 */
static bool process_exiting(uint32_t pid)
{
	struct proc_counters pc;

	return procfs__counters(pid, &pc) || pc.vm_bytes == 0;
}

int collector__fd_census(struct collector *c, const struct sample *s, uint32_t pid,
			 uint64_t gen, struct fd_census *out)
{
	size_t n_open = 0, lo = 0, hi = s->n_fds, tracked_open = 0;
	int *open = NULL, pidfd = -1, err;
	bool exiting_checked = false, exiting = false;

	memset(out, 0, sizeof(*out));
	err = open_fds(pid, &open, &n_open);
	if (err)
		return err;
	/* First record of pid. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->fds[mid].key.tgid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < s->n_fds && s->fds[i].key.tgid == pid; i++) {
		const struct raw_fd *r = &s->fds[i];
		char link[128], target[96] = "";
		struct fd_seen *f;
		struct stat st;
		uint64_t *v;
		ssize_t ln;

		if (r->val.gen != gen)
			continue;
		if (!bsearch(&r->key.fd, open, n_open, sizeof(int), cmp_int)) {
			if (!exiting_checked) {
				exiting_checked = true;
				exiting = process_exiting(pid);
			}
			/* An exiting process closes everything: that is not a missed close. */
			if (exiting)
				continue;
			/* Closed without a close we saw: only the one who deletes repairs it. */
			if (bpf_map_delete_elem(c->fds.fds, &r->key))
				continue;
			v = realloc(out->repaired, (out->n_repaired + 1) * sizeof(*v));
			if (v) {
				out->repaired = v;
				v[out->n_repaired++] = r->val.stack_hash;
			}
			continue;
		}
		tracked_open++;
		f = realloc(out->open, (out->n_open + 1) * sizeof(*f));
		if (!f)
			continue;
		out->open = f;
		f = &out->open[out->n_open++];
		memset(f, 0, sizeof(*f));
		f->stack_hash = r->val.stack_hash;
		f->fd = r->key.fd;
		snprintf(link, sizeof(link), "/proc/%u/fd/%d", pid, r->key.fd);
		ln = readlink(link, target, sizeof(target) - 1);
		target[ln > 0 ? ln : 0] = '\0';
		f->type = fdsys__classify(target);
		if (f->type == FD_FILE && !stat(link, &st) && S_ISDIR(st.st_mode))
			f->type = FD_DIR;
		snprintf(f->target, sizeof(f->target), "%s", target);
		if (f->type == FD_SOCKET) {
			if (pidfd < 0)
				pidfd = syscall(SYS_pidfd_open, pid, 0);
			describe_socket(pidfd, r->key.fd, f->target, sizeof(f->target));
		}
	}
	if (pidfd >= 0)
		close(pidfd);
	free(open);
	/* A listing taken while the process closed everything on its way out says nothing. */
	if (exiting || (!exiting_checked && process_exiting(pid))) {
		fd_census__free(out);
		return -ESRCH;
	}
	out->untracked = n_open - tracked_open;
	out->valid = true;
	return 0;
}
