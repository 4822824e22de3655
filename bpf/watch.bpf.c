// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * watch.bpf.c - `leaktop lastref`: what happens at a watched place of the one process it
 * follows.
 *
 * Userspace (user/live/watch.c) opens hardware breakpoints as perf events on the process's
 * threads and attaches lt_watch to each: write watchpoints on the words that hold a pointer
 * into a followed block, execute breakpoints on the return address of a frame that holds
 * one.  A write that leaves the word pointing into its block (or anything the process's
 * children inherited) is no news; anything else is an event on `watch_events` with the user
 * stack of the moment.  The allocator's free probe (bpf/heap.bpf.c) asks lt_watch_freed
 * whether a freed block is one userspace follows (a block, or a block holding a pointer to
 * one) and reports that too.  Only reads the target's memory.
 */
#include "common.bpf.h"
#include "watch.h"

/* The followed process (0: none); set by userspace before it arms anything. */
__u32 watch_tgid;
/* Events lost since watching began (watch_events full): read by userspace. */
__u64 watch_lost;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LT_WATCH_MAX_SLOTS);
	__type(key, __u64);
	__type(value, struct lt_watch_slot);
} watch_slots SEC(".maps");

/* Blocks of the followed process whose free is reported: address -> 1. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LT_WATCH_MAX_FREES);
	__type(key, __u64);
	__type(value, __u32);
} watch_frees SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, LT_WATCH_RINGBUF_BYTES);
} watch_events SEC(".maps");

/* Send an event with the user stack walked from (ip, sp, bp). */
static __always_inline void watch_send(__u32 type, __u64 addr, __u64 value, __u64 ip, __u64 sp,
				       __u64 bp)
{
	struct lt_walk w = { .ip = ip, .bp = bp, .floor = sp, .depth = LT_WATCH_FRAMES };
	struct lt_stack *st = stack_buf();
	struct lt_watch_event *ev;
	__u32 n = 0;

	if (st)
		n = lt_walk_user_stack(&w, st);
	ev = bpf_ringbuf_reserve(&watch_events, sizeof(*ev), 0);
	if (!ev) {
		/* Counted twice: in stats.drops, and for lastref to know its blocks missed one. */
		drop(LT_DROP_WATCH_RINGBUF_FULL);
		__sync_fetch_and_add(&watch_lost, 1);
		return;
	}
	ev->type = type;
	ev->tid = (__u32)bpf_get_current_pid_tgid();
	ev->addr = addr;
	ev->value = value;
	ev->ip = ip;
	ev->sp = sp;
	ev->ts_ns = bpf_ktime_get_ns();
	ev->pad = 0;
	if (n > LT_WATCH_FRAMES)
		n = LT_WATCH_FRAMES;
	ev->nr = n;
	if (st && n)
		__builtin_memcpy(ev->ips, st->ips, sizeof(ev->ips));
	else
		ev->ips[0] = ip;
	if (!n)
		ev->nr = 1;
	bpf_ringbuf_submit(ev, 0);
}

SEC("perf_event")
int lt_watch(struct bpf_perf_event_data *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u64 addr = ctx->addr, value = 0, ip, sp, bp;
	struct lt_watch_slot *s;

	ip = ctx->regs.ip;
	sp = ctx->regs.sp;
	bp = ctx->regs.bp;
	if (!watch_tgid || tgid != watch_tgid)
		return 0;
	s = bpf_map_lookup_elem(&watch_slots, &addr);
	if (!s)
		return 0;
	if (s->kind == LT_WATCH_WRITE) {
		bpf_probe_read_user(&value, sizeof(value), (void *)addr);
		if (value >= s->lo && value < s->hi)
			return 0;
		watch_send(LT_WEV_WRITE, addr, value, ip, sp, bp);
	} else if (s->kind == LT_WATCH_RETURN && sp >= s->lo) {
		watch_send(LT_WEV_RETURN, addr, 0, ip, sp, bp);
	}
	return 0;
}

/*
 * Called by the free probe for each block it takes off its site (user registers at the
 * free's entry): report it when userspace follows it.  A global function: verified once.
 */
int lt_watch_freed(__u32 tgid, __u64 addr, __u64 ip, __u64 sp, __u64 bp)
{
	if (!watch_tgid || tgid != watch_tgid)
		return 0;
	if (!bpf_map_lookup_elem(&watch_frees, &addr))
		return 0;
	watch_send(LT_WEV_FREE, addr, 0, ip, sp, bp);
	return 0;
}
