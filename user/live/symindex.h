/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * symindex.h - a module's symbol table sorted by address, for the symbolizer's lookups.
 *
 * libdwfl's dwfl_module_addrinfo() reads every symbol of the module at each lookup (a few
 * milliseconds in a program of 30,000 symbols, such as gcc's cc1).  The index reads the table
 * once (dwfl_module_getsym_info), sorts it, and answers each lookup with a binary search,
 * giving the symbol and offset dwfl_module_addrinfo() would give for the same address: the
 * same choice among symbols that overlap or share an address (global before weak before
 * local, the first in the table among equals), and the same fallback to a symbol without a
 * size (an assembly label) in the address's section.
 */
#ifndef LEAKTOP_SYMINDEX_H
#define LEAKTOP_SYMINDEX_H

#include <stddef.h>
#include <stdint.h>

#include <elfutils/libdwfl.h>

struct sym_index;

/* Symbols a module may have to be indexed (32 bytes each); one with more is not. */
#define SYM_INDEX_MAX_SYMBOLS	(1 << 20)

/*
 * Reads the symbol table of `mod` (loading it, as a lookup would) into a new index.
 * 0, -E2BIG (over SYM_INDEX_MAX_SYMBOLS) or -ENOMEM; a module without symbols gets an empty
 * index (every lookup: none).
 */
int sym_index__build(Dwfl_Module *mod, struct sym_index **out);
void sym_index__free(struct sym_index *ix);
/* Bytes the index holds (for the symbolizer's own accounting). */
size_t sym_index__bytes(const struct sym_index *ix);
/*
 * The name of the symbol of `mod` (the module the index was built from) that
 * dwfl_module_addrinfo(mod, addr, ...) names, and addr's offset from its start into *off;
 * NULL when none.  The name is libdwfl's, valid while the module is.
 */
const char *sym_index__lookup(const struct sym_index *ix, Dwfl_Module *mod, GElf_Addr addr,
			      GElf_Off *off);

#endif
