/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * model.h - what leaktop knows, built from samples: processes (one per image, i.e. pid and
 * exec generation) and their call sites, each with its resolved stack and a short history.
 * Views (text report, JSON snapshot, TUI) read it and never change it.
 */
#ifndef LEAKTOP_MODEL_H
#define LEAKTOP_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The kernel ABI's shared enums only: site kinds, drop causes and counters are indexed by
 * them.  No map layout of it is used here. */
#include "bpf/leaktop.h"
#include "core/frame.h"
#include "core/heapmode.h"
#include "core/lastref.h"
#include "core/scan.h"
#include "core/series.h"
#include "core/symhint.h"
#include "core/types.h"

struct sample;

#define FD_SAMPLES 3		/* example targets kept per fd site */
#define SCAN_LEAKS_SHOWN 20	/* leak roots a report or snapshot lists per process */
#define SCAN_ERROR_LEN 512

struct site {
	enum lt_site_kind kind;
	uint64_t stack_hash;		/* 0: stack unknown */
	/* As the kernel counts them (fd sites: allocs/frees are opens/closes, no bytes). */
	int64_t outstanding_bytes;
	int64_t outstanding_count;	/* before repairs: see site__outstanding() */
	uint64_t allocs;
	uint64_t frees;			/* before repairs: see site__frees() */
	uint64_t alloc_bytes;		/* total bytes ever allocated here */
	uint64_t live_since_ns;		/* first allocation since outstanding_count was last 0 */
	uint64_t last_alloc_ns;
	/* fd sites: descriptors /proc showed closed without a close leaktop saw. */
	uint64_t repaired;
	uint32_t fd_types[FD_TYPE__COUNT];	/* kinds of the outstanding descriptors */
	char fd_samples[FD_SAMPLES][96];
	uint32_t n_fd_samples;
	struct sym_frame *frames;	/* innermost first; allocator frames never captured */
	uint32_t n_frames;
	/*
	 * Unique to these frames for the life of the process (0: not resolved yet): views may
	 * keep what they make of the frames by it.  Frames that change take a new one.
	 */
	uint64_t frames_serial;
	bool resolved;
	bool seen;			/* present in the latest sample */
	/* Heap sites of a scanned process: their blocks by class at the latest scan. */
	bool has_lost;
	uint64_t lost_count[SCAN__COUNT];
	uint64_t lost_bytes[SCAN__COUNT];
	/* The allocation numbers of its definitely lost blocks (the lowest, ascending). */
	uint64_t lost_seqs[SCAN_SEQS_MAX];
	uint32_t n_lost_seqs;
	/* Outstanding bytes (heap) or descriptors (fd) over the analysis window. */
	struct series hist;
	/* Written by analysis. */
	double growth_per_s;
	double trend_z;
	bool flagged;
	/* Heap: its process was released without a free probe, so its outstanding counts may
	 * hold blocks freed while frees went unseen (a count of what was, not of what is). */
	bool stale;
};

/* Process flags (the contract's "flags"; their names and letters: view/format.h). */
enum process_flag_bit {
	PROC_FLAG_HEAP,
	PROC_FLAG_FD,
	PROC_FLAG_RSS,
	PROC_FLAG_RSS_UNEXPLAINED,
	PROC_FLAG_OOM_KILLED,
	PROC_FLAG_ALLOC_RETENTION,
	PROC_FLAG__COUNT,
};

enum process_flag {
	PROC_HEAP_GROWTH = 1 << PROC_FLAG_HEAP,
	PROC_FD_GROWTH = 1 << PROC_FLAG_FD,
	PROC_RSS_GROWTH = 1 << PROC_FLAG_RSS,
	PROC_RSS_UNEXPLAINED = 1 << PROC_FLAG_RSS_UNEXPLAINED,
	/* The OOM killer chose it: set by the event, never by analysis, and kept. */
	PROC_OOM_KILLED = 1 << PROC_FLAG_OOM_KILLED,
	/* Its latest scan found the allocator holding much of the heap free (heapslack.h). */
	PROC_ALLOC_RETENTION = 1 << PROC_FLAG_ALLOC_RETENTION,
};

/* Flags that are facts, not verdicts: analysis keeps them. */
#define PROC_FLAGS_STICKY	PROC_OOM_KILLED

/*
 * An OOM-killed image stays listed (exited, flagged, with its last sites) this long after
 * its exit, not reaped after one report; its kernel records are purged as usual (the model
 * keeps their last values).  At most OOM_KEEP_MAX such images at once: past it, the
 * longest dead go first.
 */
#define OOM_KEEP_NS		(60ULL * 1000000000ULL)
#define OOM_KEEP_MAX		32

/* lastref verdicts kept per image (each run of L follows at most WATCH_MAX_BLOCKS blocks). */
#define PROC_LASTREF_MAX	64

/* The latest reachability scan of an image: a result, an error, or both (a scan that failed
 * after one that worked keeps the result and notes the error). */
