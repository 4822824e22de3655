/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * keys.h - the curses view's keys: one table (key, name, footer hint, help text, handler)
 * that dispatches a key and writes both the footer and the `?` help, so neither can miss a
 * key.  Private to tui/.
 */
#ifndef LEAKTOP_TUI_KEYS_H
#define LEAKTOP_TUI_KEYS_H

#include <stddef.h>

struct tui;

struct tui_key {
	int key;		/* a character or a curses KEY_ code */
	const char *name;	/* as `?` lists it; NULL: an alias of the entry above */
	const char *footer;	/* "key:word" in the footer; NULL: a moving key, only in `?` */
	const char *help;	/* what `?` says it does */
	void (*fn)(struct tui *t);
};

extern const struct tui_key tui_keys[];
extern const size_t tui_n_keys;

/* The entry of key ch, NULL if the key does nothing. */
const struct tui_key *tui_keys__find(int ch);
/*
 * The footer's key hints for a row of cols columns into buf: every entry with a footer hint,
 * in table order, as "key:word"; when that is wider than cols, the words go, first to last,
 * until it fits (the keys themselves always stay: the row cuts the end).  Returns buf.
 */
char *tui_keys__footer(char *buf, size_t len, int cols);
/* Line i (0..) of the `?` help's key list into buf: "  NAME       HELP"; -ENOENT after the
 * last. */
int tui_keys__help_line(size_t i, char *buf, size_t len);

#endif
