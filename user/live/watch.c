// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * watch.c - the engine of `leaktop lastref` (see watch.h): it owns the stops and memory
 * reads of the followed process, the hardware breakpoints (perf events) and the queue of
 * watch events; what they mean is core/lastref.c's.
 *
 * A scan stops the process (ptrace_stop.c: PTRACE_SEIZE + INTERRUPT, never a write), reads
 * the live blocks from the BPF `allocs` map, copies each writable mapping in 1 MiB chunks
 * (thread stacks from their stack pointer up) looking for aligned words that point into a
 * followed block, and reads every thread's registers.  Each word found is a reference: in
 * another tracked block (its holder: the free probe reports that block's free), on a
 * thread's stack (the frame that owns the slot, by the frame pointer chain: an execute
 * breakpoint on its return address tells when it returns), or elsewhere.  The watchpoints
 * are armed before the process resumes, so no write between the scan and the arming is
 * missed.  Write watchpoints go on every thread (inherited by threads they create), execute
 * breakpoints on the frame's thread; a thread has WATCH_DEBUG_REGS, so with more words than
 * slots they rotate, and a word not watched is read again at each rotation.  Every perf
 * event is a descriptor of leaktop's: closed on every exit path, and by the kernel if
 * leaktop dies.
 */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>

#include "bpf/watch.h"
#include "core/scan.h"
#include "live/collector.h"
#include "live/loader.h"
#include "live/mounts.h"
#include "live/procmaps.h"
#include "live/ptrace_stop.h"
#include "live/scanmaps.h"
#include "live/ustack.h"
#include "live/watch.h"
#include "util/clock.h"
#include "util/vec.h"
#include "util/search.h"

#define ROTATE_NS		(100ULL * 1000000ULL)	/* watchpoints rotate this often */
#define FIRST_SCANS		4	/* a new block without a memory reference: scans */
#define RESCAN_NS		(100ULL * 1000000ULL)	/* between those */
#define NEW_BLOCKS_NS		(50ULL * 1000000ULL)	/* the allocs map is read this often */
#define MAX_FOUND		256	/* references one scan keeps per block */
#define UNWIND_BUDGET_NS	(300ULL * 1000000ULL)	/* unwind tables built per scan, at most */
#define MAX_RETURNS_PER_THREAD	(WATCH_DEBUG_REGS - 1)	/* one slot stays for writes */
#define STACK_RED_ZONE		128	/* x86-64 ABI: below the stack pointer, still live */
#define MAX_FAILED_SCANS	3	/* scans of a block that failed before it is given up */
#define BACKOFF_NS		(1000ULL * 1000000ULL)	/* after a failed scan; doubles */
#define MAX_STOPPED_PCT		10	/* of the time a process may spend stopped by scans */
#define SELFTEST_WRITES		16	/* writes the watchpoint self-test makes */
#define VERIFY_NS		(1000ULL * 1000000ULL)	/* no watchpoints: tracked blocks rescanned */

/* General purpose registers of struct user_regs_struct that may hold a pointer. */
static const struct {
	uint32_t idx;
	const char *name;
} gp_regs[] = {
	{ 0, "r15" }, { 1, "r14" }, { 2, "r13" }, { 3, "r12" }, { 4, "rbp" }, { 5, "rbx" },
	{ 6, "r11" }, { 7, "r10" }, { 8, "r9" }, { 9, "r8" }, { 10, "rax" }, { 11, "rcx" },
	{ 12, "rdx" }, { 13, "rsi" }, { 14, "rdi" }, { 19, "rsp" },
};

const char *watcher__reg_name(uint32_t reg)
{
	for (size_t i = 0; i < sizeof(gp_regs) / sizeof(gp_regs[0]); i++)
		if (gp_regs[i].idx == reg)
			return gp_regs[i].name;
	return "?";
}

/* One armed breakpoint: a word on every thread, or a return address on one. */
struct armed {
	uint64_t addr;
	uint32_t kind;			/* enum lt_watch_kind */
	uint32_t tid;			/* LT_WATCH_RETURN: the thread */
	uint64_t cfa;			/* LT_WATCH_RETURN: returned when %rsp >= cfa */
	int *fds;
	size_t n_fds;
};

struct block_extra {
	uint64_t alloc_ts_ns;		/* the allocs record's time: (addr, ts) names the block */
	uint64_t next_scan_ns;		/* first scans: when to look again */
	uint64_t retry_ns;		/* after a failed scan: not before */
	unsigned int failed_scans;
	bool reported;
};

struct watcher {
	struct loader *ld;
	struct collector *col;
	struct watch_config cfg;
	watch_say_fn say;
	watch_done_fn done;
	void *ctx;
	int prog_fd;
	uint64_t *sites;
	size_t n_sites;
	struct lr_block blocks[WATCH_MAX_BLOCKS];
	struct block_extra extra[WATCH_MAX_BLOCKS];
	size_t n_blocks;
	struct armed *armed;
	size_t n_armed, cap_armed;
	struct lt_watch_event *queue;
	size_t n_queue, cap_queue;
	uint64_t last_rotate_ns, last_new_ns;
	unsigned int write_slots;	/* write watchpoints that fit (ENOSPC lowers it) */
	int *tids;			/* the threads write watchpoints went on */
	size_t n_tids;
	struct ustack *unwinder;	/* which frame holds a stack reference */
	/*
	 * No scan before scan_ok_ns: a scan that stopped the process S ms is followed by
	 * S * (100 - MAX_STOPPED_PCT) / MAX_STOPPED_PCT ms of running.
	 */
	uint64_t scan_ok_ns;
	uint64_t stopped_ns;		/* the process was stopped this long by scans, in all */
	unsigned int scans_failed;	/* in all */
	uint64_t events_lost;		/* loader__watch_lost when last looked at */
	/*
	 * Hardware watchpoints fire here (the self-test at the start).  When not, no breakpoint
	 * is armed: every word is read again at each rotation and tracked blocks are rescanned
	 * every VERIFY_NS (a word or frame that went is seen by the scan, not by the hardware).
	 */
	bool hw_fires;
	uint64_t last_verify_ns;
};

