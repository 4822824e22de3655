// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * buildid.c - reads a module file's GNU build id note with libelf/libdwelf, opening the file
 * without blocking (a FIFO or device named by a snapshot must not hang leaktop).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <libelf.h>

#include "live/buildid.h"

char *buildid__of_file(const char *path, double files_not_after_s)
{
	const unsigned char *id;
	char *hex = NULL;
	struct stat st;
	Elf *elf = NULL;
	ssize_t n;
	int fd;

	if (path[0] != '/')
		return NULL;
	/* O_NONBLOCK: a FIFO named in a file must not block the export. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !st.st_size ||
	    (files_not_after_s > 0 && st.st_mtime > files_not_after_s))
		goto out;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		goto out;
	n = dwelf_elf_gnu_build_id(elf, (const void **)&id);
	if (n <= 0 || n > 64)
		goto out;
	hex = malloc(n * 2 + 1);
	for (ssize_t i = 0; hex && i < n; i++)
		sprintf(hex + 2 * i, "%02x", id[i]);
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return hex;
}
