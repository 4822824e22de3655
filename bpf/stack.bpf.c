// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * stack.bpf.c - user stacks: the walk every probe's capture shares (by the modules' CFI
 * tables, or by frame pointers), and the restoring of a stack the collector deleted under a
 * new site.
 *
 * Stock distribution binaries keep no frame pointers: %rbp then holds anything, and a naive
 * walk reads text or heap data as return addresses, each garbage variant a separate site.
 * With --unwind cfi each step follows the row of its module's .eh_frame table that covers
 * the pc (user/live/cfi.c builds them, user/live/unwind_store.c places them), falling back
 * to the frame pointer for that step only where the module has no table or no row.  Either
 * way a return address counts only if the bytes before it encode a call (the decoder
 * sysstack.bpf.c uses to find a wrapper's caller, common.bpf.h) and it lies in an executable
 * mapping of a file (bpf_find_vma); the walk stops at the first frame that fails, so a
 * site's stack hash covers validated frames only and sites that differed by garbage are one.
 *
 * Global functions, linked with the programs that call them: the verifier checks each once.
 */
#include "common.bpf.h"

#define LT_UW_SKIP_MAX	8	/* frames a syscall's library may keep before its caller */

/* The unwind tables (bpf/leaktop.h); only this file reads them. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, LT_UNWIND_ROWS);	/* the loader sets the run's capacity */
	__type(key, __u32);
	__type(value, struct lt_unwind_row);
} unwind_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LT_MAX_UNWIND_OBJECTS);
	__type(key, struct lt_unwind_key);
	__type(value, struct lt_unwind_obj);
} unwind_objects SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LT_MAX_UNWIND_WANTED);
	__type(key, struct lt_unwind_key);
	__type(value, struct lt_unwind_want);
} unwind_wanted SEC(".maps");

/* Add v to a per-CPU counter (bump() adds 1). */
static __always_inline void count(__u32 idx, __u64 v)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &idx);

	if (c && v)
		*c += v;
}

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
static __always_inline __u32 fp_walk(const struct lt_walk *w, struct lt_stack *st)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct {
		__u64 next;
		__u64 ret;
	} frame;
	struct lt_text_cache text = {};
	__u64 bp, floor;
	__u32 n = 1, depth;

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
	count(LT_CNT_UNWIND_FP_FRAMES, n - 1);
	return n;
}

/*
 * CFI unwinding.  Each step takes the state (pc, rsp, rbp) of one frame to its caller's: the
 * module mapped at pc (bpf_find_vma; the last two are kept), its table's row for pc (binary
 * search in unwind_rows), then the CFA, the return address at CFA - 8 and the caller's rbp as
 * the row says; the caller's rsp is the CFA.  A pc after the first is a return address, so
 * its row is the one of pc - 1 (the call, which may be a function's last instruction).  Where
 * a module has no table, or no row for pc, the step is a frame-pointer step, as in fp_walk;
 * where the module's table is not loaded yet, the walk asks userspace for it
 * (unwind_wanted).  Every return address must follow a call and lie in an executable file
 * mapping, however it was found (tables can be wrong, %rbp can be anything): the walk stops
 * at the first that does not, as fp_walk does.
 */
struct uw_mod {
	__u64 start, end;		/* the mapping; end 0: nothing cached */
	__u64 off_base;			/* file offset of start */
	struct lt_unwind_key key;
	__u32 first, nrows;		/* its table */
	__u32 exec_file;		/* an executable mapping of a file */
	__u32 table;			/* 1: unwind_objects has the file (nrows 0: no CFI) */
	__u64 file;			/* its struct file * as bpf_find_vma saw it; 0: unknown (a
					 * module from the cache below) */
};

struct uw_state {
	__u64 ip, sp, bp;
	__u64 skip_start, skip_end;
	struct uw_mod mod0, mod1;	/* the module of the last pc looked up, and the one before */
	__u32 depth;
	__u32 exact;			/* ip is not a return address (first frame, signal frame) */
	__u32 cfi, fp, no_table, first_cfi;
};

