/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * atomic_file.h - replace a file's contents so readers see the old or the new file, never
 * half of one, and never write through a symbolic link (leaktop runs as root).
 */
#ifndef LEAKTOP_ATOMIC_FILE_H
#define LEAKTOP_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

struct atomic_file {
	FILE *f;		/* write here */
	char tmp_path[4096];
	char path[4096];
};

/* The mode of the files created from now on, before the umask (which always applies);
 * 0600 until set: snapshots hold other processes' addresses, paths and command lines. */
void atomic_file__set_mode(unsigned int mode);
/* Create the temporary file beside path.  0 or -errno; -ELOOP if path is a symlink,
 * -EISDIR if it exists and is not a regular file. */
int atomic_file__open(struct atomic_file *af, const char *path);
/* Flush, fsync, rename over path and fsync its directory (or discard if `ok` is false).
 * 0 or -errno. */
int atomic_file__close(struct atomic_file *af, int ok);
/* Async-signal-safe: remove the temporary file of a write in progress, if any. */
void atomic_file__discard_in_progress(void);

#endif
