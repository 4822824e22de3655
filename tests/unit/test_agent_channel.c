// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_agent_channel.c - the in-process agent's channel: what the agent records
 * (user/agent/record.c, built into this test) reads back through leaktop's checks
 * (live/agent_channel.c), and the reader refuses every hostile header and slot.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "live/agent_channel.h"

/* The agent's accounting itself, so the round trip is the real writer's. */
#include "../../user/agent/record.c"

#define DEPTH	8

static struct lt_agent_hdr *new_channel(uint64_t *total)
{
	uint64_t o, s, b;
	struct lt_agent_hdr *h;

	*total = lt_agent_layout(DEPTH, &o, &s, &b);
	h = calloc(1, *total);
	if (h)
		agent_record_init(h, *total, DEPTH, 0);
	return h;
}

static void test_agent_round_trip_counts_allocs_and_frees_per_site(void)
{
	uint64_t total, ips[LT_AGENT_MAX_DEPTH], size;
	struct lt_agent_hdr *h = new_channel(&total);
	struct agent_layout l;
	struct agent_site s;
	uint32_t site;

	CHECK(h);
	/* Two blocks from one call site (no frame pointer: one frame), one from another. */
	agent_record_alloc(h, 0x10000, 100, 0x401234, 0);
	agent_record_alloc(h, 0x20000, 50, 0x401234, 0);
	agent_record_alloc(h, 0x30000, 7, 0x405678, 0);
	CHECK(agent_record_take(h, 0x20000, &site, &size));
	agent_record_freed(h, site, size);
	CHECK(!agent_record_take(h, 0x20000, &site, &size));
	CHECK_EQ_INT(agent_channel__check(h, total, &l), 0);
	CHECK_EQ_INT(agent_channel__n_sites(&l, h), 2);
	CHECK_EQ_INT(agent_channel__site(&l, h, 0, &s, ips), 1);
	CHECK_EQ_INT(s.nr, 1);
	CHECK(ips[0] == 0x401234);
	CHECK(s.stack_hash == lt_agent_stack_hash(ips, 1));
	CHECK_EQ_INT(s.outstanding_count, 1);
	CHECK_EQ_INT(s.outstanding_bytes, 100);
	CHECK_EQ_INT(s.allocs, 2);
	CHECK_EQ_INT(s.frees, 1);
	CHECK_EQ_INT(s.alloc_bytes, 150);
	CHECK_EQ_INT(agent_channel__site(&l, h, 1, &s, ips), 1);
	CHECK_EQ_INT(s.outstanding_bytes, 7);
	agent_flush();
	CHECK_EQ_INT(h->counters[LT_AGENT_CNT_EVENTS], 4);
	free(h);
}

static void test_agent_stack_hash_is_the_bpf_walks(void)
{
	/* bpf/common.bpf.h: FNV-1a over the addresses, 0 becomes 1. */
	uint64_t ips[2] = { 0x1000, 0x2000 }, h = 0xcbf29ce484222325ULL;

	for (int i = 0; i < 2; i++) {
		h ^= ips[i];
		h *= 0x100000001b3ULL;
	}
	CHECK(lt_agent_stack_hash(ips, 2) == h);
}

static void test_agent_header_rejects_hostile_fields(void)
{
	uint64_t total;
	struct lt_agent_hdr *h = new_channel(&total), bad;
	struct agent_layout l;

	CHECK(h);
	CHECK_EQ_INT(agent_channel__check(h, total, &l), 0);
	/* A file of another size than the header says (a read past its end would fault). */
	CHECK_EQ_INT(agent_channel__check(h, total - 4096, &l), -EINVAL);
#define BAD(field, value)							\
	do {									\
		bad = *h;							\
		bad.field = (value);						\
		CHECK_EQ_INT(agent_channel__check(&bad, total, &l), -EINVAL);	\
	} while (0)
	BAD(magic, 0);
	BAD(version, 2);
	BAD(hdr_bytes, 8);
	BAD(total_bytes, ~0ULL);
	BAD(n_sites, 3);
	BAD(n_sites, LT_AGENT_SITES * 2);
	BAD(n_sites, 0);
	BAD(n_blocks, LT_AGENT_BLOCKS * 2);
	BAD(depth, 0);
	BAD(depth, LT_AGENT_MAX_DEPTH + 1);
	BAD(site_bytes, 16);
	BAD(order_off, 8);				/* inside the header */
	BAD(order_off, 2);				/* misaligned */
	BAD(sites_off, h->order_off);			/* over the order table */
	BAD(sites_off, ~0ULL - 100);			/* wraps around */
	BAD(blocks_off, h->sites_off + 8);		/* over the sites */
	BAD(blocks_off, total);				/* past the end */
#undef BAD
	free(h);
}

static void test_agent_site_rejects_hostile_slots(void)
{
	uint64_t total, ips[LT_AGENT_MAX_DEPTH];
	struct lt_agent_hdr *h = new_channel(&total);
	uint32_t *order;
	struct lt_agent_site *slot;
	struct agent_layout l;
	struct agent_site s;

	CHECK(h);
	agent_record_alloc(h, 0x10000, 100, 0x401234, 0);
	CHECK_EQ_INT(agent_channel__check(h, total, &l), 0);
	order = (uint32_t *)((char *)h + l.order_off);
	slot = (struct lt_agent_site *)((char *)h + l.sites_off +
					(uint64_t)(order[0] - 1) * l.site_bytes);
	CHECK_EQ_INT(agent_channel__site(&l, h, 0, &s, ips), 1);
	/* A count of sites past the table is the table. */
	h->sites_used = ~0u;
	CHECK_EQ_INT(agent_channel__n_sites(&l, h), LT_AGENT_SITES);
	CHECK_EQ_INT(agent_channel__site(&l, h, LT_AGENT_SITES, &s, ips), 0);
	CHECK_EQ_INT(agent_channel__site(&l, h, 1, &s, ips), 0);	/* entry not written */
	order[1] = LT_AGENT_SITES + 1;					/* no such slot */
	CHECK_EQ_INT(agent_channel__site(&l, h, 1, &s, ips), 0);
	/* Frames past the slot, with the hash they would give. */
	slot->nr = DEPTH + 1;
	slot->stack_hash = lt_agent_stack_hash(slot->ips, DEPTH + 1);
	CHECK_EQ_INT(agent_channel__site(&l, h, 0, &s, ips), 0);
	slot->nr = 100000;						/* past any buffer */
	CHECK_EQ_INT(agent_channel__site(&l, h, 0, &s, ips), 0);
	slot->stack_hash = lt_agent_stack_hash(slot->ips, 1);
	slot->nr = 0;
	CHECK_EQ_INT(agent_channel__site(&l, h, 0, &s, ips), 0);
	slot->nr = 1;
	slot->stack_hash ^= 1;						/* not its frames' */
	CHECK_EQ_INT(agent_channel__site(&l, h, 0, &s, ips), 0);
	slot->stack_hash ^= 1;
	slot->ready = 0;
	CHECK_EQ_INT(agent_channel__site(&l, h, 0, &s, ips), 0);
	slot->ready = 1;
	CHECK_EQ_INT(agent_channel__site(&l, h, 0, &s, ips), 1);
	free(h);
}

int main(void)
{
	RUN(test_agent_round_trip_counts_allocs_and_frees_per_site);
	RUN(test_agent_stack_hash_is_the_bpf_walks);
	RUN(test_agent_header_rejects_hostile_fields);
	RUN(test_agent_site_rejects_hostile_slots);
	CHECK_EXIT();
}
