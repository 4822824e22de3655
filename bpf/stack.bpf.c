// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * stack.bpf.c - user stacks: the frame-pointer walk every probe's capture shares, and the
 * restoring of a stack the collector deleted under a new site.
 *
 * Stock distribution binaries keep no frame pointers: %rbp then holds anything, and a naive
 * walk reads text or heap data as return addresses, each garbage variant a separate site.
 * Here a return address counts only if the bytes before it encode a call (the decoder fd.bpf.c
 * uses to find a wrapper's caller, common.bpf.h) and it lies in an executable mapping of a
 * file (bpf_find_vma); the walk stops at the first frame that fails, so a site's stack hash
 * covers validated frames only and sites that differed by garbage are one.  A frame in the
 * same mapping as the frame before it is accepted without another vma lookup.
 *
 * Global functions, linked with the programs that call them: the verifier checks each once.
 */
#include "common.bpf.h"

/* Code a walk accepts without a vma lookup: executable file mappings known to it. */
struct lt_text_cache {
	__u64 exe_start, exe_end;	/* the main executable's code (mm->start_code, end_code) */
	__u64 known_start, known_end;	/* the caller's (the allocator's libc), or 0 */
	__u64 last_start, last_end;	/* the mapping of the last return address looked up */
};

/*
 * Is ret a return address into this process's code: right after a call instruction, in an
 * executable mapping of a file (a module)?  Addresses in the main executable, in the known
 * mapping, or in the same mapping as the last one looked up cost no vma lookup.
 */
static __always_inline bool is_return_address(__u64 ret, struct lt_text_cache *text)
{
	struct lt_vma v;
	__s32 disp;
	long err;

	if (call_before(ret, &disp) == LT_CALL_NONE)
		return false;
	if ((ret >= text->exe_start && ret < text->exe_end) ||
	    (ret >= text->known_start && ret < text->known_end) ||
	    (ret >= text->last_start && ret < text->last_end))
		return true;
	err = vma_at(ret, &v);
	/*
	 * Another thread holds the mapping lock (it maps or unmaps): the call before ret is all
	 * there is to go on.  Stopping here would split the site on a stack one frame short.
	 */
	if (err == -LT_EBUSY) {
		bump(&counters, LT_CNT_WALK_LOCK_BUSY);
		return true;
	}
	if (err || !(v.flags & VM_EXEC) || !v.file)
		return false;
	text->last_start = v.start;
	text->last_end = v.end;
	return true;
}

/*
 * Walk the user stack by frame pointers from w->ip (the first frame) and w->bp, a frame
 * pointer at or above w->floor (the stack pointer), into st; returns the number of frames.
 * At a return probe the registers are the caller's: the IP is the allocating call site and
 * %rbp the caller's frame.  Unlike the kernel's walker this stops at the end of the chain (a
 * null, misaligned or non-ascending frame pointer) instead of faulting on it, which costs more
 * than the whole walk.  Code built without frame pointers leaves anything in %rbp, so a return
 * address is kept only if it follows a call and lies in an executable file mapping; the walk
 * stops at the first that does not (counted: LT_CNT_STACK_TRUNCATED), and a stack never holds
 * garbage.
 */
__u32 lt_walk_user_stack(const struct lt_walk *w, struct lt_stack *st)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct {
		__u64 next;
		__u64 ret;
	} frame;
	struct lt_text_cache text = {};
	__u64 bp, floor;
	__u32 n = 1, depth;

	if (!w || !st)
		return 0;
	bp = w->bp;
	floor = w->floor;
	depth = w->depth;
	text.known_start = w->text_start;
	text.known_end = w->text_end;
	text.exe_start = BPF_CORE_READ(task, mm, start_code);
	text.exe_end = BPF_CORE_READ(task, mm, end_code);
	st->ips[0] = w->ip;
	for (__u32 i = 1; i < LT_MAX_STACK_DEPTH; i++) {
		if (i >= depth || !bp || (bp & 7) || bp < floor)
			break;
		if (bpf_probe_read_user(&frame, sizeof(frame), (void *)bp) || !frame.ret)
			break;
		if (!is_return_address(frame.ret, &text)) {
			bump(&counters, LT_CNT_STACK_TRUNCATED);
			break;
		}
		st->ips[i] = frame.ret;
		n = i + 1;
		floor = bp + sizeof(frame);
		bp = frame.next;
	}
	return n;
}

/*
 * A new site uses stack `hash`, which this program interned from the scratch buffer.  The
 * collector may have deleted that stack meanwhile, if no site used it (a dead image's).  It
 * deletes first and then reads the sites map, putting back the stacks a site uses; here the
 * site is made first (under its bucket's lock, a full barrier) and the stack checked next.
 * Whichever side comes second sees the other's change, so no site is left without its
 * stack: put it back from the scratch buffer if it still holds these frames.
 */
int lt_keep_stack(__u64 hash, __u32 kind)
{
	struct lt_stack *st;
	long err;
	__u64 h;

	if (!hash || bpf_map_lookup_elem(&stacks, &hash))
		return 0;
	st = stack_buf();
	if (!st)
		return 0;
	/* Another program on this CPU may have used the buffer since: then the frames differ. */
	h = stack_hash_of(st, st->nr) ^ kind_salt(kind);
	if ((h ? h : 1) != hash)
		return 0;
	err = bpf_map_update_elem(&stacks, &hash, st, BPF_NOEXIST);
	if (err && err != -EEXIST)
		drop(LT_DROP_STACK_MAP_FULL);
	return 0;
}
