// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * format.c - the spelling of numbers, frames, site titles, process flags and hostile
 * strings shared by the TUI, the text report and diff.  Strings from traced processes go
 * out only through fmt__str/fmt__str_buf/fmt__frame/fmt__site_title, which escape them.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "util/escape.h"
#include "view/format.h"

const struct proc_flag_desc proc_flags[PROC_FLAG__COUNT] = {
	[PROC_FLAG_HEAP] = { "heap_growth", 'H', "heap grows" },
	[PROC_FLAG_FD] = { "fd_growth", 'F', "fds grow" },
	[PROC_FLAG_RSS] = { "rss_growth", 'R', "rss grows" },
	[PROC_FLAG_RSS_UNEXPLAINED] = { "rss_growth_unexplained", 'U',
					"rss grows beyond what leaktop tracks" },
	[PROC_FLAG_OOM_KILLED] = { "oom_killed", 'O', "the OOM killer chose it" },
	[PROC_FLAG_ALLOC_RETENTION] = { "allocator_retention", 'A',
					"the allocator holds its heap free" },
};

const char *fmt__bytes(char *buf, size_t len, double bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = fabs(bytes);
	size_t u = 0;

	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	if (!u)
		snprintf(buf, len, "%s%.0f B", bytes < 0 ? "-" : "", v);
	else
		snprintf(buf, len, "%s%.1f %s", bytes < 0 ? "-" : "", v, units[u]);
	return buf;
}

const char *fmt__signed_bytes(char *buf, size_t len, double bytes)
{
	if (bytes < 0 || len < 2)
		return fmt__bytes(buf, len, bytes);
	buf[0] = '+';
	fmt__bytes(buf + 1, len - 1, bytes);
	return buf;
}

const char *fmt__rate(char *buf, size_t len, double per_s, enum fmt_unit unit)
{
	char tmp[FMT_NUM_LEN];

	if (unit == UNIT_BYTES)
		snprintf(buf, len, "%s/s", fmt__signed_bytes(tmp, sizeof(tmp), per_s));
	else
		snprintf(buf, len, "%+.1f fds/s", per_s);
	return buf;
}

const char *fmt__age(char *buf, size_t len, double age_s)
{
	static const struct {
		double below_s;		/* this spelling is for ages under it */
		double big_s, small_s;	/* its two units */
		const char *fmt;
	} forms[] = {
		{ 60, 1, 0, "%.0fs" },
		{ 3600, 60, 1, "%.0fm%02.0fs" },
		{ 86400, 3600, 60, "%.0fh%02.0fm" },
		{ INFINITY, 86400, 3600, "%.0fd%02.0fh" },
	};
	double s = floor(age_s);

	if (!(age_s >= 0) || !isfinite(age_s)) {
		snprintf(buf, len, "-");
		return buf;
	}
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		double big, small;

		if (s >= forms[i].below_s)
			continue;
		big = floor(s / forms[i].big_s);
		small = forms[i].small_s ? floor((s - big * forms[i].big_s) / forms[i].small_s) : 0;
		snprintf(buf, len, forms[i].fmt, big, small);
		break;
	}
	return buf;
}

int fmt__str(FILE *out, const char *s, const char *fallback)
{
	if (!s || !*s)
		return fputs(fallback, out) == EOF ? -EIO : 0;
	return escape__fputs(out, s);
}

const char *fmt__str_buf(char *buf, size_t len, const char *s, const char *fallback)
{
	return escape__str(buf, len, s && *s ? s : fallback);
}

int fmt__frame(FILE *out, unsigned int i, const struct sym_frame *f, enum frame_style style)
{
	fprintf(out, "#%-2u ", i);
	if (style == FRAME_ADDR || !f->symbol)
		fprintf(out, "0x%012" PRIx64 " ", f->addr);
	if (f->symbol) {
		fmt__str(out, f->symbol, "");
		if (!f->python)
			fprintf(out, "+0x%" PRIx64, f->offset);
	} else {
		fputs("(unknown)", out);
	}
	if (f->file) {
		fputc(' ', out);
		fmt__str(out, f->file, "");
		fprintf(out, ":%d", f->line);
	}
	if (f->module) {
		fputs(" [", out);
		fmt__str(out, f->module, "");
		fputc(']', out);
	} else if (f->python) {
		fputs(" [python]", out);
	}
	return ferror(out) ? -EIO : 0;
}

