// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_lastref.c - the reference bookkeeping of `leaktop lastref` (core/lastref.c): what
 * each event does to a block's references, when a block goes to its confirmation scan and
 * what verdict that gives, and which words the debug registers watch (rotation).
 */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "core/lastref.h"
#include "core/scan.h"

#define BLOCK 0x1000

static struct lr_block block(uint64_t addr, uint64_t size)
{
	struct lr_block b;

	memset(&b, 0, sizeof(b));
	b.addr = addr;
	b.size = size;
	b.state = LR_TRACKING;
	return b;
}

static struct lr_ref mem(uint64_t loc)
{
	return (struct lr_ref){ .kind = LR_REF_MEMORY, .loc = loc };
}

static struct lr_cause at(uint64_t ns, uint64_t ip)
{
	struct lr_cause c;

	memset(&c, 0, sizeof(c));
	c.at_ns = ns;
	c.ip = ip;
	c.ips[0] = ip;
	c.nr = 1;
	return c;
}

static void test_points_into_covers_the_block_and_nothing_after_it(void)
{
	struct lr_block b = block(BLOCK, 64);

	CHECK(lastref__points_into(&b, BLOCK));
	CHECK(lastref__points_into(&b, BLOCK + 63));
	CHECK(!lastref__points_into(&b, BLOCK + 64));
	CHECK(!lastref__points_into(&b, BLOCK - 1));
}

/*
 * A 40-byte glibc block (a 48-byte chunk) lends its last word to the next chunk, whose header
 * lies 32 bytes into it: arena top, last_remainder or a bin points there.  That address is
 * the allocator's, every other byte of the block still counts.
 */
static void test_points_into_skips_the_allocators_chunk_header_inside_the_block(void)
{
	struct lr_block b = block(BLOCK, 40);

	b.alloc_meta = scan__glibc_next_chunk(BLOCK, 40, 48 | 1);
	CHECK_EQ_INT(b.alloc_meta, BLOCK + 32);
	CHECK(!lastref__points_into(&b, BLOCK + 32));
	CHECK(lastref__points_into(&b, BLOCK));
	CHECK(lastref__points_into(&b, BLOCK + 24));
	CHECK(lastref__points_into(&b, BLOCK + 33));
	CHECK(!lastref__points_into(&b, BLOCK + 40));
	CHECK(!lastref__points_into(&b, BLOCK - 16));
}

/* Only glibc's own layout: a 64-byte block's successor starts at its end (one past it). */
static void test_glibc_next_chunk_is_inside_only_for_blocks_that_borrow_its_first_word(void)
{
	CHECK_EQ_INT(scan__glibc_next_chunk(BLOCK, 64, 80 | 1), 0);
	CHECK_EQ_INT(scan__glibc_next_chunk(BLOCK, 24, 32 | 1), BLOCK + 16);
	CHECK_EQ_INT(scan__glibc_next_chunk(BLOCK, 40, 64 | 1), 0);	/* a bigger chunk */
	CHECK_EQ_INT(scan__glibc_next_chunk(BLOCK, 40, 48 | 2), 0);	/* mmapped */
	CHECK_EQ_INT(scan__glibc_next_chunk(BLOCK + 8, 40, 48 | 1), 0);	/* misaligned */
	CHECK_EQ_INT(scan__glibc_next_chunk(BLOCK, 40, 0x12345), 0);	/* not a size word */
}

/*
 * Watch events were lost while the block was followed: the write that took its last
 * reference may not be the one that sent it to confirmation, so no cause is named.
 */
static void test_a_block_that_may_have_missed_events_ends_unresolved_not_with_a_cause(void)
{
	struct lr_block b = block(BLOCK, 64);
	struct lr_cause c = at(5, 0x401000);

	CHECK_EQ_INT(lastref__add_ref(&b, &(struct lr_ref){ .kind = LR_REF_MEMORY, .loc = 0x500 }),
		     0);
	lastref__events_lost(&b, 1);
	CHECK_EQ_INT(lastref__on_write(&b, 1, 0x500, 0, &c), 1);
	CHECK(!lastref__confirm(&b, NULL, 0, NULL, 0, 6));
	CHECK_EQ_INT(b.cause.verdict, LR_UNRESOLVED);
	CHECK_EQ_STR(b.cause.why, "unresolved: events lost (the watch ring buffer was full): its "
		     "last pointer went, where is not known");
}