static void say(struct watcher *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct watcher *w, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (w->say)
		w->say(w->ctx, line);
}

static void on_watch_event(void *ctx, const struct lt_watch_event *ev)
{
	struct watcher *w = ctx;

	if (VEC_RESERVE(w->queue, w->cap_queue, w->n_queue + 1, 64))
		return;
	w->queue[w->n_queue++] = *ev;
}

/* ---------------------------------------------------------------- perf events */

static volatile uint64_t selftest_word;

int watcher__selftest(char *why, size_t why_len)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_BREAKPOINT,
		.size = sizeof(a),
		.bp_type = HW_BREAKPOINT_W,
		.bp_addr = (uint64_t)(uintptr_t)&selftest_word,
		.bp_len = HW_BREAKPOINT_LEN_8,
		.sample_period = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	uint64_t count = 0;
	int fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	int ret = 0;

	if (fd < 0) {
		snprintf(why, why_len, "a write breakpoint cannot be opened: %s", strerror(errno));
		return 0;
	}
	for (unsigned int i = 0; i < SELFTEST_WRITES; i++)
		selftest_word = i + 1;
	if (read(fd, &count, sizeof(count)) != sizeof(count))
		snprintf(why, why_len, "its count cannot be read: %s", strerror(errno));
	else if (!count)
		snprintf(why, why_len, "a virtual machine without debug-register support");
	else
		ret = 1;
	close(fd);
	return ret;
}

static int bp_open(struct watcher *w, int tid, uint64_t addr, bool exec)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_BREAKPOINT,
		.size = sizeof(a),
		.bp_type = exec ? HW_BREAKPOINT_X : HW_BREAKPOINT_W,
		.bp_addr = addr,
		.bp_len = exec ? sizeof(long) : HW_BREAKPOINT_LEN_8,
		.sample_period = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
		.inherit = !exec,
		.disabled = 1,
	};
	int fd = syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, w->prog_fd) ||
	    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

static void disarm(struct watcher *w, size_t i)
{
	struct armed *a = &w->armed[i];

	for (size_t k = 0; k < a->n_fds; k++)
		close(a->fds[k]);
	free(a->fds);
	loader__watch_slot(w->ld, a->addr, NULL);
	w->armed[i] = w->armed[--w->n_armed];
}

/* Arm a breakpoint at addr on tids (0 or -errno: -ENOSPC no debug register left). */
static int arm(struct watcher *w, uint64_t addr, uint32_t kind, const struct lt_watch_slot *slot,
	       const int *tids, size_t n_tids, uint64_t cfa)
{
	struct armed *a;
	int err = 0;

	if (VEC_RESERVE(w->armed, w->cap_armed, w->n_armed + 1, 16))
		return -ENOMEM;
	a = &w->armed[w->n_armed];
	memset(a, 0, sizeof(*a));
	a->addr = addr;
	a->kind = kind;
	a->tid = kind == LT_WATCH_RETURN ? tids[0] : 0;
	a->cfa = cfa;
	a->fds = calloc(n_tids + 1, sizeof(int));
	if (!a->fds)
		return -ENOMEM;
	/* The slot first: a hit before it is known would be lost. */
	err = loader__watch_slot(w->ld, addr, slot);
	for (size_t k = 0; !err && k < n_tids; k++) {
		int fd = bp_open(w, tids[k], addr, kind == LT_WATCH_RETURN);

		if (fd == -ESRCH)		/* the thread exited meanwhile */
			continue;
		if (fd < 0)
			err = fd;
		else
			a->fds[a->n_fds++] = fd;
	}
	w->n_armed++;
	if (err)
		disarm(w, w->n_armed - 1);
	return err;
}

static ssize_t find_armed(const struct watcher *w, uint64_t addr, uint32_t kind, uint32_t tid)
{
	for (size_t i = 0; i < w->n_armed; i++)
		if (w->armed[i].addr == addr && w->armed[i].kind == kind &&
		    (kind != LT_WATCH_RETURN || w->armed[i].tid == tid))
			return i;
	return -1;
}

