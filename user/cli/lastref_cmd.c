// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * lastref_cmd.c - `leaktop lastref`: a mode of the live run (`leaktop -q -p PID -r heap`,
 * cli/run.c) whose hooks pick the sites named by --site from the model as it symbolizes them,
 * hand their stack hashes to the watch engine (live/watch.c), and say each verdict: a line
 * on stdout as each block is resolved, the -j document at the end.  Progress lines go to
 * stderr.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/lastref_cmd.h"
#include "cli/options.h"
#include "cli/run.h"
#include "core/model.h"
#include "live/symbolize.h"
#include "live/watch.h"
#include "util/clock.h"
#include "util/msg.h"
#include "view/lastref_out.h"

#define LASTREF_DEFAULT_BLOCKS	4
#define LASTREF_INTERVAL	"0.2"	/* the model (and its symbols) follows this closely */

struct lastref {
	struct lastref_args a;
	uint64_t site_id;		/* --site as a stack_id (0: a function name) */
	struct watcher *w;
	uint64_t gen;
	uint64_t start_ns;
	struct lastref_result *results;
	size_t n_results;
	struct run_live lv;		/* the run's, while a hook runs */
	bool ended;			/* the process is gone */
	int watchpoints;		/* the watch engine's self-test: 1, 0, -1 not run */
	unsigned int max_stop_ms;	/* --scan-max-stop (0: SCAN_MAX_STOP_MS) */
	char site_text[24];		/* a site id as text (lastref__new) */
	/* Where its lines go: each verdict (out), and progress (say). */
	lastref_line_fn out, say;
	void *line_ctx;
};

const char *lastref_cmd__usage(void)
{
	return "usage: leaktop lastref -p PID --site SITE [--blocks K] [-d SEC] [-j FILE] [-v]\n"
	       "Trace PID like `leaktop -p PID` and, for up to K new blocks allocated at SITE,\n"
	       "find every word that points into each one, watch those words with hardware\n"
	       "watchpoints, and say where the last pointer to each was lost: overwritten (with\n"
	       "the stack of the write), its holder freed, its stack frame returned, or only in\n"
	       "a register.  Where hardware watchpoints do not fire (it checks at the start),\n"
	       "references are checked by scans only.  Never writes to the process.\n"
	       "  -p PID             process to follow\n"
	       "  --site SITE        a function name in the site's stack, or its stack_id (JSON)\n"
	       "  --blocks K         blocks to follow (1-" OPT_STR(WATCH_MAX_BLOCKS) ", default "
	       OPT_STR(LASTREF_DEFAULT_BLOCKS) ")\n"
	       "  -d SEC             give up after SEC seconds (default: until K are resolved)\n"
	       "  -j FILE            write the verdicts as JSON (leaktop.lastref/1)\n"
	       "  --scan-max-stop MS longest one scan keeps the process stopped (default 2000)\n"
	       "  -v                 say more\n";
}

int lastref_cmd__parse(int argc, char **argv, struct lastref_args *a, char **run_argv,
		       size_t run_max, char *err, size_t len)
{
	size_t n = 0;

	memset(a, 0, sizeof(*a));
	a->blocks = LASTREF_DEFAULT_BLOCKS;
	err[0] = '\0';
	if (run_max < 16)
		return msg__set(err, len, -EINVAL, "internal: argument room");
	run_argv[n++] = "lastref";
	run_argv[n++] = "-q";
	run_argv[n++] = "-r";
	run_argv[n++] = "heap";
	run_argv[n++] = "-i";
	run_argv[n++] = LASTREF_INTERVAL;
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i];
		unsigned long k;

		if (!strcmp(o, "-h") || !strcmp(o, "--help"))
			return 1;
		/* Room for this option, its value and the final NULL (every -v takes one). */
		if (n + 3 >= run_max)
			return msg__set(err, len, -EINVAL, "too many arguments; see leaktop lastref "
					"--help");
		if (!strcmp(o, "-v")) {
			run_argv[n++] = "-v";
			continue;
		}
		if (strcmp(o, "-p") && strcmp(o, "--site") && strcmp(o, "--blocks") &&
		    strcmp(o, "-d") && strcmp(o, "-j") && strcmp(o, "--scan-max-stop"))
			return msg__set(err, len, -EINVAL, "unknown lastref argument '%s'; see leaktop "
					"lastref --help", o);
		if (i + 1 >= argc)
			return msg__set(err, len, -EINVAL, "option '%s' needs a value; see leaktop "
					"lastref --help", o);
		i++;
		if (!strcmp(o, "--site")) {
			if (!argv[i][0])
				return msg__set(err, len, -EINVAL, "empty --site: give a function name "
						"or a stack_id");
			a->site = argv[i];
		} else if (!strcmp(o, "--blocks")) {
			if (options__parse_uint(argv[i], 1, WATCH_MAX_BLOCKS, &k))
				return msg__set(err, len, -EINVAL, "invalid --blocks '%s': expected 1 to "
						"%d", argv[i], WATCH_MAX_BLOCKS);
			a->blocks = k;
		} else if (!strcmp(o, "-j")) {
			if (!argv[i][0] || !strcmp(argv[i], "-"))
				return msg__set(err, len, -EINVAL, "invalid -j '%s': give a file name",
						argv[i]);
			a->json_path = argv[i];
		} else {
			if (!strcmp(o, "-p"))
				a->pid = atoi(argv[i]);
			run_argv[n++] = (char *)o;
			run_argv[n++] = argv[i];
		}
	}
	run_argv[n] = NULL;
	if (!a->pid)
		return msg__set(err, len, -EINVAL, "lastref needs a process; give -p PID");
	if (!a->site)
		return msg__set(err, len, -EINVAL, "lastref needs a call site; give --site FUNCTION "
				"or --site STACK_ID");
	return 0;
}

