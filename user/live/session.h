/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * session.h - the live side as one object: it owns the loader (BPF, probes, ring buffer),
 * the collector (maps), the symbolizer, the tracker (lifecycle events, /proc), the scanner,
 * the heap budget's control, the unwind store, allocator discovery and the attach policy.
 * The run loop opens it, polls it between intervals, has it collect one interval into a
 * sample, lets it keep the kernel maps (upkeep), and closes it.  Kernel events have one
 * consumer, the tracker, and reach the rest through the sample and the model.
 *
 * A new producer (an in-process agent, interpreter frames, kernel memory) plugs in here:
 * opened in session__open, its part of the sample filled in session__collect.
 */
#ifndef LEAKTOP_SESSION_H
#define LEAKTOP_SESSION_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/sample.h"
#include "core/types.h"
#include "live/attach.h"
#include "live/lastref_session.h"
#include "live/stop_at.h"
#include "util/budget.h"

struct session;
struct check_proc;
struct model;
struct loader;
struct collector;
struct symbolizer;
struct agent_channels;

typedef void (*session_say_fn)(void *ctx, const char *line);

struct session_config {
	struct attach_config attach;	/* the mode and its targets */
	unsigned int resources;		/* RES_* */
	unsigned int stack_depth;
	bool unwind_cfi;		/* --unwind cfi */
	int probe_floor;		/* 0: real probes; 1: empty at entries; 2: empty where real go */
	bool verbose;
	unsigned int map_share_pct;	/* % of a shared map one process may hold */
	double interval_s;
	/* Whole-system heap tracing under a budget (--budget, --max-suspects, --exact). */
	double budget_pct;
	unsigned int max_suspects;
	bool exact;
	unsigned int scan_max_stop_ms;	/* --scan-max-stop */
	struct stop_at_config stop_at;	/* --stop-at */
	/*
	 * --agent: the heap traced inside the processes (libleaktop-agent.so) instead of by
	 * uprobes (attach.heap false, no hold at exec).  agent: the channel set, made before CMD
	 * starts (its end and its name in CMD's environment), owned by the session from
	 * session__open on, whatever that returns; agent_lib: the library injected into -p's
	 * processes.
	 */
	struct agent_channels *agent;
	const char *agent_lib;
	bool say_oom_problem;		/* say why OOM victims cannot be seen (--oom-dir, -v) */
	const volatile sig_atomic_t *stop;	/* a stop signal came: optional work ends */
	session_say_fn say;		/* heap tracing's lines (switches, suspects) */
	void *say_ctx;
};

/* Privileges the live side needs: 0, or -EPERM with nothing printed. */
int session__check_privileges(void);
/* Does process pid exist (-p checks before anything loads)? */
bool session__process_exists(int pid);

/*
 * Load the BPF side, attach for the mode (-- CMD: release_child lets it exec once its
 * probes are in).  0, or -errno with one line said on stderr.
 */
int session__open(struct session **out, const struct session_config *cfg);

/* What came in while polling, for the loop to act on. */
struct session_news {
	size_t oom_victims;		/* OOM victims queued for the next sample */
	struct dead_image oom[8];	/* the first of them */
	bool stop_fired;		/* --stop-at stopped its process */
};

/*
 * One poll slice between intervals: lifecycle events (at most slice_ms), young images'
 * maps, unwind tables, package questions, the budget's window.  0, or -errno from the ring
 * buffer (-EINTR: a signal).
 */
int session__poll(struct session *s, int slice_ms, struct session_news *news);
/* Events already queued, read within timeout_ms (before a collect). */
void session__drain(struct session *s, int timeout_ms);

/* What the run's outputs counted so far, part of the interval's stats. */
struct session_outputs {
	uint64_t oom_snapshots_failed, oom_snapshots_skipped, oom_snapshots_removed;
};

/*
 * One interval into sm: the maps, events, /proc, frames, the fd census, the scans (when
 * scan_due), lastref's new verdicts, the live side's own counters.  Within budget b.
 * 0 or -errno (said).
 */
int session__collect(struct session *s, struct sample *sm, bool scan_due,
		     const struct work_budget *b, const struct session_outputs *outs);
/*
 * After analysis: the budget decides how the heap is traced from now on and carries it out
 * (not on the last report); *h gets how it stands, for model__apply_heap.
 */
void session__heap(struct session *s, const struct model *m, bool last, struct sample_heap *h);
/* Images the model reaped lose their kernel records; stale stacks go now and then. */
void session__upkeep(struct session *s, struct model *m, const struct sample *last_sample);
/* After a report that is not the last: new allocators are followed (per mode). */
void session__follow(struct session *s, const struct model *m);

/* The run ends: --stop-at disarmed (no process may stop from now on). */
void session__disarm_stop_at(struct session *s);
/* After the last report: the allocator probes off; *stop: where --stop-at stopped (final). */
void session__finish_stop_at(struct session *s, struct stop_record *stop);
/* No process stays held at exec from here on. */
void session__release_held(struct session *s);
/* The same from a signal handler (async-signal-safe). */
void session__release_held_now(void);

/* The TUI's keys: scan pid now, trace or untrace its heap; one line each in msg. */
void session__scan_now(struct session *s, uint32_t pid, uint64_t gen, char *msg, size_t len);
/* pid 0: none selected.  false: the mode traces every traced process's heap (no budget). */
bool session__heap_toggle(struct session *s, const struct model *m, uint32_t pid, char *msg,
			  size_t len);
/*
 * A lastref on this session (the TUI's L, `leaktop lastref`), one at a time: a new one
 * replaces the last.  0, -ENOMEM, or its start's error.
 */
int session__lastref_start(struct session *s, const struct model *m,
			   const struct lastref_spec *spec);
/*
 * Its turn (m the latest model): 1 it ended (every verdict, or the process is gone), -errno
 * it failed (it said why), 0 it goes on or none runs.  An ended one's watchpoints are
 * removed; its verdicts stay until the next start or the close.
 */
int session__lastref_step(struct session *s, const struct model *m);
/* The run ends: the blocks left get their verdict (unresolved), the watchpoints go. */
void session__lastref_stop(struct session *s, const struct model *m);
/* Its verdicts so far (0: none runs); *watchpoints as lastref__watchpoints. */
size_t session__lastref_results(struct session *s, const struct lastref_result **v,
				int *watchpoints);

/* export_opts.build_id for this session's symbolizer. */
char *session__build_id(void *session, const char *module);

/* `leaktop check`: the processes held at their _exit now (at most max), into pids. */
size_t session__exit_stopped(struct session *s, uint32_t *pids, size_t max);
/* ... one let go. */
void session__exit_release(struct session *s, uint32_t pid);
/*
 * ... one looked at (live/exitcheck.c) while held: descriptors and anonymous mappings listed
 * when asked, its scan's stop at most max_stop_ms.  0 or -ENOMEM.
 */
int session__exit_check(struct session *s, int pid, bool fds, bool mmaps,
			unsigned int max_stop_ms, struct check_proc *out);

/*
 * Tear it all down: the probes and the BPF objects, the held and stopped processes, then the
 * memory.  With at_exit (the process ends right after), the symbol tables are left to the
 * exit, which takes the whole address space at once: freed one by one they took 30-300 ms
 * of the second leaktop has to end after Ctrl-C.  detach_ns, free_ns (may be NULL): when the
 * probes and the rest went.
 */
void session__close(struct session *s, bool at_exit, uint64_t *detach_ns, uint64_t *free_ns);

#endif
