// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_heapmode.c - the overhead budget's decisions: when exact tracing gives way to suspects
 * only (a token bucket: bursts pass, a sustained overspend does not) and comes back (no
 * flapping), which processes stay traced then and which are released (records kept), which
 * are suspects and for how long an expensive one is traced.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/heapmode.h"

#define S 1000000000ULL

static struct heapmode hm(double budget, uint32_t max_suspects, bool exact)
{
	struct heapmode_config cfg = { .budget_pct = budget, .max_suspects = max_suspects,
				       .exact = exact, .interval_s = 1 };
	struct heapmode h;

	heapmode__init(&h, &cfg, 0);
	return h;
}

/* Step once a second from *t with cost, n times; the first change, if any. */
static enum heapmode_change steps(struct heapmode *h, uint64_t *t, double cost, int n)
{
	enum heapmode_change first = HEAPMODE_SAME;

	for (int i = 0; i < n; i++) {
		enum heapmode_change c;

		*t += S;
		c = heapmode__step(h, *t, cost);
		if (c != HEAPMODE_SAME && first == HEAPMODE_SAME)
			first = c;
	}
	return first;
}

/* 47% of the CPUs for a second (a start-up burst of 100,000 malloc/free pairs): it passes. */
static void test_startup_burst_within_the_bucket_stays_exact(void)
{
	struct heapmode h = hm(2, 8, false);
	uint64_t t = 0;

	CHECK(steps(&h, &t, 47, 1) == HEAPMODE_SAME);
	CHECK(steps(&h, &t, 0.5, 60) == HEAPMODE_SAME);
	CHECK(h.mode == HEAP_MODE_EXACT && h.switches == 0);
	/* The bucket refilled at the budget: the same burst passes again. */
	CHECK(heapmode__bucket_fill(&h) == 1);
	CHECK(steps(&h, &t, 47, 1) == HEAPMODE_SAME);
	heapmode__free(&h);
}

/*
 * One process alone at 17% of the CPUs (a single-threaded server slowed threefold), two
 * readings a second apart: exact mode ends though the bucket still holds most of its budget.
 */
static void test_one_process_hot_for_a_second_ends_exact_mode(void)
{
	struct heapmode h = hm(2, 8, false);

	CHECK(heapmode__hot(&h, 1 * S, 17) == HEAPMODE_SAME);
	CHECK(h.mode == HEAP_MODE_EXACT);
	CHECK(heapmode__hot(&h, 2 * S, 17) == HEAPMODE_TO_SUSPECTS);
	CHECK(h.mode == HEAP_MODE_SUSPECTS && h.switches == 1);
	/* Suspects mode: nothing more to end. */
	CHECK(heapmode__hot(&h, 3 * S, 90) == HEAPMODE_SAME);
	heapmode__free(&h);
}

/* A hot reading between cool ones is a burst: it passes, however hot. */
static void test_one_hot_reading_between_cool_ones_keeps_exact_mode(void)
{
	struct heapmode h = hm(2, 8, false);

	for (uint64_t t = 1; t <= 9; t += 2) {
		CHECK(heapmode__hot(&h, t * S, 47) == HEAPMODE_SAME);
		CHECK(heapmode__hot(&h, (t + 1) * S, 1) == HEAPMODE_SAME);
	}
	/* Two hot readings less than a second apart are not yet a second of it. */
	CHECK(heapmode__hot(&h, 20 * S, 47) == HEAPMODE_SAME);
	CHECK(heapmode__hot(&h, 20 * S + S / 2, 47) == HEAPMODE_SAME);
	CHECK(h.mode == HEAP_MODE_EXACT && h.switches == 0);
	heapmode__free(&h);
}

/* Under five times the budget a process is the bucket's business; unknown cost changes nothing. */
static void test_process_under_the_hot_factor_is_left_to_the_bucket(void)
{
	struct heapmode h = hm(2, 8, false);

	for (uint64_t t = 1; t <= 30; t++)
		CHECK(heapmode__hot(&h, t * S, t % 2 ? 9.9 : NAN) == HEAPMODE_SAME);
	CHECK(h.mode == HEAP_MODE_EXACT);
	heapmode__free(&h);
	/* --exact: never. */
	h = hm(2, 8, true);
	for (uint64_t t = 1; t <= 5; t++)
		CHECK(heapmode__hot(&h, t * S, 90) == HEAPMODE_SAME);
	CHECK(h.mode == HEAP_MODE_EXACT);
	heapmode__free(&h);
}

/* 9% on a budget of 2%: 7 budget-seconds a second over, the bucket (60) is dry in 9 s. */
static void test_sustained_overspend_empties_the_bucket_and_switches(void)
{
	struct heapmode h = hm(2, 8, false);
	uint64_t t = 0;

	CHECK(steps(&h, &t, 9, 8) == HEAPMODE_SAME);
	CHECK(h.mode == HEAP_MODE_EXACT);
	CHECK(heapmode__bucket_fill(&h) > 0 && heapmode__bucket_fill(&h) < 0.1);
	CHECK(steps(&h, &t, 9, 1) == HEAPMODE_TO_SUSPECTS);
	CHECK(h.mode == HEAP_MODE_SUSPECTS);
	CHECK(h.switches == 1);
	heapmode__free(&h);
}

