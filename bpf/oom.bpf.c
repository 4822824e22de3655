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
	 * Linux 6.8 and later pass the victim's task_struct (and its uid); before, its pid,
	 * which the kernel picks among thread group leaders: taken as the tgid.
	 */
	if (bpf_core_field_exists(struct trace_event_raw_mark_victim, __data_loc_comm)) {
		struct task_struct *task = (struct task_struct *)ctx->args[0];

		tgid = BPF_CORE_READ(task, tgid);
	} else {
		tgid = (__u32)ctx->args[0];
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
