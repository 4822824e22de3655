// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mmap.bpf.c - anonymous memory mappings and brk growth per creating call site (-r mmap).
 *
 * syscall.bpf.c's programs keep the arguments of mmap, munmap, mremap and brk and hand
 * their exits to lt_mmap_exit().  Each anonymous private mapping, and each extension of the
 * break, is a record in `mmaps` (tgid, start) -> (len, site); its site (LT_KIND_MMAP) counts
 * the bytes and mappings still there.  File-backed and shared mappings are only counted.
 *
 * munmap (and a brk shrink, and MAP_FIXED over earlier mappings) may cut any part of any
 * number of records, found without searching the whole map wherever possible (a search walks
 * every bucket of `mmaps`, hundreds of microseconds, and ld.so maps each library's segments
 * with MAP_FIXED):
 *  - the record at the start of the range, when it covers the range;
 *  - nothing at all when, before the call, the range held no anonymous private mapping
 *    (lt_unmap_hint(): ld.so's segments over its file reservation, a file's munmap) or the
 *    image never had a record;
 *  - the records that tile the run of anonymous mappings the range lies in, followed from
 *    the run's start (the hint) record by record;
 *  - brk records, followed down from the topmost (lt_proc.brk_top, each naming the one below).
 * Otherwise (a gap in the tiling: memory mapped before leaktop looked) the overlapping records
 * of the process are collected from the whole map (stats.mmap_scans; at most
 * LT_MMAP_RANGE_MAX, the rest counted as unmatched).  Each is trimmed, split or deleted.  A
 * split adds a mapping to the site, no allocation.  mremap moves the record to the new address
 * and length; the mapping stays charged to the site that made it, whose bytes change by the
 * difference (the records after the first one in the range, which the kernel merged into one
 * mapping, are cut, their bytes moved to the first one's site).
 */
#include "common.bpf.h"

#define MAP_SHARED		0x01
#define MAP_PRIVATE		0x02
#define MAP_TYPE		0x0f
#define MAP_ANONYMOUS		0x20
#define MREMAP_FIXED		2
#define MREMAP_DONTUNMAP	4

extern const volatile __u8 cfg_fd_class[LT_MAX_SYSCALL];	/* bpf/syscall.bpf.c */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, LT_MAX_MMAPS);
	__type(key, struct lt_mmap_key);
	__type(value, struct lt_mmap_val);
} mmaps SEC(".maps");

/* Change a site's live bytes and mappings without counting a map or an unmap. */
static __always_inline void site_adjust(__u32 tgid, const struct lt_mmap_val *v, __s64 bytes,
					__s64 count)
{
	struct lt_site_key sk = { .tgid = tgid, .kind = LT_KIND_MMAP, .gen = v->gen,
				  .stack_hash = v->stack_hash };
	struct lt_site_val *s = bpf_map_lookup_elem(&sites, &sk);

	if (!s)
		return;
	if (bytes)
		__sync_fetch_and_add(&s->outstanding_bytes, bytes);
	if (count)
		__sync_fetch_and_add(&s->outstanding_count, count);
}

/* tgid's lt_proc when v is a record of its current image (whose share it counts in). */
static __always_inline struct lt_proc *rec_owner(__u32 tgid, const struct lt_mmap_val *v)
{
	struct lt_proc *p = bpf_map_lookup_elem(&procs, &tgid);

	return p && p->gen == v->gen ? p : NULL;
}

/*
 * The record v (its site unchanged) starts at `start`, a new record or the one there: false
 * if it could not be kept (over the image's share of `mmaps`, or the map is full: counted).
 */
static __always_inline bool rec_put(__u32 tgid, __u64 start, const struct lt_mmap_val *v)
{
	struct lt_mmap_key k = { .tgid = tgid, .start = start };
	struct lt_proc *p;
	long err;

	if (!bpf_map_update_elem(&mmaps, &k, v, BPF_EXIST))
		return true;
	p = rec_owner(tgid, v);
	if (!share_take(p, LT_SHARE_MMAP, tgid))
		return false;
	err = bpf_map_update_elem(&mmaps, &k, v, BPF_NOEXIST);
	if (!err)
		return true;
	share_put(p, LT_SHARE_MMAP);
	if (err == -EEXIST && !bpf_map_update_elem(&mmaps, &k, v, BPF_EXIST))
		return true;
	share_lost(p, LT_SHARE_MMAP, LT_DROP_MMAP_MAP_FULL);
	return false;
}

static __always_inline void rec_delete(__u32 tgid, __u64 start, const struct lt_mmap_val *v)
{
	struct lt_mmap_key k = { .tgid = tgid, .start = start };

	if (!bpf_map_delete_elem(&mmaps, &k))
		share_put(rec_owner(tgid, v), LT_SHARE_MMAP);
}

