// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * run.c - the live run: checks, then the interval loop over the live session
 * (live/session.c: the BPF side, the producers, the attach policy): poll it between
 * intervals, have it collect the interval into the sample, fold the sample into the model,
 * analyse, let the heap budget decide, write the outputs (cli/emit.c), answer the TUI;
 * then teardown.
 *
 * Modes (the attach policy, live/attach.c):
 *   whole system  probes on every distinct libc, no pid filter; BPF traces every process but
 *                 leaktop itself; libcs are rescanned now and then for new containers.
 *   -p PID        pid-filtered probes on each process's own libc: other processes never trap.
 *   -- CMD        CMD is held before exec; probes on CMD and every process it forks go in
 *                 first (inherited perf events on tracefs uprobe events: other processes
 *                 never trap), so its first allocation, and each child's, is seen.
 * Under -p and --, a traced process that execs is held (SIGSTOP from BPF) until the probes
 * its new program needs are in, then continued: never left held (the session releases them
 * at exit, on a crash signal, on the second Ctrl-C; the loader's guard on SIGKILL).
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
#include <time.h>
#include <unistd.h>

#include "cli/emit.h"
#include "cli/launcher.h"
#include "cli/metrics_server.h"
#include "cli/oom.h"
#include "cli/preflight.h"
#include "cli/run.h"
#include "cli/signals.h"
#include "core/analysis.h"
#include "core/model.h"
#include "live/agent_channel.h"
#include "live/session.h"
#include "tui/tui.h"
#include "view/format.h"
#include "view/report.h"
#include "util/budget.h"
#include "util/clock.h"
#include "util/msg.h"

#define POLL_SLICE_MS		50
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
/* ... and at least this long from its start, however late the loop saw the signal. */
#define FINAL_AT_LEAST_NS	(100ULL * 1000000ULL)

/* When the loop saw the first stop signal (0: the run ended for another reason), for -v. */
static uint64_t stop_seen_ns;

struct run {
	const struct options *o;
	struct session *sess;		/* the live side */
	struct oom_writer *oom;		/* OOM victims' snapshots */
	uint64_t oom_forced_ns;		/* the last collect an OOM victim started early */
	struct model model;
	struct sample sample;
	struct launcher child;
	bool have_child;
	struct agent_channels *agent;	/* --agent: the channels, until the session owns them */
	char agent_lib[4096];		/* --agent: libleaktop-agent.so */
	struct emitter em;		/* the interval's outputs */
	const struct run_hooks *hooks;	/* a mode built on the run (leaktop lastref), or NULL */
	int hook_status;		/* its step ended the run: 1 failed, 0 done */
	uint64_t last_reach_scan_ns;	/* the last scan of every target (--scan-every) */
};

static struct run_live live_of(struct run *r)
{
	return (struct run_live){ r->sess, &r->model, r->have_child ? &r->child : NULL };
}

/* A lastref line (progress) on the TUI's message line. */
static void lastref_to_tui(void *ctx, const char *line)
{
	struct run *r = ctx;

	if (r->em.tui)
		tui__message(r->em.tui, &r->model, line);
}

/* A lastref verdict on the TUI's message line. */
static void verdict_to_tui(void *ctx, const struct lastref_result *v)
{
	char line[1024];

	lastref_to_tui(ctx, fmt__lastref_line(line, sizeof(line), v));
}

/* The TUI's L: a lastref on the selected heap site; msg says what happened. */
static void start_lastref(struct run *r, char *msg, size_t len)
{
	struct lastref_spec spec = { .max_stop_ms = r->o->scan_max_stop_ms,
				     .out = verdict_to_tui, .say = lastref_to_tui, .ctx = r };
	const struct process *p;
	uint32_t pid, kind;
	int err;

	if (r->hooks) {
		snprintf(msg, len, "this run is a lastref already");
		return;
	}
	if (!tui__selected_site(r->em.tui, &pid, &kind, &spec.site_id) || kind != LT_KIND_HEAP) {
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
	spec.pid = pid;
	err = session__lastref_start(r->sess, &r->model, &spec);
	if (err) {
		snprintf(msg, len, err == -ENOMEM ? "out of memory" : "lastref could not start");
		return;
	}
	snprintf(msg, len, "lastref: following new blocks of site %016" PRIx64 " of process %u; "
		 "verdicts show here", spec.site_id, pid);
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

/* A line about heap tracing or an OOM snapshot: on stderr in batch mode, on the TUI's message
 * line. */
static void say_line(void *ctx, const char *line)
{
	struct run *r = ctx;

	emit__say(&r->em, &r->model, line);
}

/*
 * One interval: the session fills the sample (the maps; events, /proc, images and symbols;
 * the fd census; the scans when due), then the model folds it in and analysis runs.  The
 * final report gets a longer budget; a stop signal still ends optional work at once.
 */
static int collect(struct run *r, bool scan_due, bool final)
{
	struct session_outputs outs = {
		.oom_snapshots_failed = oom_writer__failed(r->oom),
		.oom_snapshots_skipped = oom_writer__skipped(r->oom),
		.oom_snapshots_removed = oom_writer__removed(r->oom),
	};
	uint64_t now_ns = monotonic_ns();
	struct work_budget budget = {
		.deadline_ns = now_ns + (final ? FINAL_BUDGET_NS : COLLECT_BUDGET_NS),
		.stop = &signals__stop,
		.last = final,
	};
	int err;

	if (final && signals__stop) {
		uint64_t until_ns = signals__stop_ns() + FINAL_AFTER_SIGNAL_NS;

		budget.stop = NULL;
		if (until_ns < now_ns + FINAL_AT_LEAST_NS)
			until_ns = now_ns + FINAL_AT_LEAST_NS;
		budget.deadline_ns = until_ns;
	}
	err = session__collect(r->sess, &r->sample, scan_due, &budget, &outs);
	if (err)
		return err;
	err = model__apply(&r->model, &r->sample);
	if (err) {
		err_line("out of memory updating the model");
		return err;
	}
	analysis__run(&r->model);
	return 0;
}

/*
 * Whole-system mode: the overhead budget decides how the heap is traced from now on (after
 * analysis: suspects are the processes it found growing), and carries it out.  Then the
 * model hears how it stands, in every mode.
 */
static void heap_control(struct run *r, bool last)
{
	struct sample_heap h;

	session__heap(r->sess, &r->model, last, &h);
	model__apply_heap(&r->model, &h);
}

/* Keys typed in the TUI; true when the user asked to quit. */
static bool handle_tui(struct run *r)
{
	switch (tui__handle_keys(r->em.tui, &r->model)) {
	case TUI_QUIT:
		return true;
	case TUI_WRITE_SNAPSHOT:
		emit__snapshot_now(&r->em, &r->model);
		return false;
	case TUI_LASTREF: {
		char msg[320];

		start_lastref(r, msg, sizeof(msg));
		tui__message(r->em.tui, &r->model, msg);
		return false;
	}
	case TUI_TOGGLE_HEAP: {
		uint32_t pid = tui__selected_pid(r->em.tui);
		char msg[320];

		if (!model__find_pid(&r->model, pid))
			pid = 0;
		if (!session__heap_toggle(r->sess, &r->model, pid, msg, sizeof(msg)))
			snprintf(msg, sizeof(msg), "every traced process's heap is traced in this "
				 "mode; the key picks processes in whole-system mode");
		tui__message(r->em.tui, &r->model, msg);
		return false;
	}
	case TUI_SCAN: {
		uint32_t pid = tui__selected_pid(r->em.tui);
		char msg[320];

		const struct process *p = pid ? model__find_pid(&r->model, pid) : NULL;

		if (!pid)
			snprintf(msg, sizeof(msg), "no process selected to scan");
		else if (!p)
			snprintf(msg, sizeof(msg), "process %u is not traced any more", pid);
		else
			session__scan_now(r->sess, p->pid, p->gen, msg, sizeof(msg));
		tui__message(r->em.tui, &r->model, msg);
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

/* Does an OOM victim the session heard of want its snapshot's collect now? */
static bool oom_wanted(struct run *r, const struct session_news *news)
{
	size_t n = news->oom_victims;
	size_t known = sizeof(news->oom) / sizeof(news->oom[0]);

	if (n > known)
		return true;
	for (size_t i = 0; i < n; i++)
		if (oom_writer__wants_collect(r->oom, &r->model, news->oom[i].tgid,
					      news->oom[i].gen))
			return true;
	return false;
}

/*
 * Between intervals: poll slices until the next tick (next), the end of -d (end), a stop
 * (signal, CMD's end, q, the mode's hook, --stop-at) or an OOM victim worth collecting for
 * at once.  0 (with *last set when the run ends), or 1 when the ring buffer failed.
 */
static int wait_tick(struct run *r, uint64_t next, uint64_t end, uint64_t interval_ns,
		     bool *last)
{
	struct session_news news;
	int err, slice;

	for (;;) {
		uint64_t now = monotonic_ns();

		if (signals__stop || (r->have_child && launcher__poll(&r->child, false))) {
			if (signals__stop)
				stop_seen_ns = monotonic_ns();
			*last = true;
			return 0;
		}
		/* -d ends at its time, not at the next whole interval. */
		if (now >= end) {
			*last = true;
			return 0;
		}
		if (now >= next)
			return 0;
		slice = ((next < end ? next : end) - now) / 1000000;
		slice = slice > POLL_SLICE_MS ? POLL_SLICE_MS : slice < 1 ? 1 : slice;
		err = session__poll(r->sess, slice, &news);
		if ((r->em.tui && handle_tui(r)) || hook_step(r)) {
			*last = true;
			return 0;
		}
		/* The TUI's lastref (the mode's is its hook's). */
		if (!r->hooks)
			session__lastref_step(r->sess, &r->model);
		if (err < 0 && err != -EINTR) {
			err_line("cannot read lifecycle events: %s", strerror(-err));
			return 1;
		}
		/*
		 * An OOM victim: collect now, while the maps hold all its records; at most once an
		 * interval (a burst of kills is one collect, the others wait for the next tick).
		 */
		if (oom_wanted(r, &news) && now - r->oom_forced_ns >= interval_ns) {
			r->oom_forced_ns = now;
			return 0;
		}
		/* --stop-at stopped its process: the final report, now. */
		if (news.stop_fired) {
			*last = true;
			return 0;
		}
	}
}

/* After a report that was not the last: new allocators followed; does the run end now? */
static bool follow(struct run *r)
{
	const struct options *o = r->o;

	session__follow(r->sess, &r->model);
	if (o->mode == MODE_PIDS && !targets_alive(r)) {
		err_line("every traced process has exited");
		return true;
	}
	return false;
}

/* One interval's report after the wait: 0 goes on, -EPIPE ends well, other errors fail. */
static int report(struct run *r, bool *last)
{
	const struct options *o = r->o;
	uint64_t t_upkeep, t_collect, t_emit;
	bool scan_due;
	int err;

	/* Ending: no process may be stopped from now on with nobody to say so; a lastref's
	 * blocks left get their verdict, in this report's model. */
	if (*last) {
		session__disarm_stop_at(r->sess);
		session__lastref_stop(r->sess, &r->model);
	}
	/* Events already queued (an exit, say) belong in this report, within a slice. */
	session__drain(r->sess, signals__stop ? 0 : POLL_SLICE_MS);
	t_upkeep = monotonic_ns();
	session__upkeep(r->sess, &r->model, &r->sample);
	t_collect = monotonic_ns();
	scan_due = !signals__stop && o->scan_every_s > 0 &&
		   monotonic_ns() - r->last_reach_scan_ns >= o->scan_every_s * 1e9;
	if (collect(r, scan_due, *last))
		return -EIO;
	heap_control(r, *last);
	oom_writer__note_new(r->oom, &r->model);
	oom_writer__write(r->oom, &r->model, say_line, r);
	t_emit = monotonic_ns();
	if (scan_due)
		r->last_reach_scan_ns = monotonic_ns();
	if (o->duration_s > 0 && model__elapsed_s(&r->model) >= o->duration_s)
		*last = true;
	err = emit__interval(&r->em, &r->model);
	if (o->verbose)
		err_line("interval at %.1fs: upkeep %.0f ms, collect %.0f ms (%" PRIu32
			 " stacks, %" PRIu32 " processes deferred), emit %.0f ms, %zu images",
			 model__elapsed_s(&r->model), (t_collect - t_upkeep) / 1e6,
			 (t_emit - t_collect) / 1e6, r->model.stacks_pending,
			 r->model.procs_deferred, (monotonic_ns() - t_emit) / 1e6,
			 r->model.n_procs);
	return err;
}

static int loop(struct run *r)
{
	const struct options *o = r->o;
	uint64_t interval_ns = o->interval_s * 1e9, start = monotonic_ns(), next = start;
	uint64_t end = o->duration_s > 0 ? start + (uint64_t)(o->duration_s * 1e9) : UINT64_MAX;
	bool last = false;
	int err;

	r->model.start_ns = r->model.now_ns = start;
	while (!last) {
		next += interval_ns;
		/* After a stall (a large purge, a stopped terminal), skip the missed ticks. */
		if (next < monotonic_ns())
			next = monotonic_ns() + interval_ns;
		if (wait_tick(r, next, end, interval_ns, &last))
			return 1;
		err = report(r, &last);
		if (err == -EPIPE)	/* the reader of stdout is gone: a normal end */
			return 0;
		if (err)
			return 1;
		model__reported(&r->model);
		/*
		 * A stop signal during a report that was not the last cut its optional work short
		 * (names, /proc): the next turn is the final report, at once, with its own budget.
		 */
		if (o->mode == MODE_COMMAND && command_ended(r))
			last = true;
		if (!last)
			last = follow(r);
	}
	/* The files do not hold the final report. */
	return r->em.files_failed || r->hook_status ? 1 : 0;
}

static int release_child(void *ctx)
{
	return launcher__release(ctx);
}

static const enum attach_mode attach_modes[] = {
	[MODE_SYSTEM] = ATTACH_SYSTEM, [MODE_PIDS] = ATTACH_PIDS, [MODE_COMMAND] = ATTACH_COMMAND,
};

/* The live session for the options (CMD already forked, held): 0 or -errno (said). */
static int open_session(struct run *r, char *cmd_path, size_t path_len)
{
	const struct options *o = r->o;
	bool have_path = o->mode == MODE_COMMAND && !launcher__which(o->cmd[0], cmd_path,
								     path_len);
	struct session_config cfg = {
		.attach = {
			/* --agent: the heap is traced in the processes, with no heap probe. */
			.mode = attach_modes[o->mode],
			.heap = (o->resources & RES_HEAP) && !o->agent,
			.verbose = o->verbose, .pids = o->pids, .n_pids = o->n_pids,
			.child_pid = r->child.pid, .exit_stop = o->exit_stop,
			.cmd_name = o->cmd ? o->cmd[0] : NULL,
			.cmd_path = have_path ? cmd_path : NULL,
			.release_child = release_child, .release_ctx = &r->child,
			.stop = &signals__stop,
		},
		.resources = o->resources, .stack_depth = o->stack_depth,
		.unwind_cfi = o->unwind_cfi, .probe_floor = o->probe_floor, .verbose = o->verbose,
		/*
		 * Shares keep one process from blinding the others on the whole system; with -p
		 * and -- the user chose every traced process, and a big one keeps all its records.
		 */
		.map_share_pct = o->mode == MODE_SYSTEM || o->map_share_set ? o->map_share_pct : 100,
		.interval_s = o->interval_s, .budget_pct = o->budget_pct,
		.max_suspects = o->max_suspects, .exact = o->exact,
		.scan_max_stop_ms = o->scan_max_stop_ms,
		.stop_at = {
			.seq = o->stop_at_seq, .stack_hash = o->stop_at_hash, .fn = o->stop_at_fn,
			.command = o->mode == MODE_COMMAND, .cmd_path = have_path ? cmd_path : NULL,
			.pids = o->pids, .n_pids = o->n_pids,
		},
		.agent = r->agent, .agent_lib = r->agent_lib,
		.say_oom_problem = o->oom_dir || o->verbose,
		.stop = &signals__stop, .say = say_line, .say_ctx = r,
	};

	r->agent = NULL;
	return session__open(&r->sess, &cfg);
}

/* --agent: the library (preloaded with --, injected with -p) and the channel set. */
static int start_agent(struct run *r)
{
	int err;

	if (agent_channels__lib_path(r->agent_lib, sizeof(r->agent_lib))) {
		err_line("%s not found beside leaktop nor in %s; run make (install)", LT_AGENT_LIB,
			 LEAKTOP_AGENTDIR);
		return -ENOENT;
	}
	err = agent_channels__new(&r->agent, r->o->stack_depth);
	if (err)
		err_line("cannot make the agent's socket: %s", strerror(-err));
	return err;
}

/* CMD forked, held before exec; under --agent with the agent preloaded.  0 or -errno. */
static int start_command(struct run *r)
{
	const struct options *o = r->o;
	char agent_env[128];
	struct launcher_env env = {
		.preload = r->agent_lib, .env_name = LT_AGENT_ENV, .env_value = agent_env,
	};

	if (r->agent) {
		env.keep_fd = agent_channels__child_fd(r->agent);
		agent_channels__env(r->agent, agent_env, sizeof(agent_env));
	}
	return launcher__start_env(&r->child, o->cmd, o->stop_at_seq != 0, r->agent ? &env : NULL);
}

/* Everything up to the loop: 0, or the exit status. */
static int start(struct run *r, const char *oom_dir, char *cmd_path, size_t path_len)
{
	const struct options *o = r->o;
	int err;

	if (oom_writer__new(&r->oom, oom_dir, o->oom_dir != NULL, &o->oom)) {
		err_line("out of memory");
		return 1;
	}
	if (o->agent && start_agent(r))
		return 1;
	if (o->mode == MODE_COMMAND) {
		err = start_command(r);
		if (err) {
			err_line("cannot start '%s': %s", o->cmd[0], strerror(-err));
			return 1;
		}
		r->have_child = true;
	}
	if (open_session(r, cmd_path, path_len))
		return 1;
	r->em.build_id = session__build_id;
	r->em.build_id_ctx = r->sess;
	if (!o->batch_set && !o->quiet && isatty(STDOUT_FILENO) && isatty(STDIN_FILENO) &&
	    !(o->json_path && !strcmp(o->json_path, "-")))
		r->em.tui = tui__start();
	signals__tui_active(r->em.tui != NULL);
	if (r->hooks && r->hooks->start) {
		struct run_live lv = live_of(r);

		if (r->hooks->start(r->hooks->ctx, &lv))
			return 1;
	}
	return 0;
}

/* The run ended: hooks, the TUI, CMD, the stop, then the live side.  Returns status. */
static int finish(struct run *r, int status, uint64_t t_report_ns)
{
	const struct options *o = r->o;
	uint64_t t_detach_ns = 0, t_free_ns = 0;
	char how[128];

	/* No process stays held at exec past here (none is held from now on). */
	session__release_held(r->sess);
	session__lastref_stop(r->sess, &r->model);
	if (r->hooks && r->hooks->finish) {
		struct run_live lv = live_of(r);

		r->hooks->finish(r->hooks->ctx, &lv);
	}
	tui__stop(r->em.tui);
	signals__tui_active(false);
	if (r->model.stop.fired) {
		/* The process stays stopped for a debugger: said after the final report. */
		fflush(stdout);
		report__write_stop(stderr, &r->model, true);
	}
	if (r->have_child && !r->child.reaped && !r->model.stop.fired) {
		if (r->child.go_fd > 0) {
			launcher__abort(&r->child);
		} else {
			/*
			 * Tracing stops with CMD (Ctrl-C, SIGTERM, -d, q): pass the signal on,
			 * as a shell would, and let CMD decide.
			 */
			kill(r->child.pid, signals__stop == SIGHUP ? SIGHUP : SIGTERM);
		}
	}
	if (r->have_child && r->child.reaped && status == 0) {
		launcher__describe(&r->child, how, sizeof(how));
		err_line("%s %s", o->cmd[0], how);
	}
	metrics_server__stop(r->em.ms);
	sample__free(&r->sample);
	/* The model and the symbol tables go with the process (run.h): an exit is due. */
	session__close(r->sess, true, &t_detach_ns, &t_free_ns);
	agent_channels__free(r->agent);
	oom_writer__free(r->oom);
	if (o->verbose && signals__stop_ns() && t_report_ns)
		err_line("exit: %.0f ms after the signal: the loop saw it at %.0f ms, final report "
			 "done at %.0f ms, teardown %.0f ms, probes and BPF objects %.0f ms, the "
			 "rest %.0f ms", (monotonic_ns() - signals__stop_ns()) / 1e6,
			 stop_seen_ns ? (stop_seen_ns - signals__stop_ns()) / 1e6 : -1.0,
			 (t_report_ns - signals__stop_ns()) / 1e6,
			 (t_detach_ns - t_report_ns) / 1e6, (t_free_ns - t_detach_ns) / 1e6,
			 (monotonic_ns() - t_free_ns) / 1e6);
	return status;
}

int run__main(const struct options *o)
{
	return run__main_hooked(o, NULL);
}

int run__main_hooked(const struct options *o, const struct run_hooks *hooks)
{
	struct run r = { .o = o, .hooks = hooks, .em = { .o = o } };
	char msg[4200], oom_dir[4096], cmd_path[4096];
	uint64_t t_report_ns = 0;
	int err, status = 1;

	err = preflight__check(o, oom_dir, sizeof(oom_dir));
	if (err)
		return err;
	if (o->listen_len) {
		err = metrics_server__start(&r.em.ms, &o->listen_addr, o->listen_len,
					    o->listen_text, o->listen_auth_path,
					    o->listen_token_path, o->verbose, msg, sizeof(msg));
		if (err) {
			err_line("%s", msg);
			return 1;
		}
	}
	signals__install();
	model__init(&r.model, o->interval_s, o->resources, o->window);
	if (!start(&r, oom_dir, cmd_path, sizeof(cmd_path))) {
		status = loop(&r);
		t_report_ns = monotonic_ns();
		session__finish_stop_at(r.sess, &r.model.stop);
	}
	return finish(&r, status, t_report_ns);
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
