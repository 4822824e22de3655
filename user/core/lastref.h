/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * lastref.h - `leaktop lastref`'s bookkeeping of the references to the blocks it follows, as
 * a pure state machine: which words hold a pointer into each block, which of them the
 * hardware watches (4 debug registers: a budget, rotated when there are more words than
 * slots), and what each event (a watched word overwritten, a frame returned, a block freed,
 * an unwatched word found changed) does to them.  When a block's last known reference goes
 * the block waits for a confirmation scan (lastref__confirm) that either finds others and
 * goes on, or gives the verdict.  No system calls: user/live/watch.c feeds it.
 */
#ifndef LEAKTOP_LASTREF_H
#define LEAKTOP_LASTREF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/frame.h"

#define LR_MAX_REFS		32	/* references kept per block */
#define LR_MAX_FRAMES		32	/* frames of the stack that resolved a block */

enum lr_ref_kind {
	LR_REF_MEMORY,			/* a word of global data, bss or other writable memory */
	LR_REF_HEAP,			/* a word inside another tracked heap block (its holder) */
	LR_REF_STACK,			/* a word of a thread's stack, in a known frame or not */
	LR_REF_REGISTER,		/* a register of a stopped thread: cannot be watched */
	LR_REF__COUNT,
};

extern const char *const lr_ref_kind_names[LR_REF__COUNT];

enum lr_verdict {
	LR_PENDING,			/* not resolved yet */
	LR_OVERWRITTEN,			/* the last pointer was overwritten */
	LR_HOLDER_FREED,		/* the block that held the last pointer was freed */
	LR_FRAME_RETURNED,		/* the frame that held the last pointer returned */
	LR_REGISTER_ONLY,		/* the last pointer lived in a register: not watchable */
	LR_FREED,			/* the block itself was freed: not lost */
	LR_UNRESOLVED,			/* still referenced, or lost before it was watched */
	LR_VERDICT__COUNT,
};

extern const char *const lr_verdict_names[LR_VERDICT__COUNT];

enum lr_state {
	LR_TRACKING,			/* references known and watched */
	LR_CONFIRM,			/* its last known reference went: scan for others */
	LR_DONE,			/* verdict given */
};

struct lr_ref {
	enum lr_ref_kind kind;
	uint32_t tid;			/* STACK, REGISTER: the thread */
	uint64_t loc;			/* the word's address (REGISTER: 0) */
	uint64_t holder;		/* HEAP: the block the word lies in */
	uint32_t reg;			/* REGISTER: its index in struct user_regs_struct */
	uint64_t ip;			/* REGISTER: the thread's ip then */
	uint64_t frame_pc;		/* STACK: a pc of the frame's function (0: unknown) */
	uint64_t frame_ret;		/* STACK: the frame's return address (0: unknown) */
	uint64_t frame_cfa;		/* STACK: %rsp once the frame has returned */
	bool watched;			/* a watchpoint is armed on it now */
	uint64_t last_watched_ns;	/* when it was last armed (0: never) */
	uint64_t unwatched_ns;		/* since when it is not watched (while !watched) */
};

/* What resolved a block (or sent it to a confirmation scan). */
struct lr_cause {
	enum lr_verdict verdict;
	struct lr_ref ref;		/* the reference that went */
	uint64_t at_ns;			/* when (the event's time) */
	bool unwatched;			/* an overwrite seen at a re-read, not by the hardware */
	uint64_t since_ns;		/* unwatched: the word was last known good then */
	uint32_t tid;			/* the thread of the event (0: none) */
	uint64_t ip;			/* its ip, and the frame the ip was in (RETURN: to) */
	uint64_t value;			/* OVERWRITTEN: the new value */
	uint64_t ips[LR_MAX_FRAMES];	/* the user stack of the event, innermost first */
	uint32_t nr;
	/*
	 * LR_UNRESOLVED given up: why, as said after the block ("could not confirm: ...",
	 * "unresolved: events lost ..."); empty otherwise.
	 */
	char why[192];
};

struct lr_block {
	uint64_t addr, size;
	uint64_t stack_hash;		/* its allocation site */
	uint64_t found_ns;		/* first scanned */
	/*
	 * The allocator's own address inside the block: the header of the glibc chunk after it
	 * when it lies inside the block (core/scan.h scan__glibc_next_chunk; 0: none).  Arena
	 * top, last_remainder, bins and free chunks' links point there: not references.
	 */
	uint64_t alloc_meta;
	enum lr_state state;
	struct lr_ref refs[LR_MAX_REFS];	/* memory references, watchable */
	uint32_t n_refs;
	uint32_t refs_over;		/* references found beyond LR_MAX_REFS (not kept) */
	uint32_t scans;			/* scans made of it */
	struct lr_cause cause;		/* LR_CONFIRM, LR_DONE: why */
	/*
	 * Stack words whose frame returned since the last scan, and their thread: a frame the
	 * thread calls next covers them, and until it writes there they still hold the pointer,
	 * dead.  The next scan does not take them for references.
	 */
	uint64_t dead[LR_MAX_REFS];
	uint32_t n_dead, dead_tid;
	/*
	 * Watch events were dropped (ring buffer full) while it was followed: a verdict drawn
	 * from events may name the wrong cause, so it ends unresolved instead.
	 */
	bool events_lost;
};