/* Live thread ids of the process, into w->tids. */
static int read_tids(struct watcher *w, const struct ptrace_stop *ps)
{
	int *v = malloc((ps->n + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < ps->n; i++)
		v[i] = ps->threads[i].tid;
	free(w->tids);
	w->tids = v;
	w->n_tids = ps->n;
	return 0;
}

/* Does any tracked block still want the word (or return address) of armed entry a? */
static bool still_wanted(const struct watcher *w, const struct armed *a, const bool *want_write)
{
	for (size_t k = 0; k < w->n_blocks; k++) {
		const struct lr_block *b = &w->blocks[k];

		for (uint32_t i = 0; b->state == LR_TRACKING && i < b->n_refs; i++) {
			const struct lr_ref *r = &b->refs[i];

			if (a->kind == LT_WATCH_RETURN && r->kind == LR_REF_STACK &&
			    r->frame_ret == a->addr && r->tid == a->tid)
				return true;
			if (a->kind == LT_WATCH_WRITE && r->loc == a->addr &&
			    want_write[k * LR_MAX_REFS + i])
				return true;
		}
	}
	return false;
}

/*
 * Make the armed breakpoints what the blocks want: the return addresses of frames holding
 * references (up to MAX_RETURNS_PER_THREAD per thread), then as many words as the threads'
 * debug registers leave (lastref__pick: all, or a rotation).  Words that lose their
 * watchpoint are marked with the time, for the re-read.
 */
static void rearm(struct watcher *w, uint64_t now, bool rotate)
{
	bool want[WATCH_MAX_BLOCKS * LR_MAX_REFS] = {};
	struct lr_pick picks[WATCH_DEBUG_REGS];
	unsigned int max_ret = 0, slots;
	size_t n_picks;

	/* Returns: one per (thread, return address); none where watchpoints do not fire. */
	for (size_t k = 0; w->hw_fires && k < w->n_blocks; k++) {
		struct lr_block *b = &w->blocks[k];

		for (uint32_t i = 0; b->state == LR_TRACKING && i < b->n_refs; i++) {
			struct lr_ref *r = &b->refs[i];
			struct lt_watch_slot s = { .lo = r->frame_cfa, .kind = LT_WATCH_RETURN };
			unsigned int on_thread = 0;
			int tid = r->tid, err;

			if (r->kind != LR_REF_STACK || !r->frame_ret ||
			    find_armed(w, r->frame_ret, LT_WATCH_RETURN, r->tid) >= 0)
				continue;
			for (size_t a = 0; a < w->n_armed; a++)
				on_thread += w->armed[a].kind == LT_WATCH_RETURN &&
					     w->armed[a].tid == r->tid;
			if (on_thread >= MAX_RETURNS_PER_THREAD)
				continue;
			err = arm(w, r->frame_ret, LT_WATCH_RETURN, &s, &tid, 1, r->frame_cfa);
			if (!err)
				continue;
			say(w, "lastref: cannot watch the return (to 0x%" PRIx64 ") of the frame "
			    "holding 0x%" PRIx64 " in thread %d: %s; only writes to it are watched",
			    r->frame_ret, r->loc, tid,
			    err == -ENOSPC ? "no debug register left" : strerror(-err));
			/* Said once: the words of that frame are plain stack words from now on. */
			for (size_t k2 = 0; k2 < w->n_blocks; k2++)
				for (uint32_t i2 = 0; i2 < w->blocks[k2].n_refs; i2++) {
					struct lr_ref *o = &w->blocks[k2].refs[i2];

					if (o != r && o->kind == LR_REF_STACK && o->tid == r->tid &&
					    o->frame_ret == r->frame_ret)
						o->frame_ret = 0;
				}
			r->frame_ret = 0;
		}
	}
	for (size_t a = 0; a < w->n_armed; a++) {
		unsigned int on_thread = 0;

		if (w->armed[a].kind != LT_WATCH_RETURN)
			continue;
		for (size_t c = 0; c < w->n_armed; c++)
			on_thread += w->armed[c].kind == LT_WATCH_RETURN &&
				     w->armed[c].tid == w->armed[a].tid;
		max_ret = on_thread > max_ret ? on_thread : max_ret;
	}
	slots = w->write_slots > max_ret ? w->write_slots - max_ret : 0;
	n_picks = lastref__pick(w->blocks, w->n_blocks, slots, rotate, picks, WATCH_DEBUG_REGS);
	for (size_t p = 0; p < n_picks; p++)
		want[picks[p].block * LR_MAX_REFS + picks[p].ref] = true;
	/* Out with what is not wanted (returns of frames no reference needs any more too). */
	for (size_t a = 0; a < w->n_armed;) {
		if (!still_wanted(w, &w->armed[a], want)) {
			disarm(w, a);
			continue;
		}
		a++;
	}
	/* In with the picked words not armed yet. */
	for (size_t p = 0; p < n_picks; p++) {
		struct lr_block *b = &w->blocks[picks[p].block];
		struct lr_ref *r = &b->refs[picks[p].ref];
		struct lt_watch_slot s = { .lo = b->addr, .hi = b->addr + (b->size ? b->size : 1),
					   .kind = LT_WATCH_WRITE };
		int err;

		if (find_armed(w, r->loc, LT_WATCH_WRITE, 0) >= 0)
			continue;
		err = arm(w, r->loc, LT_WATCH_WRITE, &s, w->tids, w->n_tids, 0);
		if (err == -ENOSPC && w->write_slots > 1) {
			/* Another user of the debug registers: one fewer from now on. */
			w->write_slots--;
			say(w, "a debug register is in use elsewhere: watching %u words at once",
			    w->write_slots);
		} else if (err) {
			say(w, "cannot watch 0x%" PRIx64 ": %s", r->loc, strerror(-err));
		}
	}
	/* Which references are watched now. */
	for (size_t k = 0; k < w->n_blocks; k++) {
		struct lr_block *b = &w->blocks[k];

		for (uint32_t i = 0; b->state == LR_TRACKING && i < b->n_refs; i++) {
			lastref__mark(&b->refs[i],
				      find_armed(w, b->refs[i].loc, LT_WATCH_WRITE, 0) >= 0, now);
			/* Never watched: last known good when the scan found it. */
			if (!w->hw_fires && !b->refs[i].unwatched_ns)
				b->refs[i].unwatched_ns = now;
		}
	}
	if (rotate)
		w->last_rotate_ns = now;
}

/* ---------------------------------------------------------------- scans */

static int cmp_alloc(const void *a, const void *b)
{
	const struct raw_alloc *x = a, *y = b;

	return x->key.addr < y->key.addr ? -1 : x->key.addr > y->key.addr;
}

/* The tracked block containing addr, or NULL (allocs sorted by address). */
static const struct raw_alloc *holder_of(const struct raw_alloc *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	lo = SEARCH_FIRST(hi, mid, v[mid].key.addr <= addr);
	if (!lo)
		return NULL;
	v += lo - 1;
	return addr - v->key.addr < (v->val.size_bytes ? v->val.size_bytes : 1) ? v : NULL;
}

/* A stopped thread's frames, unwound when a stack reference first asks for them. */
struct thread_frames {
	struct ustack_frame *v;
	size_t n;
	bool walked;
};

/*
 * The frame of stopped thread t (frames: its cache) that owns stack slot `slot`: frame k
 * spans [its stack pointer, its CFA) and returns to the address stored at CFA - 8.  false
 * when the walk does not reach the slot.
 */
static bool frame_of(struct watcher *w, const struct proc_maps *maps, const struct ptrace_stop *ps,
		     const struct ptrace_thread *t, struct thread_frames *frames, uint64_t slot,
		     struct lr_ref *r)
{
	/* The red zone below %rsp is the innermost frame's (a leaf function's locals). */
	bool red_zone = slot < t->regs.rsp;

	if (!frames->walked) {
		struct ustack_fixup fix;
		bool in_call;

		frames->walked = true;
		/* A thread inside malloc: its caller's address is where the uretprobe keeps it. */
		in_call = !loader__thread_call(w->ld, t->tid, &fix.slot, &fix.ra);
		frames->v = calloc(USTACK_MAX_FRAMES, sizeof(*frames->v));
		if (frames->v)
			frames->n = ustack__walk(w->unwinder, maps, ps, t, in_call ? &fix : NULL,
						 frames->v, USTACK_MAX_FRAMES);
	}
	for (size_t k = 0; k < frames->n; k++) {
		const struct ustack_frame *f = &frames->v[k];

		if ((red_zone && !k) || (slot >= f->sp && slot < f->cfa)) {
			r->frame_pc = f->pc;
			r->frame_ret = f->ret;
			r->frame_cfa = f->cfa;
			return true;
		}
	}
	return false;
}

struct found {
	struct lr_ref *mem, *regs;
	size_t n_mem, n_regs;
};

static void keep(struct lr_ref **v, size_t *n, const struct lr_ref *r)
{
	if (*n < MAX_FOUND)
		(*v)[(*n)++] = *r;
}

/* Is this word a pointer into one of blocks idx[]?  Its index in idx, or -1. */
static int target_of(const struct watcher *w, const size_t *idx, size_t n, uint64_t v)
{
	for (size_t i = 0; i < n; i++)
		if (lastref__points_into(&w->blocks[idx[i]], v))
			return i;
	return -1;
}

/* Where the read of mapping pm starts: a thread stack from its red zone (as scanner.c). */
static uint64_t read_from(const struct ptrace_stop *ps, const struct proc_map *pm)
{
	uint64_t lo = pm->start;

	for (size_t t = 0; t < ps->n; t++) {
		uint64_t sp = ps->threads[t].regs.rsp & ~7ull;

		if (sp >= pm->start && sp < pm->end && sp >= pm->start + STACK_RED_ZONE &&
		    sp - STACK_RED_ZONE > lo)
			lo = sp - STACK_RED_ZONE;
	}
	return lo;
}

/* More to read than a scan copies (SCAN_MAX_BYTES, as scanner.c): -E2BIG, before any read. */
static int too_big(const struct ptrace_stop *ps, const struct proc_maps *maps,
		   const struct scanmaps *touch, char *msg, size_t msg_len)
{
	uint64_t total = 0;

	for (size_t m = 0; m < maps->n; m++)
		if (!scanmaps__skip(&maps->v[m]) && !scanmaps__untouched(touch, &maps->v[m]))
			total += maps->v[m].end - read_from(ps, &maps->v[m]);
	if (total <= SCAN_MAX_BYTES)
		return 0;
	snprintf(msg, msg_len, "process %d has %" PRIu64 " MiB of writable memory, more than a "
		 "scan reads (%llu MiB)", ps->pid, total >> 20, SCAN_MAX_BYTES >> 20);
	return -E2BIG;
}

/*
 * Stop the process and find the references to blocks idx[0..n) (into f[i]), give the blocks
 * their verdict or new references, and arm what they want before it resumes.  A new block
 * with no reference in memory is looked at again (FIRST_SCANS in all: it may have been
 * caught between malloc's return and its store).  0 or -errno with msg.
 */
static int scan(struct watcher *w, const size_t *idx, size_t n, struct found *f, uint64_t now,
		char *msg, size_t msg_len)
{
	struct thread_frames *frames = NULL;
	size_t n_threads = 0;
	struct ptrace_stop ps;
	struct proc_maps maps = {};
	struct scanmaps touch = {};
	struct raw_alloc *allocs = NULL;
	size_t n_allocs = 0;
	uint64_t *buf = NULL;
	double stop_ms;
	int err;

	/* Unwind tables of objects mapped since the last scan, built while it runs. */
	if (!procmaps__read(w->cfg.pid, &maps))
		ustack__prepare(w->unwinder, &maps, UNWIND_BUDGET_NS);
	procmaps__free(&maps);
	/* Refused up front: userfaultfd memory; never-touched mappings are not read. */
	err = scanmaps__prepare(w->cfg.pid, &touch, msg, msg_len);
	if (err)
		return err;
	err = ptrace_stop__begin(&ps, w->cfg.pid, w->cfg.max_stop_ms, msg, msg_len);
	if (err) {
		if (err == -ETIME)	/* a thread did not stop in time */
			snprintf(msg, msg_len, "the scan reached its %u ms stop limit",
				 w->cfg.max_stop_ms);
		scanmaps__free(&touch);
		return err;
	}
	err = procmaps__read(w->cfg.pid, &maps);
	if (!err)
		err = too_big(&ps, &maps, &touch, msg, msg_len);
	if (!err)
		err = collector__read_allocs(w->col, w->cfg.pid, w->cfg.gen, &allocs, &n_allocs);
	if (!err) {
		qsort(allocs, n_allocs, sizeof(*allocs), cmp_alloc);
		buf = malloc(PTRACE_STOP_CHUNK);
		n_threads = ps.n;
		frames = calloc(n_threads + 1, sizeof(*frames));
		err = buf && frames ? read_tids(w, &ps) : -ENOMEM;
	}
	/* glibc's chunk header inside a block is the allocator's, not a reference (scan.h). */
	for (size_t i = 0; !err && i < n; i++) {
		struct lr_block *b = &w->blocks[idx[i]];
		uint64_t size_word = 0;
		size_t got = 0;

		b->alloc_meta = 0;
		if (b->addr >= sizeof(size_word) &&
		    !ptrace_stop__read(&ps, b->addr - sizeof(size_word), &size_word,
				       sizeof(size_word), &got) && got == sizeof(size_word))
			b->alloc_meta = scan__glibc_next_chunk(b->addr, b->size, size_word);
	}
	/* Registers. */
	for (size_t t = 0; !err && t < ps.n; t++) {
		const uint64_t *regs = (const uint64_t *)&ps.threads[t].regs;

		for (size_t g = 0; g < sizeof(gp_regs) / sizeof(gp_regs[0]); g++) {
			int i = target_of(w, idx, n, regs[gp_regs[g].idx]);
			struct lr_ref r = { .kind = LR_REF_REGISTER, .tid = ps.threads[t].tid,
					    .reg = gp_regs[g].idx, .ip = ps.threads[t].regs.rip };

			if (i >= 0)
				keep(&f[i].regs, &f[i].n_regs, &r);
		}
	}
	/* Memory: every writable mapping, a thread's stack from its red zone up. */
	for (size_t m = 0; !err && m < maps.n; m++) {
		const struct proc_map *pm = &maps.v[m];
		uint64_t lo = read_from(&ps, pm);

		if (scanmaps__skip(pm) || scanmaps__untouched(&touch, pm) ||
		    mounts__map_refused(w->cfg.pid, pm))
			continue;
		for (uint64_t at = lo; !err && at < pm->end; at += PTRACE_STOP_CHUNK) {
			size_t len = pm->end - at < PTRACE_STOP_CHUNK ? pm->end - at : PTRACE_STOP_CHUNK;
			size_t got;

			err = ptrace_stop__read(&ps, at, buf, len, &got);
			for (size_t wd = 0; wd < got / 8; wd++) {
				uint64_t loc = at + wd * 8;
				int i = target_of(w, idx, n, buf[wd]);
				const struct raw_alloc *h;
				struct lr_ref r = { .kind = LR_REF_MEMORY, .loc = loc };

				if (i < 0)
					continue;
				h = holder_of(allocs, n_allocs, loc);
				if (h) {
					r.kind = LR_REF_HEAP;
					r.holder = h->key.addr;
				}
				for (size_t t = 0; !h && t < ps.n; t++) {
					const struct ptrace_thread *th = &ps.threads[t];

					if (th->regs.rsp < pm->start || th->regs.rsp >= pm->end ||
					    loc < (th->regs.rsp & ~7ull) - STACK_RED_ZONE)
						continue;
					r.kind = LR_REF_STACK;
					r.tid = th->tid;
					frame_of(w, &maps, &ps, th, &frames[t], loc, &r);
					break;
				}
				keep(&f[i].mem, &f[i].n_mem, &r);
			}
		}
		if (err == -ETIME)
			snprintf(msg, msg_len, "the scan reached its %u ms stop limit",
				 w->cfg.max_stop_ms);
	}
	/* The verdicts of the scanned blocks, and the watchpoints, before the process runs. */
	for (size_t i = 0; !err && i < n; i++) {
		struct lr_block *b = &w->blocks[idx[i]];
		struct block_extra *x = &w->extra[idx[i]];
		bool first = b->state == LR_TRACKING && !b->n_refs;

		x->failed_scans = 0;	/* failures in a row count */
		x->retry_ns = 0;
		if (first && !f[i].n_mem && b->scans + 1 < FIRST_SCANS) {
			b->scans++;
			x->next_scan_ns = now + RESCAN_NS;
			continue;
		}
		x->next_scan_ns = 0;
		/* No watchpoints: what a tracked block's references were is checked against it. */
		if (!w->hw_fires && b->state == LR_TRACKING && b->n_refs)
			lastref__verify(b, f[i].mem, f[i].n_mem, now);
		lastref__confirm(b, f[i].mem, f[i].n_mem, f[i].regs, f[i].n_regs, now);
		for (uint32_t r = 0; b->state == LR_TRACKING && r < b->n_refs; r++)
			if (b->refs[r].kind == LR_REF_HEAP)
				loader__watch_free(w->ld, b->refs[r].holder, true);
	}
	if (!err)
		rearm(w, now, false);
	stop_ms = ptrace_stop__end(&ps);
	/* The process runs (100 - MAX_STOPPED_PCT) / MAX_STOPPED_PCT times as long. */
	w->stopped_ns += (uint64_t)(stop_ms * 1e6);
	w->scan_ok_ns = monotonic_ns() +
			(uint64_t)(stop_ms * 1e6) * (100 - MAX_STOPPED_PCT) / MAX_STOPPED_PCT;
	scanmaps__free(&touch);
	for (size_t t = 0; frames && t < n_threads; t++)
		free(frames[t].v);
	free(frames);
	free(buf);
	free(allocs);
	procmaps__free(&maps);
	return err;
}

/*
 * A scan of blocks idx[0..n) failed (msg says why; the process runs on): back off (1 s,
 * doubling), and after MAX_FAILED_SCANS give the block up, at once when no scan of this
 * process can succeed (userfaultfd memory, more memory than a scan reads).
 */
static void scan_failed(struct watcher *w, const size_t *idx, size_t n, int err, const char *msg,
			uint64_t now)
{
	bool never = err == -EOPNOTSUPP || err == -E2BIG;

	w->scans_failed++;
	for (size_t i = 0; i < n; i++) {
		struct lr_block *b = &w->blocks[idx[i]];
		struct block_extra *x = &w->extra[idx[i]];
		char why[192];

		x->failed_scans++;
		if (b->state == LR_DONE)
			continue;
		if (err == -ETIME && x->failed_scans >= MAX_FAILED_SCANS) {
			snprintf(why, sizeof(why), "could not confirm: %u scans reached the %u ms stop "
				 "limit (the process is too large for it)", x->failed_scans,
				 w->cfg.max_stop_ms);
			lastref__give_up(b, why, now);
		} else if (never || x->failed_scans >= MAX_FAILED_SCANS) {
			snprintf(why, sizeof(why), "could not confirm: %s", msg[0] ? msg :
				 strerror(-err));
			lastref__give_up(b, why, now);
		} else {
			x->retry_ns = now + (BACKOFF_NS << (x->failed_scans - 1));
			if (b->state == LR_TRACKING && !b->n_refs)
				x->next_scan_ns = x->retry_ns;
		}
	}
}

/* Scan blocks idx[0..n) and say what was found. */
static int scan_blocks(struct watcher *w, const size_t *idx, size_t n, uint64_t now, char *msg,
		       size_t msg_len)
{
	struct found f[WATCH_MAX_BLOCKS] = {};
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		f[i].mem = calloc(MAX_FOUND, sizeof(*f[i].mem));
		f[i].regs = calloc(MAX_FOUND, sizeof(*f[i].regs));
		if (!f[i].mem || !f[i].regs)
			err = -ENOMEM;
	}
	if (!err)
		err = scan(w, idx, n, f, now, msg, msg_len);
	if (err && err != -ESRCH && err != -ENOMEM)
		scan_failed(w, idx, n, err, msg, now);
	for (size_t i = 0; !err && i < n; i++) {
		const struct lr_block *b = &w->blocks[idx[i]];
		char where[256] = "";
		size_t len = 0;

		if (b->state != LR_TRACKING || !b->n_refs)
			continue;
		for (uint32_t r = 0; r < b->n_refs && r < 4 && len < sizeof(where) - 64; r++)
			len += snprintf(where + len, sizeof(where) - len, "%s%s 0x%" PRIx64,
					r ? ", " : "", lr_ref_kind_names[b->refs[r].kind],
					b->refs[r].loc);
		/* The TUI's message line shows the latest line: this one says it too. */
		say(w, "lastref: watching 0x%" PRIx64 " (%" PRIu64 " bytes): %u reference%s (%s%s)%s",
		    b->addr, b->size, b->n_refs, b->n_refs == 1 ? "" : "s", where,
		    b->n_refs > 4 ? ", ..." : "",
		    w->hw_fires ? "" : "; by scans only: hardware watchpoints do not fire here");
	}
	for (size_t i = 0; i < n; i++) {
		free(f[i].mem);
		free(f[i].regs);
	}
	return err;
}

