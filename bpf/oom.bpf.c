// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * oom.bpf.c - OOM-killer victims: the raw tracepoint oom:mark_victim (attached by name, no
 * tracefs) tells userspace which watched process the kernel is about to kill, while its
 * records are all still in the maps, so it can write that process's snapshot at once.
 *
 * Watched is what every other program traces: the whole system but leaktop (a victim not
 * seen before becomes a traced image here), or the processes in `procs` (-p, --).
 */
#include "common.bpf.h"

SEC("raw_tracepoint/mark_victim")
int lt_oom(struct bpf_raw_tracepoint_args *ctx)
{
	struct lt_proc *p;
	__u32 tgid;

	/*
	 * Linux 6.8 and later pass the victim's task_struct (and its uid); before, the pid of
	 * the thread find_lock_task_mm() picked, a thread other than the leader when the
	 * leader has exited: a thread made while leaktop runs is mapped to its process
	 * (thread_tgid, kept by bpf/proc.bpf.c on those kernels only), else the id is taken
	 * as the process's.
	 */
	if (!LT_OOM_BY_TID) {
		struct task_struct *task = (struct task_struct *)ctx->args[0];

		tgid = BPF_CORE_READ(task, tgid);
	} else {
		__u32 tid = (__u32)ctx->args[0];
		__u32 *owner = bpf_map_lookup_elem(&thread_tgid, &tid);

		tgid = owner ? *owner : tid;
	}
	if (tgid == cfg_self_tgid)
		return 0;
	p = proc_of(tgid);
	if (!p)
		return 0;
	bump(&counters, LT_CNT_OOM_VICTIMS);
	emit(LT_EV_OOM, tgid, 0, 0, p->gen);
	return 0;
}
