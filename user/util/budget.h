/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * budget.h - how long an interval's optional work may take: work that can wait (looking up
 * symbols, re-reading /proc for every process) stops at a deadline or as soon as leaktop was
 * asked to stop, and is counted as deferred instead.
 */
#ifndef LEAKTOP_BUDGET_H
#define LEAKTOP_BUDGET_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

struct work_budget {
	uint64_t deadline_ns;			/* CLOCK_MONOTONIC; 0: no limit */
	const volatile sig_atomic_t *stop;	/* non-zero: stop optional work now */
	bool last;				/* the last report's: nothing comes after it, so
						 * answers still awaited are waited for (until the
						 * deadline) */
};

static inline bool work_budget__spent(const struct work_budget *b, uint64_t now_ns)
{
	return b && ((b->stop && *b->stop) || (b->deadline_ns && now_ns >= b->deadline_ns));
}

#endif