/* ---------------------------------------------------------------- the turn */

static bool followed(const struct watcher *w, const struct raw_alloc *a)
{
	for (size_t k = 0; k < w->n_blocks; k++)
		if (w->blocks[k].addr == a->key.addr && w->extra[k].alloc_ts_ns == a->val.ts_ns)
			return true;
	return false;
}

static bool site_wanted(const struct watcher *w, uint64_t hash)
{
	for (size_t i = 0; i < w->n_sites; i++)
		if (w->sites[i] == hash)
			return true;
	return false;
}

static int cmp_ts(const void *a, const void *b)
{
	const struct raw_alloc *x = a, *y = b;

	return x->val.ts_ns < y->val.ts_ns ? -1 : x->val.ts_ns > y->val.ts_ns;
}

/* New blocks of the chosen sites, oldest first, up to K followed in all. */
static int take_new_blocks(struct watcher *w, uint64_t now, char *msg, size_t msg_len)
{
	struct raw_alloc *v = NULL;
	size_t n = 0, idx[WATCH_MAX_BLOCKS], n_idx = 0;
	int err;

	if (!w->n_sites || w->n_blocks >= w->cfg.max_blocks)
		return 0;
	err = collector__read_allocs(w->col, w->cfg.pid, w->cfg.gen, &v, &n);
	if (err)
		return 0;	/* the next turn tries again */
	qsort(v, n, sizeof(*v), cmp_ts);
	for (size_t i = 0; i < n && w->n_blocks < w->cfg.max_blocks; i++) {
		struct lr_block *b;

		if (!site_wanted(w, v[i].val.stack_hash) || followed(w, &v[i]))
			continue;
		b = &w->blocks[w->n_blocks];
		memset(b, 0, sizeof(*b));
		memset(&w->extra[w->n_blocks], 0, sizeof(w->extra[0]));
		b->addr = v[i].key.addr;
		b->size = v[i].val.size_bytes;
		b->stack_hash = v[i].val.stack_hash;
		b->found_ns = now;
		b->state = LR_TRACKING;
		w->extra[w->n_blocks].alloc_ts_ns = v[i].val.ts_ns;
		/* Its own free ends it ("freed, not lost"). */
		loader__watch_free(w->ld, b->addr, true);
		idx[n_idx++] = w->n_blocks++;
	}
	free(v);
	return n_idx ? scan_blocks(w, idx, n_idx, now, msg, msg_len) : 0;
}

