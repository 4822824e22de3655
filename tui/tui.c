// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * tui.c - a top-style curses view of the model.
 *
 * Three views, entered with Enter and left with Esc: the processes (clearest leaks first),
 * the call sites of one process, the stack of one site.  Keys come from one table
 * (keys.c), which also writes the footer and the `?` help.  curses sends only the cells that
 * changed (no flicker); a resize redraws; leaking rows are red unless NO_COLOR is set or the
 * terminal has no colours.  The run loop turns Ctrl-C and SIGTERM into a normal exit, so tui__stop
 * always gives the terminal back.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <langinfo.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <curses.h>

#include "tui/keys.h"
#include "tui/state.h"
#include "tui/tui.h"
#include "view/format.h"

#define PAIR_LEAK 1

const char *const tui_sort_names[SORT__COUNT] = {
	"leak", "heap", "mmap", "growth", "rss", "fds", "pid",
};

struct tui *tui__start(void)
{
	struct tui *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	setlocale(LC_ALL, "");
	t->utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
	if (!newterm(NULL, stdout, stdin)) {
		free(t);
		return NULL;
	}
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	set_escdelay(25);
	nodelay(stdscr, TRUE);
	curs_set(0);
	if (has_colors() && !getenv("NO_COLOR")) {
		start_color();
		use_default_colors();
		init_pair(PAIR_LEAK, COLOR_RED, -1);
		t->color = true;
	}
	t->active = true;
	return t;
}

void tui__stop(struct tui *t)
{
	if (!t)
		return;
	if (t->active)
		endwin();
	free(t);
}


/* ------------------------------------------------------------------ drawing helpers */

/* A sparkline of the last `width` values of s into buf (UTF-8 blocks or ASCII). */
static void sparkline(const struct tui *t, const struct series *s, int width, char *buf,
		      size_t len)
{
	static const char *const blocks[8] = { "\u2581", "\u2582", "\u2583", "\u2584",
					       "\u2585", "\u2586", "\u2587", "\u2588" };
	static const char ascii[8] = { '_', '.', ',', ':', '-', '=', '+', '#' };
	uint32_t n = s->n < (uint32_t)width ? s->n : (uint32_t)width;
	double lo = 0, hi = 0, v;
	size_t w = 0;

	buf[0] = '\0';
	for (uint32_t i = 0; i < n; i++) {
		v = s->v[(s->pos + s->cap - n + i) % s->cap];
		if (!i || v < lo)
			lo = v;
		if (!i || v > hi)
			hi = v;
	}
	for (int i = 0; i < width - (int)n && w + 1 < len; i++)
		buf[w++] = ' ';
	for (uint32_t i = 0; i < n; i++) {
		int level;

		v = s->v[(s->pos + s->cap - n + i) % s->cap];
		level = hi > lo ? (int)((v - lo) / (hi - lo) * 7.999) : 0;
		if (t->utf8) {
			if (w + 4 >= len)
				break;
			memcpy(buf + w, blocks[level], 3);
			w += 3;
		} else if (w + 1 < len) {
			buf[w++] = ascii[level];
		}
	}
	buf[w] = '\0';
}

/* Bytes of UTF-8 text that fill at most `cols` screen columns. */
static int bytes_for_cols(const char *text, int cols)
{
	int bytes = 0;

	for (int c = 0; text[bytes] && c < cols; c++) {
		bytes++;
		while ((text[bytes] & 0xc0) == 0x80)
			bytes++;
	}
	return bytes;
}

static void put_line(int row, const char *text, bool selected, bool leak, const struct tui *t)
{
	attr_t a = selected ? A_REVERSE : 0;

	if (leak)
		a |= t->color ? COLOR_PAIR(PAIR_LEAK) | A_BOLD : A_BOLD;
	attron(a);
	mvaddnstr(row, 0, text, bytes_for_cols(text, COLS));
	clrtoeol();
	attroff(a);
}

/* ------------------------------------------------------------------ process list */

static const struct tui *sort_tui;