/*
 * The rows found last, by pc: call sites repeat, and a hit saves the binary search.  Keyed by
 * the pc and the table (its first row and size), so a pc of another object, or of a table
 * evicted and replaced, misses.  Per CPU, direct-mapped.
 */
#define UW_ROW_CACHE	256	/* a power of two */

struct uw_cached_row {
	__u64 pc;
	__u32 first, nrows;
	struct lt_unwind_row row;
};

struct uw_row_cache {
	struct uw_cached_row e[UW_ROW_CACHE];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct uw_row_cache);
} uw_row_cache SEC(".maps");

/*
 * The walk's state lives in a per-CPU map value, not on the stack: the verifier tracks what
 * is on the stack, so counters there would make each bpf_loop iteration a new state and the
 * callback would never be proven.  (Like stack_scratch, a program that preempts another on
 * the same CPU can overwrite it: then a stack is wrong, and checked like any other.)
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct uw_state);
} uw_scratch SEC(".maps");

static long uw_vma_cb(struct task_struct *task, struct vm_area_struct *vma, struct uw_mod *m)
{
	struct file *f = BPF_CORE_READ(vma, vm_file);

	m->start = BPF_CORE_READ(vma, vm_start);
	m->end = BPF_CORE_READ(vma, vm_end);
	m->off_base = BPF_CORE_READ(vma, vm_pgoff) << 12;
	m->exec_file = f && (BPF_CORE_READ(vma, vm_flags) & VM_EXEC);
	if (m->exec_file) {
		m->file = (__u64)f;
		m->key.ino = BPF_CORE_READ(f, f_inode, i_ino);
		m->key.dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
	}
	return 0;
}

/*
 * Modules found lately, by address space (the mm and its tgid, so a freed mm reused by
 * another process does not match): where the mapping lock is taken (another thread maps or
 * unmaps right then) and bpf_find_vma cannot look, the module a pc lies in is taken from
 * here, so a walk does not turn to frame pointers halfway (one stack in thousands would be
 * another site).  Shared by the CPUs: a thread's first walk on a CPU finds what its process's
 * walks on any CPU found (a per-CPU cache missed there while a new thread's stack was being
 * mapped).  Round robin; entries are written without a lock, and a range unmapped and mapped
 * again with another file since could be stale: its frames are checked like any others.
 * (A module this CPU wrote lately is not looked for again: see uw_mod_seen.)
 */
#define UW_MOD_CACHE	8

struct uw_mm_key {
	__u64 mm;
	__u32 tgid;
	__u32 pad;
};

struct uw_mod_cache {
	struct uw_mod e[UW_MOD_CACHE];
	__u32 next;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 2048);
	__type(key, struct uw_mm_key);
	__type(value, struct uw_mod_cache);
} uw_mod_cache SEC(".maps");

static const struct uw_mod_cache uw_mod_cache_empty;

/*
 * What this CPU wrote to uw_mod_cache lately, so the walks that find the same modules again
 * and again (every walk, in the steady state) skip the shared map: an array lookup, not a
 * hash lookup.  Round robin.
 */
#define UW_MOD_SEEN	16

struct uw_mod_seen {
	struct {
		struct uw_mm_key k;
		__u64 start, end, ino;
	} e[UW_MOD_SEEN];
	__u32 next;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct uw_mod_seen);
} uw_mod_seen SEC(".maps");

static __always_inline bool uw_same_mod(const struct uw_mod *a, const struct uw_mod *b)
{
	return a->start == b->start && a->end == b->end && a->key.ino == b->key.ino &&
	       a->key.dev == b->key.dev;
}