static void cause_of(const struct lt_watch_event *ev, struct lr_cause *c)
{
	memset(c, 0, sizeof(*c));
	c->at_ns = ev->ts_ns;
	c->tid = ev->tid;
	c->ip = ev->ip;
	c->value = ev->value;
	c->nr = ev->nr < LR_MAX_FRAMES ? ev->nr : LR_MAX_FRAMES;
	memcpy(c->ips, ev->ips, c->nr * sizeof(c->ips[0]));
}

static void handle_events(struct watcher *w)
{
	for (size_t q = 0; q < w->n_queue; q++) {
		const struct lt_watch_event *ev = &w->queue[q];
		struct lr_cause c;

		cause_of(ev, &c);
		switch (ev->type) {
		case LT_WEV_WRITE:
			lastref__on_write(w->blocks, w->n_blocks, ev->addr, ev->value, &c);
			break;
		case LT_WEV_RETURN:
			lastref__on_return(w->blocks, w->n_blocks, ev->tid, ev->addr, ev->sp, &c);
			break;
		case LT_WEV_FREE:
			lastref__on_free(w->blocks, w->n_blocks, ev->addr, &c);
			break;
		default:
			break;
		}
	}
	w->n_queue = 0;
}

/* Words not watched now: read again; a change seen only now is said so. */
static void reread_unwatched(struct watcher *w, uint64_t now)
{
	for (size_t k = 0; k < w->n_blocks; k++) {
		struct lr_block *b = &w->blocks[k];

		for (uint32_t i = 0; b->state == LR_TRACKING && i < b->n_refs; i++) {
			uint64_t loc = b->refs[i].loc, v = 0;
			struct iovec local = { &v, sizeof(v) }, remote = { (void *)(uintptr_t)loc, 8 };
			struct lr_cause c = { .at_ns = now };

			if (b->refs[i].watched)
				continue;
			if (process_vm_readv(w->cfg.pid, &local, 1, &remote, 1, 0) != 8)
				v = 0;
			if (lastref__on_reread(b, 1, loc, v, &c))
				break;
		}
	}
}

