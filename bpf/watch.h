/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * watch.h - the layout `leaktop lastref` shares between bpf/watch.bpf.c and userspace
 * (user/live/watch.c): the watched locations, the blocks whose free matters, and the events
 * of the watch ring buffer.  Fixed-width types only, sizes asserted on both sides.
 */
#ifndef LEAKTOP_WATCH_H
#define LEAKTOP_WATCH_H

#ifdef __bpf__
/* vmlinux.h provides the fixed-width kernel types. */
#else
#include <linux/types.h>
#endif

#define LT_WATCH_MAX_SLOTS	64	/* locations and return addresses armed at once */
#define LT_WATCH_MAX_FREES	256	/* blocks whose free is reported */
#define LT_WATCH_RINGBUF_BYTES	(1u << 18)
#define LT_WATCH_FRAMES		32	/* user stack frames an event carries */

enum lt_watch_kind {
	LT_WATCH_WRITE = 1,		/* a hardware write watchpoint on an 8-byte word */
	LT_WATCH_RETURN = 2,		/* an execute breakpoint on a frame's return address */
};

/* watch_slots: armed address -> what a hit means.  Written by userspace. */
struct lt_watch_slot {
	__u64 lo, hi;			/* WRITE: a new value in [lo, hi) keeps the reference
					 * (no event); RETURN: lo is the frame's CFA, the frame
					 * returned when %rsp >= lo */
	__u32 kind;			/* enum lt_watch_kind */
	__u32 pad;
};

enum lt_watch_event_type {
	LT_WEV_WRITE = 1,		/* a watched word now points outside its block */
	LT_WEV_RETURN = 2,		/* a watched frame returned */
	LT_WEV_FREE = 3,		/* a block of watch_frees was freed */
};

/* Ring buffer `watch_events`, BPF -> userspace. */
struct lt_watch_event {
	__u32 type;			/* enum lt_watch_event_type */
	__u32 tid;
	__u64 addr;			/* the watched word, the return address, the freed block */
	__u64 value;			/* LT_WEV_WRITE: the word's new value */
	__u64 ip, sp;			/* user registers at the hit */
	__u64 ts_ns;
	__u32 nr;			/* frames in ips */
	__u32 pad;
	__u64 ips[LT_WATCH_FRAMES];	/* innermost first: ips[0] is the hit's ip */
};

#define LT_WATCH_ASSERT_SIZE(t, s) _Static_assert(sizeof(t) == (s), #t " layout changed")
LT_WATCH_ASSERT_SIZE(struct lt_watch_slot, 24);
LT_WATCH_ASSERT_SIZE(struct lt_watch_event, 56 + 8 * LT_WATCH_FRAMES);

#endif /* LEAKTOP_WATCH_H */
