// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * attach.c - the attach policy (see attach.h): which allocator objects get heap probes, for
 * which processes, at start and over time.  The loader attaches; allocator discovery
 * (allocs.c) says which objects a process or a program uses; the unwind store gets their
 * tables before their first traced call.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <limits.h>
#include <unistd.h>

#include "bpf/leaktop.h"
#include "core/model.h"
#include "live/allocs.h"
#include "live/attach.h"
#include "live/libcs.h"
#include "live/loader.h"
#include "live/procfs.h"
#include "live/tracker.h"
#include "live/unwind_store.h"
#include "util/clock.h"
#include "util/msg.h"

/* Allocator objects per process, at most (the bound one and any called directly). */
#define PROC_ALLOCS_MAX		8
/* New files examined per rescan of the system's allocators (a rescan stays short). */
#define SYSTEM_SCAN_BUDGET	64

struct followed {
	int pid, tid;			/* -p: probes attached with tid */
};

struct attach {
	struct attach_config cfg;
	struct loader *ld;
	struct allocs *al;
	struct unwind_store *uw;
	struct tracker *tr;
	struct followed *followed;
	size_t n_followed;
	uint64_t exec_stops;		/* processes held at exec, and for how long in all */
	uint64_t exec_held_ns, exec_held_max_ns;
};

int attach__new(struct attach **out, struct loader *ld, struct allocs *al,
		struct unwind_store *uw, struct tracker *tr, const struct attach_config *cfg)
{
	struct attach *at = calloc(1, sizeof(*at));

	*out = at;
	if (!at)
		return -ENOMEM;
	at->cfg = *cfg;
	at->ld = ld;
	at->al = al;
	at->uw = uw;
	at->tr = tr;
	if (cfg->n_pids) {
		at->followed = calloc(cfg->n_pids, sizeof(*at->followed));
		if (!at->followed) {
			free(at);
			*out = NULL;
			return -ENOMEM;
		}
	}
	return 0;
}

void attach__free(struct attach *at)
{
	if (!at)
		return;
	free(at->followed);
	free(at);
}

static bool stopping(const struct attach *at)
{
	return at->cfg.stop && *at->cfg.stop;
}

/*
 * Attach to each object of refs[] not probed yet: for filter_pid (-1: every process), or
 * with tree for filter_pid and every process it forks from then on.
 */
static int attach_refs(struct attach *at, const struct libc_ref *refs, size_t n, int filter_pid,
		       bool tree, bool quiet)
{
	char msg[512];
	int err;

	for (size_t i = 0; i < n; i++) {
		if (tree)
			err = loader__attach_libc_tree(at->ld, &refs[i], filter_pid, msg, sizeof(msg));
		else
			err = loader__attach_libc(at->ld, &refs[i], filter_pid, msg, sizeof(msg));
		if (err && !quiet) {
			err_line("%s", msg);
			return err;
		}
	}
	return 0;
}

/* objs[] as refs[], each said with -v (who: "process 12", "CMD"). */
static void refs_of(const struct attach *at, const struct alloc_obj *objs, size_t n,
		    struct libc_ref *refs, const char *who, bool quiet)
{
	for (size_t i = 0; i < n; i++) {
		refs[i] = objs[i].ref;
		if (at->cfg.verbose && !quiet)
			err_line("%s: allocator %s (%s)%s", who, objs[i].ref.path, objs[i].kind,
				 objs[i].bound ? ", malloc binds here" : "");
	}
}

/* Attach to the allocators process pid uses (allocs__of_pid), as attach_refs does. */
static int attach_allocs_of(struct attach *at, int pid, int filter_pid, bool tree, bool quiet)
{
	struct alloc_obj objs[PROC_ALLOCS_MAX];
	struct libc_ref refs[PROC_ALLOCS_MAX];
	char who[32];
	size_t n;
	int err;

	if (!at->cfg.heap)
		return procfs__exists(pid) ? 0 : -ESRCH;
	err = allocs__of_pid(at->al, pid, objs, PROC_ALLOCS_MAX, &n);
	if (err)
		return err;
	if (!n)
		return -ENOEXEC;
	snprintf(who, sizeof(who), "process %d", pid);
	refs_of(at, objs, n, refs, who, quiet);
	return attach_refs(at, refs, n, filter_pid, tree, quiet);
}

/* One object found by a system scan, probed for every process: true when it is. */
static bool attach_found(struct attach *at, const struct alloc_obj *o, bool quiet)
{
	char msg[512];

	if (loader__has_libc(at->ld, o->ref.dev, o->ref.ino, -1))
		return true;
	if (at->cfg.verbose)
		err_line("allocator %s (%s) in process %d", o->ref.path, o->kind, o->ref.pid);
	if (loader__attach_libc(at->ld, &o->ref, -1, msg, sizeof(msg))) {
		if (at->cfg.verbose || !quiet)
			err_line("skipping %s: %s", o->ref.path, msg);
		return false;
	}
	/*
	 * Every heap stack goes through its allocator: its table now, not at the first walk
	 * that asks, so the first stacks of every process are whole there already.
	 */
	if (at->uw)
		unwind_store__load_mapping(at->uw, o->ref.pid, o->ref.start, o->ref.end,
					   o->ref.deleted ? NULL : o->ref.path, o->ref.dev,
					   o->ref.ino);
	return true;
}