/* Put m (an executable file mapping bpf_find_vma just found) in k's recent modules. */
static __always_inline void uw_mod_remember(const struct uw_mm_key *k, const struct uw_mod *m)
{
	struct uw_mod_seen *seen;
	struct uw_mod_cache *cache;
	__u32 zero = 0, slot;
	bool same = false;

	seen = bpf_map_lookup_elem(&uw_mod_seen, &zero);
	if (!seen)
		return;
	for (int i = 0; i < UW_MOD_SEEN; i++)
		if (seen->e[i].k.mm == k->mm && seen->e[i].k.tgid == k->tgid &&
		    seen->e[i].start == m->start && seen->e[i].end == m->end &&
		    seen->e[i].ino == m->key.ino)
			return;
	slot = seen->next++ % UW_MOD_SEEN;
	if (slot < UW_MOD_SEEN) {
		seen->e[slot].k = *k;
		seen->e[slot].start = m->start;
		seen->e[slot].end = m->end;
		seen->e[slot].ino = m->key.ino;
	}
	cache = bpf_map_lookup_elem(&uw_mod_cache, k);
	if (!cache) {
		bpf_map_update_elem(&uw_mod_cache, k, &uw_mod_cache_empty, BPF_NOEXIST);
		cache = bpf_map_lookup_elem(&uw_mod_cache, k);
		if (!cache)
			return;
	}
	/* Known: nothing to write; the same start with another file: that entry. */
	slot = UW_MOD_CACHE;
	for (int i = 0; i < UW_MOD_CACHE; i++) {
		if (cache->e[i].start != m->start)
			continue;
		same = uw_same_mod(&cache->e[i], m);
		slot = i;
	}
	if (slot == UW_MOD_CACHE)
		slot = cache->next++ % UW_MOD_CACHE;
	if (!same && slot < UW_MOD_CACHE)
		cache->e[slot] = *m;
}

/* m's table as unwind_objects has it now (else asked for, by tgid). */
static __always_inline void uw_table_of(struct uw_mod *m)
{
	struct lt_unwind_want want = {};
	struct lt_unwind_obj *obj;

	m->table = 0;
	m->first = m->nrows = 0;
	if (!m->exec_file)
		return;
	obj = bpf_map_lookup_elem(&unwind_objects, &m->key);
	if (obj) {
		m->table = 1;
		m->first = obj->first;
		m->nrows = obj->nrows;
		return;
	}
	want.start = m->start;
	want.end = m->end;
	want.tgid = bpf_get_current_pid_tgid() >> 32;
	bpf_map_update_elem(&unwind_wanted, &m->key, &want, BPF_NOEXIST);
}

/*
 * The mapping at addr into *out: bpf_find_vma, or with the mapping lock taken the modules this
 * address space's walks found lately (k: its key).  0: found; 1: found in that cache (no file
 * pointer); -ENOENT (-2): nothing mapped there; -LT_EBUSY: the lock is taken and no module
 * known lately holds addr.  Inlined into its two callers (each a global function): one more
 * level of calls would be past the verifier's depth from the syscall programs.
 */
static __always_inline int lt_module_at(__u64 addr, const struct uw_mm_key *k,
					struct uw_mod *out)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct uw_mod_cache *cache;
	struct uw_mod m = {};
	long err;

	if (!out || !k)
		return -2;
	err = bpf_find_vma(task, addr, uw_vma_cb, &m, 0);
	if (err == -LT_EBUSY) {
		cache = bpf_map_lookup_elem(&uw_mod_cache, k);
		for (int i = 0; cache && i < UW_MOD_CACHE; i++) {
			if (addr < cache->e[i].start || addr >= cache->e[i].end)
				continue;
			*out = cache->e[i];
			out->file = 0;
			return 1;
		}
		return -LT_EBUSY;
	}
	if (err)
		return -2;
	*out = m;
	return 0;
}

/* This thread's address space, as the module cache knows it. */
static __always_inline struct uw_mm_key uw_mm_key_now(void)
{
	struct task_struct *task = bpf_get_current_task_btf();

	return (struct uw_mm_key){ .mm = (__u64)BPF_CORE_READ(task, mm),
				   .tgid = bpf_get_current_pid_tgid() >> 32 };
}

/*
 * The module mapped at addr into *out, with its table if unwind_objects has it (else asked
 * for); remembered for walks that meet the mapping lock taken.  0; -ENOENT: nothing mapped
 * there; -LT_EBUSY: see lt_module_at().  A global function: verified once.
 */
