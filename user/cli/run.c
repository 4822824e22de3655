// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * run.c - the live run: checks, probe attachment for the chosen mode, and the interval loop
 * (poll lifecycle events, collect, update the model, analyse, render), then teardown.
 *
 * Modes:
 *   whole system  probes on every distinct libc, no pid filter; BPF traces every process but
 *                 leaktop itself; libcs are rescanned now and then for new containers.
 *   -p PID        pid-filtered probes on each process's own libc: other processes never trap.
 *   -- CMD        CMD is held before exec; probes on CMD and every process it forks go in
 *                 first (inherited perf events on tracefs uprobe events: other processes
 *                 never trap), so its first allocation, and each child's, is seen.
 * Under -p and --, a traced process that execs is held (SIGSTOP from BPF) until the probes
 * its new program needs are in, then continued (on_exec_stop): never left held (the loader
 * releases them at exit, on a crash signal, on the second Ctrl-C; its guard on SIGKILL).
 * Signals only set a flag; teardown always runs, and the probes are file descriptors that
 * the kernel removes if leaktop dies anyway (under --, their tracefs definitions stay
 * behind, inert, until the next leaktop that traces a command removes them).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>

#include "core/analysis.h"
#include "live/collector.h"
#include "view/export.h"
#include "cli/launcher.h"
#include "cli/metrics_server.h"
#include "view/metrics.h"
#include "cli/oom.h"
#include "cli/stop_at.h"
#include "cli/lastref_cmd.h"
#include "live/allocs.h"
#include "live/libcs.h"
#include "live/mounts.h"
#include "live/loader.h"
#include "core/model.h"
#include "live/procfs.h"
#include "view/report.h"
#include "cli/run.h"
#include "live/fdcensus.h"
#include "live/heapctl.h"
#include "live/ptrace_stop.h"
#include "live/scanner.h"
#include "live/tracker.h"
#include "live/unwind_store.h"
#include "view/snapshot.h"
#include "live/symbolize.h"
#include "tui/tui.h"
#include "util/atomic_file.h"
#include "util/budget.h"
#include "util/clock.h"
#include "util/msg.h"

#define LIBC_RESCAN_NS		(10ULL * 1000000000ULL)
#define ALLOC_SWEEP_NS		(5ULL * 1000000000ULL)
#define STACK_GC_NS		(30ULL * 1000000000ULL)
#define POLL_SLICE_MS		50
/* Unwind tables built per poll slice at most (one object at least). */
#define UNWIND_DRAIN_NS		(20ULL * 1000000ULL)
/* Capacity of the unwind rows map: the whole system's objects, or a few programs'. */
#define UNWIND_ROWS_SYSTEM	(1u << 21)
#define UNWIND_ROWS_TARGETS	(1u << 20)
/* Optional work per interval (symbol lookups, /proc of every process); the rest waits. */
#define COLLECT_BUDGET_NS	(150ULL * 1000000ULL)
/* The last report's (CMD exited, -d reached): nothing comes after it to catch up. */
#define FINAL_BUDGET_NS		(1000ULL * 1000000ULL)
/*
 * ... unless a stop signal asked for it: then it names what it can until this long after the
 * signal (a burst just before Ctrl-C is still named), leaving the rest of the second leaktop
 * promises to exit in for writing the report and detaching.
 */
#define FINAL_AFTER_SIGNAL_NS	(350ULL * 1000000ULL)

static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t tui_active;
/* When the first stop signal came (monotonic_ns: clock_gettime is async-signal-safe). */
static volatile uint64_t stop_signal_ns;
/* When the loop saw it (0: the run ended for another reason), for -v. */
static uint64_t stop_seen_ns;

/*
 * The first signal sets a flag every stretch of work looks at (event delivery, the collect
 * budget, the poll slices), so the loop ends within about a slice and writes the final
 * report.  A second one ends leaktop at once: only async-signal-safe calls from here; the
 * probes are file descriptors the kernel removes, a snapshot being written is discarded
 * (the previous one stays).
 */
static void on_signal(int sig)
{
	static const char restore[] = "\033[?1049l\033[?25h\r\n";

	if (!stop_signal) {
		stop_signal_ns = monotonic_ns();
		stop_signal = sig;
		return;
	}
	atomic_file__discard_in_progress();
	loader__exec_release_all_now();
	if (tui_active && write(STDOUT_FILENO, restore, sizeof(restore) - 1) < 0)
		sig = SIGINT;
	_exit(128 + sig);
}

struct run {
	const struct options *o;
	struct loader *ld;
	struct collector *col;
	struct symbolizer *sym;
	struct tracker *tr;
	struct scanner *sc;
	struct heapctl *hc;		/* whole-system mode: the overhead budget */
	struct unwind_store *uw;	/* --unwind cfi: the unwind tables */
	struct allocs *al;		/* which allocators processes use */
	struct oom_writer *oom;		/* OOM victims' snapshots */
	uint64_t oom_forced_ns;		/* the last collect an OOM victim started early */
	struct stop_record stop;	/* --stop-at, once it fired */
	struct model model;
	struct sample sample;
	struct launcher child;
	bool have_child;
	bool files_failed;		/* the last interval could not write a file */
	struct { int pid, tid; } followed[OPT_MAX_PIDS];	/* -p: probes attached with tid */
	size_t n_followed;
	struct tui *tui;		/* NULL in batch mode */
	struct metrics_server *ms;	/* --listen */
	uint64_t last_libc_scan_ns, last_sweep_ns, last_gc_ns;
	uint64_t last_reach_scan_ns;
	struct dead_image *pending;	/* dead images whose live-block records await a sweep */
	size_t n_pending;
	int64_t pending_blocks;
	const struct run_hooks *hooks;	/* a mode built on the run (leaktop lastref), or NULL */
	struct lastref *lr;		/* the TUI's L: a lastref on this run, or NULL */
	int hook_status;		/* its step ended the run: 1 failed, 0 done */
	uint64_t exec_stops;		/* processes held at exec, and for how long in all */
	uint64_t exec_held_ns, exec_held_max_ns;
};

static struct run_live live_of(struct run *r)
{
	return (struct run_live){ r->ld, r->col, r->sym, &r->model,
				  r->have_child ? &r->child : NULL };
}

/* A lastref line (a verdict, progress) on the TUI's message line. */
static void lastref_to_tui(void *ctx, const char *line)
{
	struct run *r = ctx;

	if (r->tui)
		tui__message(r->tui, &r->model, line);
}

