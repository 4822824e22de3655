// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_symbolize.c - unit tests of user/symbolize.c on this very process (built with -g -O0):
 * function, offset and exact source line of return addresses and function starts, libc
 * symbols, C++ demangling, unknown addresses, the module cache, image refresh and drop,
 * and images whose process exited or whose binary was deleted, MiniDebugInfo, and modules
 * found without symbols (build/tests/progs/minidebug_leak and stripped_leak), and a library
 * its owner truncates while it is loaded (libhostile_elf.so, built next to this binary from
 * tests/progs/hostile_elf.c).  Run as root.
 *
 * `test_symbolize --sleep` only sleeps: the deleted-binary test execs a copy of itself so.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "check.h"
#include "live/symbolize.h"
#include "live/procmaps.h"
#include "live/safe_open.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#define noinline __attribute__((noinline))

/* Whole definition on one line so its first instruction is on marker_line. */
static noinline int marker_fn(int x) { return x * 3 + 1; } static const int marker_line = __LINE__;

/* A C function under a C++ mangled name: leaktop::test::demangle_me(int). */
noinline int demangle_me(int x) __asm__("_ZN7leaktop4test11demangle_meEi");
noinline int demangle_me(int x) { return x + 2; }

static noinline uint64_t return_address(void)
{
	return (uint64_t)(uintptr_t)__builtin_return_address(0);
}

static uint64_t addr_of(int (*fn)(int))
{
	return (uint64_t)(uintptr_t)fn;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = s ? strlen(s) : 0, m = strlen(suffix);

	return s && n >= m && !strcmp(s + n - m, suffix);
}

static int self_exe(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void test_symbolize_return_address_gives_caller_and_call_line(void)
{
	uint64_t start = (uintptr_t)&test_symbolize_return_address_gives_caller_and_call_line;
	struct symbolizer *sym = symbolizer__new();
	struct sym_frame f;
	char exe[PATH_MAX];
	uint64_t ra = return_address(); int line = __LINE__;

	CHECK(sym != NULL);
	CHECK_EQ_INT(self_exe(exe, sizeof(exe)), 0);
	CHECK_EQ_INT(symbolizer__add_image(sym, 1, getpid()), 0);
	CHECK(symbolizer__has_image(sym, 1));
	CHECK_EQ_INT(symbolizer__resolve(sym, 1, ra, true, &f), 0);
	CHECK_EQ_INT(f.addr, ra);
	CHECK_EQ_STR(f.symbol, __func__);
	/* The offset is from the original address, not addr - 1. */
	CHECK_EQ_INT(f.offset, ra - start);
	CHECK_EQ_STR(f.module, exe);
	CHECK(ends_with(f.file, "test_symbolize.c"));
	CHECK_EQ_INT(f.line, line);
	sym_frame__clear(&f);
	CHECK(f.symbol == NULL && f.module == NULL && f.file == NULL);
	symbolizer__free(sym);
}

static void test_symbolize_function_start_has_offset_zero_and_definition_line(void)
{
	struct symbolizer *sym = symbolizer__new();
	struct sym_frame f;

	CHECK(sym != NULL);
	CHECK_EQ_INT(symbolizer__add_image(sym, 1, getpid()), 0);
	CHECK_EQ_INT(symbolizer__resolve(sym, 1, addr_of(marker_fn), false, &f), 0);
	CHECK_EQ_STR(f.symbol, "marker_fn");
	CHECK_EQ_INT(f.offset, 0);
	CHECK(ends_with(f.file, "test_symbolize.c"));
	CHECK_EQ_INT(f.line, marker_line);
	sym_frame__clear(&f);

	/* As a return address it stands for the byte before: not marker_fn any more. */
	CHECK_EQ_INT(symbolizer__resolve(sym, 1, addr_of(marker_fn), true, &f), 0);
	CHECK(!f.symbol || strcmp(f.symbol, "marker_fn"));
	sym_frame__clear(&f);
	symbolizer__free(sym);
}

/* libc's own definition of `name`, even when an allocator (or ASan) interposes it. */
static uint64_t libc_function(const char *name)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *fn = dlsym(libc ?: RTLD_NEXT, name);

	if (libc)
		dlclose(libc);
	return (uint64_t)(uintptr_t)fn;
}

static void test_symbolize_libc_malloc_resolves_in_libc(void)
{
	struct symbolizer *sym = symbolizer__new();
	uint64_t addr = libc_function("malloc");
	struct sym_frame f;

	CHECK(sym != NULL);
	CHECK(addr != 0);
	CHECK_EQ_INT(symbolizer__add_image(sym, 1, getpid()), 0);
	CHECK_EQ_INT(symbolizer__resolve(sym, 1, addr, false, &f), 0);
	CHECK(f.symbol != NULL);
	CHECK(!strcmp(f.symbol, "malloc") || !strcmp(f.symbol, "__libc_malloc"));
	CHECK_EQ_INT(f.offset, 0);
	CHECK(f.module && strstr(f.module, "libc"));
	sym_frame__clear(&f);

	/* Inside the function: same symbol, offset from its start. */
	CHECK_EQ_INT(symbolizer__resolve(sym, 1, addr + 5, true, &f), 0);
	CHECK(f.symbol != NULL);
	CHECK(!strcmp(f.symbol, "malloc") || !strcmp(f.symbol, "__libc_malloc"));
	CHECK_EQ_INT(f.offset, 5);
	sym_frame__clear(&f);
	symbolizer__free(sym);
}

