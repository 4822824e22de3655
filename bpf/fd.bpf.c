// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * fd.bpf.c - file descriptors (Windows' handles) per creating call site, in the kernel.
 *
 * The per-syscall tracepoints syscalls:sys_enter_NAME and sys_exit_NAME of the syscalls a
 * table in rodata classifies (filled by the loader from user/live/fdsys.c: how each creates
 * or closes descriptors), one program each side for all of them: the entry keeps the
 * arguments of traced threads (sysargs), the exit sees the result, and a syscall outside the
 * table runs nothing of ours.  Where tracefs cannot be had (their ids are read there), the
 * raw tracepoints sys_enter/sys_exit instead, which run for every syscall of every process
 * (one outside the table costs an array read there).  Created descriptors are recorded in
 * `fds` (tgid, fd) with the site that made them; close, close_range and dup2/dup3 onto an
 * open fd take them off.  Descriptors closed behind our back (exec's close-on-exec, a close
 * we missed) are repaired by the collector against /proc/PID/fd.  The memory mapping
 * syscalls share the programs and the table; their exits go to bpf/mmap.bpf.c.
 *
 * The user stack at a syscall starts inside a libc wrapper that usually keeps no frame
 * pointer, so the caller of the wrapper is not on the frame-pointer chain.  It is found by
 * scanning the top of the stack for the first word that is a return address (the bytes
 * before it encode a call) of a call into the function holding the syscall (directly, or
 * through a PLT stub or a GOT slot), the way unwinders scan stacks; the chain goes on from
 * the caller's frame pointer.
 */
#include "common.bpf.h"

#define F_DUPFD			0
#define F_DUPFD_CLOEXEC		1030
#define SOL_SOCKET		1
#define SCM_RIGHTS		1
#define SCAN_WORDS		32
#define MAX_CMSGS		4
#define MAX_MMSGS		8

const volatile __u8 cfg_fd_class[LT_MAX_SYSCALL];
/* Set at teardown: the per-syscall programs do nothing while their events are closed. */
volatile __u32 sc_off;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, LT_MAX_FDS);
	__type(key, struct lt_fd_key);
	__type(value, struct lt_fd_val);
} fds SEC(".maps");

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

/* The same for another concern's sites (bpf/mmap.bpf.c), with its own salt. */
__noinline __u64 lt_syscall_stack(const struct lt_uregs *regs, __u64 salt)
{
	if (!regs)
		return 0;
	return capture_syscall_stack(regs, salt);
}

/*
 * Take (tgid, fd) off its site and out of the process's share.  1 if it was tracked.  A
 * global function: verified once, not at each of its many call sites.
 */
__noinline int lt_fd_release(__u32 tgid, __s32 fd)
{
	struct lt_fd_key k = { .tgid = tgid, .fd = fd };
	struct lt_fd_val *v = bpf_map_lookup_elem(&fds, &k);
	struct lt_fd_val old;

	if (!v)
		return 0;
	old = *v;
	if (bpf_map_delete_elem(&fds, &k))
		return 0;
	share_put(bpf_map_lookup_elem(&procs, &tgid), LT_SHARE_FD);
	site_sub(tgid, old.gen, old.stack_hash, LT_KIND_FD, 0);
	bump(&counters, LT_CNT_FD_EVENTS);
	return 1;
}

/*
 * Record a new descriptor at the site `hash` of image gen, in the process's share
 * (descriptors outlive exec: the share is the process's, not the image's).  A global
 * function, verified once.
 */
__noinline int lt_fd_record(__u32 tgid, __u64 gen, __u64 hash, __s32 fd, __u64 now)
{
	struct lt_fd_key k = { .tgid = tgid, .fd = fd };
	struct lt_fd_val v = { .gen = gen, .stack_hash = hash, .ts_ns = now };
	struct lt_proc *p = bpf_map_lookup_elem(&procs, &tgid);
	struct lt_site_val *s;
	long err;

	if (fd < 0)
		return 0;
	if (!share_take(p, LT_SHARE_FD, tgid))
		return 0;
	s = site_get(tgid, gen, hash, LT_KIND_FD);
	if (!s) {
		share_put(p, LT_SHARE_FD);
		return 0;
	}
	err = bpf_map_update_elem(&fds, &k, &v, BPF_NOEXIST);
	if (err == -EEXIST) {
		struct lt_fd_val *old = bpf_map_lookup_elem(&fds, &k);

		/*
		 * The number is open again without a close we saw.  Within one image, retire
		 * the old record; a record of an image that exec'd away stays charged to it
		 * (its numbers are final) and is just replaced.
		 */
		if (old && old->gen == gen)
			lt_fd_release(tgid, fd);
		else if (old)
			share_put(p, LT_SHARE_FD);	/* replaced: the old record's share */
		err = bpf_map_update_elem(&fds, &k, &v, BPF_ANY);
	}
	if (err) {
		share_put(p, LT_SHARE_FD);
		share_lost(p, LT_SHARE_FD, LT_DROP_FD_MAP_FULL);
		return 0;
	}
	site_add(s, 0, now);
	bump(&counters, LT_CNT_FD_EVENTS);
	return 0;
}

