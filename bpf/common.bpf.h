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
extern const volatile __u32 cfg_unwind_cfi;	/* 1: unwind by the modules' CFI tables */
/* The records of each kind (enum lt_share) one process may hold; 0: no limit. */
extern const volatile __u64 cfg_share_max[LT_SHARE__COUNT];

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

/* Value size is cut to 8 + 24 * stack depth by the loader (struct lt_stack). */
struct lt_stacks_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, LT_MAX_STACKS);
	__type(key, __u64);
	__type(value, struct lt_stack);
};

/*
 * pid_tgid -> the fd or mapping syscall in progress (bpf/syscall.bpf.c).  A hash map, not task
 * storage: these programs can be preempted, and a task storage access held across that makes
 * the allocator probes' own task storage lookups on that CPU fail.
 */
struct lt_sysargs_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LT_MAX_SYSARGS);
	__type(key, __u64);
	__type(value, struct lt_sysargs);
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

/*
 * thread id -> its process, for threads made while leaktop runs, kept only on kernels before
 * Linux 6.8, whose OOM-killer tracepoint names the victim by a thread's id (bpf/oom.bpf.c).
 */
struct lt_thread_map {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LT_MAX_PROCS);
	__type(key, __u32);
	__type(value, __u32);
};

/* Does the OOM-killer tracepoint name its victim by a thread's id (before Linux 6.8)? */
#define LT_OOM_BY_TID \
	(!bpf_core_field_exists(struct trace_event_raw_mark_victim, __data_loc_comm))

extern struct lt_thread_map thread_tgid SEC(".maps");

struct lt_share_purges_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LT_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct lt_share_purge);
};

extern struct lt_share_purges_map share_purges SEC(".maps");
extern struct lt_procs_map procs SEC(".maps");
extern struct lt_sites_map sites SEC(".maps");
extern struct lt_stacks_map stacks SEC(".maps");
extern struct lt_sysargs_map sysargs SEC(".maps");
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

/*
 * Per-process shares of the shared maps (bpf/leaktop.h, lt_proc.share_*): a process that
 * holds its share of a map gets no more records there, and the loss is counted against it
 * (and in the run's drops), so one process cannot fill a map and blind tracing for the others.
 * One atomic add on the lt_proc the program already has; p NULL: not counted.
 */
static __always_inline void share_lost(struct lt_proc *p, __u32 kind, __u32 cause)
{
	if (p)
		__sync_fetch_and_add(&p->share_drops[kind & 3], 1);
	drop(cause);
}

/*
 * Records of p (tgid's) that userspace removed (share_purges) and its share still counts:
 * taken off now.  True when there were any.  Only when a share is reached (a rare path).
 */
static __always_inline bool share_refresh(struct lt_proc *p, __u32 tgid)
{
	struct lt_share_purge *e = bpf_map_lookup_elem(&share_purges, &tgid);
	__u64 seen, now;
	bool any = false;

	if (!e || e->gen != p->gen)
		return false;
	seen = p->purged_heap;
	now = e->heap;
	if (now > seen && __sync_val_compare_and_swap(&p->purged_heap, seen, now) == seen) {
		__sync_fetch_and_add(&p->share_held[LT_SHARE_HEAP], -(__s64)(now - seen));
		any = true;
	}
	seen = p->purged_sites;
	now = e->sites;
	if (now > seen && __sync_val_compare_and_swap(&p->purged_sites, seen, now) == seen) {
		__sync_fetch_and_add(&p->share_held[LT_SHARE_SITE], -(__s64)(now - seen));
		any = true;
	}
	return any;
}

/*
 * Take one record of p's share of `kind` (p: tgid's): false (counted) when it holds its
 * share already.
 */
static __always_inline bool share_take(struct lt_proc *p, __u32 kind, __u32 tgid)
{
	__u64 max = cfg_share_max[kind & 3];
	__s64 held;

	if (!p)
		return true;
	held = __sync_fetch_and_add(&p->share_held[kind & 3], 1);
	if (!max || held < (__s64)max)
		return true;
	__sync_fetch_and_add(&p->share_held[kind & 3], -1);
	if ((kind == LT_SHARE_HEAP || kind == LT_SHARE_SITE) && share_refresh(p, tgid)) {
		held = __sync_fetch_and_add(&p->share_held[kind & 3], 1);
		if (held < (__s64)max)
			return true;
		__sync_fetch_and_add(&p->share_held[kind & 3], -1);
	}
	share_lost(p, kind, LT_DROP_HEAP_SHARE + (kind & 3));
	return false;
}