static void report_done(struct watcher *w)
{
	for (size_t k = 0; k < w->n_blocks; k++) {
		if (w->blocks[k].state != LR_DONE || w->extra[k].reported)
			continue;
		w->extra[k].reported = true;
		loader__watch_free(w->ld, w->blocks[k].addr, false);
		if (w->done)
			w->done(w->ctx, &w->blocks[k]);
	}
}

static size_t resolved(const struct watcher *w)
{
	size_t n = 0;

	for (size_t k = 0; k < w->n_blocks; k++)
		n += w->blocks[k].state == LR_DONE;
	return n;
}

int watcher__step(struct watcher *w, uint64_t now, char *msg, size_t msg_len)
{
	size_t idx[WATCH_MAX_BLOCKS], n = 0;
	uint64_t lost;
	int err = 0;

	msg[0] = '\0';
	lost = loader__watch_lost(w->ld);
	if (lost != w->events_lost) {
		/* Any followed block may have missed its event: none gets a cause from them. */
		say(w, "lastref: %" PRIu64 " watch events lost (the ring buffer was full)",
		    lost - w->events_lost);
		w->events_lost = lost;
		lastref__events_lost(w->blocks, w->n_blocks);
	}
	handle_events(w);
	/* Blocks whose last known reference went, and new blocks due for another look. */
	for (size_t k = 0; now >= w->scan_ok_ns && k < w->n_blocks; k++)
		if ((w->blocks[k].state == LR_CONFIRM ||
		     (w->extra[k].next_scan_ns && now >= w->extra[k].next_scan_ns &&
		      w->blocks[k].state == LR_TRACKING)) && now >= w->extra[k].retry_ns)
			idx[n++] = k;
	/* No watchpoints: every tracked block is rescanned every VERIFY_NS. */
	if (!w->hw_fires && now >= w->scan_ok_ns && now - w->last_verify_ns >= VERIFY_NS) {
		for (size_t k = 0; k < w->n_blocks; k++) {
			bool in = false;

			for (size_t i = 0; i < n; i++)
				in |= idx[i] == k;
			if (!in && w->blocks[k].state == LR_TRACKING && w->blocks[k].n_refs &&
			    now >= w->extra[k].retry_ns)
				idx[n++] = k;
		}
		w->last_verify_ns = now;
	}
	if (n)
		err = scan_blocks(w, idx, n, now, msg, msg_len);
	if (!err && now - w->last_new_ns >= NEW_BLOCKS_NS && now >= w->scan_ok_ns) {
		w->last_new_ns = now;
		err = take_new_blocks(w, now, msg, msg_len);
	}
	if (err == -ESRCH)
		return -ESRCH;
	if (err) {
		/* A scan that failed leaves the process running; the next turn tries again. */
		say(w, "lastref: %s", msg[0] ? msg : strerror(-err));
		err = 0;
	}
	if (lastref__watchable(w->blocks, w->n_blocks) > w->write_slots &&
	    now - w->last_rotate_ns >= ROTATE_NS) {
		rearm(w, now, true);
		reread_unwatched(w, now);
	} else {
		rearm(w, now, false);
	}
	report_done(w);
	return w->cfg.max_blocks && resolved(w) >= w->cfg.max_blocks ? 1 : 0;
}

