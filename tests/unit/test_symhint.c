// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_symhint.c - modules without symbols, in pure logic: the Debian debug package of a
 * binary package (the hand-made -dbg table, python3.X, else -dbgsym, foreign
 * architectures), the hint line for each answer of the package manager, escaping in the
 * text report, one entry per module in the model, and symbols_missing written to a
 * snapshot and read back (with its refusals of bad entries).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/model.h"
#include "core/symhint.h"
#include "view/format.h"
#include "view/report.h"
#include "view/snapshot.h"
#include "view/snapshot_read.h"

static char buf[512];

static const char *dbg(const char *package, const char *source, const char *arch)
{
	if (symhint__debug_package(package, source, arch, "amd64", buf, sizeof(buf)))
		return "(error)";
	return buf;
}

static void test_symhint_debug_package_uses_handmade_dbg_table_by_source(void)
{
	CHECK_EQ_STR(dbg("libc6:amd64", "glibc", "amd64"), "libc6-dbg");
	CHECK_EQ_STR(dbg("libc6", "glibc", NULL), "libc6-dbg");
	CHECK_EQ_STR(dbg("python3.11-minimal", "python3.11", "amd64"), "python3.11-dbg");
	CHECK_EQ_STR(dbg("libpython3.11", "python3.11", "amd64"), "python3.11-dbg");
	CHECK_EQ_STR(dbg("libstdc++6:amd64", "gcc-12", "amd64"), "libstdc++6-12-dbg");
	CHECK_EQ_STR(dbg("libkrb5-3:amd64", "krb5", "amd64"), "libkrb5-dbg");
}

static void test_symhint_debug_package_is_dbgsym_otherwise(void)
{
	CHECK_EQ_STR(dbg("libjansson4:amd64", "jansson", "amd64"), "libjansson4-dbgsym");
	/* Another binary of a source whose table entry names one binary only. */
	CHECK_EQ_STR(dbg("gcc-12", "gcc-12", "amd64"), "gcc-12-dbgsym");
	/* "python3" (the wrapper source) and "python3.x" are not interpreters' sources. */
	CHECK_EQ_STR(dbg("python3", "python3-defaults", "amd64"), "python3-dbgsym");
	CHECK_EQ_STR(dbg("foo", "python3.x", "all"), "foo-dbgsym");
	/* Source unknown: the binary package's own dbgsym. */
	CHECK_EQ_STR(dbg("libfoo1", NULL, NULL), "libfoo1-dbgsym");
	CHECK(symhint__is_dbgsym("libfoo1-dbgsym"));
	CHECK(symhint__is_dbgsym("libfoo1-dbgsym:i386"));
	CHECK(!symhint__is_dbgsym("libc6-dbg"));
	CHECK(!symhint__is_dbgsym(NULL));
}

static void test_symhint_debug_package_keeps_foreign_architecture(void)
{
	CHECK_EQ_STR(dbg("libfoo1:i386", "foo", NULL), "libfoo1-dbgsym:i386");
	CHECK_EQ_STR(dbg("libc6:i386", "glibc", "i386"), "libc6-dbg:i386");
	CHECK_EQ_STR(dbg("libfoo1:amd64", "foo", "amd64"), "libfoo1-dbgsym");
	CHECK_EQ_INT(symhint__debug_package("", "x", NULL, "amd64", buf, sizeof(buf)), -EINVAL);
	CHECK_EQ_INT(symhint__debug_package(NULL, "x", NULL, "amd64", buf, sizeof(buf)), -EINVAL);
	CHECK_EQ_INT(symhint__debug_package("libfoo1", NULL, NULL, "amd64", buf, 8),
		     -ENAMETOOLONG);
}

static struct sym_missing entry(const char *module, const char *id, enum sym_pkg_lookup l,
				const char *pkg, const char *src, const char *debug)
{
	return (struct sym_missing){ .module = (char *)module, .build_id = (char *)id,
				     .lookup = l, .package = (char *)pkg, .source = (char *)src,
				     .debug_package = (char *)debug };
}

