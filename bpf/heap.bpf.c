// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * heap.bpf.c - the allocator probes: outstanding heap blocks per call site, in the kernel.
 *
 * Counting happens here, per call site, so userspace reads O(sites) each interval whatever
 * the number of live blocks:
 *   - entry probes remember the request of a thread's outermost allocator call in its task
 *     storage (nested calls, e.g. realloc(NULL, n) tail-calling malloc, only bump a depth);
 *   - return probes capture the user stack (at the return the registers are the caller's, so
 *     the first frame is the allocating call site), record the block in `allocs` and add it
 *     to its site;
 *   - free's probe removes the block and subtracts it from the site it was charged to.
 * Every loss increments a `drops` slot; nothing is lost silently.
 */
#include "common.bpf.h"

/* `leaktop lastref`: is a freed block one it follows? (bpf/watch.bpf.c) */
extern int lt_watch_freed(__u32 tgid, __u64 addr, __u64 ip, __u64 sp, __u64 bp);

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, LT_MAX_ALLOCS);
	__type(key, struct lt_alloc_key);
	__type(value, struct lt_alloc_val);
} allocs SEC(".maps");

/* Per-thread allocator call state: lives and dies with the thread, no insert per call. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct lt_inflight);
} inflight SEC(".maps");

/* --stop-at (bpf/leaktop.h): written by userspace, `fired` by the program that stops. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lt_stop_cfg);
} stop_cfg SEC(".maps");

#define LT_SIGSTOP 19

/*
 * Set by userspace (through the skeleton's memory-mapped .bss) as soon as the run decides to
 * end: --stop-at no longer fires, so no process is stopped while nobody will say so.
 */
__u32 stop_disarmed;

/* Where --stop-at stopped a process (written once, before the signal): userspace reads it
 * whether or not it got the event, e.g. for a stop during its teardown. */
struct lt_stop_info stop_info;
__u32 stop_tgid;

/* The --stop-at settings while they may still fire, else NULL. */
static __always_inline struct lt_stop_cfg *stop_armed(void)
{
	__u32 zero = 0;
	struct lt_stop_cfg *c;

	if (stop_disarmed)
		return NULL;
	c = bpf_map_lookup_elem(&stop_cfg, &zero);
	return c && c->armed && !c->fired ? c : NULL;
}

/*
 * Is site s (stack hash, its frames still in the scratch buffer) --stop-at's?  Decided on
 * its first allocation seen while armed, and kept in the site (1 yes, 2 no).
 */
static __always_inline bool stop_site(struct lt_stop_cfg *c, struct lt_site_val *s, __u64 hash)
{
	if (!s->stop_match) {
		if (c->stack_hash)
			s->stop_match = hash == c->stack_hash ? 1 : 2;
		else
			s->stop_match = lt_stack_has_fn(c) ? 1 : 2;
	}
	return s->stop_match == 1;
}

/*
 * Stop the calling process here (it stops on its way back to user mode) and say so, once.
 * The event is reserved first and the signal sent only with it in hand: with the ring buffer
 * full (the loss counted) nothing is stopped and `fired` stays 0; `missed` says so, and a
 * matching site's next allocation past N tries again.
 */
static __always_inline void stop_here(struct lt_stop_cfg *c, __u32 tgid, __u64 addr,
				      const struct lt_alloc_val *av)
{
	struct lt_event *ev;

	ev = event_begin(LT_EV_STOP_AT, tgid, 0, av->gen, av->gen);
	if (!ev) {
		c->missed = 1;
		return;
	}
	if (__sync_val_compare_and_swap(&c->fired, 0, 1) != 0) {
		bpf_ringbuf_discard(ev, 0);
		return;
	}
	stop_info.gen = av->gen;
	stop_info.addr = addr;
	stop_info.size_bytes = av->size_bytes;
	stop_info.seq = av->seq;
	stop_info.stack_hash = av->stack_hash;
	stop_info.tid = (__u32)bpf_get_current_pid_tgid();
	stop_info.pad = 0;
	stop_tgid = tgid;
	ev->stop = stop_info;
	bpf_send_signal(LT_SIGSTOP);
	bpf_ringbuf_submit(ev, 0);
}

/*
 * Take the live block (tgid, addr) off its site, and out of the share of p (tgid's lt_proc,
 * NULL: looked up here) when it is the image's.  Returns true if leaktop knew it.
 */