int attach__system(struct attach *at, bool quiet)
{
	struct alloc_obj *objs;
	size_t n;
	int err, attached = 0;

	if (!at->cfg.heap)
		return 0;
	/* At start every object is examined; later scans take a few new ones at a time. */
	err = allocs__scan_system(at->al, quiet ? SYSTEM_SCAN_BUDGET : SIZE_MAX, &objs, &n);
	if (err) {
		if (!quiet)
			err_line("cannot list processes in /proc: %s", strerror(-err));
		return err;
	}
	for (size_t i = 0; i < n; i++) {
		/* A rescan under way when Ctrl-C comes ends here: the rest waits for no one. */
		if (quiet && stopping(at))
			break;
		attached += attach_found(at, &objs[i], quiet);
	}
	free(objs);
	if (!attached && !quiet) {
		err_line("found no allocator to probe in any process; is /proc mounted?");
		return -ENOENT;
	}
	return 0;
}

/* -p PID's attach failed with err: the line that says why. */
static int pid_failed(int pid, int err)
{
	char comm[64];

	if (err == -ESRCH) {
		err_line("PID %d not found; check it with 'ps -p %d'", pid, pid);
	} else if (err == -ENOEXEC) {
		if (procfs__comm(pid, comm, sizeof(comm)))
			strcpy(comm, "?");
		err_line("PID %d (%s) maps no allocator leaktop can find (a static program "
			 "stripped of its symbol table?); only programs whose malloc has a "
			 "symbol can be traced", pid, comm);
	} else if (err == -EPERM || err == -EACCES) {
		err_line("cannot read /proc/%d/maps: %s; run leaktop as root", pid,
			 strerror(-err));
	}
	return err;
}

static int setup_pids(struct attach *at)
{
	int err;

	for (size_t i = 0; i < at->cfg.n_pids; i++) {
		int pid = at->cfg.pids[i], tgid;
		bool dup = false;
		uint64_t gen;

		/* A thread id stands for its process: the probes see every thread anyway. */
		if (!procfs__tgid(pid, &tgid))
			pid = tgid;
		for (size_t k = 0; k < at->n_followed; k++)
			dup |= at->followed[k].pid == pid;
		if (dup)
			continue;
		err = attach_allocs_of(at, pid, pid, false, false);
		if (err)
			return pid_failed(pid, err);
		/* Its tables before its first traced allocation: stacks are whole from the start. */
		if (at->uw)
			unwind_store__load_pid(at->uw, pid);
		gen = loader__seed_proc(at->ld, pid);
		if (!gen) {
			err_line("cannot mark PID %d as traced: %s", pid, strerror(errno));
			return -EIO;
		}
		at->followed[at->n_followed++] = (struct followed){ pid, pid };
		err = tracker__add_target(at->tr, pid, gen);
		if (err == -ENOMEM)
			return err;
	}
	return 0;
}

/*
 * CMD (forked from us, held before exec) runs in our mount namespace and with our
 * environment: the C library we map, and the allocators CMD's own file and its libraries
 * say it will bind (a static CMD, one linked with jemalloc, an LD_PRELOAD), probed before it
 * runs.  A later exec is held until what its program will bind is probed
 * (attach__on_exec_stop); what a process maps later than that is followed each interval
 * (attach__follow).
 */
/*
 * `leaktop check`: hold CMD's processes at _exit in these objects (our C library, a static
 * CMD).  An object without _exit (jemalloc) is skipped; our own C library must take it.
 */
static int attach_exit_stops(struct attach *at, const struct libc_ref *refs, size_t n, bool own)
{
	char path[PATH_MAX + 64], msg[512];

	for (size_t i = 0; i < n; i++) {
		if (refs[i].pid > 0)
			snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
				 refs[i].pid, refs[i].start, refs[i].end);
		else
			snprintf(path, sizeof(path), "%s", refs[i].path);
		if (loader__attach_exit_stop(at->ld, path, msg, sizeof(msg)) && own) {
			err_line("%s; leaks at exit cannot be checked", msg);
			return -EIO;
		}
	}
	return 0;
}

/* CMD's heap probes (unless --agent) and its exit stops: our C library's, then CMD's own. */
static int command_probes(struct attach *at)
{
	struct alloc_obj objs[PROC_ALLOCS_MAX];
	struct libc_ref refs[PROC_ALLOCS_MAX];
	size_t n = 0;
	int err;

	err = libcs__of_pid(getpid(), refs, PROC_ALLOCS_MAX, &n);
	if (!err && at->cfg.heap)
		err = attach_refs(at, refs, n, at->cfg.child_pid, true, false);
	if (!err && at->cfg.exit_stop)
		err = attach_exit_stops(at, refs, n, true);
	if (err || !at->cfg.cmd_path ||
	    allocs__of_command(at->al, at->cfg.cmd_path, objs, PROC_ALLOCS_MAX, &n))
		return err;
	refs_of(at, objs, n, refs, at->cfg.cmd_name, false);
	if (at->cfg.heap)
		err = attach_refs(at, refs, n, at->cfg.child_pid, true, false);
	if (!err && at->cfg.exit_stop)
		err = attach_exit_stops(at, refs, n, false);
	return err;
}

