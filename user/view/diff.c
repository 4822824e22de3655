// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * diff.c - compares two models (two snapshots read back) and renders the comparison.  It
 * owns how processes and call sites are matched between snapshots and the
 * "leaktop.diff/1" JSON format (described in diff.h).
 *
 * Processes are matched in passes, each over what earlier passes left unmatched, NEW's
 * processes in display order each taking the first fitting OLD one: same pid and start time
 * and command; same pid and start time (an exec changed the command); same command line
 * (another run: pids differ); same comm.  Call sites of a matched pair are matched by a key
 * made of the kind and each frame's module file name, function and source line (offset when
 * the line is unknown): stack ids and addresses change between runs, these do not.  Sites of
 * one side that share a key (frames that could not be resolved) are summed.  Rates divide by
 * the seconds between the snapshots; unknown rates are null in JSON.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "view/diff.h"
#include "view/format.h"
#include "view/snapshot.h"

/* ---------------------------------------------------------------- matching */

static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return a > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static int64_t delta(const struct diff_num *n)
{
	int64_t r;

	if (__builtin_sub_overflow(n->new_, n->old, &r))
		return n->new_ > n->old ? INT64_MAX : INT64_MIN;
	return r;
}

double diff__seconds(const struct snapshot_info *old, const struct snapshot_info *new_)
{
	double wall = new_->time_s - old->time_s, run = new_->elapsed_s - old->elapsed_s;
	bool same_host = !old->host[0] || !new_->host[0] || !strcmp(old->host, new_->host);

	/* `time` has whole seconds: within one run, elapsed_s is the finer clock. */
	if (same_host && run > 0 && fabs(wall - run) <= 1.5)
		return run;
	return wall > 0 ? wall : 0;
}

char *diff__site_key(const struct site *s)
{
	return sym_frames__key(site_kind_name(s->kind), s->frames, s->n_frames);
}

static bool command_eq(const struct process *a, const struct process *b)
{
	if (a->cmdline && b->cmdline && a->cmdline[0] && b->cmdline[0])
		return !strcmp(a->cmdline, b->cmdline);
	return !strcmp(a->comm, b->comm);
}

/* Unknown start times (0) do not tell processes apart: the command must then. */
static bool same_start(const struct process *a, const struct process *b)
{
	if (a->start_ticks && b->start_ticks)
		return a->start_ticks == b->start_ticks;
	return command_eq(a, b);
}

static bool by_pid_start_command(const struct process *a, const struct process *b)
{
	return a->pid == b->pid && same_start(a, b) && command_eq(a, b);
}

static bool by_pid_start(const struct process *a, const struct process *b)
{
	return a->pid == b->pid && a->start_ticks && a->start_ticks == b->start_ticks;
}

static bool by_cmdline(const struct process *a, const struct process *b)
{
	return a->cmdline && b->cmdline && a->cmdline[0] && !strcmp(a->cmdline, b->cmdline);
}

static bool by_comm(const struct process *a, const struct process *b)
{
	return a->comm[0] && !strcmp(a->comm, b->comm);
}

static const struct {
	enum diff_match how;
	bool (*fits)(const struct process *old, const struct process *new_);
} match_passes[] = {
	{ DIFF_MATCH_PID, by_pid_start_command },
	{ DIFF_MATCH_PID, by_pid_start },
	{ DIFF_MATCH_COMMAND, by_cmdline },
	{ DIFF_MATCH_COMMAND, by_comm },
};

struct keyed {
	char *key;
	const struct site *s;
};

static int cmp_keyed(const void *a, const void *b)
{
	return strcmp(((const struct keyed *)a)->key, ((const struct keyed *)b)->key);
}

/* The process's sites with their keys, sorted by key; NULL p gives none. */
static int keyed_sites(const struct process *p, struct keyed **out, size_t *n)
{
	struct keyed *v;

	*out = NULL;
	*n = 0;
	if (!p || !p->n_sites)
		return 0;
	v = calloc(p->n_sites, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < p->n_sites; i++) {
		v[i].s = &p->sites[i];
		v[i].key = diff__site_key(&p->sites[i]);
		if (!v[i].key) {
			for (size_t j = 0; j < i; j++)
				free(v[j].key);
			free(v);
			return -ENOMEM;
		}
	}
	qsort(v, p->n_sites, sizeof(*v), cmp_keyed);
	*out = v;
	*n = p->n_sites;
	return 0;
}

