// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * session.c - the live side as one object (see session.h): opening the BPF side and every
 * producer in order, the poll slices between intervals, one interval's collect into the
 * sample, the heap budget's step, upkeep of the kernel maps, and teardown.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <linux/capability.h>

#include "core/model.h"
#include "live/agent_attach.h"
#include "live/agent_channel.h"
#include "live/allocs.h"
#include "live/attach.h"
#include "live/collector.h"
#include "live/exitcheck.h"
#include "live/fdcensus.h"
#include "live/heapctl.h"
#include "live/lastref_session.h"
#include "live/loader.h"
#include "live/mounts.h"
#include "live/procfs.h"
#include "live/ptrace_stop.h"
#include "live/scanner.h"
#include "live/session.h"
#include "live/symbolize.h"
#include "live/tracker.h"
#include "live/unwind_store.h"
#include "util/clock.h"
#include "util/msg.h"

#define LIBC_RESCAN_NS		(10ULL * 1000000000ULL)
#define ALLOC_SWEEP_NS		(5ULL * 1000000000ULL)
#define STACK_GC_NS		(30ULL * 1000000000ULL)
/* Unwind tables built per poll slice at most (one object at least). */
#define UNWIND_DRAIN_NS		(20ULL * 1000000ULL)
/*
 * Capacity of the unwind rows map: the whole system's objects, or a few programs'.  A C/C++
 * build alone maps 2.4 Mi rows' worth at once (libLLVM 1.0 Mi, libclang-cpp 0.95 Mi, cc1
 * 0.48 Mi): in 2 Mi they evicted each other and were built again and again.
 */
#define UNWIND_ROWS_SYSTEM	(1u << 22)
#define UNWIND_ROWS_TARGETS	(1u << 20)

struct session {
	struct session_config cfg;
	struct loader *ld;
	struct collector *col;
	struct symbolizer *sym;
	struct tracker *tr;
	struct scanner *sc;
	struct heapctl *hc;		/* whole-system mode: the overhead budget */
	struct unwind_store *uw;	/* --unwind cfi: the unwind tables */
	struct allocs *al;		/* which allocators processes use */
	struct attach *at;		/* which objects get probes */
	struct agent_attach injected;	/* -p --agent: the processes the agent went into */
	struct lastref *lr;		/* a lastref on this session, or NULL */
	bool lr_ended;			/* ... that has ended (its verdicts kept) */
	struct lastref *lr_prev;	/* the one a new start replaced, stopped, until its last
					 * verdicts are in a sample */
	uint64_t last_libc_scan_ns, last_sweep_ns, last_gc_ns;
	struct dead_image *pending;	/* dead images whose live-block records await a sweep */
	size_t n_pending;
	int64_t pending_blocks;
};

int session__check_privileges(void)
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

bool session__process_exists(int pid)
{
	return procfs__exists(pid);
}

static void on_event(void *ctx, const struct lt_event *ev)
{
	struct session *s = ctx;

	tracker__on_event(s->tr, ev);
	if (ev->type == LT_EV_EXEC && (ev->ppid & LT_EXEC_STOPPED))
		attach__on_exec_stop(s->at, ev);
}

/* An environment switch: set, not empty and not "0". */
static bool env_flag(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0");
}

