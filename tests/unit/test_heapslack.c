// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_heapslack.c - unit tests of the glibc heap walk (core/heapslack.c) on synthetic heaps:
 * chunk headers written where each case needs them, the trimmable pages computed by hand
 * from glibc's rules (mtrim: whole pages of a free chunk past its 48-byte header; systrim:
 * the main arena's top but MINSIZE + 1 bytes, in whole pages).
 */
#include "check.h"
#include "core/heapslack.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BASE	0x10000ull
#define LEN	0x20000ull

static uint8_t heap[LEN];

static void put_size(uint64_t chunk, uint64_t size_word)
{
	memcpy(heap + (chunk - BASE) + 8, &size_word, 8);
}

/*
 * A used 0x4010 chunk, a free 0x4010 chunk (the next one's PREV_INUSE clear), a used one,
 * then the top to the end: 0x13fd0 bytes.
 */
static void three_chunks_and_top(void)
{
	memset(heap, 0, sizeof(heap));
	put_size(0x10000, 0x4011);
	put_size(0x14010, 0x4011);
	put_size(0x18020, 0x4010);		/* its predecessor is free */
	put_size(0x1c030, 0x13fd0 | 1);
}

static struct heapslack_heap main_heap(void)
{
	return (struct heapslack_heap){ BASE, heap, LEN, BASE, BASE + LEN, true, NULL };
}

static void test_free_chunk_between_used_ones_gives_back_its_whole_pages_past_the_header(void)
{
	struct heapslack_heap h = main_heap();
	struct heapslack s = {};

	three_chunks_and_top();
	CHECK_EQ_INT(heapslack__glibc_walk(&h, &s), 0);
	CHECK(s.valid && !s.partial);
	CHECK_EQ_INT(s.heaps, 1);
	CHECK_EQ_INT(s.chunks, 4);
	CHECK_EQ_INT(s.free_chunks, 1);
	CHECK_EQ_INT(s.top_bytes, 0x13fd0);
	CHECK_EQ_INT(s.free_bytes, 0x4010 + 0x13fd0);
	/* 0x15000-0x18000 of the free chunk; the top's 0x13fd0 - 33 rounded down: 0x13000. */
	CHECK_EQ_INT(s.trimmable_bytes, 0x3000 + 0x13000);
}

static void test_thread_heap_top_is_not_trimmed(void)
{
	struct heapslack_heap h = main_heap();
	struct heapslack s = {};

	three_chunks_and_top();
	h.main_arena = false;
	CHECK_EQ_INT(heapslack__glibc_walk(&h, &s), 0);
	CHECK(s.valid);
	CHECK_EQ_INT(s.trimmable_bytes, 0x3000);
}

static void test_pages_not_resident_are_neither_free_nor_trimmable(void)
{
	struct heapslack_heap h = main_heap();
	struct heapslack s = {};
	uint8_t resident[LEN / 4096 / 8 + 1];

	three_chunks_and_top();
	memset(resident, 0xff, sizeof(resident));
	resident[0] &= ~(1u << 5);		/* page 0x15000 */
	h.resident = resident;
	CHECK_EQ_INT(heapslack__glibc_walk(&h, &s), 0);
	CHECK_EQ_INT(s.trimmable_bytes, 0x2000 + 0x13000);
	CHECK_EQ_INT(s.free_bytes, 0x3010 + 0x13fd0);
}

static void test_heap_whose_headers_do_not_reach_its_end_counts_nothing(void)
{
	struct heapslack_heap h = main_heap();
	struct heapslack s = {};

	three_chunks_and_top();
	put_size(0x14010, 0x7fff0000ull | 1);	/* runs past the heap */
	CHECK_EQ_INT(heapslack__glibc_walk(&h, &s), 0);
	CHECK(!s.valid && s.partial);
	CHECK_EQ_INT(s.free_bytes, 0);
	CHECK_EQ_INT(s.trimmable_bytes, 0);

	memset(&s, 0, sizeof(s));
	three_chunks_and_top();
	put_size(0x14010, 0x4018 | 1);		/* not a multiple of 16 */
	heapslack__glibc_walk(&h, &s);
	CHECK(!s.valid && s.partial);

	memset(&s, 0, sizeof(s));
	three_chunks_and_top();
	put_size(0x18020, 0);			/* a zero size would loop forever */
	heapslack__glibc_walk(&h, &s);
	CHECK(!s.valid && s.partial);
}

static void test_first_chunk_outside_the_copy_is_refused(void)
{
	struct heapslack_heap h = main_heap();
	struct heapslack s = {};

	three_chunks_and_top();
	h.first_chunk = BASE + LEN + 16;
	heapslack__glibc_walk(&h, &s);
	CHECK(!s.valid && s.partial);
	h = main_heap();
	h.end = BASE + LEN + 4096;		/* beyond the copy */
	memset(&s, 0, sizeof(s));
	heapslack__glibc_walk(&h, &s);
	CHECK(!s.valid && s.partial);
}

static void test_retention_needs_8_mib_free_and_a_quarter_of_the_resident_heap(void)
{
	struct heapslack s = { .valid = true, .free_bytes = 8ull << 20,
			       .resident_bytes = 32ull << 20 };

	CHECK(heapslack__retention(&s));
	s.resident_bytes = (32ull << 20) + 4096;
	CHECK(!heapslack__retention(&s));
	s.resident_bytes = 10ull << 20;
	s.free_bytes = (8ull << 20) - 1;
	CHECK(!heapslack__retention(&s));
	s.free_bytes = 9ull << 20;
	s.valid = false;
	CHECK(!heapslack__retention(&s));
}

int main(void)
{
	RUN(test_free_chunk_between_used_ones_gives_back_its_whole_pages_past_the_header);
	RUN(test_thread_heap_top_is_not_trimmed);
	RUN(test_pages_not_resident_are_neither_free_nor_trimmable);
	RUN(test_heap_whose_headers_do_not_reach_its_end_counts_nothing);
	RUN(test_first_chunk_outside_the_copy_is_refused);
	RUN(test_retention_needs_8_mib_free_and_a_quarter_of_the_resident_heap);
	CHECK_EXIT();
}