__noinline int lt_uw_module(__u64 addr, struct uw_mod *out)
{
	struct uw_mm_key k = uw_mm_key_now();
	struct uw_mod m = {};
	int err;

	if (!out)
		return -1;
	err = lt_module_at(addr, &k, &m);
	if (err < 0)
		return err;
	if (err == 1)
		bump(&counters, LT_CNT_WALK_LOCK_BUSY);
	uw_table_of(&m);
	if (!err && m.exec_file)
		uw_mod_remember(&k, &m);
	*out = m;
	return 0;
}

/*
 * The module mapped at addr, in s->mod0 (moved there from mod1, or looked up); NULL when no
 * mapping is there, or the mapping lock is taken (*busy set).
 */
static __always_inline struct uw_mod *uw_mod_of(struct uw_state *s, __u64 addr, bool *busy)
{
	struct uw_mod tmp;
	int err;

	if (addr >= s->mod0.start && addr < s->mod0.end)
		return &s->mod0;
	if (addr >= s->mod1.start && addr < s->mod1.end) {
		tmp = s->mod0;
		s->mod0 = s->mod1;
		s->mod1 = tmp;
		return &s->mod0;
	}
	err = lt_uw_module(addr, &tmp);
	if (err) {
		*busy = err == -LT_EBUSY;
		return NULL;
	}
	s->mod1 = s->mod0;
	s->mod0 = tmp;
	return &s->mod0;
}

/*
 * The row of m's table that covers pc into *row: 0, or -1 (none, or LT_UW_NONE).  A global
 * function: verified once.
 */
__noinline int lt_uw_row(const struct uw_mod *m, __u64 pc, struct lt_unwind_row *row)
{
	__u32 lo, hi, mid, zero = 0;
	struct uw_row_cache *cache = bpf_map_lookup_elem(&uw_row_cache, &zero);
	struct uw_cached_row *c = NULL;
	struct lt_unwind_row *r;
	__u64 off;

	if (!m || !row || !m->nrows)
		return -1;
	off = pc - m->start + m->off_base;
	if (off >> 32)
		return -1;
	if (cache) {
		c = &cache->e[(pc ^ (pc >> 11)) & (UW_ROW_CACHE - 1)];
		if (c->pc == pc && c->first == m->first && c->nrows == m->nrows) {
			*row = c->row;
			return row->kind == LT_UW_NONE ? -1 : 0;
		}
	}
	lo = m->first;
	hi = m->first + m->nrows;
	/* The last row at or below off: rows of one object number at most 2^22. */
	for (int i = 0; i < 23; i++) {
		if (lo + 1 >= hi)
			break;
		mid = lo + (hi - lo) / 2;
		r = bpf_map_lookup_elem(&unwind_rows, &mid);
		if (!r)
			return -1;
		if (r->pc <= off)
			lo = mid;
		else
			hi = mid;
	}
	r = bpf_map_lookup_elem(&unwind_rows, &lo);
	if (!r || r->pc > off)
		return -1;
	*row = *r;
	if (c) {
		c->pc = pc;
		c->first = m->first;
		c->nrows = m->nrows;
		c->row = *r;
	}
	return row->kind == LT_UW_NONE ? -1 : 0;
}

/* Is ret (exact: a pc, not a return address) code of this process a walk may keep? */
static __always_inline bool uw_valid(struct uw_state *s, __u64 ret, bool exact)
{
	struct uw_mod *m;
	bool busy = false;
	__s32 disp;

	if (exact ? ret < LT_USER_TEXT_MIN || ret >= LT_USER_TEXT_MAX :
		    call_before(ret, &disp) == LT_CALL_NONE)
		return false;
	m = uw_mod_of(s, ret, &busy);
	if (busy) {
		bump(&counters, LT_CNT_WALK_LOCK_BUSY);
		return true;
	}
	return m && m->exec_file;
}

/*
 * The return address stored at ra_at, if a uretprobe took it: the kernel then keeps the
 * caller's in its return instances (a syscall inside malloc, say, walks up through
 * malloc's frame, whose return address is leaktop's own uretprobe trampoline).  0: none.
 */
