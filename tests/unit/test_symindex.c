// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_symindex.c - unit tests of user/live/symindex.c: the index names every address as
 * dwfl_module_addrinfo() does (symbol and offset), at every byte of symindex_target.so (built
 * next to this binary from tests/unit/symindex_target.S: overlapping, aliased, sizeless and
 * absolute symbols) and around every symbol of this binary and of libc; a module without
 * symbols gives none.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "check.h"
#include "live/symindex.h"

#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>

static char *debuginfo_path;
static const Dwfl_Callbacks offline = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* A Dwfl of the one file `path`, at its own addresses; NULL if it cannot be read. */
static Dwfl *open_module(const char *path, Dwfl_Module **mod)
{
	Dwfl *dwfl = dwfl_begin(&offline);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	*mod = NULL;
	if (!dwfl || fd < 0) {
		if (fd >= 0)
			close(fd);
		dwfl_end(dwfl);
		return NULL;
	}
	dwfl_report_begin(dwfl);
	*mod = dwfl_report_elf(dwfl, path, path, fd, 0, false);
	if (!*mod || dwfl_report_end(dwfl, NULL, NULL)) {
		if (!*mod)
			close(fd);
		dwfl_end(dwfl);
		return NULL;
	}
	return dwfl;
}

/* Does the index agree with libdwfl at addr?  Says where not. */
static int agrees(const struct sym_index *ix, Dwfl_Module *mod, GElf_Addr addr, const char *what)
{
	GElf_Off want_off = 0, got_off = 0;
	GElf_Sym sym;
	GElf_Word shndx;
	GElf_Addr bias;
	Elf *elf;
	const char *want = dwfl_module_addrinfo(mod, addr, &want_off, &sym, &shndx, &elf, &bias);
	const char *got = sym_index__lookup(ix, mod, addr, &got_off);

	if (want && !*want)
		want = NULL;
	if ((!want) != (!got) || (want && (strcmp(want, got) || want_off != got_off))) {
		fprintf(stderr, "%s: at 0x%llx libdwfl says %s+0x%llx, the index %s+0x%llx\n",
			what, (unsigned long long)addr, want ?: "(none)",
			(unsigned long long)want_off, got ?: "(none)",
			(unsigned long long)got_off);
		return 0;
	}
	return 1;
}

/*
 * Compare around (at most max_syms of) the module's symbols: a byte before, the start, the
 * next byte, the last byte, the end.  The number of addresses that disagree.
 */
static int compare_around_symbols(const char *path, int max_syms, int *n_syms)
{
	Dwfl_Module *mod;
	Dwfl *dwfl = open_module(path, &mod);
	struct sym_index *ix = NULL;
	int n, step, bad = 0;

	*n_syms = 0;
	if (!dwfl)
		return -1;
	n = dwfl_module_getsymtab(mod);
	if (sym_index__build(mod, &ix)) {
		dwfl_end(dwfl);
		return -1;
	}
	step = n > max_syms ? n / max_syms : 1;
	for (int i = 1; i < n; i += step) {
		GElf_Sym s;
		GElf_Addr v;
		const char *name = dwfl_module_getsym_info(mod, i, &s, &v, NULL, NULL, NULL);
		GElf_Addr at[] = { v - 1, v, v + 1, v + s.st_size - 1, v + s.st_size };

		if (!name || s.st_shndx == SHN_UNDEF)
			continue;
		(*n_syms)++;
		for (size_t k = 0; k < sizeof(at) / sizeof(at[0]); k++)
			bad += !agrees(ix, mod, at[k], path);
	}
	sym_index__free(ix);
	dwfl_end(dwfl);
	return bad;
}

static int target_path(char *buf, size_t size)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return -1;
	exe[n] = '\0';
	snprintf(buf, size, "%s/symindex_target.so", dirname(exe));
	return 0;
}

