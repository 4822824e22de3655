// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * atomic_file.c - temp file + fsync + rename, refusing symbolic links.
 *
 * The temporary file is created with O_EXCL (mkostemp) in the target's directory, so it can
 * never be a pre-planted link; the target itself is checked with lstat and refused if it is
 * a link or not a regular file; rename() replaces a directory entry and never follows a link.
 * The temporary file being written is remembered, so a process that must end at once (a
 * second Ctrl-C) can remove it from a signal handler instead of leaving it behind.
 * Files are created 0600 (or the mode the user chose), less the umask: what leaktop writes
 * describes other users' processes.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/atomic_file.h"

/* The temporary file of the write in progress (one at a time), for signal handlers. */
static char in_progress_path[4096];
static volatile sig_atomic_t in_progress;

void atomic_file__discard_in_progress(void)
{
	if (in_progress)
		unlink(in_progress_path);
}

static mode_t file_mode = 0600;

void atomic_file__set_mode(unsigned int mode)
{
	file_mode = mode & 0777;
}

/* The process's umask (leaktop is single-threaded: nothing creates files in between). */
static mode_t current_umask(void)
{
	mode_t mask = umask(0);

	umask(mask);
	return mask;
}

int atomic_file__open(struct atomic_file *af, const char *path)
{
	char dir[4096], base[4096], *d, *b;
	struct stat st;
	int fd;

	memset(af, 0, sizeof(*af));
	if (strlen(path) >= sizeof(dir) - 16)
		return -ENAMETOOLONG;
	if (!lstat(path, &st) && (S_ISLNK(st.st_mode) || !S_ISREG(st.st_mode)))
		return S_ISLNK(st.st_mode) ? -ELOOP : -EISDIR;
	strcpy(dir, path);
	strcpy(base, path);
	d = dirname(dir);
	b = basename(base);
	snprintf(af->tmp_path, sizeof(af->tmp_path), "%s/.%s.XXXXXX", d, b);
	snprintf(af->path, sizeof(af->path), "%s", path);
	fd = mkostemp(af->tmp_path, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, file_mode & ~current_umask())) {
		int err = -errno;

		close(fd);
		unlink(af->tmp_path);
		return err;
	}
	in_progress = 0;
	memcpy(in_progress_path, af->tmp_path, sizeof(in_progress_path));
	in_progress = 1;
	af->f = fdopen(fd, "w");
	if (!af->f) {
		int err = -errno;

		close(fd);
		unlink(af->tmp_path);
		in_progress = 0;
		return err;
	}
	return 0;
}

int atomic_file__close(struct atomic_file *af, int ok)
{
	struct stat st;
	int err = 0;

	if (!af->f)
		return -EBADF;
	if (fflush(af->f) || fsync(fileno(af->f)))
		err = -errno;
	if (fclose(af->f) && !err)
		err = -errno;
	af->f = NULL;
	/* Checked again at the last moment: a link planted meanwhile is refused too. */
	if (!err && ok && !lstat(af->path, &st) && S_ISLNK(st.st_mode))
		err = -ELOOP;
	if (!err && ok && rename(af->tmp_path, af->path))
		err = -errno;
	if (err || !ok)
		unlink(af->tmp_path);
	in_progress = 0;
	return err;
}
