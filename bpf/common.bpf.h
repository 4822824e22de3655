/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * common.bpf.h - what every leaktop BPF file shares: the maps more than one concern uses
 * (defined once, in proc.bpf.c, and linked by `bpftool gen object`), the settings, and small
 * helpers: counters and drops, the traced image of a process, user stack capture and
 * interning, and per-site accounting.
 */
#ifndef LEAKTOP_COMMON_BPF_H
#define LEAKTOP_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "leaktop.h"

#define EEXIST 17		/* errno values returned by the map helpers */

/* Settings, fixed before load by the loader (defined in proc.bpf.c). */
extern const volatile __u32 cfg_filter;
extern const volatile __u32 cfg_self_tgid;
extern const volatile __u32 cfg_follow_fork;
extern const volatile __u32 cfg_stack_depth;

struct lt_procs_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LT_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct lt_proc);
};

struct lt_sites_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, LT_MAX_SITES);
	__type(key, struct lt_site_key);
	__type(value, struct lt_site_val);
};

/* Value size is cut to 8 + 8 * stack depth by the loader. */
struct lt_stacks_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, LT_MAX_STACKS);
	__type(key, __u64);
	__type(value, struct lt_stack);
};

struct lt_percpu_u64_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LT_DROP__COUNT > LT_CNT__COUNT ? LT_DROP__COUNT : LT_CNT__COUNT);
	__type(key, __u32);
	__type(value, __u64);
};

struct lt_gen_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
};

struct lt_scratch_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lt_stack);
};

struct lt_events_map {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, LT_RINGBUF_BYTES);
};

extern struct lt_procs_map procs SEC(".maps");
extern struct lt_sites_map sites SEC(".maps");
extern struct lt_stacks_map stacks SEC(".maps");
extern struct lt_percpu_u64_map drops SEC(".maps");	/* enum lt_drop */
extern struct lt_percpu_u64_map counters SEC(".maps");	/* enum lt_counter */
/* Slot 0: the last image generation handed out (userspace seeds it above its own). */
extern struct lt_gen_map gen_counter SEC(".maps");
extern struct lt_scratch_map stack_scratch SEC(".maps");
extern struct lt_events_map events SEC(".maps");

static __always_inline void bump(void *map, __u32 idx)
{
	__u64 *c = bpf_map_lookup_elem(map, &idx);

	if (c)
		(*c)++;
}

static __always_inline void drop(__u32 cause)
{
	bump(&drops, cause);
}

static __always_inline __u64 next_gen(void)
{
	__u32 zero = 0;
	__u64 *g = bpf_map_lookup_elem(&gen_counter, &zero);

	if (!g)
		return 0;
	return __sync_fetch_and_add(g, 1) + 1;
}

/* Start a lifecycle event; fill what else it carries, then bpf_ringbuf_submit(). */
static __always_inline struct lt_event *event_begin(__u32 type, __u32 tgid, __u32 ppid,
						    __u64 old_gen, __u64 new_gen)
{
	struct lt_event *ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);

	if (!ev) {
		drop(LT_DROP_RINGBUF_FULL);
		return NULL;
	}
	ev->type = type;
	ev->tgid = tgid;
	ev->ppid = ppid;
	ev->pad = 0;
	ev->old_gen = old_gen;
	ev->new_gen = new_gen;
	ev->ts_ns = bpf_ktime_get_ns();
	ev->start_code = 0;
	ev->end_code = 0;
	ev->exe[0] = '\0';
	return ev;
}

static __always_inline void emit(__u32 type, __u32 tgid, __u32 ppid, __u64 old_gen, __u64 new_gen)
{
	struct lt_event *ev = event_begin(type, tgid, ppid, old_gen, new_gen);

	if (ev)
		bpf_ringbuf_submit(ev, 0);
}

/*
 * Is tgid leaktop's own process?  Then count the hit in `counter` (the caller returns at
 * once).  leaktop's allocator is linked into its executable, so in whole-system mode its
 * allocator calls never reach the libc probes: LT_CNT_SELF_HITS stays 0, and a test reads it.
 */
static __always_inline bool is_self(__u32 tgid, __u32 counter)
{
	if (tgid != cfg_self_tgid)
		return false;
	bump(&counters, counter);
	return true;
}

/* The traced image of tgid, created on first sight in whole-system mode. */
static __always_inline struct lt_proc *proc_of(__u32 tgid)
{
	struct lt_proc *p = bpf_map_lookup_elem(&procs, &tgid);
	struct lt_proc np = {};
	long err;

	if (p || cfg_filter != LT_FILTER_ALL || tgid == cfg_self_tgid)
		return p;
	np.gen = next_gen();
	np.start_ns = bpf_ktime_get_ns();
	err = bpf_map_update_elem(&procs, &tgid, &np, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		drop(LT_DROP_PROC_MAP_FULL);
		return NULL;
	}
	if (!err)
		emit(LT_EV_FIRST, tgid, 0, 0, np.gen);
	return bpf_map_lookup_elem(&procs, &tgid);
}