/*
 * The innermost frame (of a Python program's stack, the innermost Python frame).  Without a
 * symbol (a stripped program), the module it is in and the
 * nearest caller that has one say where to look: "(unknown in tmux) < event_base_once".
 */
int fmt__site_title(FILE *out, const struct site *s)
{
	const struct sym_frame *f = s->n_frames ? &s->frames[0] : NULL;
	const char *base;

	/* A Python program's site: its innermost named Python frame (the script's code). */
	for (uint32_t i = 0; i < s->n_frames; i++) {
		if (s->frames[i].python && s->frames[i].symbol) {
			f = &s->frames[i];
			break;
		}
	}

	if (!f)
		return fputs("(stack unknown)", out) == EOF ? -EIO : 0;
	if (f->symbol) {
		fmt__str(out, f->symbol, "");
	} else if (f->module) {
		base = strrchr(f->module, '/');
		fputs("(unknown in ", out);
		fmt__str(out, base ? base + 1 : f->module, "");
		fputc(')', out);
	} else {
		fputs("(unknown)", out);
	}
	if (f->file) {
		fputc(' ', out);
		fmt__str(out, f->file, "");
		fprintf(out, ":%d", f->line);
	}
	for (uint32_t i = 1; !f->symbol && i < s->n_frames; i++) {
		if (s->frames[i].symbol) {
			fputs(" < ", out);
			fmt__str(out, s->frames[i].symbol, "");
			break;
		}
	}
	return ferror(out) ? -EIO : 0;
}

/* Does s hold word, whatever the case? */
static bool has_word(const char *s, const char *word)
{
	size_t n = strlen(word);

	for (; *s; s++)
		if (!strncasecmp(s, word, n))
			return true;
	return false;
}

/*
 * A frame that only passes an allocation on: a wrapper by its name (xmalloc, zmalloc,
 * g_malloc0, PyMem_Malloc, operator new, strdup, ...), or code of the C and C++ runtimes and
 * allocators, which a leak is never fixed in.
 */
static bool passes_on(const struct sym_frame *f)
{
	static const char *const names[] = { "alloc", "operator new", "strdup", "strndup",
					     "memdup" };
	static const char *const runtimes[] = { "libc.so", "libc-", "libstdc++", "libgcc_s",
						"ld-linux", "libjemalloc", "libtcmalloc",
						"libmimalloc", "ld-musl" };
	const char *base = f->module ? strrchr(f->module, '/') : NULL;

	base = base ? base + 1 : f->module;
	for (size_t i = 0; base && i < sizeof(runtimes) / sizeof(runtimes[0]); i++)
		if (!strncmp(base, runtimes[i], strlen(runtimes[i])))
			return true;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (has_word(f->symbol, names[i]))
			return true;
	return false;
}

const char *fmt__site_name(char *buf, size_t len, const struct site *s)
{
	const struct sym_frame *f = NULL;
	const char *file;
	FILE *out;

	/* The innermost named Python frame (the interpreter's C frames below it only run the
	 * script's code), else the innermost named frame that does more than pass the
	 * allocation on (at most 8 deep), else the innermost named one, else the innermost. */
	for (uint32_t i = 0; !f && i < s->n_frames; i++)
		if (s->frames[i].python && s->frames[i].symbol)
			f = &s->frames[i];
	for (uint32_t i = 0; !f && i < s->n_frames && i < 8; i++)
		if (s->frames[i].symbol && !passes_on(&s->frames[i]))
			f = &s->frames[i];
	for (uint32_t i = 0; !f && i < s->n_frames; i++)
		if (s->frames[i].symbol)
			f = &s->frames[i];
	if (!f && s->n_frames)
		f = &s->frames[0];
	out = fmt__line_open(buf, len);
	if (!out)
		return buf;
	if (!f) {
		fputs("(stack unknown)", out);
	} else if (f->symbol) {
		fmt__str(out, f->symbol, "");
		if (f->file && f->line > 0) {
			file = strrchr(f->file, '/');
			fputc(' ', out);
			fmt__str(out, file ? file + 1 : f->file, "");
			fprintf(out, ":%d", f->line);
		}
	} else {
		file = f->module ? strrchr(f->module, '/') : NULL;
		fputs("(unknown in ", out);
		fmt__str(out, file ? file + 1 : f->module, "?");
		fputc(')', out);
	}
	fmt__line_close(out, buf, len);
	return buf;
}