static void keyed_free(struct keyed *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].key);
	free(v);
}

/* The growth a site or process is ranked by: bytes for heap and mmap, descriptors for fd. */
static int64_t site_growth(const struct diff_site *s)
{
	return s->kind == LT_KIND_FD ? delta(&s->count) : delta(&s->bytes);
}

static enum diff_status site_status(const struct diff_site *s)
{
	int64_t g = site_growth(s);

	if (!s->old)
		return DIFF_NEW;
	if (!s->new_)
		return DIFF_VANISHED;
	if (!g)
		g = delta(&s->count);
	return g > 0 ? DIFF_GREW : g < 0 ? DIFF_SHRANK : DIFF_SAME;
}

/* Sites are listed heap first, then mmap, then fd. */
static int kind_rank(unsigned int kind)
{
	static const int rank[] = { [LT_KIND_HEAP] = 0, [LT_KIND_MMAP] = 1, [LT_KIND_FD] = 2 };

	return kind < sizeof(rank) / sizeof(rank[0]) ? rank[kind] : 0;
}

static int cmp_diff_site(const void *a, const void *b)
{
	const struct diff_site *x = a, *y = b;
	int64_t gx = site_growth(x), gy = site_growth(y);

	if (x->kind != y->kind)
		return kind_rank(x->kind) < kind_rank(y->kind) ? -1 : 1;
	if (gx != gy)
		return gx > gy ? -1 : 1;
	if (delta(&x->count) != delta(&y->count))
		return delta(&x->count) > delta(&y->count) ? -1 : 1;
	return strcmp(x->key, y->key);
}

/* Add the sites of one side sharing the key at v[*i] into ds; advances *i past them. */
static void take_sites(struct diff_site *ds, const struct keyed *v, size_t n, size_t *i,
		       bool is_new)
{
	const char *key = v[*i].key;

	for (; *i < n && !strcmp(v[*i].key, key); (*i)++) {
		const struct site *s = v[*i].s;
		int64_t bytes = s->kind == LT_KIND_FD ? 0 : s->outstanding_bytes;

		if (is_new) {
			ds->new_ = ds->new_ ? ds->new_ : s;
			ds->bytes.new_ = sat_add(ds->bytes.new_, bytes);
			ds->count.new_ = sat_add(ds->count.new_, site__outstanding(s));
			ds->bytes.has_new = ds->count.has_new = true;
		} else {
			ds->old = ds->old ? ds->old : s;
			ds->bytes.old = sat_add(ds->bytes.old, bytes);
			ds->count.old = sat_add(ds->count.old, site__outstanding(s));
			ds->bytes.has_old = ds->count.has_old = true;
		}
	}
}

/* Merge-join the sites of old and new (either may be NULL) into dp->sites. */
static int diff_sites(struct diff_proc *dp, const struct process *old, const struct process *new_)
{
	struct keyed *vo = NULL, *vn = NULL;
	size_t no = 0, nn = 0, io = 0, in = 0;
	int ret;

	ret = keyed_sites(old, &vo, &no);
	if (!ret)
		ret = keyed_sites(new_, &vn, &nn);
	if (ret)
		goto out;
	dp->sites = no + nn ? calloc(no + nn, sizeof(*dp->sites)) : NULL;
	if (no + nn && !dp->sites) {
		ret = -ENOMEM;
		goto out;
	}
	while (io < no || in < nn) {
		struct diff_site *ds = &dp->sites[dp->n_sites];
		int c = io == no ? 1 : in == nn ? -1 : strcmp(vo[io].key, vn[in].key);

		ds->key = strdup(c <= 0 ? vo[io].key : vn[in].key);
		if (!ds->key) {
			ret = -ENOMEM;
			goto out;
		}
		dp->n_sites++;
		if (c <= 0)
			take_sites(ds, vo, no, &io, false);
		if (c >= 0)
			take_sites(ds, vn, nn, &in, true);
		ds->kind = (ds->new_ ? ds->new_ : ds->old)->kind;
		ds->status = site_status(ds);
	}
	qsort(dp->sites, dp->n_sites, sizeof(*dp->sites), cmp_diff_site);
out:
	keyed_free(vo, no);
	keyed_free(vn, nn);
	return ret;
}