static int cmp_procs(const void *a, const void *b)
{
	const struct process *x = *(struct process *const *)a, *y = *(struct process *const *)b;
	double dx = 0, dy = 0;

	switch (sort_tui->sort) {
	case SORT_HEAP:
		dx = x->heap_outstanding_bytes, dy = y->heap_outstanding_bytes;
		break;
	case SORT_MMAP:
		dx = x->mmap_outstanding_bytes, dy = y->mmap_outstanding_bytes;
		break;
	case SORT_GROWTH:
		dx = x->heap_growth_per_s, dy = y->heap_growth_per_s;
		break;
	case SORT_RSS:
		dx = x->counters.rss_bytes, dy = y->counters.rss_bytes;
		break;
	case SORT_FDS:
		dx = x->counters.fd_count, dy = y->counters.fd_count;
		break;
	case SORT_PID:
		return x->pid < y->pid ? -1 : x->pid > y->pid;
	default:
		return 0;
	}
	if (dx != dy)
		return dx > dy ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static bool matches_filter(const struct tui *t, const struct process *p)
{
	char pid[16];

	if (!t->filter[0])
		return true;
	snprintf(pid, sizeof(pid), "%u", p->pid);
	return !strcmp(pid, t->filter) || strstr(p->comm, t->filter) ||
	       (p->cmdline && strstr(p->cmdline, t->filter));
}

/* Visible processes in display order; *n set.  Caller frees. */
static struct process **process_rows(const struct tui *t, const struct model *m, size_t *n)
{
	struct process **v = model__procs_by_outstanding(m, n);
	size_t k = 0;

	if (!v)
		return NULL;
	for (size_t i = 0; i < *n; i++)
		if (model__visible(v[i]) && matches_filter(t, v[i]))
			v[k++] = v[i];
	*n = k;
	if (t->sort != SORT_EVIDENCE) {
		sort_tui = t;
		qsort(v, k, sizeof(*v), cmp_procs);
	}
	return v;
}

/* Keep the selection inside the list and on screen. */
static void clamp(struct tui *t, int rows, int height)
{
	t->rows = rows;
	if (t->sel >= rows)
		t->sel = rows - 1;
	if (t->sel < 0)
		t->sel = 0;
	if (t->sel < t->top)
		t->top = t->sel;
	if (height > 0 && t->sel >= t->top + height)
		t->top = t->sel - height + 1;
	if (t->top < 0)
		t->top = 0;
}

/*
 * The process list's columns, left to right.  COMMAND is the whole comm (15 bytes on Linux);
 * the command line takes what is left of the row, as in top and htop.  Sparklines are shown
 * only when the row still leaves the command line CMDLINE_MIN_COLS with them.
 */
#define CMDLINE_MIN_COLS 16

static void cell_pid(const struct tui *t, const struct model *m, const struct process *p,
			char *buf, size_t len)
{
	snprintf(buf, len, "%u", p->pid);
}

static void cell_comm(const struct tui *t, const struct model *m, const struct process *p,
			char *buf, size_t len)
{
	fmt__str_buf(buf, len, p->comm, "?");
}

static void cell_rss(const struct tui *t, const struct model *m, const struct process *p,
			char *buf, size_t len)
{
	if (p->counters.valid)
		fmt__bytes(buf, len, p->counters.rss_bytes);
	else
		snprintf(buf, len, "-");
}

static void cell_rss_trend(const struct tui *t, const struct model *m, const struct process *p,
			char *buf, size_t len)
{
	sparkline(t, &p->hist_rss, 6, buf, len);
}

static void cell_fds(const struct tui *t, const struct model *m, const struct process *p,
			char *buf, size_t len)
{
	if (p->counters.valid)
		snprintf(buf, len, "%u", p->counters.fd_count);
	else
		snprintf(buf, len, "-");
}

static void cell_fds_trend(const struct tui *t, const struct model *m, const struct process *p,
			char *buf, size_t len)
{
	sparkline(t, &p->hist_fd_count, 6, buf, len);
}

static void cell_heap(const struct tui *t, const struct model *m, const struct process *p,
			char *buf, size_t len)
{
	if (m->resources & RES_HEAP)
		fmt__bytes(buf, len, p->heap_outstanding_bytes);
	else
		snprintf(buf, len, "-");
}

static void cell_heap_rate(const struct tui *t, const struct model *m, const struct process *p,
			char *buf, size_t len)
{
	if (m->resources & RES_HEAP)
		fmt__rate(buf, len, p->heap_growth_per_s, UNIT_BYTES);
	else
		snprintf(buf, len, "-");
}

/* Bytes of anonymous private mappings and brk growth still mapped (-r mmap). */
static void cell_mmap(const struct tui *t, const struct model *m, const struct process *p,
			char *buf, size_t len)
{
	if (m->resources & RES_MMAP)
		fmt__bytes(buf, len, p->mmap_outstanding_bytes);
	else
		snprintf(buf, len, "-");
}

static void cell_flags(const struct tui *t, const struct model *m, const struct process *p,
			char *buf, size_t len)
{
	fmt__flag_letters(buf, len, p->flags);
}

static void cell_cmdline(const struct tui *t, const struct model *m, const struct process *p,
			char *buf, size_t len)
{
	fmt__str_buf(buf, len, p->cmdline, "");
}

static const struct proc_column {
	const char *title;
	int width;		/* display columns; negative: left-aligned; 0: the rest */
	bool trend;		/* a sparkline: dropped when the row is narrow */
	void (*cell)(const struct tui *t, const struct model *m, const struct process *p,
		     char *buf, size_t len);
} proc_columns[] = {
	{ "PID", 7, false, cell_pid },
	{ "COMMAND", -15, false, cell_comm },
	{ "RSS", 9, false, cell_rss },
	{ "rss", -6, true, cell_rss_trend },
	{ "FDS", 5, false, cell_fds },
	{ "fds", -6, true, cell_fds_trend },
	{ "HEAP", 9, false, cell_heap },
	{ "HEAP/s", 11, false, cell_heap_rate },
	{ "MMAP", 9, false, cell_mmap },
	{ "FLAGS", -5, false, cell_flags },
	{ "CMDLINE", 0, false, cell_cmdline },
};

#define N_PROC_COLUMNS (sizeof(proc_columns) / sizeof(proc_columns[0]))

/* Are the sparklines shown at this width? */
static bool procs_show_trends(int cols)
{
	int need = CMDLINE_MIN_COLS;

	for (size_t c = 0; c < N_PROC_COLUMNS; c++)
		need += abs(proc_columns[c].width) + (proc_columns[c].width != 0);
	return cols >= need;
}

/* One row of the list into line: titles when p is NULL. */
static void proc_row(const struct tui *t, const struct model *m, const struct process *p,
		     bool trends, char *line, size_t len)
{
	FILE *f = fmt__line_open(line, len);
	char cell[1024];

	if (!f)
		return;
	for (size_t c = 0; c < N_PROC_COLUMNS; c++) {
		const struct proc_column *col = &proc_columns[c];

		if (col->trend && !trends)
			continue;
		if (p)
			col->cell(t, m, p, cell, sizeof(cell));
		else
			snprintf(cell, sizeof(cell), "%s", col->title);
		if (col->trend && p)		/* already as wide as its column */
			fprintf(f, "%s ", cell);
		else if (col->width)
			fprintf(f, "%*s ", col->width, cell);
		else
			fputs(cell, f);
	}
	fmt__line_close(f, line, len);
}

static void draw_procs(struct tui *t, const struct model *m, int y0, int height)
{
	bool trends = procs_show_trends(COLS);
	struct process **rows;
	char line[1024];
	size_t n;

	proc_row(t, m, NULL, trends, line, sizeof(line));
	attron(A_REVERSE);
	mvaddnstr(y0, 0, line, bytes_for_cols(line, COLS));
	clrtoeol();
	attroff(A_REVERSE);
	rows = process_rows(t, m, &n);
	clamp(t, (int)n, height);
	for (int r = 0; r < height; r++) {
		size_t i = t->top + r;
		const struct process *p;

		if (!rows || i >= n) {
			move(y0 + 1 + r, 0);
			clrtoeol();
			continue;
		}
		p = rows[i];
		if ((int)i == t->sel) {
			t->pid = p->pid;
			t->gen = p->gen;
		}
		proc_row(t, m, p, trends, line, sizeof(line));
		put_line(y0 + 1 + r, line, (int)i == t->sel, p->flags != 0, t);
	}
	free(rows);
}

/* ------------------------------------------------------------------ sites and stack */

static const struct process *current_process(const struct tui *t, const struct model *m)
{
	return model__find(m, t->pid, t->gen);
}

/* What names a site, escaped, into buf. */
static void site_where(const struct site *s, char *buf, size_t len)
{
	FILE *f = fmt__line_open(buf, len);

	if (f)
		fmt__site_title(f, s);
	fmt__line_close(f, buf, len);
}

static double site_age_s(const struct model *m, const struct site *s)
{
	if (site__outstanding(s) <= 0 || !s->live_since_ns || s->live_since_ns > m->now_ns)
		return -1;
	return (m->now_ns - s->live_since_ns) / 1e9;
}

static void draw_sites(struct tui *t, const struct model *m, int y0, int height)
{
	const struct process *p = current_process(t, m);
	struct site **sites = p ? model__sites_by_outstanding(p) : NULL;
	char b1[FMT_NUM_LEN], rate[FMT_NUM_LEN], where[512], spark[64], age[FMT_NUM_LEN];
	char comm[64], kind[32], line[1024];
	int n = p ? (int)p->n_sites : 0;

	/* The allocator its heap is traced in, once known. */
	kind[0] = '\0';
	if (p && p->alloc_module)
		snprintf(kind, sizeof(kind), ", %s", fmt__str_buf(b1, sizeof(b1), p->alloc_kind, "?"));
	snprintf(line, sizeof(line), "%-4s %-4s %10s %7s %11s %7s %-6s %s (pid %u%s)", "LEAK",
		 "KIND", "OUTSTAND", "COUNT", "GROWTH/s", "AGE", "trend",
		 p ? fmt__str_buf(comm, sizeof(comm), p->comm, "?") : "(gone)", t->pid, kind);
	attron(A_REVERSE);
	mvaddnstr(y0, 0, line, bytes_for_cols(line, COLS));
	clrtoeol();
	attroff(A_REVERSE);
	clamp(t, n, height);
	for (int r = 0; r < height; r++) {
		int i = t->top + r;
		const struct site *s;
		double a;

		if (!sites || i >= n) {
			move(y0 + 1 + r, 0);
			clrtoeol();
			continue;
		}
		s = sites[i];
		if (i == t->sel) {
			t->site_kind = s->kind;
			t->site_hash = s->stack_hash;
		}
		site_where(s, where, sizeof(where));
		sparkline(t, &s->hist, 6, spark, sizeof(spark));
		a = site_age_s(m, s);
		fmt__age(age, sizeof(age), a);
		fmt__rate(rate, sizeof(rate), s->growth_per_s,
			  s->kind == LT_KIND_FD ? UNIT_FDS : UNIT_BYTES);
		snprintf(line, sizeof(line), "%-4s %-4s %10s %7" PRId64 " %11s %7s %s %s",
			 s->flagged ? "LEAK" : "", site_kind_name(s->kind),
			 s->kind == LT_KIND_FD ? "-" :
			 fmt__bytes(b1, sizeof(b1), s->outstanding_bytes),
			 site__outstanding(s), rate, age, spark, where);
		put_line(y0 + 1 + r, line, i == t->sel, s->flagged, t);
	}
	free(sites);
}

/* The stack view's lines above the frames: the site's counts, and for descriptors their
 * kinds and examples. */
static int stack_summary(const struct site *s, char *line, size_t len, int which)
{
	char b1[FMT_NUM_LEN], b2[FMT_NUM_LEN], rate[FMT_NUM_LEN];
	FILE *f;

	if (which > (s->kind == LT_KIND_FD || (s->kind == LT_KIND_HEAP && s->has_lost)))
		return -ENOENT;
	f = fmt__line_open(line, len);
	if (!f)
		return -ENOMEM;
	if (which == 1 && s->kind == LT_KIND_HEAP) {
		/* The latest scan: its lost blocks, and the definite ones' numbers. */
		fprintf(f, "scan: %" PRIu64 " definitely lost (%s)", s->lost_count[SCAN_DEFINITE],
			fmt__bytes(b1, sizeof(b1), s->lost_bytes[SCAN_DEFINITE]));
		for (uint32_t k = 0; k < s->n_lost_seqs; k++)
			fprintf(f, "%s%" PRIu64, k ? ", " : "  allocations #", s->lost_seqs[k]);
		if (s->n_lost_seqs < s->lost_count[SCAN_DEFINITE] && s->n_lost_seqs)
			fputs(", ...", f);
		fprintf(f, "  indirect %" PRIu64 "  possible %" PRIu64,
			s->lost_count[SCAN_INDIRECT], s->lost_count[SCAN_POSSIBLE]);
	} else if (which == 1) {
		fputs("types:", f);
		for (int k = 0; k < FD_TYPE__COUNT; k++)
			if (s->fd_types[k])
				fprintf(f, " %s %u", fd_type_names[k], s->fd_types[k]);
		for (uint32_t k = 0; k < s->n_fd_samples; k++) {
			fputs(k ? ", " : "  e.g. ", f);
			fmt__str(f, s->fd_samples[k], "?");
		}
	} else if (s->kind == LT_KIND_FD) {
		fprintf(f, "open %" PRId64 "  opens %" PRIu64 "  closes %" PRIu64 "  repaired %"
			PRIu64 "  growth %s", site__outstanding(s), (uint64_t)s->allocs,
			site__frees(s), s->repaired,
			fmt__rate(rate, sizeof(rate), s->growth_per_s, UNIT_FDS));
	} else if (s->kind == LT_KIND_MMAP) {
		fprintf(f, "mapped %s in %" PRId64 " mappings  maps %" PRIu64 "  unmaps %"
			PRIu64 "  mapped in all %s  growth %s",
			fmt__bytes(b1, sizeof(b1), s->outstanding_bytes),
			(int64_t)s->outstanding_count, (uint64_t)s->allocs, (uint64_t)s->frees,
			fmt__bytes(b2, sizeof(b2), s->alloc_bytes),
			fmt__rate(rate, sizeof(rate), s->growth_per_s, UNIT_BYTES));
	} else {
		fprintf(f, "outstanding %s in %" PRId64 " blocks  allocs %" PRIu64 "  frees %"
			PRIu64 "  allocated %s  growth %s",
			fmt__bytes(b1, sizeof(b1), s->outstanding_bytes),
			(int64_t)s->outstanding_count, (uint64_t)s->allocs, (uint64_t)s->frees,
			fmt__bytes(b2, sizeof(b2), s->alloc_bytes),
			fmt__rate(rate, sizeof(rate), s->growth_per_s, UNIT_BYTES));
	}
	fmt__line_close(f, line, len);
	return 0;
}

static void draw_stack(struct tui *t, const struct model *m, int y0, int height)
{
	const struct process *p = current_process(t, m);
	const struct site *s = NULL;
	const struct scan_site *ss;
	char line[1024], comm[64];
	int row = y0, first;

	for (size_t i = 0; p && i < p->n_sites; i++)
		if (p->sites[i].kind == t->site_kind && p->sites[i].stack_hash == t->site_hash)
			s = &p->sites[i];
	snprintf(line, sizeof(line), "%s site %016" PRIx64 " of %s (pid %u)%s",
		 s ? site_kind_name(s->kind) : "heap", t->site_hash,
		 p ? fmt__str_buf(comm, sizeof(comm), p->comm, "?") : "(gone)", t->pid,
		 s && s->flagged ? "  LEAK" : "");
	attron(A_REVERSE);
	mvaddnstr(row++, 0, line, bytes_for_cols(line, COLS));
	clrtoeol();
	attroff(A_REVERSE);
	if (!s) {
		mvaddstr(row++, 0, "this site is gone (its process exited)");
		clrtoeol();
	}
	for (int k = 0; s && !stack_summary(s, line, sizeof(line), k); k++) {
		mvaddnstr(row++, 0, line, bytes_for_cols(line, COLS));
		clrtoeol();
	}
	/* The latest scan: what holds its reachable blocks. */
	ss = s && s->kind == LT_KIND_HEAP ? model__scan_site(p, s->stack_hash) : NULL;
	for (uint32_t k = 0; ss && k < ss->n_retainers && row < y0 + height; k++) {
		char held[sizeof(line) - 8];

		snprintf(line, sizeof(line), "held: %s", fmt__retainer(held, sizeof(held), p, ss, k));
		mvaddnstr(row++, 0, line, bytes_for_cols(line, COLS));
		clrtoeol();
	}
	first = row;
	clamp(t, s ? (int)s->n_frames : 0, height - (first - y0));
	for (; row < y0 + 1 + height; row++) {
		int i = t->top + (row - first);
		FILE *f;

		if (!s || i >= (int)s->n_frames) {
			move(row, 0);
			clrtoeol();
			continue;
		}
		f = fmt__line_open(line, sizeof(line));
		if (f)
			fmt__frame(f, i, &s->frames[i], FRAME_ADDR_IF_UNKNOWN);
		fmt__line_close(f, line, sizeof(line));
		put_line(row, line, i == t->sel, false, t);
	}
}

/* ------------------------------------------------------------------ selection */

bool tui__selected_site(const struct tui *t, uint32_t *pid, uint32_t *kind, uint64_t *hash)
{
	if (!t || t->view == VIEW_PROCS || !t->rows)
		return false;
	*pid = t->pid;
	*kind = t->site_kind;
	*hash = t->site_hash;
	return true;
}

uint32_t tui__selected_pid(const struct tui *t)
{
	return t && t->rows ? t->pid : 0;
}

static void draw_help(const struct model *m, int y0)
{
	char hint[FMT_HINT_LEN], shown[FMT_HINT_LEN], line[256];
	int row = y0;

	attron(A_REVERSE);
	mvaddstr(row++, 0, "Keys (any key closes this help)");
	clrtoeol();
	attroff(A_REVERSE);
	for (size_t i = 0; row < LINES - 1 && !tui_keys__help_line(i, line, sizeof(line)); i++) {
		mvaddnstr(row++, 0, line, bytes_for_cols(line, COLS));
		clrtoeol();
	}
	mvaddstr(row, 0, "  Flags:");
	for (int f = 0; f < PROC_FLAG__COUNT; f++)
		printw("%s %c %s", f ? "," : "", proc_flags[f].letter, proc_flags[f].meaning);
	clrtoeol();
	row++;
	/* Modules whose frames stay unnamed, and what names them. */
	for (size_t i = 0; i < m->n_sym_missing && row < LINES - 1; i++) {
		fmt__str_buf(shown, sizeof(shown),
			     fmt__symbols_hint(hint, sizeof(hint), &m->sym_missing[i]), "");
		mvaddnstr(row++, 0, shown, bytes_for_cols(shown, COLS));
		clrtoeol();
	}
	for (; row < LINES - 1; row++) {
		move(row, 0);
		clrtoeol();
	}
}

static void draw(struct tui *t, const struct model *m)
{
	char line[256];
	int n = 0, height = LINES - 3;
	double elapsed = model__elapsed_s(m);

	if (!t->active)
		return;
	for (size_t i = 0; i < m->n_procs; i++)
		n += model__visible(&m->procs[i]);
	/* Most important first: a narrow terminal cuts the end. */
	snprintf(line, sizeof(line), "leaktop %.0fs @%.2gs  procs %d  probes %zu  ", elapsed,
		 m->interval_s, n, m->probes_attached);
	mvaddnstr(0, 0, line, bytes_for_cols(line, COLS));
	if (model__dropped(m))
		attron(A_BOLD | A_REVERSE);
	snprintf(line, sizeof(line), "dropped %" PRIu64, model__dropped(m));
	addnstr(line, COLS - getcurx(stdscr) > 0 ? COLS - getcurx(stdscr) : 0);
	attroff(A_BOLD | A_REVERSE);
	if (m->heap_budgeted && COLS - getcurx(stdscr) > 0) {
		char heap[256];

		snprintf(line, sizeof(line), "  %s", fmt__heap_mode(heap, sizeof(heap), m));
		addnstr(line, COLS - getcurx(stdscr));
	}
	/* Work the interval's budget left for later: numbers may lag by an interval or two. */
	if ((m->stacks_pending || m->procs_deferred) && COLS - getcurx(stdscr) > 0) {
		snprintf(line, sizeof(line), "  deferred %" PRIu32 " stacks %" PRIu32 " procs",
			 m->stacks_pending, m->procs_deferred);
		addnstr(line, COLS - getcurx(stdscr));
	}
	/* Modules without symbols: `?` lists them with the package that names them. */
	if (m->n_sym_missing && COLS - getcurx(stdscr) > 0) {
		snprintf(line, sizeof(line), "  symbols missing %zu (?)", m->n_sym_missing);
		addnstr(line, COLS - getcurx(stdscr));
	}
	snprintf(line, sizeof(line), "  sort:%s%s%s%s  ev/s %.0f", tui_sort_names[t->sort],
		 t->filter[0] ? " filter:" : "", t->filter, t->paused ? " PAUSED" : "",
		 elapsed > 0 ? model__events(m) / elapsed : 0);
	if (COLS - getcurx(stdscr) > 0)
		addnstr(line, COLS - getcurx(stdscr));
	clrtoeol();
	if (t->help)
		draw_help(m, 1);
	else if (t->view == VIEW_PROCS)
		draw_procs(t, m, 1, height);
	else if (t->view == VIEW_SITES)
		draw_sites(t, m, 1, height);
	else
		draw_stack(t, m, 1, height);
	attron(A_REVERSE);
	if (t->editing)
		snprintf(line, sizeof(line), "filter (name or PID, Enter to apply, Esc to cancel): %s",
			 t->edit);
	else if (!t->msg[0])
		tui_keys__footer(line, sizeof(line), COLS);
	mvaddnstr(LINES - 1, 0, t->editing || !t->msg[0] ? line : t->msg, COLS);
	clrtoeol();
	attroff(A_REVERSE);
	refresh();
}

void tui__message(struct tui *t, const struct model *m, const char *msg)
{
	if (!t)
		return;
	fmt__str_buf(t->msg, sizeof(t->msg), msg, "");	/* it may quote paths */
	tui__msg_shown(t, true);
	draw(t, m);
}

/*
 * Modules found without symbols since the last report: said once on the message line (the
 * hint itself, or how many and what to install), and listed by `?` for good.
 */
static void new_symbols_missing(struct tui *t, const struct model *m)
{
	char msg[FMT_HINT_LEN], pkgs[FMT_HINT_LEN] = "";
	const struct sym_missing *first = NULL;
	size_t n = 0, len = 0;

	for (size_t i = 0; i < m->n_sym_missing; i++) {
		const struct sym_missing *h = &m->sym_missing[i];

		if (h->reported)
			continue;
		first = first ? first : h;
		n++;
		if (h->debug_package && len < sizeof(pkgs))
			len += (size_t)snprintf(pkgs + len, sizeof(pkgs) - len, " %s",
						h->debug_package);
	}
	/* The answer to a key stays; the hint is in the header's count and in `?`'s list. */
	if (!n || (t->msg[0] && t->msg_answer))
		return;
	if (n == 1)
		fmt__symbols_hint(msg, sizeof(msg), first);
	else
		snprintf(msg, sizeof(msg), "symbols missing for %zu modules:%s%s (? lists them)", n,
			 pkgs[0] ? " apt install" : "", pkgs);
	fmt__str_buf(t->msg, sizeof(t->msg), msg, "");
	tui__msg_shown(t, false);
}

void tui__update(struct tui *t, const struct model *m)
{
	if (!t || t->paused)
		return;
	t->interval_s = m->interval_s;
	/* A message stays for a few samples, then the key hints come back. */
	if (t->msg[0] && --t->msg_updates <= 0)
		t->msg[0] = '\0';
	new_symbols_missing(t, m);
	draw(t, m);
}

/* A key typed while editing the filter. */
static void edit_key(struct tui *t, int ch)
{
	size_t len = strlen(t->edit);

	if (ch == '\n' || ch == KEY_ENTER) {
		snprintf(t->filter, sizeof(t->filter), "%s", t->edit);
		t->editing = false;
		t->sel = t->top = 0;
		t->view = VIEW_PROCS;
	} else if (ch == 27) {
		t->editing = false;
	} else if ((ch == KEY_BACKSPACE || ch == 127 || ch == 8) && len) {
		t->edit[len - 1] = '\0';
	} else if (ch < 256 && isprint(ch) && len + 1 < sizeof(t->edit)) {
		t->edit[len] = ch;
		t->edit[len + 1] = '\0';
	}
}

enum tui_request tui__handle_keys(struct tui *t, const struct model *m)
{
	const struct tui_key *key;
	bool changed = false;
	int ch;

	if (!t || !t->active)
		return TUI_NONE;
	while ((ch = getch()) != ERR) {
		changed = true;
		if (ch == KEY_RESIZE) {
			clearok(stdscr, TRUE);
			continue;
		}
		if (t->editing) {
			edit_key(t, ch);
			continue;
		}
		t->msg[0] = '\0';
		if (t->help && ch != '?' && ch != 'h' && ch != 'q') {
			t->help = false;
			continue;
		}
		key = tui_keys__find(ch);
		if (key)
			key->fn(t);
	}
	if (t->quit)
		return TUI_QUIT;
	if (t->write) {
		t->write = false;
		return TUI_WRITE_SNAPSHOT;
	}
	if (t->scan) {
		t->scan = false;
		return TUI_SCAN;
	}
	if (t->toggle_heap) {
		t->toggle_heap = false;
		return TUI_TOGGLE_HEAP;
	}
	if (t->lastref) {
		t->lastref = false;
		return TUI_LASTREF;
	}
	if (changed)
		draw(t, m);
	return TUI_NONE;
}
