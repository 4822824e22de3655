// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * record.c - the agent's accounting, what bpf/heap.bpf.c does in the kernel's maps, into the
 * channel (agent/channel.h): the caller's stack by the .eh_frame rules (libunwind; frame
 * pointers should it fail), hashed as the BPF walk hashes it; the site of that stack (a slot claimed once with a compare-and-swap, its
 * counters atomically added); the block's record (open addressing, bounded probes, freed
 * slots reused).  Lock-free: no lock and no allocation of the agent's own (libunwind keeps
 * its caches in memory it maps itself), no syscall per call.
 */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "agent/agent.h"

#define TLS	__attribute__((tls_model("initial-exec")))

struct lt_agent_hdr *volatile agent_channel;

/* This thread's stack, [lo, hi): 0, 0 until known; lo 1: unknown (frame 0 only). */
static __thread uint64_t stack_lo TLS, stack_hi TLS;
/* Counts this thread has not added to the channel's yet (agent_flush). */
static __thread struct lt_agent_hdr *pending_ch TLS;
static __thread uint64_t pending[LT_AGENT_CNT__COUNT] TLS;

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	/* The vDSO, no syscall; the tick's resolution (a few ms) is plenty for the ages. */
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void agent_record_init(struct lt_agent_hdr *hdr, uint64_t total, uint32_t depth, uint32_t flags)
{
	uint64_t order_off, sites_off, blocks_off;

	lt_agent_layout(depth, &order_off, &sites_off, &blocks_off);
	hdr->magic = LT_AGENT_MAGIC;
	hdr->version = LT_AGENT_VERSION;
	hdr->hdr_bytes = sizeof(*hdr);
	hdr->total_bytes = total;
	hdr->flags = flags;
	hdr->n_sites = LT_AGENT_SITES;
	hdr->n_blocks = LT_AGENT_BLOCKS;
	hdr->depth = depth;
	hdr->site_bytes = LT_AGENT_SITE_BYTES(depth);
	hdr->sites_off = sites_off;
	hdr->blocks_off = blocks_off;
	hdr->order_off = order_off;
	{
		struct timespec ts;

		/* Precise: leaktop compares it with when the image was traced (its exec). */
		clock_gettime(CLOCK_MONOTONIC, &ts);
		hdr->start_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	}
	hdr->heartbeat_ns = hdr->start_ns;
	__atomic_store_n(&hdr->state, LT_AGENT_ACTIVE, __ATOMIC_RELEASE);
}

void agent_flush(void)
{
	struct lt_agent_hdr *ch = pending_ch;

	for (int i = 0; ch && i < LT_AGENT_CNT__COUNT; i++)
		if (pending[i])
			__atomic_fetch_add(&ch->counters[i], pending[i], __ATOMIC_RELAXED);
	for (int i = 0; i < LT_AGENT_CNT__COUNT; i++)
		pending[i] = 0;
}

void agent_count(struct lt_agent_hdr *ch, enum lt_agent_counter c)
{
	/* The busy ones in this thread's tally, added every so often (no shared line). */
	if (c == LT_AGENT_CNT_EVENTS || c == LT_AGENT_CNT_CALLS) {
		if (__builtin_expect(pending_ch != ch, 0)) {
			agent_flush();
			pending_ch = ch;
		}
		pending[c]++;
		return;
	}
	__atomic_fetch_add(&ch->counters[c], 1, __ATOMIC_RELAXED);
}

static inline struct lt_agent_site *site_at(struct lt_agent_hdr *ch, uint32_t i)
{
	return (struct lt_agent_site *)((char *)ch + ch->sites_off + (uint64_t)i * ch->site_bytes);
}

static inline struct lt_agent_block *blocks(struct lt_agent_hdr *ch)
{
	return (struct lt_agent_block *)((char *)ch + ch->blocks_off);
}

static void learn_stack(void)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;

	stack_lo = 1;
	stack_hi = 1;
	if (pthread_getattr_np(pthread_self(), &attr))
		return;
	if (!pthread_attr_getstack(&attr, &addr, &size) && size) {
		stack_lo = (uint64_t)addr;
		stack_hi = (uint64_t)addr + size;
	}
	pthread_attr_destroy(&attr);
}