/* FNV-1a over the frames. */
static __always_inline __u64 stack_hash_of(const struct lt_stack *st, __u32 nr)
{
	__u64 h = 0xcbf29ce484222325ULL;

	for (__u32 i = 0; i < LT_MAX_STACK_DEPTH; i++) {
		if (i >= nr)
			break;
		h ^= st->ips[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/*
 * Walk the user stack by frame pointers.  At a return probe the registers are the caller's:
 * the IP is the allocating call site and %rbp the caller's frame.  Unlike the kernel's walker
 * this stops at the end of the chain (a null, misaligned or non-ascending frame pointer)
 * instead of faulting on it, which costs more than the whole walk.
 */
static __always_inline __u32 walk_user_stack(__u64 ip, __u64 bp, struct lt_stack *st,
					     __u32 depth)
{
	struct {
		__u64 next;
		__u64 ret;
	} frame;
	__u64 prev = 0;
	__u32 n = 1;

	st->ips[0] = ip;
	for (__u32 i = 1; i < LT_MAX_STACK_DEPTH; i++) {
		if (i >= depth || !bp || (bp & 7) || bp <= prev)
			break;
		if (bpf_probe_read_user(&frame, sizeof(frame), (void *)bp) || !frame.ret)
			break;
		st->ips[i] = frame.ret;
		n = i + 1;
		prev = bp;
		bp = frame.next;
	}
	return n;
}

static __always_inline __u32 stack_depth(void)
{
	__u32 depth = cfg_stack_depth;

	return depth < 1 || depth > LT_MAX_STACK_DEPTH ? LT_DEFAULT_STACK_DEPTH : depth;
}

static __always_inline struct lt_stack *stack_buf(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&stack_scratch, &zero);
}

/* Intern the stack in st (st->nr frames) in `stacks`: its hash, or 0 when it is not kept. */
static __always_inline __u64 intern_stack(struct lt_stack *st, __u64 salt)
{
	long err;
	__u64 h;

	h = stack_hash_of(st, st->nr) ^ salt;
	h = h ? h : 1;
	if (bpf_map_lookup_elem(&stacks, &h))
		return h;
	err = bpf_map_update_elem(&stacks, &h, st, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		drop(LT_DROP_STACK_MAP_FULL);
		return 0;
	}
	return h;
}

/* Capture the user stack at a return probe (caller's registers) and intern it. */
static __always_inline __u64 capture_stack(struct pt_regs *ctx)
{
	struct lt_stack *st = stack_buf();

	if (!st)
		return 0;
	st->nr = walk_user_stack(PT_REGS_IP(ctx), PT_REGS_FP(ctx), st, stack_depth());
	return intern_stack(st, 0);
}

/* The site (tgid, gen, stack) of a kind, created on first use; NULL when the map is full. */
static __always_inline struct lt_site_val *site_get(__u32 tgid, __u64 gen, __u64 hash, __u32 kind)
{
	struct lt_site_key sk = { .tgid = tgid, .kind = kind, .gen = gen, .stack_hash = hash };
	struct lt_site_val zero = {};
	struct lt_site_val *s = bpf_map_lookup_elem(&sites, &sk);

	if (s)
		return s;
	bpf_map_update_elem(&sites, &sk, &zero, BPF_NOEXIST);
	s = bpf_map_lookup_elem(&sites, &sk);
	if (!s)
		drop(LT_DROP_SITE_MAP_FULL);
	return s;
}

/* A new live resource of `bytes` at site s. */
static __always_inline void site_add(struct lt_site_val *s, __u64 bytes, __u64 now)
{
	if (__sync_fetch_and_add(&s->outstanding_count, 1) == 0)
		s->live_since_ns = now;
	if (bytes) {
		__sync_fetch_and_add(&s->outstanding_bytes, bytes);
		__sync_fetch_and_add(&s->alloc_bytes, bytes);
	}
	__sync_fetch_and_add(&s->allocs, 1);
	s->last_alloc_ns = now;
}

/* A live resource of `bytes` charged to site (tgid, gen, stack) is gone. */
static __always_inline void site_sub(__u32 tgid, __u64 gen, __u64 hash, __u32 kind, __u64 bytes)
{
	struct lt_site_key sk = { .tgid = tgid, .kind = kind, .gen = gen, .stack_hash = hash };
	struct lt_site_val *s = bpf_map_lookup_elem(&sites, &sk);

	if (!s)
		return;
	if (bytes)
		__sync_fetch_and_add(&s->outstanding_bytes, -(__s64)bytes);
	__sync_fetch_and_add(&s->outstanding_count, -1);
	__sync_fetch_and_add(&s->frees, 1);
}

#endif /* LEAKTOP_COMMON_BPF_H */
