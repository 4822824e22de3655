// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_cfi.c - live/cfi.c: the unwind rows built from real objects (cfi_target, built next
 * to this binary with frame pointers; the system's C library), refusals of files that
 * are not objects with CFI, and the bounds on objects crafted to be slow to read
 * (huge_fde.so and huge_fde1.so, built next to this binary from tests/progs/huge_fde.S: 8
 * and 1 FDEs of 40,000 rows).
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "live/cfi.h"
#include "util/clock.h"

static char target[PATH_MAX], huge[PATH_MAX], huge1[PATH_MAX];

/* The file offset of symbol name in the ELF file at path (0: not found). */
static uint64_t sym_offset(const char *path, const char *name)
{
	int fd = open(path, O_RDONLY);
	uint64_t off = 0, vaddr = 0;
	Elf_Scn *scn = NULL;
	size_t nphdr;
	Elf *elf;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;

			if (gelf_getsym(d, (int)i, &s) &&
			    !strcmp(elf_strptr(elf, sh.sh_link, s.st_name), name))
				vaddr = s.st_value;
		}
	}
	if (elf && vaddr && !elf_getphdrnum(elf, &nphdr)) {
		for (size_t i = 0; i < nphdr; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_memsz)
				off = vaddr - ph.p_vaddr + ph.p_offset;
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return off;
}

static int build_within(const char *path, uint64_t budget_ns, struct cfi_table *t)
{
	int fd = open(path, O_RDONLY), err;

	if (fd < 0)
		return -errno;
	err = cfi__build(fd, budget_ns, t);
	close(fd);
	return err;
}

static int build(const char *path, struct cfi_table *t)
{
	return build_within(path, CFI_MAX_BUILD_NS, t);
}

/* The row in force at file offset off (the last at or below it), as the BPF walk finds it. */
static const struct lt_unwind_row *row_at(const struct cfi_table *t, uint64_t off)
{
	const struct lt_unwind_row *r = NULL;

	for (size_t i = 0; i < t->n && t->rows[i].pc <= off; i++)
		r = &t->rows[i];
	return r;
}

static void test_cfi_framed_function_rows_follow_its_prologue(void)
{
	struct cfi_table t;
	const struct lt_unwind_row *r;
	uint64_t f = sym_offset(target, "framed");

	CHECK(f);
	CHECK_EQ_INT(build(target, &t), 0);
	/* At the entry: CFA = rsp + 8, the return address just below it, rbp untouched. */
	r = row_at(&t, f);
	CHECK(r && r->pc == f);
	CHECK_EQ_INT(r->kind, LT_UW_RSP);
	CHECK_EQ_INT(r->cfa, 1);
	CHECK_EQ_INT(r->rbp, 0);
	/* After push %rbp (1 byte): CFA = rsp + 16, the caller's rbp saved at CFA - 16. */
	r = row_at(&t, f + 1);
	CHECK(r && r->pc == f + 1);
	CHECK_EQ_INT(r->kind, LT_UW_RSP);
	CHECK_EQ_INT(r->cfa, 2);
	CHECK_EQ_INT(r->rbp, -2);
	/* After mov %rsp,%rbp (3 bytes): CFA = rbp + 16. */
	r = row_at(&t, f + 4);
	CHECK(r && r->pc == f + 4);
	CHECK_EQ_INT(r->kind, LT_UW_RBP);
	CHECK_EQ_INT(r->cfa, 2);
	CHECK_EQ_INT(r->rbp, -2);
	cfi__free(&t);
}

static void test_cfi_rows_are_sorted_and_never_repeat_a_rule(void)
{
	struct cfi_table t;

	CHECK_EQ_INT(build(target, &t), 0);
	CHECK(t.n > 3);
	for (size_t i = 1; i < t.n; i++) {
		const struct lt_unwind_row *a = &t.rows[i - 1], *b = &t.rows[i];

		CHECK(a->pc < b->pc);
		CHECK(a->kind != b->kind || a->cfa != b->cfa || a->rbp != b->rbp);
	}
	/* Past the last function nothing is described. */
	CHECK_EQ_INT(t.rows[t.n - 1].kind, LT_UW_NONE);
	cfi__free(&t);
}

static void test_cfi_plt_entries_get_the_abi_plt_rule(void)
{
	struct cfi_table t;
	size_t plt = 0;

	CHECK_EQ_INT(build(target, &t), 0);
	for (size_t i = 0; i < t.n; i++) {
		if (t.rows[i].kind != LT_UW_PLT)
			continue;
		plt++;
		CHECK_EQ_INT(t.rows[i].cfa, 1);
		CHECK(t.rows[i].rbp == 10 || t.rows[i].rbp == 11);
	}
	CHECK_EQ_INT(plt, 1);
	cfi__free(&t);
}

static void test_cfi_libc_signal_trampoline_and_outermost_frames_are_described(void)
{
	static const char *const libcs[] = { "/lib/x86_64-linux-gnu/libc.so.6",
					     "/usr/lib/x86_64-linux-gnu/libc.so.6" };
	size_t signal = 0, outermost = 0, rsp = 0;
	struct cfi_table t;
	int err = -ENOENT;

	for (size_t i = 0; err && i < sizeof(libcs) / sizeof(libcs[0]); i++)
		err = build(libcs[i], &t);
	CHECK_EQ_INT(err, 0);
	for (size_t i = 0; i < t.n; i++) {
		signal += t.rows[i].kind == LT_UW_SIGNAL;
		outermost += t.rows[i].kind == LT_UW_OUTERMOST;
		rsp += t.rows[i].kind == LT_UW_RSP;
	}
	/* __restore_rt: the interrupted rsp and rip in the ucontext, rbp before them. */
	CHECK_EQ_INT(signal, 1);
	for (size_t i = 0; i < t.n; i++) {
		if (t.rows[i].kind == LT_UW_SIGNAL) {
			CHECK(t.rows[i].cfa > 0);
			CHECK(t.rows[i].rbp > 0 && t.rows[i].rbp < t.rows[i].cfa);
		}
	}
	/* clone's and start_thread's child side: the return address is undefined. */
	CHECK(outermost >= 1);
	/* glibc is built without frame pointers: nearly every row is rsp-based. */
	CHECK(rsp > t.n / 2);
	CHECK(t.unusable < 64);
	cfi__free(&t);
}