/* The TUI's L: a lastref on the selected heap site; msg says what happened. */
static void start_lastref(struct run *r, char *msg, size_t len)
{
	struct run_live lv = live_of(r);
	const struct process *p;
	uint32_t pid, kind;
	uint64_t hash;

	if (r->hooks) {
		snprintf(msg, len, "this run is a lastref already");
		return;
	}
	if (!tui__selected_site(r->tui, &pid, &kind, &hash) || kind != LT_KIND_HEAP) {
		snprintf(msg, len, "L follows a heap site: Enter on a process, then select a site");
		return;
	}
	p = model__find_pid(&r->model, pid);
	if (!p) {
		snprintf(msg, len, "process %u is not traced any more", pid);
		return;
	}
	if (p->heap_mode == PROC_HEAP_WATCH || p->heap_mode == PROC_HEAP_RELEASED) {
		snprintf(msg, len, "process %u's heap is not traced: t traces it first", pid);
		return;
	}
	lastref__free(r->lr, &lv);
	r->lr = lastref__new(pid, hash, 0, lastref_to_tui, lastref_to_tui, r);
	if (!r->lr) {
		snprintf(msg, len, "out of memory");
		return;
	}
	lastref__set_max_stop(r->lr, r->o->scan_max_stop_ms);
	if (lastref__start(r->lr, &lv)) {
		lastref__free(r->lr, &lv);
		r->lr = NULL;
		snprintf(msg, len, "lastref could not start");
		return;
	}
	snprintf(msg, len, "lastref: following new blocks of site %016" PRIx64 " of process %u; "
		 "verdicts show here", hash, pid);
}

/* The TUI's lastref, a turn: freed once it has every verdict or failed (it said why). */
static void lastref_step(struct run *r)
{
	struct run_live lv = live_of(r);

	if (r->lr && lastref__step(r->lr, &lv)) {
		lastref__free(r->lr, &lv);
		r->lr = NULL;
	}
}

/* The mode's turn: true when it ends the run. */
static bool hook_step(struct run *r)
{
	struct run_live lv = live_of(r);
	int ret;

	if (!r->hooks || !r->hooks->step)
		return false;
	ret = r->hooks->step(r->hooks->ctx, &lv);
	if (ret < 0)
		r->hook_status = 1;
	return ret != 0;
}

int run__check_privileges(void)
{
	char buf[4096], *p;
	unsigned long long eff;

	if (procfs__read_file("/proc/self/status", buf, sizeof(buf)) < 0)
		return -EPERM;
	p = strstr(buf, "\nCapEff:");
	if (!p || sscanf(p + 8, "%llx", &eff) != 1)
		return -EPERM;
	/* CAP_SYS_ADMIN covers it all; otherwise CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE (for
	 * /proc/PID/maps and map_files of other users). */
	if (eff & (1ULL << CAP_SYS_ADMIN))
		return 0;
	if ((eff & (1ULL << CAP_BPF)) && (eff & (1ULL << CAP_PERFMON)) &&
	    (eff & (1ULL << CAP_SYS_PTRACE)))
		return 0;
	return -EPERM;
}

/* A crash: no process stays held at exec (async-signal-safe), then the default action. */
static void on_crash(int sig)
{
	loader__exec_release_all_now();
	raise(sig);
}

/* Allocator objects per process, at most (the bound one and any called directly). */
#define PROC_ALLOCS_MAX		8

static void on_exec_stop(struct run *r, const struct lt_event *ev);

static void on_event(void *ctx, const struct lt_event *ev)
{
	struct run *r = ctx;

	tracker__on_event(r->tr, ev);
	oom_writer__note(r->oom, ev, &r->model);
	stop_at__note(&r->stop, ev);
	if (ev->type == LT_EV_EXEC && (ev->ppid & LT_EXEC_STOPPED))
		on_exec_stop(r, ev);
}

/*
 * Attach to each object of refs[] not probed yet: for filter_pid (-1: every process), or
 * with tree for filter_pid and every process it forks from then on.
 */
static int attach_refs(struct run *r, const struct libc_ref *refs, size_t n, int filter_pid,
		       bool tree, bool quiet)
{
	char msg[512];
	int err;

	for (size_t i = 0; i < n; i++) {
		if (tree)
			err = loader__attach_libc_tree(r->ld, &refs[i], filter_pid, msg, sizeof(msg));
		else
			err = loader__attach_libc(r->ld, &refs[i], filter_pid, msg, sizeof(msg));
		if (err && !quiet) {
			err_line("%s", msg);
			return err;
		}
	}
	return 0;
}

/* Attach to the allocators process pid uses (allocs__of_pid), as attach_refs does. */
static int attach_allocs_of(struct run *r, int pid, int filter_pid, bool tree, bool quiet)
{
	struct alloc_obj objs[PROC_ALLOCS_MAX];
	struct libc_ref refs[PROC_ALLOCS_MAX];
	size_t n;
	int err;

	if (!(r->o->resources & RES_HEAP))
		return procfs__exists(pid) ? 0 : -ESRCH;
	err = allocs__of_pid(r->al, pid, objs, PROC_ALLOCS_MAX, &n);
	if (err)
		return err;
	if (!n)
		return -ENOEXEC;
	for (size_t i = 0; i < n; i++) {
		refs[i] = objs[i].ref;
		if (r->o->verbose && !quiet)
			err_line("process %d: allocator %s (%s)%s", pid, objs[i].ref.path,
				 objs[i].kind, objs[i].bound ? ", malloc binds here" : "");
	}
	return attach_refs(r, refs, n, filter_pid, tree, quiet);
}

/* New files examined per rescan of the system's allocators (a rescan stays short). */
#define SYSTEM_SCAN_BUDGET	64

static int attach_system(struct run *r, bool quiet)
{
	struct alloc_obj *objs;
	char msg[512];
	size_t n;
	int err, attached = 0;

	if (!(r->o->resources & RES_HEAP))
		return 0;
	/* At start every object is examined; later scans take a few new ones at a time. */
	err = allocs__scan_system(r->al, quiet ? SYSTEM_SCAN_BUDGET : SIZE_MAX, &objs, &n);
	if (err) {
		if (!quiet)
			err_line("cannot list processes in /proc: %s", strerror(-err));
		return err;
	}
	for (size_t i = 0; i < n; i++) {
		/* A rescan under way when Ctrl-C comes ends here: the rest waits for no one. */
		if (quiet && stop_signal)
			break;
		if (loader__has_libc(r->ld, objs[i].ref.dev, objs[i].ref.ino, -1)) {
			attached++;
			continue;
		}
		if (r->o->verbose)
			err_line("allocator %s (%s) in process %d", objs[i].ref.path, objs[i].kind,
				 objs[i].ref.pid);
		err = loader__attach_libc(r->ld, &objs[i].ref, -1, msg, sizeof(msg));
		if (err) {
			if (r->o->verbose || !quiet)
				err_line("skipping %s: %s", objs[i].ref.path, msg);
			continue;
		}
		attached++;
		/*
		 * Every heap stack goes through its allocator: its table now, not at the first walk
		 * that asks, so the first stacks of every process are whole there already.
		 */
		if (r->uw)
			unwind_store__load_mapping(r->uw, objs[i].ref.pid, objs[i].ref.start, objs[i].ref.end,
						   objs[i].ref.deleted ? NULL : objs[i].ref.path,
						   objs[i].ref.dev, objs[i].ref.ino);
	}
	free(objs);
	if (!attached && !quiet) {
		err_line("found no allocator to probe in any process; is /proc mounted?");
		return -ENOENT;
	}
	return 0;
}