/* Two bursts back to back do not fit where one does. */
static void test_bursts_without_time_to_refill_switch(void)
{
	struct heapmode h = hm(2, 8, false);
	uint64_t t = 0;

	CHECK(steps(&h, &t, 47, 1) == HEAPMODE_SAME);
	CHECK(steps(&h, &t, 0.5, 2) == HEAPMODE_SAME);
	CHECK(steps(&h, &t, 47, 1) == HEAPMODE_TO_SUSPECTS);
	heapmode__free(&h);
}

static void test_exact_flag_never_switches(void)
{
	struct heapmode h = hm(2, 8, true);
	uint64_t t = 0;

	CHECK(steps(&h, &t, 50, 100) == HEAPMODE_SAME);
	CHECK(h.mode == HEAP_MODE_EXACT);
	heapmode__free(&h);
}

static void test_unknown_cost_changes_nothing(void)
{
	struct heapmode h = hm(2, 8, false);
	uint64_t t = 0;

	CHECK(steps(&h, &t, NAN, 100) == HEAPMODE_SAME);
	CHECK(h.mode == HEAP_MODE_EXACT);
	heapmode__free(&h);
}

static void test_exact_returns_only_after_staying_well_under_budget(void)
{
	struct heapmode h = hm(2, 8, false);
	uint64_t t = 0;

	CHECK(steps(&h, &t, 100, 5) == HEAPMODE_TO_SUSPECTS);
	/* Under the budget but not well under it: stays. */
	CHECK(steps(&h, &t, 1.5, 100) == HEAPMODE_SAME);
	/* Well under, but interrupted before the hold (30 s) ends. */
	CHECK(steps(&h, &t, 0.5, 20) == HEAPMODE_SAME);
	CHECK(steps(&h, &t, 3, 1) == HEAPMODE_SAME);
	CHECK(steps(&h, &t, 0.5, 29) == HEAPMODE_SAME);
	CHECK(steps(&h, &t, 0.5, 2) == HEAPMODE_TO_EXACT);
	CHECK(h.mode == HEAP_MODE_EXACT);
	CHECK(h.switches == 2);
	heapmode__free(&h);
}

static void test_early_return_doubles_the_hold_so_the_mode_does_not_flap(void)
{
	struct heapmode h = hm(2, 8, false);
	uint64_t t = 0;
	int switches = 0;

	/* A workload that is expensive for 10 s, then cheap for 40 s, over and over. */
	for (int round = 0; round < 20; round++) {
		switches += steps(&h, &t, 9, 10) != HEAPMODE_SAME;
		switches += steps(&h, &t, 0.1, 40) != HEAPMODE_SAME;
	}
	CHECK(h.return_hold_s > 30);
	/* Without the back-off every round would switch twice. */
	CHECK(switches < 20);
	heapmode__free(&h);
}

static void test_growing_processes_become_suspects_strongest_first(void)
{
	struct heapmode h = hm(2, 2, false);
	struct heapmode_candidate c[] = {
		{ .pid = 10, .growing = true, .growth_per_s = 100 },
		{ .pid = 11, .growing = false, .growth_per_s = 0 },
		{ .pid = 12, .growing = true, .growth_per_s = 5000 },
		{ .pid = 13, .growing = true, .growth_per_s = 900 },
	};
	struct heapmode_changes ch;
	uint64_t t = 0;

	steps(&h, &t, 100, 5);
	CHECK(!heapmode__choose(&h, t, c, 4, &ch));
	CHECK(ch.n_added == 2 && ch.n_removed == 0);
	CHECK(heapmode__traced(&h, 12) && heapmode__traced(&h, 13));
	CHECK(!heapmode__traced(&h, 10) && !heapmode__traced(&h, 11));
	heapmode_changes__free(&ch);
	heapmode__free(&h);
}

static void test_quiet_process_stays_watched(void)
{
	struct heapmode h = hm(2, 8, false);
	struct heapmode_candidate c = { .pid = 7, .growing = false };
	struct heapmode_changes ch;
	uint64_t t = 0;

	steps(&h, &t, 100, 5);
	for (int i = 0; i < 50; i++) {
		t += S;
		CHECK(!heapmode__choose(&h, t, &c, 1, &ch));
		CHECK(ch.n_added == 0);
		heapmode_changes__free(&ch);
	}
	CHECK(!heapmode__traced(&h, 7));
	heapmode__free(&h);
}

