// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * keys.c - the curses view's keys: what each does to the view's state, and the one table
 * that binds them, from which the footer's hints and the `?` help are written.  A key added
 * to the table is in both; the only entries the footer leaves to `?` are the moving keys.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <curses.h>

#include "tui/keys.h"
#include "tui/state.h"

static void key_up(struct tui *t) { t->sel--; }
static void key_down(struct tui *t) { t->sel++; }
static void key_page_up(struct tui *t) { t->sel -= LINES - 4; }
static void key_page_down(struct tui *t) { t->sel += LINES - 4; }
static void key_home(struct tui *t) { t->sel = 0; }
static void key_end(struct tui *t) { t->sel = t->rows - 1; }
static void key_quit(struct tui *t) { t->quit = true; }
static void key_help(struct tui *t) { t->help = !t->help; }
static void key_write(struct tui *t) { t->write = true; }
static void key_scan(struct tui *t) { t->scan = true; }
static void key_toggle_heap(struct tui *t) { t->toggle_heap = true; }
static void key_lastref(struct tui *t) { t->lastref = true; }

static void key_enter(struct tui *t)
{
	if (t->view == VIEW_STACK || !t->rows)
		return;
	t->view = t->view == VIEW_PROCS ? VIEW_SITES : VIEW_STACK;
	t->sel = t->top = 0;
}

static void key_back(struct tui *t)
{
	if (t->help) {
		t->help = false;
		return;
	}
	if (t->view == VIEW_PROCS)
		return;
	t->view = t->view == VIEW_STACK ? VIEW_SITES : VIEW_PROCS;
	t->sel = t->top = 0;
}

static void key_sort_next(struct tui *t)
{
	t->sort = (t->sort + 1) % SORT__COUNT;
	snprintf(t->msg, sizeof(t->msg), "sorted by %s", tui_sort_names[t->sort]);
	tui__msg_shown(t, true);
}

static void key_sort_prev(struct tui *t)
{
	t->sort = (t->sort + SORT__COUNT - 1) % SORT__COUNT;
	snprintf(t->msg, sizeof(t->msg), "sorted by %s", tui_sort_names[t->sort]);
	tui__msg_shown(t, true);
}

static void key_pause(struct tui *t)
{
	t->paused = !t->paused;
	snprintf(t->msg, sizeof(t->msg), "%s", t->paused ? "paused: the view is frozen, "
		 "tracing goes on (p resumes)" : "resumed");
	tui__msg_shown(t, true);
}

static void key_filter(struct tui *t)
{
	t->editing = true;
	t->edit[0] = '\0';
}

const struct tui_key tui_keys[] = {
	{ KEY_UP, "Up/Down", NULL, "move the selection", key_up },
	{ 'k', NULL, NULL, NULL, key_up },
	{ KEY_DOWN, NULL, NULL, NULL, key_down },
	{ 'j', NULL, NULL, NULL, key_down },
	{ KEY_PPAGE, "PgUp/PgDn", NULL, "move a page", key_page_up },
	{ KEY_NPAGE, NULL, NULL, NULL, key_page_down },
	{ KEY_HOME, "Home/End", NULL, "first / last row", key_home },
	{ KEY_END, NULL, NULL, NULL, key_end },
	{ '\n', "Enter", "Enter:open", "open: process -> its call sites -> a site's stack",
	  key_enter },
	{ KEY_ENTER, NULL, NULL, NULL, key_enter },
	{ KEY_RIGHT, NULL, NULL, NULL, key_enter },
	{ 27, "Esc/Bksp", "Esc:back", "back", key_back },
	{ KEY_BACKSPACE, NULL, NULL, NULL, key_back },
	{ 127, NULL, NULL, NULL, key_back },
	{ KEY_LEFT, NULL, NULL, NULL, key_back },
	{ 's', "s, >, <", "s:sort", "change the sort of the process list", key_sort_next },
	{ '>', NULL, NULL, NULL, key_sort_next },
	{ '<', NULL, NULL, NULL, key_sort_prev },
	{ '/', "/", "/:filter", "filter processes by name or PID (empty: all)", key_filter },
	{ 'p', "p", "p:pause", "pause the view (tracing goes on)", key_pause },
	{ 'w', "w", "w:write", "write a JSON snapshot now", key_write },
	{ 'S', "S", "S:scan", "scan the selected process for lost blocks (stops it briefly)",
	  key_scan },
	{ 'L', "L", "L:lastref", "where the last pointer to new blocks of the selected heap "
	  "site is lost (hardware watchpoints; stops the process briefly)", key_lastref },
	{ 't', "t", "t:heap", "trace / untrace the selected process's heap (whole-system mode)",
	  key_toggle_heap },
	{ '?', "?", "?:help", "this help", key_help },
	{ 'h', NULL, NULL, NULL, key_help },
	{ 'q', "q", "q:quit", "quit", key_quit },
};

const size_t tui_n_keys = sizeof(tui_keys) / sizeof(tui_keys[0]);

const struct tui_key *tui_keys__find(int ch)
{
	for (size_t i = 0; i < tui_n_keys; i++)
		if (tui_keys[i].key == ch)
			return &tui_keys[i];
	return NULL;
}

/* The footer with the words of the first `bare` hinted entries left out. */
static size_t footer_with(char *buf, size_t len, size_t bare)
{
	size_t w = 0, hinted = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < tui_n_keys; i++) {
		const char *hint = tui_keys[i].footer;
		int n;

		if (!hint)
			continue;
		n = hinted++ < bare ? (int)strcspn(hint, ":") : (int)strlen(hint);
		if (w < len)
			w += (size_t)snprintf(buf + w, len - w, "%s%.*s", w ? " " : "", n, hint);
	}
	return w;
}

char *tui_keys__footer(char *buf, size_t len, int cols)
{
	size_t hinted = 0;

	if (!len)
		return buf;
	for (size_t i = 0; i < tui_n_keys; i++)
		hinted += tui_keys[i].footer != NULL;
	for (size_t bare = 0; bare <= hinted; bare++)
		if (footer_with(buf, len, bare) <= (size_t)(cols > 0 ? cols : 0) || bare == hinted)
			break;
	return buf;
}

int tui_keys__help_line(size_t i, char *buf, size_t len)
{
	for (size_t k = 0; k < tui_n_keys; k++) {
		if (!tui_keys[k].name || i--)
			continue;
		snprintf(buf, len, "  %-10s %s", tui_keys[k].name, tui_keys[k].help);
		return 0;
	}
	return -ENOENT;
}