/* The whole record v at start is unmapped: one unmap at its site. */
static __always_inline void rec_release(__u32 tgid, __u64 start, const struct lt_mmap_val *v)
{
	rec_delete(tgid, start, v);
	site_sub(tgid, v->gen, v->stack_hash, LT_KIND_MMAP, v->len);
}

/*
 * [start, end) is unmapped from tgid's record at s: trim it, split it (a hole in the middle:
 * one more mapping) or delete it.  Global functions here are verified once, not at each call.
 */
__noinline int lt_mmap_cut(__u32 tgid, __u64 s, __u64 start, __u64 end)
{
	struct lt_mmap_key k = { .tgid = tgid, .start = s };
	struct lt_mmap_val *p = bpf_map_lookup_elem(&mmaps, &k);
	struct lt_mmap_val v, tail;
	__u64 e, lo, hi;

	if (!p)
		return 0;
	v = *p;
	tail = v;
	e = s + v.len;
	lo = start > s ? start : s;
	hi = end < e ? end : e;
	if (lo >= hi)
		return 0;
	if (lo == s && hi == e) {
		rec_release(tgid, s, &v);
		return 0;
	}
	site_adjust(tgid, &v, -(__s64)(hi - lo), 0);
	if (hi < e) {
		/* What lies after the hole is a record of its own. */
		tail.len = e - hi;
		if (!rec_put(tgid, hi, &tail))
			site_adjust(tgid, &v, -(__s64)tail.len, 0);
		else if (lo > s)
			site_adjust(tgid, &v, 0, 1);
	}
	if (lo > s) {
		v.len = lo - s;
		rec_put(tgid, s, &v);
	} else {
		rec_delete(tgid, s, &v);
	}
	return 0;
}

/* On the stack: bpf_for_each_map_elem wants its context there. */
struct overlap_buf {
	__u64 start[LT_MMAP_RANGE_MAX];
	__u64 lo, hi;
	__u32 tgid;
	__u32 n;
	__u32 more;
};

/* bpf_for_each_map_elem callback: this process's records that overlap [lo, hi). */
static long collect_overlaps(struct bpf_map *map, struct lt_mmap_key *k, struct lt_mmap_val *v,
			     struct overlap_buf *ob)
{
	__u32 n = ob->n;

	if (k->tgid != ob->tgid || k->start >= ob->hi || k->start + v->len <= ob->lo)
		return 0;
	if (n >= LT_MMAP_RANGE_MAX) {
		ob->more = 1;
		return 1;
	}
	ob->start[n] = k->start;
	ob->n = n + 1;
	return 0;
}

/* Is [lo, hi) of v's kind that may hold records (anonymous and private)? */
static __always_inline bool anon_private(const struct lt_vma *v)
{
	return !v->file && !(v->flags & VM_SHARED);
}

#define HINT_VMAS	4	/* mappings a hint looks at each way */

/*
 * Before the call: the mappings in [lo, hi).  None anonymous and private: no record can be
 * there (LT_UNMAP_HINT_NONE).  One run of adjacent anonymous ones: its records tile it from
 * its start (an mprotect splits a mapping's record over several: the run goes back through
 * them).  Anything else, a hole, or more mappings than HINT_VMAS: LT_UNMAP_HINT_SCAN.
 */
__noinline int lt_unmap_hint(struct lt_sysargs *a, __u64 lo, __u64 hi)
{
	__u64 at = lo, run_start = 0, run_end = 0;
	struct lt_vma v;

	if (!a)
		return 0;
	a->hint = LT_UNMAP_HINT_SCAN;
	for (int i = 0; i < HINT_VMAS && at < hi; i++) {
		if (vma_at(at, &v))
			return 0;		/* a hole (or the lock is taken): search */
		if (anon_private(&v)) {
			if (run_end && run_end != v.start)
				return 0;	/* a second run */
			if (!run_end)
				run_start = v.start;
			run_end = v.end;
		}
		at = v.end;
	}
	if (at < hi)
		return 0;
	if (!run_end) {
		a->hint = LT_UNMAP_HINT_NONE;
		return 0;
	}
	for (int i = 0; i < HINT_VMAS; i++) {
		if (vma_at(run_start - 1, &v) || !anon_private(&v) || v.end != run_start)
			break;
		run_start = v.start;
	}
	a->hint = run_start;
	a->hint_end = run_end;
	return 0;
}

/*
 * Follow the records that tile [s, stop) from s, cutting [start, end) out of each; false if
 * the tiling has a gap (a record not there) before the range is covered.
 */