static int setup_pids(struct run *r)
{
	const struct options *o = r->o;
	char comm[64];
	int err;

	int seen[OPT_MAX_PIDS];
	size_t n_seen = 0;

	for (size_t i = 0; i < o->n_pids; i++) {
		int pid = o->pids[i], tgid;
		bool dup = false;
		uint64_t gen;

		/* A thread id stands for its process: the probes see every thread anyway. */
		if (!procfs__tgid(pid, &tgid))
			pid = tgid;
		for (size_t k = 0; k < n_seen; k++)
			dup |= seen[k] == pid;
		if (dup)
			continue;
		seen[n_seen++] = pid;

		err = attach_allocs_of(r, pid, pid, false, false);
		if (err == -ESRCH) {
			err_line("PID %d not found; check it with 'ps -p %d'", pid, pid);
			return err;
		}
		if (err == -ENOEXEC) {
			if (procfs__comm(pid, comm, sizeof(comm)))
				strcpy(comm, "?");
			err_line("PID %d (%s) maps no allocator leaktop can find (a static program "
				 "stripped of its symbol table?); only programs whose malloc has a "
				 "symbol can be traced", pid, comm);
			return err;
		}
		if (err) {
			if (err != -EPERM && err != -EACCES)
				return err;
			err_line("cannot read /proc/%d/maps: %s; run leaktop as root", pid,
				 strerror(-err));
			return err;
		}
		/* Its tables before its first traced allocation: stacks are whole from the start. */
		if (r->uw)
			unwind_store__load_pid(r->uw, pid);
		gen = loader__seed_proc(r->ld, pid);
		if (!gen) {
			err_line("cannot mark PID %d as traced: %s", pid, strerror(errno));
			return -EIO;
		}
		r->followed[r->n_followed].pid = r->followed[r->n_followed].tid = pid;
		r->n_followed++;
		err = tracker__add_target(r->tr, pid, gen);
		if (err == -ENOMEM)
			return err;
	}
	return 0;
}

/*
 * `leaktop check`: hold CMD's processes at _exit in these objects (our C library, a static
 * CMD).  An object without _exit (jemalloc) is skipped; our own C library must take it.
 */
static int attach_exit_stops(struct run *r, const struct libc_ref *refs, size_t n, bool own)
{
	char path[PATH_MAX + 64], msg[512];

	for (size_t i = 0; i < n; i++) {
		if (refs[i].pid > 0)
			snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
				 refs[i].pid, refs[i].start, refs[i].end);
		else
			snprintf(path, sizeof(path), "%s", refs[i].path);
		if (loader__attach_exit_stop(r->ld, path, msg, sizeof(msg)) && own) {
			err_line("%s; leaks at exit cannot be checked", msg);
			return -EIO;
		}
	}
	return 0;
}

static int setup_command(struct run *r)
{
	struct alloc_obj objs[PROC_ALLOCS_MAX];
	struct libc_ref refs[PROC_ALLOCS_MAX];
	char path[4096];
	bool have_path;
	size_t n = 0;
	uint64_t gen;
	int err;

	have_path = !launcher__which(r->o->cmd[0], path, sizeof(path));
	if (r->o->resources & RES_HEAP) {
		/*
		 * CMD (forked from us, held before exec) runs in our mount namespace and with
		 * our environment: the C library we map, and the allocators CMD's own file
		 * and its libraries say it will bind (a static CMD, one linked with jemalloc,
		 * an LD_PRELOAD), probed before it runs.  A later exec is held until what its
		 * program will bind is probed (on_exec_stop); what a process maps later than
		 * that is followed each interval (follow_new_libcs).
		 */
		err = libcs__of_pid(getpid(), refs, PROC_ALLOCS_MAX, &n);
		if (!err)
			err = attach_refs(r, refs, n, r->child.pid, true, false);
		if (!err && r->o->exit_stop)
			err = attach_exit_stops(r, refs, n, true);
		if (err)
			return err;
		if (have_path && !allocs__of_command(r->al, path, objs, PROC_ALLOCS_MAX, &n)) {
			for (size_t i = 0; i < n; i++) {
				refs[i] = objs[i].ref;
				if (r->o->verbose)
					err_line("%s: allocator %s (%s)%s", r->o->cmd[0],
						 objs[i].ref.path, objs[i].kind,
						 objs[i].bound ? ", malloc binds here" : "");
			}
			err = attach_refs(r, refs, n, r->child.pid, true, false);
			if (!err && r->o->exit_stop)
				err = attach_exit_stops(r, refs, n, false);
			if (err)
				return err;
		}
	}
	if (r->uw && have_path)
		unwind_store__load_command(r->uw, path);
	gen = loader__seed_proc(r->ld, r->child.pid);
	if (!gen) {
		err_line("cannot mark the command as traced: %s", strerror(errno));
		return -EIO;
	}
	err = launcher__release(&r->child);
	if (!err)
		err = tracker__add_target(r->tr, r->child.pid, gen) == -ENOMEM ? -ENOMEM : 0;
	if (err == -ENOMEM) {
		err_line("out of memory");
		return err;
	}
	if (err) {
		err_line("cannot run '%s': %s; check the command name and PATH", r->o->cmd[0],
			 strerror(-err));
		return err;
	}
	return 0;
}

/* Is the object probed for every process this run traces (not for one subtree only)? */
static bool probed_for_all(struct run *r, const struct libc_ref *ref)
{
	if (r->o->mode == MODE_COMMAND)
		return loader__has_libc(r->ld, ref->dev, ref->ino, r->child.pid);
	for (size_t i = 0; i < r->n_followed; i++)
		if (!loader__has_libc(r->ld, ref->dev, ref->ino, r->followed[i].pid))
			return false;
	return true;
}

/*
 * A traced process held at exec (bpf/proc.bpf.c), before the new program's first
 * instruction: the probes its allocator needs go in (for it, and under -- for what it
 * forks), then it goes on, whatever happened here.  When the program needed nothing new and
 * its environment names no LD_PRELOAD or LD_LIBRARY_PATH, BPF is told not to hold the next
 * process that execs it so.
 */