static void test_suspect_released_after_it_stops_growing(void)
{
	struct heapmode h = hm(2, 8, false);
	struct heapmode_candidate c = { .pid = 7, .growing = true, .growth_per_s = 4096 };
	struct heapmode_changes ch;
	uint64_t t = 0;
	int released_at = -1;

	steps(&h, &t, 100, 5);
	CHECK(!heapmode__choose(&h, t, &c, 1, &ch));
	CHECK(ch.n_added == 1 && ch.added[0] == 7);
	heapmode_changes__free(&ch);
	c.growing = false;
	for (int i = 1; i <= 40 && released_at < 0; i++) {
		t += S;
		CHECK(!heapmode__choose(&h, t, &c, 1, &ch));
		if (ch.n_removed == 1 && ch.removed[0] == 7)
			released_at = i;
		heapmode_changes__free(&ch);
	}
	CHECK(released_at == HEAPMODE_RELEASE_INTERVALS);
	CHECK(!heapmode__traced(&h, 7));
	/* Its records stay, frozen, since the release. */
	CHECK(heapmode__released(&h, 7) && heapmode__released(&h, 7)->released_ns == t);
	heapmode__free(&h);
}

static void test_picked_process_stays_traced_without_growth_and_beyond_the_limit(void)
{
	struct heapmode h = hm(2, 0, false);
	struct heapmode_candidate c = { .pid = 7, .picked = true };
	struct heapmode_changes ch;
	uint64_t t = 0;

	steps(&h, &t, 100, 5);
	for (int i = 0; i < 100; i++) {
		t += S;
		CHECK(!heapmode__choose(&h, t, &c, 1, &ch));
		heapmode_changes__free(&ch);
	}
	CHECK(heapmode__traced(&h, 7) && heapmode__traced(&h, 7)->since_ns == 6 * S);
	/* Unpicked and quiet: released like any suspect. */
	c.picked = false;
	for (int i = 0; i < HEAPMODE_RELEASE_INTERVALS; i++) {
		t += S;
		CHECK(!heapmode__choose(&h, t, &c, 1, &ch));
		heapmode_changes__free(&ch);
	}
	CHECK(!heapmode__traced(&h, 7));
	heapmode__free(&h);
}

static void test_gone_process_is_released_at_once(void)
{
	struct heapmode h = hm(2, 8, false);
	struct heapmode_candidate c = { .pid = 7, .growing = true, .growth_per_s = 4096 };
	struct heapmode_changes ch;
	uint64_t t = 0;

	steps(&h, &t, 100, 5);
	CHECK(!heapmode__choose(&h, t, &c, 1, &ch));
	heapmode_changes__free(&ch);
	CHECK(!heapmode__choose(&h, t + S, NULL, 0, &ch));
	CHECK(ch.n_removed == 1 && ch.removed[0] == 7 && ch.why[0] == HEAPMODE_WHY_GONE);
	CHECK(!heapmode__released(&h, 7));
	heapmode_changes__free(&ch);
	heapmode__free(&h);
}

static void test_much_stronger_grower_takes_the_weakest_suspects_place(void)
{
	struct heapmode h = hm(2, 1, false);
	struct heapmode_candidate c[] = {
		{ .pid = 1, .growing = true, .growth_per_s = 1000 },
		{ .pid = 2, .growing = true, .growth_per_s = 1500 },
	};
	struct heapmode_changes ch;
	uint64_t t = 0;

	steps(&h, &t, 100, 5);
	CHECK(!heapmode__choose(&h, t, c, 1, &ch));
	heapmode_changes__free(&ch);
	/* Not twice as strong: no change. */
	CHECK(!heapmode__choose(&h, t + S, c, 2, &ch));
	CHECK(ch.n_added == 0 && heapmode__traced(&h, 1));
	heapmode_changes__free(&ch);
	c[1].growth_per_s = 5000;
	CHECK(!heapmode__choose(&h, t + 2 * S, c, 2, &ch));
	CHECK(ch.n_added == 1 && ch.added[0] == 2 && ch.n_removed == 1 && ch.removed[0] == 1);
	heapmode_changes__free(&ch);
	heapmode__free(&h);
}

/* One user's many growers leave a slot for another user's slower one. */
static void test_one_users_growers_leave_a_slot_for_another_user(void)
{
	struct heapmode h = hm(2, 4, false);
	struct heapmode_candidate c[] = {
		{ .pid = 1, .growing = true, .growth_per_s = 6e8, .uid = 65534 },
		{ .pid = 2, .growing = true, .growth_per_s = 5e8, .uid = 65534 },
		{ .pid = 3, .growing = true, .growth_per_s = 4e8, .uid = 65534 },
		{ .pid = 4, .growing = true, .growth_per_s = 3e8, .uid = 65534 },
		{ .pid = 5, .growing = true, .growth_per_s = 2e8, .uid = 65534 },
		{ .pid = 9, .growing = true, .growth_per_s = 1000, .uid = 0 },
	};
	struct heapmode_changes ch;
	uint64_t t = 0;

	steps(&h, &t, 100, 5);
	CHECK(!heapmode__choose(&h, t, c, 6, &ch));
	CHECK_EQ_INT(ch.n_added, 4);
	CHECK(heapmode__traced(&h, 9));
	CHECK(heapmode__traced(&h, 1) && heapmode__traced(&h, 2) && heapmode__traced(&h, 3));
	CHECK(!heapmode__traced(&h, 4) && !heapmode__traced(&h, 5));
	heapmode_changes__free(&ch);
	heapmode__free(&h);
}

