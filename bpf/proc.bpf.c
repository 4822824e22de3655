// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * proc.bpf.c - the maps and settings every concern shares, and the process lifecycle.
 *
 * Raw tracepoints (attached by name: no tracefs needed) follow fork, exec and exit of
 * traced processes: children join the traced set when asked (`-- CMD`), an exec starts a new
 * image (a new `gen`, so the old program's sites and records never mix with the new one's)
 * and an exit forgets the process.  Userspace hears of each through the ring buffer and
 * purges the dead records.
 *
 * Exec stops (-p and --, cfg_exec_stop): the new program's allocator may be one no probe
 * covers yet (an LD_PRELOAD, a static program, another libc), and ld.so runs its first
 * allocations long before the next interval.  So the exec'ing process is held with SIGSTOP,
 * delivered before the new image's first instruction, and userspace, woken by the event,
 * attaches what it needs and sends SIGCONT.  Not held: an executable userspace found needs
 * nothing new (exec_plain) exec'd with neither LD_PRELOAD nor LD_LIBRARY_PATH in its
 * environment, a traced (ptrace) process, and any exec whose event or record cannot be
 * made: a process is only ever stopped when userspace is sure to hear of it.
 */
#include "common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 cfg_filter = LT_FILTER_ALL;
const volatile __u32 cfg_self_tgid;
const volatile __u32 cfg_follow_fork;
const volatile __u32 cfg_stack_depth = LT_DEFAULT_STACK_DEPTH;
const volatile __u32 cfg_unwind_cfi;
const volatile __u64 cfg_share_max[LT_SHARE__COUNT];
const volatile __u32 cfg_exec_stop;
/* Userspace clears it at teardown, before it releases the processes still held. */
volatile __u32 exec_stop_on;

struct lt_procs_map procs SEC(".maps");
struct lt_thread_map thread_tgid SEC(".maps");
struct lt_share_purges_map share_purges SEC(".maps");
struct lt_sites_map sites SEC(".maps");
struct lt_stacks_map stacks SEC(".maps");
/* bpf/syscall.bpf.c's; here, the first object linked, with the other shared maps (lt_exit
 * uses it). */
struct lt_sysargs_map sysargs SEC(".maps");
struct lt_percpu_u64_map drops SEC(".maps");
struct lt_percpu_u64_map counters SEC(".maps");
struct lt_gen_map gen_counter SEC(".maps");
struct lt_scratch_map stack_scratch SEC(".maps");
struct lt_events_map events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LT_MAX_EXEC_PLAIN);
	__type(key, struct lt_exec_key);
	__type(value, __u8);
} exec_plain SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LT_MAX_EXEC_STOPPED);
	__type(key, __u32);
	__type(value, __u64);
} exec_stopped SEC(".maps");

#define LT_EXEC_SIGSTOP		19
#define LT_ELFCLASS32		1
/* Environment read per step, and steps at most (512 KiB): past that, held to be sure. */
#define ENV_CHUNK		128
#define ENV_STEPS		4096

struct env_scan {
	__u64 pos, end;
	__u32 left;			/* strings not read yet */
	__u32 at_start;			/* pos is at the start of a string */
	__u32 found;			/* LD_PRELOAD= or LD_LIBRARY_PATH=, or unreadable */
	__u32 done;
};

static __always_inline bool has_prefix(const char *buf, const char *pre, int len)
{
	bool same = true;

#pragma unroll
	for (int i = 0; i < len; i++)
		same &= buf[i] == pre[i];
	return same;
}

/* One piece of the new environment: a whole string, or ENV_CHUNK - 1 bytes of a long one. */
static long env_step(__u64 i, void *ctx)
{
	struct env_scan *s = ctx;
	char buf[ENV_CHUNK];
	long n;

	if (!s->left || s->pos >= s->end) {
		s->done = 1;
		return 1;
	}
	n = bpf_probe_read_user_str(buf, sizeof(buf), (const void *)s->pos);
	if (n <= 0) {
		s->found = 1;
		return 1;
	}
	if (s->at_start && (has_prefix(buf, "LD_PRELOAD=", 11) ||
			    has_prefix(buf, "LD_LIBRARY_PATH=", 16))) {
		s->found = 1;
		return 1;
	}
	if (n < ENV_CHUNK) {
		s->pos += n;
		s->at_start = 1;
		s->left--;
	} else {
		s->pos += n - 1;	/* the copy's last byte is its NUL: read on from there */
		s->at_start = 0;
	}
	return 0;
}

