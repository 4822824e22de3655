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

#include "bpf/leaktop.h"
#include "live/collector.h"
#include "live/fdsys.h"
#include "live/procfs.h"
#include "core/series.h"
#include "live/symbolize.h"

#define DEFAULT_WINDOW 40	/* samples of history per series (--window) */
#define FD_SAMPLES 3		/* example targets kept per fd site */

struct site {
	struct lt_site_key key;
	struct lt_site_val val;		/* as the kernel counts it */
	enum lt_site_kind kind;
	/* fd sites: descriptors /proc showed closed without a close leaktop saw. */
	uint64_t repaired;
	uint32_t fd_types[FD_TYPE__COUNT];	/* kinds of the outstanding descriptors */
	char fd_samples[FD_SAMPLES][96];
	uint32_t n_fd_samples;
	struct sym_frame *frames;	/* innermost first; allocator frames never captured */
	uint32_t n_frames;
	bool resolved;
	bool seen;			/* present in the latest sample */
	/* Outstanding bytes (heap) or descriptors (fd) over the analysis window. */
	struct series hist;
	/* Written by analysis. */
	double growth_per_s;
	double trend_z;
	bool flagged;
};

/* Process flags (the contract's "flags"). */
enum process_flag {
	PROC_HEAP_GROWTH = 1 << 0,
	PROC_FD_GROWTH = 1 << 1,
	PROC_RSS_GROWTH = 1 << 2,
	PROC_RSS_UNEXPLAINED = 1 << 3,
};

extern const char *const process_flag_names[4];

struct process {
	uint32_t pid;
	uint64_t gen;			/* image id: changes on exec, unique across pids */
	char comm[32];
	char *cmdline;
	uint64_t start_ticks;		/* /proc/PID/stat starttime; 0 if unknown */
	struct proc_counters counters;
	struct site *sites;		/* sorted by stack_hash */
	size_t n_sites, cap_sites;
	/* Sums over sites. */
	int64_t heap_outstanding_bytes, heap_outstanding_count;
	uint64_t heap_allocs, heap_frees;
	int64_t fd_outstanding;
	uint64_t fd_opens, fd_closes, fd_repaired;
	uint32_t fd_untracked;
	bool fd_census_valid;
	/* Histories over the analysis window, and what analysis made of them. */
	struct series hist_heap, hist_fds, hist_rss, hist_vm, hist_fd_count, hist_threads;
	unsigned int flags;		/* enum process_flag */
	double heap_growth_per_s;
	bool target;			/* named by -p or started by --: shown without sites */
	bool exited;			/* exited or exec'd: in this report, gone from the next */
	bool exit_reported;		/* exited and already in a report: reaped next update */
	bool image_registered;		/* maps handed to the symbolizer */
	bool refreshed;			/* maps re-read this interval */
	bool maps_final;		/* /proc shows another program now: never read its maps */
	uint64_t first_seen_ns;
	uint64_t maps_read_ns;		/* last time its maps went to the symbolizer */
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
	double collect_ms;		/* last interval: maps + /proc + symbols */
	unsigned int resources;
};

void model__init(struct model *m, double interval_s, unsigned int resources, uint32_t window);
void model__free(struct model *m);

/* Find or add the process image (pid, gen). */
struct process *model__process(struct model *m, uint32_t pid, uint64_t gen);
struct process *model__find(struct model *m, uint32_t pid, uint64_t gen);
/* Any live image of pid. */
struct process *model__find_pid(struct model *m, uint32_t pid);
/* Mark (pid, gen) exited: it stays for one more report. */
void model__mark_exited(struct model *m, uint32_t pid, uint64_t gen);
/* Note that a report showed the current state (exited images were in it). */
void model__reported(struct model *m);
/* Remove exited images a report already showed; list them in dead (malloc'd). */
size_t model__reap(struct model *m, struct dead_image **dead);

/*
 * Fold a sample into the model: update sites (new ones get their stack from the collector
 * and resolved through the symbolizer), sum per process, read /proc counters of live ones.
 */
int model__update(struct model *m, const struct sample *s, struct collector *c,
		  struct symbolizer *sym);

uint64_t model__events(const struct model *m);
uint64_t model__dropped(const struct model *m);
double model__elapsed_s(const struct model *m);

/* Names of the drop causes and counters, for reports ("alloc_map_full", ...). */
extern const char *const drop_names[LT_DROP__COUNT];
/* The keys of the counters in a snapshot's stats ("events", "self_hits", ...). */
extern const char *const counter_names[LT_CNT__COUNT];



/* Outstanding count and frees of a site, with the repairs applied. */
int64_t site__outstanding(const struct site *s);
uint64_t site__frees(const struct site *s);

/* Shown in reports: has heap activity, or is a live target of -p / --. */
bool model__visible(const struct process *p);
/* Read comm, cmdline and start time of a live process (kept once known). */
void model__refresh_identity(struct process *p);

/* Display order, shared by every view: the clearest leaks first, then most outstanding
 * bytes.  Caller frees. */
struct process **model__procs_by_outstanding(const struct model *m, size_t *n);
struct site **model__sites_by_outstanding(const struct process *p);

#endif