static void on_exec_stop(struct run *r, const struct lt_event *ev)
{
	struct alloc_obj objs[PROC_ALLOCS_MAX];
	struct libc_ref refs[PROC_ALLOCS_MAX];
	bool env_set = true, plain = true;
	int pid = (int)ev->tgid;
	uint64_t held_ns;
	size_t n = 0;

	if (!stop_signal && (r->o->resources & RES_HEAP) &&
	    !allocs__of_exec(r->al, pid, objs, PROC_ALLOCS_MAX, &n, &env_set)) {
		for (size_t i = 0; i < n; i++) {
			refs[i] = objs[i].ref;
			plain &= probed_for_all(r, &objs[i].ref);
			if (r->o->verbose)
				err_line("process %d exec'd: allocator %s (%s)%s", pid,
					 objs[i].ref.path, objs[i].kind,
					 objs[i].bound ? ", malloc binds here" : "");
		}
		attach_refs(r, refs, n, pid, r->o->mode == MODE_COMMAND, true);
		if (plain && !env_set)
			loader__exec_plain(r->ld, ev->exe_dev, ev->exe_ino);
	}
	loader__exec_release(r->ld, pid);
	held_ns = monotonic_ns() - ev->ts_ns;
	r->exec_stops++;
	r->exec_held_ns += held_ns;
	if (held_ns > r->exec_held_max_ns)
		r->exec_held_max_ns = held_ns;
}

/*
 * In -- mode, a traced program that execs may load a libc no probe covers yet: its probes
 * go on that process and what it forks from then on.
 */
static void follow_new_libcs(struct run *r)
{
	for (size_t i = 0; i < r->model.n_procs; i++) {
		struct process *p = &r->model.procs[i];

		if (p->target && !p->exited)
			attach_allocs_of(r, p->pid, p->pid, true, true);
	}
}

/*
 * -p through perf events (kernels before uprobe_multi): the kernel keeps such a uprobe
 * attached for a process while the thread it was attached with has its memory: when that
 * thread exits (main calls pthread_exit) and the process lives on, the probes stop firing.
 * Attach again with a live thread of it.  The events of the time in between (under one
 * interval) are missed.  uprobe_multi links follow the whole thread group: nothing to do,
 * and attaching again would count every call twice.
 */
static void follow_exited_threads(struct run *r)
{
	if (loader__probes_follow_thread_group(r->ld))
		return;
	for (size_t i = 0; i < r->n_followed; i++) {
		int pid = r->followed[i].pid, tid = procfs__live_thread(pid, r->followed[i].tid);

		if (tid <= 0 || tid == r->followed[i].tid)
			continue;
		if (r->o->verbose)
			err_line("thread %d of process %d exited: probes attached again with thread %d",
				 r->followed[i].tid, pid, tid);
		if (!attach_allocs_of(r, tid, tid, false, true))
			r->followed[i].tid = tid;
	}
}

/* One failed file write: a line on stderr (the TUI's message line), remembered. */
static void file_failed(struct run *r, const char *path, int err)
{
	char msg[4200];

	msg__write_failed(msg, sizeof(msg), path, err);
	if (r->tui)
		tui__message(r->tui, &r->model, msg);
	else
		err_line("%s", msg);
	r->files_failed = true;
}

/*
 * The files written each interval (--pprof, --folded, -j FILE), each replaced atomically.
 * A failure (a full disk, a removed directory, no descriptor left) is one line each
 * interval it happens and is retried at the next: monitoring goes on.  Whether the last
 * attempt failed is kept for the exit status.
 */
static void write_files(struct run *r)
{
	const struct options *o = r->o;
	struct export_opts eo = { .duration_s = model__elapsed_s(&r->model),
				  .build_id = symbolizer__build_id, .build_id_ctx = r->sym };
	struct timespec now;
	int err;

	r->files_failed = false;
	clock_gettime(CLOCK_REALTIME, &now);
	eo.time_s = now.tv_sec + now.tv_nsec / 1e9;
	if (o->pprof_path) {
		err = export__pprof_file(o->pprof_path, &r->model, &eo);
		if (err)
			file_failed(r, o->pprof_path, err);
	}
	if (o->folded_path) {
		err = export__folded_file(o->folded_path, &r->model);
		if (err)
			file_failed(r, o->folded_path, err);
	}
	if (o->json_path && strcmp(o->json_path, "-")) {
		err = snapshot__write_file(o->json_path, &r->model);
		if (err)
			file_failed(r, o->json_path, err);
	}
}

