// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_hostile_files.c - files a traced process names must never hang leaktop or get a
 * device opened: a .so whose .gnu_debuglink climbs (../../..) to a FIFO, DWARF whose dwz
 * file is a FIFO, an exec file name that is a FIFO or a device in leaktop's namespace, and
 * the one helper that opens such files (live/safe_open.c) refusing FIFOs, symbolic links,
 * devices and other inodes.
 * Each risky call runs in a forked child under alarm(): a blocked open fails the test
 * instead of hanging it.  Needs gcc and objcopy at run time; run as root from anywhere.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "check.h"
#include "live/safe_open.h"
#include "live/symbolize.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#define BOUND_S 10	/* a call that takes longer is blocked */

static char dir[] = "/tmp/lt-hostile-XXXXXX";

/* Run fn(arg) in a child, at most BOUND_S seconds: its exit status, or -1 if it blocked. */
static int bounded(int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -2;
	if (!pid) {
		alarm(BOUND_S);
		_exit(fn(arg));
	}
	if (waitpid(pid, &status, 0) != pid)
		return -2;
	if (WIFSIGNALED(status))
		return WTERMSIG(status) == SIGALRM ? -1 : -2;
	return WEXITSTATUS(status);
}

/* Did anything open the FIFO for reading (a writer then finds a reader)?  Drains it. */
static bool fifo_was_opened(const char *fifo)
{
	int fd = open(fifo, O_WRONLY | O_NONBLOCK);

	if (fd < 0)
		return false;	/* ENXIO: no reader, never opened */
	close(fd);
	return true;
}

static int sh(const char *fmt, const char *a, const char *b)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd), fmt, a, b, a, b, a, b);
	return system(cmd);
}

/*
 * dir/evil.so: a .so without debug info whose .gnu_debuglink names
 * "../../../../../../../../../../../..<dir>/<fifo>": relative to where the .so is, the FIFO.
 */
static int build_evil_so(const char *fifo_name)
{
	char path[PATH_MAX], link[PATH_MAX];
	FILE *f;
	size_t n;
	int i;

	snprintf(path, sizeof(path), "%s/evil.c", dir);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs("#include <stdlib.h>\n"
	      "__attribute__((noinline)) void *evil_fn(void) { return malloc(64); }\n", f);
	fclose(f);
	if (sh("gcc -shared -fPIC -O1 -o %s/evil0.so %s/evil.c", dir, dir))
		return -1;
	n = 0;
	for (i = 0; i < 12; i++)
		n += snprintf(link + n, sizeof(link) - n, "../");
	n += snprintf(link + n, sizeof(link) - n, "%s/%s", dir + 1, fifo_name);
	link[n++] = '\0';
	while (n % 4)
		link[n++] = '\0';
	memcpy(link + n, "\x12\x34\x56\x78", 4);	/* the CRC */
	n += 4;
	snprintf(path, sizeof(path), "%s/dl.bin", dir);
	f = fopen(path, "w");
	if (!f || fwrite(link, 1, n, f) != n)
		return -1;
	fclose(f);
	return sh("objcopy --add-section .gnu_debuglink=%s/dl.bin "
		  "--set-section-flags .gnu_debuglink=readonly %s/evil0.so %s/evil.so",
		  dir, dir) ? -1 : 0;
}

static void *evil_fn_addr;

/* The child: this process (the fork has the .so mapped) registered, evil_fn resolved. */
static int resolve_evil_fn(void *unused)
{
	struct symbolizer *sym = symbolizer__new();
	struct sym_frame f;
	int ok;

	if (!sym || symbolizer__add_image(sym, 1, getpid()))
		return 3;
	if (symbolizer__resolve(sym, 1, (uint64_t)(uintptr_t)evil_fn_addr + 1, true, &f))
		return 4;
	ok = f.symbol && !strcmp(f.symbol, "evil_fn");
	sym_frame__clear(&f);
	symbolizer__free(sym);
	return ok ? 0 : 5;
}

static void test_debuglink_climbing_to_a_fifo_neither_blocks_nor_opens_it(void)
{
	char fifo[PATH_MAX], so[PATH_MAX];
	void *h;

	snprintf(fifo, sizeof(fifo), "%s/trap", dir);
	CHECK_EQ_INT(mkfifo(fifo, 0600), 0);
	CHECK_EQ_INT(build_evil_so("trap"), 0);
	snprintf(so, sizeof(so), "%s/evil.so", dir);
	h = dlopen(so, RTLD_NOW);
	CHECK(h != NULL);
	evil_fn_addr = dlsym(h, "evil_fn");
	CHECK(evil_fn_addr != NULL);
	CHECK_EQ_INT(bounded(resolve_evil_fn, NULL), 0);
	CHECK(!fifo_was_opened(fifo));
	dlclose(h);
}

