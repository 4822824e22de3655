// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * leaktop.bpf.c - the kernel half of leaktop: allocator uprobes and process lifecycle.
 *
 * Allocator calls are accounted here, per call site, so that userspace reads O(sites) each
 * interval whatever the number of live blocks:
 *   - entry probes remember the request of the outermost allocator call of a thread in
 *     `inflight` (nested calls, e.g. realloc(NULL, n) calling malloc, only bump a depth);
 *   - return probes capture the user stack (at the return the registers are the caller's, so
 *     the first frame is the allocating call site), record the block in `allocs` and add it
 *     to its site in `sites`;
 *   - free's probe removes the block and subtracts it from the site it was charged to.
 * Raw tracepoints (no tracefs needed) follow fork, exec and exit: a traced process's children
 * are traced when asked, an exec starts a new image (a new `gen`) and an exit forgets the
 * process; userspace is told through the ring buffer and purges the dead records.
 * Every loss increments a `drops` slot; nothing is lost silently.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "leaktop.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define EEXIST 17		/* errno values returned by the map helpers */

/* Settings, fixed before load by the loader. */
const volatile __u32 cfg_filter = LT_FILTER_ALL;
const volatile __u32 cfg_self_tgid;
const volatile __u32 cfg_follow_fork;
const volatile __u32 cfg_stack_depth = LT_DEFAULT_STACK_DEPTH;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LT_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct lt_proc);
} procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, LT_MAX_SITES);
	__type(key, struct lt_site_key);
	__type(value, struct lt_site_val);
} sites SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, LT_MAX_ALLOCS);
	__type(key, struct lt_alloc_key);
	__type(value, struct lt_alloc_val);
} allocs SEC(".maps");

/* Value size is cut to 8 + 8 * stack depth by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, LT_MAX_STACKS);
	__type(key, __u64);
	__type(value, struct lt_stack);
} stacks SEC(".maps");

/* Per-thread allocator call state: lives and dies with the thread, no insert per call. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct lt_inflight);
} inflight SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LT_DROP__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LT_CNT__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* Slot 0: the last image generation handed out (userspace seeds it above its own). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} gen_counter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lt_stack);
} stack_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, LT_RINGBUF_BYTES);
} events SEC(".maps");

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

static __always_inline void emit(__u32 type, __u32 tgid, __u32 ppid, __u64 old_gen, __u64 new_gen)
{
	struct lt_event *ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);

	if (!ev) {
		drop(LT_DROP_RINGBUF_FULL);
		return;
	}
	ev->type = type;
	ev->tgid = tgid;
	ev->ppid = ppid;
	ev->pad = 0;
	ev->old_gen = old_gen;
	ev->new_gen = new_gen;
	ev->ts_ns = bpf_ktime_get_ns();
	bpf_ringbuf_submit(ev, 0);
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

/* FNV-1a over the frames; 0 is reserved for "stack unknown". */
static __always_inline __u64 stack_hash_of(const struct lt_stack *st, __u32 nr)
{
	__u64 h = 0xcbf29ce484222325ULL;

	for (__u32 i = 0; i < LT_MAX_STACK_DEPTH; i++) {
		if (i >= nr)
			break;
		h ^= st->ips[i];
		h *= 0x100000001b3ULL;
	}
	return h ? h : 1;
}

/*
 * Walk the user stack by frame pointers.  At a return probe the registers are the caller's:
 * the IP is the allocating call site and %rbp the caller's frame.  Unlike the kernel's walker
 * this stops at the end of the chain (a null, misaligned or non-ascending frame pointer)
 * instead of faulting on it, which costs more than the whole walk.
 */