/* A user without a slot takes one from the user holding the most, whatever the growth. */
static void test_new_users_grower_takes_a_slot_from_the_user_with_most(void)
{
	struct heapmode h = hm(2, 3, false);
	struct heapmode_candidate c[] = {
		{ .pid = 1, .growing = true, .growth_per_s = 6e8, .uid = 1000 },
		{ .pid = 2, .growing = true, .growth_per_s = 5e8, .uid = 1000 },
		{ .pid = 3, .growing = true, .growth_per_s = 4e8, .uid = 1000 },
		{ .pid = 7, .growing = true, .growth_per_s = 10, .uid = 2000 },
	};
	struct heapmode_changes ch;
	uint64_t t = 0;

	steps(&h, &t, 100, 5);
	CHECK(!heapmode__choose(&h, t, c, 3, &ch));
	CHECK_EQ_INT(ch.n_added, 3);
	heapmode_changes__free(&ch);
	CHECK(!heapmode__choose(&h, t + S, c, 4, &ch));
	CHECK(ch.n_added == 1 && ch.added[0] == 7);
	CHECK(ch.n_removed == 1 && ch.removed[0] == 3);
	heapmode_changes__free(&ch);
	/* And it stays: the one it replaced cannot take back another user's only slot. */
	CHECK(!heapmode__choose(&h, t + 2 * S, c, 4, &ch));
	CHECK(ch.n_added == 0 && ch.n_removed == 0 && heapmode__traced(&h, 7));
	heapmode_changes__free(&ch);
	heapmode__free(&h);
}

/* A much stronger grower of a user with slots replaces its own user's, not another's only one. */
static void test_stronger_grower_does_not_take_another_users_only_slot(void)
{
	struct heapmode h = hm(2, 2, false);
	struct heapmode_candidate c[] = {
		{ .pid = 1, .growing = true, .growth_per_s = 1000, .uid = 0 },
		{ .pid = 2, .growing = true, .growth_per_s = 2000, .uid = 65534 },
		{ .pid = 3, .growing = true, .growth_per_s = 1e9, .uid = 65534 },
	};
	struct heapmode_changes ch;
	uint64_t t = 0;

	steps(&h, &t, 100, 5);
	CHECK(!heapmode__choose(&h, t, c, 2, &ch));
	heapmode_changes__free(&ch);
	CHECK(!heapmode__choose(&h, t + S, c, 3, &ch));
	CHECK(ch.n_added == 1 && ch.added[0] == 3 && ch.n_removed == 1 && ch.removed[0] == 2);
	CHECK(heapmode__traced(&h, 1));
	heapmode_changes__free(&ch);
	heapmode__free(&h);
}

static void test_switch_to_exact_forgets_the_suspects(void)
{
	struct heapmode h = hm(2, 8, false);
	struct heapmode_candidate c = { .pid = 7, .growing = true, .growth_per_s = 4096 };
	struct heapmode_changes ch;
	uint64_t t = 0;

	steps(&h, &t, 100, 5);
	CHECK(!heapmode__choose(&h, t, &c, 1, &ch));
	heapmode_changes__free(&ch);
	c.growing = false;
	CHECK(!heapmode__choose(&h, t + 21 * S, &c, 1, &ch));
	heapmode_changes__free(&ch);
	CHECK(h.n_released == 1);
	CHECK(steps(&h, &t, 0.1, 31) == HEAPMODE_TO_EXACT);
	CHECK(h.n_traced == 0 && h.n_released == 0);
	CHECK(!strcmp(heapmode__name(h.mode), "exact"));
	CHECK(!strcmp(heapmode__proc_name(PROC_HEAP_WATCH), "watch"));
	heapmode__free(&h);
}

static void test_estimate_follows_the_machines_work_at_the_learned_share(void)
{
	struct heapmode h = hm(2, 8, false);
	uint64_t t = 0;

	CHECK(isnan(heapmode__estimate_exact_ns(&h, 1e9)));
	/* Exact: traps took 300 ms of 1 s of busy CPU time, then 100 of 1000 twice. */
	heapmode__learn(&h, 300e6, 1e9);
	CHECK(fabs(h.cost_per_work - 0.3) < 1e-9);
	heapmode__learn(&h, 100e6, 1e9);
	heapmode__learn(&h, 100e6, 1e9);
	CHECK(h.cost_per_work > 0.1 && h.cost_per_work < 0.3);
	/* A trap-bound interval teaches "all of it", never more. */
	heapmode__learn(&h, 2e9, 1e9);
	CHECK(h.cost_per_work <= 1);
	/* An idle interval teaches nothing. */
	double before = h.cost_per_work;
	heapmode__learn(&h, 0, 0);
	CHECK(h.cost_per_work == before);
	/* Suspects only: nothing is learned, the busy time now is scaled. */
	steps(&h, &t, 100, 5);
	heapmode__learn(&h, 0, 1e9);
	CHECK(h.cost_per_work == before);
	CHECK(fabs(heapmode__estimate_exact_ns(&h, 1e8) - before * 1e8) < 1e-3);
	heapmode__free(&h);
}