static __always_inline bool release(__u32 tgid, __u64 addr, struct lt_proc *p)
{
	struct lt_alloc_key ak = { .tgid = tgid, .addr = addr };
	struct lt_alloc_val *a = bpf_map_lookup_elem(&allocs, &ak);
	struct lt_alloc_val v;

	if (!a)
		return false;
	v = *a;
	/* Only the deleter accounts the free, so racing frees of one block count once. */
	if (bpf_map_delete_elem(&allocs, &ak))
		return false;
	site_sub(tgid, v.gen, v.stack_hash, LT_KIND_HEAP, v.size_bytes);
	if (!p)
		p = bpf_map_lookup_elem(&procs, &tgid);
	if (p && p->gen == v.gen)
		share_put(p, LT_SHARE_HEAP);
	return true;
}

/*
 * A probe hit in a process leaktop does not trace.  Only -p and -- trace some processes: in
 * whole-system mode an untraced process is one the procs map had no room for (a drop).
 */
static __always_inline void bystander_hit(void)
{
	if (cfg_filter != LT_FILTER_ALL)
		bump(&counters, LT_CNT_BYSTANDER_HITS);
}

/*
 * realloc's entry: take its old block's record out of `allocs` into the thread's call state
 * (the thread owns the address until realloc frees it inside libc, so the record is
 * certainly the block's).  Its site keeps the block until the call returns.
 */
static __always_inline void hold_old(struct lt_inflight *cur, __u32 tgid, __u64 addr,
				     struct lt_proc *p)
{
	struct lt_alloc_key ak = { .tgid = tgid, .addr = addr };
	struct lt_alloc_val *a = bpf_map_lookup_elem(&allocs, &ak);

	cur->old_held = 0;
	if (!a)
		return;
	cur->old = *a;
	/* Only the deleter owns the record, so a racing free of the block counts once. */
	if (bpf_map_delete_elem(&allocs, &ak))
		return;
	cur->old_held = 1;
	/* Out of the map: out of the share (old_kept takes it again). */
	if (cur->old.gen == p->gen)
		share_put(p, LT_SHARE_HEAP);
}

/* realloc freed its old block (held since its entry): take it off its site. */
static __always_inline void old_freed(__u32 tgid, const struct lt_inflight *in)
{
	site_sub(tgid, in->old.gen, in->old.stack_hash, LT_KIND_HEAP, in->old.size_bytes);
	bump(&counters, LT_CNT_EVENTS);
}

/*
 * realloc failed and its old block lives on: put its record back.  Should that fail (the
 * map is full), the block is untracked from now on: off its site, and counted as a drop.
 */
static __always_inline void old_kept(__u32 tgid, __u64 addr, const struct lt_inflight *in)
{
	struct lt_alloc_key ak = { .tgid = tgid, .addr = addr };
	long err = bpf_map_update_elem(&allocs, &ak, &in->old, BPF_NOEXIST);
	struct lt_proc *p;

	if (!err) {
		/* Back in the map (a rare path: the lookup is affordable). */
		p = bpf_map_lookup_elem(&procs, &tgid);
		if (p && p->gen == in->old.gen)
			__sync_fetch_and_add(&p->share_held[LT_SHARE_HEAP], 1);
		return;
	}
	site_sub(tgid, in->old.gen, in->old.stack_hash, LT_KIND_HEAP, in->old.size_bytes);
	if (err != -EEXIST)
		drop(LT_DROP_ALLOC_MAP_FULL);
}

/*
 * Record a new live block at the current call site: true when it is in `allocs` (holding the
 * share record its call took at entry).
 */
