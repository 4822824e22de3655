/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * cfi.h - an executable object's call frame information (.eh_frame) as the rows the BPF
 * unwinder reads (struct lt_unwind_row, bpf/leaktop.h): how to find each pc's CFA, return
 * address and the caller's %rbp, keyed by file offset, sorted.  A table is built in steps,
 * each ending by a deadline the caller gives, so no object holds up its caller's loop.
 */
#ifndef LEAKTOP_CFI_H
#define LEAKTOP_CFI_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/leaktop.h"

/*
 * Largest object whose table is built; the largest one not root's (it is copied: see
 * cfi.c); and the most rows one table may have.
 */
#define CFI_MAX_FILE_BYTES	(1ull << 30)
#define CFI_MAX_COPY_BYTES	(256ull << 20)
#define CFI_MAX_ROWS		(1u << 22)
/*
 * Rows of one FDE (one function) followed at most: libdw finds each row by interpreting the
 * FDE from its start, so one FDE costs the square of its rows.  The largest of Debian 12's
 * 2,200 objects in /usr has 6,678 (cc1); the rest of a longer one is left to frame pointers.
 */
#define CFI_MAX_FDE_ROWS	16384
/*
 * Build time (CPU) one object may take in all its steps: the largest tables of Debian's
 * objects (libLLVM, cc1: a million rows) take 250 ms.  Past it the object has no table.
 */
#define CFI_MAX_BUILD_NS	(1000ull * 1000000)

struct cfi_table {
	struct lt_unwind_row *rows;	/* sorted by pc, no two neighbours alike */
	size_t n;
	size_t unusable;		/* rows whose rule the unwinder cannot follow (LT_UW_NONE) */
	size_t cut_fdes;		/* FDEs cut at CFI_MAX_FDE_ROWS (LT_UW_NONE past the cut) */
	uint64_t build_ns;		/* CPU time the build took */
};

struct cfi_build;

/*
 * Start building the table of the ELF file open at fd: mapped if only root can change
 * it, else copied into memory (a file truncated meanwhile is an error, not a SIGBUS); the
 * descriptor is not used after this returns (it stays the caller's).  0 and *out;
 * -ENOEXEC: not an x86-64 ELF object; -ENODATA: it has no .eh_frame_hdr (no CFI to unwind
 * by); -EFBIG: too large; -ENOTSUP: an .eh_frame_hdr encoding not handled; -ENOMEM.
 */
int cfi__start(int fd, struct cfi_build **out);
/*
 * Go on building until done or deadline_ns (monotonic_ns()) passes; the clock is read every
 * few rows.  0: done, the table in *out (the build is freed); -EINPROGRESS: not done, call
 * again; any other -errno: given up, the build is freed: -ETIME: it took CFI_MAX_BUILD_NS,
 * -ENODATA: no usable row, -E2BIG: more than CFI_MAX_ROWS rows, -ENOMEM.  An object whose
 * bytes are wrong gives wrong rows, never a crash: the walk checks every return address.
 */
int cfi__step(struct cfi_build *b, uint64_t deadline_ns, struct cfi_table *out);
void cfi__cancel(struct cfi_build *b);
/* Both in one go, for at most budget_ns: the errors of either, and -ETIME past the budget. */
int cfi__build(int fd, uint64_t budget_ns, struct cfi_table *out);
void cfi__free(struct cfi_table *t);

#endif