#define RANGE_MAX 32	/* descriptors one close_range() releases here; /proc repairs more */

/* On the stack: bpf_for_each_map_elem wants its context there. */
struct range_buf {
	__s32 fd[RANGE_MAX];
	__u32 n;
	__u32 tgid;
	__u32 first;
	__u32 last;
};

/* bpf_for_each_map_elem callback: collect this process's descriptors in the range. */
static long collect_in_range(struct bpf_map *map, struct lt_fd_key *k, struct lt_fd_val *v,
			     struct range_buf *rb)
{
	__u32 n = rb->n;

	if (k->tgid != rb->tgid || (__u32)k->fd < rb->first || (__u32)k->fd > rb->last)
		return 0;
	if (n >= RANGE_MAX)
		return 1;
	rb->fd[n] = k->fd;
	rb->n = n + 1;
	return 0;
}

/* close_range(first, last): release the tracked descriptors in [first, last]. */
static __always_inline void release_range(__u32 tgid, __u32 first, __u32 last)
{
	struct range_buf rb = { .tgid = tgid, .first = first, .last = last };

	bpf_for_each_map_elem(&fds, collect_in_range, &rb, 0);
	for (__u32 i = 0; i < RANGE_MAX; i++) {
		if (i >= rb.n)
			break;
		lt_fd_release(tgid, rb.fd[i]);
	}
}

/* Descriptors passed with SCM_RIGHTS in the msghdr at user address msg. */
static __always_inline void record_scm_rights(__u32 tgid, __u64 gen, __u64 hash, __u64 msg,
					      __u64 now)
{
	struct user_msghdr mh;
	__u64 at, end;

	if (bpf_probe_read_user(&mh, sizeof(mh), (void *)msg) || !mh.msg_control)
		return;
	at = (__u64)mh.msg_control;
	end = at + mh.msg_controllen;
	for (int c = 0; c < MAX_CMSGS; c++) {
		struct cmsghdr ch;
		__u32 n;

		if (at + sizeof(ch) > end)
			break;
		if (bpf_probe_read_user(&ch, sizeof(ch), (void *)at) || ch.cmsg_len < sizeof(ch))
			break;
		if (ch.cmsg_level == SOL_SOCKET && ch.cmsg_type == SCM_RIGHTS) {
			n = (ch.cmsg_len - sizeof(ch)) / sizeof(int);
			for (__u32 i = 0; i < LT_MAX_SCM_FDS; i++) {
				int fd;

				if (i >= n)
					break;
				if (bpf_probe_read_user(&fd, sizeof(fd),
							(void *)(at + sizeof(ch) + i * sizeof(int))))
					break;
				lt_fd_record(tgid, gen, hash, fd, now);
			}
		}
		at += (ch.cmsg_len + 7) & ~7ULL;
	}
}

/*
 * The entry of syscall nr with its first four arguments (args): keep them for the exit, for
 * a traced process and a syscall the table classifies.
 */
