// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * tui.c - a top-style curses view of the model.
 *
 * Two views: the process list (most outstanding heap first) and the call sites of the
 * selected process (each with its allocating frame).  Keys come from a table; the footer
 * lists them.  curses only redraws the cells that changed (no flicker), the view is redrawn
 * on resize, and the terminal is restored on exit (the run loop turns SIGINT/SIGTERM into a
 * normal exit, so tui__stop always runs).
 */
#include <inttypes.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <curses.h>

#include "tui.h"
#include "../user/report.h"

enum view {
	VIEW_PROCS,
	VIEW_SITES,
};

struct tui {
	enum view view;
	int sel;			/* selected row in the current view */
	uint32_t pid;			/* process shown in VIEW_SITES */
	uint64_t gen;
	bool quit;
	bool active;
};

static bool visible_proc(const struct process *p)
{
	return model__visible(p);
}

struct tui *tui__start(void)
{
	struct tui *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	setlocale(LC_ALL, "");
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
	t->active = true;
	return t;
}

void tui__stop(struct tui *t)
{
	if (!t)
		return;
	if (t->active)
		endwin();
	t->active = false;
	free(t);
}

static void draw_header(const struct model *m)
{
	char line[256];
	int n = 0;

	for (size_t i = 0; i < m->n_procs; i++)
		n += visible_proc(&m->procs[i]);
	snprintf(line, sizeof(line), "leaktop %s  elapsed %.0fs  interval %.2gs  processes %d  "
		 "probes %zu  events %" PRIu64 "  ", LEAKTOP_VERSION, model__elapsed_s(m),
		 m->interval_s, n, m->probes_attached, model__events(m));
	mvaddnstr(0, 0, line, COLS);
	if (model__dropped(m))
		attron(A_BOLD | A_REVERSE);
	snprintf(line, sizeof(line), "dropped %" PRIu64, model__dropped(m));
	addnstr(line, COLS - getcurx(stdscr));
	attroff(A_BOLD | A_REVERSE);
	clrtoeol();
}

static void draw_procs(struct tui *t, const struct model *m)
{
	struct process **procs;
	size_t n;
	int row = 2;
	char rss[32], heap[32], line[512];
	int idx = 0;

	attron(A_REVERSE);
	mvprintw(1, 0, "%7s %-16s %10s %5s %12s %9s %-5s %s", "PID", "COMMAND", "RSS", "FDS",
		 "HEAP", "BLOCKS", "LEAK", "CMDLINE");
	clrtoeol();
	attroff(A_REVERSE);
	procs = model__procs_by_outstanding(m, &n);
	for (size_t i = 0; procs && i < n && row < LINES - 1; i++) {
		const struct process *p = procs[i];

		if (!visible_proc(p))
			continue;
		if (idx == t->sel) {
			attron(A_REVERSE);
			t->pid = p->pid;
			t->gen = p->gen;
		}
		snprintf(line, sizeof(line), "%7u %-16.16s %10s %5s %12s %9" PRId64 " %-5s %s",
			 p->pid, p->comm,
			 p->counters.valid ? report__bytes(rss, sizeof(rss), p->counters.rss_bytes)
					   : "-",
			 p->counters.valid ? "" : "-",
			 report__bytes(heap, sizeof(heap), p->heap_outstanding_bytes),
			 p->heap_outstanding_count,
			 (p->flags & (PROC_HEAP_GROWTH | PROC_FD_GROWTH)) ? "yes" :
			 p->flags ? "rss" : "", p->cmdline ? p->cmdline : "");
		if (p->counters.valid) {
			char fds[16];

			snprintf(fds, sizeof(fds), "%5u", p->counters.fd_count);
			memcpy(line + 7 + 1 + 16 + 1 + 10 + 1, fds, 5);
		}
		mvaddnstr(row, 0, line, COLS);
		clrtoeol();
		attroff(A_REVERSE);
		row++;
		idx++;
	}
	if (t->sel >= idx)
		t->sel = idx ? idx - 1 : 0;
	free(procs);
	for (; row < LINES - 1; row++) {
		move(row, 0);
		clrtoeol();
	}
}