/*
 * The caller's stack by the modules' .eh_frame rules (libunwind, from this frame, with its
 * per-thread cache of the frames it read): ips[0] is the caller's return address, which
 * must be among the frames found; what follows it there is taken.  The count, or 0 when
 * libunwind did not reach it.
 */
static uint32_t walk_cfi(uint64_t *ips, uint32_t depth)
{
	void *buf[LT_AGENT_MAX_DEPTH + 16];
	int got = unw_backtrace(buf, (int)(sizeof(buf) / sizeof(buf[0])));
	uint32_t n = 1;

	for (int i = 0; i < got; i++) {
		if ((uint64_t)buf[i] != ips[0])
			continue;
		for (int j = i + 1; j < got && n < depth; j++)
			ips[n++] = (uint64_t)buf[j];
		return n;
	}
	return 0;
}

void agent_record_warm(void)
{
	void *buf[4];

	unw_backtrace(buf, 4);
}

/* This library's text: its frames (a hook calling on) are never a site's. */
extern char __ehdr_start[] __attribute__((visibility("hidden")));
extern char _etext[] __attribute__((visibility("hidden")));

static uint32_t drop_own_frames(uint64_t *ips, uint32_t n)
{
	uint32_t w = 0;

	for (uint32_t i = 0; i < n; i++)
		if (ips[i] < (uint64_t)__ehdr_start || ips[i] >= (uint64_t)_etext)
			ips[w++] = ips[i];
	return w;
}

/*
 * The caller's stack, innermost first: its return address, then as the BPF walk with
 * --unwind cfi finds it (the .eh_frame rules); should that fail, by the frame pointer chain
 * while it stays inside this thread's stack and moves outwards.
 */
static uint32_t walk(uint64_t ra, uint64_t fp, uint64_t *ips, uint32_t depth)
{
	uint64_t prev = (uint64_t)__builtin_frame_address(0);
	uint32_t n;

	ips[0] = ra;
	n = depth > 1 ? walk_cfi(ips, depth) : 1;
	if (n) {
		n = drop_own_frames(ips, n);
		if (!n)
			ips[n++] = ra;
		return n;
	}
	n = 1;
	if (!stack_lo)
		learn_stack();
	while (n < depth) {
		if (fp <= prev || (fp & 7) || fp < stack_lo || fp + 16 > stack_hi)
			break;
		ra = ((uint64_t *)fp)[1];
		if (ra < 4096)
			break;
		ips[n++] = ra;
		prev = fp;
		fp = ((uint64_t *)fp)[0];
	}
	return n;
}

/* The slot of the site with this stack, made on first use; -1: no room. */
static int64_t site_get(struct lt_agent_hdr *ch, const uint64_t *ips, uint32_t nr)
{
	uint64_t h = lt_agent_stack_hash(ips, nr);
	uint32_t mask = ch->n_sites - 1;

	for (uint32_t k = 0; k < LT_AGENT_SITE_PROBES; k++) {
		uint32_t i = (uint32_t)(h + k) & mask;
		struct lt_agent_site *s = site_at(ch, i);
		uint64_t key = __atomic_load_n(&s->stack_hash, __ATOMIC_ACQUIRE);

		if (key == h)
			return i;
		if (key)
			continue;
		if (!__atomic_compare_exchange_n(&s->stack_hash, &key, h, 0, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE)) {
			if (key == h)
				return i;
			continue;
		}
		for (uint32_t j = 0; j < nr; j++)
			s->ips[j] = ips[j];
		s->nr = nr;
		__atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);
		k = __atomic_fetch_add(&ch->sites_used, 1, __ATOMIC_RELAXED);
		if (k < ch->n_sites)
			__atomic_store_n((uint32_t *)((char *)ch + ch->order_off) + k, i + 1,
					 __ATOMIC_RELEASE);
		return i;
	}
	return -1;
}

static inline uint64_t block_slot(uint64_t addr)
{
	addr ^= addr >> 33;
	addr *= 0xff51afd7ed558ccdULL;
	addr ^= addr >> 33;
	return addr;
}