/* One side's totals of p; res: what that side tracked (a number it did not track is absent). */
static void side_numbers(struct diff_proc *dp, const struct process *p, unsigned int res,
			 bool is_new)
{
	struct {
		struct diff_num *n;
		int64_t v;
		bool known;
	} nums[] = {
		{ &dp->heap_bytes, p->heap_outstanding_bytes, true },
		{ &dp->heap_count, p->heap_outstanding_count, true },
		{ &dp->fds, p->fd_outstanding, res & RES_FD },
		{ &dp->mmap_bytes, p->mmap_outstanding_bytes, res & RES_MMAP },
		{ &dp->mmap_count, p->mmap_outstanding_count, res & RES_MMAP },
	};

	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		if (!nums[i].known)
			continue;
		if (is_new) {
			nums[i].n->new_ = nums[i].v;
			nums[i].n->has_new = true;
		} else {
			nums[i].n->old = nums[i].v;
			nums[i].n->has_old = true;
		}
	}
}

static int cmp_diff_proc(const void *a, const void *b)
{
	const struct diff_proc *x = a, *y = b;
	const struct process *px = x->new_ ? x->new_ : x->old, *py = y->new_ ? y->new_ : y->old;

	if (delta(&x->heap_bytes) != delta(&y->heap_bytes))
		return delta(&x->heap_bytes) > delta(&y->heap_bytes) ? -1 : 1;
	if (delta(&x->mmap_bytes) != delta(&y->mmap_bytes))
		return delta(&x->mmap_bytes) > delta(&y->mmap_bytes) ? -1 : 1;
	if (delta(&x->fds) != delta(&y->fds))
		return delta(&x->fds) > delta(&y->fds) ? -1 : 1;
	if (x->status != y->status)
		return x->status < y->status ? -1 : 1;
	if (px->pid != py->pid)
		return px->pid < py->pid ? -1 : 1;
	return px->gen < py->gen ? -1 : px->gen > py->gen;
}

void diff__free(struct diff *d)
{
	for (size_t i = 0; i < d->n_procs; i++) {
		for (size_t j = 0; j < d->procs[i].n_sites; j++)
			free(d->procs[i].sites[j].key);
		free(d->procs[i].sites);
	}
	free(d->procs);
	memset(d, 0, sizeof(*d));
}

int diff__compute(const struct diff_side *old, const struct diff_side *new_, struct diff *d)
{
	struct process **po = NULL, **pn = NULL;
	const struct process **pair = NULL;	/* by index into pn: its OLD match */
	unsigned int res_old = old->m->resources, res_new = new_->m->resources;
	bool *taken = NULL;
	size_t no = 0, nn = 0;
	int ret = -ENOMEM;

	memset(d, 0, sizeof(*d));
	d->old = *old;
	d->new_ = *new_;
	d->seconds = diff__seconds(old->info, new_->info);
	d->fd = (res_old | res_new) & RES_FD;
	d->mmap = (res_old | res_new) & RES_MMAP;
	po = model__procs_by_outstanding(old->m, &no);
	pn = model__procs_by_outstanding(new_->m, &nn);
	pair = calloc(nn + 1, sizeof(*pair));
	taken = calloc(no + 1, sizeof(*taken));
	d->procs = calloc(no + nn + 1, sizeof(*d->procs));
	if (!po || !pn || !pair || !taken || !d->procs)
		goto out;

	for (size_t k = 0; k < sizeof(match_passes) / sizeof(match_passes[0]); k++) {
		for (size_t i = 0; i < nn; i++) {
			for (size_t j = 0; !pair[i] && j < no; j++) {
				if (taken[j] || !match_passes[k].fits(po[j], pn[i]))
					continue;
				pair[i] = po[j];
				taken[j] = true;
				d->procs[d->n_procs++] = (struct diff_proc){
					.status = DIFF_SAME, .how = match_passes[k].how,
					.old = po[j], .new_ = pn[i],
				};
			}
		}
	}
	d->matched = d->n_procs;
	for (size_t i = 0; i < nn; i++) {
		if (pair[i])
			continue;
		d->procs[d->n_procs++] = (struct diff_proc){ .status = DIFF_NEW, .new_ = pn[i] };
		d->added++;
	}
	for (size_t j = 0; j < no; j++) {
		if (taken[j])
			continue;
		d->procs[d->n_procs++] = (struct diff_proc){ .status = DIFF_VANISHED,
							     .old = po[j] };
		d->vanished++;
	}
	for (size_t i = 0; i < d->n_procs; i++) {
		struct diff_proc *dp = &d->procs[i];

		if (dp->old)
			side_numbers(dp, dp->old, res_old, false);
		if (dp->new_)
			side_numbers(dp, dp->new_, res_new, true);
		ret = diff_sites(dp, dp->old, dp->new_);
		if (ret)
			goto out;
	}
	qsort(d->procs, d->n_procs, sizeof(*d->procs), cmp_diff_proc);
	ret = 0;
out:
	free(po);
	free(pn);
	free(pair);
	free(taken);
	if (ret)
		diff__free(d);
	return ret;
}