static void draw_sites(struct tui *t, const struct model *m)
{
	const struct process *p = model__find((struct model *)m, t->pid, t->gen);
	struct site **sites;
	char b1[32], line[512];
	int row = 2;

	attron(A_REVERSE);
	mvprintw(1, 0, "%4s %4s %12s %9s %9s %9s %11s  %s", "LEAK", "KIND", "OUTSTANDING", "COUNT",
		 "ALLOCS", "FREES", "GROWTH/s", p ? p->comm : "(process gone)");
	clrtoeol();
	attroff(A_REVERSE);
	sites = p ? model__sites_by_outstanding(p) : NULL;
	for (size_t i = 0; sites && i < p->n_sites && row < LINES - 1; i++) {
		const struct site *s = sites[i];
		const struct sym_frame *f = s->n_frames ? &s->frames[0] : NULL;
		char where[256];

		if (f && f->file)
			snprintf(where, sizeof(where), "%s %s:%d", f->symbol ? f->symbol : "?",
				 f->file, f->line);
		else
			snprintf(where, sizeof(where), "%s", f && f->symbol ? f->symbol : "(unknown)");
		if ((int)i == t->sel)
			attron(A_REVERSE);
		snprintf(line, sizeof(line), "%4s %4s %12s %9" PRId64 " %9" PRIu64 " %9" PRIu64
			 " %11.1f  %s", s->flagged ? "*" : "", s->kind == LT_KIND_FD ? "fd" : "heap",
			 s->kind == LT_KIND_FD ? "-" :
			 report__bytes(b1, sizeof(b1), s->val.outstanding_bytes),
			 site__outstanding(s), (uint64_t)s->val.allocs, site__frees(s),
			 s->growth_per_s, where);
		mvaddnstr(row++, 0, line, COLS);
		clrtoeol();
		attroff(A_REVERSE);
	}
	if (sites && t->sel >= (int)p->n_sites)
		t->sel = p->n_sites ? p->n_sites - 1 : 0;
	free(sites);
	for (; row < LINES - 1; row++) {
		move(row, 0);
		clrtoeol();
	}
}

static const char footer[] = "Up/Down select  Enter sites  Esc back  q quit";

void tui__draw(struct tui *t, const struct model *m)
{
	if (!t->active)
		return;
	draw_header(m);
	if (t->view == VIEW_PROCS)
		draw_procs(t, m);
	else
		draw_sites(t, m);
	attron(A_REVERSE);
	mvaddnstr(LINES - 1, 0, footer, COLS);
	clrtoeol();
	attroff(A_REVERSE);
	refresh();
}

static void key_up(struct tui *t)
{
	if (t->sel > 0)
		t->sel--;
}

static void key_down(struct tui *t)
{
	t->sel++;
}

static void key_enter(struct tui *t)
{
	if (t->view == VIEW_PROCS) {
		t->view = VIEW_SITES;
		t->sel = 0;
	}
}

static void key_back(struct tui *t)
{
	if (t->view == VIEW_SITES) {
		t->view = VIEW_PROCS;
		t->sel = 0;
	}
}

static void key_quit(struct tui *t)
{
	t->quit = true;
}

static const struct {
	int key;
	void (*fn)(struct tui *t);
} keys[] = {
	{ KEY_UP, key_up }, { 'k', key_up },
	{ KEY_DOWN, key_down }, { 'j', key_down },
	{ '\n', key_enter }, { KEY_ENTER, key_enter }, { KEY_RIGHT, key_enter },
	{ 27, key_back }, { KEY_BACKSPACE, key_back }, { 127, key_back }, { KEY_LEFT, key_back },
	{ 'q', key_quit }, { 'Q', key_quit },
};

bool tui__handle_keys(struct tui *t, const struct model *m)
{
	int ch;
	bool changed = false;

	if (!t->active)
		return true;
	while ((ch = getch()) != ERR) {
		changed = true;
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (keys[i].key == ch)
				keys[i].fn(t);
	}
	if (changed && !t->quit)
		tui__draw(t, m);
	return !t->quit;
}