static __always_inline bool unmap_tiled(__u32 tgid, __u64 s, __u64 stop, __u64 start, __u64 end)
{
	if (end < stop)
		stop = end;
	for (int i = 0; i < LT_MMAP_CHAIN_MAX; i++) {
		struct lt_mmap_key k = { .tgid = tgid, .start = s };
		struct lt_mmap_val *r;
		__u64 e;

		if (s >= stop)
			return true;
		r = bpf_map_lookup_elem(&mmaps, &k);
		if (!r)
			return false;
		e = s + r->len;
		if (e > start)
			lt_mmap_cut(tgid, s, start, end);
		s = e;
	}
	return s >= stop;
}

/* Collect tgid's records overlapping [start, end) from the whole map, and cut each. */
static __always_inline void unmap_search(__u32 tgid, __u64 start, __u64 end)
{
	struct overlap_buf ob = {};

	bump(&counters, LT_CNT_MMAP_SCANS);
	ob.tgid = tgid;
	ob.lo = start;
	ob.hi = end;
	bpf_for_each_map_elem(&mmaps, collect_overlaps, &ob, 0);
	for (__u32 i = 0; i < LT_MMAP_RANGE_MAX; i++) {
		if (i >= ob.n)
			break;
		lt_mmap_cut(tgid, ob.start[i], start, end);
	}
	if (ob.more)
		bump(&counters, LT_CNT_MMAP_UNMATCHED);
}

/* [start, start + len) of tgid is no longer mapped; hint and hint_end from lt_unmap_hint(). */
__noinline int lt_mmap_unmap(__u32 tgid, __u64 start, __u64 len, __u64 hint, __u64 hint_end)
{
	struct lt_mmap_key k = { .tgid = tgid, .start = start };
	struct lt_mmap_val *v = bpf_map_lookup_elem(&mmaps, &k);
	struct lt_proc *p;
	__u64 end = start + len;

	if (!len)
		return 0;
	if (v && v->len >= len)		/* the common cases: a whole mapping, or its prefix */
		return lt_mmap_cut(tgid, start, start, end);
	if (hint == LT_UNMAP_HINT_NONE)
		return 0;
	p = bpf_map_lookup_elem(&procs, &tgid);
	if (p && !p->has_mmaps)
		return 0;
	if (hint != LT_UNMAP_HINT_SCAN && unmap_tiled(tgid, hint, hint_end, start, end))
		return 0;
	unmap_search(tgid, start, end);
	return 0;
}

/*
 * The break went down from hi to lo: cut the brk records from the topmost down (each names
 * the one below); a record not found on the way falls back to the search.
 */
__noinline int lt_mmap_brk_shrink(__u32 tgid, __u64 lo, __u64 hi)
{
	struct lt_proc *p = bpf_map_lookup_elem(&procs, &tgid);
	__u64 s;

	if (!p || !p->has_mmaps)
		return 0;
	s = p->brk_top;
	for (int i = 0; i < LT_MMAP_CHAIN_MAX; i++) {
		struct lt_mmap_key k = { .tgid = tgid, .start = s };
		struct lt_mmap_val *r;
		__u64 prev;

		if (!s) {
			/* Below the first brk record: nothing of the break was tracked. */
			p->brk_top = 0;
			return 0;
		}
		r = bpf_map_lookup_elem(&mmaps, &k);
		if (!r)
			break;
		prev = r->brk_prev;
		lt_mmap_cut(tgid, s, lo, hi);
		if (s < lo) {
			p->brk_top = s;		/* trimmed, still there: the top now */
			return 0;
		}
		s = prev;
	}
	unmap_search(tgid, lo, hi);
	/* The record reached last is the top if it is still there; else the next one searches. */
	p->brk_top = s;
	return 0;
}

/* A new mapping [start, start + len) made at the caller's site by the syscall a (brk too). */
__noinline int lt_mmap_new(__u32 tgid, const struct lt_sysargs *a, __u64 start, __u64 len,
			   const struct lt_uregs *regs)
{
	struct lt_mmap_val v = { .len = len, .ts_ns = bpf_ktime_get_ns() };
	struct lt_mmap_key k = { .tgid = tgid, .start = start };
	struct lt_mmap_val *old = bpf_map_lookup_elem(&mmaps, &k);
	struct lt_proc *p = bpf_map_lookup_elem(&procs, &tgid);
	struct lt_site_val *s;
	bool brk;

	if (!a || a->nr >= LT_MAX_SYSCALL)
		return 0;
	v.gen = a->gen;
	brk = cfg_fd_class[a->nr] == LT_FDC_BRK;
	/* A record already there went away unseen (say under an mremap we do not track). */
	if (old) {
		struct lt_mmap_val gone = *old;

		rec_release(tgid, start, &gone);
	}
	v.stack_hash = lt_syscall_stack(regs, LT_MMAP_SALT);
	s = site_get(tgid, v.gen, v.stack_hash, LT_KIND_MMAP);
	if (!s)
		return 0;
	if (brk && p)
		v.brk_prev = p->brk_top;
	if (!rec_put(tgid, start, &v))
		return 0;
	if (p) {
		p->has_mmaps = 1;
		if (brk)
			p->brk_top = start;
	}
	site_add(s, len, v.ts_ns);
	return 0;
}