const char *fmt__flag_letters(char *buf, size_t len, unsigned int flags)
{
	size_t n = 0;

	for (int f = 0; f < PROC_FLAG__COUNT && n + 1 < len; f++)
		if (flags & (1u << f))
			buf[n++] = proc_flags[f].letter;
	if (len)
		buf[n] = '\0';
	return buf;
}

int fmt__flag_names(FILE *out, unsigned int flags)
{
	for (int f = 0; f < PROC_FLAG__COUNT; f++)
		if (flags & (1u << f))
			fprintf(out, " [%s]", proc_flags[f].name);
	return ferror(out) ? -EIO : 0;
}

int fmt__flag_by_name(const char *name)
{
	for (int f = 0; f < PROC_FLAG__COUNT; f++)
		if (!strcmp(name, proc_flags[f].name))
			return f;
	return -1;
}

const char *fmt__alloc_slack(char *buf, size_t len, const struct process *p)
{
	const struct heapslack *h = p->scan && p->scan->ok ? &p->scan->result.slack : NULL;
	char held[FMT_NUM_LEN], trim[FMT_NUM_LEN], res[FMT_NUM_LEN], live[FMT_NUM_LEN];
	bool flat = (p->flags & PROC_RSS_GROWTH) && !(p->flags & PROC_HEAP_GROWTH);

	if (!len)
		return buf;
	buf[0] = '\0';
	if (!h || !h->valid)
		return buf;
	snprintf(buf, len, "%s: %s held free by glibc arenas, %s trimmable (of %s resident, %s "
		 "live)%s", flat ? "RSS grows while the live heap is flat" :
		 "the allocator holds its heap free",
		 fmt__bytes(held, sizeof(held), (double)h->free_bytes),
		 fmt__bytes(trim, sizeof(trim), (double)h->trimmable_bytes),
		 fmt__bytes(res, sizeof(res), (double)h->resident_bytes),
		 fmt__bytes(live, sizeof(live), (double)h->live_bytes),
		 h->partial ? "; partial: some heap's headers did not add up" : "");
	return buf;
}

const char *fmt__retainer(char *buf, size_t len, const struct process *p,
			  const struct scan_site *ss, uint32_t i)
{
	const struct scan_retainer *rt = &ss->retainers[i];
	uint64_t reach = ss->bytes[SCAN_REACHABLE];
	char b[FMT_NUM_LEN];
	FILE *f = fmt__line_open(buf, len);

	if (!f)
		return buf;
	fprintf(f, "%.0f%% (%s) held by ", reach ? 100.0 * (double)rt->bytes / (double)reach : 0,
		fmt__bytes(b, sizeof(b), (double)rt->bytes));
	if (rt->root_name[0])
		fmt__str(f, rt->root_name, "?");
	else if (rt->root_reg == SCAN_ROOT_REG_NONE)
		fprintf(f, "0x%" PRIx64, rt->root_addr);
	else
		fprintf(f, "register word %u", rt->root_reg);
	for (uint8_t c = 0; c < rt->n_chain; c++) {
		const struct site *cs = model__heap_site(p, rt->chain[c]);

		fputs(" -> ", f);
		fmt__str(f, cs && cs->n_frames ? cs->frames[0].symbol : NULL, "?");
	}
	if (rt->cut)
		fputs(" -> ...", f);
	fmt__line_close(f, buf, len);
	return buf;
}

FILE *fmt__line_open(char *buf, size_t len)
{
	buf[0] = '\0';
	/* fmemopen bounds every write by len; the last byte is kept for the NUL. */
	return len > 1 ? fmemopen(buf, len - 1, "w") : NULL;
}

void fmt__line_close(FILE *f, char *buf, size_t len)
{
	/* fmemopen ends what it wrote with a NUL inside its len - 1 bytes; the last byte of buf
	 * is outside them, so this always terminates. */
	if (f)
		fclose(f);
	buf[len - 1] = '\0';
}

const char *fmt__cost(char *buf, size_t len, double cost_pct)
{
	if (isnan(cost_pct))
		snprintf(buf, len, "%s", "");
	else
		snprintf(buf, len, " (costs %.2f%% of the CPUs)", cost_pct);
	return buf;
}

/* Heap suspects shown by name in the header, costliest first; the others are counted. */
#define HEAP_SUSPECTS_SHOWN 3

