/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * channel.h - the shared memory between the in-process agent (libleaktop-agent.so) and
 * leaktop: its layout, limits and hand-over.  The agent writes it; leaktop reads it each
 * interval (user/live/agent_channel.c) and writes only `heartbeat_ns`.
 *
 * One channel per process image.  The agent creates it (memfd_create, sized and sealed
 * against shrinking and growing, then mapped shared) and hands its descriptor over:
 *  - preloaded (`leaktop --agent -- CMD`): through the datagram socket named by the
 *    environment variable LT_AGENT_ENV, one message (struct lt_agent_hello) with the memfd
 *    as SCM_RIGHTS; leaktop's end takes the sender's pid from SCM_CREDENTIALS (the kernel's
 *    word, not the message's).  Children inherit the socket and the variable: a forked
 *    child and an exec'd image each send their own channel;
 *  - injected (`leaktop -p PID --agent`): leaktop_agent_start() returns the memfd's number
 *    in the process and leaktop takes it with pidfd_getfd().
 *
 * The agent does the accounting (what the BPF programs do in the kernel's maps): `sites`
 * holds one slot per stack (its frames and the site's counters, atomically added), `blocks`
 * one slot per live block (its size and site), so leaktop reads O(sites) per interval and
 * nothing is lost between reads.  Everything leaktop reads here is written by the traced
 * process: hostile input, bounds-checked by the reader (offsets, capacities, depth, frame
 * counts), and the memfd's seals are checked before it is mapped.
 */
#ifndef LEAKTOP_AGENT_CHANNEL_H
#define LEAKTOP_AGENT_CHANNEL_H

#include <stdint.h>

#define LT_AGENT_MAGIC		0x31746e6567616c74ULL	/* "ltagent1" */
#define LT_AGENT_VERSION	1
#define LT_AGENT_LIB		"libleaktop-agent.so"
/*
 * The preload hand-over: "fd=N,pid=P,depth=D": the socket's descriptor, leaktop's pid (the
 * agent checks the socket's peer is that process before sending) and the stack depth.
 */
#define LT_AGENT_ENV		"LEAKTOP_AGENT"
#define LT_AGENT_MEMFD_NAME	"leaktop-agent"

/* Capacities (slots, powers of two) and probe lengths of the two tables. */
#define LT_AGENT_SITES		(1u << 14)
#define LT_AGENT_BLOCKS		(1u << 20)
#define LT_AGENT_SITE_PROBES	64
#define LT_AGENT_BLOCK_PROBES	32
#define LT_AGENT_MAX_DEPTH	127		/* = LT_MAX_STACK_DEPTH */
#define LT_AGENT_DEFAULT_DEPTH	32
/* Descriptors of its own the agent names in its header, at most. */
#define LT_AGENT_OWN_FDS	7
/* The agent stops recording when leaktop's heartbeat is older than this (leaktop died). */
#define LT_AGENT_STALE_NS	(30ULL * 1000000000ULL)

/* leaktop_agent_start() flags. */
#define LT_AGENT_INJECTED	(1u << 0)	/* after a remote dlopen: redirect the GOTs */
/* Bits 8..15: the stack depth (0: LT_AGENT_DEFAULT_DEPTH). */
#define LT_AGENT_DEPTH_SHIFT	8
#define LT_AGENT_FLAGS_DEPTH(flags)	(((flags) >> LT_AGENT_DEPTH_SHIFT) & 0xffu)

/* lt_agent_hdr.state */
enum lt_agent_state {
	LT_AGENT_ACTIVE = 1,		/* recording */
	LT_AGENT_INERT = 2,		/* stopped (leaktop gone, detached, forked away) */
};

/* Counters of the agent (lt_agent_hdr.counters), the BPF side's drops and counters. */
enum lt_agent_counter {
	LT_AGENT_CNT_EVENTS,		/* allocator calls and frees accounted (LT_CNT_EVENTS) */
	LT_AGENT_CNT_FREE_UNKNOWN,	/* frees of blocks not seen allocated */
	LT_AGENT_CNT_NESTED,		/* allocator calls from inside another (counted once) */
	LT_AGENT_CNT_FAILED,		/* allocations that returned NULL */
	LT_AGENT_CNT_DROP_BLOCK_FULL,	/* block not recorded: no free slot (LT_DROP_ALLOC_MAP_FULL) */
	LT_AGENT_CNT_DROP_SITE_FULL,	/* allocation not counted: no site slot
					 * (LT_DROP_SITE_MAP_FULL) */
	LT_AGENT_CNT_CALLS,		/* allocator entries hooked (heap_calls) */
	LT_AGENT_CNT__COUNT,
};

struct lt_agent_hdr {
	uint64_t magic;			/* LT_AGENT_MAGIC */
	uint32_t version;		/* LT_AGENT_VERSION */
	uint32_t hdr_bytes;		/* sizeof(struct lt_agent_hdr) */
	uint64_t total_bytes;		/* the memfd's size */
	uint32_t pid;			/* the agent's process (leaktop trusts the kernel's) */
	uint32_t flags;			/* leaktop_agent_start()'s */
	uint32_t n_sites;		/* slots of sites */
	uint32_t n_blocks;		/* slots of blocks */
	uint32_t depth;			/* frames per site slot */
	uint32_t site_bytes;		/* one site slot: LT_AGENT_SITE_BYTES(depth) */
	uint64_t sites_off;		/* from the start of the memfd */
	uint64_t blocks_off;
	uint64_t order_off;		/* n_sites uint32_t: slot + 1 of each site, in the
					 * order they were made (0: not written yet) */
	uint32_t sites_used;		/* sites made (entries of order taken) */
	uint32_t pad;
	uint64_t start_ns;		/* CLOCK_MONOTONIC when the agent started (leaktop refuses a
					 * channel older than the image it would be given to) */
	uint64_t state;			/* enum lt_agent_state */
	uint64_t counters[LT_AGENT_CNT__COUNT];
	uint64_t heartbeat_ns;		/* written by leaktop each interval (CLOCK_MONOTONIC) */
	/*
	 * The agent's own descriptors (its channel, the pipe libunwind opens at its first walk):
	 * not the program's, so `leaktop check` does not report them as left open.
	 */
	uint32_t n_own_fds;
	int32_t own_fds[LT_AGENT_OWN_FDS];
	uint64_t reserved[4];
};

/* One site: the stack (key) and the aggregates the BPF `sites` map holds. */
struct lt_agent_site {
	uint64_t stack_hash;		/* 0: empty slot; the BPF walk's hash of ips[0..nr) */
	uint32_t ready;			/* 1 once ips and nr are written (release) */
	uint32_t nr;			/* frames in ips, innermost first */
	int64_t outstanding_bytes;
	int64_t outstanding_count;
	uint64_t allocs;
	uint64_t frees;
	uint64_t alloc_bytes;
	uint64_t live_since_ns;
	uint64_t last_alloc_ns;
	uint64_t ips[];			/* depth return addresses */
};

#define LT_AGENT_SITE_BYTES(depth)	(sizeof(struct lt_agent_site) + 8u * (depth))

/* One live block. */
#define LT_AGENT_BLOCK_EMPTY	0ULL	/* never used: a lookup stops here */
#define LT_AGENT_BLOCK_GONE	1ULL	/* freed: insertions reuse it, lookups go on */

struct lt_agent_block {
	uint64_t addr;			/* LT_AGENT_BLOCK_EMPTY, _GONE, or the block */
	uint64_t size_bytes;
	uint32_t site;			/* slot index in sites */
	uint32_t pad;
	uint64_t ts_ns;
};

/* The preload hand-over message (with SCM_RIGHTS: the memfd). */
struct lt_agent_hello {
	uint64_t magic;			/* LT_AGENT_MAGIC */
	uint32_t version;
	uint32_t pid;			/* as the agent believes (SCM_CREDENTIALS decides) */
};

#define LT_AGENT_PAGE_UP(x)	(((uint64_t)(x) + 4095) & ~4095ULL)

/* The agent's layout for a depth: offsets of the tables and the total size, page-aligned
 * (leaktop checks a channel's header against the file, not against this). */
static inline uint64_t lt_agent_layout(uint32_t depth, uint64_t *order_off, uint64_t *sites_off,
				       uint64_t *blocks_off)
{
	uint64_t o = LT_AGENT_PAGE_UP(sizeof(struct lt_agent_hdr));
	uint64_t s = o + LT_AGENT_PAGE_UP((uint64_t)LT_AGENT_SITES * sizeof(uint32_t));
	uint64_t b = s + LT_AGENT_PAGE_UP((uint64_t)LT_AGENT_SITES * LT_AGENT_SITE_BYTES(depth));

	*order_off = o;
	*sites_off = s;
	*blocks_off = b;
	return b + LT_AGENT_PAGE_UP((uint64_t)LT_AGENT_BLOCKS * sizeof(struct lt_agent_block));
}

/* The BPF walk's stack hash (bpf/common.bpf.h stack_hash_of, heap salt 0; 0 becomes 1). */
static inline uint64_t lt_agent_stack_hash(const uint64_t *ips, uint32_t nr)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (uint32_t i = 0; i < nr; i++) {
		h ^= ips[i];
		h *= 0x100000001b3ULL;
	}
	return h ? h : 1;
}

#endif
