// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * frame.c - the life of a resolved frame's strings (clearing, copying), and a stack's
 * identity by name.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/frame.h"

void sym_frame__clear(struct sym_frame *f)
{
	free(f->symbol);
	free(f->module);
	free(f->file);
	f->symbol = NULL;
	f->module = NULL;
	f->file = NULL;
	f->offset = 0;
	f->line = 0;
	f->deferred = false;
	f->python = false;
}

static int dup_str(char **dst, const char *src)
{
	*dst = NULL;
	if (!src)
		return 0;
	*dst = strdup(src);
	return *dst ? 0 : -ENOMEM;
}

int sym_frame__copy(struct sym_frame *dst, const struct sym_frame *src)
{
	*dst = (struct sym_frame){ .addr = src->addr, .offset = src->offset, .line = src->line,
				   .deferred = src->deferred, .python = src->python };
	if (dup_str(&dst->symbol, src->symbol) || dup_str(&dst->module, src->module) ||
	    dup_str(&dst->file, src->file)) {
		sym_frame__clear(dst);
		return -ENOMEM;
	}
	return 0;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

char *sym_frames__key(const char *kind, const struct sym_frame *frames, uint32_t n)
{
	char *key = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&key, &len);

	if (!m)
		return NULL;
	fputs(kind, m);
	for (uint32_t i = 0; i < n; i++) {
		const struct sym_frame *fr = &frames[i];

		fprintf(m, "\x1e%s!", fr->module ? base_name(fr->module) : "?");
		if (!fr->symbol)
			fputc('?', m);
		else if (fr->line > 0)
			fprintf(m, "%s:%s:%d", fr->symbol, fr->file ? base_name(fr->file) : "",
				fr->line);
		else
			fprintf(m, "%s+0x%" PRIx64, fr->symbol, fr->offset);
	}
	if (fclose(m)) {
		free(key);
		return NULL;
	}
	return key;
}