static __always_inline __u32 walk_user_stack(struct pt_regs *ctx, struct lt_stack *st,
					     __u32 depth)
{
	struct {
		__u64 next;
		__u64 ret;
	} frame;
	__u64 bp = PT_REGS_FP(ctx), prev = 0;
	__u32 n = 1;

	st->ips[0] = PT_REGS_IP(ctx);
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

/* Capture the user stack at ctx and intern it in `stacks`; 0 when it could not be kept. */
static __always_inline __u64 capture_stack(struct pt_regs *ctx)
{
	__u32 zero = 0;
	struct lt_stack *st = bpf_map_lookup_elem(&stack_scratch, &zero);
	__u32 depth = cfg_stack_depth;
	long err;
	__u64 h;

	if (!st)
		return 0;
	if (depth < 1 || depth > LT_MAX_STACK_DEPTH)
		depth = LT_DEFAULT_STACK_DEPTH;
	st->nr = walk_user_stack(ctx, st, depth);
	h = stack_hash_of(st, st->nr);
	if (bpf_map_lookup_elem(&stacks, &h))
		return h;
	err = bpf_map_update_elem(&stacks, &h, st, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		drop(LT_DROP_STACK_MAP_FULL);
		return 0;
	}
	return h;
}

/* Take the live block (tgid, addr) off its site.  Returns true if leaktop knew it. */
static __always_inline bool release(__u32 tgid, __u64 addr)
{
	struct lt_alloc_key ak = { .tgid = tgid, .addr = addr };
	struct lt_site_key sk = { .tgid = tgid };
	struct lt_alloc_val *a = bpf_map_lookup_elem(&allocs, &ak);
	struct lt_site_val *s;
	__u64 size;

	if (!a)
		return false;
	sk.gen = a->gen;
	sk.stack_hash = a->stack_hash;
	size = a->size_bytes;
	/* Only the deleter accounts the free, so racing frees of one block count once. */
	if (bpf_map_delete_elem(&allocs, &ak))
		return false;
	s = bpf_map_lookup_elem(&sites, &sk);
	if (s) {
		__sync_fetch_and_add(&s->outstanding_bytes, -(__s64)size);
		__sync_fetch_and_add(&s->outstanding_count, -1);
		__sync_fetch_and_add(&s->frees, 1);
	}
	return true;
}

/* Record a new live block at the current call site. */
static __always_inline void record(struct pt_regs *ctx, __u32 tgid, __u64 gen, __u64 addr, __u64 size)
{
	struct lt_site_key sk = { .tgid = tgid, .gen = gen };
	struct lt_alloc_key ak = { .tgid = tgid, .addr = addr };
	struct lt_alloc_val av = { .size_bytes = size, .gen = gen };
	struct lt_site_val zero = {};
	struct lt_site_val *s;
	__u64 now = bpf_ktime_get_ns();
	long err;

	sk.stack_hash = capture_stack(ctx);
	s = bpf_map_lookup_elem(&sites, &sk);
	if (!s) {
		bpf_map_update_elem(&sites, &sk, &zero, BPF_NOEXIST);
		s = bpf_map_lookup_elem(&sites, &sk);
		if (!s) {
			drop(LT_DROP_SITE_MAP_FULL);
			return;
		}
	}
	av.ts_ns = now;
	av.stack_hash = sk.stack_hash;
	err = bpf_map_update_elem(&allocs, &ak, &av, BPF_NOEXIST);
	if (err == -EEXIST) {
		/* The address is live again without a free we saw: retire the old record. */
		release(tgid, addr);
		err = bpf_map_update_elem(&allocs, &ak, &av, BPF_ANY);
	}
	if (err) {
		drop(LT_DROP_ALLOC_MAP_FULL);
		return;
	}
	if (__sync_fetch_and_add(&s->outstanding_count, 1) == 0)
		s->live_since_ns = now;
	__sync_fetch_and_add(&s->outstanding_bytes, size);
	__sync_fetch_and_add(&s->allocs, 1);
	__sync_fetch_and_add(&s->alloc_bytes, size);
	s->last_alloc_ns = now;
	bump(&counters, LT_CNT_EVENTS);
}

static __always_inline struct lt_inflight *thread_state(void)
{
	struct task_struct *task = bpf_get_current_task_btf();

	return bpf_task_storage_get(&inflight, task, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
}

static __always_inline int alloc_enter(struct pt_regs *ctx, __u32 fn, __u64 size, __u64 arg_ptr)
{
	__u64 sp = PT_REGS_SP(ctx);
	struct lt_inflight *cur;
	struct lt_proc *p;

	/* Load it now: clang would otherwise keep ctx + offset, which the verifier refuses. */
	barrier_var(sp);
	p = proc_of(bpf_get_current_pid_tgid() >> 32);

	if (!p)
		return 0;
	cur = thread_state();
	if (!cur) {
		drop(LT_DROP_INFLIGHT_FULL);
		return 0;
	}
	if (cur->active) {
		/*
		 * Inside an allocator call of this thread: deeper on its stack, or at the same
		 * depth for a tail call (glibc's realloc(NULL, n) jumps to malloc).  Count the
		 * outer call only.
		 */
		if (sp <= cur->entry_sp) {
			cur->depth++;
			bump(&counters, LT_CNT_NESTED);
			return 0;
		}
		/* Shallower: the outer call returned without its return probe running. */
		drop(LT_DROP_LOST_RETURN);
	}
	cur->size_bytes = size;
	cur->arg_ptr = arg_ptr;
	cur->gen = p->gen;
	cur->entry_sp = sp;
	cur->fn = fn;
	cur->depth = 0;
	cur->active = 1;
	return 0;
}

static __always_inline int alloc_exit(struct pt_regs *ctx, __u64 ret)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct lt_inflight *cur = bpf_task_storage_get(&inflight, task, NULL, 0);
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct lt_inflight in;
	__u64 addr = ret;

	if (!cur || !cur->active)
		return 0;
	if (cur->depth) {
		cur->depth--;
		return 0;
	}
	in = *cur;
	cur->active = 0;

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
		 * realloc leaves p alive.
		 */
		if (in.arg_ptr && (ret || in.size_bytes == 0)) {
			if (release(tgid, in.arg_ptr))
				bump(&counters, LT_CNT_EVENTS);
		}
		break;
	default:
		break;
	}
	if (!addr) {
		/* realloc(p, 0) returning NULL is a free, not a failure. */
		if (in.size_bytes || (in.fn != LT_FN_REALLOC && in.fn != LT_FN_REALLOCARRAY))
			bump(&counters, LT_CNT_FAILED_ALLOCS);
		return 0;
	}
	record(ctx, tgid, in.gen, addr, in.size_bytes);
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
	return alloc_enter(ctx, LT_FN_MALLOC, size, 0);
}