static void test_symbolize_demangles_cpp_names(void)
{
	struct symbolizer *sym = symbolizer__new();
	struct sym_frame f;

	CHECK(sym != NULL);
	CHECK_EQ_INT(symbolizer__add_image(sym, 1, getpid()), 0);
	CHECK_EQ_INT(symbolizer__resolve(sym, 1, addr_of(demangle_me) + 1, false, &f), 0);
	CHECK_EQ_STR(f.symbol, "leaktop::test::demangle_me(int)");
	CHECK_EQ_INT(f.offset, 1);
	sym_frame__clear(&f);
	symbolizer__free(sym);
}

static void test_symbolize_unknown_address_or_image_gives_enoent(void)
{
	struct symbolizer *sym = symbolizer__new();
	static int data;
	struct sym_frame f;

	CHECK(sym != NULL);
	CHECK_EQ_INT(symbolizer__add_image(sym, 1, getpid()), 0);
	/* Below mmap_min_addr: in no mapping. */
	f.symbol = (char *)"junk";
	CHECK_EQ_INT(symbolizer__resolve(sym, 1, 0x10, true, &f), -ENOENT);
	CHECK(f.symbol == NULL && f.module == NULL && f.file == NULL && f.line == 0);
	CHECK_EQ_INT(f.addr, 0x10);
	/* Only executable mappings are kept: data is no frame. */
	CHECK_EQ_INT(symbolizer__resolve(sym, 1, (uintptr_t)&data, false, &f), -ENOENT);
	CHECK(f.symbol == NULL);
	/* Unknown image. */
	CHECK(!symbolizer__has_image(sym, 2));
	CHECK_EQ_INT(symbolizer__resolve(sym, 2, addr_of(marker_fn), false, &f), -ENOENT);
	CHECK(f.symbol == NULL && f.module == NULL);
	sym_frame__clear(&f);
	symbolizer__free(sym);
}

static int frames_equal(const struct sym_frame *a, const struct sym_frame *b)
{
	return a->addr == b->addr && a->offset == b->offset && a->line == b->line &&
	       a->symbol && b->symbol && !strcmp(a->symbol, b->symbol) &&
	       a->module && b->module && !strcmp(a->module, b->module) &&
	       a->file && b->file && !strcmp(a->file, b->file);
}

static noinline void test_symbolize_repeated_and_shared_lookups_are_equal(void)
{
	struct symbolizer *sym = symbolizer__new();
	uint64_t ra = return_address();
	struct sym_frame a, b, c;
	int equal;

	CHECK(sym != NULL);
	/* Two images of the same process share every module. */
	CHECK_EQ_INT(symbolizer__add_image(sym, 1, getpid()), 0);
	CHECK_EQ_INT(symbolizer__add_image(sym, 2, getpid()), 0);
	CHECK_EQ_INT(symbolizer__resolve(sym, 1, ra, true, &a), 0);
	CHECK_EQ_INT(symbolizer__resolve(sym, 1, ra, true, &b), 0);
	CHECK_EQ_INT(symbolizer__resolve(sym, 2, ra, true, &c), 0);
	equal = frames_equal(&a, &b) && frames_equal(&a, &c);
	sym_frame__clear(&a);
	sym_frame__clear(&b);
	sym_frame__clear(&c);
	CHECK(equal);

	/* Dropping one image keeps the shared module usable by the other. */
	symbolizer__drop_image(sym, 1);
	CHECK(!symbolizer__has_image(sym, 1));
	CHECK_EQ_INT(symbolizer__resolve(sym, 1, ra, true, &a), -ENOENT);
	CHECK_EQ_INT(symbolizer__resolve(sym, 2, ra, true, &a), 0);
	CHECK_EQ_STR(a.symbol, __func__);
	sym_frame__clear(&a);
	symbolizer__drop_image(sym, 3);		/* unknown: no-op */
	symbolizer__free(sym);
}

static void test_symbolize_image_cache_evicts_least_recently_used(void)
{
	enum { N = 5000 };	/* more images than the cache holds */
	struct symbolizer *sym = symbolizer__new();
	struct sym_frame f;
	uint64_t id;
	int err;

	CHECK(sym != NULL);
	for (id = 0; id < N; id++) {
		CHECK_EQ_INT(symbolizer__add_image(sym, id, getpid()), 0);
		/* Keep image 0 in use. */
		err = symbolizer__resolve(sym, 0, addr_of(marker_fn), false, &f);
		sym_frame__clear(&f);
		CHECK_EQ_INT(err, 0);
	}
	CHECK(symbolizer__has_image(sym, 0));
	CHECK(!symbolizer__has_image(sym, 1));
	CHECK(symbolizer__has_image(sym, N - 1));
	CHECK_EQ_INT(symbolizer__resolve(sym, N - 1, addr_of(marker_fn), false, &f), 0);
	CHECK_EQ_STR(f.symbol, "marker_fn");
	sym_frame__clear(&f);
	symbolizer__free(sym);
}

