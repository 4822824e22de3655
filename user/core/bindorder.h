/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * bindorder.h - which of the objects a process maps its malloc binds to, by the dynamic
 * linker's rules: the global scope is searched in load order, the executable first, then
 * each LD_PRELOAD entry in order, then the DT_NEEDED libraries breadth first (those of the
 * executable and of the preloads, in that order); the first object that exports malloc
 * wins.  Objects only dlopen()ed are outside that scope and never interpose.  Pure: the
 * caller reads the ELF files and the environment.
 */
#ifndef LEAKTOP_BINDORDER_H
#define LEAKTOP_BINDORDER_H

#include <stdbool.h>
#include <stddef.h>

struct bind_obj {
	const char *path;		/* as mapped */
	const char *soname;		/* DT_SONAME, or NULL */
	const char *const *needed;	/* DT_NEEDED names, in order */
	size_t n_needed;
	bool exports_malloc;		/* others' calls to malloc may bind here */
};

/* The most objects bind_order__pick() considers (later ones are never searched). */
#define BIND_MAX_OBJS	512

/*
 * objs[exe] is the executable; preload[] the LD_PRELOAD entries (names or paths, in order).
 * A name is matched against an object's path when it holds a '/', else against its soname
 * or the last component of its path.  Returns the index of the object malloc binds to, or
 * -1 when no object in the scope exports malloc.
 */
int bind_order__pick(const struct bind_obj *objs, size_t n, size_t exe,
		     const char *const *preload, size_t n_preload);

/*
 * Split an LD_PRELOAD value (entries separated by spaces or colons, as ld.so reads it) into
 * at most max pointers into buf, which is modified.  Returns the count.
 */
size_t bind_order__split_preload(char *buf, const char **out, size_t max);

#endif