static __always_inline bool record(struct pt_regs *ctx, const struct lt_inflight *in,
				   __u32 tgid, __u64 addr)
{
	struct lt_alloc_key ak = { .tgid = tgid, .addr = addr };
	struct lt_alloc_val av = { .size_bytes = in->size_bytes, .gen = in->gen };
	__u64 gen = in->gen, size = in->size_bytes;
	struct lt_stop_cfg *stop = stop_armed();
	struct lt_site_val *s;
	__u64 now = bpf_ktime_get_ns();
	bool stop_match = false;
	long err;

	av.stack_hash = capture_stack(ctx, in->alloc_text_start, in->alloc_text_end);
	s = site_get(tgid, gen, av.stack_hash, LT_KIND_HEAP);
	if (!s)
		return false;
	if (stop)
		stop_match = stop_site(stop, s, av.stack_hash);
	av.ts_ns = now;
	/* Numbered even if it cannot be recorded (a full map, counted): the allocation was. */
	av.seq = site_take_seq(s);
	err = bpf_map_update_elem(&allocs, &ak, &av, BPF_NOEXIST);
	if (err == -EEXIST) {
		struct lt_alloc_val *old = bpf_map_lookup_elem(&allocs, &ak);

		/*
		 * The address is live again without a free we saw: retire the old record, unless
		 * it belongs to an image that exec'd away (its numbers are final).
		 */
		if (old && old->gen == gen)
			release(tgid, addr, NULL);
		err = bpf_map_update_elem(&allocs, &ak, &av, BPF_ANY);
	}
	if (err) {
		share_lost(bpf_map_lookup_elem(&procs, &tgid), LT_SHARE_HEAP,
			   LT_DROP_ALLOC_MAP_FULL);
		return false;
	}
	site_add_live(s, size, now);
	bump(&counters, LT_CNT_EVENTS);
	/* At N, or (the event had no room at N) the first one after it. */
	if (stop_match && (av.seq == stop->seq || (stop->missed && av.seq > stop->seq)))
		stop_here(stop, tgid, addr, &av);
	return true;
}

/*
 * The image's first allocator call: note the executable mapping the probe at ip is in (its
 * libc's code), where the return addresses of most stacks' outer frames lie.
 */
static __always_inline void learn_alloc_text(struct lt_proc *p, __u64 ip)
{
	struct lt_vma v;

	if (vma_at(ip, &v) || !(v.flags & VM_EXEC) || !v.file)
		return;
	p->alloc_text_start = v.start;
	p->alloc_text_end = v.end;
}

