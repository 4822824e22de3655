// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mmap.bpf.c - anonymous memory mappings and brk growth per creating call site (-r mmap).
 *
 * fd.bpf.c's syscall tracepoints keep the arguments of mmap, munmap, mremap and brk and hand
 * their exits to lt_mmap_exit().  Each anonymous private mapping, and each extension of the
 * break, is a record in `mmaps` (tgid, start) -> (len, site); its site (LT_KIND_MMAP) counts
 * the bytes and mappings still there.  File-backed and shared mappings are only counted.
 *
 * munmap (and a brk shrink, and MAP_FIXED over earlier mappings) may cut any part of any
 * number of records: the record at the start of the range is handled directly, anything else
 * by collecting the overlapping records of the process (at most LT_MMAP_RANGE_MAX, the rest
 * counted as unmatched) and trimming, splitting or deleting each.  A split adds a mapping to
 * the site, no allocation.  mremap moves the record to the new address and length; the
 * mapping stays charged to the site that made it, whose bytes change by the difference.
 */
#include "common.bpf.h"

#define PAGE_MASK_		4095ULL
#define MAP_SHARED		0x01
#define MAP_PRIVATE		0x02
#define MAP_TYPE		0x0f
#define MAP_FIXED		0x10
#define MAP_ANONYMOUS		0x20
#define MREMAP_FIXED		2
#define MREMAP_DONTUNMAP	4

extern const volatile __u8 cfg_fd_class[LT_MAX_SYSCALL];	/* bpf/fd.bpf.c */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, LT_MAX_MMAPS);
	__type(key, struct lt_mmap_key);
	__type(value, struct lt_mmap_val);
} mmaps SEC(".maps");

static __always_inline __u64 page_up(__u64 len)
{
	return (len + PAGE_MASK_) & ~PAGE_MASK_;
}

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

/* The record v (its site unchanged) now starts at `start`: false if it could not be kept. */
static __always_inline bool rec_put(__u32 tgid, __u64 start, const struct lt_mmap_val *v)
{
	struct lt_mmap_key k = { .tgid = tgid, .start = start };

	if (!bpf_map_update_elem(&mmaps, &k, v, BPF_ANY))
		return true;
	drop(LT_DROP_MMAP_MAP_FULL);
	return false;
}

static __always_inline void rec_delete(__u32 tgid, __u64 start)
{
	struct lt_mmap_key k = { .tgid = tgid, .start = start };

	bpf_map_delete_elem(&mmaps, &k);
}

/* The whole record v at start is unmapped: one unmap at its site. */
static __always_inline void rec_release(__u32 tgid, __u64 start, const struct lt_mmap_val *v)
{
	rec_delete(tgid, start);
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
		rec_delete(tgid, s);
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

/* [start, start + len) of tgid is no longer mapped. */
__noinline int lt_mmap_unmap(__u32 tgid, __u64 start, __u64 len)
{
	struct lt_mmap_key k = { .tgid = tgid, .start = start };
	struct lt_mmap_val *v = bpf_map_lookup_elem(&mmaps, &k);
	struct overlap_buf ob = {};
	__u64 end = start + len;

	if (!len)
		return 0;
	if (v && v->len >= len)		/* the common cases: a whole mapping, or its prefix */
		return lt_mmap_cut(tgid, start, start, end);
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
	return 0;
}

/* A new mapping [start, start + len) of image gen made at the caller's site. */
__noinline int lt_mmap_new(__u32 tgid, __u64 gen, __u64 start, __u64 len, __u64 regs)
{
	struct lt_mmap_val v = { .len = len, .gen = gen, .ts_ns = bpf_ktime_get_ns() };
	struct lt_mmap_key k = { .tgid = tgid, .start = start };
	struct lt_mmap_val *old = bpf_map_lookup_elem(&mmaps, &k);
	struct lt_site_val *s;

	/* A record already there went away unseen (say under an mremap we do not track). */
	if (old) {
		struct lt_mmap_val gone = *old;

		rec_release(tgid, start, &gone);
	}
	v.stack_hash = lt_syscall_stack(regs, LT_MMAP_SALT);
	s = site_get(tgid, v.gen, v.stack_hash, LT_KIND_MMAP);
	if (!s)
		return 0;
	if (!rec_put(tgid, start, &v))
		return 0;
	site_add(s, len, v.ts_ns);
	return 0;
}

/* mremap(old, old_len, new_len, flags, new_addr) returned ret. */
static __always_inline void remap(__u32 tgid, const struct lt_sysargs *a, __u64 ret)
{
	__u64 old = a->args[0], old_len = page_up(a->args[1]), new_len = page_up(a->args[2]);
	struct lt_mmap_key k = { .tgid = tgid, .start = old };
	struct lt_mmap_val *p, v, moved;

	/* MREMAP_FIXED: whatever was mapped at the destination is replaced. */
	if (ret != old && (a->args[3] & MREMAP_FIXED))
		lt_mmap_unmap(tgid, ret, new_len);
	p = bpf_map_lookup_elem(&mmaps, &k);
	if (!p)
		return;			/* not an anonymous private mapping leaktop saw made */
	v = *p;
	moved = v;
	moved.len = new_len;
	if (ret == old) {
		/* Resized in place: shrinking unmaps the tail, growing extends the record. */
		if (new_len < old_len)
			lt_mmap_unmap(tgid, old + new_len, old_len - new_len);
		else if (new_len > old_len && old_len >= v.len && rec_put(tgid, old, &moved))
			site_adjust(tgid, &v, new_len - v.len, 0);
		return;
	}
	if (a->args[3] & MREMAP_DONTUNMAP) {
		/* The old range stays mapped (emptied): the new one is one more mapping. */
		if (rec_put(tgid, ret, &moved))
			site_adjust(tgid, &v, new_len, 1);
		return;
	}
	if (old_len >= v.len) {
		rec_delete(tgid, old);
		if (rec_put(tgid, ret, &moved))
			site_adjust(tgid, &v, new_len - v.len, 0);
		else
			site_sub(tgid, v.gen, v.stack_hash, LT_KIND_MMAP, v.len);
		return;
	}
	/* A prefix of the mapping moved: the rest stays, the moved part is one more. */
	lt_mmap_unmap(tgid, old, old_len);
	if (rec_put(tgid, ret, &moved))
		site_adjust(tgid, &v, new_len, 1);
}

__noinline int lt_mmap_exit(const struct lt_sysargs *a, long ret, __u64 regs)
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
		if (flags & MAP_FIXED)
			lt_mmap_unmap(tgid, ret, len);
		if (!(flags & MAP_ANONYMOUS) || (flags & MAP_TYPE) != MAP_PRIVATE) {
			bump(&counters, LT_CNT_MMAP_FILE_OR_SHARED);
			return 0;
		}
		lt_mmap_new(tgid, a->gen, ret, len, regs);
		return 0;
	case LT_FDC_MUNMAP:
		if (ret == 0)
			lt_mmap_unmap(tgid, a->args[0], page_up(a->args[1]));
		return 0;
	case LT_FDC_MREMAP:
		remap(tgid, a, ret);
		return 0;
	case LT_FDC_BRK:
		old_brk = a->args[1];
		if ((__u64)ret > old_brk && old_brk)
			lt_mmap_new(tgid, a->gen, old_brk, ret - old_brk, regs);
		else if ((__u64)ret < old_brk)
			lt_mmap_unmap(tgid, ret, old_brk - ret);
		return 0;
	default:
		return 0;
	}
}
