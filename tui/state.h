/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * state.h - what the curses view remembers between draws (its view, selection, sort,
 * filter, message and the requests its keys make of the run loop), shared by the drawing
 * (tui.c) and the keys (keys.c).  Private to tui/.
 */
#ifndef LEAKTOP_TUI_STATE_H
#define LEAKTOP_TUI_STATE_H

#include <stdbool.h>
#include <stdint.h>

enum view {
	VIEW_PROCS,
	VIEW_SITES,
	VIEW_STACK,
};

enum sort_key {
	SORT_EVIDENCE,
	SORT_HEAP,
	SORT_MMAP,
	SORT_GROWTH,
	SORT_RSS,
	SORT_FDS,
	SORT_PID,
	SORT__COUNT,
};

/* The sort keys' names, as the header and the `s` message say them. */
extern const char *const tui_sort_names[SORT__COUNT];

struct tui {
	enum view view;
	int sel;			/* selected row of the current list */
	int top;			/* first row shown */
	int rows;			/* rows in the current list, for paging */
	uint32_t pid;			/* the process of VIEW_SITES / VIEW_STACK */
	uint64_t gen;
	uint32_t site_kind;		/* the site of VIEW_STACK */
	uint64_t site_hash;
	enum sort_key sort;
	char filter[64];
	bool editing;			/* typing a filter */
	char edit[64];
	bool paused;
	bool help;
	bool color;
	bool utf8;
	bool active;
	bool quit;
	bool write;
	bool scan;
	bool toggle_heap;
	bool lastref;
	char msg[200];
	int msg_updates;		/* samples the message stays for */
	bool msg_answer;		/* the message answers a key: no hint replaces it */
	double interval_s;		/* the model's, for how long a message stays */
};

/* A message stays at least this long (and 3 samples), so it can be read at any -i. */
#define MSG_SHOW_S	4.0

/* Show msg (already in t->msg) for a while; answer: it answers a key the user typed. */
static inline void tui__msg_shown(struct tui *t, bool answer)
{
	int n = t->interval_s > 0 ? (int)(MSG_SHOW_S / t->interval_s + 0.999) : 3;

	t->msg_updates = n > 3 ? n : 3;
	t->msg_answer = answer;
}

#endif