/*
 * Each traced (process, allocator) pair holds a perf descriptor per probe on kernels without
 * uprobe_multi and in -- trees (17 for glibc, some 60 for jemalloc with its C++ operators),
 * the symbolizer up to 512: the usual soft limit of 1024 runs out with a few dozen -p PIDs.
 * Raise it to the hard limit (after CMD is forked: CMD keeps the user's limits).  A failure
 * leaves the limit as it was.
 */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int open_loader(struct session *s)
{
	const struct session_config *c = &s->cfg;
	enum attach_mode mode = c->attach.mode;
	struct loader_config lc = {
		.filter = mode == ATTACH_SYSTEM ? LT_FILTER_ALL : LT_FILTER_PROCS,
		.follow_fork = mode == ATTACH_COMMAND,
		/* --agent: an exec'd image's agent starts by itself, nothing to attach first. */
		.exec_stop = mode != ATTACH_SYSTEM && (c->resources & RES_HEAP) && !c->agent,
		.exit_stop = c->attach.exit_stop,
		.stack_depth = c->stack_depth,
		.unwind_cfi = c->unwind_cfi && !c->probe_floor,
		.unwind_rows = mode == ATTACH_SYSTEM ? UNWIND_ROWS_SYSTEM : UNWIND_ROWS_TARGETS,
		.self_tgid = getpid(),
		.verbose = c->verbose,
		.track_fd = c->resources & RES_FD,
		/* Forces the older attach path (one perf event per probe), to compare or test it. */
		.no_uprobe_multi = env_flag("LEAKTOP_NO_UPROBE_MULTI"),
		/* Forces -- onto its fallback (probes on every process), to test it. */
		.no_tracefs = env_flag("LEAKTOP_NO_TRACEFS"),
		.track_mmap = c->resources & RES_MMAP,
		.map_share_pct = c->map_share_pct,
		.probes = c->probe_floor == 1 ? PROBES_FLOOR_ENTRY :
			  c->probe_floor == 2 ? PROBES_FLOOR_PLANNED : PROBES_ACCOUNTING,
	};
	char msg[4200];
	int err;

	raise_fd_limit();
	err = loader__open(&s->ld, &lc, on_event, s, msg, sizeof(msg));
	if (err) {
		err_line("%s", msg);
		return err;
	}
	if (loader__oom_problem(s->ld) && c->say_oom_problem)
		err_line("%s", loader__oom_problem(s->ld));
	err = collector__new(&s->col, loader__maps(s->ld), c->stack_depth);
	if (!err && lc.unwind_cfi) {
		const struct lt_map_fds *fds = loader__maps(s->ld);
		struct unwind_store_fds ufds = {
			.rows = fds->unwind_rows, .objects = fds->unwind_objects,
			.wanted = fds->unwind_wanted, .capacity = lc.unwind_rows,
		};

		err = unwind_store__new(&s->uw, &ufds, c->verbose);
		if (err) {
			err_line("cannot map the unwind tables: %s; try --unwind fp",
				 strerror(-err));
			return err;
		}
	}
	if (err)
		err_line("out of memory");
	return err;
}

/* The producers over the maps, the budget, the attach policy. */
static int open_producers(struct session *s)
{
	const struct session_config *c = &s->cfg;
	struct tracker_config tcfg = {
		.fork_targets = c->attach.mode == ATTACH_COMMAND,
		.refresh_young = c->attach.mode != ATTACH_SYSTEM,
		.fork_borrows = c->attach.mode == ATTACH_SYSTEM,
		.allocs = s->al,
	};
	char msg[512];
	int err;

	err = tracker__new(&s->tr, s->sym, &tcfg);
	if (!err)
		err = scanner__new(&s->sc, s->col, c->scan_max_stop_ms);
	if (!err)
		err = attach__new(&s->at, s->ld, s->al, s->uw, s->tr, &c->attach);
	if (!err && c->attach.mode == ATTACH_SYSTEM && (c->resources & RES_HEAP) &&
	    !c->probe_floor) {
		struct heapctl_config hcfg = {
			.budget_pct = c->budget_pct, .max_suspects = c->max_suspects,
			.exact = c->exact, .interval_s = c->interval_s, .self_tgid = getpid(),
			.verbose = c->verbose, .allocs = s->al, .attach = s->at,
		};

		err = heapctl__new(&s->hc, s->ld, s->col, s->tr, &hcfg, monotonic_ns(), msg,
				   sizeof(msg));
	}
	if (err)
		err_line("out of memory");
	return err;
}

/* -p --agent: the agent into each traced process (traced already: its image known). */
static int inject_pids(struct session *s)
{
	const struct attach_config *a = &s->cfg.attach;
	int err;

	for (size_t i = 0; i < a->n_pids; i++) {
		int pid = a->pids[i], tgid;
		bool dup = false;

		if (!procfs__tgid(pid, &tgid))
			pid = tgid;
		for (size_t k = 0; k < s->injected.n; k++)
			dup |= s->injected.injected[k].pid == pid;
		if (dup)
			continue;
		err = agent_attach__start(&s->injected, s->cfg.agent, s->col, s->cfg.agent_lib,
					  pid, s->cfg.stop);
		if (err)
			return err;
	}
	return 0;
}