static __always_inline struct lt_inflight *thread_state(void)
{
	struct task_struct *task = bpf_get_current_task_btf();

	return bpf_task_storage_get(&inflight, task, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
}

/*
 * The switch between system-wide and per-process probes (user/live/loader.c), without a gap
 * nor a call seen twice: the new kind is attached while its entries are off (bits of
 * LT_HEAP_KIND_* in heap_kinds_off), then one store turns the old kind's entries off and the
 * new kind's on, then the old kind is detached and marked gone.  A call's return is taken by
 * the return probe of the kind that took its entry (both kinds' return probes run for a call
 * made while both were attached), or by any once that kind is gone (its return probe will
 * not run).  0 and 0 outside a switch: every attachment runs.
 */
__u32 heap_kinds_off;
__u32 heap_kinds_gone;

static __always_inline __u32 heap_kind(void *ctx)
{
	return bpf_get_attach_cookie(ctx) & LT_COOKIE_PID ? LT_HEAP_KIND_PID : LT_HEAP_KIND_SYSTEM;
}

/* The return of the call cur is in: this probe's (of kind) to account? */
static __always_inline bool return_is_mine(const struct lt_inflight *cur, __u32 kind)
{
	return cur->kind == kind || (heap_kinds_gone & cur->kind);
}

/*
 * The process of leaktop's start-up calibration (user/live/calibrate.c), 0 when none: its
 * probe hits measure the trap alone and are only counted.
 */
__u32 calib_tgid;

/*
 * Hits that cost nothing leaktop should account: its own process, and the calibration's
 * (counted apart).  Every other entry hit is a trap leaktop costs someone: counted for the
 * overhead budget.
 */
static __always_inline bool heap_skip(__u32 tgid, bool entry)
{
	if (tgid == calib_tgid && tgid) {
		bump(&counters, LT_CNT_CALIBRATION_HITS);
		return true;
	}
	if (is_self(tgid, LT_CNT_SELF_HITS))
		return true;
	if (entry)
		bump(&counters, LT_CNT_HEAP_CALLS);
	return false;
}

static __always_inline int alloc_enter(struct pt_regs *ctx, __u32 fn, __u64 size, __u64 arg_ptr,
				       __u32 kind)
{
	__u64 sp = PT_REGS_SP(ctx), ip = PT_REGS_IP(ctx), ra = 0;
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct lt_inflight *cur;
	struct lt_proc *p;

	/* Load them now: clang would otherwise keep ctx + offset, which the verifier refuses. */
	barrier_var(sp);
	barrier_var(ip);
	if (heap_kinds_off & kind)
		return 0;
	if (heap_skip(tgid, true))
		return 0;
	p = proc_of(tgid);
	if (!p) {
		bystander_hit();
		return 0;
	}
	__sync_fetch_and_add(&p->heap_calls, 1);
	if (!p->alloc_text_end)
		learn_alloc_text(p, ip);
	cur = thread_state();
	if (!cur) {
		drop(LT_DROP_INFLIGHT_FULL);
		return 0;
	}
	bpf_probe_read_user(&ra, sizeof(ra), (void *)sp);
	if (cur->active) {
		/*
		 * Inside an allocator call of this thread: deeper on its stack, or at the same
		 * depth for a tail call (glibc's realloc(NULL, n) jumps to malloc), where the
		 * return address is the kernel's return-probe trampoline by now, not the one
		 * the caller pushed.  Count the outer call only.
		 */
		if (sp < cur->entry_sp || (sp == cur->entry_sp && ra != cur->entry_ra)) {
			cur->depth++;
			bump(&counters, LT_CNT_NESTED);
			return 0;
		}
		/*
		 * A new call where the outer one was: it returned without its return probe.  A
		 * realloc's old block is taken as freed: realloc rarely fails.
		 */
		drop(LT_DROP_LOST_RETURN);
		if (cur->old_held)
			old_freed(tgid, cur);
		if (cur->share == LT_INFL_SHARE_HELD && cur->gen == p->gen)
			share_put(p, LT_SHARE_HEAP);
	}
	cur->size_bytes = size;
	cur->arg_ptr = arg_ptr;
	cur->gen = p->gen;
	cur->entry_sp = sp;
	cur->entry_ra = ra;
	cur->alloc_text_start = p->alloc_text_start;
	cur->alloc_text_end = p->alloc_text_end;
	cur->fn = fn;
	cur->kind = kind;
	cur->depth = 0;
	cur->old_held = 0;
	if ((fn == LT_FN_REALLOC || fn == LT_FN_REALLOCARRAY) && arg_ptr)
		hold_old(cur, tgid, arg_ptr, p);
	/*
	 * The record the block will need, taken from the image's share now (the return has no
	 * lt_proc at hand): over the share, the block is not recorded, counted against it.
	 */
	cur->share = share_take(p, LT_SHARE_HEAP, tgid) ? LT_INFL_SHARE_HELD :
							   LT_INFL_SHARE_REFUSED;
	cur->active = 1;
	return 0;
}

static __always_inline int alloc_exit(struct pt_regs *ctx, __u64 ret, __u32 kind)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct lt_inflight *cur, in;
	__u64 addr = ret;

	if (heap_skip(tgid, false))
		return 0;
	cur = bpf_task_storage_get(&inflight, bpf_get_current_task_btf(), NULL, 0);
	if (!cur || !cur->active || !return_is_mine(cur, kind))
		return 0;
	if (cur->depth) {
		cur->depth--;
		return 0;
	}
	in = *cur;
	cur->active = 0;
	/* An allocation since the last free: the same address freed again is a new free. */
	cur->free_ptr = 0;

	switch (in.fn) {
	case LT_FN_POSIX_MEMALIGN:
		/* Returns 0 on success; the block comes back through the out-pointer. */
		addr = 0;
		if (ret == 0 && in.arg_ptr)
			bpf_probe_read_user(&addr, sizeof(addr), (void *)in.arg_ptr);
		break;
	case LT_FN_REALLOC:
	case LT_FN_REALLOCARRAY:
		/*
		 * realloc(p, n) frees p whenever it succeeds (moved or not) and, as glibc
		 * defines realloc(p, 0), when n is 0 (it frees p and returns NULL).  A failed
		 * realloc leaves p alive.  p's record was taken out at the entry (hold_old):
		 * by now `allocs` may hold another thread's new block at p.
		 */
		if (!in.old_held)
			break;
		if (ret || in.size_bytes == 0)
			old_freed(tgid, &in);
		else
			old_kept(tgid, in.arg_ptr, &in);
		break;
	default:
		break;
	}
	if (!addr) {
		/* realloc(p, 0) returning NULL is a free, not a failure. */
		if (in.size_bytes || (in.fn != LT_FN_REALLOC && in.fn != LT_FN_REALLOCARRAY))
			bump(&counters, LT_CNT_FAILED_ALLOCS);
	} else if (in.share == LT_INFL_SHARE_HELD && record(ctx, &in, tgid, addr)) {
		return 0;
	}
	/* Not recorded: give the share record back (rare: a failure or a full map). */
	if (in.share == LT_INFL_SHARE_HELD) {
		struct lt_proc *p = bpf_map_lookup_elem(&procs, &tgid);

		if (p && p->gen == in.gen)
			share_put(p, LT_SHARE_HEAP);
	}
	return 0;
}

