/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * fnrange.h - where a function the user names lies, for --stop-at SITE:N: the file offsets
 * [start, end) of every function of that name in the files a process maps, by the file's
 * (device, inode) as the kernel names them, so that BPF can tell whether a stack frame is in
 * it without symbols.  Names are matched as written in the symbol tables (.symtab, else
 * .dynsym), or demangled, with or without the parameter list ("leak_new" finds
 * _Z8leak_newv, "leak_new()" too).
 */
#ifndef LEAKTOP_FNRANGE_H
#define LEAKTOP_FNRANGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/leaktop.h"

/* Does a symbol name (as the table has it, maybe "@VERSION"-suffixed) name `want`? */
bool fnrange__name_matches(const char *sym, const char *want);
/*
 * Add to cfg the ranges of the functions named `name` in the ELF file open at fd, whose
 * identity is (kdev, ino) (kernel dev_t).  Ranges already there are not repeated.  Returns
 * how many were added, -ENOSPC when cfg is full, -errno when the file cannot be read.
 */
int fnrange__of_fd(int fd, uint32_t kdev, uint64_t ino, const char *name,
		   struct lt_stop_cfg *cfg);
/* The same over every executable file process pid maps (opened as it maps them). */
int fnrange__of_pid(int pid, const char *name, struct lt_stop_cfg *cfg);
/* The same over the program at path and the libraries the system's linker lists for it. */
int fnrange__of_command(const char *path, const char *name, struct lt_stop_cfg *cfg);

#endif