int session__open(struct session **out, const struct session_config *cfg)
{
	struct session *s = calloc(1, sizeof(*s));
	char msg[4200];
	int err = -ENOMEM;

	*out = s;
	if (!s) {
		agent_channels__free(cfg->agent);
		err_line("out of memory");
		return -ENOMEM;
	}
	s->cfg = *cfg;
	s->sym = symbolizer__new();
	if (!s->sym || allocs__new(&s->al)) {
		err_line("out of memory");
		return err;
	}
	err = open_loader(s);
	if (!err)
		err = open_producers(s);
	if (err)
		return err;
	err = stop_at__arm(s->ld, &cfg->stop_at, msg, sizeof(msg));
	if (err) {
		err_line("%s", msg);
		return err;
	}
	err = attach__start(s->at);
	if (!err && cfg->agent && cfg->attach.mode == ATTACH_PIDS)
		err = inject_pids(s);
	if (err)
		return err;
	loader__set_stop_flag(s->ld, cfg->stop);
	s->last_libc_scan_ns = s->last_sweep_ns = s->last_gc_ns = monotonic_ns();
	return 0;
}

int session__poll(struct session *s, int slice_ms, struct session_news *news)
{
	struct lt_event ev;
	int err;

	/* Threads a scan left behind (stopped late, or killed) resume or are reaped. */
	ptrace_stop__reap();
	err = loader__poll(s->ld, slice_ms);
	tracker__refresh_young(s->tr);
	if (s->uw)
		unwind_store__drain(s->uw, UNWIND_DRAIN_NS);
	tracker__step_packages(s->tr);
	if (s->hc)
		heapctl__window(s->hc, monotonic_ns(), s->cfg.say, s->cfg.say_ctx);
	/* --stop-at fired, whether or not its event came (read from the maps). */
	if (s->cfg.stop_at.seq && !tracker__stop(s->tr)->fired && loader__stop_fired(s->ld, &ev))
		tracker__on_event(s->tr, &ev);
	news->oom_victims = tracker__queued_oom(s->tr, news->oom,
						sizeof(news->oom) / sizeof(news->oom[0]));
	news->stop_fired = tracker__stop(s->tr)->fired;
	return err;
}

void session__drain(struct session *s, int timeout_ms)
{
	ptrace_stop__reap();
	loader__poll(s->ld, timeout_ms);
}

