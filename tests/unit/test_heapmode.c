// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_heapmode.c - the overhead budget's decisions: when exact tracing gives way to suspects
 * only and comes back (no flapping), and which processes are suspects.
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

static void test_over_budget_for_a_few_seconds_switches_to_suspects(void)
{
	struct heapmode h = hm(2, 8, false);
	uint64_t t = 0;

	/* One interval over: a burst, not a reason. */
	CHECK(steps(&h, &t, 9, 1) == HEAPMODE_SAME);
	CHECK(steps(&h, &t, 1, 1) == HEAPMODE_SAME);
	CHECK(steps(&h, &t, 9, 2) == HEAPMODE_SAME);
	CHECK(h.mode == HEAP_MODE_EXACT);
	CHECK(steps(&h, &t, 9, 2) == HEAPMODE_TO_SUSPECTS);
	CHECK(h.mode == HEAP_MODE_SUSPECTS);
	CHECK(h.switches == 1);
	heapmode__free(&h);
}

static void test_cost_ten_times_the_budget_switches_after_one_interval(void)
{
	struct heapmode h = hm(2, 8, false);
	uint64_t t = 0;

	CHECK(steps(&h, &t, 50, 1) == HEAPMODE_TO_SUSPECTS);
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

	CHECK(steps(&h, &t, 9, 5) == HEAPMODE_TO_SUSPECTS);
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

	steps(&h, &t, 9, 5);
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

	steps(&h, &t, 9, 5);
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

	steps(&h, &t, 9, 5);
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
	heapmode__free(&h);
}