static __always_inline __u64 uw_hijacked(__u64 ra_at)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct return_instance *ri = BPF_CORE_READ(task, utask, return_instances);

	for (int i = 0; i < 8 && ri; i++) {
		if (BPF_CORE_READ(ri, stack) == ra_at) {
			/* A chained instance (a tail call between probed functions) holds the
			 * trampoline again; the one below holds the caller's address. */
			while (BPF_CORE_READ(ri, chained) && i++ < 8)
				ri = BPF_CORE_READ(ri, next);
			return ri ? BPF_CORE_READ(ri, orig_ret_vaddr) : 0;
		}
		ri = BPF_CORE_READ(ri, next);
	}
	return 0;
}

/* bpf_loop callback: one frame up.  0: go on; 1: the walk is over. */
static long uw_step(__u32 idx, void *unused)
{
	__u32 zero = 0;
	struct uw_state *s = bpf_map_lookup_elem(&uw_scratch, &zero);
	struct lt_unwind_row row = {};
	struct lt_stack *st;
	struct uw_mod *m;
	__u64 cfa, ra = 0, bp, at;
	bool busy = false, cfi = false, signal = false;
	__u32 n;

	if (!s)
		return 1;
	bp = s->bp;
	m = uw_mod_of(s, s->ip, &busy);
	if (busy)
		bump(&counters, LT_CNT_WALK_LOCK_UNKNOWN);
	if (m && m->exec_file && !m->table)
		s->no_table++;
	if (m && !lt_uw_row(m, s->exact ? s->ip : s->ip - 1, &row)) {
		switch (row.kind) {
		case LT_UW_RSP:
			cfa = s->sp + 8 * (__s64)row.cfa;
			break;
		case LT_UW_RBP:
			if (!s->bp)
				return 1;
			cfa = s->bp + 8 * (__s64)row.cfa;
			break;
		case LT_UW_PLT:
			cfa = s->sp + 8 * (__s64)row.cfa + ((s->ip & 15) >= (__u8)row.rbp ? 8 : 0);
			break;
		case LT_UW_SIGNAL:
			at = s->sp + 8 * (__s64)row.cfa;
			if (bpf_probe_read_user(&cfa, sizeof(cfa), (void *)at) ||
			    bpf_probe_read_user(&ra, sizeof(ra), (void *)(at + 8)) ||
			    bpf_probe_read_user(&bp, sizeof(bp), (void *)(s->sp + 8 * (__s64)row.rbp)))
				return 1;
			signal = true;
			break;
		default:			/* LT_UW_OUTERMOST: the first frame of the thread */
			return 1;
		}
		if (!signal) {
			if (bpf_probe_read_user(&ra, sizeof(ra), (void *)(cfa - 8)))
				return 1;
			if (row.kind == LT_UW_PLT || !row.rbp)
				bp = s->bp;
			else if (row.rbp == LT_UW_RBP_LOST)
				bp = 0;
			else if (bpf_probe_read_user(&bp, sizeof(bp), (void *)(cfa + 8 * (__s64)row.rbp)))
				return 1;
		}
		cfi = true;
	} else {
		struct {
			__u64 next;
			__u64 ret;
		} frame;

		if (!s->bp || (s->bp & 7) || s->bp < s->sp)
			return 1;
		if (bpf_probe_read_user(&frame, sizeof(frame), (void *)s->bp))
			return 1;
		ra = frame.ret;
		bp = frame.next;
		cfa = s->bp + sizeof(frame);
	}
	if (!ra || cfa <= s->sp)
		return 1;
	if (!uw_valid(s, ra, signal)) {
		__u64 orig = signal ? 0 : uw_hijacked(cfi ? cfa - 8 : s->bp + 8);

		if (!orig || !uw_valid(s, orig, false)) {
			bump(&counters, LT_CNT_STACK_TRUNCATED);
			return 1;
		}
		ra = orig;
	}
	if (cfi)
		s->cfi++;
	else
		s->fp++;
	if (idx == 0)
		s->first_cfi = cfi;
	s->ip = ra;
	s->sp = cfa;
	s->bp = bp;
	s->exact = signal;
	st = stack_buf();
	if (!st)
		return 1;
	/*
	 * The count lives in the map value, which the verifier does not track: kept on the
	 * stack it would be a different state each iteration, and bpf_loop's callback would
	 * never converge.
	 */
	n = st->nr;
	if (!n && ra >= s->skip_start && ra < s->skip_end)
		return 0;
	if (n >= LT_MAX_STACK_DEPTH || n >= s->depth)
		return 1;
	st->ips[n] = ra;
	st->nr = n + 1;
	return 0;
}