/* ---------------------------------------------------------------- text */

static const char *const status_names[] = {
	[DIFF_SAME] = "same", [DIFF_GREW] = "grew", [DIFF_SHRANK] = "shrank",
	[DIFF_NEW] = "new", [DIFF_VANISHED] = "vanished",
};

static const char *const match_names[] = {
	[DIFF_MATCH_NONE] = NULL, [DIFF_MATCH_PID] = "pid", [DIFF_MATCH_COMMAND] = "command",
};

/* ", +410 B/s", or "" when the time between the snapshots is unknown. */
static const char *rate(char *buf, size_t len, const struct diff *d, int64_t change,
			enum fmt_unit unit)
{
	char tmp[FMT_NUM_LEN];

	if (d->seconds <= 0)
		return "";
	snprintf(buf, len, ", %s", fmt__rate(tmp, sizeof(tmp), change / d->seconds, unit));
	return buf;
}

/* One side of a number in bytes, "none" where the thing is absent. */
static const char *side_bytes(char *buf, size_t len, int64_t v, bool has)
{
	return has ? fmt__bytes(buf, len, v) : "none";
}

static const char *side_count(char *buf, size_t len, int64_t v, bool has)
{
	if (!has)
		return "none";
	snprintf(buf, len, "%" PRId64, v);
	return buf;
}

static void write_frames(FILE *out, const struct site *s)
{
	for (uint32_t i = 0; i < s->n_frames; i++) {
		fputs("      ", out);
		fmt__frame(out, i, &s->frames[i], FRAME_ADDR_IF_UNKNOWN);
		fputc('\n', out);
	}
}

static void write_site(FILE *out, const struct diff *d, const struct diff_site *ds)
{
	const struct site *s = ds->new_ ? ds->new_ : ds->old;
	char b1[FMT_NUM_LEN], b2[FMT_NUM_LEN], b3[FMT_NUM_LEN], b4[FMT_NUM_LEN + 2];

	if (ds->kind == LT_KIND_FD)
		fprintf(out, "    %+" PRId64 " fds%s  (%s -> %s)  %s  ", delta(&ds->count),
			rate(b4, sizeof(b4), d, delta(&ds->count), UNIT_FDS),
			side_count(b2, sizeof(b2), ds->count.old, ds->count.has_old),
			side_count(b3, sizeof(b3), ds->count.new_, ds->count.has_new),
			status_names[ds->status]);
	else
		fprintf(out, "    %s%s, %+" PRId64 " %s  (%s -> %s)  %s  ",
			fmt__signed_bytes(b1, sizeof(b1), delta(&ds->bytes)),
			rate(b4, sizeof(b4), d, delta(&ds->bytes), UNIT_BYTES), delta(&ds->count),
			ds->kind == LT_KIND_MMAP ? "mappings" : "blocks",
			side_bytes(b2, sizeof(b2), ds->bytes.old, ds->bytes.has_old),
			side_bytes(b3, sizeof(b3), ds->bytes.new_, ds->bytes.has_new),
			status_names[ds->status]);
	fmt__site_title(out, s);
	fputc('\n', out);
	write_frames(out, s);
}

