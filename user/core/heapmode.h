/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * heapmode.h - the whole-system overhead budget: when heap tracing is exact (every process's
 * allocator probed) and when not, which processes keep being traced then (those counted
 * exactly so far that cost little, the suspects, the user's picks), and which are released.
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
	PROC_HEAP_RELEASED,		/* not traced any more: its heap sites kept, frozen */
};

/* Defaults of the options (cli/options.c quotes them). */
#define HEAPMODE_DEFAULT_BUDGET_PCT	2.0
#define HEAPMODE_DEFAULT_BUDGET_PCT_TEXT 2%
#define HEAPMODE_DEFAULT_MAX_SUSPECTS	8
#define HEAPMODE_MAX_SUSPECTS		64

/*
 * Exact mode spends from a token bucket that holds HEAPMODE_BUCKET_S seconds of the budget
 * and refills at the budget: a start-up burst passes, a sustained overspend empties it.  Its
 * windows (HEAPMODE_WINDOW_S) are the fast valve: a cost of the whole machine empties it in
 * about a second, not at an interval's end.
 */
#define HEAPMODE_BUCKET_S		30.0
#define HEAPMODE_WINDOW_S		0.25	/* exact mode looks this often inside an interval */
/*
 * The bucket measures the machine; one process can be slowed far more than the machine's
 * share says (a single-threaded server whose every allocator call traps runs at a third of
 * its speed while the machine's share is 17%).  A process whose tracing alone costs over
 * HEAPMODE_HOT_FACTOR times the budget, at every reading for HEAPMODE_HOT_S, ends exact mode
 * at once (the bucket notwithstanding): it is the costliest, so it is released, and the
 * others' counts stay exact by pid.  A start-up burst shorter than that passes.
 */
#define HEAPMODE_HOT_FACTOR		5.0
#define HEAPMODE_HOT_S			1.0
/*
 * Leaving exact mode: the costliest processes are released until what the others cost is
 * under HEAPMODE_UNDER_FRACTION of the budget; of the others, those with heap records keep
 * being traced exactly (pid-filtered probes), most blocks first, up to HEAPMODE_MAX_KEPT.
 */
#define HEAPMODE_MAX_KEPT		32
/*
 * A traced process (suspect or kept) that costs more than the budget is traced for a
 * diagnosis window: until one of its heap sites is flagged, or it has been over the budget
 * for HEAPMODE_DIAGNOSIS_S, or it has spent HEAPMODE_DIAGNOSIS_S seconds' worth of budget
 * above the budget; then it is released, its sites and verdicts kept, and kept out for as long
 * as its cost takes to average out to the budget (HEAPMODE_DIAGNOSIS_S x (cost / budget - 1),
 * at least HEAPMODE_RELEASE_INTERVALS, at most HEAPMODE_BAN_MAX_S): a duty cycle.
 */
#define HEAPMODE_DIAGNOSIS_S		20.0
/*
 * A process born after exact mode ended was never heap-traced: once it has lived
 * HEAPMODE_YOUNG_MIN_S, any growth of its anonymous memory since its first reading makes it
 * a grower (the trend test needs several of the kernel's coarse RSS steps, half a minute for
 * a slow leak); the build's short-lived processes never qualify.
 */
#define HEAPMODE_YOUNG_MIN_S		5.0
#define HEAPMODE_BAN_MAX_S		600.0
#define HEAPMODE_RETURN_INTERVALS	30	/* well under budget this long: exact again */
#define HEAPMODE_RETURN_MIN_S		5.0
#define HEAPMODE_RETURN_MAX_S		600.0	/* the longest that hold grows to */
#define HEAPMODE_UNDER_FRACTION		0.5	/* "well under": below half the budget */
#define HEAPMODE_RELEASE_INTERVALS	20	/* a suspect not growing this long is released */
#define HEAPMODE_PREEMPT_FACTOR		2.0	/* a stronger grower takes the weakest one's place */

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
	bool has_heap;			/* it has heap records (sites) to keep */
	uint64_t heap_count;		/* its outstanding heap blocks */
	bool flagged;			/* one of its heap sites is flagged */
};

#define HEAPMODE_UID_UNKNOWN	UINT32_MAX	/* the unknown ones share one owner */

enum heapmode_role {
	HEAPMODE_ROLE_SUSPECT,		/* traced because it grows (or picked) */
	HEAPMODE_ROLE_KEPT,		/* counted exactly since exact mode, and cheap: kept */
};

/* A process whose heap is traced on its own in suspects mode. */
struct heapmode_traced {
	uint32_t pid;
	enum heapmode_role role;
	uint64_t since_ns;		/* attached at (kept: when exact mode ended) */
	uint64_t last_growth_ns;	/* last interval it was seen growing */
	double growth_per_s;
	bool picked;
	uint32_t uid;
	double cost_pct;		/* what tracing it costs now, % of all CPUs; NaN: unknown */
	uint64_t seen_ns;		/* its cost was last looked at */
	uint64_t over_since_ns;		/* over the budget since (0: not) */
	double allowance_pct_s;		/* what it may still spend above the budget */
};

/* A process no longer traced whose heap records stay, frozen (unbounded frees unseen). */
struct heapmode_released {
	uint32_t pid;
	uint64_t released_ns;
};