/* A block whose scans cannot be made is given up with the reason; a verdict stays. */
static void test_give_up_says_why_and_keeps_a_verdict_already_given(void)
{
	struct lr_block b = block(BLOCK, 64), done = block(BLOCK, 64);
	struct lr_cause c = at(5, 0x401000);

	lastref__give_up(&b, "could not confirm: too big", 7);
	CHECK_EQ_INT(b.state, LR_DONE);
	CHECK_EQ_INT(b.cause.verdict, LR_UNRESOLVED);
	CHECK_EQ_STR(b.cause.why, "could not confirm: too big");
	lastref__on_free(&done, 1, BLOCK, &c);
	lastref__give_up(&done, "could not confirm: too big", 7);
	CHECK_EQ_INT(done.cause.verdict, LR_FREED);
	CHECK_EQ_STR(done.cause.why, "");
}

static void test_same_place_twice_and_a_word_of_the_block_itself_are_not_added(void)
{
	struct lr_block b = block(BLOCK, 64);

	CHECK_EQ_INT(lastref__add_ref(&b, &(struct lr_ref){ .kind = LR_REF_MEMORY, .loc = 0x500 }), 0);
	CHECK_EQ_INT(lastref__add_ref(&b, &(struct lr_ref){ .kind = LR_REF_MEMORY, .loc = 0x500 }),
		     -EEXIST);
	CHECK_EQ_INT(lastref__add_ref(&b, &(struct lr_ref){ .kind = LR_REF_MEMORY,
							     .loc = BLOCK + 8 }), -EINVAL);
	CHECK_EQ_INT(b.n_refs, 1);
}

static void test_lastref_reports_overwrite_of_the_last_reference_only(void)
{
	struct lr_block b = block(BLOCK, 64);
	struct lr_cause c = at(5, 0x4000);

	lastref__add_ref(&b, &(struct lr_ref){ .kind = LR_REF_MEMORY, .loc = 0x500 });
	lastref__add_ref(&b, &(struct lr_ref){ .kind = LR_REF_MEMORY, .loc = 0x508 });
	/* Still into the block: nothing. */
	CHECK_EQ_INT(lastref__on_write(&b, 1, 0x500, BLOCK + 16, &c), 0);
	CHECK_EQ_INT(b.n_refs, 2);
	/* One of two goes: tracked on. */
	CHECK_EQ_INT(lastref__on_write(&b, 1, 0x500, 0, &c), 0);
	CHECK_EQ_INT(b.state, LR_TRACKING);
	/* The last: confirmation, with the write's place and value. */
	CHECK_EQ_INT(lastref__on_write(&b, 1, 0x508, 0x42, &c), 1);
	CHECK_EQ_INT(b.state, LR_CONFIRM);
	CHECK_EQ_INT(b.cause.verdict, LR_OVERWRITTEN);
	CHECK_EQ_INT(b.cause.ref.loc, 0x508);
	CHECK_EQ_INT(b.cause.value, 0x42);
	CHECK_EQ_INT(b.cause.ip, 0x4000);
	/* Nothing else found: the verdict stands. */
	CHECK(!lastref__confirm(&b, NULL, 0, NULL, 0, 9));
	CHECK_EQ_INT(b.state, LR_DONE);
	CHECK_EQ_INT(b.cause.verdict, LR_OVERWRITTEN);
}

static void test_confirmation_that_finds_a_moved_pointer_tracks_it(void)
{
	struct lr_block b = block(BLOCK, 64);
	struct lr_cause c = at(5, 0x4000);
	struct lr_ref moved = mem(0x900);

	lastref__add_ref(&b, &(struct lr_ref){ .kind = LR_REF_MEMORY, .loc = 0x500 });
	lastref__on_write(&b, 1, 0x500, 0, &c);
	CHECK(lastref__confirm(&b, &moved, 1, NULL, 0, 6));
	CHECK_EQ_INT(b.state, LR_TRACKING);
	CHECK_EQ_INT(b.n_refs, 1);
	CHECK_EQ_INT(b.refs[0].loc, 0x900);
}

static void test_confirmation_that_finds_only_a_register_says_register_only(void)
{
	struct lr_block b = block(BLOCK, 64);
	struct lr_cause c = at(5, 0x4000);
	struct lr_ref reg = { .kind = LR_REF_REGISTER, .tid = 77, .reg = 3, .ip = 0x4444 };

	lastref__add_ref(&b, &(struct lr_ref){ .kind = LR_REF_MEMORY, .loc = 0x500 });
	lastref__on_write(&b, 1, 0x500, 0, &c);
	CHECK(!lastref__confirm(&b, NULL, 0, &reg, 1, 6));
	CHECK_EQ_INT(b.cause.verdict, LR_REGISTER_ONLY);
	CHECK_EQ_INT(b.cause.ref.tid, 77);
	CHECK_EQ_INT(b.cause.ref.reg, 3);
	CHECK_EQ_INT(b.cause.ip, 0x4444);
}

