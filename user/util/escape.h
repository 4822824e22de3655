/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * escape.h - what a traced process controls (comm, cmdline, symbols, file and mapping
 * paths, fd targets) shown on a terminal without letting it drive the terminal: control
 * characters (C0, DEL, C1), bidirectional overrides and bytes that are not UTF-8 come out
 * as \xHH, one escape per byte; everything else, backslashes included, as it is.  The one
 * place this policy lives: the formatting module (view/format.h) and the error lines
 * (util/msg.h) both print through it.  JSON output is jansson's to escape.
 */
#ifndef LEAKTOP_ESCAPE_H
#define LEAKTOP_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define ESCAPE_MAX 16	/* longest display of one character: a 4-byte one, escaped */

/*
 * The next character of s (not at its end): how many bytes of s it takes (returned) and
 * how it is shown, *shown bytes long, in out (NUL-terminated).
 */
size_t escape__next(const char *s, char out[ESCAPE_MAX], size_t *shown);
/* Would s be shown differently from its bytes? */
bool escape__needed(const char *s);
/* s on out, escaped; 0 or -EIO. */
int escape__fputs(FILE *out, const char *s);
/* s escaped into buf, cut at a character so that it fits (len > 0); returns buf. */
const char *escape__str(char *buf, size_t len, const char *s);

#endif