/* n * m, saturated so an overflowing request is never mistaken for a 0-byte one. */
static __always_inline __u64 mul_sat(__u64 n, __u64 m)
{
	__u64 limit;

	if (!m)
		return 0;
	limit = ~0ULL / m;
	/* Keep clang from folding this into a 128-bit multiply the BPF target lacks. */
	asm volatile("" : "+r"(limit));
	if (n > limit)
		return ~0ULL;
	return n * m;
}

SEC("uprobe")
int BPF_KPROBE(malloc_enter, __u64 size)
{
	return alloc_enter(ctx, LT_FN_MALLOC, size, 0, heap_kind(ctx));
}

SEC("uprobe")
int BPF_KPROBE(calloc_enter, __u64 n, __u64 m)
{
	return alloc_enter(ctx, LT_FN_CALLOC, mul_sat(n, m), 0, heap_kind(ctx));
}

SEC("uprobe")
int BPF_KPROBE(realloc_enter, __u64 ptr, __u64 size)
{
	return alloc_enter(ctx, LT_FN_REALLOC, size, ptr, heap_kind(ctx));
}

SEC("uprobe")
int BPF_KPROBE(reallocarray_enter, __u64 ptr, __u64 n, __u64 m)
{
	return alloc_enter(ctx, LT_FN_REALLOCARRAY, mul_sat(n, m), ptr, heap_kind(ctx));
}

SEC("uprobe")
int BPF_KPROBE(posix_memalign_enter, __u64 memptr, __u64 align, __u64 size)
{
	return alloc_enter(ctx, LT_FN_POSIX_MEMALIGN, size, memptr, heap_kind(ctx));
}

SEC("uprobe")
int BPF_KPROBE(aligned_alloc_enter, __u64 align, __u64 size)
{
	return alloc_enter(ctx, LT_FN_ALIGNED_ALLOC, size, 0, heap_kind(ctx));
}

SEC("uprobe")
int BPF_KPROBE(memalign_enter, __u64 align, __u64 size)
{
	return alloc_enter(ctx, LT_FN_MEMALIGN, size, 0, heap_kind(ctx));
}

SEC("uprobe")
int BPF_KPROBE(valloc_enter, __u64 size)
{
	return alloc_enter(ctx, LT_FN_VALLOC, size, 0, heap_kind(ctx));
}

SEC("uprobe")
int BPF_KPROBE(pvalloc_enter, __u64 size)
{
	return alloc_enter(ctx, LT_FN_PVALLOC, size, 0, heap_kind(ctx));
}

/* One return program serves every allocator: the entry said which one it was. */
SEC("uretprobe")
int BPF_KRETPROBE(alloc_return, __u64 ret)
{
	return alloc_exit(ctx, ret, heap_kind(ctx));
}

/*
 * Is this free realloc's own, of the old block it holds (glibc's realloc(p, 0) calls free,
 * musl's moving realloc too)?  Its return accounts the block.
 */
static __always_inline bool realloc_own_free(__u64 ptr)
{
	struct lt_inflight *cur;

	cur = bpf_task_storage_get(&inflight, bpf_get_current_task_btf(), NULL, 0);
	return cur && cur->active && cur->old_held && cur->arg_ptr == ptr;
}

/*
 * Is this free-shaped call of a block leaktop does not hold the thread's last free passed on
 * (a jump or call from one probed free entry to another with the same pointer, at the same
 * or a deeper %rsp, no allocation in between)?  Then the first probe accounted it.
 * Otherwise it becomes the last free.  Only asked when no record was there: a block that has
 * a record was allocated again since (by any thread: a consumer thread that only frees may
 * free one address twice in a row when a producer got it back in between), and its free is
 * a real one; while passed on, the block is not free yet, so no one can have it again.
 */
