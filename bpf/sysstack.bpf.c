// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sysstack.bpf.c - the user stack at a syscall, in the kernel (lt_syscall_stack, for the
 * descriptor and mapping sites).
 *
 * The user stack at a syscall starts inside a libc wrapper that usually keeps no frame
 * pointer, so the caller of the wrapper is not on the frame-pointer chain.  It is found by
 * scanning the top of the stack for the first word that is a return address (the bytes
 * before it encode a call) of a call into the function holding the syscall (directly, or
 * through a PLT stub or a GOT slot), the way unwinders scan stacks; the chain goes on from
 * the caller's frame pointer.  Where a scan from a syscall instruction found the return
 * addresses is cached (scan_cache).
 */
#include "common.bpf.h"

#define SCAN_WORDS		32

struct scan_buf {
	__u64 words[SCAN_WORDS];
};

#define WRAPPER_LEVELS 3	/* libc functions between the syscall and its caller */

/* A syscall instruction in a file: the inode (a kernel pointer used as an identity), offset. */
struct scan_key {
	__u64 inode;
	__u64 off;
};

/* Where a scan from there found the return addresses, in words above the stack pointer. */
struct scan_val {
	__u8 n;			/* levels found (1 to WRAPPER_LEVELS) */
	__u8 slot[WRAPPER_LEVELS];
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LT_MAX_SCAN_CACHE);
	__type(key, struct scan_key);
	__type(value, struct scan_val);
} scan_cache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scan_buf);
} scan_scratch SEC(".maps");

#define CALL_UNKNOWN_TARGET 1	/* an indirect call through a register */

/* Where a PLT stub at t jumps to (its GOT entry), or t itself when it is not a stub. */
static __always_inline __u64 through_plt(__u64 t)
{
	__u8 b[11];
	__s32 disp;
	__u64 slot, dest = 0;

	if (bpf_probe_read_user(b, sizeof(b), (void *)t))
		return t;
	if (b[0] == 0xff && b[1] == 0x25) {			/* jmp *disp32(%rip) */
		__builtin_memcpy(&disp, &b[2], 4);
		slot = t + 6 + disp;
	} else if (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa &&
		   b[4] == 0xf2 && b[5] == 0xff && b[6] == 0x25) {	/* endbr64; bnd jmp */
		__builtin_memcpy(&disp, &b[7], 4);
		slot = t + 11 + disp;
	} else if (b[0] == 0xf2 && b[1] == 0xff && b[2] == 0x25) {	/* bnd jmp */
		__builtin_memcpy(&disp, &b[3], 4);
		slot = t + 7 + disp;
	} else {
		return t;
	}
	if (bpf_probe_read_user(&dest, sizeof(dest), (void *)slot))
		return t;
	return dest;
}

/*
 * If `ret` is a return address (the bytes before it encode a call), the address that call
 * went to (CALL_UNKNOWN_TARGET for a call through a register or memory), else 0.
 */
static __always_inline __u64 call_target(__u64 ret)
{
	__s32 disp = 0;
	__u64 dest = 0;

	switch (call_before(ret, &disp)) {
	case LT_CALL_REL32:
		return through_plt(ret + disp);
	case LT_CALL_RIP:
		if (bpf_probe_read_user(&dest, sizeof(dest), (void *)(ret + disp)))
			return 0;
		return dest;
	case LT_CALL_INDIRECT:
		return CALL_UNKNOWN_TARGET;
	default:
		return 0;
	}
}

/*
 * Is `ret` the return address of the call into the function that made the syscall at ip?
 * Its call must have gone to a function starting at most WRAPPER_SPAN bytes before ip:
 * stale return addresses of earlier, unrelated calls left in the wrapper's uninitialised
 * stack slots fail this test.
 */
#define WRAPPER_SPAN 8192

/* A global function: the verifier checks it once, not once per word of the scan. */
__noinline int lt_returns_from(__u64 ret, __u64 ip)
{
	__u64 t = call_target(ret);

	/* A call through a register cannot be checked: the vDSO's leave stale ones behind. */
	return t && t != CALL_UNKNOWN_TARGET && t <= ip && ip - t < WRAPPER_SPAN;
}

/*
 * The user stack at a syscall: the wrapper's caller first (found by scanning), then the
 * caller's frame-pointer chain; the wrapper itself when no return address is found.
 */
/* Could fp be the caller's frame pointer, given its return address sits at ra_at? */
static __always_inline bool frame_plausible(__u64 fp, __u64 ra_at)
{
	__u64 ret = 0;

	if (fp <= ra_at || fp - ra_at > (1 << 20) || (fp & 7))
		return false;
	if (bpf_probe_read_user(&ret, sizeof(ret), (void *)(fp + 8)))
		return false;
	return call_target(ret) != 0;
}

/* The code at an address: its file and offset, and the mapping that holds it. */
struct code_at {
	struct scan_key key;		/* in: key.off is the address; inode 0: no file */
	__u64 start, end;
};

/* bpf_find_vma callback filling a struct code_at. */
static long code_at_cb(struct task_struct *task, struct vm_area_struct *vma, struct code_at *c)
{
	struct file *f = BPF_CORE_READ(vma, vm_file);

	if (!f)
		return 0;
	c->start = BPF_CORE_READ(vma, vm_start);
	c->end = BPF_CORE_READ(vma, vm_end);
	c->key.inode = (__u64)BPF_CORE_READ(f, f_inode);
	c->key.off = c->key.off - c->start + (BPF_CORE_READ(vma, vm_pgoff) << 12);
	return 0;
}

/* The inode of the file mapped at addr (a kernel pointer used as an identity), or 0. */
static __always_inline __u64 inode_at(__u64 addr)
{
	struct code_at c = { .key.off = addr };

	if (bpf_find_vma(bpf_get_current_task_btf(), addr, code_at_cb, &c, 0))
		return 0;
	return c.key.inode;
}