/* ---------------------------------------------------------------- life */

int watcher__new(struct watcher **out, struct loader *ld, struct collector *col,
		 const struct watch_config *cfg, watch_say_fn say_fn, watch_done_fn done, void *ctx,
		 char *msg, size_t msg_len)
{
	struct watcher *w = calloc(1, sizeof(*w));
	char why[160] = "";
	int err;

	if (!w)
		return -ENOMEM;
	w->ld = ld;
	w->col = col;
	w->cfg = *cfg;
	if (w->cfg.max_blocks > WATCH_MAX_BLOCKS)
		w->cfg.max_blocks = WATCH_MAX_BLOCKS;
	if (!w->cfg.max_stop_ms || w->cfg.max_stop_ms > SCAN_MAX_STOP_MS)
		w->cfg.max_stop_ms = SCAN_MAX_STOP_MS;
	w->say = say_fn;
	w->done = done;
	w->ctx = ctx;
	w->write_slots = WATCH_DEBUG_REGS;
	w->hw_fires = watcher__selftest(why, sizeof(why));
	if (!w->hw_fires) {
		w->write_slots = 0;
		say(w, "lastref: hardware watchpoints do not fire on this machine (%s): writes "
		    "cannot be caught; references are checked by scans only", why);
	}
	w->prog_fd = loader__watch_prog_fd(ld);
	w->events_lost = loader__watch_lost(ld);
	err = ustack__new(&w->unwinder, cfg->pid);
	if (err) {
		snprintf(msg, msg_len, "cannot set up the unwinder: %s", strerror(-err));
		free(w);
		return err;
	}
	err = w->prog_fd < 0 ? w->prog_fd : loader__watch_begin(ld, cfg->pid, on_watch_event, w);
	if (err) {
		snprintf(msg, msg_len, "cannot set up the watchpoint program: %s", strerror(-err));
		ustack__free(w->unwinder);
		free(w);
		return err;
	}
	*out = w;
	return 0;
}