static __always_inline bool free_passed_on(__u64 ptr, __u64 sp)
{
	struct lt_inflight *cur = thread_state();

	if (!cur)
		return false;
	if (cur->free_ptr == ptr && sp <= cur->free_sp) {
		bump(&counters, LT_CNT_NESTED);
		return true;
	}
	cur->free_ptr = ptr;
	cur->free_sp = sp;
	return false;
}

/* The thread's last free is ptr's, at sp (the probe that passes it on comes next). */
static __always_inline void free_noted(__u64 ptr, __u64 sp)
{
	struct lt_inflight *cur = thread_state();

	if (cur) {
		cur->free_ptr = ptr;
		cur->free_sp = sp;
	}
}

static __always_inline int free_entry(struct pt_regs *ctx, __u64 ptr, __u32 kind)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u64 sp = PT_REGS_SP(ctx), ip = PT_REGS_IP(ctx), bp = PT_REGS_FP(ctx);
	struct lt_proc *p;

	barrier_var(sp);
	barrier_var(ip);
	barrier_var(bp);
	if (heap_kinds_off & kind)
		return 0;
	if (heap_skip(tgid, true))
		return 0;
	p = bpf_map_lookup_elem(&procs, &tgid);
	if (p)
		__sync_fetch_and_add(&p->heap_calls, 1);
	if (!ptr)
		return 0;
	if (release(tgid, ptr, p)) {
		/* (Thread state only in traced processes.) */
		if (p)
			free_noted(ptr, sp);
		bump(&counters, LT_CNT_EVENTS);
		lt_watch_freed(tgid, ptr, ip, sp, bp);
	} else if (p && free_passed_on(ptr, sp)) {
		return 0;
	} else if (!realloc_own_free(ptr) && p)
		bump(&counters, LT_CNT_FREE_UNKNOWN);
	else
		bystander_hit();
	return 0;
}

/*
 * free's probe may sit a few instructions past the entry (see user/probes.c); the planner
 * guarantees %rdi still holds the argument there.
 */
SEC("uprobe")
int BPF_KPROBE(free_enter, __u64 ptr)
{
	return free_entry(ctx, ptr, heap_kind(ctx));
}

/*
 * Every allocator function's entry through one uprobe_multi link (kernel 6.6 and later; the
 * per-function programs above serve older kernels through perf events): the attach cookie
 * says which function this is (enum lt_alloc_fn, its low 32 bits) and which kind of
 * attachment (LT_COOKIE_PID), and the arguments are read as above.  A
 * link of many probes is detached with one wait in the kernel, where each perf event
 * waited on its own.
 */
SEC("uprobe")
int BPF_KPROBE(alloc_enter_multi, __u64 a0, __u64 a1, __u64 a2)
{
	__u64 cookie = bpf_get_attach_cookie(ctx), size, ptr = 0;
	__u32 fn = (__u32)cookie, kind = cookie & LT_COOKIE_PID ? LT_HEAP_KIND_PID :
							      LT_HEAP_KIND_SYSTEM;

	switch (fn) {
	case LT_FN_MALLOC:
	case LT_FN_VALLOC:
	case LT_FN_PVALLOC:
		size = a0;
		break;
	case LT_FN_CALLOC:
		size = mul_sat(a0, a1);
		break;
	case LT_FN_REALLOC:
		size = a1;
		ptr = a0;
		break;
	case LT_FN_REALLOCARRAY:
		size = mul_sat(a1, a2);
		ptr = a0;
		break;
	case LT_FN_POSIX_MEMALIGN:
		size = a2;
		ptr = a0;
		break;
	case LT_FN_ALIGNED_ALLOC:
	case LT_FN_MEMALIGN:
		size = a1;
		break;
	case LT_FN_FREE:
		return free_entry(ctx, a0, kind);
	default:
		return 0;
	}
	return alloc_enter(ctx, fn, size, ptr, kind);
}

/* The return of every allocator but free, through one uretprobe_multi link. */
SEC("uretprobe")
int BPF_KRETPROBE(alloc_return_multi, __u64 ret)
{
	return alloc_exit(ctx, ret, heap_kind(ctx));
}

/* Empty programs, attached at the same places by `make bench` to measure the trap floor. */
SEC("uprobe")
int floor_enter(void *ctx)
{
	return 0;
}

SEC("uretprobe")
int floor_return(void *ctx)
{
	return 0;
}