static void write_proc(FILE *out, const struct diff *d, const struct diff_proc *dp,
		       const struct diff_text_opts *o)
{
	const struct process *p = dp->new_ ? dp->new_ : dp->old;
	char b1[FMT_NUM_LEN], b2[FMT_NUM_LEN], b3[FMT_NUM_LEN], b4[FMT_NUM_LEN + 2];
	char c1[24], c2[24];
	size_t shown = 0, changed = 0;

	fprintf(out, "\nPID ");
	if (dp->old && dp->new_ && dp->old->pid != dp->new_->pid)
		fprintf(out, "%u -> ", dp->old->pid);
	fprintf(out, "%u ", p->pid);
	fmt__str(out, p->comm, "?");
	if (p->cmdline && *p->cmdline) {
		fputs("  [", out);
		fmt__str(out, p->cmdline, "");
		fputc(']', out);
	}
	if (dp->status != DIFF_SAME)
		fprintf(out, "  (%s)", status_names[dp->status]);
	else if (dp->how == DIFF_MATCH_COMMAND)
		fputs("  (matched by command)", out);
	fputc('\n', out);
	fprintf(out, "  heap: %s -> %s (%s%s), blocks %s -> %s (%+" PRId64 ")\n",
		side_bytes(b1, sizeof(b1), dp->heap_bytes.old, dp->heap_bytes.has_old),
		side_bytes(b2, sizeof(b2), dp->heap_bytes.new_, dp->heap_bytes.has_new),
		fmt__signed_bytes(b3, sizeof(b3), delta(&dp->heap_bytes)),
		rate(b4, sizeof(b4), d, delta(&dp->heap_bytes), UNIT_BYTES),
		side_count(c1, sizeof(c1), dp->heap_count.old, dp->heap_count.has_old),
		side_count(c2, sizeof(c2), dp->heap_count.new_, dp->heap_count.has_new),
		delta(&dp->heap_count));
	if (d->mmap && (dp->mmap_bytes.old || dp->mmap_bytes.new_ || dp->mmap_count.old ||
			dp->mmap_count.new_))
		fprintf(out, "  mmap: %s -> %s (%s%s), mappings %s -> %s (%+" PRId64 ")\n",
			side_bytes(b1, sizeof(b1), dp->mmap_bytes.old, dp->mmap_bytes.has_old),
			side_bytes(b2, sizeof(b2), dp->mmap_bytes.new_, dp->mmap_bytes.has_new),
			fmt__signed_bytes(b3, sizeof(b3), delta(&dp->mmap_bytes)),
			rate(b4, sizeof(b4), d, delta(&dp->mmap_bytes), UNIT_BYTES),
			side_count(c1, sizeof(c1), dp->mmap_count.old, dp->mmap_count.has_old),
			side_count(c2, sizeof(c2), dp->mmap_count.new_, dp->mmap_count.has_new),
			delta(&dp->mmap_count));
	if (d->fd && (dp->fds.old || dp->fds.new_))
		fprintf(out, "  fds: %s -> %s (%+" PRId64 "%s)\n",
			side_count(c1, sizeof(c1), dp->fds.old, dp->fds.has_old),
			side_count(c2, sizeof(c2), dp->fds.new_, dp->fds.has_new), delta(&dp->fds),
			rate(b4, sizeof(b4), d, delta(&dp->fds), UNIT_FDS));
	for (size_t i = 0; i < dp->n_sites; i++) {
		if (dp->sites[i].status == DIFF_SAME)
			continue;
		changed++;
		if (o->top_sites && shown >= o->top_sites)
			continue;
		write_site(out, d, &dp->sites[i]);
		shown++;
	}
	if (!changed)
		fputs("    no call site changed\n", out);
	else if (changed > shown)
		fprintf(out, "    (%zu more changed call sites not shown)\n", changed - shown);
}

int diff__write_text(FILE *out, const struct diff *d, const struct diff_text_opts *o)
{
	fputs("leaktop diff  ", out);
	fmt__str(out, d->old.name, "");
	fputs(" (", out);
	fmt__str(out, d->old.info->time, "?");
	fputs(") -> ", out);
	fmt__str(out, d->new_.name, "");
	fputs(" (", out);
	fmt__str(out, d->new_.info->time, "?");
	fputc(')', out);
	if (d->seconds > 0)
		fprintf(out, ", %.1fs apart\n", d->seconds);
	else
		fputs(", time apart unknown (rates not shown)\n", out);
	fprintf(out, "processes: %zu matched, %zu new, %zu vanished\n", d->matched, d->added,
		d->vanished);
	for (size_t i = 0; i < d->n_procs; i++)
		write_proc(out, d, &d->procs[i], o);
	fputc('\n', out);
	return fflush(out) || ferror(out) ? -EIO : 0;
}

/* ---------------------------------------------------------------- JSON */

