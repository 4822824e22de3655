// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * atomic_file.c - temp file + fsync + rename + fsync of the directory, refusing symbolic links.
 *
 * The temporary file is created with O_EXCL | O_NOFOLLOW under a random name in the target's
 * directory, so it can never be a pre-planted link; the target itself is checked with lstat
 * and refused if it is a link or not a regular file; rename() replaces a directory entry and
 * never follows a link; the directory is synced after it, so the new name survives a crash
 * (an OOM snapshot is written just before a host may go down).
 * The temporary file being written is remembered, so a process that must end at once (a
 * second Ctrl-C) can remove it from a signal handler instead of leaving it behind.
 * Files are created 0600 (or the mode the user chose), less the umask, which open() applies
 * itself: the umask is never read or changed (it is per process, and leaktop has threads).
 * What leaktop writes describes other users' processes.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
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

/*
 * Create tmpl (ending in XXXXXX, replaced by random letters) with O_EXCL: the file mode less
 * the umask, applied by the kernel.  The fd, or -errno.
 */
static int create_temp(char *tmpl)
{
	static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	size_t n = strlen(tmpl);

	if (n < 6)
		return -EINVAL;
	for (int tries = 0; tries < 100; tries++) {
		unsigned char rnd[6];
		int fd;

		if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
			return -EIO;
		for (size_t i = 0; i < 6; i++)
			tmpl[n - 6 + i] = letters[rnd[i] % (sizeof(letters) - 1)];
		fd = open(tmpl, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, file_mode);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* fsync the directory holding path, so that a rename into it is durable. */
static int sync_dir_of(const char *path)
{
	char dir[4096];
	int fd, err = 0;

	snprintf(dir, sizeof(dir), "%s", path);
	fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* Some file systems cannot sync a directory (EINVAL): nothing more to do there. */
	if (fsync(fd) && errno != EINVAL)
		err = -errno;
	close(fd);
	return err;
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
	fd = create_temp(af->tmp_path);
	if (fd < 0)
		return fd;
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
	else
		err = sync_dir_of(af->path);
	in_progress = 0;
	return err;
}