/* Does this exec need userspace to look before the program runs? */
static __always_inline bool exec_needs_look(struct task_struct *task, struct linux_binprm *bprm,
					     const struct lt_exec_key *key)
{
	struct env_scan s = { .at_start = 1 };

	if (!bpf_map_lookup_elem(&exec_plain, key))
		return true;
	s.pos = BPF_CORE_READ(task, mm, env_start);
	s.end = BPF_CORE_READ(task, mm, env_end);
	s.left = BPF_CORE_READ(bprm, envc);
	bpf_loop(ENV_STEPS, env_step, &s, 0);
	return s.found || !s.done;
}

/* Hold the exec'ing process (SIGSTOP before its first instruction), recorded first. */
static __always_inline bool exec_hold(struct task_struct *task, __u32 tgid)
{
	__u64 now = bpf_ktime_get_ns();

	/* A tracer would take the stop as a signal to pass on: left alone. */
	if (BPF_CORE_READ(task, ptrace))
		return false;
	if (bpf_map_update_elem(&exec_stopped, &tgid, &now, BPF_ANY))
		return false;
	if (bpf_send_signal(LT_EXEC_SIGSTOP)) {
		bpf_map_delete_elem(&exec_stopped, &tgid);
		return false;
	}
	return true;
}

/*
 * Exit stops (`leaktop check`): lt_exit_stop sits on the C library's _exit (every exit() ends
 * there, after the atexit handlers and destructors, before the exit_group that frees the
 * memory).  A traced process that gets there is held with SIGSTOP, recorded in exit_stopped
 * and, for the guard's sake, in exec_stopped with a time EXIT_HOLD_EXTRA_NS ahead, so that a
 * leaktop that stalls or dies lets it exit (a SIGSTOP sent at sys_enter_exit_group would never
 * be taken: that syscall does not return to user mode).
 */
volatile __u32 exit_stop_on;
#define LT_EXIT_HOLD_EXTRA_NS	(4ull * 1000000000ull)

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LT_MAX_EXEC_STOPPED);
	__type(key, __u32);
	__type(value, __u64);
} exit_stopped SEC(".maps");

SEC("uprobe")
int lt_exit_stop(struct pt_regs *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct task_struct *task;
	__u64 at;

	if (!exit_stop_on || !exec_stop_on || !bpf_map_lookup_elem(&procs, &tgid))
		return 0;
	task = (struct task_struct *)bpf_get_current_task();
	/* A tracer would take the stop as a signal to pass on: left alone. */
	if (BPF_CORE_READ(task, ptrace))
		return 0;
	at = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&exit_stopped, &tgid, &at, BPF_NOEXIST))
		return 0;
	at += LT_EXIT_HOLD_EXTRA_NS;
	if (bpf_map_update_elem(&exec_stopped, &tgid, &at, BPF_ANY))
		goto undo;
	if (bpf_send_signal(LT_EXEC_SIGSTOP)) {
		bpf_map_delete_elem(&exec_stopped, &tgid);
		goto undo;
	}
	return 0;
undo:
	bpf_map_delete_elem(&exit_stopped, &tgid);
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
	struct lt_exec_key key = {};
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
	/*
	 * A 32-bit program (the header of the file exec loaded last, an interpreter's for a
	 * script): its syscalls are ia32 ones, which the per-syscall tracepoints never see.
	 */
	if (BPF_CORE_READ(bprm, buf[4]) == LT_ELFCLASS32 && BPF_CORE_READ(bprm, buf[0]) == 0x7f &&
	    BPF_CORE_READ(bprm, buf[1]) == 'E')
		bump(&counters, LT_CNT_COMPAT_IMAGES);
	ev = event_begin(LT_EV_EXEC, tgid, 0, old_gen, p->gen);
	if (!ev)
		return 0;
	ev->start_code = BPF_CORE_READ(task, mm, start_code);
	ev->end_code = BPF_CORE_READ(task, mm, end_code);
	ev->exe_dev = BPF_CORE_READ(bprm, file, f_inode, i_sb, s_dev);
	ev->exe_ino = BPF_CORE_READ(bprm, file, f_inode, i_ino);
	bpf_probe_read_kernel_str(ev->exe, sizeof(ev->exe), BPF_CORE_READ(bprm, filename));
	key.dev = ev->exe_dev;
	key.ino = ev->exe_ino;
	/* The event is reserved: userspace will hear of the stop (it wakes at once). */
	if (cfg_exec_stop && exec_stop_on && exec_needs_look(task, bprm, &key) &&
	    exec_hold(task, tgid)) {
		ev->ppid = LT_EXEC_STOPPED;
		bpf_ringbuf_submit(ev, BPF_RB_FORCE_WAKEUP);
		return 0;
	}
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