/*
 * What the scan would find from the syscall at ip (in the file `inode`), read from the cached
 * slots: each must still return from a call into the function of the level below, and the
 * levels must go on exactly as far as the scan's would (a level goes on while its return
 * address is in the library that made the syscall, as in the scan).  Sets *ra, *ra_at; false
 * when the scan must be done again (another way into the same syscall instruction).
 */
static __always_inline bool scan_cached(const struct scan_val *c, __u64 ip, __u64 sp,
					__u64 inode, __u64 *ra, __u64 *ra_at)
{
	__u64 at = ip, w = 0;
	bool in_lib = false;

	if (!c->n || c->n > WRAPPER_LEVELS)
		return false;
	for (__u32 i = 0; i < WRAPPER_LEVELS; i++) {
		if (i >= c->n)
			break;
		if (c->slot[i] >= SCAN_WORDS ||
		    bpf_probe_read_user(&w, sizeof(w), (void *)(sp + 8 * c->slot[i])) ||
		    !lt_returns_from(w, at))
			return false;
		*ra = w;
		*ra_at = sp + 8 * c->slot[i];
		at = w;
		in_lib = inode_at(w) == inode;
		/* The scan stops at the first level outside the library, and only there. */
		if (i + 1 < c->n && !in_lib)
			return false;
	}
	return !in_lib || c->n >= WRAPPER_LEVELS;
}

static __always_inline __u64 capture_syscall_stack(const struct lt_uregs *regs, __u64 salt)
{
	__u32 zero = 0;
	struct scan_buf *scan = bpf_map_lookup_elem(&scan_scratch, &zero);
	struct lt_stack *st = stack_buf();
	__u64 ip = regs->ip, sp = regs->sp;
	__u64 bp = regs->bp, ra = 0, ra_at = 0, at = ip, saved = 0;
	struct lt_walk w = { .depth = stack_depth() };
	struct code_at code = { .key.off = ip };
	struct scan_val found = {}, *cached = NULL;
	__u32 level = 0;

	if (!st || !scan)
		return 0;
	if (bpf_find_vma(bpf_get_current_task_btf(), ip, code_at_cb, &code, 0) || !code.key.inode)
		code.key.inode = 0;
	else
		cached = bpf_map_lookup_elem(&scan_cache, &code.key);
	/* The walk accepts return addresses into the syscall's library without a lookup. */
	w.text_start = code.start;
	w.text_end = code.end;
	/*
	 * With the library's CFI the walk goes up from the syscall itself; its frames inside the
	 * library (the wrappers) are left out, as the scan leaves them out.  A syscall made by
	 * the program's own code (a static binary's libc, a wrapper of its own) keeps them all.
	 */
	if (cfg_unwind_cfi && code.key.inode) {
		struct task_struct *task = bpf_get_current_task_btf();
		bool own = ip >= BPF_CORE_READ(task, mm, start_code) &&
			   ip < BPF_CORE_READ(task, mm, end_code);

		w.ip = ip;
		w.bp = bp;
		w.floor = sp;
		w.skip_start = own ? 0 : code.start;
		w.skip_end = own ? 0 : code.end;
		st->nr = lt_walk_user_stack(&w, st);
		if (w.first_cfi)
			return intern_stack(st, salt);
		w.skip_start = w.skip_end = 0;
	}
	if (cached && scan_cached(cached, ip, sp, code.key.inode, &ra, &ra_at))
		goto found;
	ra = ra_at = 0;
	if (!bpf_probe_read_user(scan->words, sizeof(scan->words), (void *)sp)) {
		for (__u32 i = 0; i < SCAN_WORDS; i++) {
			__u64 w = scan->words[i];

			if (!lt_returns_from(w, at))
				continue;
			ra = w;
			ra_at = sp + 8 * i;
			if (level < WRAPPER_LEVELS)
				found.slot[level] = i;
			found.n = ++level;
			/*
			 * A return into the library that made the syscall (glibc's fcntl makes
			 * it in a helper it calls): go on up to the call into the library.
			 */
			if (level >= WRAPPER_LEVELS || !code.key.inode ||
			    inode_at(w) != code.key.inode)
				break;
			at = w;
		}
		/* Only what was found: another way into the same instruction may find more. */
		if (code.key.inode && found.n)
			bpf_map_update_elem(&scan_cache, &code.key, &found, BPF_ANY);
	}
found:
	if (!ra) {
		w.ip = ip;
		w.bp = bp;
		w.floor = sp;
		st->nr = lt_walk_user_stack(&w, st);
		return intern_stack(st, salt);
	}
	/*
	 * The caller's frame pointer: still in %rbp if the wrapper left it alone, else saved
	 * just below the return address by the wrapper's first `push %rbp` (open64 reuses
	 * %rbp for the path).  Either must lead to another return address.
	 */
	if (!frame_plausible(bp, ra_at)) {
		bpf_probe_read_user(&saved, sizeof(saved), (void *)(ra_at - 8));
		bp = frame_plausible(saved, ra_at) ? saved : 0;
	}
	w.ip = ra;
	w.bp = bp;
	w.floor = ra_at + 8;
	st->nr = lt_walk_user_stack(&w, st);
	return intern_stack(st, salt);
}

/* The user stack at a syscall (regs: its user registers), interned with salt: a global
 * function, for bpf/fd.bpf.c's and bpf/mmap.bpf.c's sites. */
__noinline __u64 lt_syscall_stack(const struct lt_uregs *regs, __u64 salt)
{
	if (!regs)
		return 0;
	return capture_syscall_stack(regs, salt);
}
