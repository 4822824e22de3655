/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * probes.h - where to put the allocator uprobes in one libc, decided from its ELF file.
 *
 * For each allocator function: its entry (file offset, for the kernel's uprobe API) and, for
 * the functions traced at entry only (free), a later probe point chosen so the kernel can
 * emulate the probed instruction instead of single-stepping it.  The choice is verified by
 * decoding the function with capstone: every instruction before the probe point runs
 * straight through, leaves the argument registers and the stack pointer alone, and no branch
 * in the function lands between the entry and the probe point.  Nothing is hard-coded for
 * one libc build.
 */
#ifndef LEAKTOP_PROBES_H
#define LEAKTOP_PROBES_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "bpf/leaktop.h"

struct probe_fn_plan {
	const char *name;		/* "malloc", ... */
	bool found;			/* the libc exports it */
	uint64_t sym_vaddr;		/* st_value */
	uint64_t entry_offset;		/* file offset of the entry */
	uint64_t probe_offset;		/* file offset of the entry probe (== entry unless moved) */
	bool entry_emulated;		/* instruction at probe_offset is one the kernel emulates */
	int alias_of;			/* index of an earlier fn at the same address, or -1 */
	char insn[48];			/* mnemonic + operands at probe_offset, for -v and bench */
};

struct probe_plan {
	struct probe_fn_plan fn[LT_FN__COUNT];
};

/*
 * Plan probes for the ELF file open at fd (a libc; read with pread, the descriptor is left
 * open and its offset alone).  Only a regular file of at most 256 MiB is read.  0, or
 * -errno (-ENOENT: no malloc and free, not a libc; -EINVAL: not a regular file;
 * -ENOEXEC: not an x86-64 ELF file; -EFBIG: larger).
 */
int probe_plan__build(int fd, struct probe_plan *plan);

/*
 * The pure decision, exposed for unit tests: given the machine code of a function (code,
 * len, loaded at vaddr) and whether the probe may move, return the byte offset (from the
 * entry) of the probe point, and whether that instruction is kernel-emulated.  `arg_regs`
 * is a bitmask of x86-64 argument registers the probe program reads (bit 0 rdi, 1 rsi,
 * 2 rdx, 3 rcx, 4 r8, 5 r9).
 */
int probe_plan__choose_offset(const uint8_t *code, size_t len, uint64_t vaddr, bool may_move,
			      unsigned int arg_regs, size_t *probe_delta, bool *emulated,
			      char *insn, size_t insn_len);

/* Is this instruction one the x86-64 uprobe code emulates (no single-step)? */
bool probe_insn_is_emulated(const uint8_t *code, size_t len);

#endif