static __always_inline __u32 cfi_walk(struct lt_walk *w, struct lt_stack *st)
{
	__u32 zero = 0, n;
	struct uw_state *s = bpf_map_lookup_elem(&uw_scratch, &zero);

	if (!s)
		return 0;
	__builtin_memset(s, 0, sizeof(*s));
	s->ip = w->ip;
	s->sp = w->floor;
	s->bp = w->bp;
	s->skip_start = w->skip_start;
	s->skip_end = w->skip_end;
	s->depth = w->depth;
	s->exact = 1;
	st->nr = 0;
	if (!(w->ip >= w->skip_start && w->ip < w->skip_end)) {
		st->ips[0] = w->ip;
		st->nr = 1;
	}
	bpf_loop(LT_MAX_STACK_DEPTH + LT_UW_SKIP_MAX, uw_step, NULL, 0);
	if (!st->nr && s->skip_end) {
		/* Every frame lay in the skipped library (the dynamic linker mapping libraries,
		 * say): then they are the stack. */
		s->ip = w->ip;
		s->sp = w->floor;
		s->bp = w->bp;
		s->skip_start = s->skip_end = 0;
		s->exact = 1;
		st->ips[0] = w->ip;
		st->nr = 1;
		bpf_loop(LT_MAX_STACK_DEPTH, uw_step, NULL, 0);
	}
	w->first_cfi = s->first_cfi;
	n = st->nr;
	if (!n || n > LT_MAX_STACK_DEPTH) {
		st->ips[0] = w->ip;
		n = 1;
	}
	count(LT_CNT_UNWIND_CFI_FRAMES, s->cfi);
	count(LT_CNT_UNWIND_FP_FRAMES, s->fp);
	count(LT_CNT_UNWIND_NO_TABLE, s->no_table);
	return n;
}

__u32 lt_walk_user_stack(struct lt_walk *w, struct lt_stack *st)
{
	if (!w || !st)
		return 0;
	w->first_cfi = 0;
	if (w->depth > LT_MAX_STACK_DEPTH)
		w->depth = LT_MAX_STACK_DEPTH;
	if (cfg_unwind_cfi)
		return cfi_walk(w, st);
	return fp_walk(w, st);
}

struct fn_match {
	const struct lt_stop_cfg *cfg;
	struct lt_stack *st;
	__u32 found;
};

/* bpf_loop step i: does frame i lie in one of the ranges?  (1 ends the loop.) */
static long fn_match_step(__u32 i, struct fn_match *c)
{
	const struct lt_stop_cfg *cfg = c->cfg;
	struct uw_mod m;
	__u64 pc, off;
	__u32 nranges;

	if (i >= LT_MAX_STACK_DEPTH)
		return 1;
	/* A return address: the call before it is in the function. */
	pc = c->st->ips[i] - 1;
	if (lt_uw_module(pc, &m) || !m.exec_file)
		return 0;
	off = pc - m.start + m.off_base;
	nranges = cfg->nranges;
	for (__u32 j = 0; j < LT_STOP_RANGES && j < nranges; j++) {
		const struct lt_stop_range *r = &cfg->ranges[j];

		if (r->dev == m.key.dev && r->ino == m.key.ino && off >= r->start && off < r->end) {
			c->found = 1;
			return 1;
		}
	}
	return 0;
}

__noinline int lt_stack_has_fn(const struct lt_stop_cfg *cfg)
{
	struct fn_match c = { .cfg = cfg, .st = stack_buf() };
	__u32 n;

	if (!cfg || !c.st)
		return 0;
	n = c.st->nr;
	bpf_loop(n < LT_MAX_STACK_DEPTH ? n : LT_MAX_STACK_DEPTH, fn_match_step, &c, 0);
	return c.found;
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
	/* Its files may be another stack's: the buffer held that one's when it was new. */
	lt_stack_files();
	err = bpf_map_update_elem(&stacks, &hash, st, BPF_NOEXIST);
	if (err && err != -EEXIST)
		drop(LT_DROP_STACK_MAP_FULL);
	return 0;
}