static __always_inline int syscall_enter(__u64 nr, const __u64 *args)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct lt_sysargs sa = {};
	struct lt_proc *p;

	if (nr >= LT_MAX_SYSCALL || cfg_fd_class[nr] == LT_FDC_NONE)
		return 0;
	/* leaktop's own (reading /proc): never traced, counted; the exit finds no sysargs. */
	if (is_self(id >> 32, LT_CNT_SELF_SYSCALLS))
		return 0;
	p = proc_of(id >> 32);
	if (!p)
		return 0;
	sa.nr = nr;
	sa.gen = p->gen;
	sa.args[0] = args[0];
	sa.args[1] = args[1];
	sa.args[2] = args[2];
	sa.args[3] = args[3];
	if (cfg_fd_class[nr] == LT_FDC_BRK) {
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();

		sa.args[1] = BPF_CORE_READ(task, mm, brk);
	}
	/* What an unmap will cut, while the mappings are still there to look at. */
	if (cfg_fd_class[nr] == LT_FDC_MUNMAP) {
		lt_unmap_hint(&sa, sa.args[0], sa.args[0] + page_up(sa.args[1]));
		if (sa.hint == LT_UNMAP_HINT_NONE)
			return 0;	/* no record of ours can be there */
	}
	if (cfg_fd_class[nr] == LT_FDC_MMAP && (sa.args[3] & LT_MAP_FIXED))
		lt_unmap_hint(&sa, sa.args[0], sa.args[0] + page_up(sa.args[1]));
	sa.active = 1;
	if (bpf_map_update_elem(&sysargs, &id, &sa, BPF_ANY))
		drop(LT_DROP_INFLIGHT_FULL);
	return 0;
}

/* The user registers a stack capture starts from, out of the syscall's struct pt_regs. */
static __always_inline void uregs_of(struct lt_uregs *u, struct pt_regs *regs)
{
	u->ip = BPF_CORE_READ(regs, ip);
	u->sp = BPF_CORE_READ(regs, sp);
	u->bp = BPF_CORE_READ(regs, bp);
}

/* The exit of syscall nr with ret, its user registers at regs (a struct pt_regs). */
static __always_inline int syscall_exit(__u64 nr, long ret, struct pt_regs *regs)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	struct lt_uregs u;
	struct lt_sysargs *sa;
	struct lt_sysargs a;
	__u64 now, hash;
	__u8 cls;
	int pair[2];

	/* Most syscalls are none of leaktop's: known from the number, without a map lookup. */
	if (nr >= LT_MAX_SYSCALL || cfg_fd_class[nr] == LT_FDC_NONE)
		return 0;
	sa = bpf_map_lookup_elem(&sysargs, &id);
	if (!sa)
		return 0;
	a = *sa;
	bpf_map_delete_elem(&sysargs, &id);
	if (ret < 0 || a.nr != nr)
		return 0;
	cls = cfg_fd_class[a.nr];
	if (cls >= LT_FDC_MMAP) {
		uregs_of(&u, regs);
		lt_mmap_exit(&a, ret, &u);
		return 0;
	}
	now = bpf_ktime_get_ns();

	switch (cls) {
	case LT_FDC_CLOSE:
		if (ret == 0)
			lt_fd_release(tgid, (__s32)a.args[0]);
		return 0;
	case LT_FDC_CLOSE_RANGE:
		/* CLOSE_RANGE_CLOEXEC only marks them: exec will close them (a new image). */
		if (ret == 0 && !(a.args[2] & 4))
			release_range(tgid, a.args[0], a.args[1]);
		return 0;
	case LT_FDC_FCNTL:
		if (a.args[1] != F_DUPFD && a.args[1] != F_DUPFD_CLOEXEC)
			return 0;
		break;
	case LT_FDC_SIGNALFD:
		if ((int)a.args[0] != -1)
			return 0;
		break;
	case LT_FDC_DUP2:
		if (a.args[0] == a.args[1])
			return 0;
		/* dup2 onto an open descriptor closes it first. */
		lt_fd_release(tgid, (__s32)a.args[1]);
		break;
	case LT_FDC_RECVMMSG:
	case LT_FDC_RECVMSG:
		if (ret == 0 && cls == LT_FDC_RECVMMSG)
			return 0;
		break;
	default:
		break;
	}

	uregs_of(&u, regs);
	hash = lt_syscall_stack(&u, LT_FD_SALT);
	switch (cls) {
	case LT_FDC_PAIR_ARG0:
	case LT_FDC_PAIR_ARG3:
		if (bpf_probe_read_user(pair, sizeof(pair),
					(void *)a.args[cls == LT_FDC_PAIR_ARG0 ? 0 : 3]))
			return 0;
		lt_fd_record(tgid, a.gen, hash, pair[0], now);
		lt_fd_record(tgid, a.gen, hash, pair[1], now);
		break;
	case LT_FDC_RECVMSG:
		record_scm_rights(tgid, a.gen, hash, a.args[1], now);
		break;
	case LT_FDC_RECVMMSG:
		for (int i = 0; i < MAX_MMSGS; i++) {
			if (i >= ret)
				break;
			/* struct mmsghdr: a user_msghdr then an unsigned int, padded to 64 bytes. */
			record_scm_rights(tgid, a.gen, hash,
					  a.args[1] + i * (sizeof(struct user_msghdr) + 8), now);
		}
		break;
	default:
		lt_fd_record(tgid, a.gen, hash, (__s32)ret, now);
		break;
	}
	return 0;
}