/*
 * mremap(old, old_len, new_len, flags, new_addr) returned ret.  The kernel merges adjacent
 * anonymous mappings into one, so [old, old + old_len) may hold several records: the first
 * (at old) goes on as the one mapping, charged to its site; the records after it are cut
 * (unmapped at their sites), their bytes now the first one's.
 */
static __always_inline void remap(__u32 tgid, const struct lt_sysargs *a, __u64 ret)
{
	__u64 old = a->args[0], old_len = page_up(a->args[1]), new_len = page_up(a->args[2]);
	struct lt_mmap_key k = { .tgid = tgid, .start = old };
	struct lt_mmap_val *p, v, moved;

	/* MREMAP_FIXED: whatever was mapped at the destination is replaced. */
	if (ret != old && (a->args[3] & MREMAP_FIXED))
		lt_mmap_unmap(tgid, ret, new_len, LT_UNMAP_HINT_SCAN, 0);
	p = bpf_map_lookup_elem(&mmaps, &k);
	if (!p)
		return;			/* not an anonymous private mapping leaktop saw made */
	v = *p;
	moved = v;
	moved.len = new_len;
	if (ret == old && new_len <= old_len) {
		/* Shrunk in place (or unchanged): the tail is unmapped. */
		if (new_len < old_len)
			lt_mmap_unmap(tgid, old + new_len, old_len - new_len, old, old + old_len);
		return;
	}
	if (a->args[3] & MREMAP_DONTUNMAP) {
		/* The old range stays mapped (emptied): the new one is one more mapping. */
		if (ret != old && rec_put(tgid, ret, &moved))
			site_adjust(tgid, &v, new_len, 1);
		return;
	}
	if (old_len < v.len) {
		/* A prefix of the mapping moved: the rest stays, the moved part is one more. */
		if (ret == old)
			return;		/* (a prefix cannot grow in place) */
		lt_mmap_unmap(tgid, old, old_len, old, old + old_len);
		if (rec_put(tgid, ret, &moved))
			site_adjust(tgid, &v, new_len, 1);
		return;
	}
	/* The records after the first inside the range: merged into it, cut from their sites. */
	if (old_len > v.len)
		lt_mmap_unmap(tgid, old + v.len, old_len - v.len, old + v.len, old + old_len);
	if (ret == old) {
		/* Grown in place: the first record covers the whole mapping. */
		if (rec_put(tgid, old, &moved))
			site_adjust(tgid, &v, new_len - v.len, 0);
		return;
	}
	rec_delete(tgid, old, &v);
	if (rec_put(tgid, ret, &moved))
		site_adjust(tgid, &v, new_len - v.len, 0);
	else
		site_sub(tgid, v.gen, v.stack_hash, LT_KIND_MMAP, v.len);
}

__noinline int lt_mmap_exit(const struct lt_sysargs *a, long ret, const struct lt_uregs *regs)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u64 flags, len, old_brk;

	if (!a || ret < 0 || a->nr >= LT_MAX_SYSCALL)
		return 0;
	switch (cfg_fd_class[a->nr]) {
	case LT_FDC_MMAP:
		flags = a->args[3];
		len = page_up(a->args[1]);
		/* MAP_FIXED replaces whatever was mapped there. */
		if (flags & LT_MAP_FIXED)
			lt_mmap_unmap(tgid, ret, len, a->hint, a->hint_end);
		if (!(flags & MAP_ANONYMOUS) || (flags & MAP_TYPE) != MAP_PRIVATE) {
			bump(&counters, LT_CNT_MMAP_FILE_OR_SHARED);
			return 0;
		}
		lt_mmap_new(tgid, a, ret, len, regs);
		return 0;
	case LT_FDC_MUNMAP:
		if (ret == 0)
			lt_mmap_unmap(tgid, a->args[0], page_up(a->args[1]), a->hint, a->hint_end);
		return 0;
	case LT_FDC_MREMAP:
		remap(tgid, a, ret);
		return 0;
	case LT_FDC_BRK:
		old_brk = a->args[1];
		if ((__u64)ret > old_brk && old_brk)
			lt_mmap_new(tgid, a, old_brk, ret - old_brk, regs);
		else if ((__u64)ret < old_brk)
			lt_mmap_brk_shrink(tgid, ret, old_brk);
		return 0;
	default:
		return 0;
	}
}