/* One format of the metrics as a malloc'd page; NULL if out of memory. */
static char *render_metrics(const struct run *r, enum metrics_format fmt, double time_s,
			    size_t *len)
{
	struct metrics_opts mo = { .format = fmt, .max_sites = r->o->metrics_sites,
				   .time_s = time_s };
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	if (metrics__write(f, &r->model, &mo) | fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* --listen: this interval's metrics, in both formats, served from now on. */
static void publish_metrics(struct run *r)
{
	struct timespec now;
	size_t prom_len = 0, om_len = 0;
	char *prom, *om;
	double t;

	clock_gettime(CLOCK_REALTIME, &now);
	t = now.tv_sec + now.tv_nsec / 1e9;
	prom = render_metrics(r, METRICS_PROMETHEUS, t, &prom_len);
	om = render_metrics(r, METRICS_OPENMETRICS, t, &om_len);
	if (!prom || !om) {
		/* The last page stays: it says when it was made. */
		free(prom);
		free(om);
		return;
	}
	metrics_server__publish(r->ms, prom, prom_len, om, om_len);
}

/* This interval's report: files, then stdout or the TUI.  0, or stdout's error (the end). */
static int emit(struct run *r)
{
	const struct options *o = r->o;
	struct report_opts ro = { .top_sites = o->top_sites, .max_frames = 0,
				  .symbols_once = true,
				  .top_procs = o->mode == MODE_SYSTEM ?
					       OPT_DEFAULT_TOP_PROCS_SYSTEM : 0 };
	int err;

	write_files(r);
	if (r->ms)
		publish_metrics(r);
	if (r->tui) {
		tui__update(r->tui, &r->model);
	} else if (o->json_path && !strcmp(o->json_path, "-")) {
		err = snapshot__write_line(stdout, &r->model);
		if (err && err != -EPIPE)
			err_line("cannot write the snapshot to stdout: %s", strerror(-err));
		return err;
	} else if (!o->quiet) {
		report__write(stdout, &r->model, &ro);
		if (fflush(stdout) || ferror(stdout))
			return errno == EPIPE ? -EPIPE : -EIO;
	}
	return 0;
}

/* Upkeep of the kernel maps: dead images' records, unreferenced stacks. */
static void upkeep(struct run *r)
{
	struct dead_image *dead;
	uint64_t now = monotonic_ns();
	size_t n;

	/* Images that exited at the previous update were in one report; forget them now. */
	for (size_t i = 0; i < r->model.n_procs; i++)
		if (r->model.procs[i].exit_reported && !r->model.procs[i].records_released)
			r->pending_blocks += r->model.procs[i].heap_outstanding_count;
	n = model__reap(&r->model, &dead);
	if (n) {
		struct dead_image *v = realloc(r->pending, (r->n_pending + n) * sizeof(*v));

		tracker__forget(r->tr, dead, n);
		collector__purge_sites(r->col, dead, n);
		collector__purge_fds(r->col, dead, n);
		collector__purge_mmaps(r->col, dead, n);
		if (v) {
			memcpy(v + r->n_pending, dead, n * sizeof(*v));
			r->pending = v;
			r->n_pending += n;
		}
		free(dead);
	}
	/* Live-block records need a sweep of the allocs map: only when there are some. */
	if (r->n_pending && (!r->pending_blocks || now - r->last_sweep_ns >= ALLOC_SWEEP_NS ||
			     r->pending_blocks > LT_MAX_ALLOCS / 8)) {
		if (r->pending_blocks)
			collector__purge_allocs(r->col, r->pending, r->n_pending);
		free(r->pending);
		r->pending = NULL;
		r->n_pending = 0;
		r->pending_blocks = 0;
		r->last_sweep_ns = now;
	}
	if (now - r->last_gc_ns >= STACK_GC_NS) {
		collector__gc_stacks(r->col, &r->sample);
		r->last_gc_ns = now;
	}
}

/* leaktop's own resident memory and CPU time, for stats. */
static void measure_self(struct sample *s)
{
	struct proc_counters pc;
	struct rusage ru;

	if (!procfs__counters(getpid(), &pc))
		s->self_rss_bytes = pc.rss_bytes;
	if (!getrusage(RUSAGE_SELF, &ru))
		s->self_cpu_s = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
				(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/*
 * One interval: the producers fill the sample (the maps; events, /proc, images and symbols;
 * the fd census; the scans when due), then the model folds it in and analysis runs.  The
 * final report gets a longer budget; a stop signal still ends optional work at once.
 */
static int collect(struct run *r, bool scan_due, bool final)
{
	struct sample *s = &r->sample;
	int err;

	uint64_t now_ns = monotonic_ns();
	struct work_budget budget = {
		.deadline_ns = now_ns + (final ? FINAL_BUDGET_NS : COLLECT_BUDGET_NS),
		.stop = &stop_signal,
		.last = final,
	};

	if (final && stop_signal) {
		uint64_t until_ns = stop_signal_ns + FINAL_AFTER_SIGNAL_NS;

		budget.stop = NULL;
		budget.deadline_ns = until_ns > now_ns ? until_ns : now_ns;
	}

	sample__reset(s);
	err = collector__read(r->col, s);
	if (err) {
		err_line("cannot read the BPF maps: %s", strerror(-err));
		return err;
	}
	s->probes_attached = loader__probe_count(r->ld);
	s->libcs_refused = loader__libcs_refused(r->ld);
	s->files_refused_fs = mounts__refused_count();
	{
		struct allocs_stats as;

		allocs__stats(r->al, &as);
		s->alloc_unreadable = as.objects_unreadable;
		s->alloc_scan_pending = as.scan_pending;
	}
	s->heap_attach = loader__heap_attach(r->ld);
	s->syscall_attach = loader__syscall_attach(r->ld, &s->syscall_why);
	if (r->uw)
		unwind_store__stats(r->uw, &s->unwind);
	measure_self(s);
	s->oom_snapshots_failed = oom_writer__failed(r->oom);
	s->oom_snapshots_skipped = oom_writer__skipped(r->oom);
	s->oom_snapshots_removed = oom_writer__removed(r->oom);
	s->stop = r->stop;
	tracker__set_backlog(r->tr, loader__events_pending(r->ld));
	err = tracker__fill(r->tr, r->col, s, &budget);
	if (!err && (r->o->resources & RES_FD))
		err = fdcensus__fill(r->col, s);
	if (!err)
		err = scanner__fill(r->sc, s, scan_due) < 0 ? -ENOMEM : 0;
	if (!err)
		err = model__apply(&r->model, s);
	if (err) {
		err_line("out of memory updating the model");
		return err;
	}
	analysis__run(&r->model);
	return 0;
}

/* A line about heap tracing or an OOM snapshot: on stderr in batch mode, on the TUI's message
 * line. */
static void say_heap(void *ctx, const char *line)
{
	struct run *r = ctx;

	if (r->tui)
		tui__message(r->tui, &r->model, line);
	else
		err_line("%s", line);
}

/*
 * Whole-system mode: the overhead budget decides how the heap is traced from now on (after
 * analysis: suspects are the processes it found growing).  Then the model hears how it
 * stands, in every mode.
 */
static void heap_control(struct run *r, bool last)
{
	struct sample_heap h = { .budgeted = false };

	if (r->hc && !last &&
	    heapctl__step(r->hc, &r->model, r->model.now_ns, say_heap, r) == HEAPMODE_TO_EXACT) {
		attach_system(r, true);
		heapctl__exact_attached(r->hc);
	}
	if (r->hc)
		heapctl__describe(r->hc, &h);
	model__apply_heap(&r->model, &h);
}

/* The TUI's `w`: a snapshot now, to the -j file or a new time-stamped one here. */
static void write_snapshot_now(struct run *r)
{
	char name[64], msg[4200];
	const char *path = r->o->json_path;
	time_t now = time(NULL);
	struct tm tm;
	int err;

	if (!path || !strcmp(path, "-")) {
		localtime_r(&now, &tm);
		strftime(name, sizeof(name), "leaktop-%Y%m%d-%H%M%S.json", &tm);
		path = name;
	}
	err = snapshot__write_file(path, &r->model);
	if (err)
		msg__write_failed(msg, sizeof(msg), path, err);
	else
		snprintf(msg, sizeof(msg), "wrote %s", path);
	tui__message(r->tui, &r->model, msg);
}

/* Keys typed in the TUI; true when the user asked to quit. */
static bool handle_tui(struct run *r)
{
	switch (tui__handle_keys(r->tui, &r->model)) {
	case TUI_QUIT:
		return true;
	case TUI_WRITE_SNAPSHOT:
		write_snapshot_now(r);
		return false;
	case TUI_LASTREF: {
		char msg[320];

		start_lastref(r, msg, sizeof(msg));
		tui__message(r->tui, &r->model, msg);
		return false;
	}
	case TUI_TOGGLE_HEAP: {
		uint32_t pid = tui__selected_pid(r->tui);
		char msg[320];

		if (!r->hc)
			snprintf(msg, sizeof(msg), "every traced process's heap is traced in this "
				 "mode; the key picks processes in whole-system mode");
		else if (!pid || !model__find_pid(&r->model, pid))
			snprintf(msg, sizeof(msg), "no live process selected");
		else
			heapctl__toggle(r->hc, &r->model, pid, monotonic_ns(), msg, sizeof(msg));
		tui__message(r->tui, &r->model, msg);
		return false;
	}
	case TUI_SCAN: {
		uint32_t pid = tui__selected_pid(r->tui);
		char msg[320];

		const struct process *p = pid ? model__find_pid(&r->model, pid) : NULL;

		if (!pid)
			snprintf(msg, sizeof(msg), "no process selected to scan");
		else if (!p)
			snprintf(msg, sizeof(msg), "process %u is not traced any more", pid);
		else
			scanner__scan_now(r->sc, p->pid, p->gen, msg, sizeof(msg));
		tui__message(r->tui, &r->model, msg);
		return false;
	}
	default:
		return false;
	}
}

/* Is any -p target still running? */
static bool targets_alive(const struct run *r)
{
	for (size_t i = 0; i < r->model.n_procs; i++)
		if (r->model.procs[i].target && !r->model.procs[i].exited)
			return true;
	return false;
}

/* --stop-at fired, whether or not its event came (read from the maps): note where. */
static void note_stop_fired(struct run *r)
{
	struct lt_event ev;

	if (loader__stop_fired(r->ld, &ev))
		stop_at__note(&r->stop, &ev);
}

/*
 * Did this report show CMD's end?  Its pid has an exited image and no live one (an exec
 * leaves a live image behind; an unreaped child's pid is not reused).  Then CMD is reaped
 * here, so that report, the one that shows CMD exited with its sites, is the final one:
 * the next would no longer hold it.
 */
static bool command_ended(struct run *r)
{
	bool exited = false;

	if (!r->have_child || r->child.reaped)
		return r->have_child;
	for (size_t i = 0; i < r->model.n_procs; i++) {
		const struct process *p = &r->model.procs[i];

		if (p->pid != (uint32_t)r->child.pid)
			continue;
		if (!p->exited)
			return false;
		exited = true;
	}
	return exited && launcher__poll(&r->child, true);
}

static int loop(struct run *r)
{
	const struct options *o = r->o;
	uint64_t interval_ns = o->interval_s * 1e9, start = monotonic_ns(), next = start;
	uint64_t end = o->duration_s > 0 ? start + (uint64_t)(o->duration_s * 1e9) : UINT64_MAX;
	uint64_t t_upkeep, t_collect, t_emit;
	bool last = false, scan_due;
	int err;

	r->model.start_ns = r->model.now_ns = start;
	r->last_libc_scan_ns = r->last_sweep_ns = r->last_gc_ns = start;
	while (!last) {
		next += interval_ns;
		/* After a stall (a large purge, a stopped terminal), skip the missed ticks. */
		if (next < monotonic_ns())
			next = monotonic_ns() + interval_ns;
		for (;;) {
			uint64_t now = monotonic_ns();
			int slice;

			/* Threads a scan left behind (stopped late, or killed) resume or are reaped. */
			ptrace_stop__reap();
			if (stop_signal || (r->have_child && launcher__poll(&r->child, false))) {
				if (stop_signal)
					stop_seen_ns = monotonic_ns();
				last = true;
				break;
			}
			/* -d ends at its time, not at the next whole interval. */
			if (now >= end) {
				last = true;
				break;
			}
			if (now >= next)
				break;
			slice = ((next < end ? next : end) - now) / 1000000;
			slice = slice > POLL_SLICE_MS ? POLL_SLICE_MS : slice < 1 ? 1 : slice;
			err = loader__poll(r->ld, slice);
			tracker__refresh_young(r->tr);
			if (r->uw)
				unwind_store__drain(r->uw, UNWIND_DRAIN_NS);
			tracker__step_packages(r->tr);
			if (r->hc)
				heapctl__window(r->hc, monotonic_ns(), say_heap, r);
			if (r->tui && handle_tui(r)) {
				last = true;
				break;
			}
			if (hook_step(r)) {
				last = true;
				break;
			}
			lastref_step(r);
			if (err < 0 && err != -EINTR) {
				err_line("cannot read lifecycle events: %s", strerror(-err));
				return 1;
			}
			/*
			 * An OOM victim: collect now, while the maps hold all its records; at
			 * most once an interval (a burst of kills is one collect, the others
			 * wait for the next tick).
			 */
			if (oom_writer__pending(r->oom) && now - r->oom_forced_ns >= interval_ns) {
				r->oom_forced_ns = now;
				break;
			}
			/* --stop-at stopped its process: the final report, now. */
			if (o->stop_at_seq && !r->stop.fired)
				note_stop_fired(r);
			if (r->stop.fired) {
				last = true;
				break;
			}
		}
		/* Ending: no process may be stopped from now on with nobody to say so. */
		if (last && o->stop_at_seq)
			loader__disarm_stop_at(r->ld);
		/* Events already queued (an exit, say) belong in this report, within a slice. */
		loader__poll(r->ld, stop_signal ? 0 : POLL_SLICE_MS);
		t_upkeep = monotonic_ns();
		upkeep(r);
		t_collect = monotonic_ns();
		scan_due = !stop_signal && o->scan_every_s > 0 &&
			   monotonic_ns() - r->last_reach_scan_ns >= o->scan_every_s * 1e9;
		if (collect(r, scan_due, last))
			return 1;
		heap_control(r, last);
		oom_writer__write(r->oom, &r->model, say_heap, r);
		t_emit = monotonic_ns();
		if (scan_due)
			r->last_reach_scan_ns = monotonic_ns();
		if (o->duration_s > 0 && model__elapsed_s(&r->model) >= o->duration_s)
			last = true;
		err = emit(r);
		if (o->verbose)
			err_line("interval at %.1fs: upkeep %.0f ms, collect %.0f ms (%" PRIu32
				 " stacks, %" PRIu32 " processes deferred), emit %.0f ms, %zu images",
				 model__elapsed_s(&r->model), (t_collect - t_upkeep) / 1e6,
				 (t_emit - t_collect) / 1e6, r->model.stacks_pending,
				 r->model.procs_deferred, (monotonic_ns() - t_emit) / 1e6,
				 r->model.n_procs);
		if (err == -EPIPE)	/* the reader of stdout is gone: a normal end */
			return 0;
		if (err)
			return 1;
		model__reported(&r->model);
		if (stop_signal && !last)
			stop_seen_ns = monotonic_ns();
		if (stop_signal)
			last = true;
		if (o->mode == MODE_SYSTEM && !last && (!r->hc || heapctl__exact(r->hc)) &&
		    r->model.now_ns - r->last_libc_scan_ns >= LIBC_RESCAN_NS) {
			attach_system(r, true);
			r->last_libc_scan_ns = r->model.now_ns;
		}
		if (o->mode == MODE_COMMAND && command_ended(r))
			last = true;
		if (o->mode == MODE_COMMAND && !last)
			follow_new_libcs(r);
		if (o->mode == MODE_PIDS && !last)
			follow_exited_threads(r);
		if (o->mode == MODE_PIDS && !last && !targets_alive(r)) {
			err_line("every traced process has exited");
			last = true;
		}
	}
	/* The files do not hold the final report. */
	return r->files_failed || r->hook_status ? 1 : 0;
}

static int check_json_path(const char *path)
{
	char dir[4096], msg[4200], *slash;
	struct stat st;

	if (!path || !strcmp(path, "-"))
		return 0;
	if (!lstat(path, &st) && (S_ISLNK(st.st_mode) || !S_ISREG(st.st_mode))) {
		int err = S_ISLNK(st.st_mode) ? -ELOOP : -EISDIR;

		err_line("%s", msg__write_failed(msg, sizeof(msg), path, err));
		return err;
	}
	/* The snapshot is written beside its final name: that directory must take files. */
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	if (access(dir, W_OK | X_OK)) {
		err_line("cannot write %s: directory %s: %s; create it or choose another path",
			 path, dir, strerror(errno));
		return -errno;
	}
	return 0;
}

/*
 * Each traced (process, allocator) pair holds a perf descriptor per probe on kernels without
 * uprobe_multi and in -- trees (17 for glibc, some 60 for jemalloc with its C++ operators),
 * the symbolizer up to 512: the usual soft limit of 1024 runs out with a few dozen -p PIDs.  Raise it to the hard limit
 * (after CMD is forked: CMD keeps the user's limits).  A failure leaves the limit as it was.
 */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* An environment switch: set, not empty and not "0". */
static bool env_flag(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0");
}

int run__main(const struct options *o)
{
	return run__main_hooked(o, NULL);
}

int run__main_hooked(const struct options *o, const struct run_hooks *hooks)
{
	struct loader_config cfg = {
		.stack_depth = o->stack_depth,
		.unwind_cfi = o->unwind_cfi && !o->probe_floor,
		.unwind_rows = o->mode == MODE_SYSTEM ? UNWIND_ROWS_SYSTEM : UNWIND_ROWS_TARGETS,
		.self_tgid = getpid(),
		.verbose = o->verbose,
		.track_fd = o->resources & RES_FD,
		/* Forces the older attach path (one perf event per probe), to compare or test it. */
		.no_uprobe_multi = env_flag("LEAKTOP_NO_UPROBE_MULTI"),
		/* Forces -- onto its fallback (probes on every process), to test it. */
		.no_tracefs = env_flag("LEAKTOP_NO_TRACEFS"),
		.track_mmap = o->resources & RES_MMAP,
		/*
		 * Shares keep one process from blinding the others on the whole system; with -p
		 * and -- the user chose every traced process, and a big one keeps all its records.
		 */
		.map_share_pct = o->mode == MODE_SYSTEM || o->map_share_set ? o->map_share_pct : 100,
		.probes = o->probe_floor == 1 ? PROBES_FLOOR_ENTRY :
			  o->probe_floor == 2 ? PROBES_FLOOR_PLANNED : PROBES_ACCOUNTING,
	};
	struct tracker_config tcfg = {
		.fork_targets = o->mode == MODE_COMMAND,
		.refresh_young = o->mode != MODE_SYSTEM,
		.fork_borrows = o->mode == MODE_SYSTEM,
	};
	struct run r = { .o = o, .hooks = hooks };
	struct sigaction sa = { .sa_handler = on_signal };
	char msg[4200], how[128], oom_dir[4096];
	uint64_t t_report_ns = 0, t_detach_ns, t_free_ns;
	int err, status = 1;

	if (run__check_privileges()) {
		err_line("not enough privileges: needs root, or CAP_BPF + CAP_PERFMON + "
			 "CAP_SYS_PTRACE; run it with sudo");
		return 1;
	}
	atomic_file__set_mode(o->file_mode);
	if (check_json_path(o->json_path) || check_json_path(o->pprof_path) ||
	    check_json_path(o->folded_path))
		return 1;
	/* An --oom-dir given is checked like -j; the default one is tried when needed. */
	oom__dir(oom_dir, sizeof(oom_dir), o->oom_dir, o->json_path);
	if (o->oom_dir && oom__check_dir(oom_dir, msg, sizeof(msg))) {
		err_line("%s", msg);
		return 1;
	}
	for (size_t i = 0; i < o->n_pids; i++) {
		if (o->pids[i] == getpid()) {
			err_line("PID %d is leaktop itself; choose another process", o->pids[i]);
			return 2;
		}
		if (!procfs__exists(o->pids[i])) {
			err_line("PID %d not found; check it with 'ps -p %d'", o->pids[i], o->pids[i]);
			return 1;
		}
	}
	if (o->mode == MODE_COMMAND) {
		err = launcher__check(o->cmd[0]);
		if (err) {
			err_line("cannot run '%s': %s; check the command name and PATH", o->cmd[0],
				 err == -ENOENT ? "command not found" : strerror(-err));
			return 1;
		}
	}

	if (o->listen_len) {
		err = metrics_server__start(&r.ms, &o->listen_addr, o->listen_len, o->listen_text,
					    o->listen_auth_path, o->listen_token_path, o->verbose,
					    msg, sizeof(msg));
		if (err) {
			err_line("%s", msg);
			return 1;
		}
	}

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	{
		struct sigaction crash = { .sa_handler = on_crash,
					   .sa_flags = SA_RESETHAND | SA_NODEFER };
		int crash_sigs[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL };

		sigemptyset(&crash.sa_mask);
		for (size_t i = 0; i < sizeof(crash_sigs) / sizeof(crash_sigs[0]); i++)
			sigaction(crash_sigs[i], &crash, NULL);
	}

	model__init(&r.model, o->interval_s, o->resources, o->window);
	r.sym = symbolizer__new();
	if (!r.sym || allocs__new(&r.al) || oom_writer__new(&r.oom, oom_dir, o->oom_dir != NULL, &o->oom)) {
		err_line("out of memory");
		goto out;
	}
	cfg.filter = o->mode == MODE_SYSTEM ? LT_FILTER_ALL : LT_FILTER_PROCS;
	cfg.follow_fork = o->mode == MODE_COMMAND;
	cfg.exec_stop = o->mode != MODE_SYSTEM && (o->resources & RES_HEAP);
	if (o->mode == MODE_COMMAND) {
		err = launcher__start(&r.child, o->cmd, o->stop_at_seq != 0);
		if (err) {
			err_line("cannot start '%s': %s", o->cmd[0], strerror(-err));
			goto out;
		}
		r.have_child = true;
	}
	raise_fd_limit();
	err = loader__open(&r.ld, &cfg, on_event, &r, msg, sizeof(msg));
	if (err) {
		err_line("%s", msg);
		goto out;
	}
	if (loader__oom_problem(r.ld) && (o->oom_dir || o->verbose))
		err_line("%s", loader__oom_problem(r.ld));
	err = collector__new(&r.col, loader__maps(r.ld), o->stack_depth);
	if (!err && o->unwind_cfi && !o->probe_floor) {
		const struct lt_map_fds *fds = loader__maps(r.ld);
		struct unwind_store_fds ufds = {
			.rows = fds->unwind_rows, .objects = fds->unwind_objects,
			.wanted = fds->unwind_wanted, .capacity = cfg.unwind_rows,
		};

		err = unwind_store__new(&r.uw, &ufds, o->verbose);
		if (err) {
			err_line("cannot map the unwind tables: %s; try --unwind fp",
				 strerror(-err));
			goto out;
		}
	}
	tcfg.allocs = r.al;
	if (!err)
		err = tracker__new(&r.tr, r.sym, &tcfg);
	if (!err)
		err = scanner__new(&r.sc, r.col, o->scan_max_stop_ms);
	if (err) {
		err_line("out of memory");
		goto out;
	}
	if (o->mode == MODE_SYSTEM && (o->resources & RES_HEAP) && !o->probe_floor) {
		struct heapctl_config hcfg = {
			.budget_pct = o->budget_pct, .max_suspects = o->max_suspects,
			.exact = o->exact, .interval_s = o->interval_s, .self_tgid = getpid(),
			.verbose = o->verbose, .allocs = r.al,
		};

		err = heapctl__new(&r.hc, r.ld, r.col, r.tr, &hcfg, monotonic_ns(), msg, sizeof(msg));
		if (err) {
			err_line("out of memory");
			goto out;
		}
	}
	if (o->stop_at_seq) {
		char cmd_path[4096];
		bool have_path = o->mode == MODE_COMMAND &&
				 !launcher__which(o->cmd[0], cmd_path, sizeof(cmd_path));

		err = stop_at__arm(r.ld, o, have_path ? cmd_path : NULL, msg, sizeof(msg));
		if (err) {
			err_line("%s", msg);
			goto out;
		}
	}
	switch (o->mode) {
	case MODE_SYSTEM:
		err = attach_system(&r, false);
		break;
	case MODE_PIDS:
		err = setup_pids(&r);
		break;
	case MODE_COMMAND:
		err = setup_command(&r);
		break;
	}
	if (err)
		goto out;
	if (!o->batch_set && !o->quiet && isatty(STDOUT_FILENO) && isatty(STDIN_FILENO) &&
	    !(o->json_path && !strcmp(o->json_path, "-")))
		r.tui = tui__start();
	tui_active = r.tui != NULL;
	loader__set_stop_flag(r.ld, &stop_signal);
	if (hooks && hooks->start) {
		struct run_live lv = live_of(&r);

		if (hooks->start(hooks->ctx, &lv))
			goto out;
	}
	status = loop(&r);
	t_report_ns = monotonic_ns();
	if (o->stop_at_seq && r.ld) {
		/*
		 * An allocation N between the run's decision to end and here stopped its process:
		 * with the probes gone, `fired` is final.  Said below like any other stop.
		 */
		loader__disarm_stop_at(r.ld);
		loader__detach_allocators(r.ld);
		if (!r.stop.fired)
			note_stop_fired(&r);
		r.model.stop = r.stop;
	}
out:
	/* No process stays held at exec past here (none is held from now on). */
	loader__exec_release_all(r.ld);
	if (o->verbose && r.exec_stops)
		err_line("exec stops: %" PRIu64 " processes held, %.2f ms on average, %.2f ms at "
			 "most", r.exec_stops, r.exec_held_ns / 1e6 / r.exec_stops,
			 r.exec_held_max_ns / 1e6);
	if (hooks && hooks->finish) {
		struct run_live lv = live_of(&r);

		hooks->finish(hooks->ctx, &lv);
	}
	if (r.lr) {
		struct run_live lv = live_of(&r);

		lastref__free(r.lr, &lv);
	}
	tui__stop(r.tui);
	tui_active = 0;
	if (r.stop.fired) {
		/* The process stays stopped for a debugger: said after the final report. */
		fflush(stdout);
		report__write_stop(stderr, &r.model, true);
	}
	if (r.have_child && !r.child.reaped && !r.stop.fired) {
		if (r.child.go_fd > 0) {
			launcher__abort(&r.child);
		} else {
			/*
			 * Tracing stops with CMD (Ctrl-C, SIGTERM, -d, q): pass the signal on,
			 * as a shell would, and let CMD decide.
			 */
			kill(r.child.pid, stop_signal == SIGHUP ? SIGHUP : SIGTERM);
		}
	}
	if (r.have_child && r.child.reaped && status == 0) {
		launcher__describe(&r.child, how, sizeof(how));
		err_line("%s %s", o->cmd[0], how);
	}
	metrics_server__stop(r.ms);
	free(r.pending);
	sample__free(&r.sample);
	scanner__free(r.sc);
	heapctl__free(r.hc);
	unwind_store__free(r.uw);
	tracker__free(r.tr);
	collector__free(r.col);
	t_detach_ns = monotonic_ns();
	loader__destroy(r.ld);
	t_free_ns = monotonic_ns();
	symbolizer__free(r.sym);
	allocs__free(r.al);
	oom_writer__free(r.oom);
	model__free(&r.model);
	if (o->verbose && stop_signal_ns && t_report_ns)
		err_line("exit: %.0f ms after the signal: the loop saw it at %.0f ms, final report "
			 "done at %.0f ms, teardown %.0f ms, probes and BPF objects %.0f ms, the "
			 "rest %.0f ms", (monotonic_ns() - stop_signal_ns) / 1e6,
			 stop_seen_ns ? (stop_seen_ns - stop_signal_ns) / 1e6 : -1.0,
			 (t_report_ns - stop_signal_ns) / 1e6,
			 (t_detach_ns - t_report_ns) / 1e6, (t_free_ns - t_detach_ns) / 1e6,
			 (monotonic_ns() - t_free_ns) / 1e6);
	return status;
}

int run__scan_main(int argc, char **argv)
{
	struct options o;
	char err[512];

	if (options__parse_scan(argc, argv, &o, err, sizeof(err))) {
		err_line("%s", err);
		return 2;
	}
	if (o.help) {
		fputs(options__scan_usage(), stdout);
		return 0;
	}
	return run__main(&o);
}