static int block_put(struct lt_agent_hdr *ch, uint64_t addr, uint32_t site, uint64_t size,
		     uint64_t ts)
{
	struct lt_agent_block *b = blocks(ch);
	uint32_t mask = ch->n_blocks - 1;
	uint64_t h = block_slot(addr);

	for (uint32_t k = 0; k < LT_AGENT_BLOCK_PROBES; k++) {
		struct lt_agent_block *e = &b[(h + k) & mask];
		uint64_t key = __atomic_load_n(&e->addr, __ATOMIC_ACQUIRE);

		if (key != LT_AGENT_BLOCK_EMPTY && key != LT_AGENT_BLOCK_GONE)
			continue;
		if (!__atomic_compare_exchange_n(&e->addr, &key, addr, 0, __ATOMIC_ACQ_REL,
						 __ATOMIC_RELAXED))
			continue;
		e->size_bytes = size;
		e->site = site;
		e->ts_ns = ts;
		return 0;
	}
	return -1;
}

int agent_record_take(struct lt_agent_hdr *ch, uint64_t addr, uint32_t *site, uint64_t *size)
{
	struct lt_agent_block *b = blocks(ch);
	uint32_t mask = ch->n_blocks - 1;
	uint64_t h = block_slot(addr);

	for (uint32_t k = 0; k < LT_AGENT_BLOCK_PROBES; k++) {
		struct lt_agent_block *e = &b[(h + k) & mask];
		uint64_t key = __atomic_load_n(&e->addr, __ATOMIC_ACQUIRE);

		if (key == LT_AGENT_BLOCK_EMPTY)
			return 0;
		if (key != addr)
			continue;
		*site = e->site;
		*size = e->size_bytes;
		if (__atomic_compare_exchange_n(&e->addr, &key, LT_AGENT_BLOCK_GONE, 0,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			return 1;
	}
	return 0;
}

void agent_record_freed(struct lt_agent_hdr *ch, uint32_t site, uint64_t size)
{
	struct lt_agent_site *s;

	if (site >= ch->n_sites)
		return;
	s = site_at(ch, site);
	__atomic_fetch_sub(&s->outstanding_bytes, (int64_t)size, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&s->outstanding_count, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->frees, 1, __ATOMIC_RELAXED);
	agent_count(ch, LT_AGENT_CNT_EVENTS);
}

void agent_record_put_back(struct lt_agent_hdr *ch, uint64_t addr, uint32_t site, uint64_t size)
{
	if (block_put(ch, addr, site, size, now_ns())) {
		/* No room: untracked from now on, off its site, counted. */
		agent_record_freed(ch, site, size);
		agent_count(ch, LT_AGENT_CNT_DROP_BLOCK_FULL);
	}
}

void agent_record_alloc(struct lt_agent_hdr *ch, uint64_t addr, uint64_t size, uint64_t ra,
			uint64_t fp)
{
	uint64_t ips[LT_AGENT_MAX_DEPTH], now, old_size;
	uint32_t nr = walk(ra, fp, ips, ch->depth), old_site;
	int64_t i = site_get(ch, ips, nr);
	struct lt_agent_site *s;

	if (i < 0) {
		agent_count(ch, LT_AGENT_CNT_DROP_SITE_FULL);
		return;
	}
	/* The address is live again without a free we saw: retire the old record. */
	if (agent_record_take(ch, addr, &old_site, &old_size))
		agent_record_freed(ch, old_site, old_size);
	now = now_ns();
	s = site_at(ch, (uint32_t)i);
	__atomic_fetch_add(&s->allocs, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->alloc_bytes, size, __ATOMIC_RELAXED);
	__atomic_store_n(&s->last_alloc_ns, now, __ATOMIC_RELAXED);
	if (block_put(ch, addr, (uint32_t)i, size, now)) {
		agent_count(ch, LT_AGENT_CNT_DROP_BLOCK_FULL);
		return;
	}
	__atomic_fetch_add(&s->outstanding_bytes, (int64_t)size, __ATOMIC_RELAXED);
	if (__atomic_fetch_add(&s->outstanding_count, 1, __ATOMIC_RELAXED) == 0)
		__atomic_store_n(&s->live_since_ns, now, __ATOMIC_RELAXED);
	agent_count(ch, LT_AGENT_CNT_EVENTS);
}