int watcher__set_sites(struct watcher *w, const uint64_t *hashes, size_t n)
{
	uint64_t *v = malloc((n + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	memcpy(v, hashes, n * sizeof(*v));
	free(w->sites);
	w->sites = v;
	w->n_sites = n;
	return 0;
}

bool watcher__hw_fires(const struct watcher *w)
{
	return w->hw_fires;
}

size_t watcher__blocks(const struct watcher *w, const struct lr_block **out)
{
	*out = w->blocks;
	return w->n_blocks;
}

static void disarm_all(struct watcher *w)
{
	while (w->n_armed)
		disarm(w, w->n_armed - 1);
}

void watcher__finish(struct watcher *w)
{
	uint64_t now = monotonic_ns();

	if (!w)
		return;
	handle_events(w);
	disarm_all(w);
	for (size_t k = 0; k < w->n_blocks; k++)
		lastref__end(&w->blocks[k], now);
	report_done(w);
}

void watcher__free(struct watcher *w)
{
	if (!w)
		return;
	disarm_all(w);
	for (size_t k = 0; k < w->n_blocks; k++)
		loader__watch_free(w->ld, w->blocks[k].addr, false);
	free(w->armed);
	free(w->queue);
	free(w->sites);
	free(w->tids);
	ustack__free(w->unwinder);
	free(w);
}
