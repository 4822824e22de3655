/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * pyproc.h - is a process a CPython 3.11 interpreter, and where are its structures: the
 * `_PyRuntime` and `Py_Version` symbols of its python executable or libpython (their
 * .dynsym), read from the file it maps (opened by live/safe_open.c), and the 3.11 layout of
 * the structures a stack walk reads (bpf/python.bpf.c), checked against python3.11-dbg's
 * DWARF.  Nothing is read from the process's memory.
 */
#ifndef LEAKTOP_PYPROC_H
#define LEAKTOP_PYPROC_H

#include <stdint.h>

#include "bpf/leaktop.h"

/*
 * Fill *out (but its gen) for process pid: 0; -ENOENT when it maps no CPython 3.11 (another
 * version, or no Python), -errno when its maps cannot be read.
 */
int pyproc__find(int pid, struct lt_py_proc *out);

/* The layout for a Py_Version (PY_VERSION_HEX) into *out: 0, or -ENOTSUP for other versions. */
int pyproc__layout(uint64_t version_hex, struct lt_py_proc *out);

#endif
