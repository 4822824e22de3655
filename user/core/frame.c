// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * frame.c - the life of a resolved frame's strings: clearing and copying.
 */
#include <errno.h>
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
				   .deferred = src->deferred };
	if (dup_str(&dst->symbol, src->symbol) || dup_str(&dst->module, src->module) ||
	    dup_str(&dst->file, src->file)) {
		sym_frame__clear(dst);
		return -ENOMEM;
	}
	return 0;
}