static void test_symhint_hint_names_debug_package_and_what_is_missing(void)
{
	char hint[FMT_HINT_LEN];
	struct sym_missing h;

	h = entry("/usr/bin/python3.11", "c561aa", SYM_PKG_OWNED, "python3.11-minimal",
		  "python3.11", "python3.11-dbg");
	CHECK_EQ_STR(fmt__symbols_hint(hint, sizeof(hint), &h),
		     "symbols missing for /usr/bin/python3.11 (build-id c561aa): "
		     "apt install python3.11-dbg");
	h = entry("/usr/lib/x86_64-linux-gnu/libjansson.so.4.14.0", "aee5", SYM_PKG_OWNED,
		  "libjansson4:amd64", "jansson", "libjansson4-dbgsym");
	CHECK_EQ_STR(fmt__symbols_hint(hint, sizeof(hint), &h),
		     "symbols missing for /usr/lib/x86_64-linux-gnu/libjansson.so.4.14.0 "
		     "(build-id aee5): apt install libjansson4-dbgsym (from the debian-debug "
		     "archive)");
	h = entry("/opt/app/leaky", "dfc45e", SYM_PKG_NOT_OWNED, NULL, NULL, NULL);
	CHECK_EQ_STR(fmt__symbols_hint(hint, sizeof(hint), &h),
		     "symbols missing for /opt/app/leaky (build-id dfc45e): no installed "
		     "package owns it, so no debug package is known; rebuild it unstripped, or "
		     "install its debug file as /usr/lib/debug/.build-id/df/c45e.debug");
	h = entry("/opt/app/leaky", NULL, SYM_PKG_NOT_OWNED, NULL, NULL, NULL);
	CHECK_EQ_STR(fmt__symbols_hint(hint, sizeof(hint), &h),
		     "symbols missing for /opt/app/leaky (no build-id): no installed package "
		     "owns it, so no debug package is known; rebuild it unstripped (keep its "
		     ".symtab)");
	h = entry("/x", "abcd", SYM_PKG_UNKNOWN, NULL, NULL, NULL);
	CHECK_EQ_STR(fmt__symbols_hint(hint, sizeof(hint), &h),
		     "symbols missing for /x (build-id abcd): its package is not known; install "
		     "its debug file as /usr/lib/debug/.build-id/ab/cd.debug");
}

/* The model keeps one entry per module; a changed answer replaces it and is said again. */
static void test_symhint_model_keeps_one_entry_per_module(void)
{
	struct sym_missing a = entry("/a", "11", SYM_PKG_UNKNOWN, NULL, NULL, NULL);
	struct sym_missing b = entry("/a", "11", SYM_PKG_OWNED, "pa", "sa", "pa-dbgsym");
	struct sym_missing c = entry("/a", "22", SYM_PKG_NOT_OWNED, NULL, NULL, NULL);
	struct model m;

	model__init(&m, 1, RES_ALL, 40);
	CHECK_EQ_INT(model__add_missing(&m, &a), 0);
	CHECK_EQ_INT(model__add_missing(&m, &a), 0);
	CHECK_EQ_INT(m.n_sym_missing, 1);
	model__reported(&m);
	CHECK(m.sym_missing[0].reported);
	CHECK_EQ_INT(model__add_missing(&m, &a), 0);
	CHECK(m.sym_missing[0].reported);		/* the same: not said again */
	CHECK_EQ_INT(model__add_missing(&m, &b), 0);
	CHECK_EQ_INT(m.n_sym_missing, 1);
	CHECK(!m.sym_missing[0].reported);
	CHECK_EQ_STR(m.sym_missing[0].debug_package, "pa-dbgsym");
	CHECK_EQ_INT(model__add_missing(&m, &c), 0);	/* another file by that name */
	CHECK_EQ_INT(m.n_sym_missing, 2);
	model__free(&m);
}

/* The text report: each module once, escaped; live batch mode says each only once. */
static void test_symbols_hint_names_debug_package_once_in_report_escaped(void)
{
	struct sym_missing a = entry("/tmp/evil\033[2J", "ab12", SYM_PKG_NOT_OWNED, NULL, NULL,
				     NULL);
	struct sym_missing b = entry("/usr/lib/libz.so.1", "cd34", SYM_PKG_OWNED, "zlib1g:amd64",
				     "zlib", "zlib1g-dbgsym");
	struct report_opts once = { .top_sites = 5, .symbols_once = true };
	char *text = NULL;
	size_t len = 0;
	struct model m;
	FILE *f;

	model__init(&m, 1, RES_ALL, 40);
	CHECK_EQ_INT(model__add_missing(&m, &a), 0);
	CHECK_EQ_INT(model__add_missing(&m, &b), 0);
	f = open_memstream(&text, &len);
	CHECK(f != NULL);
	report__write(f, &m, &once);
	model__reported(&m);
	report__write(f, &m, &once);
	fclose(f);
	CHECK(strstr(text, "symbols missing for /tmp/evil\\x1b[2J (build-id ab12): no installed "
			   "package owns it") != NULL);
	CHECK(strchr(text, '\033') == NULL);
	CHECK(strstr(text, "symbols missing for /usr/lib/libz.so.1 (build-id cd34): apt install "
			   "zlib1g-dbgsym (from the debian-debug archive)\n") != NULL);
	/* Each once over both reports. */
	CHECK(strstr(strstr(text, "zlib1g-dbgsym") + 1, "zlib1g-dbgsym") == NULL);
	free(text);
	model__free(&m);
}

