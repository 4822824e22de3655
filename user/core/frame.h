/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * frame.h - one resolved stack frame as the model holds it: the address, and the function,
 * module, file and line the symbolizer found for it (NULL or 0 when unknown).  Pure data:
 * the symbolizer fills frames, the model keeps them, the views print them.
 */
#ifndef LEAKTOP_FRAME_H
#define LEAKTOP_FRAME_H

#include <stdbool.h>
#include <stdint.h>

struct sym_frame {
	uint64_t addr;		/* runtime address as captured */
	char *symbol;		/* demangled function name, NULL when unknown */
	uint64_t offset;	/* addr - function start; meaningful only when symbol != NULL */
	char *module;		/* path of the mapped file as the process saw it, NULL if unknown */
	char *file;		/* source file, NULL when unknown */
	int line;		/* source line, 0 when unknown */
	bool deferred;		/* only located (addr, module): symbol, file, line not looked up yet */
	bool python;		/* a Python frame: symbol is the code's qualified name, file and
				 * line its source, module NULL, addr its code object's address */
};

/* Free the strings of f and mark it unknown (the address stays). */
void sym_frame__clear(struct sym_frame *f);
/* A deep copy of src in dst (strings duplicated).  0 or -ENOMEM (dst then cleared). */
int sym_frame__copy(struct sym_frame *dst, const struct sym_frame *src);
/*
 * A stack's identity across runs (addresses differ, names do not): kind, then per frame the
 * module's base name and function:file:line (function+offset without a line; "?" unknown).
 * `leaktop diff` matches sites by it and `leaktop check --baseline` findings.  Malloc'd;
 * NULL: out of memory.
 */
char *sym_frames__key(const char *kind, const struct sym_frame *frames, uint32_t n);

#endif