/*
 * The per-syscall tracepoints (syscalls:sys_enter_NAME, sys_exit_NAME), one program for all
 * of them, attached to each syscall the table classifies: other syscalls run nothing of
 * ours.  The record the kernel hands a BPF program there: a pointer to (kernel) registers
 * where the common fields would be, the syscall number, then the arguments or the result.
 * Arguments past the syscall's own are not filled in (none is used), and a program may not
 * load them.  ia32 syscalls do not fire these tracepoints at all.
 */
struct lt_sc_enter_rec {
	__u64 kregs;
	__s32 nr;
	__u32 pad;
	__u64 args[6];
};

struct lt_sc_exit_rec {
	__u64 kregs;
	__s32 nr;
	__u32 pad;
	__s64 ret;
};

SEC("tracepoint")
int lt_sc_enter(struct lt_sc_enter_rec *ctx)
{
	__u64 args[4];

	if (sc_off)
		return 0;
	/*
	 * Copied, not loaded: the kernel refuses a program that loads past the record of the
	 * syscall it attaches to (a record holds the syscall's own arguments; the rest of the
	 * copy is the kernel's stack, and unused).
	 */
	if (bpf_probe_read_kernel(args, sizeof(args), ctx->args))
		return 0;
	return syscall_enter((__u32)ctx->nr, args);
}

SEC("tracepoint")
int lt_sc_exit(struct lt_sc_exit_rec *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());

	if (sc_off)
		return 0;
	return syscall_exit((__u32)ctx->nr, ctx->ret, regs);
}

/* thread_info.status bit of a task inside an ia32 syscall (arch/x86/include/asm/thread_info.h) */
#define LT_TS_COMPAT	0x0002

/*
 * The fallback where the per-syscall tracepoints cannot be had (no tracefs): the raw
 * tracepoints, attached by name, which run for every syscall of every process.
 */
SEC("raw_tracepoint/sys_enter")
int lt_sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
	__u64 nr = ctx->args[1], args[4];

	/*
	 * An ia32 syscall (a 32-bit program, or int $0x80): its number is from the i386 table
	 * and its arguments are in other registers.  Not classified with the x86-64 table:
	 * skipped, and counted for the processes leaktop traces.
	 */
	if (BPF_CORE_READ(bpf_get_current_task_btf(), thread_info.status) & LT_TS_COMPAT) {
		if (proc_of(bpf_get_current_pid_tgid() >> 32))
			bump(&counters, LT_CNT_COMPAT_SKIPPED);
		return 0;
	}
	if (nr >= LT_MAX_SYSCALL || cfg_fd_class[nr] == LT_FDC_NONE)
		return 0;
	args[0] = BPF_CORE_READ(regs, di);
	args[1] = BPF_CORE_READ(regs, si);
	args[2] = BPF_CORE_READ(regs, dx);
	args[3] = BPF_CORE_READ(regs, r10);
	return syscall_enter(nr, args);
}

SEC("raw_tracepoint/sys_exit")
int lt_sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];

	return syscall_exit(BPF_CORE_READ(regs, orig_ax), ctx->args[1], regs);
}

/*
 * Empty programs where leaktop's go, attached by `make bench` to measure the floor: on the
 * raw tracepoints (--probe-floor entry: what every syscall of every process would pay) and
 * on the per-syscall ones (--probe-floor planned).
 */
SEC("raw_tracepoint/sys_enter")
int floor_sys_enter(void *ctx)
{
	return 0;
}

SEC("raw_tracepoint/sys_exit")
int floor_sys_exit(void *ctx)
{
	return 0;
}

SEC("tracepoint")
int floor_sc_enter(void *ctx)
{
	return 0;
}

SEC("tracepoint")
int floor_sc_exit(void *ctx)
{
	return 0;
}