/* What the writer writes, the reader reads back: every field, nulls kept null. */
static void test_symbols_missing_round_trips_through_snapshot(void)
{
	char path[] = "/tmp/leaktop-test-symhint.XXXXXX";
	struct sym_missing a = entry("/usr/bin/python3.11", "c561aa", SYM_PKG_OWNED,
				     "python3.11-minimal", "python3.11", "python3.11-dbg");
	struct sym_missing b = entry("/opt/leaky", NULL, SYM_PKG_NOT_OWNED, NULL, NULL, NULL);
	struct snapshot_info info;
	struct model m, back;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	close(fd);
	model__init(&m, 1, RES_ALL, 40);
	CHECK_EQ_INT(model__add_missing(&m, &a), 0);
	CHECK_EQ_INT(model__add_missing(&m, &b), 0);
	CHECK_EQ_INT(snapshot__write_file(path, &m), 0);
	model__free(&m);
	CHECK_EQ_INT(snapshot__read_file(path, NULL, &back, &info, buf, sizeof(buf)), 0);
	unlink(path);
	CHECK_EQ_INT(back.n_sym_missing, 2);
	CHECK_EQ_STR(back.sym_missing[0].module, "/usr/bin/python3.11");
	CHECK_EQ_STR(back.sym_missing[0].build_id, "c561aa");
	CHECK_EQ_INT(back.sym_missing[0].lookup, SYM_PKG_OWNED);
	CHECK_EQ_STR(back.sym_missing[0].package, "python3.11-minimal");
	CHECK_EQ_STR(back.sym_missing[0].source, "python3.11");
	CHECK_EQ_STR(back.sym_missing[0].debug_package, "python3.11-dbg");
	CHECK_EQ_STR(back.sym_missing[1].module, "/opt/leaky");
	CHECK(back.sym_missing[1].build_id == NULL);
	CHECK_EQ_INT(back.sym_missing[1].lookup, SYM_PKG_NOT_OWNED);
	CHECK(back.sym_missing[1].package == NULL && back.sym_missing[1].debug_package == NULL);
	CHECK(!back.sym_missing[0].reported);
	model__free(&back);
}

static int read_doc(const char *missing, struct model *m)
{
	struct snapshot_info info;
	char *s;
	int ret;

	if (asprintf(&s, "{\"schema\": \"leaktop.snapshot/1\", \"time\": "
		     "\"2026-11-21T10:00:00Z\", \"elapsed_s\": 2.5, \"interval_s\": 1, "
		     "\"stats\": {\"events\": 9, \"dropped\": 0}, \"processes\": []%s%s}",
		     missing ? ", \"symbols_missing\": " : "", missing ? missing : "") < 0)
		abort();
	ret = snapshot__read_buf(s, strlen(s), "t.json", NULL, m, &info, buf, sizeof(buf));
	free(s);
	return ret;
}

static void test_symbols_missing_reader_refuses_bad_entries_and_takes_old_files(void)
{
	struct model m;

	CHECK_EQ_INT(read_doc(NULL, &m), 0);		/* a file from before the field */
	CHECK_EQ_INT(m.n_sym_missing, 0);
	model__free(&m);
	CHECK_EQ_INT(read_doc("null", &m), 0);
	model__free(&m);
	CHECK_EQ_INT(read_doc("[{\"build_id\": \"ab\"}]", &m), -EINVAL);
	CHECK(strstr(buf, "symbols_missing[0].module is missing") != NULL);
	model__free(&m);
	CHECK_EQ_INT(read_doc("[{\"module\": \"/a\", \"package_lookup\": \"maybe\"}]", &m),
		     -EINVAL);
	CHECK(strstr(buf, "symbols_missing[0].package_lookup is \"maybe\"") != NULL);
	model__free(&m);
	CHECK_EQ_INT(read_doc("[{\"module\": \"/a\", \"debug_package\": 3}]", &m), -EINVAL);
	model__free(&m);
	CHECK_EQ_INT(read_doc("{}", &m), -EINVAL);
	model__free(&m);
}

int main(void)
{
	RUN(test_symhint_debug_package_uses_handmade_dbg_table_by_source);
	RUN(test_symhint_debug_package_is_dbgsym_otherwise);
	RUN(test_symhint_debug_package_keeps_foreign_architecture);
	RUN(test_symhint_hint_names_debug_package_and_what_is_missing);
	RUN(test_symhint_model_keeps_one_entry_per_module);
	RUN(test_symbols_hint_names_debug_package_once_in_report_escaped);
	RUN(test_symbols_missing_round_trips_through_snapshot);
	RUN(test_symbols_missing_reader_refuses_bad_entries_and_takes_old_files);
	CHECK_EXIT();
}