static void test_symbolize_refresh_picks_up_new_mappings(void)
{
	struct symbolizer *sym = symbolizer__new();
	long ps = sysconf(_SC_PAGESIZE);
	char exe[PATH_MAX];
	struct sym_frame f;
	void *area;
	int fd;

	CHECK(sym != NULL);
	CHECK_EQ_INT(self_exe(exe, sizeof(exe)), 0);
	CHECK_EQ_INT(symbolizer__add_image(sym, 1, getpid()), 0);

	/* Like dlopen: a new executable file mapping after the image was added. */
	fd = open(exe, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	area = mmap(NULL, (size_t)ps, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	CHECK(area != MAP_FAILED);
	CHECK_EQ_INT(symbolizer__resolve(sym, 1, (uintptr_t)area + 16, false, &f), -ENOENT);
	CHECK_EQ_INT(symbolizer__add_image(sym, 1, getpid()), 0);
	CHECK_EQ_INT(symbolizer__resolve(sym, 1, (uintptr_t)area + 16, false, &f), 0);
	munmap(area, (size_t)ps);
	CHECK_EQ_STR(f.module, exe);
	sym_frame__clear(&f);
	/* The rest of the image is still there. */
	CHECK_EQ_INT(symbolizer__resolve(sym, 1, addr_of(marker_fn), false, &f), 0);
	CHECK_EQ_STR(f.symbol, "marker_fn");
	sym_frame__clear(&f);
	symbolizer__free(sym);
}

static void test_symbolize_exited_child_still_resolves(void)
{
	struct symbolizer *sym = symbolizer__new();
	struct sym_frame f;
	pid_t pid;

	CHECK(sym != NULL);
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		for (;;)
			pause();
	}
	/* A fresh symbolizer: nothing of this process is cached, all comes from the child. */
	CHECK_EQ_INT(symbolizer__add_image(sym, 7, pid), 0);
	kill(pid, SIGKILL);
	CHECK_EQ_INT(waitpid(pid, NULL, 0), pid);

	/* The child was a fork: same addresses. */
	CHECK_EQ_INT(symbolizer__resolve(sym, 7, addr_of(marker_fn) + 2, true, &f), 0);
	CHECK_EQ_STR(f.symbol, "marker_fn");
	CHECK_EQ_INT(f.offset, 2);
	CHECK(ends_with(f.file, "test_symbolize.c"));
	CHECK_EQ_INT(f.line, marker_line);
	sym_frame__clear(&f);

	/* Registering the gone process again fails and keeps the old image. */
	CHECK_EQ_INT(symbolizer__add_image(sym, 7, pid), -ESRCH);
	CHECK_EQ_INT(symbolizer__add_image(sym, 8, pid), -ESRCH);
	CHECK(symbolizer__has_image(sym, 7));
	CHECK(!symbolizer__has_image(sym, 8));
	CHECK_EQ_INT(symbolizer__resolve(sym, 7, addr_of(marker_fn), false, &f), 0);
	CHECK_EQ_STR(f.symbol, "marker_fn");
	sym_frame__clear(&f);
	symbolizer__free(sym);
}

static void test_symbolize_zombie_process_gives_esrch(void)
{
	struct symbolizer *sym = symbolizer__new();
	struct sym_frame f;
	siginfo_t info;
	pid_t pid;
	int err;

	CHECK(sym != NULL);
	CHECK_EQ_INT(symbolizer__add_image(sym, 1, getpid()), 0);
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid)
		_exit(0);
	/* Wait for the exit but leave the zombie: its maps file reads empty. */
	CHECK_EQ_INT(waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT), 0);
	err = symbolizer__add_image(sym, 1, pid);
	waitpid(pid, NULL, 0);
	CHECK_EQ_INT(err, -ESRCH);
	/* The refresh failed: the old image is intact. */
	CHECK(symbolizer__has_image(sym, 1));
	CHECK_EQ_INT(symbolizer__resolve(sym, 1, addr_of(marker_fn), false, &f), 0);
	CHECK_EQ_STR(f.symbol, "marker_fn");
	sym_frame__clear(&f);
	symbolizer__free(sym);
}

/* Lowest mapping at file offset 0 of `path` (deleted or not) in `maps`, or 0. */
static uint64_t load_base(const struct proc_maps *maps, const char *path)
{
	size_t i;

	for (i = 0; i < maps->n; i++) {
		if (maps->v[i].path && !strcmp(maps->v[i].path, path) && !maps->v[i].file_offset)
			return maps->v[i].start;
	}
	return 0;
}

