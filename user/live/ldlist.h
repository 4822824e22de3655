/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * ldlist.h - the shared objects a program will load, before it runs: the glibc dynamic
 * linker's search (LD_PRELOAD, DT_NEEDED through DT_RPATH, LD_LIBRARY_PATH, DT_RUNPATH,
 * the configured and default directories) done by leaktop itself on the files' dynamic
 * sections.  No program is run: not the dynamic linker in list mode, which runs the
 * constructors of the libraries a program names in DT_AUDIT/DT_DEPAUDIT (review C11).
 */
#ifndef LEAKTOP_LDLIST_H
#define LEAKTOP_LDLIST_H

#include <stddef.h>

#include "live/safe_open.h"

/* Where and with which environment the program will run. */
struct ld_env {
	int root_fd;			/* AT_FDCWD: leaktop's own root; else an O_PATH descriptor
					 * of the process's root (/proc/PID/root): every name is
					 * resolved inside it, never leaving it */
	const char *preload;		/* LD_PRELOAD, or NULL */
	const char *library_path;	/* LD_LIBRARY_PATH, or NULL */
};

struct ld_list {
	char *text;			/* storage of the paths below */
	const char **paths;		/* absolute paths inside the root, in load order */
	struct file_id *ids;		/* each one's identity, as opened */
	size_t n;
};

/*
 * List what the program at path (inside env's root) loads: its LD_PRELOAD objects, then its
 * needed libraries breadth first, then its dynamic linker.  Only programs whose PT_INTERP
 * is glibc's linker are listed (a static one, or one asking for another linker, lists
 * nothing: n is 0); objects of another ELF class or machine are passed over as the linker
 * does.  Files are opened only as regular files, never blocking (live/safe_open.c), and
 * read, never mapped; at most 512 objects.  Where the real linker could choose differently
 * (its cache, hardware-capability subdirectories, /etc/ld.so.preload, a setuid program's
 * secure mode) the list may miss or differ: callers follow what the process really maps
 * later.  0 (free the list with ldlist__free), or -errno (the program cannot be opened, or
 * is no ELF file).
 */
int ldlist__resolve(const char *path, const struct ld_env *env, struct ld_list *out);
/* ldlist__resolve in leaktop's own root with leaktop's own LD_PRELOAD and LD_LIBRARY_PATH. */
int ldlist__read(const char *path, struct ld_list *out);
void ldlist__free(struct ld_list *l);

#endif