struct heapmode {
	struct heapmode_config cfg;
	enum heap_mode mode;
	uint64_t mode_since_ns;
	double bucket_pct_s;		/* exact mode's budget left: % of all CPUs x seconds */
	uint64_t bucket_ns;		/* spent up to this time */
	uint64_t under_since_ns;	/* well under budget since (0: not under) */
	uint64_t hot_since_ns;		/* exact: some process over HEAPMODE_HOT_FACTOR x the
					 * budget at every reading since (0: not) */
	uint32_t hot_readings;		/* those readings */
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
	size_t n_banned, cap_banned;
	struct heapmode_released *released;	/* by pid; live processes only */
	size_t n_released, cap_released;
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
 * estimated while suspects only; NaN: unknown, nothing changes).  While exact, the time since
 * the bucket was last spent from is paid at that cost; an empty bucket switches to suspects.
 * Returns the change of mode decided now; a switch to suspects empties the traced set
 * (heapmode__leave_exact fills it with the processes kept, heapmode__choose with suspects).
 */
enum heapmode_change heapmode__step(struct heapmode *h, uint64_t now_ns, double exact_cost_pct);

/*
 * Exact mode, inside an interval: one window (HEAPMODE_WINDOW_S or so, ending at now_ns) cost
 * cost_pct.  It is paid from the bucket at once: an empty one switches to suspects now.
 */
enum heapmode_change heapmode__window(struct heapmode *h, uint64_t now_ns, uint64_t window_ns,
				      double cost_pct);

/*
 * Exact mode, at an interval's end: the costliest single process costs top_cost_pct (% of all
 * CPUs; NaN: none known).  Over HEAPMODE_HOT_FACTOR x the budget at every reading for
 * HEAPMODE_HOT_S (two readings at least): switches to suspects.
 */
enum heapmode_change heapmode__hot(struct heapmode *h, uint64_t now_ns, double top_cost_pct);

/* The bucket's level as a share of its capacity (0 to 1). */
double heapmode__bucket_fill(const struct heapmode *h);

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
/* Stop tracing pid at once (its attach failed); true when it was traced. */
bool heapmode__drop(struct heapmode *h, uint32_t pid);
/* Stop tracing pid at once, its records kept (the user's choice); true when it was traced. */
bool heapmode__release(struct heapmode *h, uint32_t pid, uint64_t now_ns);

/* Why a process stopped being traced (heapmode_changes.why). */
enum heapmode_why {
	HEAPMODE_WHY_COST,		/* it cost over the budget for its diagnosis window */
	HEAPMODE_WHY_DIAGNOSED,		/* over the budget, one of its sites flagged */
	HEAPMODE_WHY_COSTLIEST,		/* leaving exact mode: among the costliest */
	HEAPMODE_WHY_LIMIT,		/* leaving exact mode: beyond HEAPMODE_MAX_KEPT */
	HEAPMODE_WHY_QUIET,		/* a suspect that stopped growing */
	HEAPMODE_WHY_PREEMPTED,		/* a suspect whose slot a stronger grower took */
	HEAPMODE_WHY_GONE,		/* exited */
};

/*
 * What heapmode__choose or heapmode__leave_exact changed: pids to attach and to detach, and
 * why each was detached (why[i] for removed[i]; heapmode__released() says whether its heap
 * records stay, frozen).  n_expensive: how many were removed for their cost.
 */
struct heapmode_changes {
	uint32_t *added, *removed;
	uint8_t *why;			/* enum heapmode_why */
	size_t n_added, n_removed, n_expensive;
	size_t cap_added, cap_removed, cap_why;
};

/*
 * Exact mode has just ended (heapmode__step or heapmode__window said HEAPMODE_TO_SUSPECTS):
 * decide, process by process, from c[] (every live process, cost_pct as measured while
 * exact): picked ones stay traced; the costliest are released until the others cost under
 * HEAPMODE_UNDER_FRACTION of the budget (and are kept out for a while); of the others, those
 * with heap records are kept, traced exactly by pid, most blocks first, up to
 * HEAPMODE_MAX_KEPT; every released one with records keeps them (heapmode.released).  A
 * process with no records is merely watched.  0 or -ENOMEM; out is freed with
 * heapmode_changes__free().
 */
int heapmode__leave_exact(struct heapmode *h, uint64_t now_ns, const struct heapmode_candidate *c,
			  size_t n, struct heapmode_changes *out);

/*
 * Suspects mode: update the traced set from this interval's candidates (every live process):
 * picked ones are always in it; a traced one costing over the budget gets its diagnosis
 * window (HEAPMODE_DIAGNOSIS_S), then is released, its records kept, and kept out as long as
 * its cost takes to average out to the budget (the user can still pick it); one within the
 * budget stays; growing ones join, strongest first,
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

/*
 * Suspects mode: the growth (bytes/s) of a process first seen at first_seen_ns whose
 * anonymous memory read `first` at first_ts_ns and `last` at last_ts_ns, as a young process
 * (see HEAPMODE_YOUNG_MIN_S); 0 when it did not grow, is too young, or was seen before exact
 * mode ended (exact mode only: 0).
 */
double heapmode__young_growth_per_s(const struct heapmode *h, uint64_t first_seen_ns,
				    uint64_t first_ts_ns, double first, uint64_t last_ts_ns,
				    double last);

/* The traced entry of pid, or NULL. */
const struct heapmode_traced *heapmode__traced(const struct heapmode *h, uint32_t pid);
/* The released entry of pid, or NULL. */
const struct heapmode_released *heapmode__released(const struct heapmode *h, uint32_t pid);
/* What the traced processes cost together now, % of all CPUs (NaN: none known). */
double heapmode__traced_cost_pct(const struct heapmode *h);

/* "exact" / "suspects", and "exact" / "suspect" / "watch" / "released". */
const char *heapmode__name(enum heap_mode mode);
const char *heapmode__proc_name(enum proc_heap_mode mode);

#endif