#define W (S / 4)		/* a window */

/* The fast valve: windows pay at once; the whole machine trapping empties it in 0.75 s. */
static void test_whole_machine_cost_in_windows_switches_within_a_second(void)
{
	struct heapmode h = hm(2, 8, false);

	CHECK(heapmode__window(&h, 10 * S + W, W, 100) == HEAPMODE_SAME);
	CHECK(heapmode__window(&h, 10 * S + 2 * W, W, 100) == HEAPMODE_SAME);
	CHECK(h.mode == HEAP_MODE_EXACT);
	CHECK(heapmode__window(&h, 10 * S + 3 * W, W, 100) == HEAPMODE_TO_SUSPECTS);
	CHECK(h.mode == HEAP_MODE_SUSPECTS);
	CHECK(h.switches == 1);
	/* Already suspects: windows change nothing. */
	CHECK(heapmode__window(&h, 10 * S + 4 * W, W, 100) == HEAPMODE_SAME);
	heapmode__free(&h);
}

/* What the windows paid is not paid again by the interval's step. */
static void test_interval_pays_only_what_the_windows_did_not(void)
{
	struct heapmode h = hm(2, 8, false);
	uint64_t t = 10 * S;

	for (int i = 0; i < 4; i++) {
		t += W;
		CHECK(heapmode__window(&h, t, W, 50) == HEAPMODE_SAME);
	}
	/* 48 x 1 s paid: 12 left; the step at the same time pays nothing more. */
	CHECK(heapmode__step(&h, t, 50) == HEAPMODE_SAME);
	CHECK(fabs(heapmode__bucket_fill(&h) - 12.0 / 60) < 1e-9);
	heapmode__free(&h);
}

static void test_window_merely_over_budget_waits_for_the_interval(void)
{
	struct heapmode h = hm(2, 8, false);
	uint64_t t = 10 * S;

	/* 5 budgets over, ten windows in a row: 20 of the bucket's 60 budget-seconds. */
	for (int i = 0; i < 10; i++) {
		t += W;
		CHECK(heapmode__window(&h, t, W, 10) == HEAPMODE_SAME);
	}
	CHECK(h.mode == HEAP_MODE_EXACT);
	heapmode__free(&h);
}

static void test_far_over_windows_must_be_in_a_row(void)
{
	struct heapmode h = hm(2, 8, false);
	uint64_t t = 10 * S;

	for (int i = 0; i < 8; i++) {
		t += W;
		CHECK(heapmode__window(&h, t, W, i % 2 ? 1 : 50) == HEAPMODE_SAME);
	}
	CHECK(h.mode == HEAP_MODE_EXACT);
	heapmode__free(&h);
}

static void test_exact_flag_ignores_windows(void)
{
	struct heapmode h = hm(2, 8, true);

	CHECK(heapmode__window(&h, 10 * S + W, W, 90) == HEAPMODE_SAME);
	CHECK(heapmode__window(&h, 10 * S + 2 * W, W, 90) == HEAPMODE_SAME);
	CHECK(heapmode__window(&h, 10 * S + 3 * W, W, NAN) == HEAPMODE_SAME);
	CHECK(h.mode == HEAP_MODE_EXACT);
	heapmode__free(&h);
}

static bool removed_as(const struct heapmode_changes *ch, uint32_t pid, enum heapmode_why why)
{
	for (size_t i = 0; i < ch->n_removed; i++)
		if (ch->removed[i] == pid)
			return ch->why[i] == why;
	return false;
}

/*
 * Leaving exact mode: the process that costs 40% goes (its records kept, released); the
 * others, cheap, stay traced exactly (by pid); one without heap records is merely watched.
 */
