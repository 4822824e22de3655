/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * heapmode.h - the whole-system overhead budget: when heap tracing is exact (every process's
 * allocator probed) and when only suspects are, and which processes are suspects.
 *
 * Pure decisions over what the run loop measured (the estimated cost of exact tracing) and
 * what analysis found (which processes grow): no clock, no /proc, no BPF here.  The run loop
 * carries the decisions out (live/loader.c attaches and detaches) and feeds them to the
 * model through the sample.
 */
#ifndef LEAKTOP_HEAPMODE_H
#define LEAKTOP_HEAPMODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum heap_mode {
	HEAP_MODE_EXACT,		/* every process's allocator probed (system-wide) */
	HEAP_MODE_SUSPECTS,		/* only suspects and picked processes (pid-filtered) */
};

/* One process's heap tracing, as a snapshot names it (processes[].heap.mode). */
enum proc_heap_mode {
	PROC_HEAP_EXACT,		/* traced since it was first seen (or exact mode began) */
	PROC_HEAP_SUSPECT,		/* traced on its own, since it became a suspect or was picked */
	PROC_HEAP_WATCH,		/* not traced: counters and mmap only */
};

/* Defaults of the options (cli/options.c quotes them). */
#define HEAPMODE_DEFAULT_BUDGET_PCT	2.0
#define HEAPMODE_DEFAULT_BUDGET_PCT_TEXT 2%
#define HEAPMODE_DEFAULT_MAX_SUSPECTS	8
#define HEAPMODE_MAX_SUSPECTS		64

/* The hysteresis, in intervals (and at least the seconds beside them). */
#define HEAPMODE_OVER_INTERVALS		3	/* over budget this long: suspects only */
#define HEAPMODE_OVER_MIN_S		2.0
#define HEAPMODE_FAR_OVER_FACTOR	10.0	/* this far over: one interval is enough ... */
#define HEAPMODE_FAR_OVER_MIN_S		0.5	/* ... of at least this long */
#define HEAPMODE_WINDOW_S		0.25	/* exact mode looks this often inside an interval */
#define HEAPMODE_RETURN_INTERVALS	30	/* well under budget this long: exact again */
#define HEAPMODE_RETURN_MIN_S		5.0
#define HEAPMODE_RETURN_MAX_S		600.0	/* the longest that hold grows to */
#define HEAPMODE_UNDER_FRACTION		0.5	/* "well under": below half the budget */
#define HEAPMODE_RELEASE_INTERVALS	20	/* a suspect not growing this long is released */
#define HEAPMODE_PREEMPT_FACTOR		2.0	/* a stronger grower takes the weakest one's place */
#define HEAPMODE_SUSPECT_COST_FACTOR	10.0	/* a suspect costing this many budgets alone goes */

struct heapmode_config {
	double budget_pct;		/* of the machine's CPU (all cores) */
	uint32_t max_suspects;		/* picked processes do not count against it */
	bool exact;			/* --exact: never leave exact mode */
	double interval_s;
};

/* A live process as the suspect choice sees it. */
struct heapmode_candidate {
	uint32_t pid;
	bool growing;			/* anonymous memory, mappings or tracked heap grow */
	double growth_per_s;		/* bytes/s of the strongest of those */
	bool picked;			/* named by the user (TUI): traced whatever it does */
	double cost_pct;		/* what tracing it costs now (% of all CPUs); NaN: unknown */
	uint32_t uid;			/* its owner (real uid); HEAPMODE_UID_UNKNOWN: unknown */
};

#define HEAPMODE_UID_UNKNOWN	UINT32_MAX	/* the unknown ones share one owner */

/* A process whose heap is traced on its own in suspects mode. */
struct heapmode_traced {
	uint32_t pid;
	uint64_t since_ns;		/* attached at */
	uint64_t last_growth_ns;	/* last interval it was seen growing */
	double growth_per_s;
	bool picked;
	uint32_t uid;
};

struct heapmode {
	struct heapmode_config cfg;
	enum heap_mode mode;
	uint64_t mode_since_ns;
	uint64_t over_since_ns;		/* over budget since (0: not over) */
	uint64_t under_since_ns;	/* well under budget since (0: not under) */
	uint64_t far_since_ns;		/* windows far over budget since (0: not) */
	double return_hold_s;		/* under budget this long before exact returns */
	uint32_t switches;		/* mode changes so far */
	double cost_per_work;		/* exact tracing's share of the machine's other busy CPU
					 * time (0 to 1), learned while exact; NaN until then */
	struct heapmode_traced *traced;	/* suspects mode: who is traced, by pid */
	size_t n_traced, cap_traced;
	struct heapmode_ban {		/* released for costing more than the budget alone */
		uint32_t pid;
		uint64_t until_ns;
	} *banned;
	size_t n_banned;
};

