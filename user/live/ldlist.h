/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * ldlist.h - the shared objects a program will load, as the system's own dynamic linker
 * lists them (ld.so --list, run with leaktop's environment: LD_PRELOAD entries included),
 * before the program runs.
 */
#ifndef LEAKTOP_LDLIST_H
#define LEAKTOP_LDLIST_H

#include <stddef.h>

struct ld_list {
	char *text;			/* the linker's output, cut into the paths below */
	const char **paths;		/* absolute paths, in the linker's order */
	size_t n;
};

/*
 * List what the program at path loads.  Only the system's dynamic linker is run (a program
 * asking for another interpreter, or a static one, lists nothing: n is 0), in list mode,
 * with a 5 s limit and 64 KiB of output at most.  0 (free the list with ldlist__free), or
 * -errno (the program cannot be opened, or is no ELF file).
 */
int ldlist__read(const char *path, struct ld_list *out);
void ldlist__free(struct ld_list *l);

#endif