static void test_leaving_exact_releases_the_costliest_and_keeps_the_others_exact(void)
{
	struct heapmode h = hm(2, 8, false);
	struct heapmode_candidate c[] = {
		{ .pid = 1, .cost_pct = 40, .has_heap = true, .heap_count = 1010 },
		{ .pid = 2, .cost_pct = 0.5, .has_heap = true, .heap_count = 10 },
		{ .pid = 3, .cost_pct = 0.1, .has_heap = true, .heap_count = 1000 },
		{ .pid = 4, .cost_pct = 0, .has_heap = false },
		{ .pid = 5, .cost_pct = NAN, .picked = true },
		{ .pid = 6, .cost_pct = NAN, .has_heap = true, .heap_count = 1 },
	};
	struct heapmode_changes ch;
	uint64_t t = 0;

	CHECK(steps(&h, &t, 100, 1) == HEAPMODE_TO_SUSPECTS);
	CHECK(!heapmode__leave_exact(&h, t, c, 6, &ch));
	CHECK(ch.n_removed == 1 && removed_as(&ch, 1, HEAPMODE_WHY_COSTLIEST));
	CHECK(ch.n_expensive == 1);
	CHECK(heapmode__released(&h, 1) && heapmode__released(&h, 1)->released_ns == t);
	CHECK(!heapmode__traced(&h, 1));
	CHECK(heapmode__traced(&h, 2) && heapmode__traced(&h, 2)->role == HEAPMODE_ROLE_KEPT);
	CHECK(heapmode__traced(&h, 3) && heapmode__traced(&h, 3)->role == HEAPMODE_ROLE_KEPT);
	CHECK(heapmode__traced(&h, 6) && heapmode__traced(&h, 6)->role == HEAPMODE_ROLE_KEPT);
	CHECK(heapmode__traced(&h, 5) && heapmode__traced(&h, 5)->picked);
	CHECK(!heapmode__traced(&h, 4) && !heapmode__released(&h, 4));
	CHECK_EQ_INT(ch.n_added, 4);
	heapmode_changes__free(&ch);
	/* Kept ones are not suspects: quiet for long, they stay traced. */
	for (int i = 0; i < 3 * HEAPMODE_RELEASE_INTERVALS; i++) {
		t += S;
		CHECK(!heapmode__choose(&h, t, c + 1, 5, &ch));
		CHECK(ch.n_removed == 0);
		heapmode_changes__free(&ch);
	}
	CHECK(heapmode__traced(&h, 2) && heapmode__traced(&h, 3));
	heapmode__free(&h);
}

/* Costs spread evenly: as many of the costliest go as it takes, no more. */
static void test_leaving_exact_releases_only_as_many_as_the_budget_needs(void)
{
	struct heapmode h = hm(2, 8, false);
	struct heapmode_candidate c[10];
	struct heapmode_changes ch;
	uint64_t t = 0;

	for (int i = 0; i < 10; i++)
		c[i] = (struct heapmode_candidate){ .pid = 100 + i, .cost_pct = 0.3 * (i + 1),
						    .has_heap = true, .heap_count = 5 };
	/* 16.5 in all; under 1 left: 0.3 + 0.6 (the two cheapest) stay. */
	steps(&h, &t, 100, 1);
	CHECK(!heapmode__leave_exact(&h, t, c, 10, &ch));
	CHECK_EQ_INT(ch.n_removed, 8);
	CHECK(heapmode__traced(&h, 100) && heapmode__traced(&h, 101));
	for (int i = 2; i < 10; i++)
		CHECK(removed_as(&ch, 100 + i, HEAPMODE_WHY_COSTLIEST) &&
		      heapmode__released(&h, 100 + i));
	heapmode_changes__free(&ch);
	heapmode__free(&h);
}

/* More cheap processes with records than the limit: the most blocks kept, the rest released. */
static void test_leaving_exact_keeps_at_most_the_limit_most_blocks_first(void)
{
	struct heapmode h = hm(2, 8, false);
	struct heapmode_candidate c[HEAPMODE_MAX_KEPT + 8];
	size_t n = HEAPMODE_MAX_KEPT + 8;
	struct heapmode_changes ch;
	uint64_t t = 0;

	for (size_t i = 0; i < n; i++)
		c[i] = (struct heapmode_candidate){ .pid = 100 + i, .cost_pct = 0,
						    .has_heap = true, .heap_count = i + 1 };
	steps(&h, &t, 100, 1);
	CHECK(!heapmode__leave_exact(&h, t, c, n, &ch));
	CHECK_EQ_INT(ch.n_added, HEAPMODE_MAX_KEPT);
	CHECK_EQ_INT(ch.n_removed, 8);
	for (size_t i = 0; i < 8; i++)
		CHECK(removed_as(&ch, 100 + i, HEAPMODE_WHY_LIMIT) &&
		      heapmode__released(&h, 100 + i));
	CHECK(heapmode__traced(&h, 100 + n - 1));
	CHECK_EQ_INT(h.n_released, 8);
	heapmode_changes__free(&ch);
	heapmode__free(&h);
}