/* {"old": N|null, "new": N|null, "delta": N, "per_s": X|null} */
static json_t *num_json(const struct diff *d, const struct diff_num *n)
{
	return json_pack("{s:o, s:o, s:I, s:o}",
			 "old", n->has_old ? json_integer(n->old) : json_null(),
			 "new", n->has_new ? json_integer(n->new_) : json_null(),
			 "delta", (json_int_t)delta(n),
			 "per_s", d->seconds > 0 ? json_real(delta(n) / d->seconds) : json_null());
}

static json_t *frames_json(const struct site *s)
{
	json_t *stack = json_array();

	for (uint32_t i = 0; stack && i < s->n_frames; i++)
		json_array_append_new(stack, snapshot__frame(&s->frames[i]));
	return stack;
}

static json_t *site_json(const struct diff *d, const struct diff_site *ds)
{
	json_t *o = json_pack("{s:s, s:s}", "kind", site_kind_name(ds->kind),
			      "status", status_names[ds->status]);

	if (!o)
		return NULL;
	if (ds->kind != LT_KIND_FD)
		json_object_set_new(o, "outstanding_bytes", num_json(d, &ds->bytes));
	json_object_set_new(o, "outstanding_count", num_json(d, &ds->count));
	json_object_set_new(o, "stack", frames_json(ds->new_ ? ds->new_ : ds->old));
	return o;
}

static json_t *proc_json(const struct diff *d, const struct diff_proc *dp)
{
	const struct process *p = dp->new_ ? dp->new_ : dp->old;
	json_t *sites = json_array(), *o;

	for (size_t i = 0; sites && i < dp->n_sites; i++)
		json_array_append_new(sites, site_json(d, &dp->sites[i]));
	o = json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:{s:o, s:o}, s:o, s:o}",
		      "status", dp->status == DIFF_SAME ? "matched" : status_names[dp->status],
		      "matched_by", snapshot__string(match_names[dp->how]),
		      "old_pid", dp->old ? json_integer(dp->old->pid) : json_null(),
		      "new_pid", dp->new_ ? json_integer(dp->new_->pid) : json_null(),
		      "comm", snapshot__string(p->comm[0] ? p->comm : NULL),
		      "cmdline", snapshot__string(p->cmdline),
		      "heap",
		      "outstanding_bytes", num_json(d, &dp->heap_bytes),
		      "outstanding_count", num_json(d, &dp->heap_count),
		      "fd", d->fd ? json_pack("{s:o}", "outstanding_count", num_json(d, &dp->fds))
				  : json_null(),
		      "sites", sites ? sites : json_array());
	if (o)
		json_object_set_new(o, "mmap", d->mmap ?
				    json_pack("{s:o, s:o}",
					      "outstanding_bytes", num_json(d, &dp->mmap_bytes),
					      "outstanding_count", num_json(d, &dp->mmap_count)) :
				    json_null());
	return o;
}

static json_t *side_json(const struct diff_side *s)
{
	return json_pack("{s:o, s:s, s:f, s:o}", "path", snapshot__string(s->name),
			 "time", s->info->time, "elapsed_s", s->info->elapsed_s,
			 "host", snapshot__string(s->info->host[0] ? s->info->host : NULL));
}

int diff__write_json(FILE *out, const struct diff *d)
{
	json_t *procs = json_array(), *root;
	int ret = 0;

	for (size_t i = 0; procs && i < d->n_procs; i++)
		json_array_append_new(procs, proc_json(d, &d->procs[i]));
	root = json_pack("{s:s, s:s, s:o, s:o, s:o, s:{s:I, s:I, s:I}, s:o}",
			 "schema", DIFF_SCHEMA,
			 "leaktop_version", LEAKTOP_VERSION,
			 "old", side_json(&d->old),
			 "new", side_json(&d->new_),
			 "seconds", d->seconds > 0 ? json_real(d->seconds) : json_null(),
			 "summary",
			 "matched", (json_int_t)d->matched,
			 "new", (json_int_t)d->added,
			 "vanished", (json_int_t)d->vanished,
			 "processes", procs ? procs : json_array());
	if (!root)
		return -ENOMEM;
	if (json_dumpf(root, out, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) ||
	    fputc('\n', out) == EOF || fflush(out))
		ret = -EIO;
	json_decref(root);
	return ret;
}