/* Copies this binary next to itself and runs the copy with --sleep.  Child pid or -1. */
static pid_t spawn_copy(char *copy, size_t size)
{
	char exe[PATH_MAX], buf[65536];
	int in = -1, out = -1, pfd[2];
	pid_t pid = -1;
	ssize_t n;

	if (self_exe(exe, sizeof(exe)))
		return -1;
	if ((size_t)snprintf(copy, size, "%s.copy.XXXXXX", exe) >= size)
		return -1;
	in = open(exe, O_RDONLY | O_CLOEXEC);
	out = mkostemp(copy, O_CLOEXEC);
	if (out < 0)
		copy[0] = '\0';
	if (in < 0 || out < 0)
		goto out;
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		if (write(out, buf, (size_t)n) != n)
			goto out;
	}
	if (n < 0 || fchmod(out, 0700))
		goto out;
	close(out);
	out = -1;
	if (pipe2(pfd, O_CLOEXEC))
		goto out;
	fflush(stdout);
	pid = fork();
	if (!pid) {
		execl(copy, copy, "--sleep", (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	/* EOF once the exec closed the write end. */
	while (pid > 0 && read(pfd[0], buf, 1) < 0 && errno == EINTR)
		;
	close(pfd[0]);
out:
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	if (pid < 0 && copy[0])
		unlink(copy);
	return pid;
}

static void test_symbolize_deleted_binary_of_exited_process_resolves(void)
{
	struct symbolizer *sym = symbolizer__new();
	struct proc_maps mine, child;
	uint64_t my_base, child_base;
	char copy[PATH_MAX], exe[PATH_MAX];
	struct sym_frame f;
	pid_t pid;

	CHECK(sym != NULL);
	CHECK_EQ_INT(self_exe(exe, sizeof(exe)), 0);
	pid = spawn_copy(copy, sizeof(copy));
	CHECK(pid > 0);
	unlink(copy);		/* only /proc/PID/map_files can open it now */

	CHECK_EQ_INT(procmaps__read(getpid(), &mine), 0);
	CHECK_EQ_INT(procmaps__read(pid, &child), 0);
	my_base = load_base(&mine, exe);
	child_base = load_base(&child, copy);
	procmaps__free(&mine);
	procmaps__free(&child);
	CHECK_EQ_INT(symbolizer__add_image(sym, 1, pid), 0);
	kill(pid, SIGKILL);
	CHECK_EQ_INT(waitpid(pid, NULL, 0), pid);
	CHECK(my_base && child_base);

	CHECK_EQ_INT(symbolizer__resolve(sym, 1, addr_of(marker_fn) - my_base + child_base, false,
					 &f), 0);
	CHECK_EQ_STR(f.symbol, "marker_fn");
	CHECK_EQ_INT(f.offset, 0);
	CHECK_EQ_STR(f.module, copy);		/* " (deleted)" stripped */
	CHECK(ends_with(f.file, "test_symbolize.c"));
	CHECK_EQ_INT(f.line, marker_line);
	sym_frame__clear(&f);
	symbolizer__free(sym);
}

/* The file offset of addr in this process's mapping of it, and the file's identity. */
static int own_file_offset(uint64_t addr, struct file_id *id, uint64_t *off)
{
	const struct proc_map *m;
	struct proc_maps maps;
	int err = -1;

	if (procmaps__read(getpid(), &maps))
		return -1;
	m = procmaps__find(&maps, addr);
	if (m && m->ino) {
		*id = (struct file_id){ .dev = m->dev, .ino = m->ino };
		*off = addr - m->start + m->file_offset;
		err = 0;
	}
	procmaps__free(&maps);
	return err;
}

/*
 * A frame of a process that is gone, known by its file (identity and offset) only: named
 * through the module another image loaded, else through the name given, but only when that
 * name leads to the very file (not to a copy, not through a link), never otherwise.
 */
static void test_symbolize_file_of_gone_process_resolves_only_from_that_very_file(void)
{
	struct symbolizer *sym = symbolizer__new();
	char exe[PATH_MAX], copy[] = "/tmp/leaktop-test-sym-XXXXXX", link[PATH_MAX + 32];
	uint64_t addr = addr_of(marker_fn), off = 0;
	struct file_id id = {};
	struct sym_frame f;
	int in, out;

	CHECK(sym != NULL);
	CHECK_EQ_INT(self_exe(exe, sizeof(exe)), 0);
	CHECK_EQ_INT(own_file_offset(addr, &id, &off), 0);

	/* By its name: the file is opened, checked and named. */
	CHECK_EQ_INT(symbolizer__resolve_file(sym, addr, &id, exe, off, false, NULL, &f), 0);
	CHECK_EQ_INT(f.addr, addr);
	CHECK_EQ_STR(f.symbol, "marker_fn");
	CHECK_EQ_INT(f.offset, 0);
	CHECK_EQ_STR(f.module, exe);
	CHECK_EQ_INT(f.line, marker_line);
	sym_frame__clear(&f);
	/* As a return address, the offset stands for the byte before: the call. */
	CHECK_EQ_INT(symbolizer__resolve_file(sym, addr + 1, &id, exe, off + 1, true, NULL, &f), 0);
	CHECK_EQ_STR(f.symbol, "marker_fn");
	CHECK_EQ_INT(f.offset, 1);
	sym_frame__clear(&f);
	symbolizer__free(sym);

	/* No name: only a module loaded for the same file (another image's) answers. */
	sym = symbolizer__new();
	CHECK_EQ_INT(symbolizer__resolve_file(sym, addr, &id, NULL, off, false, NULL, &f),
		     -ENOENT);
	CHECK(f.module == NULL && f.symbol == NULL);
	CHECK_EQ_INT(symbolizer__add_image(sym, 1, getpid()), 0);
	symbolizer__drop_image(sym, 1);
	CHECK_EQ_INT(symbolizer__resolve_file(sym, addr, &id, NULL, off, false, NULL, &f), 0);
	CHECK_EQ_STR(f.symbol, "marker_fn");
	CHECK_EQ_STR(f.module, exe);
	sym_frame__clear(&f);
	symbolizer__free(sym);

	/* A name that leads to another file (a copy), or through a link, is refused. */
	in = open(exe, O_RDONLY);
	out = mkstemp(copy);
	CHECK(in >= 0 && out >= 0);
	for (char buf[65536]; ; ) {
		ssize_t n = read(in, buf, sizeof(buf));

		if (n <= 0)
			break;
		CHECK_EQ_INT(write(out, buf, n), n);
	}
	close(in);
	close(out);
	snprintf(link, sizeof(link), "%s.lnk", copy);
	CHECK_EQ_INT(symlink(exe, link), 0);
	sym = symbolizer__new();
	CHECK_EQ_INT(symbolizer__resolve_file(sym, addr, &id, copy, off, false, NULL, &f),
		     -ENOENT);
	CHECK(f.module == NULL && f.symbol == NULL);
	CHECK_EQ_INT(symbolizer__resolve_file(sym, addr, &id, link, off, false, NULL, &f),
		     -ENOENT);
	CHECK(f.module == NULL && f.symbol == NULL);
	/* A name through procfs (a process's own /proc, in its mount namespace): never looked up. */
	snprintf(link, sizeof(link), "/proc/%d/root%s", (int)getpid(), exe);
	CHECK_EQ_INT(symbolizer__resolve_file(sym, addr, &id, link, off, false, NULL, &f),
		     -ENOENT);
	CHECK(f.module == NULL && f.symbol == NULL);
	snprintf(link, sizeof(link), "%s.lnk", copy);
	/* Unknown file (inode 0): nothing. */
	CHECK_EQ_INT(symbolizer__resolve_file(sym, addr, &(struct file_id){ 0 }, exe, off, false,
					      NULL, &f), -ENOENT);
	CHECK(f.module == NULL);
	symbolizer__free(sym);
	unlink(link);
	unlink(copy);
}

/* Copy file `from` to the new file named by template `to` (mkstemp).  0 or -1. */
static int copy_file(const char *from, char *to)
{
	int in = open(from, O_RDONLY), out = mkstemp(to), err = 0;
	char buf[65536];
	ssize_t n;

	if (in < 0 || out < 0)
		err = -1;
	while (!err && (n = read(in, buf, sizeof(buf))) > 0)
		err = write(out, buf, (size_t)n) == n ? 0 : -1;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return err;
}

/* Resolve marker_fn at `off` of file `id` (named `path`): its line must be found. */
static void resolve_marker_line(struct symbolizer *sym, const struct file_id *id,
				const char *path, uint64_t off)
{
	struct sym_frame f;

	CHECK_EQ_INT(symbolizer__resolve_file(sym, addr_of(marker_fn), id, path, off, false, NULL,
					      &f), 0);
	CHECK_EQ_STR(f.symbol, "marker_fn");
	CHECK_EQ_INT(f.line, marker_line);
	sym_frame__clear(&f);
}

/*
 * What the DWARF of modules no image references holds is bounded (issue 25: leaktop's own
 * memory): beyond the bound the least recently used such module is closed, never the one
 * being looked up in, and a later lookup in it opens it again and still finds the line.  Two
 * files with DWARF: this test's executable and a copy of it (another inode, another module).
 */
static void test_symbolize_dwarf_of_unreferenced_modules_is_closed_beyond_its_bound(void)
{
	struct symbolizer *sym = symbolizer__new();
	char exe[PATH_MAX], copy[] = "/tmp/leaktop-test-sym-XXXXXX";
	uint64_t off = 0;
	struct file_id id = {}, copy_id;
	struct sym_stats st;
	struct stat sb;

	CHECK(sym != NULL);
	CHECK_EQ_INT(self_exe(exe, sizeof(exe)), 0);
	CHECK_EQ_INT(own_file_offset(addr_of(marker_fn), &id, &off), 0);
	CHECK_EQ_INT(copy_file(exe, copy), 0);
	CHECK_EQ_INT(stat(copy, &sb), 0);
	copy_id = (struct file_id){ .dev = sb.st_dev, .ino = sb.st_ino };

	/* Within the default bound both stay open, their DWARF counted. */
	resolve_marker_line(sym, &id, exe, off);
	resolve_marker_line(sym, &copy_id, copy, off);
	symbolizer__stats(sym, &st);
	CHECK_EQ_INT(st.modules, 2);
	CHECK(st.dwarf_bytes > 0);
	CHECK_EQ_INT(st.dwarf_closed, 0);
	symbolizer__free(sym);

	/* A bound below one module's DWARF: each lookup closes the other module. */
	sym = symbolizer__new();
	CHECK(sym != NULL);
	symbolizer__set_dwarf_max(sym, 1);
	resolve_marker_line(sym, &id, exe, off);
	symbolizer__stats(sym, &st);
	CHECK_EQ_INT(st.modules, 1);
	CHECK_EQ_INT(st.dwarf_closed, 0);
	resolve_marker_line(sym, &copy_id, copy, off);
	symbolizer__stats(sym, &st);
	CHECK_EQ_INT(st.modules, 1);
	CHECK_EQ_INT(st.dwarf_closed, 1);
	resolve_marker_line(sym, &id, exe, off);
	symbolizer__stats(sym, &st);
	CHECK_EQ_INT(st.modules, 1);
	CHECK_EQ_INT(st.dwarf_closed, 2);
	symbolizer__free(sym);
	unlink(copy);
}

static void test_symbolize_free_closes_every_file(void)
{
	int before = count_fds();
	struct symbolizer *sym = symbolizer__new();
	uint64_t ra = return_address();
	struct sym_frame f;
	int err;

	CHECK(before > 0);
	CHECK(sym != NULL);
	CHECK_EQ_INT(symbolizer__add_image(sym, 1, getpid()), 0);
	CHECK(count_fds() > before);
	err = symbolizer__resolve(sym, 1, ra, true, &f);
	sym_frame__clear(&f);
	CHECK_EQ_INT(err, 0);
	/* libc as well: it may look for separate debug info. */
	err = symbolizer__resolve(sym, 1, libc_function("free"), false, &f);
	sym_frame__clear(&f);
	CHECK_EQ_INT(err, 0);
	symbolizer__free(sym);
	CHECK_EQ_INT(count_fds(), before);
}

static void test_symbolize_cache_answers_repeated_address_without_lookup(void)
{
	struct symbolizer *sym = symbolizer__new();
	struct sym_budget b = {};
	struct sym_frame f1, f2;
	struct sym_stats st;

	CHECK(sym != NULL);
	CHECK_EQ_INT(symbolizer__add_image(sym, 1, getpid()), 0);
	/* Image 2 is another process of the same program: the same module, the same entry. */
	CHECK_EQ_INT(symbolizer__add_image(sym, 2, getpid()), 0);
	CHECK_EQ_INT(symbolizer__resolve_within(sym, 1, addr_of(marker_fn), false, &b, &f1), 0);
	CHECK_EQ_INT(symbolizer__resolve_within(sym, 2, addr_of(marker_fn), false, &b, &f2), 0);
	CHECK_EQ_INT(b.looked_up, 1);
	CHECK_EQ_INT(b.cached, 1);
	CHECK_EQ_INT(b.deferred, 0);
	CHECK_EQ_STR(f2.symbol, "marker_fn");
	CHECK_EQ_STR(f2.symbol, f1.symbol);
	CHECK_EQ_STR(f2.file, f1.file);
	CHECK_EQ_INT(f2.line, marker_line);
	CHECK(!f1.deferred && !f2.deferred);
	symbolizer__stats(sym, &st);
	CHECK_EQ_INT(st.images, 2);
	CHECK_EQ_INT(st.cache_entries, 1);
	sym_frame__clear(&f1);
	sym_frame__clear(&f2);
	symbolizer__free(sym);
}

static void test_symbolize_spent_budget_defers_with_module_and_cache_still_answers(void)
{
	struct symbolizer *sym = symbolizer__new();
	struct sym_budget spent = { .deadline_ns = 1 };
	struct sym_frame f;
	char exe[PATH_MAX];

	CHECK(sym != NULL);
	CHECK_EQ_INT(self_exe(exe, sizeof(exe)), 0);
	CHECK_EQ_INT(symbolizer__add_image(sym, 1, getpid()), 0);
	CHECK_EQ_INT(symbolizer__resolve_within(sym, 1, addr_of(marker_fn), false, &spent, &f),
		     -EAGAIN);
	CHECK(f.deferred);
	CHECK_EQ_INT(f.addr, addr_of(marker_fn));
	CHECK_EQ_STR(f.module, exe);
	CHECK(f.symbol == NULL && f.file == NULL);
	CHECK_EQ_INT(spent.deferred, 1);
	sym_frame__clear(&f);
	CHECK(!f.deferred);

	/* Resolved once without a budget, the address is answered even with none left. */
	CHECK_EQ_INT(symbolizer__resolve(sym, 1, addr_of(marker_fn), false, &f), 0);
	sym_frame__clear(&f);
	CHECK_EQ_INT(symbolizer__resolve_within(sym, 1, addr_of(marker_fn), false, &spent, &f), 0);
	CHECK_EQ_STR(f.symbol, "marker_fn");
	CHECK_EQ_INT(spent.cached, 1);
	CHECK_EQ_INT(spent.deferred, 1);
	sym_frame__clear(&f);
	symbolizer__free(sym);
}

/* The value of function `name` in the symbol table of ELF `path` (nm), or 0. */
static uint64_t nm_value(const char *path, const char *name)
{
	char cmd[PATH_MAX + 64], line[512], sym[256], type;
	unsigned long long v, value = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm --defined-only --format=posix '%s'", path);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p)) {
		if (sscanf(line, "%255s %c %llx", sym, &type, &v) == 3 && !strcmp(sym, name))
			value = v;
	}
	pclose(p);
	return value;
}

/* Runs test program `prog` (built by the Makefile) sleeping in its loop.  Pid or -1. */
static pid_t spawn_prog(const char *prog)
{
	struct timespec ts = { .tv_nsec = 50 * 1000 * 1000 };
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (!pid) {
		execl(prog, prog, "250", (char *)NULL);
		_exit(127);
	}
	nanosleep(&ts, NULL);		/* past ld.so */
	return pid;
}

/*
 * The frame of `func` (+4, inside it) in a running `prog` whose symbols come only from what
 * the stripped file carries; `full` is its unstripped build, to find the function.
 */
static int resolve_in_prog(struct symbolizer *sym, const char *prog, const char *full,
			   const char *func, struct sym_frame *f)
{
	uint64_t value = nm_value(full, func), base;
	char real[PATH_MAX];
	struct proc_maps maps;
	pid_t pid;
	int err;

	if (!value || !realpath(prog, real))
		return -ENOENT;
	pid = spawn_prog(prog);
	if (pid < 0)
		return -ECHILD;
	err = procmaps__read(pid, &maps);
	if (!err) {
		base = load_base(&maps, real);
		procmaps__free(&maps);
		err = base ? symbolizer__add_image(sym, 1, pid) : -ENOENT;
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	if (!err)
		err = symbolizer__resolve(sym, 1, base + value + 4, false, f);
	return err;
}

/*
 * libdwfl (elfutils, built with liblzma as Debian builds it) reads MiniDebugInfo: a static
 * function of a program stripped the way Fedora strips them is named from .gnu_debugdata,
 * and the module is not said to miss symbols.
 */
static void test_symbolize_minidebuginfo_names_static_function_and_is_not_missing(void)
{
	struct symbolizer *sym = symbolizer__new();
	struct sym_missing_module *missing;
	struct sym_frame f = {};
	size_t n = 9;

	CHECK(sym != NULL);
	CHECK_EQ_INT(resolve_in_prog(sym, "build/tests/progs/minidebug_leak",
				     "build/tests/progs/minidebug_leak.full", "leak_in_minidebug",
				     &f), 0);
	CHECK_EQ_STR(f.symbol, "leak_in_minidebug");
	CHECK_EQ_INT(f.offset, 4);
	CHECK(f.file == NULL);			/* no DWARF anywhere */
	symbolizer__take_missing(sym, &missing, &n);
	CHECK_EQ_INT(n, 0);
	sym_missing_module__free(missing, n);
	sym_frame__clear(&f);
	symbolizer__free(sym);
}

/*
 * A program stripped of every symbol table, with no debug file: its static function stays
 * unnamed (null, never a neighbour's name) and the module is handed over once, with its
 * build id.
 */
static void test_symbolize_stripped_module_without_debug_file_is_missing_once(void)
{
	struct symbolizer *sym = symbolizer__new();
	struct sym_missing_module *missing = NULL;
	struct sym_frame f = {};
	char real[PATH_MAX];
	size_t n = 0;

	CHECK(sym != NULL);
	CHECK(realpath("build/tests/progs/stripped_leak", real) != NULL);
	CHECK_EQ_INT(resolve_in_prog(sym, "build/tests/progs/stripped_leak",
				     "build/tests/progs/stripped_leak.full", "leak_stripped", &f),
		     0);
	CHECK(f.symbol == NULL);
	CHECK_EQ_STR(f.module, real);
	symbolizer__take_missing(sym, &missing, &n);
	CHECK_EQ_INT(n, 1);
	CHECK_EQ_STR(missing[0].path, real);
	CHECK(missing[0].build_id && strlen(missing[0].build_id) == 40);
	sym_missing_module__free(missing, n);
	/* Another address of the same module: not handed over again. */
	sym_frame__clear(&f);
	CHECK_EQ_INT(symbolizer__resolve(sym, 1, f.addr + 8, false, &f), 0);
	symbolizer__take_missing(sym, &missing, &n);
	CHECK_EQ_INT(n, 0);
	sym_missing_module__free(missing, n);
	sym_frame__clear(&f);
	symbolizer__free(sym);
}

/* Built next to this binary from tests/progs/hostile_elf.c (-DHOSTILE_LIB). */
static int hostile_lib(char *buf)
{
	char *slash;

	if (self_exe(buf, PATH_MAX))
		return -1;
	slash = strrchr(buf, '/');
	if (!slash || (size_t)(slash - buf) + sizeof("/libhostile_elf.so") > PATH_MAX)
		return -1;
	strcpy(slash, "/libhostile_elf.so");
	return 0;
}

/*
 * A copy of the library in a new directory (dir, path), owned by uid with mode, and a child
 * that loads it and sleeps: its pid, and the addresses of f_a and f_b in it.
 */
static pid_t lib_child(char *dir, char *path, uid_t uid, mode_t mode, uint64_t *f_a,
		       uint64_t *f_b)
{
	char src[PATH_MAX], buf[65536];
	uint64_t addrs[2];
	int in, out, p[2];
	ssize_t n;
	pid_t pid;

	if (hostile_lib(src) || !mkdtemp(dir))
		return -1;
	snprintf(path, PATH_MAX, "%s/libx.so", dir);
	in = open(src, O_RDONLY);
	out = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);
	if (in < 0 || out < 0)
		return -1;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			return -1;
	close(in);
	if (fchown(out, uid, (gid_t)-1) || fchmod(out, mode) || close(out) || pipe(p))
		return -1;
	fflush(stdout);
	pid = fork();
	if (!pid) {
		void *h = dlopen(path, RTLD_NOW);

		addrs[0] = h ? (uint64_t)(uintptr_t)dlsym(h, "f_a") : 0;
		addrs[1] = h ? (uint64_t)(uintptr_t)dlsym(h, "f_b") : 0;
		if (write(p[1], addrs, sizeof(addrs)) != sizeof(addrs))
			_exit(1);
		/* Nothing of the library runs again: killed, its destructors never run. */
		for (;;)
			pause();
	}
	close(p[1]);
	n = pid > 0 ? read(p[0], addrs, sizeof(addrs)) : -1;
	close(p[0]);
	if (n != sizeof(addrs) || !addrs[0] || !addrs[1])
		return -1;
	*f_a = addrs[0];
	*f_b = addrs[1];
	return pid;
}

static void lib_child_end(pid_t pid, const char *dir, const char *path)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	unlink(path);
	rmdir(dir);
}