/* Give one record of `kind` back to p's share. */
static __always_inline void share_put(struct lt_proc *p, __u32 kind)
{
	if (p)
		__sync_fetch_and_add(&p->share_held[kind & 3], -1);
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
	ev->exe_dev = 0;
	ev->exe_ino = 0;
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

/* The user addresses code can lie at (x86-64, 4- or 5-level page tables). */
#define LT_USER_TEXT_MIN	4096ULL
#define LT_USER_TEXT_MAX	0x00fffffffffff000ULL
#define VM_EXEC			0x00000004ULL
#define VM_SHARED		0x00000008ULL
#define LT_MAP_FIXED		0x10		/* mmap: replaces what was mapped there */
#define LT_EBUSY		16		/* bpf_find_vma: the mapping lock is taken */

/* A length in whole pages, as the kernel maps and unmaps it. */
static __always_inline __u64 page_up(__u64 len)
{
	return (len + 4095ULL) & ~4095ULL;
}

/* A mapping of the current process, as bpf_find_vma found it. */
struct lt_vma {
	__u64 start;
	__u64 end;
	__u64 file;			/* the mapped file (a kernel pointer used as an identity), 0
					 * for anonymous memory */
	__u64 flags;			/* vm_flags */
};

static long lt_vma_cb(struct task_struct *task, struct vm_area_struct *vma, struct lt_vma *v)
{
	v->start = BPF_CORE_READ(vma, vm_start);
	v->end = BPF_CORE_READ(vma, vm_end);
	v->file = (__u64)BPF_CORE_READ(vma, vm_file);
	v->flags = BPF_CORE_READ(vma, vm_flags);
	return 0;
}

/* The current process's mapping at addr: 0, or -ENOENT (none), -EBUSY (mmap lock taken). */
static __always_inline long vma_at(__u64 addr, struct lt_vma *v)
{
	v->start = 0;
	v->end = 0;
	v->file = 0;
	v->flags = 0;
	return bpf_find_vma(bpf_get_current_task_btf(), addr, lt_vma_cb, v, 0);
}

/* How the call instruction that ends at a return address is encoded. */
enum lt_call_kind {
	LT_CALL_NONE = 0,		/* the bytes before it are no call */
	LT_CALL_REL32,			/* call rel32: to ret + disp */
	LT_CALL_RIP,			/* call *disp32(%rip): to the address stored at ret + disp */
	LT_CALL_INDIRECT,		/* call through a register or another memory operand */
};

/* Is m the ModRM byte of opcode 0xff's /2 (call near, indirect)? */
static __always_inline bool modrm_call(__u8 m)
{
	return (m & 0x38) == 0x10;
}

/*
 * Decode the call that ends where b ends: b holds the 8 bytes before a return address (b[7]
 * is the byte at ret - 1).  Every x86-64 near-call form is recognised: e8 rel32, and ff /2
 * with a register, [reg], [reg+disp8], [reg+disp32], [rip+disp32] or SIB operand (prefixes
 * such as REX or notrack come before and do not matter).  *disp gets the displacement of the
 * rel32 and rip-relative forms.
 */
static __always_inline __u32 call_kind(const __u8 *b, __s32 *disp)
{
	__u8 m;

	if (b[3] == 0xe8) {
		__builtin_memcpy(disp, &b[4], 4);
		return LT_CALL_REL32;
	}
	if (b[2] == 0xff && b[3] == 0x15) {
		__builtin_memcpy(disp, &b[4], 4);
		return LT_CALL_RIP;
	}
	m = b[7];				/* ff /2, 2 bytes: *%reg, *(%reg) */
	if (b[6] == 0xff && modrm_call(m) &&
	    ((m >> 6) == 3 || ((m >> 6) == 0 && (m & 7) != 4 && (m & 7) != 5)))
		return LT_CALL_INDIRECT;
	m = b[6];				/* 3 bytes: *disp8(%reg), *(SIB) */
	if (b[5] == 0xff && modrm_call(m) &&
	    (((m >> 6) == 1 && (m & 7) != 4) || ((m >> 6) == 0 && (m & 7) == 4 && (b[7] & 7) != 5)))
		return LT_CALL_INDIRECT;
	if (b[4] == 0xff && b[5] == 0x54)	/* 4 bytes: *disp8(SIB) */
		return LT_CALL_INDIRECT;
	m = b[3];				/* 6 bytes: *disp32(%reg) */
	if (b[2] == 0xff && modrm_call(m) && (m >> 6) == 2 && (m & 7) != 4)
		return LT_CALL_INDIRECT;
	m = b[2];				/* 7 bytes: *disp32(SIB), *disp32(,index) */
	if (b[1] == 0xff && modrm_call(m) && (m & 7) == 4 &&
	    ((m >> 6) == 2 || ((m >> 6) == 0 && (b[3] & 7) == 5)))
		return LT_CALL_INDIRECT;
	return LT_CALL_NONE;
}

/* The call ending at user address ret (LT_CALL_NONE when unreadable); *disp as above. */
static __always_inline __u32 call_before(__u64 ret, __s32 *disp)
{
	__u8 b[8];

	if (ret < LT_USER_TEXT_MIN || ret >= LT_USER_TEXT_MAX)
		return LT_CALL_NONE;
	if (bpf_probe_read_user(b, sizeof(b), (void *)(ret - 8)))
		return LT_CALL_NONE;
	return call_kind(b, disp);
}

/* Where a stack walk starts, and code it may accept without a vma lookup. */
struct lt_walk {
	__u64 ip;			/* the first frame (its state is exact: not a return address) */
	__u64 bp;			/* %rbp there */
	__u64 floor;			/* %rsp there: no frame lies below it */
	__u64 text_start;		/* a known executable file mapping (the allocator's), or 0 */
	__u64 text_end;
	__u64 skip_start;		/* CFI walk: leading frames in [skip_start, skip_end) are */
	__u64 skip_end;			/* unwound but not kept (a syscall's wrappers) */
	__u32 depth;			/* frames to keep at most */
	__u32 first_cfi;		/* out: the first frame was unwound by its module's CFI */
};

/*
 * Walk the user stack into st (by CFI tables with --unwind cfi, where a module has one, by
 * frame pointers elsewhere); its number of frames.  A global function (bpf/stack.bpf.c):
 * the verifier checks it once, not inside each program that captures.
 */
extern __u32 lt_walk_user_stack(struct lt_walk *w, struct lt_stack *st);

/*
 * The user registers of a thread in a syscall that a stack capture starts from (read from
 * its struct pt_regs: a raw tracepoint's argument, or bpf_task_pt_regs()).  Passed by
 * pointer: a global function takes no kernel pointer as a number.
 */
struct lt_uregs {
	__u64 ip, sp, bp;
};

/* The user stack at a syscall (regs: its user registers), interned with salt; a global
 * function (bpf/sysstack.bpf.c). */
extern __u64 lt_syscall_stack(const struct lt_uregs *regs, __u64 salt);

/*
 * Before an unmapping syscall over [lo, hi): where its records may be (sets a->hint and
 * a->hint_end); bpf/mmap.bpf.c.
 */
extern int lt_unmap_hint(struct lt_sysargs *a, __u64 lo, __u64 hi);

/* The exit of a memory mapping syscall (a: its arguments, ret >= 0); bpf/mmap.bpf.c. */
extern int lt_mmap_exit(const struct lt_sysargs *a, long ret, const struct lt_uregs *regs);

/* The exit of a descriptor syscall (a: its arguments, ret >= 0); bpf/fd.bpf.c. */
extern int lt_fd_exit(const struct lt_sysargs *a, long ret, const struct lt_uregs *regs);

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

/*
 * The Python frames of the current thread (bpf/python.bpf.c), at most max, read into a per-CPU
 * buffer: how many (0: not a Python process userspace registered, or this thread does not
 * hold the GIL).  lt_py_append() then puts the first npy of them after the frames of the
 * stack in the scratch buffer.  Global functions.
 */
extern __u32 lt_py_walk(__u32 max);
extern int lt_py_append(__u32 npy);

/*
 * Fill in the files of the frames of the stack in the scratch buffer (struct lt_stack), for
 * a stack about to be stored.  Returns 0.  A global function in bpf/stack.bpf.c.
 */
extern int lt_stack_files(void);

/*
 * Intern the stack in st (st->nr frames; the scratch buffer) in `stacks`: its hash, or 0
 * when it is not kept.
 */
static __always_inline __u64 intern_stack(struct lt_stack *st, __u64 salt)
{
	struct lt_proc *p;
	__u32 tgid;
	long err;
	__u64 h;

	h = stack_hash_of(st, st->nr) ^ salt;
	h = h ? h : 1;
	if (bpf_map_lookup_elem(&stacks, &h))
		return h;
	/*
	 * A new stack (rare) comes with a new site: not for an image that holds its share of
	 * sites (the site would be refused; its frames would only fill `stacks`).
	 */
	tgid = bpf_get_current_pid_tgid() >> 32;
	p = bpf_map_lookup_elem(&procs, &tgid);
	if (p && cfg_share_max[LT_SHARE_SITE] &&
	    p->share_held[LT_SHARE_SITE] >= (__s64)cfg_share_max[LT_SHARE_SITE] &&
	    (!share_refresh(p, tgid) ||
	     p->share_held[LT_SHARE_SITE] >= (__s64)cfg_share_max[LT_SHARE_SITE])) {
		share_lost(p, LT_SHARE_SITE, LT_DROP_SITE_SHARE);
		return 0;
	}
	/* New: the file of each frame goes with it (a global function, bpf/stack.bpf.c). */
	lt_stack_files();
	err = bpf_map_update_elem(&stacks, &h, st, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		drop(LT_DROP_STACK_MAP_FULL);
		return 0;
	}
	return h;
}

/*
 * Capture the user stack at a return probe (caller's registers) and intern it; return
 * addresses in [text_start, text_end) (the allocator's libc) need no vma lookup.
 */
static __always_inline __u64 capture_stack(struct pt_regs *ctx, __u64 text_start,
					   __u64 text_end)
{
	struct lt_walk w = {
		.ip = PT_REGS_IP(ctx),
		.bp = PT_REGS_FP(ctx),
		.floor = PT_REGS_SP(ctx),
		.text_start = text_start,
		.text_end = text_end,
		.depth = stack_depth(),
	};
	struct lt_stack *st = stack_buf();
	__u32 npy;

	if (!st)
		return 0;
	/* A Python process's frames take at most half the depth; the native walk the rest. */
	npy = lt_py_walk(w.depth / 2);
	w.depth -= npy;
	st->nr = lt_walk_user_stack(&w, st);
	if (npy)
		lt_py_append(npy);
	return intern_stack(st, 0);
}

/* Stacks of fd and mmap sites are salted: a stack never shares another kind's hash. */
#define LT_FD_SALT	0x66645f7369746573ULL
#define LT_MMAP_SALT	0x6d6d61705f736974ULL

static __always_inline __u64 kind_salt(__u32 kind)
{
	return kind == LT_KIND_FD ? LT_FD_SALT : kind == LT_KIND_MMAP ? LT_MMAP_SALT : 0;
}

/*
 * A new site uses stack `hash`: put it back if the collector deleted it meanwhile (a global
 * function in bpf/stack.bpf.c, verified once).  Returns 0.
 */
extern int lt_keep_stack(__u64 hash, __u32 kind);

/*
 * Has the stack just captured (the scratch buffer) a frame in one of cfg's functions (file
 * and offset ranges)?  1 or 0.  A global function in bpf/stack.bpf.c, verified once.
 */
extern int lt_stack_has_fn(const struct lt_stop_cfg *cfg);

/* The site (tgid, gen, stack) of a kind, created on first use; NULL when the map is full. */
static __always_inline struct lt_site_val *site_get(__u32 tgid, __u64 gen, __u64 hash, __u32 kind)
{
	struct lt_site_key sk = { .tgid = tgid, .kind = kind, .gen = gen, .stack_hash = hash };
	struct lt_site_val zero = {};
	struct lt_site_val *s = bpf_map_lookup_elem(&sites, &sk);
	struct lt_proc *p;

	if (s)
		return s;
	/* A new site (rare): counted in its image's share. */
	p = bpf_map_lookup_elem(&procs, &tgid);
	if (p && p->gen != gen)
		p = NULL;
	if (!share_take(p, LT_SHARE_SITE, tgid))
		return NULL;
	if (bpf_map_update_elem(&sites, &sk, &zero, BPF_NOEXIST))
		share_put(p, LT_SHARE_SITE);
	lt_keep_stack(hash, kind);
	s = bpf_map_lookup_elem(&sites, &sk);
	if (!s)
		share_lost(p, LT_SHARE_SITE, LT_DROP_SITE_MAP_FULL);
	return s;
}

/* The next allocation number of site s (1-based): counts the allocation. */
static __always_inline __u64 site_take_seq(struct lt_site_val *s)
{
	return __sync_fetch_and_add(&s->allocs, 1) + 1;
}

/* A new live resource of `bytes` at site s, its allocation already counted. */
static __always_inline void site_add_live(struct lt_site_val *s, __u64 bytes, __u64 now)
{
	if (__sync_fetch_and_add(&s->outstanding_count, 1) == 0)
		s->live_since_ns = now;
	if (bytes) {
		__sync_fetch_and_add(&s->outstanding_bytes, bytes);
		__sync_fetch_and_add(&s->alloc_bytes, bytes);
	}
	s->last_alloc_ns = now;
}

/* A new live resource of `bytes` at site s. */
static __always_inline void site_add(struct lt_site_val *s, __u64 bytes, __u64 now)
{
	site_take_seq(s);
	site_add_live(s, bytes, now);
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