static void test_cfi_refuses_what_is_not_an_object_with_cfi(void)
{
	char path[] = "/tmp/leaktop-test-cfi-XXXXXX";
	struct cfi_table t;
	int fd = mkstemp(path), src;
	char buf[4096];
	ssize_t n;

	CHECK(fd >= 0);
	/* Not ELF at all. */
	CHECK(write(fd, "#!/bin/sh\necho hi\n", 18) == 18);
	CHECK_EQ_INT(cfi__build(fd, CFI_MAX_BUILD_NS, &t), -ENOEXEC);
	CHECK_EQ_INT((int)t.n, 0);
	/* The first page of a real object: its headers point past the end of the file. */
	CHECK(!ftruncate(fd, 0) && lseek(fd, 0, SEEK_SET) == 0);
	src = open(target, O_RDONLY);
	CHECK(src >= 0);
	n = read(src, buf, sizeof(buf));
	close(src);
	CHECK(n == (ssize_t)sizeof(buf) && write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf));
	CHECK(cfi__build(fd, CFI_MAX_BUILD_NS, &t) < 0);
	CHECK_EQ_INT((int)t.n, 0);
	/* A directory is no file. */
	close(fd);
	unlink(path);
	fd = open("/", O_RDONLY | O_DIRECTORY);
	CHECK_EQ_INT(cfi__build(fd, CFI_MAX_BUILD_NS, &t), -ENOEXEC);
	close(fd);
}

static void test_cfi_function_with_too_many_rows_is_cut_and_the_next_keeps_its_rows(void)
{
	uint64_t call = sym_offset(huge1, "huge_fde_call"), other = sym_offset(huge1,
										"huge_fde_other");
	const struct lt_unwind_row *r;
	struct cfi_table t;

	CHECK(call && other);
	CHECK_EQ_INT(build(huge1, &t), 0);
	CHECK_EQ_INT((int)t.cut_fdes, 1);
	/* Followed up to the cut (1 byte a row), nothing past it to the end of the function. */
	r = row_at(&t, call + CFI_MAX_FDE_ROWS - 1);
	CHECK(r && r->kind == LT_UW_RSP);
	r = row_at(&t, call + CFI_MAX_FDE_ROWS + 100);
	CHECK(r && r->kind == LT_UW_NONE);
	/* The ordinary function after it: push %rbp; mov %rsp,%rbp; CFA = rbp + 16. */
	r = row_at(&t, other + 4);
	CHECK(r && r->pc == other + 4);
	CHECK_EQ_INT(r->kind, LT_UW_RBP);
	CHECK_EQ_INT(r->cfa, 2);
	cfi__free(&t);
}

static void test_cfi_slow_object_is_built_in_steps_by_their_deadlines_then_given_up(void)
{
	struct cfi_build *b = NULL;
	struct cfi_table t = {};
	int fd = open(huge, O_RDONLY), err, steps = 0;

	CHECK(fd >= 0);
	CHECK_EQ_INT(cfi__start(fd, &b), 0);
	close(fd);
	/* Each step ends by its deadline; the object's CPU time runs out on a later one. */
	do {
		err = cfi__step(b, monotonic_ns() + 20 * 1000000ull, &t);
		steps++;
	} while (err == -EINPROGRESS);
	CHECK_EQ_INT(err, -ETIME);
	CHECK(steps > 1);
	CHECK_EQ_INT((int)t.n, 0);
}

static void test_cfi_build_past_its_budget_gives_no_table(void)
{
	struct cfi_table t;

	CHECK_EQ_INT(build_within(huge, 20 * 1000000ull, &t), -ETIME);
	CHECK_EQ_INT((int)t.n, 0);
	CHECK(!t.rows);
}

static int next_to_me(char *buf, const char *name)
{
	ssize_t n = readlink("/proc/self/exe", buf, PATH_MAX - 1);
	char *slash;

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (!slash || (size_t)(slash - buf) + strlen(name) + 2 > PATH_MAX)
		return -1;
	strcpy(slash + 1, name);
	return 0;
}

int main(int argc, char **argv)
{
	if (next_to_me(target, "cfi_target") || next_to_me(huge, "huge_fde.so") ||
	    next_to_me(huge1, "huge_fde1.so"))
		return 1;
	RUN(test_cfi_framed_function_rows_follow_its_prologue);
	RUN(test_cfi_rows_are_sorted_and_never_repeat_a_rule);
	RUN(test_cfi_plt_entries_get_the_abi_plt_rule);
	RUN(test_cfi_libc_signal_trampoline_and_outermost_frames_are_described);
	RUN(test_cfi_refuses_what_is_not_an_object_with_cfi);
	RUN(test_cfi_function_with_too_many_rows_is_cut_and_the_next_keeps_its_rows);
	RUN(test_cfi_slow_object_is_built_in_steps_by_their_deadlines_then_given_up);
	RUN(test_cfi_build_past_its_budget_gives_no_table);
	CHECK_EXIT();
}
