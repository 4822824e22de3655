/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * procmaps.h - parsing of /proc/PID/maps text into mappings (pure, no I/O besides
 * procmaps__read(), unit-tested on fixed text).
 */
#ifndef LEAKTOP_PROCMAPS_H
#define LEAKTOP_PROCMAPS_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

struct proc_map {
	uint64_t start;		/* runtime address range [start, end) */
	uint64_t end;
	uint64_t file_offset;	/* offset in the file of `start` */
	uint64_t dev;		/* makedev(major, minor) of the backing file, 0 if anonymous */
	uint64_t ino;
	bool readable, writable, executable, shared;
	char *path;		/* owned; NULL for anonymous; "[heap]", "[stack]", ... kept */
	bool deleted;		/* path ended in " (deleted)" (suffix stripped from path) */
};

struct proc_maps {
	struct proc_map *v;	/* sorted by start (as the kernel prints them) */
	size_t n;
};

/* Parse the text of a maps file.  Returns 0 or -EINVAL on a malformed line. */
int procmaps__parse(const char *text, struct proc_maps *out);
/* Read and parse /proc/PID/maps.  Returns 0, -ESRCH if the process is gone, or -errno. */
int procmaps__read(int pid, struct proc_maps *out);
/*
 * Is a readable and writable mapping registered with userfaultfd (VmFlags um, uw or ui) in
 * this smaps text?  1 (*start: its start), 0.  Reading such memory from outside waits for
 * the process's fault handler.
 */
int procmaps__smaps_uffd(const char *text, uint64_t *start);
/* The text of /proc/PID/smaps (*text malloc'd): 0, -ESRCH, -errno. */
int procmaps__smaps_text(int pid, char **text);
/* procmaps__smaps_uffd of /proc/PID/smaps; or -ESRCH, -errno. */
int procmaps__uffd(int pid, uint64_t *start);
/* Mapping containing addr, or NULL.  Binary search. */
const struct proc_map *procmaps__find(const struct proc_maps *maps, uint64_t addr);
void procmaps__free(struct proc_maps *maps);

#endif