static void test_freeing_the_holder_drops_references_held_in_it(void)
{
	struct lr_block b = block(BLOCK, 64);
	struct lr_cause c = at(5, 0x4000);

	lastref__add_ref(&b, &(struct lr_ref){ .kind = LR_REF_HEAP, .loc = 0x2008, .holder = 0x2000 });
	CHECK_EQ_INT(lastref__on_free(&b, 1, 0x3000, &c), 0);
	CHECK_EQ_INT(lastref__on_free(&b, 1, 0x2000, &c), 1);
	CHECK_EQ_INT(b.cause.verdict, LR_HOLDER_FREED);
	CHECK_EQ_INT(b.cause.ref.holder, 0x2000);
}

static void test_freeing_the_block_itself_is_freed_not_lost(void)
{
	struct lr_block b = block(BLOCK, 64);
	struct lr_cause c = at(5, 0x4000);

	lastref__add_ref(&b, &(struct lr_ref){ .kind = LR_REF_MEMORY, .loc = 0x500 });
	CHECK_EQ_INT(lastref__on_free(&b, 1, BLOCK, &c), 1);
	CHECK_EQ_INT(b.state, LR_DONE);
	CHECK_EQ_INT(b.cause.verdict, LR_FREED);
}

static void test_frame_return_counts_only_at_or_above_the_frame(void)
{
	struct lr_block b = block(BLOCK, 64);
	struct lr_cause c = at(5, 0x4000);

	lastref__add_ref(&b, &(struct lr_ref){ .kind = LR_REF_STACK, .tid = 9, .loc = 0x7f00,
						.frame_ret = 0x4000, .frame_cfa = 0x7f40 });
	/* A deeper call returning to the same place (recursion), another thread: nothing. */
	CHECK_EQ_INT(lastref__on_return(&b, 1, 9, 0x4000, 0x7e00, &c), 0);
	CHECK_EQ_INT(lastref__on_return(&b, 1, 8, 0x4000, 0x7f40, &c), 0);
	CHECK_EQ_INT(lastref__on_return(&b, 1, 9, 0x4000, 0x7f40, &c), 1);
	CHECK_EQ_INT(b.cause.verdict, LR_FRAME_RETURNED);
}

/*
 * The confirmation scan after a frame returned: the thread's next call covers the frame and
 * may not have written the word yet, which still points into the block.  That word is dead;
 * a word elsewhere (the caller kept the pointer) is a reference.
 */
static void test_confirmation_after_a_return_ignores_the_returned_frames_stale_word(void)
{
	struct lr_block b = block(BLOCK, 64), b2;
	struct lr_cause c = at(5, 0x4000);
	struct lr_ref slot = { .kind = LR_REF_STACK, .tid = 9, .loc = 0x7f00,
			       .frame_ret = 0x4000, .frame_cfa = 0x7f40 };
	struct lr_ref kept = { .kind = LR_REF_STACK, .tid = 9, .loc = 0x7f48 };

	lastref__add_ref(&b, &slot);
	b2 = b;
	CHECK_EQ_INT(lastref__on_return(&b, 1, 9, 0x4000, 0x7f40, &c), 1);
	CHECK(!lastref__confirm(&b, &slot, 1, NULL, 0, 6));
	CHECK_EQ_INT(b.state, LR_DONE);
	CHECK_EQ_INT(b.cause.verdict, LR_FRAME_RETURNED);
	/* The caller stored it in its own frame: tracked there. */
	CHECK_EQ_INT(lastref__on_return(&b2, 1, 9, 0x4000, 0x7f40, &c), 1);
	CHECK(lastref__confirm(&b2, (struct lr_ref[]){ slot, kept }, 2, NULL, 0, 6));
	CHECK_EQ_INT(b2.n_refs, 1);
	CHECK_EQ_INT(b2.refs[0].loc, 0x7f48);
	/* Dead only until that scan: the same word holding it later is a reference again. */
	CHECK_EQ_INT(b2.n_dead, 0);
}