/*
 * Does v point into the block ([addr, addr + size), a 0-byte block at addr), other than at
 * the allocator's chunk header inside it (alloc_meta)?  Not one past its end, not its own
 * chunk header before it.
 */
bool lastref__points_into(const struct lr_block *b, uint64_t v);

/*
 * Add a memory reference found by a scan: the same place twice is one reference, a word of
 * the block itself is none (a block pointing to itself does not keep it).  0, -EEXIST,
 * -EINVAL (inside the block), or -ENOSPC (counted in refs_over).
 */
int lastref__add_ref(struct lr_block *b, const struct lr_ref *r);

/*
 * Events.  Each drops the references it ends; a block whose last reference went moves to
 * LR_CONFIRM with the cause filled in from c (verdict, time, stack, ...).  Each returns how
 * many blocks moved to LR_CONFIRM or LR_DONE.
 */
/* The word at loc now holds value (a watchpoint hit: c->ref and c->verdict are set here). */
size_t lastref__on_write(struct lr_block *b, size_t n, uint64_t loc, uint64_t value,
			 const struct lr_cause *c);
/* An unwatched word, re-read at c->at_ns, holds value: a change seen only now. */
size_t lastref__on_reread(struct lr_block *b, size_t n, uint64_t loc, uint64_t value,
			  const struct lr_cause *c);
/* Thread tid reached return address ret with %rsp at sp: frames with that return address
 * whose CFA is at or below sp returned. */
size_t lastref__on_return(struct lr_block *b, size_t n, uint32_t tid, uint64_t ret, uint64_t sp,
			  const struct lr_cause *c);
/* The block at addr was freed: a followed block is LR_FREED (done), references held in it
 * are gone. */
size_t lastref__on_free(struct lr_block *b, size_t n, uint64_t addr, const struct lr_cause *c);

/*
 * The confirmation scan of b (LR_CONFIRM, or a first scan of a new block): found[] memory
 * references, regs[] registers pointing into it (stack words of frames that returned since
 * the last scan are not references: see lr_block.dead).  With memory references b is tracked
 * again (true).  Otherwise the verdict: a register only (LR_REGISTER_ONLY, its first
 * register the reference), else the cause that sent it here; a block that never had a
 * reference (first scan) is LR_UNRESOLVED.  Returns whether b is tracked.
 */
bool lastref__confirm(struct lr_block *b, const struct lr_ref *found, size_t n_found,
		      const struct lr_ref *regs, size_t n_regs, uint64_t now_ns);

/*
 * Where hardware watchpoints do not fire: a scan of tracked block b found found[] (as
 * lastref__confirm takes them).  Each reference of b not found again went between the two
 * scans, seen by this one (cause.unwatched, since its last known good time, unwatched_ns):
 * a stack word now in another frame of its thread is LR_FRAME_RETURNED (its word dead for
 * the confirmation), any other LR_OVERWRITTEN.  Those found again are good now.  Call
 * before lastref__confirm; returns 1 when b moved to LR_CONFIRM.
 */
size_t lastref__verify(struct lr_block *b, const struct lr_ref *found, size_t n_found,
		       uint64_t now_ns);

/*
 * Give up on b now, with the reason said after it (why: "could not confirm: ..."):
 * LR_UNRESOLVED unless it has a verdict.
 */
void lastref__give_up(struct lr_block *b, const char *why, uint64_t now_ns);

/* Watch events were lost: every block not done yet may have missed one (events_lost). */
void lastref__events_lost(struct lr_block *b, size_t n);

/* Give up on b (the run ended): LR_UNRESOLVED unless it has a verdict. */
void lastref__end(struct lr_block *b, uint64_t now_ns);

/* Which reference a watch slot goes to. */
struct lr_pick {
	uint32_t block, ref;
};

/*
 * The memory references of tracked blocks to watch with `slots` write watchpoints.  All of
 * them when they fit.  Otherwise, when `rotate`, those watched least recently (never first;
 * ties in block and reference order), else the ones watched now, the rest of the slots to
 * the least recently watched.  Returns how many went to out (at most max).
 */
size_t lastref__pick(const struct lr_block *b, size_t n, unsigned int slots, bool rotate,
		     struct lr_pick *out, size_t max);

/* Memory references of tracked blocks (the words that want a watchpoint). */
size_t lastref__watchable(const struct lr_block *b, size_t n);

/* Mark b->refs[i] armed (watched) or not, at now_ns. */
void lastref__mark(struct lr_ref *r, bool watched, uint64_t now_ns);

/* One resolved block, its addresses named: what a lastref hands the model (process->lastref). */
struct lastref_result {
	uint32_t pid;			/* the image it was followed in */
	uint64_t gen;
	struct lr_block b;
	struct sym_frame alloc;		/* where it was allocated (the site's innermost frame) */
	struct sym_frame *at;		/* the stack of the moment, innermost first */
	uint32_t n_at;
	struct sym_frame frame;		/* LR_FRAME_RETURNED: the frame that held the pointer;
					 * LR_REGISTER_ONLY: where the thread was */
	char reg[8];			/* LR_REGISTER_ONLY: the register's name ("": unknown) */
	double at_s, since_s;		/* run clock: the moment; unwatched: last known good */
};

void lastref_result__free(struct lastref_result *r);
/* dst, a copy of src that owns its own frames (free with lastref_result__free): 0 or
 * -ENOMEM (dst then empty). */
int lastref_result__copy(struct lastref_result *dst, const struct lastref_result *src);

#endif
