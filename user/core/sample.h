/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * sample.h - everything one interval observed, in core's plain types: the kernel's site and
 * descriptor records, each live image's readings from /proc (identity, counters, the fd
 * census), frames of stacks, lifecycle events, scans, drops, counters and how long the
 * producers took.
 *
 * Producers fill it (live/collector.c: the BPF maps; live/tracker.c: events, /proc, images
 * and symbols; live/fdcensus.c: /proc/PID/fd; live/scanner.c: reachability scans) and
 * model__apply() folds it into the model without touching the system.  A producer may
 * leave work for a later interval (frames of a stack, say): the sample says what is
 * pending, and whatever arrives later is applied then.
 */
#ifndef LEAKTOP_SAMPLE_H
#define LEAKTOP_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Only for the sizes of the drop and counter arrays, indexed by the kernel's enums. */
#include "bpf/leaktop.h"
#include "core/frame.h"
#include "core/heapmode.h"
#include "core/lastref.h"
#include "core/scan.h"
#include "core/symhint.h"
#include "core/types.h"

/* One record of the kernel's `sites` map. */
struct sample_site {
	uint32_t pid;
	uint32_t kind;				/* enum lt_site_kind */
	uint64_t gen;
	uint64_t stack_hash;
	int64_t outstanding_bytes;
	int64_t outstanding_count;
	uint64_t allocs;
	uint64_t frees;
	uint64_t alloc_bytes;
	uint64_t live_since_ns;
	uint64_t last_alloc_ns;
};

/* One tracked open descriptor of the kernel's `fds` map. */
struct sample_fd {
	uint32_t pid;
	int32_t fd;
	uint64_t gen;
	uint64_t stack_hash;
	uint64_t ts_ns;
};

/* Who a process is; unknown parts are "", NULL and 0. */
struct sample_identity {
	char comm[32];
	char *cmdline;				/* malloc'd */
	uint64_t start_ticks;
	char *alloc_module;			/* malloc'd: the file its malloc binds to; NULL
						 * while unknown */
	char alloc_kind[16];			/* "glibc", "jemalloc", ...: with alloc_module */
	char *cgroup;				/* malloc'd: its cgroup path; NULL: not read */
	char container[16];			/* the container id its cgroup names, or "" */
};

enum sample_event_type {
	SAMPLE_EV_FIRST,			/* first seen: a -p/-- target, or first allocation */
	SAMPLE_EV_FORK,
	SAMPLE_EV_EXEC,				/* old_gen ends, gen begins */
	SAMPLE_EV_EXIT,				/* old_gen ends */
	SAMPLE_EV_OOM,				/* the OOM killer chose image gen */
};

/* A lifecycle event, in the order it happened (who the image is comes with its readings). */
struct sample_event {
	enum sample_event_type type;
	uint32_t pid;
	uint64_t gen;				/* FIRST, FORK, EXEC: the new image */
	uint64_t old_gen;			/* EXEC, EXIT: the image that ended */
	bool target;				/* the new image is traced by name (-p, --) */
};

/* One tracked descriptor that /proc shows open. */
struct fd_seen {
	uint64_t stack_hash;
	int fd;
	int type;				/* enum fd_type */
	char target[96];			/* link target, socket family/type */
};

/* A process's tracked descriptors reconciled with /proc/PID/fd. */
struct fd_census {
	struct fd_seen *open;			/* tracked and open */
	size_t n_open, cap_open;
	uint64_t *repaired;			/* stack hash of each record /proc showed closed */
	size_t n_repaired, cap_repaired;
	uint32_t untracked;			/* open, but leaktop did not see them created */
	bool valid;				/* /proc/PID/fd could be read */
};

void fd_census__free(struct fd_census *fc);

/*
 * Is `now` (what the map holds at seen's (pid, fd) now) the record `seen` was read from?
 * A descriptor closed and created again since then has another creation time (and often
 * another site or image): its record is not the one the census found closed.
 */
bool sample_fd__same_record(const struct sample_fd *seen, const struct sample_fd *now);

/* What /proc says of a live image, given its known start time (0: unknown). */
enum proc_fate {
	PROC_ALIVE,			/* the same process, or /proc could not tell */
	PROC_GONE,			/* no process has its pid */
	PROC_REUSED,			/* its pid is a process started at another time */
};

/*
 * The fate of an image whose start time (/proc/PID/stat field 22) is known_ticks, from a
 * new read of it: read_err (0 or -errno) and, when 0, now_ticks.
 */
enum proc_fate proc_fate_of(uint64_t known_ticks, int read_err, uint64_t now_ticks);

/*
 * One image's readings from /proc: who it is (as last read while it lived), and for a live
 * image its counters and fd census this interval.
 */
struct sample_proc {
	uint32_t pid;
	uint64_t gen;
	bool alive;				/* not known to have exited: counters are now's */
	bool target;				/* traced by name: the scanner's business */
	struct sample_identity id;
	bool read;				/* /proc read this interval; false: deferred by the
					 * budget, the model keeps the last reading */
	struct proc_counters counters;		/* .valid false: gone or unreadable */
	bool census_done;			/* census holds a reconciliation */
	struct fd_census census;
};

/* The frames of a stack of image (pid, gen): they apply to its sites with that stack. */
struct sample_frames {
	uint32_t pid;
	uint64_t gen;
	uint64_t stack_hash;
	struct sym_frame *frames;		/* innermost first; NULL when unknown */
	uint32_t n_frames;
};

/* A reachability scan of image (pid, gen): a result, or a one-line error. */
struct sample_scan {
	uint32_t pid;
	uint64_t gen;
	bool ok;
	struct scan_result result;
	char error[512];
};