/*
 * The files of a stack's frames (struct lt_stack), looked up when the stack is first stored:
 * for each frame the executable file mapping holding it (bpf_find_vma; frames in the same
 * mapping as the one before cost no lookup; the mapping lock taken: the modules this address
 * space's walks found lately, uw_mod_cache), its (device, inode) and the file offset.  A file
 * met for the first time gets a name in file_paths, built from its dentries.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LT_MAX_FILE_PATHS);
	__type(key, struct lt_unwind_key);
	__type(value, struct lt_file_path);
} file_paths SEC(".maps");

/*
 * A file's name, built from the end backwards: components are put before buf[pos], which
 * starts at the NUL in buf[2 * LT_PATH_LEN - 1] and may not go below LT_PATH_LEN (a longer
 * name is not kept).  The third LT_PATH_LEN lets the verifier see each copy in bounds.
 */
struct ff_path {
	char buf[3 * LT_PATH_LEN];
	__u64 dentry;			/* struct dentry * to name next */
	__u64 mnt;			/* struct vfsmount * it lies in */
	__u32 pos;
	__u32 done;			/* 1: the name reached the root */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ff_path);
} ff_path_scratch SEC(".maps");

#define FF_PATH_STEPS	64	/* components and mount points crossed, at most */

/* bpf_loop step: one component of the name (or one mount crossed).  1 ends the loop. */
static long ff_path_step(__u32 idx, void *unused)
{
	__u32 zero = 0, len, pos;
	struct ff_path *p = bpf_map_lookup_elem(&ff_path_scratch, &zero);
	struct dentry *d, *parent;
	struct vfsmount *vm;
	struct mount *mnt, *up;
	const unsigned char *name;

	if (!p)
		return 1;
	d = (struct dentry *)p->dentry;
	vm = (struct vfsmount *)p->mnt;
	if (d == BPF_CORE_READ(vm, mnt_root)) {
		/* The top of a mount: go on from where it is mounted, in the mount above. */
		mnt = (struct mount *)((__u64)vm - bpf_core_field_offset(struct mount, mnt));
		up = BPF_CORE_READ(mnt, mnt_parent);
		if (!up || up == mnt) {
			p->done = 1;
			return 1;
		}
		p->dentry = (__u64)BPF_CORE_READ(mnt, mnt_mountpoint);
		p->mnt = (__u64)up + bpf_core_field_offset(struct mount, mnt);
		return 0;
	}
	parent = BPF_CORE_READ(d, d_parent);
	if (!parent || parent == d) {
		p->done = 1;		/* a root not mounted here: the name is what it is */
		return 1;
	}
	len = BPF_CORE_READ(d, d_name.len);
	name = BPF_CORE_READ(d, d_name.name);
	pos = p->pos;
	if (!len || len >= LT_PATH_LEN || pos < LT_PATH_LEN + len + 1 || pos >= 2 * LT_PATH_LEN)
		return 1;
	pos -= len + 1;
	/* Bounds the verifier can follow: pos < 2 * LT_PATH_LEN, len < LT_PATH_LEN. */
	pos &= 2 * LT_PATH_LEN - 1;
	len &= LT_PATH_LEN - 1;
	p->buf[pos] = '/';
	if (bpf_probe_read_kernel(&p->buf[pos + 1], len, name))
		return 1;
	p->pos = pos;
	p->dentry = (__u64)parent;
	return 0;
}

/*
 * Put a name of the file f (a struct file *), identity *key, in file_paths.  Returns 0.  A
 * global function: verified once.
 */
