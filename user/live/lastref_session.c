// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * lastref_session.c - a lastref on the live run (see lastref_session.h): picks the sites named
 * by the spec from the model as it symbolizes them, hands their stack hashes to the watch
 * engine (live/watch.c), and names each verdict's places with the symbolizer.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model.h"
#include "core/sample.h"
#include "live/lastref_session.h"
#include "live/symbolize.h"
#include "live/watch.h"
#include "util/clock.h"
#include "util/vec.h"

struct lastref {
	struct lastref_spec spec;
	struct watcher *w;
	uint64_t gen;
	uint64_t start_ns;
	struct lastref_result *results;
	size_t n_results, cap_results;
	size_t n_collected;		/* results already handed to a sample */
	struct lastref_env env;		/* the run's, while a call runs */
	bool ended;			/* the process is gone */
	int watchpoints;		/* the watch engine's self-test: 1, 0, -1 not run */
	char site_text[24];		/* a site id as text (no name given) */
};

static void say_line(void *ctx, const char *line)
{
	struct lastref *l = ctx;

	l->spec.say(l->spec.ctx, line);
}

/* Does site s match the spec (a function in its stack, or its stack_id)? */
static bool site_matches(const struct lastref *l, const struct site *s)
{
	if (s->kind != LT_KIND_HEAP)
		return false;
	if (l->spec.site_id)
		return s->stack_hash == l->spec.site_id;
	/* As symbolized (C++ demangled: "leak_new()" is named by "leak_new" too). */
	for (uint32_t i = 0; i < s->n_frames; i++) {
		const char *sym = s->frames[i].symbol;
		size_t n = strlen(l->spec.site);

		if (sym && !strncmp(sym, l->spec.site, n) && (!sym[n] || sym[n] == '('))
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
	if (symbolizer__resolve(l->env.sym, l->gen, addr, ret, f))
		f->addr = addr;
}

static double run_s(const struct lastref *l, uint64_t ns)
{
	return ns > l->start_ns ? (ns - l->start_ns) / 1e9 : 0;
}

/* A block has its verdict: name its places, keep it, hand it on. */
static void on_done(void *ctx, const struct lr_block *b)
{
	struct lastref *l = ctx;
	const struct process *p = l->env.model ? model__find(l->env.model, l->spec.pid, l->gen) :
						    NULL;
	const struct site *s = p ? site_of(p, b->stack_hash) : NULL;
	const struct lr_cause *c = &b->cause;
	struct lastref_result *r;
	/* A free's stack starts in the allocator's entry point: its caller is the place. */
	uint32_t skip = c->verdict == LR_HOLDER_FREED || c->verdict == LR_FREED ? 1 : 0;

	if (VEC_RESERVE(l->results, l->cap_results, l->n_results + 1, 4))
		return;
	r = &l->results[l->n_results++];
	memset(r, 0, sizeof(*r));
	r->pid = l->spec.pid;
	r->gen = l->gen;
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
		snprintf(r->reg, sizeof(r->reg), "%s", watcher__reg_name(c->ref.reg));
	}
	r->at_s = run_s(l, c->at_ns);
	r->since_s = run_s(l, c->since_ns);
	l->spec.out(l->spec.ctx, r);
}

struct lastref *lastref__new(const struct lastref_spec *spec)
{
	struct lastref *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->spec = *spec;
	l->watchpoints = -1;
	if (!l->spec.blocks)
		l->spec.blocks = LASTREF_DEFAULT_BLOCKS;
	if (!l->spec.site) {
		snprintf(l->site_text, sizeof(l->site_text), "%016" PRIx64, spec->site_id);
		l->spec.site = l->site_text;
	}
	return l;
}

int lastref__start(struct lastref *l, const struct lastref_env *env)
{
	char line[512];

	l->env = *env;
	l->start_ns = monotonic_ns();
	snprintf(line, sizeof(line), "lastref: tracing process %d; following up to %u new blocks "
		 "from %s", l->spec.pid, l->spec.blocks, l->spec.site);
	l->spec.say(l->spec.ctx, line);
	return 0;
}

/* The process is not in the model: 1 when it was watched (it exited), else 0 (not yet). */
static int process_absent(struct lastref *l)
{
	char msg[128];

	if (!l->w || l->ended)
		return 0;
	l->ended = true;
	snprintf(msg, sizeof(msg), "lastref: process %d exited", l->spec.pid);
	l->spec.say(l->spec.ctx, msg);
	return 1;
}

/* The watch engine for the process's image p: 0 or -errno (said). */
static int watch_start(struct lastref *l, const struct process *p)
{
	struct watch_config cfg = {
		.pid = l->spec.pid, .gen = p->gen, .max_blocks = l->spec.blocks,
		.max_stop_ms = l->spec.max_stop_ms,
	};
	char msg[512];
	int ret;

	l->gen = p->gen;
	ret = watcher__new(&l->w, l->env.ld, l->env.col, &cfg, say_line, on_done, l, msg,
			   sizeof(msg));
	if (ret) {
		size_t n = strlen(msg);

		snprintf(msg + n, sizeof(msg) - n, "; run leaktop as root on a kernel with "
			 "hardware breakpoints");
		l->spec.say(l->spec.ctx, msg);
		return ret;
	}
	l->watchpoints = watcher__hw_fires(l->w);
	return 0;
}

int lastref__step(struct lastref *l, const struct lastref_env *env)
{
	const struct process *p;
	uint64_t hashes[64];
	size_t n = 0;
	char msg[512];
	int ret;

	l->env = *env;
	p = model__find_pid(env->model, l->spec.pid);
	/* Not in the model yet (the first interval), or gone. */
	if (!p)
		return process_absent(l);
	if (!l->w) {
		ret = watch_start(l, p);
		if (ret)
			return ret;
	}
	for (size_t i = 0; i < p->n_sites && n < sizeof(hashes) / sizeof(hashes[0]); i++)
		if (site_matches(l, &p->sites[i]))
			hashes[n++] = p->sites[i].stack_hash;
	if (n && watcher__set_sites(l->w, hashes, n))
		return -ENOMEM;
	ret = watcher__step(l->w, monotonic_ns(), msg, sizeof(msg));
	if (ret == -ESRCH) {
		l->ended = true;
		snprintf(msg, sizeof(msg), "lastref: process %d exited", l->spec.pid);
		l->spec.say(l->spec.ctx, msg);
		return 1;
	}
	return ret;
}

size_t lastref__results(const struct lastref *l, const struct lastref_result **v)
{
	*v = l->results;
	return l->n_results;
}

int lastref__collect(struct lastref *l, struct sample *sm)
{
	struct lastref_result *r;

	for (; l->n_collected < l->n_results; l->n_collected++) {
		r = sample__add_lastref(sm);
		if (!r || lastref_result__copy(r, &l->results[l->n_collected])) {
			if (r)
				sm->n_lastref--;
			return -ENOMEM;
		}
	}
	return 0;
}

int lastref__watchpoints(const struct lastref *l)
{
	return l->watchpoints;
}

void lastref__stop(struct lastref *l, const struct lastref_env *env)
{
	l->env = *env;
	if (l->w && env->ld)
		watcher__finish(l->w);
	watcher__free(l->w);
	l->w = NULL;
}

void lastref__free(struct lastref *l, const struct lastref_env *env)
{
	if (!l)
		return;
	lastref__stop(l, env);
	for (size_t i = 0; i < l->n_results; i++)
		lastref_result__free(&l->results[i]);
	free(l->results);
	free(l);
}
