// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * msg.c - the one-line error messages: printing them (escaped: they quote paths and names
 * from traced processes), keeping them for later, and the wording shared by every output
 * file leaktop writes.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/escape.h"
#include "util/msg.h"

void err_line(const char *fmt, ...)
{
	char *line = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&line, fmt, ap);
	va_end(ap);
	fputs("leaktop: ", stderr);
	escape__fputs(stderr, n >= 0 ? line : "out of memory formatting a message");
	fputc('\n', stderr);
	if (n >= 0)
		free(line);
}

int msg__set(char *buf, size_t len, int ret, const char *fmt, ...)
{
	va_list ap;

	if (!buf || !len)
		return ret;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return ret;
}

const char *msg__write_failed(char *buf, size_t len, const char *path, int err)
{
	if (err == -ELOOP)
		snprintf(buf, len, "refusing to write %s: it is a symbolic link; remove it or "
			 "choose another path", path);
	else if (err == -EISDIR)
		snprintf(buf, len, "cannot write %s: not a regular file; choose another path",
			 path);
	else
		snprintf(buf, len, "cannot write %s: %s; check the directory exists and is "
			 "writable", path, strerror(-err));
	return buf;
}