__noinline int lt_ff_note_path(__u64 f, const struct lt_unwind_key *key)
{
	__u32 zero = 0, pos;
	struct ff_path *p = bpf_map_lookup_elem(&ff_path_scratch, &zero);
	struct file *file = (struct file *)f;

	if (!p || !f || !key)
		return 0;
	p->dentry = (__u64)BPF_CORE_READ(file, f_path.dentry);
	p->mnt = (__u64)BPF_CORE_READ(file, f_path.mnt);
	p->pos = 2 * LT_PATH_LEN - 1;
	p->buf[2 * LT_PATH_LEN - 1] = '\0';
	p->done = 0;
	if (!p->dentry || !p->mnt)
		return 0;
	bpf_loop(FF_PATH_STEPS, ff_path_step, NULL, 0);
	pos = p->pos;
	if (!p->done || pos >= 2 * LT_PATH_LEN - 1 || pos < LT_PATH_LEN)
		return 0;
	pos &= 2 * LT_PATH_LEN - 1;
	/* The name and whatever follows its NUL: the map copies a whole value. */
	bpf_map_update_elem(&file_paths, key, &p->buf[pos], BPF_ANY);
	return 0;
}

/*
 * The mapping at pc into *out (end 0: none known), as lt_module_at() finds it.  Returns 0.
 * A global function: verified once.
 */
__noinline int lt_ff_lookup(__u64 pc, struct uw_mod *out)
{
	struct uw_mm_key k = uw_mm_key_now();
	struct uw_mod m = {};

	if (!out)
		return 0;
	if (lt_module_at(pc, &k, &m) < 0)
		__builtin_memset(&m, 0, sizeof(m));
	*out = m;
	return 0;
}

/* The state of a stack's file lookups: in a per-CPU map value, as uw_scratch (see there). */
struct ff_state {
	struct uw_mod m;		/* the mapping of the last frame */
	struct lt_unwind_key named;	/* the last file whose name was looked for */
	__u32 depth;
	__u32 unknown;			/* frames left without a file */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ff_state);
} ff_scratch SEC(".maps");

/* bpf_loop step i: the file of frame i.  1 ends the loop. */
static long ff_step(__u32 i, void *unused)
{
	__u32 zero = 0, j;
	struct ff_state *s = bpf_map_lookup_elem(&ff_scratch, &zero);
	struct lt_stack *st = stack_buf();
	struct lt_frame_file *ff;
	__u64 ip, off;

	if (!s || !st || i >= LT_MAX_STACK_DEPTH || i >= st->nr || i >= s->depth)
		return 1;
	j = s->depth + 2 * i;
	if (j >= 3 * LT_MAX_STACK_DEPTH - 1)
		return 1;
	ff = (struct lt_frame_file *)&st->w[j];
	ip = st->ips[i];
	if (ip & LT_PY_FRAME_TAG) {		/* a Python frame: no file of its own */
		ff->ino = 0;
		ff->dev = 0;
		ff->off = 0;
		return 0;
	}
	/* A return address: the call before it is what lies in the function's mapping. */
	if (!(ip - 1 >= s->m.start && ip - 1 < s->m.end))
		lt_ff_lookup(ip - 1, &s->m);
	off = ip - s->m.start + s->m.off_base;
	if (!s->m.end || !s->m.exec_file || (off >> 32)) {
		ff->ino = 0;
		ff->dev = 0;
		ff->off = 0;
		s->unknown++;
		return 0;
	}
	ff->ino = s->m.key.ino;
	ff->dev = s->m.key.dev;
	ff->off = off;
	if (s->m.file && (s->m.key.ino != s->named.ino || s->m.key.dev != s->named.dev)) {
		s->named = s->m.key;
		if (!bpf_map_lookup_elem(&file_paths, &s->m.key))
			lt_ff_note_path(s->m.file, &s->named);
	}
	return 0;
}

__noinline int lt_stack_files(void)
{
	__u32 zero = 0, n;
	struct ff_state *s = bpf_map_lookup_elem(&ff_scratch, &zero);
	struct lt_stack *st = stack_buf();

	if (!s || !st)
		return 0;
	__builtin_memset(s, 0, sizeof(*s));
	s->depth = stack_depth();
	n = st->nr;
	bpf_loop(n < LT_MAX_STACK_DEPTH ? n : LT_MAX_STACK_DEPTH, ff_step, NULL, 0);
	count(LT_CNT_FRAME_NO_FILE, s->unknown);
	return 0;
}
