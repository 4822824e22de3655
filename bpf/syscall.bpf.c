// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * syscall.bpf.c - the syscall programs of the descriptor and mapping concerns, in the kernel.
 *
 * The per-syscall tracepoints syscalls:sys_enter_NAME and sys_exit_NAME of the syscalls a
 * table in rodata classifies (cfg_fd_class, filled by the loader from user/live/fdsys.c: how
 * each creates or closes descriptors, or maps memory), one program each side for all of
 * them: the entry keeps the arguments of traced threads (sysargs), the exit hands them and
 * the result to the syscall's concern (bpf/fd.bpf.c's lt_fd_exit, bpf/mmap.bpf.c's
 * lt_mmap_exit), and a syscall outside the table runs nothing of ours.  Where tracefs cannot
 * be had (their ids are read there), the raw tracepoints sys_enter/sys_exit instead, which
 * run for every syscall of every process (one outside the table costs an array read there).
 */
#include "common.bpf.h"

const volatile __u8 cfg_fd_class[LT_MAX_SYSCALL];
/* Set at teardown: the per-syscall programs do nothing while their events are closed. */
volatile __u32 sc_off;

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

/* The exit of syscall nr with ret, its user registers at regs (a struct pt_regs): the
 * arguments kept at the entry go to the concern of the syscall's class. */
static __always_inline int syscall_exit(__u64 nr, long ret, struct pt_regs *regs)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct lt_uregs u;
	struct lt_sysargs *sa;
	struct lt_sysargs a;

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
	uregs_of(&u, regs);
	if (cfg_fd_class[a.nr] >= LT_FDC_MMAP)
		lt_mmap_exit(&a, ret, &u);
	else
		lt_fd_exit(&a, ret, &u);
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