static uint64_t uleb(const unsigned char **p, const unsigned char *end)
{
	uint64_t v = 0;
	int shift = 0;

	while (*p < end) {
		unsigned char b = *(*p)++;

		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	return v;
}

/*
 * Rewrite the abbreviation table in file `in` into `out`: the compile unit's DW_AT_comp_dir,
 * a 4-byte string offset (DW_FORM_strp or DW_FORM_line_strp), becomes DW_FORM_GNU_strp_alt
 * (an offset into the dwz file), so reading it makes libdw look for the dwz file.
 */
static int comp_dir_to_alt(const char *in, const char *out)
{
	unsigned char buf[65536], res[65536 + 8];
	const unsigned char *p = buf, *end, *form_at;
	size_t n, done = 0, o = 0;
	uint64_t code, tag, attr, form;
	FILE *f = fopen(in, "rb");

	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	end = buf + n;
	while (p < end && !done) {
		code = uleb(&p, end);
		if (!code)
			break;
		tag = uleb(&p, end);
		p++;	/* children */
		for (;;) {
			attr = uleb(&p, end);
			form_at = p;
			form = uleb(&p, end);
			if (!attr && !form)
				break;
			if (form == 0x21)	/* DW_FORM_implicit_const */
				uleb(&p, end);
			if (tag == 0x11 && attr == 0x1b && (form == 0x0e || form == 0x1f)) {
				o = (size_t)(form_at - buf);
				memcpy(res, buf, o);
				res[o++] = 0xa1;	/* 0x1f21 DW_FORM_GNU_strp_alt */
				res[o++] = 0x3e;
				memcpy(res + o, p, (size_t)(end - p));
				o += (size_t)(end - p);
				done = 1;
				break;
			}
		}
	}
	f = done ? fopen(out, "wb") : NULL;
	if (!f || fwrite(res, 1, o, f) != o)
		return -1;
	return fclose(f);
}

static void *alt_fn_addr;

static int resolve_alt_fn(void *unused)
{
	struct symbolizer *sym = symbolizer__new();
	struct sym_frame f;
	int ok;

	if (!sym || symbolizer__add_image(sym, 1, getpid()))
		return 3;
	if (symbolizer__resolve(sym, 1, (uint64_t)(uintptr_t)alt_fn_addr + 1, true, &f))
		return 4;
	ok = f.symbol && !strcmp(f.symbol, "alt_fn");
	sym_frame__clear(&f);
	symbolizer__free(sym);
	return ok ? 0 : 5;
}

/*
 * A .so with DWARF that refers to a dwz file (.gnu_debugaltlink) which is a FIFO: libdw
 * would open that name itself when it reads the attribute.  The DWARF is given up, the
 * function still named from the symbol table.
 */
static void test_dwz_link_to_a_fifo_neither_blocks_nor_opens_it(void)
{
	char path[PATH_MAX], fifo[PATH_MAX], blob[PATH_MAX + 64];
	size_t n;
	FILE *f;
	void *h;

	snprintf(fifo, sizeof(fifo), "%s/alt-trap", dir);
	CHECK_EQ_INT(mkfifo(fifo, 0600), 0);
	snprintf(path, sizeof(path), "%s/alt.c", dir);
	f = fopen(path, "w");
	CHECK(f);
	fputs("__attribute__((noinline)) int alt_fn(int x) { return x * 5; }\n", f);
	fclose(f);
	CHECK_EQ_INT(sh("cd %s && gcc -g -O0 -shared -fPIC -o alt0.so alt.c && "
			"objcopy --dump-section .debug_abbrev=abbrev.bin alt0.so", dir, dir), 0);
	snprintf(path, sizeof(path), "%s/abbrev.bin", dir);
	snprintf(blob, sizeof(blob), "%s/abbrev-alt.bin", dir);
	CHECK_EQ_INT(comp_dir_to_alt(path, blob), 0);
	/* .gnu_debugaltlink: the file name, NUL, its build id (20 bytes). */
	n = (size_t)snprintf(blob, sizeof(blob), "%s", fifo) + 1;
	memset(blob + n, 0xab, 20);
	n += 20;
	snprintf(path, sizeof(path), "%s/altlink.bin", dir);
	f = fopen(path, "wb");
	CHECK(f && fwrite(blob, 1, n, f) == n);
	fclose(f);
	CHECK_EQ_INT(sh("cd %s && objcopy --update-section .debug_abbrev=abbrev-alt.bin "
			"--add-section .gnu_debugaltlink=altlink.bin alt0.so alt.so", dir, dir), 0);
	snprintf(path, sizeof(path), "%s/alt.so", dir);
	h = dlopen(path, RTLD_NOW);
	CHECK(h != NULL);
	alt_fn_addr = dlsym(h, "alt_fn");
	CHECK(alt_fn_addr != NULL);
	CHECK_EQ_INT(bounded(resolve_alt_fn, NULL), 0);
	CHECK(!fifo_was_opened(fifo));
	dlclose(h);
}

struct exe_case {
	const char *path;
	struct file_id id;	/* what the kernel says was exec'd */
};

static int add_exe(void *arg)
{
	struct exe_case *c = arg;
	struct symbolizer *sym = symbolizer__new();
	int err;

	if (!sym)
		return 3;
	err = symbolizer__add_exe_image(sym, 1, 0, c->path, &c->id, 0x1000, 0x2000);
	symbolizer__free(sym);
	return err ? 0 : 6;	/* only a refusal is right */
}

static int self_id(struct file_id *id)
{
	struct stat st;

	if (stat("/proc/self/exe", &st))
		return -1;
	*id = (struct file_id){ .dev = st.st_dev, .ino = st.st_ino };
	return 0;
}

static int add_exe_and_resolve(void *arg)
{
	struct exe_case *c = arg;
	struct symbolizer *sym = symbolizer__new();
	struct sym_frame f = {};
	unsigned long long start = 0, end = 0;
	char line[4096], *p;
	FILE *stat_file = fopen("/proc/self/stat", "r");
	int i, ok;

	/* Fields 26 and 27 of /proc/self/stat: start_code and end_code. */
	if (!sym || !stat_file || !fgets(line, sizeof(line), stat_file))
		return 3;
	fclose(stat_file);
	p = strrchr(line, ')');
	for (i = 2; p && i < 26; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %llu %llu", &start, &end) != 2)
		return 3;
	if (symbolizer__add_exe_image(sym, 1, 0, c->path, &c->id, start, end))
		return 4;
	ok = !symbolizer__resolve(sym, 1, (uint64_t)(uintptr_t)&add_exe_and_resolve, false, &f) &&
	     f.symbol && !strcmp(f.symbol, "add_exe_and_resolve");
	sym_frame__clear(&f);
	symbolizer__free(sym);
	return ok ? 0 : 5;
}

static void test_exec_file_name_of_the_exec_d_file_resolves(void)
{
	struct exe_case c = { .path = NULL };
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	CHECK(n > 0);
	exe[n] = '\0';
	CHECK_EQ_INT(self_id(&c.id), 0);
	c.path = exe;
	CHECK_EQ_INT(bounded(add_exe_and_resolve, &c), 0);
	/* Another file's identity: the name is not trusted. */
	c.id.ino++;
	CHECK_EQ_INT(bounded(add_exe_and_resolve, &c), 4);
}

static void test_exec_file_name_that_is_a_fifo_here_is_refused_without_blocking(void)
{
	struct exe_case c = { .path = NULL };
	char fifo[PATH_MAX];

	snprintf(fifo, sizeof(fifo), "%s/exe-fifo", dir);
	CHECK_EQ_INT(mkfifo(fifo, 0600), 0);
	CHECK_EQ_INT(self_id(&c.id), 0);
	c.path = fifo;
	CHECK_EQ_INT(bounded(add_exe, &c), 0);
	CHECK(!fifo_was_opened(fifo));
}

/* An inotify descriptor watching path for opens (the kernel reports device opens too). */
static int watch_opens(const char *path)
{
	int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	if (in >= 0 && inotify_add_watch(in, path, IN_OPEN) < 0) {
		close(in);
		return -1;
	}
	return in;
}

static bool was_opened(int in)
{
	char buf[4096] __attribute__((aligned(8)));

	return read(in, buf, sizeof(buf)) > 0;
}

static void test_exec_file_name_that_is_a_device_here_is_refused_unopened(void)
{
	struct exe_case c = { .path = NULL };
	char dev[PATH_MAX];
	int in;

	/* The device of /dev/null: harmless to open, but it must not even be that. */
	snprintf(dev, sizeof(dev), "%s/exe-dev", dir);
	CHECK_EQ_INT(mknod(dev, S_IFCHR | 0600, makedev(1, 3)), 0);
	in = watch_opens(dev);
	CHECK(in >= 0);
	CHECK_EQ_INT(self_id(&c.id), 0);
	c.path = dev;
	CHECK_EQ_INT(bounded(add_exe, &c), 0);
	CHECK(!was_opened(in));
	close(in);
}

static void test_safe_open_opens_the_expected_regular_file(void)
{
	char path[PATH_MAX];
	struct file_id id;
	struct stat st;
	int fd = -1;

	snprintf(path, sizeof(path), "%s/plain", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0);
	CHECK_EQ_INT(write(fd, "x", 1), 1);
	CHECK_EQ_INT(fstat(fd, &st), 0);
	close(fd);
	id = (struct file_id){ .dev = st.st_dev, .ino = st.st_ino };
	CHECK_EQ_INT(safe_open(AT_FDCWD, path, SAFE_NOFOLLOW, &id, &fd), 0);
	CHECK_EQ_INT(fstat(fd, &st), 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ_INT(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDONLY);
	CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	/* No identity asked: any regular file. */
	CHECK_EQ_INT(safe_open(AT_FDCWD, path, SAFE_NOFOLLOW, NULL, &fd), 0);
	close(fd);
}

static int open_fifo(void *arg)
{
	int fd = -1, err = safe_open(AT_FDCWD, arg, SAFE_FOLLOW, NULL, &fd);

	return err == -EINVAL && fd == -1 ? 0 : 7;
}

static void test_safe_open_refuses_a_fifo_without_blocking(void)
{
	char fifo[PATH_MAX];

	snprintf(fifo, sizeof(fifo), "%s/safe-fifo", dir);
	CHECK_EQ_INT(mkfifo(fifo, 0600), 0);
	CHECK_EQ_INT(bounded(open_fifo, fifo), 0);
	CHECK(!fifo_was_opened(fifo));
}

static void test_safe_open_refuses_a_device_unopened(void)
{
	char dev[PATH_MAX];
	int fd = -1, in;

	snprintf(dev, sizeof(dev), "%s/safe-dev", dir);
	CHECK_EQ_INT(mknod(dev, S_IFCHR | 0600, makedev(1, 3)), 0);
	in = watch_opens(dev);
	CHECK(in >= 0);
	CHECK_EQ_INT(safe_open(AT_FDCWD, dev, SAFE_FOLLOW, NULL, &fd), -EINVAL);
	CHECK_EQ_INT(fd, -1);
	CHECK(!was_opened(in));
	close(in);
	CHECK_EQ_INT(safe_open(AT_FDCWD, "/dev/null", SAFE_FOLLOW, NULL, &fd), -EINVAL);
}

static void test_safe_open_nofollow_refuses_a_symlink_follow_checks_its_target(void)
{
	char link[PATH_MAX], target[PATH_MAX];
	struct file_id id;
	struct stat st;
	int fd = -1;

	snprintf(target, sizeof(target), "%s/target", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	fd = open(target, O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0);
	CHECK_EQ_INT(fstat(fd, &st), 0);
	close(fd);
	CHECK_EQ_INT(symlink(target, link), 0);
	id = (struct file_id){ .dev = st.st_dev, .ino = st.st_ino };
	fd = -1;
	CHECK_EQ_INT(safe_open(AT_FDCWD, link, SAFE_NOFOLLOW, &id, &fd), -EINVAL);
	CHECK_EQ_INT(fd, -1);
	CHECK_EQ_INT(safe_open(AT_FDCWD, link, SAFE_FOLLOW, &id, &fd), 0);
	close(fd);
}

/*
 * A name not all in the dentry cache is looked up with the kernel following no link: safe_open
 * reads each link and checks the name it leads to.  Dropping the dentry cache forces that
 * path: a chain of a relative and an absolute link still reaches its file, a loop ends.
 */
static void test_safe_open_follows_links_by_hand_outside_the_dentry_cache(void)
{
	char target[PATH_MAX], sub[PATH_MAX], l1[PATH_MAX], l2[PATH_MAX + 8], abs_[PATH_MAX];
	char loop[PATH_MAX];
	struct file_id id;
	struct stat st;
	int fd, dc;

	snprintf(target, sizeof(target), "%s/chain_target", dir);
	snprintf(sub, sizeof(sub), "%s/chain_sub", dir);
	snprintf(l1, sizeof(l1), "%s/chain_l1", dir);
	snprintf(l2, sizeof(l2), "%s/l2", sub);
	snprintf(abs_, sizeof(abs_), "%s/chain_abs", dir);
	snprintf(loop, sizeof(loop), "%s/chain_loop", dir);
	fd = open(target, O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0);
	CHECK_EQ_INT(fstat(fd, &st), 0);
	close(fd);
	CHECK_EQ_INT(mkdir(sub, 0700), 0);
	CHECK_EQ_INT(symlink("chain_sub/l2", l1), 0);		/* relative, to a link */
	CHECK_EQ_INT(symlink("../chain_target", l2), 0);	/* relative, with .. */
	CHECK_EQ_INT(symlink(l1, abs_), 0);			/* absolute */
	CHECK_EQ_INT(symlink("chain_loop", loop), 0);
	id = (struct file_id){ .dev = st.st_dev, .ino = st.st_ino };
	sync();
	dc = open("/proc/sys/vm/drop_caches", O_WRONLY);
	CHECK(dc >= 0);
	CHECK_EQ_INT(write(dc, "2", 1), 1);
	close(dc);
	fd = -1;
	CHECK_EQ_INT(safe_open(AT_FDCWD, abs_, SAFE_FOLLOW, &id, &fd), 0);
	CHECK(fd >= 0);
	close(fd);
	fd = -1;
	CHECK_EQ_INT(safe_open(AT_FDCWD, abs_, SAFE_NOFOLLOW, &id, &fd), -EINVAL);
	CHECK_EQ_INT(safe_open(AT_FDCWD, loop, SAFE_FOLLOW, NULL, &fd), -ELOOP);
	CHECK_EQ_INT(fd, -1);
}

static void test_safe_open_refuses_another_inode(void)
{
	char path[PATH_MAX];
	struct file_id id;
	struct stat st;
	int fd = -1;

	snprintf(path, sizeof(path), "%s/other", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0);
	CHECK_EQ_INT(fstat(fd, &st), 0);
	close(fd);
	fd = -1;
	id = (struct file_id){ .dev = st.st_dev, .ino = st.st_ino + 1 };
	CHECK_EQ_INT(safe_open(AT_FDCWD, path, SAFE_FOLLOW, &id, &fd), -ESTALE);
	CHECK_EQ_INT(fd, -1);
	id = (struct file_id){ .dev = st.st_dev + 1, .ino = st.st_ino };
	CHECK_EQ_INT(safe_open(AT_FDCWD, path, SAFE_FOLLOW, &id, &fd), -ESTALE);
	CHECK_EQ_INT(fd, -1);
}

static void test_safe_open_in_root_never_leaves_the_root(void)
{
	char root[PATH_MAX], path[PATH_MAX + 16];
	int rfd, fd = -1;

	/* root/escape -> /etc/passwd: inside the root that is root/etc/passwd (absent). */
	snprintf(root, sizeof(root), "%s/root", dir);
	CHECK_EQ_INT(mkdir(root, 0700), 0);
	snprintf(path, sizeof(path), "%s/escape", root);
	CHECK_EQ_INT(symlink("/etc/passwd", path), 0);
	rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHECK(rfd >= 0);
	CHECK_EQ_INT(safe_open(rfd, "escape", SAFE_IN_ROOT, NULL, &fd), -ENOENT);
	CHECK_EQ_INT(safe_open(rfd, "../../../../etc/passwd", SAFE_IN_ROOT, NULL, &fd), -ENOENT);
	CHECK_EQ_INT(fd, -1);
	close(rfd);
}

int main(void)
{
	char cmd[64];

	if (!mkdtemp(dir)) {
		printf("FAIL test_hostile_files: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	RUN(test_debuglink_climbing_to_a_fifo_neither_blocks_nor_opens_it);
	RUN(test_dwz_link_to_a_fifo_neither_blocks_nor_opens_it);
	RUN(test_exec_file_name_of_the_exec_d_file_resolves);
	RUN(test_exec_file_name_that_is_a_fifo_here_is_refused_without_blocking);
	RUN(test_exec_file_name_that_is_a_device_here_is_refused_unopened);
	RUN(test_safe_open_opens_the_expected_regular_file);
	RUN(test_safe_open_refuses_a_fifo_without_blocking);
	RUN(test_safe_open_refuses_a_device_unopened);
	RUN(test_safe_open_nofollow_refuses_a_symlink_follow_checks_its_target);
	RUN(test_safe_open_follows_links_by_hand_outside_the_dentry_cache);
	RUN(test_safe_open_refuses_another_inode);
	RUN(test_safe_open_in_root_never_leaves_the_root);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		printf("FAIL test_hostile_files: could not remove %s\n", dir);
	CHECK_EXIT();
}