static void test_symbolize_library_its_owner_truncates_still_resolves_without_sigbus(void)
{
	char dir[] = "/tmp/leaktop-test-sym-XXXXXX", path[PATH_MAX];
	struct symbolizer *sym = symbolizer__new();
	struct sym_stats st;
	struct sym_frame f;
	uint64_t f_a, f_b;
	pid_t pid;

	CHECK(sym != NULL);
	/* A user's library: nobody's (when run as root), or this user's own. */
	pid = lib_child(dir, path, getuid() ? getuid() : 65534, 0755, &f_a, &f_b);
	CHECK(pid > 0);
	CHECK_EQ_INT(symbolizer__add_image(sym, 1, pid), 0);
	CHECK_EQ_INT(symbolizer__resolve(sym, 1, f_a, false, &f), 0);
	CHECK_EQ_STR(f.symbol, "f_a");
	CHECK(ends_with(f.file, "hostile_elf.c"));
	sym_frame__clear(&f);
	/* Its owner truncates it: a lookup that was to read it raises SIGBUS if it is mapped. */
	CHECK_EQ_INT(truncate(path, 0), 0);
	CHECK_EQ_INT(symbolizer__resolve(sym, 1, f_b, false, &f), 0);
	/* Read, not mapped: the symbol table read for f_a still names f_b. */
	CHECK_EQ_STR(f.symbol, "f_b");
	CHECK(ends_with(f.module, "/libx.so"));
	sym_frame__clear(&f);
	symbolizer__stats(sym, &st);
	CHECK_EQ_INT(st.read_modules, 1);
	CHECK(st.read_bytes > 0);
	CHECK_EQ_INT(st.refused, 0);
	/* A new image of the same process: the truncated file is no ELF object any more. */
	CHECK_EQ_INT(symbolizer__add_image(sym, 2, pid), 0);
	symbolizer__free(sym);
	lib_child_end(pid, dir, path);
}

