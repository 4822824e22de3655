/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * msg.h - leaktop's one-line messages: the cause, then the fix, on one line of stderr
 * prefixed "leaktop: ", or kept in a caller's buffer for someone else to print.
 */
#ifndef LEAKTOP_MSG_H
#define LEAKTOP_MSG_H

#include <stddef.h>

/* "leaktop: LINE\n" on stderr, control characters escaped (paths in it may be hostile). */
void err_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* LINE into buf (cut to fit); returns ret, so a parser can `return msg__set(...)`. */
int msg__set(char *buf, size_t len, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Why writing path failed (-errno from util/atomic_file or a check before it), with the fix,
 * into buf (without "leaktop: "); returns buf. */
const char *msg__write_failed(char *buf, size_t len, const char *path, int err);

#endif