struct proc_scan {
	bool ok;			/* result holds a scan (its per-block classes are not kept) */
	struct scan_result result;
	char error[SCAN_ERROR_LEN];	/* the latest failure, "" if none */
	struct scan_partial partial;	/* the latest failure's partial copy (cut: there was one) */
};

struct process {
	uint32_t pid;
	uint64_t gen;			/* image id: changes on exec, unique across pids */
	char comm[32];
	char *cmdline;
	char *alloc_module;		/* the allocator its malloc binds to (NULL: unknown) */
	char alloc_kind[16];
	char *cgroup;			/* its cgroup path (NULL: unknown) */
	char container[16];		/* the container id its cgroup names; "": none or unknown */
	uint64_t start_ticks;		/* /proc/PID/stat starttime; 0 if unknown */
	struct proc_counters counters;
	bool counters_fresh;		/* counters read this interval (not deferred) */
	struct site *sites;		/* sorted by stack_hash */
	size_t n_sites, cap_sites;
	/* Sums over sites. */
	int64_t heap_outstanding_bytes, heap_outstanding_count;
	uint64_t heap_allocs, heap_frees;
	int64_t fd_outstanding;
	int64_t mmap_outstanding_bytes, mmap_outstanding_count;	/* over its mmap sites */
	uint64_t mmap_maps, mmap_unmaps;
	uint64_t fd_opens, fd_closes, fd_repaired;
	uint32_t fd_untracked;
	bool fd_census_valid;
	/* Histories over the analysis window, and what analysis made of them. */
	struct series hist_heap, hist_fds, hist_rss, hist_vm, hist_fd_count, hist_threads;
	struct series hist_mmap;	/* mmap_outstanding_bytes */
	unsigned int flags;		/* enum process_flag */
	bool mmap_growing;		/* analysis: the mmap total's last verdict */
	double heap_growth_per_s;
	/* The strongest growth of memory that needs no heap probe: anonymous RSS, anonymous
	 * mappings (bytes/s, 0 when not growing); what picks suspects. */
	double untraced_growth_per_s;
	struct series hist_anon;	/* rss_anon_bytes */
	/* Heap tracing of this image: how, since when (run clock), picked in the TUI. */
	uint64_t heap_calls, heap_calls_ns;	/* probe entries so far, as of (0: none seen) */
	/* Its records the shared maps lost (over its share, or a full map), by enum lt_share. */
	uint64_t share_drops[LT_SHARE__COUNT];
	double heap_calls_per_s;	/* over the last interval */
	bool heap_via_agent;		/* its heap traced by the in-process agent (--agent) */
	enum proc_heap_mode heap_mode;
	uint64_t heap_since_ns;
	bool heap_picked;
	uint64_t heap_released_ns;	/* its heap tracing was last released then (0: never) */
	double heap_cost_pct;		/* tracing it alone costs, % of all CPUs (NaN) */
	uint64_t first_seen_ns;
	struct proc_scan *scan;		/* NULL: never scanned */
	/* lastref's verdicts on blocks of this image, in the order given (the TUI's L,
	 * `leaktop lastref`); at most PROC_LASTREF_MAX, later ones counted in lastref_dropped. */
	struct lastref_result *lastref;
	size_t n_lastref, cap_lastref;
	uint32_t lastref_dropped;
	bool target;			/* named by -p or started by --: shown without sites */
	bool exited;			/* exited or exec'd: in this report, gone from the next */
	bool exit_reported;		/* exited and already in a report: reaped next update */
	uint64_t exited_ns;		/* sample time its exit was applied (0: alive) */
	uint64_t oom_ns;		/* sample time the OOM killer's choice was applied */
	/* An OOM-killed image kept after its exit (OOM_KEEP_NS): its kernel records were
	 * purged, its sites are frozen at their last values. */
	bool records_released;
};

