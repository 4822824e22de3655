// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * proc.bpf.c - the maps and settings every concern shares, and the process lifecycle.
 *
 * Raw tracepoints (attached by name: no tracefs needed) follow fork, exec and exit of
 * traced processes: children join the traced set when asked (`-- CMD`), an exec starts a new
 * image (a new `gen`, so the old program's sites and records never mix with the new one's)
 * and an exit forgets the process.  Userspace hears of each through the ring buffer and
 * purges the dead records.
 */
#include "common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 cfg_filter = LT_FILTER_ALL;
const volatile __u32 cfg_self_tgid;
const volatile __u32 cfg_follow_fork;
const volatile __u32 cfg_stack_depth = LT_DEFAULT_STACK_DEPTH;
const volatile __u32 cfg_unwind_cfi;
const volatile __u64 cfg_share_max[LT_SHARE__COUNT];

struct lt_procs_map procs SEC(".maps");
struct lt_thread_map thread_tgid SEC(".maps");
struct lt_share_purges_map share_purges SEC(".maps");
struct lt_sites_map sites SEC(".maps");
struct lt_stacks_map stacks SEC(".maps");
/* bpf/fd.bpf.c's; here, the first object linked, with the other shared maps (lt_exit uses it). */
struct lt_sysargs_map sysargs SEC(".maps");
struct lt_percpu_u64_map drops SEC(".maps");
struct lt_percpu_u64_map counters SEC(".maps");
struct lt_gen_map gen_counter SEC(".maps");
struct lt_scratch_map stack_scratch SEC(".maps");
struct lt_events_map events SEC(".maps");

SEC("raw_tracepoint/sched_process_fork")
int lt_fork(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *parent = (struct task_struct *)ctx->args[0];
	struct task_struct *child = (struct task_struct *)ctx->args[1];
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	__u32 cpid = BPF_CORE_READ(child, pid);
	struct lt_proc np = {};

	/* New threads share the image; only new processes matter (and, for the OOM killer of
	 * kernels before 6.8, which process a thread is). */
	if (cpid != ctgid && LT_OOM_BY_TID)
		bpf_map_update_elem(&thread_tgid, &cpid, &ctgid, BPF_ANY);
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
	struct task_struct *task = (struct task_struct *)ctx->args[0];
	struct linux_binprm *bprm = (struct linux_binprm *)ctx->args[2];
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct lt_proc *p = bpf_map_lookup_elem(&procs, &tgid);
	struct lt_event *ev;
	__u64 old_gen;

	if (!p)
		return 0;
	old_gen = p->gen;
	p->gen = next_gen();
	p->start_ns = bpf_ktime_get_ns();
	p->alloc_text_start = 0;	/* the new image maps its own libc */
	p->alloc_text_end = 0;
	p->heap_calls = 0;
	p->brk_top = 0;			/* a new break, and no mapping records yet */
	p->has_mmaps = 0;
	/* The old image's heap, mapping and site records are its own (purged with it); its
	 * descriptors live on, still counted. */
	p->share_held[LT_SHARE_HEAP] = 0;
	p->share_held[LT_SHARE_MMAP] = 0;
	p->share_held[LT_SHARE_SITE] = 0;
	for (int i = 0; i < LT_SHARE__COUNT; i++)
		p->share_drops[i] = 0;
	p->purged_heap = 0;
	p->purged_sites = 0;
	ev = event_begin(LT_EV_EXEC, tgid, 0, old_gen, p->gen);
	if (!ev)
		return 0;
	ev->start_code = BPF_CORE_READ(task, mm, start_code);
	ev->end_code = BPF_CORE_READ(task, mm, end_code);
	ev->exe_dev = BPF_CORE_READ(bprm, file, f_inode, i_sb, s_dev);
	ev->exe_ino = BPF_CORE_READ(bprm, file, f_inode, i_ino);
	bpf_probe_read_kernel_str(ev->exe, sizeof(ev->exe), BPF_CORE_READ(bprm, filename));
	bpf_ringbuf_submit(ev, 0);
	return 0;
}

SEC("raw_tracepoint/sched_process_exit")
int lt_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	struct lt_proc *p;
	__u64 gen;

	/*
	 * A thread ending inside a syscall (exit_group from another thread, a fatal signal) never
	 * reaches its sys_exit, nor does one whose syscall number a tracer changed: its entry
	 * would stay for good.
	 */
	bpf_map_delete_elem(&sysargs, &id);
	if (LT_OOM_BY_TID) {
		__u32 tid = (__u32)id;

		bpf_map_delete_elem(&thread_tgid, &tid);
	}
	/* The last thread out takes the process with it. */
	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return 0;
	p = bpf_map_lookup_elem(&procs, &tgid);
	if (!p)
		return 0;
	gen = p->gen;
	bpf_map_delete_elem(&procs, &tgid);
	bpf_map_delete_elem(&share_purges, &tgid);
	emit(LT_EV_EXIT, tgid, 0, gen, 0);
	return 0;
}