/* leaktop's own resident memory and CPU time, for stats. */
static void measure_self(struct sample *sm)
{
	struct proc_counters pc;
	struct rusage ru;

	if (!procfs__counters(getpid(), &pc))
		sm->self_rss_bytes = pc.rss_bytes;
	if (!getrusage(RUSAGE_SELF, &ru))
		sm->self_cpu_s = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
				 (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* The live side's own counters: probes, refusals, allocator discovery, unwinding, itself. */
static void own_stats(struct session *s, struct sample *sm, const struct session_outputs *o)
{
	struct allocs_stats as;

	sm->probes_attached = loader__probe_count(s->ld);
	sm->libcs_refused = loader__libcs_refused(s->ld);
	sm->files_refused_fs = mounts__refused_count();
	allocs__stats(s->al, &as);
	sm->alloc_unreadable = as.objects_unreadable;
	sm->alloc_scan_pending = as.scan_pending;
	sm->heap_attach = loader__heap_attach(s->ld);
	sm->syscall_attach = loader__syscall_attach(s->ld, &sm->syscall_why);
	if (s->uw)
		unwind_store__stats(s->uw, &sm->unwind);
	measure_self(sm);
	sm->oom_snapshots_failed = o->oom_snapshots_failed;
	sm->oom_snapshots_skipped = o->oom_snapshots_skipped;
	sm->oom_snapshots_removed = o->oom_snapshots_removed;
}

int session__collect(struct session *s, struct sample *sm, bool scan_due,
		     const struct work_budget *b, const struct session_outputs *outs)
{
	int err;

	sample__reset(sm);
	err = collector__read(s->col, sm);
	/* --agent: the in-process agents' sites and counters, beside the maps'. */
	if (!err && s->cfg.agent)
		err = agent_channels__read(s->cfg.agent, s->col, sm);
	if (err) {
		err_line("cannot read the BPF maps: %s", strerror(-err));
		return err;
	}
	/*
	 * An image's fork or exec event is in the ring buffer before any of its records is in
	 * the maps: delivered now, every image the read saw is one the tracker has heard of
	 * (or, the delivery cut short, known to wait: the backlog below).
	 */
	loader__drain(s->ld, b);
	own_stats(s, sm, outs);
	tracker__set_backlog(s->tr, loader__events_pending(s->ld));
	err = tracker__fill(s->tr, s->col, sm, b);
	if (!err && (s->cfg.resources & RES_FD))
		err = fdcensus__fill(s->col, sm);
	if (!err)
		err = scanner__fill(s->sc, sm, scan_due) < 0 ? -ENOMEM : 0;
	/* The verdicts lastref gave since the last sample, for the model. */
	if (!err && s->lr_prev) {
		err = lastref__collect(s->lr_prev, sm);
		lastref__free(s->lr_prev, &(struct lastref_env){ s->ld, s->col, s->sym, NULL });
		s->lr_prev = NULL;
	}
	if (!err && s->lr)
		err = lastref__collect(s->lr, sm);
	if (err)
		err_line("out of memory updating the model");
	return err;
}

void session__heap(struct session *s, const struct model *m, bool last, struct sample_heap *h)
{
	*h = (struct sample_heap){ .budgeted = false };
	if (!s->hc)
		return;
	if (!last)
		heapctl__step(s->hc, m, m->now_ns, s->cfg.say, s->cfg.say_ctx);
	heapctl__describe(s->hc, h);
}

void session__upkeep(struct session *s, struct model *m, const struct sample *last_sample)
{
	struct dead_image *dead;
	uint64_t now = monotonic_ns();
	size_t n;

	/* Images that exited at the previous update were in one report; forget them now. */
	for (size_t i = 0; i < m->n_procs; i++)
		if (m->procs[i].exit_reported && !m->procs[i].records_released)
			s->pending_blocks += m->procs[i].heap_outstanding_count;
	n = model__reap(m, &dead);
	if (n) {
		struct dead_image *v = realloc(s->pending, (s->n_pending + n) * sizeof(*v));

		tracker__forget(s->tr, dead, n);
		if (s->cfg.agent)
			agent_channels__forget(s->cfg.agent, dead, n);
		collector__purge_sites(s->col, dead, n);
		collector__purge_fds(s->col, dead, n);
		collector__purge_mmaps(s->col, dead, n);
		if (v) {
			memcpy(v + s->n_pending, dead, n * sizeof(*v));
			s->pending = v;
			s->n_pending += n;
		}
		free(dead);
	}
	/* Live-block records need a sweep of the allocs map: only when there are some. */
	if (s->n_pending && (!s->pending_blocks || now - s->last_sweep_ns >= ALLOC_SWEEP_NS ||
			     s->pending_blocks > LT_MAX_ALLOCS / 8)) {
		if (s->pending_blocks)
			collector__purge_allocs(s->col, s->pending, s->n_pending);
		free(s->pending);
		s->pending = NULL;
		s->n_pending = 0;
		s->pending_blocks = 0;
		s->last_sweep_ns = now;
	}
	if (now - s->last_gc_ns >= STACK_GC_NS) {
		collector__gc_stacks(s->col, last_sample);
		s->last_gc_ns = now;
	}
}

void session__follow(struct session *s, const struct model *m)
{
	if (s->cfg.attach.mode == ATTACH_SYSTEM) {
		if ((!s->hc || heapctl__exact(s->hc)) &&
		    m->now_ns - s->last_libc_scan_ns >= LIBC_RESCAN_NS) {
			attach__system(s->at, true);
			s->last_libc_scan_ns = m->now_ns;
		}
		return;
	}
	attach__follow(s->at, m);
}

void session__disarm_stop_at(struct session *s)
{
	if (s->cfg.stop_at.seq)
		loader__disarm_stop_at(s->ld);
}

void session__finish_stop_at(struct session *s, struct stop_record *stop)
{
	struct lt_event ev;

	if (!s || !s->ld || !s->cfg.stop_at.seq)
		return;
	/*
	 * An allocation N between the run's decision to end and here stopped its process: with
	 * the probes gone, `fired` is final.
	 */
	loader__disarm_stop_at(s->ld);
	loader__detach_allocators(s->ld);
	if (!tracker__stop(s->tr)->fired && loader__stop_fired(s->ld, &ev))
		tracker__on_event(s->tr, &ev);
	*stop = *tracker__stop(s->tr);
}

void session__release_held(struct session *s)
{
	if (s)
		loader__exec_release_all(s->ld);
	if (s && s->cfg.verbose)
		attach__say_exec_stops(s->at);
}

void session__release_held_now(void)
{
	loader__exec_release_all_now();
}

void session__scan_now(struct session *s, uint32_t pid, uint64_t gen, char *msg, size_t len)
{
	scanner__scan_now(s->sc, pid, gen, msg, len);
}

bool session__heap_toggle(struct session *s, const struct model *m, uint32_t pid, char *msg,
			  size_t len)
{
	if (!s->hc)
		return false;
	if (!pid)
		snprintf(msg, len, "no live process selected");
	else
		heapctl__toggle(s->hc, m, pid, monotonic_ns(), msg, len);
	return true;
}

static struct lastref_env lastref_env(struct session *s, const struct model *m)
{
	return (struct lastref_env){ s->ld, s->col, s->sym, m };
}

int session__lastref_start(struct session *s, const struct model *m,
			   const struct lastref_spec *spec)
{
	struct lastref_env env = lastref_env(s, m);
	int err;

	/* The last one's verdicts not in a sample yet go with the next. */
	if (s->lr) {
		lastref__stop(s->lr, &env);
		lastref__free(s->lr_prev, &env);
		s->lr_prev = s->lr;
	}
	s->lr_ended = false;
	s->lr = lastref__new(spec);
	if (!s->lr)
		return -ENOMEM;
	err = lastref__start(s->lr, &env);
	if (err) {
		lastref__free(s->lr, &env);
		s->lr = NULL;
	}
	return err;
}

int session__lastref_step(struct session *s, const struct model *m)
{
	struct lastref_env env = lastref_env(s, m);
	int ret;

	if (!s->lr || s->lr_ended)
		return 0;
	ret = lastref__step(s->lr, &env);
	if (ret) {
		lastref__stop(s->lr, &env);
		s->lr_ended = true;
	}
	return ret;
}

void session__lastref_stop(struct session *s, const struct model *m)
{
	struct lastref_env env;

	if (!s || !s->lr || s->lr_ended)
		return;
	env = lastref_env(s, m);
	lastref__stop(s->lr, &env);
	s->lr_ended = true;
}

size_t session__lastref_results(struct session *s, const struct lastref_result **v,
				int *watchpoints)
{
	*v = NULL;
	*watchpoints = -1;
	if (!s || !s->lr)
		return 0;
	*watchpoints = lastref__watchpoints(s->lr);
	return lastref__results(s->lr, v);
}

char *session__build_id(void *session, const char *module)
{
	struct session *s = session;

	return symbolizer__build_id(s->sym, module);
}

size_t session__exit_stopped(struct session *s, uint32_t *pids, size_t max)
{
	return loader__exit_stopped(s->ld, pids, max);
}

void session__exit_release(struct session *s, uint32_t pid)
{
	loader__exit_release(s->ld, pid);
}

int session__exit_check(struct session *s, int pid, bool fds, bool mmaps,
			unsigned int max_stop_ms, struct check_proc *out)
{
	const struct lt_map_fds *m = loader__maps(s->ld);
	struct exitcheck_env env = {
		.col = s->col, .sym = s->sym,
		.fds_map = fds ? m->fds : -1, .mmaps_map = mmaps ? m->mmaps : -1,
		.procs_map = m->procs, .max_stop_ms = max_stop_ms, .agent = s->cfg.agent,
	};

	return exitcheck__process(&env, pid, out);
}

void session__close(struct session *s, bool at_exit, uint64_t *detach_ns, uint64_t *free_ns)
{
	uint64_t t_detach, t_free;

	if (!s)
		return;
	lastref__free(s->lr, &(struct lastref_env){ s->ld, s->col, s->sym, NULL });
	lastref__free(s->lr_prev, &(struct lastref_env){ s->ld, s->col, s->sym, NULL });
	/* -p --agent: each process's allocator calls go straight to its allocator again. */
	agent_attach__stop(&s->injected);
	agent_channels__free(s->cfg.agent);
	free(s->pending);
	scanner__free(s->sc);
	heapctl__free(s->hc);
	attach__free(s->at);
	unwind_store__free(s->uw);
	tracker__free(s->tr);
	collector__free(s->col);
	t_detach = monotonic_ns();
	loader__destroy(s->ld);
	t_free = monotonic_ns();
	if (!at_exit)
		symbolizer__free(s->sym);
	allocs__free(s->al);
	free(s);
	if (detach_ns)
		*detach_ns = t_detach;
	if (free_ns)
		*free_ns = t_free;
}