/* ", 1234 name 0.52%": the traced suspects (and picks), costliest first. */
static void suspects_costs(char *buf, size_t len, const struct model *m)
{
	const struct process *top[HEAP_SUSPECTS_SHOWN];
	size_t n = 0, more = 0, at = strlen(buf);
	char comm[64];

	for (size_t i = 0; i < m->n_procs; i++) {
		const struct process *p = &m->procs[i];
		size_t j;

		if (p->exited || p->heap_mode != PROC_HEAP_SUSPECT)
			continue;
		if (n == HEAP_SUSPECTS_SHOWN)
			more++;
		/* Insert by cost (unknown last), pushing the cheapest out when full. */
		for (j = 0; j < n; j++) {
			double c = top[j]->heap_cost_pct;

			if (!isnan(p->heap_cost_pct) && (isnan(c) || p->heap_cost_pct > c))
				break;
		}
		if (j == HEAP_SUSPECTS_SHOWN)
			continue;
		if (n < HEAP_SUSPECTS_SHOWN)
			n++;
		memmove(&top[j + 1], &top[j], (n - 1 - j) * sizeof(*top));
		top[j] = p;
	}
	for (size_t j = 0; j < n && at < len; j++) {
		const char *sep = j ? ", " : ": ";

		escape__str(comm, sizeof(comm), top[j]->comm[0] ? top[j]->comm : "?");
		if (isnan(top[j]->heap_cost_pct))
			snprintf(buf + at, len - at, "%s%u %s ?", sep, top[j]->pid, comm);
		else
			snprintf(buf + at, len - at, "%s%u %s %.2f%%", sep, top[j]->pid, comm,
				 top[j]->heap_cost_pct);
		at = strlen(buf);
	}
	if (more && at < len)
		snprintf(buf + at, len - at, ", %zu more", more);
}

const char *fmt__heap_mode(char *buf, size_t len, const struct model *m)
{
	size_t traced = 0, released = model__heap_released(m), at;

	if (!m->heap_budgeted) {
		snprintf(buf, len, "heap exact");
		return buf;
	}
	for (size_t i = 0; i < m->n_procs; i++)
		traced += !m->procs[i].exited && m->procs[i].heap_mode == PROC_HEAP_SUSPECT;
	if (m->heap_mode == HEAP_MODE_SUSPECTS) {
		snprintf(buf, len, "heap suspects %zu  cost %.2f%%/%.2g%% (exact ~%.2f%%)", traced,
			 m->heap_cost_pct, m->heap_budget_pct, m->heap_exact_cost_pct);
		at = strlen(buf);
		if (released && at < len)
			snprintf(buf + at, len - at, "  released %zu", released);
		suspects_costs(buf, len, m);
	} else if (isnan(m->heap_cost_pct)) {
		snprintf(buf, len, "heap exact  cost ?/%.2g%%", m->heap_budget_pct);
	} else {
		snprintf(buf, len, "heap exact  cost %.2f%%/%.2g%%  bucket %.0f%%",
			 m->heap_cost_pct, m->heap_budget_pct,
			 isnan(m->heap_bucket_fill) ? 100 : 100 * m->heap_bucket_fill);
	}
	return buf;
}