static int setup_command(struct attach *at)
{
	uint64_t gen;
	int err;

	if (at->cfg.heap || at->cfg.exit_stop) {
		err = command_probes(at);
		if (err)
			return err;
	}
	if (at->uw && at->cfg.cmd_path)
		unwind_store__load_command(at->uw, at->cfg.cmd_path);
	gen = loader__seed_proc(at->ld, at->cfg.child_pid);
	if (!gen) {
		err_line("cannot mark the command as traced: %s", strerror(errno));
		return -EIO;
	}
	err = at->cfg.release_child(at->cfg.release_ctx);
	if (!err)
		err = tracker__add_target(at->tr, at->cfg.child_pid, gen) == -ENOMEM ? -ENOMEM : 0;
	if (err == -ENOMEM) {
		err_line("out of memory");
		return err;
	}
	if (err) {
		err_line("cannot run '%s': %s; check the command name and PATH", at->cfg.cmd_name,
			 strerror(-err));
		return err;
	}
	return 0;
}

int attach__start(struct attach *at)
{
	switch (at->cfg.mode) {
	case ATTACH_SYSTEM:
		return attach__system(at, false);
	case ATTACH_PIDS:
		return setup_pids(at);
	case ATTACH_COMMAND:
		return setup_command(at);
	}
	return -EINVAL;
}

/* Is the object probed for every process this run traces (not for one subtree only)? */
static bool probed_for_all(struct attach *at, const struct libc_ref *ref)
{
	if (at->cfg.mode == ATTACH_COMMAND)
		return loader__has_libc(at->ld, ref->dev, ref->ino, at->cfg.child_pid);
	for (size_t i = 0; i < at->n_followed; i++)
		if (!loader__has_libc(at->ld, ref->dev, ref->ino, at->followed[i].pid))
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
void attach__on_exec_stop(struct attach *at, const struct lt_event *ev)
{
	struct alloc_obj objs[PROC_ALLOCS_MAX];
	struct libc_ref refs[PROC_ALLOCS_MAX];
	bool env_set = true, plain = true;
	int pid = (int)ev->tgid;
	uint64_t held_ns;
	char who[48];
	size_t n = 0;

	if (!stopping(at) && at->cfg.heap &&
	    !allocs__of_exec(at->al, pid, objs, PROC_ALLOCS_MAX, &n, &env_set)) {
		snprintf(who, sizeof(who), "process %d exec'd", pid);
		refs_of(at, objs, n, refs, who, false);
		for (size_t i = 0; i < n; i++)
			plain &= probed_for_all(at, &objs[i].ref);
		attach_refs(at, refs, n, pid, at->cfg.mode == ATTACH_COMMAND, true);
		if (plain && !env_set)
			loader__exec_plain(at->ld, ev->exe_dev, ev->exe_ino);
	}
	loader__exec_release(at->ld, pid);
	held_ns = monotonic_ns() - ev->ts_ns;
	at->exec_stops++;
	at->exec_held_ns += held_ns;
	if (held_ns > at->exec_held_max_ns)
		at->exec_held_max_ns = held_ns;
}

/*
 * In -- mode, a traced program that execs may load a libc no probe covers yet: its probes
 * go on that process and what it forks from then on.
 */
static void follow_new_libcs(struct attach *at, const struct model *m)
{
	for (size_t i = 0; i < m->n_procs; i++) {
		const struct process *p = &m->procs[i];

		if (p->target && !p->exited)
			attach_allocs_of(at, p->pid, p->pid, true, true);
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
static void follow_exited_threads(struct attach *at)
{
	if (loader__probes_follow_thread_group(at->ld))
		return;
	for (size_t i = 0; i < at->n_followed; i++) {
		struct followed *f = &at->followed[i];
		int tid = procfs__live_thread(f->pid, f->tid);

		if (tid <= 0 || tid == f->tid)
			continue;
		if (at->cfg.verbose)
			err_line("thread %d of process %d exited: probes attached again with thread %d",
				 f->tid, f->pid, tid);
		if (!attach_allocs_of(at, tid, tid, false, true))
			f->tid = tid;
	}
}

void attach__follow(struct attach *at, const struct model *m)
{
	if (at->cfg.mode == ATTACH_COMMAND)
		follow_new_libcs(at, m);
	else if (at->cfg.mode == ATTACH_PIDS)
		follow_exited_threads(at);
}

void attach__say_exec_stops(const struct attach *at)
{
	if (at && at->exec_stops)
		err_line("exec stops: %" PRIu64 " processes held, %.2f ms on average, %.2f ms at "
			 "most", at->exec_stops, at->exec_held_ns / 1e6 / at->exec_stops,
			 at->exec_held_max_ns / 1e6);
}