/* ---------------------------------------------------------------- the hooks */

static void say_line(void *ctx, const char *line)
{
	struct lastref *l = ctx;

	l->say(l->line_ctx, line);
}

static void print_line(void *ctx, const char *line)
{
	printf("%s\n", line);
	fflush(stdout);
}

static void print_err_line(void *ctx, const char *line)
{
	err_line("%s", line);
}

/* Does site s match --site (a function in its stack, or its stack_id)? */
static bool site_matches(const struct lastref *l, const struct site *s)
{
	if (s->kind != LT_KIND_HEAP)
		return false;
	if (l->site_id)
		return s->stack_hash == l->site_id;
	/* As symbolized (C++ demangled: "leak_new()" is named by "leak_new" too). */
	for (uint32_t i = 0; i < s->n_frames; i++) {
		const char *sym = s->frames[i].symbol;
		size_t n = strlen(l->a.site);

		if (sym && !strncmp(sym, l->a.site, n) && (!sym[n] || sym[n] == '('))
			return true;
	}
	return false;
}

static const struct site *site_of(const struct process *p, uint64_t hash)
{
	for (size_t i = 0; i < p->n_sites; i++)
		if (p->sites[i].kind == LT_KIND_HEAP && p->sites[i].stack_hash == hash)
			return &p->sites[i];
	return NULL;
}

static void resolve(struct lastref *l, uint64_t addr, bool ret, struct sym_frame *f)
{
	memset(f, 0, sizeof(*f));
	if (symbolizer__resolve(l->lv.sym, l->gen, addr, ret, f))
		f->addr = addr;
}

static double run_s(const struct lastref *l, uint64_t ns)
{
	return ns > l->start_ns ? (ns - l->start_ns) / 1e9 : 0;
}

/* A block has its verdict: name its places, print its line, keep it for -j. */
static void on_done(void *ctx, const struct lr_block *b)
{
	struct lastref *l = ctx;
	const struct process *p = model__find(l->lv.model, l->a.pid, l->gen);
	const struct site *s = p ? site_of(p, b->stack_hash) : NULL;
	const struct lr_cause *c = &b->cause;
	struct lastref_result *r, *v;
	/* A free's stack starts in the allocator's entry point: its caller is the place. */
	uint32_t skip = c->verdict == LR_HOLDER_FREED || c->verdict == LR_FREED ? 1 : 0;
	char line[1024];

	v = realloc(l->results, (l->n_results + 1) * sizeof(*v));
	if (!v)
		return;
	l->results = v;
	r = &v[l->n_results++];
	memset(r, 0, sizeof(*r));
	r->b = *b;
	if (s && s->n_frames)
		sym_frame__copy(&r->alloc, &s->frames[0]);
	if (c->nr > skip && c->verdict != LR_UNRESOLVED && c->verdict != LR_REGISTER_ONLY) {
		r->at = calloc(c->nr - skip, sizeof(*r->at));
		for (uint32_t i = skip; r->at && i < c->nr; i++)
			resolve(l, c->ips[i], true, &r->at[r->n_at++]);
	}
	if (c->verdict == LR_FRAME_RETURNED)
		resolve(l, c->ref.frame_pc, true, &r->frame);
	if (c->verdict == LR_REGISTER_ONLY) {
		resolve(l, c->ref.ip, false, &r->frame);
		r->reg = watcher__reg_name(c->ref.reg);
	}
	r->at_s = run_s(l, c->at_ns);
	r->since_s = run_s(l, c->since_ns);
	l->out(l->line_ctx, lastref_out__line(line, sizeof(line), r));
}

static int hook_start(void *ctx, const struct run_live *lv)
{
	struct lastref *l = ctx;
	char line[512];

	l->lv = *lv;
	l->start_ns = monotonic_ns();
	snprintf(line, sizeof(line), "lastref: tracing process %d; following up to %u new blocks "
		 "from %s", l->a.pid, l->a.blocks, l->a.site);
	l->say(l->line_ctx, line);
	return 0;
}