/*
 * Without watchpoints a rescan checks a tracked block's references: one found again is good
 * as of that scan; a word gone is overwritten, seen by the scan (no thread, no stack: nobody
 * saw the write), between its last good scan and this one.
 */
static void test_rescan_without_watchpoints_drops_a_word_gone_as_seen_by_the_scan(void)
{
	struct lr_block b = block(BLOCK, 64);
	struct lr_ref g = mem(0x500), h = mem(0x508);

	lastref__add_ref(&b, &g);
	lastref__add_ref(&b, &h);
	b.refs[0].unwatched_ns = b.refs[1].unwatched_ns = 10;
	CHECK_EQ_INT(lastref__verify(&b, (struct lr_ref[]){ g, h }, 2, 20), 0);
	CHECK_EQ_INT(b.refs[0].unwatched_ns, 20);
	CHECK_EQ_INT(lastref__verify(&b, &h, 1, 30), 0);
	CHECK_EQ_INT(b.n_refs, 1);
	CHECK_EQ_INT(b.refs[0].loc, 0x508);
	CHECK_EQ_INT(lastref__verify(&b, NULL, 0, 40), 1);
	CHECK_EQ_INT(b.state, LR_CONFIRM);
	CHECK(!lastref__confirm(&b, NULL, 0, NULL, 0, 41));
	CHECK_EQ_INT(b.cause.verdict, LR_OVERWRITTEN);
	CHECK(b.cause.unwatched);
	CHECK_EQ_INT(b.cause.since_ns, 30);
	CHECK_EQ_INT(b.cause.at_ns, 40);
	CHECK_EQ_INT(b.cause.nr, 0);
	CHECK_EQ_INT(b.cause.tid, 0);
	CHECK_EQ_INT(b.cause.ref.loc, 0x508);
}

/*
 * Without watchpoints a frame's return is seen by a scan: its stack word, still holding the
 * pointer, now lies in another frame of the thread.  It is not taken for a reference of
 * that frame: the block ends frame returned, seen by the scan.
 */
static void test_rescan_without_watchpoints_sees_a_returned_frame_by_its_word_moving_frame(void)
{
	struct lr_block b = block(BLOCK, 64);
	struct lr_ref slot = { .kind = LR_REF_STACK, .tid = 9, .loc = 0x7f00, .frame_pc = 0x3000,
			       .frame_ret = 0x4000, .frame_cfa = 0x7f40 };
	struct lr_ref stale = slot;

	stale.frame_pc = 0x3800;
	stale.frame_ret = 0x4100;
	stale.frame_cfa = 0x7f80;
	lastref__add_ref(&b, &slot);
	b.refs[0].unwatched_ns = 10;
	CHECK_EQ_INT(lastref__verify(&b, &slot, 1, 20), 0);
	CHECK_EQ_INT(lastref__verify(&b, &stale, 1, 30), 1);
	CHECK(!lastref__confirm(&b, &stale, 1, NULL, 0, 30));
	CHECK_EQ_INT(b.state, LR_DONE);
	CHECK_EQ_INT(b.cause.verdict, LR_FRAME_RETURNED);
	CHECK(b.cause.unwatched);
	CHECK_EQ_INT(b.cause.since_ns, 20);
	CHECK_EQ_INT(b.cause.ref.frame_pc, 0x3000);
	CHECK_EQ_INT(b.cause.nr, 0);
}

static void test_unwatched_change_says_between_when_it_was_last_watched_and_now(void)
{
	struct lr_block b = block(BLOCK, 64);
	struct lr_cause c = at(500, 0);

	lastref__add_ref(&b, &(struct lr_ref){ .kind = LR_REF_MEMORY, .loc = 0x500 });
	lastref__mark(&b.refs[0], true, 100);
	/* A watched word is the hardware's: a re-read does not judge it. */
	CHECK_EQ_INT(lastref__on_reread(&b, 1, 0x500, 0, &c), 0);
	lastref__mark(&b.refs[0], false, 200);
	CHECK_EQ_INT(lastref__on_reread(&b, 1, 0x500, BLOCK, &c), 0);
	CHECK_EQ_INT(lastref__on_reread(&b, 1, 0x500, 0, &c), 1);
	CHECK(b.cause.unwatched);
	CHECK_EQ_INT(b.cause.since_ns, 200);
	CHECK_EQ_INT(b.cause.at_ns, 500);
}

static void test_a_new_block_without_any_reference_is_unresolved(void)
{
	struct lr_block b = block(BLOCK, 64);

	CHECK(!lastref__confirm(&b, NULL, 0, NULL, 0, 3));
	CHECK_EQ_INT(b.cause.verdict, LR_UNRESOLVED);
}

