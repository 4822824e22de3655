/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * cfi.h - an executable object's call frame information (.eh_frame) as the rows the BPF
 * unwinder reads (struct lt_unwind_row, bpf/leaktop.h): how to find each pc's CFA, return
 * address and the caller's %rbp, keyed by file offset, sorted.
 */
#ifndef LEAKTOP_CFI_H
#define LEAKTOP_CFI_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/leaktop.h"

/* Largest object whose table is built; and the most rows one table may have. */
#define CFI_MAX_FILE_BYTES	(1ull << 30)
#define CFI_MAX_ROWS		(1u << 22)

struct cfi_table {
	struct lt_unwind_row *rows;	/* sorted by pc, no two neighbours alike */
	size_t n;
	size_t unusable;		/* rows whose rule the unwinder cannot follow (LT_UW_NONE) */
};

/*
 * Build the table of the ELF file open at fd (read only; the descriptor stays the caller's).
 * 0; -ENOEXEC: not an x86-64 ELF object; -ENODATA: it has no .eh_frame_hdr (no CFI to
 * unwind by); -EFBIG: too large; -ENOTSUP: an .eh_frame_hdr encoding not handled; -ENOMEM.
 * An object whose bytes are wrong gives wrong rows, never a crash: the walk checks every
 * return address it finds.
 */
int cfi__build(int fd, struct cfi_table *out);
void cfi__free(struct cfi_table *t);

#endif
