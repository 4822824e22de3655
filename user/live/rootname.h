/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * rootname.h - names the roots of a scan's retention paths (core/scan.h): a module's global
 * or static variable by its symbol (.symtab, else .dynsym) and section, a thread's stack
 * frame by function and thread, a thread's register, its TLS, or other memory.
 */
#ifndef LEAKTOP_ROOTNAME_H
#define LEAKTOP_ROOTNAME_H

#include <stddef.h>

#include "core/scan.h"

struct proc_maps;
struct ptrace_thread;

/*
 * Name the root of every retainer of r's sites: pid's maps, the scan's copies (regions) and
 * its stopped threads' registers (as copied, in the order of the root words).  Names are
 * the process's own strings (symbols, thread names): views escape them.  Never fails: what
 * cannot be named is SCAN_ROOT_MEMORY with its address.
 */
void rootname__name(int pid, const struct proc_maps *maps, const struct scan_region *regions,
		    size_t n_regions, const struct ptrace_thread *threads, size_t n_threads,
		    struct scan_result *r);

/* What rootname__key needs: pid's maps and its stopped threads. */
struct rootname_keys {
	const struct proc_maps *maps;
	const struct ptrace_thread *threads;
	size_t n_threads;
};

/*
 * The key retention paths aggregate a root word at addr under (a scan_root_key_fn, ctx a
 * struct rootname_keys): the start of its mapping for memory that is neither a module's
 * (data, bss), nor a thread's stack or TLS (an untracked heap, an anonymous mapping); addr
 * itself otherwise.
 */
uint64_t rootname__key(void *ctx, uint64_t addr);

#endif