static void test_end_leaves_a_given_verdict_and_marks_the_rest_unresolved(void)
{
	struct lr_block b[2] = { block(BLOCK, 64), block(2 * BLOCK, 64) };
	struct lr_cause c = at(5, 0x4000);

	lastref__add_ref(&b[0], &(struct lr_ref){ .kind = LR_REF_MEMORY, .loc = 0x500 });
	lastref__on_free(b, 2, 2 * BLOCK, &c);
	lastref__end(&b[0], 9);
	lastref__end(&b[1], 9);
	CHECK_EQ_INT(b[0].cause.verdict, LR_UNRESOLVED);
	CHECK_EQ_INT(b[1].cause.verdict, LR_FREED);
}

/* Six words, four slots: all get watched in turn, and the kept set stays between rotations. */
static void test_rotation_watches_every_word_in_turn(void)
{
	struct lr_block b = block(BLOCK, 64);
	struct lr_pick p[4];
	int watched_ever[6] = {};
	size_t n;

	for (int i = 0; i < 6; i++)
		lastref__add_ref(&b, &(struct lr_ref){ .kind = LR_REF_MEMORY, .loc = 0x500 + 8 * i });
	for (uint64_t t = 1; t <= 3; t++) {
		n = lastref__pick(&b, 1, 4, true, p, 4);
		CHECK_EQ_INT(n, 4);
		for (uint32_t i = 0; i < b.n_refs; i++) {
			bool on = false;

			for (size_t k = 0; k < n; k++)
				on |= p[k].ref == i;
			lastref__mark(&b.refs[i], on, t * 100);
			watched_ever[i] |= on;
		}
	}
	for (int i = 0; i < 6; i++)
		CHECK(watched_ever[i]);
	/* Between rotations the watched set stays. */
	n = lastref__pick(&b, 1, 4, false, p, 4);
	CHECK_EQ_INT(n, 4);
	for (size_t k = 0; k < n; k++)
		CHECK(b.refs[p[k].ref].watched);
}

static void test_pick_takes_every_word_when_they_fit(void)
{
	struct lr_block b = block(BLOCK, 64);
	struct lr_pick p[4];

	lastref__add_ref(&b, &(struct lr_ref){ .kind = LR_REF_MEMORY, .loc = 0x500 });
	lastref__add_ref(&b, &(struct lr_ref){ .kind = LR_REF_MEMORY, .loc = 0x508 });
	CHECK_EQ_INT(lastref__pick(&b, 1, 4, false, p, 4), 2);
	CHECK_EQ_INT(lastref__pick(&b, 1, 0, false, p, 4), 0);
}

int main(void)
{
	RUN(test_points_into_covers_the_block_and_nothing_after_it);
	RUN(test_same_place_twice_and_a_word_of_the_block_itself_are_not_added);
	RUN(test_lastref_reports_overwrite_of_the_last_reference_only);
	RUN(test_confirmation_that_finds_a_moved_pointer_tracks_it);
	RUN(test_confirmation_that_finds_only_a_register_says_register_only);
	RUN(test_freeing_the_holder_drops_references_held_in_it);
	RUN(test_freeing_the_block_itself_is_freed_not_lost);
	RUN(test_frame_return_counts_only_at_or_above_the_frame);
	RUN(test_confirmation_after_a_return_ignores_the_returned_frames_stale_word);
	RUN(test_unwatched_change_says_between_when_it_was_last_watched_and_now);
	RUN(test_a_new_block_without_any_reference_is_unresolved);
	RUN(test_rescan_without_watchpoints_drops_a_word_gone_as_seen_by_the_scan);
	RUN(test_rescan_without_watchpoints_sees_a_returned_frame_by_its_word_moving_frame);
	RUN(test_end_leaves_a_given_verdict_and_marks_the_rest_unresolved);
	RUN(test_points_into_skips_the_allocators_chunk_header_inside_the_block);
	RUN(test_a_block_that_may_have_missed_events_ends_unresolved_not_with_a_cause);
	RUN(test_give_up_says_why_and_keeps_a_verdict_already_given);
	RUN(test_glibc_next_chunk_is_inside_only_for_blocks_that_borrow_its_first_word);
	RUN(test_rotation_watches_every_word_in_turn);
	RUN(test_pick_takes_every_word_when_they_fit);
	CHECK_EXIT();
}
