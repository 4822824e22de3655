/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * pyframe.h - Python frames in pure logic: the line of an instruction from a code object's
 * location table (CPython 3.11's format, PEP 626 / Objects/locations.md), a str object's
 * characters as UTF-8, and the merge of a stack's Python frames with its native frames in
 * call order (each evaluation of the interpreter's _PyEval_EvalFrameDefault runs the Python
 * frames from the innermost one left up to and including the next entry frame).
 */
#ifndef LEAKTOP_PYFRAME_H
#define LEAKTOP_PYFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/frame.h"

/*
 * The source line of the instruction at `lasti` (in 2-byte code units) of a code object whose
 * first line is `firstlineno`, from the first `len` bytes of its location table.  0 when not
 * known: the instruction has no location, lies past what the table (or the part of it
 * given) covers, or the table is malformed.
 */
int pyframe__line(const uint8_t *table, size_t len, int firstlineno, uint32_t lasti);

/*
 * The characters of a str object (`n` bytes, `kind` bytes per character: 1 Latin-1, 2
 * UCS-2, 4 UCS-4) as NUL-terminated UTF-8 in out (size bytes; cut at a whole character).
 * Control characters and invalid code points become '?'.  The length written.
 */
size_t pyframe__str(unsigned int kind, const void *chars, size_t n, char *out, size_t size);

/* Is this native frame the interpreter's evaluation function (a Python frame runner)? */
bool pyframe__is_eval(const struct sym_frame *f);

/*
 * Merge native[0..n_native) and py[0..n_py) (both innermost first; entry[k]: py[k] is the
 * first frame its evaluation ran) into out (room for n_native + n_py), moving the frames
 * (their strings are out's then): before each evaluation frame of the native stack, the Python
 * frames it runs; Python frames left when the native stack ends (it was cut short) go last.
 * The number of frames in out.
 */
size_t pyframe__merge(const struct sym_frame *native, size_t n_native, const struct sym_frame *py,
		      const bool *entry, size_t n_py, struct sym_frame *out);

#endif
