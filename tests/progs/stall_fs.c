// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * stall_fs.c - a tiny FUSE file system for tests/e2e/hostile_fuse.sh: serves copies of a
 * few files (a program, a library) read-only at the top of MOUNTPOINT, with every cache
 * timeout 0 (each stat, lookup and open asks the daemon), so that a test can stop the
 * daemon (SIGSTOP) and see who waits for it.  Runs in the foreground, single-threaded.
 *
 *	stall_fs MOUNTPOINT NAME=SOURCE... [-o allow_other]
 *
 * Mounted the way any user can: by the setuid fusermount3, which opens /dev/fuse (libfuse
 * would open it itself first, and gives up where /dev/fuse is 0600 as on hosts without
 * udev's rule), mounts, and hands the descriptor back over a socket (_FUSE_COMMFD); libfuse
 * then serves "/dev/fd/N".  Unmount with fusermount3 -u MOUNTPOINT.
 */
#define FUSE_USE_VERSION 31

#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define FILES_MAX	8

static struct served {
	char name[64];
	char *data;
	size_t size;
} files[FILES_MAX];
static size_t n_files;

static const struct served *served_of(const char *path)
{
	for (size_t i = 0; i < n_files; i++)
		if (path[0] == '/' && !strcmp(path + 1, files[i].name))
			return &files[i];
	return NULL;
}

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	cfg->attr_timeout = 0;
	cfg->entry_timeout = 0;
	cfg->negative_timeout = 0;
	cfg->kernel_cache = 0;
	return NULL;
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	const struct served *f;

	memset(st, 0, sizeof(*st));
	if (!strcmp(path, "/")) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	f = served_of(path);
	if (!f)
		return -ENOENT;
	st->st_mode = S_IFREG | 0755;
	st->st_nlink = 1;
	st->st_size = f->size;
	return 0;
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	if (strcmp(path, "/"))
		return -ENOENT;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	for (size_t i = 0; i < n_files; i++)
		fill(buf, files[i].name, NULL, 0, 0);
	return 0;
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
	if (!served_of(path))
		return -ENOENT;
	if ((fi->flags & O_ACCMODE) != O_RDONLY)
		return -EACCES;
	return 0;
}

static int fs_read(const char *path, char *buf, size_t len, off_t off,
		   struct fuse_file_info *fi)
{
	const struct served *f = served_of(path);

	if (!f)
		return -ENOENT;
	if (off < 0 || (size_t)off >= f->size)
		return 0;
	if (len > f->size - off)
		len = f->size - off;
	memcpy(buf, f->data + off, len);
	return (int)len;
}

static const struct fuse_operations ops = {
	.init = fs_init,
	.getattr = fs_getattr,
	.readdir = fs_readdir,
	.open = fs_open,
	.read = fs_read,
};

/* Read all of path into a served file called name.  0 or -1. */
static int serve(const char *name, const char *path)
{
	struct served *f = &files[n_files];
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode))
		goto fail;
	f->size = st.st_size;
	f->data = malloc(f->size ? f->size : 1);
	if (!f->data || read(fd, f->data, f->size) != (ssize_t)f->size)
		goto fail;
	snprintf(f->name, sizeof(f->name), "%s", name);
	n_files++;
	close(fd);
	return 0;
fail:
	fprintf(stderr, "stall_fs: cannot read %s\n", path);
	if (fd >= 0)
		close(fd);
	return -1;
}

/* Mount at mnt through fusermount3 with options opts; the /dev/fuse descriptor, or -1. */
static int mount_by_fusermount(const char *mnt, const char *opts)
{
	char buf[1], cbuf[CMSG_SPACE(sizeof(int))], env[32];
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int sv[2], fd = -1, status;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		snprintf(env, sizeof(env), "%d", sv[1]);
		setenv("_FUSE_COMMFD", env, 1);
		execlp("fusermount3", "fusermount3", "-o", opts, "--", mnt, (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	if (pid > 0 && recvmsg(sv[0], &msg, 0) > 0) {
		cm = CMSG_FIRSTHDR(&msg);
		if (cm && cm->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
	}
	close(sv[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	return fd;
}

int main(int argc, char **argv)
{
	char *fargv[8], opts[128] = "rw,nosuid,nodev,fsname=stall_fs,subtype=stall_fs", dev[32];
	int fargc = 0, fd;

	if (argc < 3) {
		fprintf(stderr, "usage: stall_fs MOUNTPOINT NAME=SOURCE... [-o OPTIONS]\n");
		return 2;
	}
	fargv[fargc++] = argv[0];
	fargv[fargc++] = "-f";
	fargv[fargc++] = "-s";
	for (int i = 2; i < argc; i++) {
		char *eq = strchr(argv[i], '=');

		if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			snprintf(opts + strlen(opts), sizeof(opts) - strlen(opts), ",%s", argv[++i]);
			continue;
		}
		if (!eq || n_files == FILES_MAX) {
			fprintf(stderr, "stall_fs: '%s': expected NAME=SOURCE\n", argv[i]);
			return 2;
		}
		*eq = '\0';
		if (serve(argv[i], eq + 1))
			return 1;
	}
	fd = mount_by_fusermount(argv[1], opts);
	if (fd < 0) {
		fprintf(stderr, "stall_fs: fusermount3 could not mount %s\n", argv[1]);
		return 1;
	}
	snprintf(dev, sizeof(dev), "/dev/fd/%d", fd);
	fargv[fargc++] = dev;
	fargv[fargc] = NULL;
	return fuse_main(fargc, fargv, &ops, NULL);
}