static int hook_step(void *ctx, const struct run_live *lv)
{
	struct lastref *l = ctx;
	const struct process *p;
	uint64_t hashes[64];
	size_t n = 0;
	char msg[512];
	int ret;

	l->lv = *lv;
	p = model__find_pid(lv->model, l->a.pid);
	if (!p) {
		/* Not in the model yet (the first interval), or gone. */
		if (l->w && !l->ended) {
			l->ended = true;
			snprintf(msg, sizeof(msg), "lastref: process %d exited", l->a.pid);
			l->say(l->line_ctx, msg);
			return 1;
		}
		return 0;
	}
	if (!l->w) {
		struct watch_config cfg = {
			.pid = l->a.pid, .gen = p->gen, .max_blocks = l->a.blocks,
			.max_stop_ms = l->max_stop_ms,
		};

		l->gen = p->gen;
		ret = watcher__new(&l->w, lv->ld, lv->col, &cfg, say_line, on_done, l, msg,
				   sizeof(msg));
		if (ret) {
			size_t n = strlen(msg);

			snprintf(msg + n, sizeof(msg) - n, "; run leaktop as root on a kernel with "
				 "hardware breakpoints");
			l->say(l->line_ctx, msg);
			return ret;
		}
		l->watchpoints = watcher__hw_fires(l->w);
	}
	for (size_t i = 0; i < p->n_sites && n < sizeof(hashes) / sizeof(hashes[0]); i++)
		if (site_matches(l, &p->sites[i]))
			hashes[n++] = p->sites[i].stack_hash;
	if (n && watcher__set_sites(l->w, hashes, n))
		return -ENOMEM;
	ret = watcher__step(l->w, monotonic_ns(), msg, sizeof(msg));
	if (ret == -ESRCH) {
		l->ended = true;
		snprintf(msg, sizeof(msg), "lastref: process %d exited", l->a.pid);
		l->say(l->line_ctx, msg);
		return 1;
	}
	return ret;
}

static void hook_finish(void *ctx, const struct run_live *lv)
{
	struct lastref *l = ctx;

	l->lv = *lv;
	if (l->w && lv->ld)
		watcher__finish(l->w);
	watcher__free(l->w);
	l->w = NULL;
}

struct lastref *lastref__new(int pid, uint64_t site_id, unsigned int blocks, lastref_line_fn out,
			     lastref_line_fn say, void *ctx)
{
	struct lastref *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->a.pid = pid;
	l->watchpoints = -1;
	l->a.blocks = blocks ? blocks : LASTREF_DEFAULT_BLOCKS;
	snprintf(l->site_text, sizeof(l->site_text), "%016" PRIx64, site_id);
	l->a.site = l->site_text;
	l->site_id = site_id;
	l->out = out;
	l->say = say;
	l->line_ctx = ctx;
	return l;
}

void lastref__set_max_stop(struct lastref *l, unsigned int max_stop_ms)
{
	l->max_stop_ms = max_stop_ms;
}

int lastref__start(struct lastref *l, const struct run_live *lv)
{
	return hook_start(l, lv);
}

int lastref__step(struct lastref *l, const struct run_live *lv)
{
	return hook_step(l, lv);
}

size_t lastref__resolved(const struct lastref *l)
{
	return l->n_results;
}

void lastref__free(struct lastref *l, const struct run_live *lv)
{
	if (!l)
		return;
	hook_finish(l, lv);
	for (size_t i = 0; i < l->n_results; i++)
		lastref_result__free(&l->results[i]);
	free(l->results);
	free(l);
}

int lastref_cmd__main(int argc, char **argv)
{
	char *run_argv[32], err[512];
	struct lastref l = { .out = print_line, .say = print_err_line, .watchpoints = -1 };
	struct run_hooks hooks = { hook_start, hook_step, hook_finish, &l };
	struct options o;
	int ret, status;

	ret = lastref_cmd__parse(argc, argv, &l.a, run_argv, 32, err, sizeof(err));
	if (ret == 1) {
		fputs(lastref_cmd__usage(), stdout);
		return 0;
	}
	if (ret) {
		err_line("%s", err);
		return 2;
	}
	{
		int n = 0;
		char *end;
		unsigned long long id;

		while (run_argv[n])
			n++;
		if (options__parse(n, run_argv, &o, err, sizeof(err))) {
			err_line("%s", err);
			return 2;
		}
		/* 16 hex digits: a stack_id as the JSON gives it. */
		id = strtoull(l.a.site, &end, 16);
		if (strlen(l.a.site) == 16 && !*end)
			l.site_id = id;
	}
	if (o.n_pids != 1) {
		err_line("lastref follows one process; give -p PID");
		return 2;
	}
	l.max_stop_ms = o.scan_max_stop_ms;
	status = run__main_hooked(&o, &hooks);
	if (l.a.json_path) {
		int e = lastref_out__write(l.a.json_path, l.a.pid, l.a.site, l.watchpoints,
					   l.results, l.n_results);

		if (e) {
			err_line("%s", msg__write_failed(err, sizeof(err), l.a.json_path, e));
			status = 1;
		}
	}
	for (size_t i = 0; i < l.n_results; i++)
		lastref_result__free(&l.results[i]);
	free(l.results);
	return status;
}