SEC("uprobe")
int BPF_KPROBE(calloc_enter, __u64 n, __u64 m)
{
	return alloc_enter(ctx, LT_FN_CALLOC, mul_sat(n, m), 0);
}

SEC("uprobe")
int BPF_KPROBE(realloc_enter, __u64 ptr, __u64 size)
{
	return alloc_enter(ctx, LT_FN_REALLOC, size, ptr);
}

SEC("uprobe")
int BPF_KPROBE(reallocarray_enter, __u64 ptr, __u64 n, __u64 m)
{
	return alloc_enter(ctx, LT_FN_REALLOCARRAY, mul_sat(n, m), ptr);
}

SEC("uprobe")
int BPF_KPROBE(posix_memalign_enter, __u64 memptr, __u64 align, __u64 size)
{
	return alloc_enter(ctx, LT_FN_POSIX_MEMALIGN, size, memptr);
}

SEC("uprobe")
int BPF_KPROBE(aligned_alloc_enter, __u64 align, __u64 size)
{
	return alloc_enter(ctx, LT_FN_ALIGNED_ALLOC, size, 0);
}

SEC("uprobe")
int BPF_KPROBE(memalign_enter, __u64 align, __u64 size)
{
	return alloc_enter(ctx, LT_FN_MEMALIGN, size, 0);
}

SEC("uprobe")
int BPF_KPROBE(valloc_enter, __u64 size)
{
	return alloc_enter(ctx, LT_FN_VALLOC, size, 0);
}

SEC("uprobe")
int BPF_KPROBE(pvalloc_enter, __u64 size)
{
	return alloc_enter(ctx, LT_FN_PVALLOC, size, 0);
}

/* One return program serves every allocator: the entry said which one it was. */
SEC("uretprobe")
int BPF_KRETPROBE(alloc_return, __u64 ret)
{
	return alloc_exit(ctx, ret);
}

/*
 * free's probe may sit a few instructions past the entry (see user/probes.c); the planner
 * guarantees %rdi still holds the argument there.
 */
SEC("uprobe")
int BPF_KPROBE(free_enter, __u64 ptr)
{
	__u32 tgid;

	if (!ptr)
		return 0;
	/*
	 * No nesting check: a free made inside realloc(p, 0) takes p off its site here and
	 * realloc's return then finds nothing left to release, so p is freed exactly once.
	 */
	tgid = bpf_get_current_pid_tgid() >> 32;
	if (release(tgid, ptr))
		bump(&counters, LT_CNT_EVENTS);
	else if (bpf_map_lookup_elem(&procs, &tgid))
		bump(&counters, LT_CNT_FREE_UNKNOWN);
	return 0;
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

SEC("raw_tracepoint/sched_process_fork")
int lt_fork(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *parent = (struct task_struct *)ctx->args[0];
	struct task_struct *child = (struct task_struct *)ctx->args[1];
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	__u32 cpid = BPF_CORE_READ(child, pid);
	struct lt_proc np = {};

	/* New threads share the image; only new processes matter. */
	if (!cfg_follow_fork || cpid != ctgid)
		return 0;
	if (!bpf_map_lookup_elem(&procs, &ptgid))
		return 0;
	np.gen = next_gen();
	np.start_ns = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&procs, &ctgid, &np, BPF_ANY)) {
		drop(LT_DROP_PROC_MAP_FULL);
		return 0;
	}
	emit(LT_EV_FORK, ctgid, ptgid, 0, np.gen);
	return 0;
}

SEC("raw_tracepoint/sched_process_exec")
int lt_exec(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct lt_proc *p = bpf_map_lookup_elem(&procs, &tgid);
	__u64 old_gen;

	if (!p)
		return 0;
	old_gen = p->gen;
	p->gen = next_gen();
	p->start_ns = bpf_ktime_get_ns();
	emit(LT_EV_EXEC, tgid, 0, old_gen, p->gen);
	return 0;
}

SEC("raw_tracepoint/sched_process_exit")
int lt_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct lt_proc *p;
	__u64 gen;

	/* The last thread out takes the process with it. */
	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return 0;
	p = bpf_map_lookup_elem(&procs, &tgid);
	if (!p)
		return 0;
	gen = p->gen;
	bpf_map_delete_elem(&procs, &tgid);
	emit(LT_EV_EXIT, tgid, 0, gen, 0);
	return 0;
}