static void test_symbolize_root_only_library_is_mapped_not_read(void)
{
	char dir[] = "/tmp/leaktop-test-sym-XXXXXX", path[PATH_MAX];
	struct symbolizer *sym = symbolizer__new();
	struct sym_stats st;
	struct sym_frame f;
	uint64_t f_a, f_b;
	pid_t pid;

	CHECK(sym != NULL);
	if (getuid()) {
		printf("(not root: no file of root's to map)\n");
		symbolizer__free(sym);
		return;
	}
	pid = lib_child(dir, path, 0, 0755, &f_a, &f_b);
	CHECK(pid > 0);
	CHECK_EQ_INT(symbolizer__add_image(sym, 1, pid), 0);
	CHECK_EQ_INT(symbolizer__resolve(sym, 1, f_b, false, &f), 0);
	CHECK_EQ_STR(f.symbol, "f_b");
	sym_frame__clear(&f);
	symbolizer__stats(sym, &st);
	CHECK_EQ_INT(st.read_modules, 0);
	CHECK_EQ_INT(st.read_bytes, 0);
	symbolizer__free(sym);
	lib_child_end(pid, dir, path);

	/* Root's, but writable by its group: read. */
	strcpy(dir, "/tmp/leaktop-test-sym-XXXXXX");
	sym = symbolizer__new();
	CHECK(sym != NULL);
	pid = lib_child(dir, path, 0, 0775, &f_a, &f_b);
	CHECK(pid > 0);
	CHECK_EQ_INT(symbolizer__add_image(sym, 1, pid), 0);
	symbolizer__stats(sym, &st);
	CHECK_EQ_INT(st.read_modules, 1);
	symbolizer__free(sym);
	lib_child_end(pid, dir, path);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--sleep")) {
		for (;;)
			pause();
	}
	RUN(test_symbolize_return_address_gives_caller_and_call_line);
	RUN(test_symbolize_function_start_has_offset_zero_and_definition_line);
	RUN(test_symbolize_libc_malloc_resolves_in_libc);
	RUN(test_symbolize_demangles_cpp_names);
	RUN(test_symbolize_unknown_address_or_image_gives_enoent);
	RUN(test_symbolize_repeated_and_shared_lookups_are_equal);
	RUN(test_symbolize_image_cache_evicts_least_recently_used);
	RUN(test_symbolize_refresh_picks_up_new_mappings);
	RUN(test_symbolize_exited_child_still_resolves);
	RUN(test_symbolize_zombie_process_gives_esrch);
	RUN(test_symbolize_deleted_binary_of_exited_process_resolves);
	RUN(test_symbolize_file_of_gone_process_resolves_only_from_that_very_file);
	RUN(test_symbolize_dwarf_of_unreferenced_modules_is_closed_beyond_its_bound);
	RUN(test_symbolize_free_closes_every_file);
	RUN(test_symbolize_cache_answers_repeated_address_without_lookup);
	RUN(test_symbolize_spent_budget_defers_with_module_and_cache_still_answers);
	RUN(test_symbolize_minidebuginfo_names_static_function_and_is_not_missing);
	RUN(test_symbolize_stripped_module_without_debug_file_is_missing_once);
	RUN(test_symbolize_library_its_owner_truncates_still_resolves_without_sigbus);
	RUN(test_symbolize_root_only_library_is_mapped_not_read);
	CHECK_EXIT();
}