static void test_picked_process_stays_traced_without_growth_and_beyond_the_limit(void)
{
	struct heapmode h = hm(2, 0, false);
	struct heapmode_candidate c = { .pid = 7, .picked = true };
	struct heapmode_changes ch;
	uint64_t t = 0;

	steps(&h, &t, 9, 5);
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

static void test_suspect_costing_ten_budgets_alone_is_released_and_kept_out(void)
{
	struct heapmode h = hm(2, 8, false);
	struct heapmode_candidate c = { .pid = 7, .growing = true, .growth_per_s = 4096,
					.cost_pct = NAN };
	struct heapmode_changes ch;
	uint64_t t = 0;
	int back_at = -1;

	steps(&h, &t, 9, 5);
	CHECK(!heapmode__choose(&h, t, &c, 1, &ch));
	CHECK(ch.n_added == 1);
	heapmode_changes__free(&ch);
	/* Traced, it costs 5% of the CPUs alone: 2.5 budgets, it stays (a leaker's allocator
	 * traffic); 30% (it lives in malloc): it goes. */
	c.cost_pct = 5;
	t += S;
	CHECK(!heapmode__choose(&h, t, &c, 1, &ch));
	CHECK(ch.n_removed == 0 && heapmode__traced(&h, 7));
	heapmode_changes__free(&ch);
	c.cost_pct = 30;
	t += S;
	CHECK(!heapmode__choose(&h, t, &c, 1, &ch));
	CHECK(ch.n_removed == 1 && ch.n_expensive == 1 && ch.removed[0] == 7);
	CHECK(!heapmode__traced(&h, 7));
	heapmode_changes__free(&ch);
	/* Still growing, but kept out for the release time; then taken again. */
	c.cost_pct = NAN;
	for (int i = 1; i <= 40 && back_at < 0; i++) {
		t += S;
		CHECK(!heapmode__choose(&h, t, &c, 1, &ch));
		if (ch.n_added)
			back_at = i;
		heapmode_changes__free(&ch);
	}
	CHECK(back_at == HEAPMODE_RELEASE_INTERVALS);
	/* A picked one stays whatever it costs. */
	c.picked = true;
	c.cost_pct = 50;
	t += S;
	CHECK(!heapmode__choose(&h, t, &c, 1, &ch));
	CHECK(ch.n_removed == 0 && heapmode__traced(&h, 7));
	heapmode_changes__free(&ch);
	heapmode__free(&h);
}

static void test_gone_process_is_released_at_once(void)
{
	struct heapmode h = hm(2, 8, false);
	struct heapmode_candidate c = { .pid = 7, .growing = true, .growth_per_s = 4096 };
	struct heapmode_changes ch;
	uint64_t t = 0;

	steps(&h, &t, 9, 5);
	CHECK(!heapmode__choose(&h, t, &c, 1, &ch));
	heapmode_changes__free(&ch);
	CHECK(!heapmode__choose(&h, t + S, NULL, 0, &ch));
	CHECK(ch.n_removed == 1 && ch.removed[0] == 7);
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

	steps(&h, &t, 9, 5);
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

	steps(&h, &t, 9, 5);
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

	steps(&h, &t, 9, 5);
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

	steps(&h, &t, 9, 5);
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

	steps(&h, &t, 9, 5);
	CHECK(!heapmode__choose(&h, t, &c, 1, &ch));
	heapmode_changes__free(&ch);
	CHECK(steps(&h, &t, 0.1, 31) == HEAPMODE_TO_EXACT);
	CHECK(h.n_traced == 0);
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
	steps(&h, &t, 9, 5);
	heapmode__learn(&h, 0, 1e9);
	CHECK(h.cost_per_work == before);
	CHECK(fabs(heapmode__estimate_exact_ns(&h, 1e8) - before * 1e8) < 1e-3);
	heapmode__free(&h);
}

#define W (S / 4)		/* a window */

static void test_far_over_budget_in_windows_switches_within_half_a_second(void)
{
	struct heapmode h = hm(2, 8, false);

	/* 25 budgets over: the first window is a burst, the second makes half a second. */
	CHECK(heapmode__window(&h, 10 * S + W, W, 50) == HEAPMODE_SAME);
	CHECK(h.mode == HEAP_MODE_EXACT);
	CHECK(heapmode__window(&h, 10 * S + 2 * W, W, 50) == HEAPMODE_TO_SUSPECTS);
	CHECK(h.mode == HEAP_MODE_SUSPECTS);
	CHECK(h.switches == 1);
	/* Already suspects: windows change nothing. */
	CHECK(heapmode__window(&h, 10 * S + 3 * W, W, 50) == HEAPMODE_SAME);
	heapmode__free(&h);
}

static void test_window_merely_over_budget_waits_for_the_interval(void)
{
	struct heapmode h = hm(2, 8, false);
	uint64_t t = 10 * S;

	/* 5 budgets over, ten windows in a row: the interval rule (a few seconds) decides. */
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

int main(void)
{
	RUN(test_far_over_budget_in_windows_switches_within_half_a_second);
	RUN(test_window_merely_over_budget_waits_for_the_interval);
	RUN(test_far_over_windows_must_be_in_a_row);
	RUN(test_exact_flag_ignores_windows);
	RUN(test_estimate_follows_the_machines_work_at_the_learned_share);
	RUN(test_over_budget_for_a_few_seconds_switches_to_suspects);
	RUN(test_cost_ten_times_the_budget_switches_after_one_interval);
	RUN(test_exact_flag_never_switches);
	RUN(test_unknown_cost_changes_nothing);
	RUN(test_exact_returns_only_after_staying_well_under_budget);
	RUN(test_early_return_doubles_the_hold_so_the_mode_does_not_flap);
	RUN(test_growing_processes_become_suspects_strongest_first);
	RUN(test_quiet_process_stays_watched);
	RUN(test_suspect_released_after_it_stops_growing);
	RUN(test_picked_process_stays_traced_without_growth_and_beyond_the_limit);
	RUN(test_suspect_costing_ten_budgets_alone_is_released_and_kept_out);
	RUN(test_gone_process_is_released_at_once);
	RUN(test_much_stronger_grower_takes_the_weakest_suspects_place);
	RUN(test_switch_to_exact_forgets_the_suspects);
	RUN(test_one_users_growers_leave_a_slot_for_another_user);
	RUN(test_new_users_grower_takes_a_slot_from_the_user_with_most);
	RUN(test_stronger_grower_does_not_take_another_users_only_slot);
	CHECK_EXIT();
}