/* Released for its cost (40% on 2%): kept out until its cost averages out, 380 s. */
static void test_process_released_for_cost_is_kept_out_until_its_cost_averages_out(void)
{
	struct heapmode h = hm(2, 8, false);
	struct heapmode_candidate c = { .pid = 1, .cost_pct = 40, .has_heap = true,
					.heap_count = 5, .growing = true, .growth_per_s = 4096 };
	struct heapmode_changes ch;
	uint64_t t = 0, left = 0;
	int back_at = -1;

	steps(&h, &t, 100, 1);
	left = t;
	CHECK(!heapmode__leave_exact(&h, t, &c, 1, &ch));
	heapmode_changes__free(&ch);
	for (int i = 1; i <= 400 && back_at < 0; i++) {
		t += S;
		CHECK(!heapmode__choose(&h, t, &c, 1, &ch));
		if (ch.n_added)
			back_at = i;
		heapmode_changes__free(&ch);
	}
	CHECK_EQ_INT(back_at, 380);
	CHECK(t - left == 380 * S);
	/* Traced again: no longer released. */
	CHECK(heapmode__traced(&h, 1) && !heapmode__released(&h, 1));
	heapmode__free(&h);
}

/* Suspect pid 7, attached at *t (after leaving exact mode). */
static struct heapmode suspect_7(uint64_t *t, struct heapmode_candidate *c)
{
	struct heapmode h = hm(2, 8, false);
	struct heapmode_changes ch;

	*c = (struct heapmode_candidate){ .pid = 7, .growing = true, .growth_per_s = 4096,
					  .cost_pct = NAN, .has_heap = true };
	steps(&h, t, 100, 1);
	if (heapmode__choose(&h, *t, c, 1, &ch) || ch.n_added != 1)
		h.mode = HEAP_MODE_EXACT;	/* the callers' checks fail */
	heapmode_changes__free(&ch);
	return h;
}

/* Step once a second with c until 7 is released; the seconds it took (-1: not in n). */
static int seconds_to_release(struct heapmode *h, uint64_t *t, struct heapmode_candidate *c,
			      int n, enum heapmode_why *why)
{
	struct heapmode_changes ch;

	for (int i = 1; i <= n; i++) {
		bool gone;

		*t += S;
		if (heapmode__choose(h, *t, c, 1, &ch))
			return -2;
		gone = ch.n_removed == 1 && ch.removed[0] == 7;
		if (gone)
			*why = ch.why[0];
		heapmode_changes__free(&ch);
		if (gone)
			return i;
	}
	return -1;
}

/* 3% on 2%: traced for the diagnosis window (20 s over budget), then released, kept. */
static void test_costly_suspect_is_traced_for_its_diagnosis_window_then_released(void)
{
	struct heapmode_candidate c;
	uint64_t t = 0;
	struct heapmode h = suspect_7(&t, &c);
	enum heapmode_why why = HEAPMODE_WHY_GONE;

	c.cost_pct = 3;
	CHECK_EQ_INT(seconds_to_release(&h, &t, &c, 100, &why), (int)HEAPMODE_DIAGNOSIS_S);
	CHECK(why == HEAPMODE_WHY_COST);
	CHECK(heapmode__released(&h, 7) && heapmode__released(&h, 7)->released_ns == t);
	heapmode__free(&h);
}

/* 50% on 2%: its allowance (20 s of budget above the budget) is spent within a second. */
static void test_allocation_heavy_suspect_released_within_a_second(void)
{
	struct heapmode_candidate c;
	uint64_t t = 0;
	struct heapmode h = suspect_7(&t, &c);
	enum heapmode_why why = HEAPMODE_WHY_GONE;

	c.cost_pct = 50;
	CHECK_EQ_INT(seconds_to_release(&h, &t, &c, 100, &why), 1);
	CHECK(why == HEAPMODE_WHY_COST && heapmode__released(&h, 7));
	heapmode__free(&h);
}

/* Over the budget with a flagged site: the verdict is in, it goes at once (verdict kept). */
static void test_flagged_costly_suspect_is_released_at_once(void)
{
	struct heapmode_candidate c;
	uint64_t t = 0;
	struct heapmode h = suspect_7(&t, &c);
	enum heapmode_why why = HEAPMODE_WHY_GONE;

	c.cost_pct = 3;
	c.flagged = true;
	CHECK_EQ_INT(seconds_to_release(&h, &t, &c, 100, &why), 1);
	CHECK(why == HEAPMODE_WHY_DIAGNOSED && heapmode__released(&h, 7));
	heapmode__free(&h);
}

/* Within the budget, a suspect stays while it grows, flagged or not; a pick whatever it costs. */
static void test_cheap_suspect_and_costly_pick_stay(void)
{
	struct heapmode_candidate c;
	uint64_t t = 0;
	struct heapmode h = suspect_7(&t, &c);
	enum heapmode_why why = HEAPMODE_WHY_GONE;

	c.cost_pct = 1.5;
	c.flagged = true;
	CHECK_EQ_INT(seconds_to_release(&h, &t, &c, 100, &why), -1);
	c.cost_pct = 50;
	c.picked = true;
	CHECK_EQ_INT(seconds_to_release(&h, &t, &c, 100, &why), -1);
	CHECK(heapmode__traced(&h, 7));
	heapmode__free(&h);
}

