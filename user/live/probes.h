/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * probes.h - where to put the allocator uprobes in one object (a libc, jemalloc, tcmalloc,
 * mimalloc, a static executable, ...), decided from its ELF file.
 *
 * For each allocator entry point it defines (malloc family, C++ operators, the allocator's
 * own API): its entry (file offset, for the kernel's uprobe API) and, for
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

/* Allocator families: whose API a name belongs to. */
enum probe_family {
	PROBE_FAM_STD,			/* malloc, free, ...: the C library's names */
	PROBE_FAM_CXX,			/* operator new / delete, every variant */
	PROBE_FAM_JE,			/* jemalloc's non-standard API: mallocx, sdallocx, je_* */
	PROBE_FAM_TC,			/* tcmalloc's tc_* */
	PROBE_FAM_MI,			/* mimalloc's mi_* */
	PROBE_FAM__COUNT,
};

/* Entries of the probe table (user/live/probes.c), at most. */
#define PROBE_MAX_FNS		128

struct probe_fn_plan {
	const char *name;		/* the symbol: "malloc", "_Znwm", "sdallocx", ... */
	enum lt_alloc_fn fn;		/* its shape: how its arguments and result are read */
	enum probe_family family;
	bool found;			/* the object defines it */
	bool exported;			/* ... in .dynsym (others may bind to it) */
	uint64_t sym_vaddr;		/* st_value */
	uint64_t entry_offset;		/* file offset of the entry */
	uint64_t probe_offset;		/* file offset of the entry probe (== entry unless moved) */
	bool entry_emulated;		/* instruction at probe_offset is one the kernel emulates */
	int alias_of;			/* index of an earlier fn at the same address, or -1 */
	char insn[48];			/* mnemonic + operands at probe_offset, for -v and bench */
};

struct probe_plan {
	struct probe_fn_plan fn[PROBE_MAX_FNS];	/* the whole table, found or not */
	unsigned int n_fn;
	const char *kind;		/* "glibc", "musl", "jemalloc", "tcmalloc", "mimalloc",
					 * "other" (an allocator of no known family) */
	bool exports_malloc;		/* defines plain malloc in .dynsym: interposes */
	bool defines_malloc;		/* defines plain malloc at all (.symtab included) */
	bool is_dynamic;		/* has a PT_DYNAMIC (not a static executable) */
};

/*
 * Plan probes for the ELF file open at fd (read with pread, the descriptor is left open
 * and its offset alone).  Only a regular file of at most 256 MiB is read.  An object is an
 * allocator when it defines a complete C-level API of one family (malloc and free, mallocx
 * and dallocx, tc_malloc and tc_free, mi_malloc and mi_free): then every entry point of the
 * table it defines gets a probe, its C++ operators included (an object with operator new
 * alone, libstdc++, is not an allocator: its new calls malloc).  0, or -errno (-ENOENT: not
 * an allocator; -EINVAL: not a regular file; -ENOEXEC: not an x86-64 ELF file; -EFBIG:
 * larger).
 */
int probe_plan__build(int fd, struct probe_plan *plan);
/*
 * The same decision without decoding any code: found, exported, offsets and kind are set,
 * probe_offset is the entry and insn is empty.  For deciding which objects are allocators.
 */
int probe_plan__scan(int fd, struct probe_plan *plan);

/* The plan's entry for the symbol `name`, or NULL when the table has no such name. */
const struct probe_fn_plan *probe_plan__find(const struct probe_plan *plan, const char *name);

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