static void test_symindex_names_every_byte_of_crafted_symbols_as_libdwfl(void)
{
	char path[PATH_MAX];
	Dwfl_Module *mod;
	Dwfl *dwfl;
	struct sym_index *ix = NULL;
	GElf_Addr bias = 0;
	GElf_Off off = 1;
	int bad = 0;

	CHECK_EQ_INT(target_path(path, sizeof(path)), 0);
	dwfl = open_module(path, &mod);
	CHECK(dwfl != NULL);
	CHECK(dwfl_module_getelf(mod, &bias) != NULL);
	CHECK_EQ_INT(sym_index__build(mod, &ix), 0);
	/* The absolute symbol's neighbourhood, then the text and past its end. */
	for (GElf_Addr a = 0x30; a < 0x50; a++)
		bad += !agrees(ix, mod, a + bias, "symindex_target.so");
	for (GElf_Addr a = 0xff0; a < 0x10d0; a++)
		bad += !agrees(ix, mod, a + bias, "symindex_target.so");
	CHECK_EQ_INT(bad, 0);
	/* The rules at work (libdwfl's answers, checked equal above). */
	CHECK_EQ_STR(sym_index__lookup(ix, mod, 0x1010 + bias, &off), "outer");
	CHECK_EQ_INT(off, 0x10);
	CHECK_EQ_STR(sym_index__lookup(ix, mod, 0x1040 + bias, &off), "alias_b");
	CHECK_EQ_STR(sym_index__lookup(ix, mod, 0x1064 + bias, &off), "local_label1");
	CHECK_EQ_STR(sym_index__lookup(ix, mod, 0x1080 + bias, &off), "lfunc");
	CHECK_EQ_STR(sym_index__lookup(ix, mod, 0x1088 + bias, &off), "glabel2");
	CHECK_EQ_STR(sym_index__lookup(ix, mod, 0x1098 + bias, &off), "ov_g");
	CHECK_EQ_STR(sym_index__lookup(ix, mod, 0x10a0 + bias, &off), "ov_w");
	CHECK(sym_index__lookup(ix, mod, 0x10b0 + bias, &off) == NULL);
	CHECK(sym_index__bytes(ix) > 0);
	sym_index__free(ix);
	dwfl_end(dwfl);
}

static void test_symindex_agrees_with_libdwfl_around_symbols_of_this_binary(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int syms;

	CHECK(n > 0);
	exe[n] = '\0';
	CHECK_EQ_INT(compare_around_symbols(exe, 4000, &syms), 0);
	CHECK(syms > 100);
}

static void test_symindex_agrees_with_libdwfl_around_symbols_of_libc(void)
{
	int syms;

	CHECK_EQ_INT(compare_around_symbols("/lib/x86_64-linux-gnu/libc.so.6", 4000, &syms), 0);
	CHECK(syms > 1000);
}

static void test_symindex_module_without_symbols_names_nothing(void)
{
	char path[PATH_MAX], tmp[] = "/tmp/test_symindex.XXXXXX";
	char cmd[2 * PATH_MAX + 64];
	Dwfl_Module *mod;
	Dwfl *dwfl;
	struct sym_index *ix = NULL;
	GElf_Addr bias = 0;
	GElf_Off off;
	int fd = mkstemp(tmp);

	CHECK(fd >= 0);
	close(fd);
	CHECK_EQ_INT(target_path(path, sizeof(path)), 0);
	snprintf(cmd, sizeof(cmd), "objcopy --strip-all --remove-section=.dynsym '%s' '%s'",
		 path, tmp);
	if (system(cmd)) {
		unlink(tmp);
		CHECK(!"objcopy failed");
	}
	dwfl = open_module(tmp, &mod);
	unlink(tmp);
	CHECK(dwfl != NULL);
	CHECK(dwfl_module_getelf(mod, &bias) != NULL);
	CHECK_EQ_INT(sym_index__build(mod, &ix), 0);
	for (GElf_Addr a = 0xff0; a < 0x10d0; a++)
		CHECK(sym_index__lookup(ix, mod, a + bias, &off) == NULL);
	sym_index__free(ix);
	dwfl_end(dwfl);
}

int main(void)
{
	RUN(test_symindex_names_every_byte_of_crafted_symbols_as_libdwfl);
	RUN(test_symindex_agrees_with_libdwfl_around_symbols_of_this_binary);
	RUN(test_symindex_agrees_with_libdwfl_around_symbols_of_libc);
	RUN(test_symindex_module_without_symbols_names_nothing);
	CHECK_EXIT();
}