struct model {
	struct process *procs;		/* sorted by (pid, gen) */
	size_t n_procs, cap_procs;
	uint64_t start_ns, now_ns;
	double interval_s;
	uint32_t window;		/* samples per history */
	uint64_t drops[LT_DROP__COUNT];
	uint64_t counters[LT_CNT__COUNT];
	size_t probes_attached;
	size_t libcs_refused;		/* libcs not probed: not the file their process maps */
	uint64_t files_refused_fs;	/* files left unread: FUSE, network file systems */
	uint64_t alloc_unreadable;	/* files whose allocator could not be looked for */
	uint64_t alloc_scan_pending;	/* whole system: mappings the last scan left for later */
	char heap_attach[8];		/* "system", "tree", "pid"; "": unknown */
	char syscall_attach[8];		/* "syscall", "raw"; "": none or unknown */
	char syscall_why[200];		/* why "raw" ("": no reason known) */
	struct unwind_stats unwind;
	double collect_ms;		/* last interval: the producers (maps, /proc, symbols, fd census,
					 * scans) */
	uint32_t stacks_pending;	/* stacks whose frames are still to come */
	uint32_t procs_deferred;	/* live processes whose /proc reading was left for later */
	/* Processes /proc showed ended while no event said so (lost events), since the start. */
	uint64_t reconciled_exited;	/* gone */
	uint64_t reconciled_reused;	/* their pid reused by a newer process */
	/* leaktop itself, as the run loop measured it (0: not measured). */
	uint64_t self_rss_bytes;
	double self_cpu_s;
	uint64_t oom_snapshots_failed;	/* OOM victims' snapshots that could not be written */
	uint64_t oom_snapshots_skipped;	/* ... not written: --oom-min-gap */
	uint64_t oom_snapshots_removed;	/* ... removed: --oom-max-files, --oom-max-bytes */
	struct stop_record stop;	/* --stop-at: where it stopped a process (fired) */
	unsigned int resources;
	/* Heap tracing under the budget (whole-system mode), as of the latest sample. */
	bool heap_budgeted;
	enum heap_mode heap_mode;
	double heap_cost_pct, heap_exact_cost_pct, heap_budget_pct, heap_trap_ns;
	double heap_traced_cost_pct;	/* suspects mode: what the traced ones cost (NaN) */
	double heap_bucket_fill;	/* exact mode's budget left, 0 to 1 (NaN: unknown) */
	uint32_t heap_switches;
	/* Modules without symbols that frames were resolved in: one entry per file (path and
	 * build id), in the order they were found; never dropped. */
	struct sym_missing *sym_missing;
	size_t n_sym_missing, cap_sym_missing;
};

void model__init(struct model *m, double interval_s, unsigned int resources, uint32_t window);
void model__free(struct model *m);

struct sample_heap;
/*
 * How heap tracing stands after the run loop's decisions of this interval (applied after
 * model__apply and analysis): the run's mode and cost, each image's heap mode.
 */
void model__apply_heap(struct model *m, const struct sample_heap *h);
/* Live processes whose heap tracing was released (their sites kept, frozen). */
size_t model__heap_released(const struct model *m);

/* Find or add the process image (pid, gen). */
struct process *model__process(struct model *m, uint32_t pid, uint64_t gen);
const struct process *model__find(const struct model *m, uint32_t pid, uint64_t gen);
/* Any live image of pid. */
const struct process *model__find_pid(const struct model *m, uint32_t pid);
/*
 * Add (or update) a module without symbols, a copy of h (past SYM_MISSING_MAX modules, none
 * is added).  0 or -ENOMEM.  An entry whose answer changed is no longer `reported`.
 */
int model__add_missing(struct model *m, const struct sym_missing *h);
/* Note that a report showed the current state (exited images were in it, and the modules
 * without symbols). */
void model__reported(struct model *m);
/*
 * Remove exited images a report already showed; list them in dead (malloc'd): the caller
 * purges their kernel records.  An OOM-killed one is listed the first time but kept
 * (records_released) until OOM_KEEP_NS after its exit, then removed without being listed.
 */
size_t model__reap(struct model *m, struct dead_image **dead);

/*
 * Fold one interval's sample into the model, a pure function of the model and the sample
 * (no system calls, no clock: time is the sample's).  In order: lifecycle events (new
 * images, exits: an exited image stays for one more report), the kernel's site records
 * (sites it no longer has are dropped), frames of stacks, /proc readings and fd censuses of
 * live images, scans; then per-process sums and histories.  0 or -ENOMEM (the model stays
 * consistent, the rest of the sample is not applied).
 */
int model__apply(struct model *m, const struct sample *s);

/* The heap site (hash) of p, or NULL. */
const struct site *model__heap_site(const struct process *p, uint64_t stack_hash);
/* The latest successful scan's record of heap site stack_hash of p, or NULL. */
const struct scan_site *model__scan_site(const struct process *p, uint64_t stack_hash);

uint64_t model__events(const struct model *m);
uint64_t model__dropped(const struct model *m);
double model__elapsed_s(const struct model *m);

/* Names of the drop causes and counters, for reports ("alloc_map_full", ...). */
extern const char *const drop_names[LT_DROP__COUNT];
extern const char *const share_names[LT_SHARE__COUNT];	/* processes[].drops keys */
/* The keys of the counters in a snapshot's stats ("events", "self_hits", ...). */
extern const char *const counter_names[LT_CNT__COUNT];



/* Outstanding count and frees of a site, with the repairs applied. */
int64_t site__outstanding(const struct site *s);
uint64_t site__frees(const struct site *s);

/* Shown in reports: has heap, descriptor or mapping activity, or is a live target of -p / --. */
bool model__visible(const struct process *p);

/* Display order, shared by every view: the clearest leaks first, then most outstanding
 * bytes.  Caller frees. */
struct process **model__procs_by_outstanding(const struct model *m, size_t *n);
struct site **model__sites_by_outstanding(const struct process *p);

#endif