/*
 * Whole-system heap tracing under the overhead budget, as the run loop decided it (budgeted
 * false: -p and --, where every traced process is exact).
 */
struct sample_heap {
	bool budgeted;
	enum heap_mode mode;
	uint64_t mode_since_ns;
	double cost_pct;			/* heap tracing's cost now, % of all CPUs; NaN: unknown */
	double exact_cost_pct;			/* what exact tracing costs (estimated in suspects) */
	double budget_pct;
	double trap_ns;				/* calibrated cost of a probe hit; NaN: unknown */
	uint32_t switches;
	const struct heapmode_traced *traced;	/* suspects mode: who is traced (borrowed) */
	size_t n_traced;
	const struct heapmode_released *released;	/* suspects mode: who was (borrowed) */
	size_t n_released;
	double traced_cost_pct;			/* suspects: what the traced cost; NaN */
	double bucket_fill;			/* exact mode's budget left, 0 to 1 */
};

/*
 * An image's allocator probe entries so far, and the records of it the maps lost (over its
 * share, or a full map), by kind (enum lt_share): the kernel's procs map.
 */
struct sample_calls {
	uint32_t pid;
	uint64_t gen;
	uint64_t heap_calls;
	uint64_t share_drops[LT_SHARE__COUNT];
	bool via_agent;				/* its heap traced by the in-process agent */
};

/* How long each producer took this interval. */
struct sample_timing {
	double read_ms;				/* the BPF maps */
	double track_ms;			/* events, /proc readings, images and symbols */
	double census_ms;			/* /proc/PID/fd */
	double scan_ms;				/* reachability scans */
};

struct sample {
	uint64_t ts_ns;				/* CLOCK_MONOTONIC, as bpf_ktime_get_ns() */
	struct sample_site *sites;		/* sorted by (pid, kind, gen, stack_hash) */
	size_t n_sites;
	struct sample_fd *fds;			/* sorted by (pid, fd) */
	size_t n_fds;
	uint64_t drops[LT_DROP__COUNT];
	uint64_t counters[LT_CNT__COUNT];
	size_t probes_attached;
	size_t libcs_refused;		/* libcs not probed: not the file their process maps */
	uint64_t files_refused_fs;	/* traced processes' files left unread: on FUSE or a
					 * network file system (live/mounts.c) */
	uint64_t alloc_unreadable;	/* files whose allocator could not be looked for */
	uint32_t alloc_scan_pending;	/* whole system: mappings the last scan left for later */
	const char *heap_attach;	/* "system", "tree", "pid"; NULL: no allocator probe */
	const char *syscall_attach;	/* the fd and mmap programs' tracepoints: "syscall" (per
					 * syscall), "raw" (sys_enter/sys_exit); NULL: none */
	const char *syscall_why;	/* "raw": why the per-syscall ones could not be had */
	struct unwind_stats unwind;

	struct sample_event *events;		/* in order */
	size_t n_events, cap_events;
	struct sample_proc *procs;		/* live images, sorted by (pid, gen) */
	size_t n_procs, cap_procs;
	struct sample_frames *frames;
	size_t n_frames, cap_frames;
	uint32_t stacks_pending;		/* stacks whose frames a later sample brings */
	uint32_t procs_deferred;		/* live images whose /proc a later sample reads */
	/* Images /proc showed ended though no event said so (a lost event): an EXIT event is
	 * in `events` for each. */
	uint32_t reconciled_exited;		/* the process is gone */
	uint32_t reconciled_reused;		/* its pid belongs to a newer process */
	/* leaktop itself, as the run loop measured it (0: not measured). */
	uint64_t self_rss_bytes;
	double self_cpu_s;
	uint64_t oom_snapshots_failed;		/* so far, as the run loop counted them */
	uint64_t oom_snapshots_skipped;		/* the OOM rate limit's, so far */
	uint64_t oom_snapshots_removed;		/* removed for the OOM directory's caps */
	struct stop_record stop;		/* --stop-at, once it fired */
	struct sample_scan *scans;
	size_t n_scans, cap_scans;
	struct sample_calls *calls;		/* images with probe entries */
	size_t n_calls;
	/* Modules frames were resolved in that have no symbols, with what the package manager
	 * said of them: each once, when the answer is in. */
	struct sym_missing *missing;
	size_t n_missing, cap_missing;
	/* Verdicts a lastref gave since the last sample (live/lastref_session.c), each with
	 * its image; owned. */
	struct lastref_result *lastref;
	size_t n_lastref, cap_lastref;

	struct sample_timing timing;
};

/* New zeroed entries (the arrays grow as needed), or NULL when out of memory. */
struct sample_event *sample__add_event(struct sample *s);
struct sample_proc *sample__add_proc(struct sample *s);
struct sample_frames *sample__add_frames(struct sample *s);
struct sample_scan *sample__add_scan(struct sample *s);
struct sym_missing *sample__add_missing(struct sample *s);
struct lastref_result *sample__add_lastref(struct sample *s);

/* qsort order of sites: (pid, kind, gen, stack_hash), as sample.sites is kept. */
int sample_site__cmp(const void *a, const void *b);

/* The proc readings of (pid, gen), or NULL (procs must be sorted). */
struct sample_proc *sample__find_proc(const struct sample *s, uint32_t pid, uint64_t gen);

/* Forget this interval's observations; the map records stay until the next read. */
void sample__reset(struct sample *s);
void sample__free(struct sample *s);

void sample_identity__clear(struct sample_identity *id);

#endif