/* The traced ones' costs add up for the header and stats. */
static void test_traced_cost_adds_up_what_each_costs(void)
{
	struct heapmode h = hm(2, 8, false);
	struct heapmode_candidate c[] = {
		{ .pid = 1, .cost_pct = 0.25, .has_heap = true, .heap_count = 2 },
		{ .pid = 2, .cost_pct = 0.5, .has_heap = true, .heap_count = 1 },
		{ .pid = 3, .cost_pct = NAN, .has_heap = true, .heap_count = 1 },
	};
	struct heapmode_changes ch;
	uint64_t t = 0;

	steps(&h, &t, 100, 1);
	CHECK(isnan(heapmode__traced_cost_pct(&h)));
	CHECK(!heapmode__leave_exact(&h, t, c, 3, &ch));
	heapmode_changes__free(&ch);
	CHECK(fabs(heapmode__traced_cost_pct(&h) - 0.75) < 1e-9);
	heapmode__free(&h);
}

/* Born after exact mode ended, alive 5 s, its memory grew once: a grower at once. */
static void test_young_process_whose_memory_grew_is_a_grower(void)
{
	struct heapmode h = hm(2, 8, false);
	uint64_t t = 0, left;

	/* Exact mode: no such thing. */
	CHECK(heapmode__young_growth_per_s(&h, 0, 0, 0, 10 * S, 4096) == 0);
	steps(&h, &t, 100, 1);
	left = h.mode_since_ns;
	CHECK(left == S);
	/* 128 KiB more over 8 s of a process born at 2 s: 16 KiB/s. */
	CHECK(heapmode__young_growth_per_s(&h, 2 * S, 2 * S, 4096, 10 * S, 4096 + 131072) ==
	      16384);
	/* Too young (4 s), flat, shrinking, or there before exact mode ended: not. */
	CHECK(heapmode__young_growth_per_s(&h, 2 * S, 2 * S, 4096, 6 * S, 8192) == 0);
	CHECK(heapmode__young_growth_per_s(&h, 2 * S, 2 * S, 4096, 10 * S, 4096) == 0);
	CHECK(heapmode__young_growth_per_s(&h, 2 * S, 2 * S, 8192, 10 * S, 4096) == 0);
	CHECK(heapmode__young_growth_per_s(&h, left - 1, left - 1, 0, 10 * S, 4096) == 0);
	heapmode__free(&h);
}

int main(void)
{
	RUN(test_whole_machine_cost_in_windows_switches_within_a_second);
	RUN(test_interval_pays_only_what_the_windows_did_not);
	RUN(test_window_merely_over_budget_waits_for_the_interval);
	RUN(test_far_over_windows_must_be_in_a_row);
	RUN(test_exact_flag_ignores_windows);
	RUN(test_estimate_follows_the_machines_work_at_the_learned_share);
	RUN(test_startup_burst_within_the_bucket_stays_exact);
	RUN(test_sustained_overspend_empties_the_bucket_and_switches);
	RUN(test_bursts_without_time_to_refill_switch);
	RUN(test_exact_flag_never_switches);
	RUN(test_unknown_cost_changes_nothing);
	RUN(test_exact_returns_only_after_staying_well_under_budget);
	RUN(test_early_return_doubles_the_hold_so_the_mode_does_not_flap);
	RUN(test_growing_processes_become_suspects_strongest_first);
	RUN(test_quiet_process_stays_watched);
	RUN(test_suspect_released_after_it_stops_growing);
	RUN(test_picked_process_stays_traced_without_growth_and_beyond_the_limit);
	RUN(test_leaving_exact_releases_the_costliest_and_keeps_the_others_exact);
	RUN(test_leaving_exact_releases_only_as_many_as_the_budget_needs);
	RUN(test_leaving_exact_keeps_at_most_the_limit_most_blocks_first);
	RUN(test_process_released_for_cost_is_kept_out_until_its_cost_averages_out);
	RUN(test_costly_suspect_is_traced_for_its_diagnosis_window_then_released);
	RUN(test_allocation_heavy_suspect_released_within_a_second);
	RUN(test_flagged_costly_suspect_is_released_at_once);
	RUN(test_cheap_suspect_and_costly_pick_stay);
	RUN(test_traced_cost_adds_up_what_each_costs);
	RUN(test_young_process_whose_memory_grew_is_a_grower);
	RUN(test_gone_process_is_released_at_once);
	RUN(test_much_stronger_grower_takes_the_weakest_suspects_place);
	RUN(test_switch_to_exact_forgets_the_suspects);
	RUN(test_one_users_growers_leave_a_slot_for_another_user);
	RUN(test_new_users_grower_takes_a_slot_from_the_user_with_most);
	RUN(test_stronger_grower_does_not_take_another_users_only_slot);
	RUN(test_one_process_hot_for_a_second_ends_exact_mode);
	RUN(test_one_hot_reading_between_cool_ones_keeps_exact_mode);
	RUN(test_process_under_the_hot_factor_is_left_to_the_bucket);
	CHECK_EXIT();
}
