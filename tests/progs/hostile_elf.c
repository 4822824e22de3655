// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * hostile_elf.c - a program that loads a library of its own and then does to it what its
 * owner may (review C1, C3).  Built two ways from this file: the program (make), and with
 * -DHOSTILE_LIB -shared -fPIC the library it dlopens (tests/e2e/hostile_elf.sh builds it in
 * the attacker's directory, tests/unit/test_symbolize next to itself).
 *
 * Usage: hostile_elf truncate DIR LIB
 *   dlopen LIB, create DIR/ready; open /dev/null from f_a() every 50 ms (closed again at
 *   once) until DIR/go exists; then open it once from f_b() (a new fd site whose frames are
 *   in LIB; kept open), truncate LIB to 0 bytes at once and create DIR/truncated; then leak
 *   32 B from main_after() every 50 ms until DIR/quit exists (never calling into LIB again:
 *   its pages are gone).  fd sites, which whole-system mode traces without --exact.
 * Usage: hostile_elf huge DIR LIB
 *   dlopen LIB (tests/progs/huge_fde.S) and create DIR/ready; then, until DIR/quit exists,
 *   open /dev/null every 50 ms from a function called by huge_fde_call() (the descriptor is
 *   kept: an fd site whose stack passes through LIB's crafted unwind information).
 * Both first write their pid to DIR/pid.  Each gives up after 180 s (exit 3), so a broken
 * test leaves nothing behind.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

#ifdef HOSTILE_LIB

NOINLINE int f_a(void)
{
	return open("/dev/null", O_RDONLY);	/* LEAK:f_a */
}

NOINLINE int f_b(void)
{
	return open("/dev/null", O_RDONLY);	/* LEAK:f_b */
}

#else

static volatile void *sink;

static int exists(const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

static void create(const char *dir, const char *name)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		_exit(2);
	close(fd);
}

/* DIR/pid: this process's pid (written under another name, then renamed). */
static void write_pid(const char *dir)
{
	char tmp[4096], path[4096], buf[32];
	int n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid()), fd;

	snprintf(tmp, sizeof(tmp), "%s/.pid.tmp", dir);
	snprintf(path, sizeof(path), "%s/pid", dir);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, buf, n) != n || close(fd) || rename(tmp, path))
		_exit(2);
}

static void nap_50ms(int *ticks)
{
	struct timespec ts = { 0, 50 * 1000000 };

	if (++*ticks > 3600)
		_exit(3);
	nanosleep(&ts, NULL);
}

NOINLINE static void *main_after(void)
{
	return malloc(32);	/* LEAK:main_after */
}

static void open_null(void)
{
	if (open("/dev/null", O_RDONLY) < 0)	/* LEAK:huge_open */
		_exit(2);
}

int main(int argc, char **argv)
{
	int (*f_a)(void), (*f_b)(void), fd;
	void (*call)(void (*)(void));
	const char *dir, *lib;
	int ticks = 0;
	void *h;

	if (argc != 4)
		return 1;
	dir = argv[2];
	lib = argv[3];
	write_pid(dir);
	h = dlopen(lib, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 2;
	}
	if (!strcmp(argv[1], "huge")) {
		call = (void (*)(void (*)(void)))dlsym(h, "huge_fde_call");
		if (!call)
			return 2;
		create(dir, "ready");
		while (!exists(dir, "quit")) {
			call(open_null);
			nap_50ms(&ticks);
		}
		return 0;
	}
	f_a = (int (*)(void))dlsym(h, "f_a");
	f_b = (int (*)(void))dlsym(h, "f_b");
	if (!f_a || !f_b)
		return 2;
	create(dir, "ready");
	while (!exists(dir, "go")) {
		fd = f_a();
		if (fd >= 0)
			close(fd);
		nap_50ms(&ticks);
	}
	if (f_b() < 0)
		return 2;
	if (truncate(lib, 0))
		return 2;
	create(dir, "truncated");
	while (!exists(dir, "quit")) {
		sink = main_after();
		nap_50ms(&ticks);
	}
	/* Not exit(): the library's destructors are in the pages the truncation took. */
	_exit(0);
}

#endif