/* "/usr/lib/debug/.build-id/c5/61....debug", where a debug file of build id `id` goes. */
static void debug_file_path(char *buf, size_t len, const char *id)
{
	snprintf(buf, len, "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
}

const char *fmt__symbols_hint(char *buf, size_t len, const struct sym_missing *h)
{
	char id[160] = "no build-id", fix[768], path[320];
	bool has_id = h->build_id && strlen(h->build_id) > 2;

	if (has_id) {
		snprintf(id, sizeof(id), "build-id %s", h->build_id);
		debug_file_path(path, sizeof(path), h->build_id);
	}
	if (h->lookup == SYM_PKG_OWNED && h->debug_package)
		snprintf(fix, sizeof(fix), "apt install %s%s", h->debug_package,
			 symhint__is_dbgsym(h->debug_package) ?
			 " (from the debian-debug archive)" : "");
	else if (h->lookup == SYM_PKG_OWNED)
		snprintf(fix, sizeof(fix), "install the debug symbols of package %s",
			 h->package ? h->package : "?");
	else if (h->lookup == SYM_PKG_NOT_OWNED && has_id)
		snprintf(fix, sizeof(fix), "no installed package owns it, so no debug package "
			 "is known; rebuild it unstripped, or install its debug file as %s", path);
	else if (h->lookup == SYM_PKG_NOT_OWNED)
		snprintf(fix, sizeof(fix), "no installed package owns it, so no debug package "
			 "is known; rebuild it unstripped (keep its .symtab)");
	else if (has_id)
		snprintf(fix, sizeof(fix), "its package is not known; install its debug file as %s",
			 path);
	else
		snprintf(fix, sizeof(fix), "its package is not known; keep its .symtab (do not "
			 "strip it)");
	snprintf(buf, len, "symbols missing for %s (%s): %s", h->module ? h->module : "?", id,
		 fix);
	return buf;
}

/* "function file:line" (the file's last component), or what is known of it. */
static const char *lastref_where(char *buf, size_t len, const struct sym_frame *f)
{
	char sym[112], file[112];
	const char *base = f->file ? strrchr(f->file, '/') : NULL;

	fmt__str_buf(sym, sizeof(sym), f->symbol, "?");
	fmt__str_buf(file, sizeof(file), base ? base + 1 : f->file, "?");
	if (f->symbol && f->file && f->line)
		snprintf(buf, len, "%s %s:%d", sym, file, f->line);
	else if (f->symbol)
		snprintf(buf, len, "%s", sym);
	else
		snprintf(buf, len, "0x%" PRIx64, f->addr);
	return buf;
}

/* The first frame of the moment's stack: where the program was. */
static const struct sym_frame *lastref_at_frame(const struct lastref_result *r)
{
	static const struct sym_frame none;

	return r->n_at ? &r->at[0] : &none;
}

const char *fmt__lastref_line(char *buf, size_t len, const struct lastref_result *r)
{
	const struct lr_cause *c = &r->b.cause;
	char alloc[256], at[256], fr[256], head[360];

	lastref_where(alloc, sizeof(alloc), &r->alloc);
	lastref_where(at, sizeof(at), lastref_at_frame(r));
	snprintf(head, sizeof(head), "last pointer to 0x%" PRIx64 " (allocated at %s)", r->b.addr,
		 alloc);
	switch (c->verdict) {
	case LR_OVERWRITTEN:
		if (c->unwatched)
			snprintf(buf, len, "%s overwritten while not watched, between %.3f s and "
				 "%.3f s (it was at 0x%" PRIx64 ")", head, r->since_s, r->at_s,
				 c->ref.loc);
		else
			snprintf(buf, len, "%s overwritten at %s (it was at 0x%" PRIx64 ", thread %u)",
				 head, at, c->ref.loc, c->tid);
		break;
	case LR_HOLDER_FREED:
		snprintf(buf, len, "%s lost: its holder 0x%" PRIx64 " was freed at %s", head,
			 c->ref.holder, at);
		break;
	case LR_FRAME_RETURNED:
		if (c->unwatched)
			snprintf(buf, len, "%s lost: the frame of %s that held it returned, seen by "
				 "a scan between %.3f s and %.3f s (it was at 0x%" PRIx64 ")", head,
				 lastref_where(fr, sizeof(fr), &r->frame), r->since_s, r->at_s, c->ref.loc);
		else
			snprintf(buf, len, "%s lost: the frame of %s that held it returned (to %s)",
				 head, lastref_where(fr, sizeof(fr), &r->frame), at);
		break;
	case LR_REGISTER_ONLY:
		snprintf(buf, len, "%s lived only in register %s of thread %u at %s: a register "
			 "cannot be watched", head, r->reg[0] ? r->reg : "?", c->ref.tid,
			 lastref_where(fr, sizeof(fr), &r->frame));
		break;
	case LR_FREED:
		snprintf(buf, len, "0x%" PRIx64 " (allocated at %s) was freed at %s: freed, not lost",
			 r->b.addr, alloc, at);
		break;
	default:
		if (c->why[0])	/* given up: a scan that cannot be made, events lost */
			snprintf(buf, len, "0x%" PRIx64 " (allocated at %s): %s", r->b.addr, alloc,
				 c->why);
		else
			snprintf(buf, len, "0x%" PRIx64 " (allocated at %s): unresolved, %u "
				 "reference%s still known", r->b.addr, alloc, r->b.n_refs,
				 r->b.n_refs == 1 ? "" : "s");
		break;
	}
	return buf;
}