enum heapmode_change {
	HEAPMODE_SAME,
	HEAPMODE_TO_SUSPECTS,
	HEAPMODE_TO_EXACT,
};

void heapmode__init(struct heapmode *h, const struct heapmode_config *cfg, uint64_t now_ns);
void heapmode__free(struct heapmode *h);

/*
 * One interval's cost: exact_cost_pct is what exact tracing costs (measured while exact,
 * estimated while suspects only; NaN: unknown, nothing changes).  Returns the change of mode
 * decided now; a switch to suspects empties the traced set (heapmode__choose fills it).
 */
enum heapmode_change heapmode__step(struct heapmode *h, uint64_t now_ns, double exact_cost_pct);

/*
 * Exact mode, inside an interval: one window (HEAPMODE_WINDOW_S or so) cost cost_pct.  A cost
 * HEAPMODE_FAR_OVER_FACTOR budgets over for HEAPMODE_FAR_OVER_MIN_S of windows in a row (a
 * build starting) switches to suspects now: each second of it costs the machine several.
 */
enum heapmode_change heapmode__window(struct heapmode *h, uint64_t now_ns, uint64_t window_ns,
				      double cost_pct);

/*
 * While exact: learn what share of the machine's busy time exact tracing takes, from one
 * interval's cost_ns (probe hits x trap cost + the programs' run time) and busy_ns (all
 * CPUs' busy time, leaktop's own taken out; it includes cost_ns).  Suspects mode estimates
 * exact tracing's cost as that share of the busy time then: a machine that went quiet is
 * cheap to trace again, one still as busy is not.
 */
void heapmode__learn(struct heapmode *h, double cost_ns, double busy_ns);
/* While suspects only: what exact tracing would cost over busy_ns of work (NaN: unknown). */
double heapmode__estimate_exact_ns(const struct heapmode *h, double busy_ns);

/* The user picked pid (suspects mode: traced from now on, whatever it does); 0 or -ENOMEM. */
int heapmode__pick(struct heapmode *h, uint32_t pid, uint64_t now_ns);
/* Stop tracing pid at once (the user's choice); true when it was traced. */
bool heapmode__drop(struct heapmode *h, uint32_t pid);

/* What heapmode__choose changed: pids to attach and to detach (the first n_expensive of
 * removed were released because tracing them alone cost more than the budget). */
struct heapmode_changes {
	uint32_t *added, *removed;
	size_t n_added, n_removed, n_expensive;
};

/*
 * Suspects mode: update the traced set from this interval's candidates (every live process):
 * picked ones are always in it; a suspect whose tracing alone costs more than
 * HEAPMODE_SUSPECT_COST_FACTOR budgets (a process that lives in malloc) is released and not
 * taken again for HEAPMODE_RELEASE_INTERVALS (the user can still pick it); a leaker with
 * ordinary allocator traffic costs a few budgets and stays; growing ones join, strongest first,
 * up to max_suspects (one growing more than HEAPMODE_PREEMPT_FACTOR times the weakest
 * suspect takes its place); a suspect not growing for HEAPMODE_RELEASE_INTERVALS is
 * released, and one that is no candidate (gone) too.  Slots are kept fair between users
 * (uid): the strongest grower of each user without a slot comes first, and takes the place
 * of the weakest suspect of the user holding the most slots (two or more) whatever its
 * growth; a grower whose user has slots takes only a place of its own user's or of a user
 * holding at least two more.  So one user's many growers cannot take every slot.  In exact
 * mode it only forgets.  0 or -ENOMEM; out is freed with heapmode_changes__free().
 */
int heapmode__choose(struct heapmode *h, uint64_t now_ns, const struct heapmode_candidate *c,
		     size_t n, struct heapmode_changes *out);
void heapmode_changes__free(struct heapmode_changes *c);

/* The traced entry of pid, or NULL. */
const struct heapmode_traced *heapmode__traced(const struct heapmode *h, uint32_t pid);

/* "exact" / "suspects", and "exact" / "suspect" / "watch". */
const char *heapmode__name(enum heap_mode mode);
const char *heapmode__proc_name(enum proc_heap_mode mode);

#endif
