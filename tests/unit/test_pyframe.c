// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_pyframe.c - Python frames in pure logic: lines from real CPython 3.11 location tables
 * (bytes and the lines co_lines() gives for them, from Debian's python3.11), str characters
 * as UTF-8, and the merge of Python frames with native ones in call order.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "check.h"
#include "core/model.h"
#include "core/pyframe.h"
#include "view/format.h"
#include "view/snapshot.h"

static size_t unhex(const char *hex, uint8_t *out)
{
	size_t n = 0;

	for (; hex[0] && hex[1]; hex += 2) {
		unsigned int b;

		sscanf(hex, "%2x", &b);
		out[n++] = (uint8_t)b;
	}
	return n;
}

struct range {
	uint32_t start, end;	/* code units */
	int line;		/* 0: no location */
};

/* Every instruction of a table has the line co_lines() gives it. */
static int check_table(const char *hex, int first, const struct range *r, size_t n)
{
	uint8_t tab[256];
	size_t len = unhex(hex, tab);

	for (size_t i = 0; i < n; i++)
		for (uint32_t a = r[i].start; a < r[i].end; a++)
			if (pyframe__line(tab, len, first, a) != r[i].line)
				return (int)a + 1;
	/* Past the end of the table: unknown. */
	return pyframe__line(tab, len, first, r[n - 1].end) ? -1 : 0;
}

/*
 *  3 def grow_cache(n):
 *  4     x = 1
 *  5     for i in range(n):
 *  6         cache.append(bytes(1000))
 *  7         if i > 3:
 *  8             x += i
 *  9     return x
 */
static void test_pyframe_line_matches_co_lines_of_a_real_table(void)
{
	static const struct range r[] = {
		{ 0, 1, 3 }, { 1, 3, 4 }, { 3, 20, 5 }, { 20, 59, 6 }, { 59, 65, 7 },
		{ 65, 70, 8 }, { 70, 71, 0 }, { 71, 73, 9 },
	};

	CHECK_EQ_INT(check_table("8000d808098041dd0d12903189588c58f000030513f0000305138801dd080d8f"
				 "0c8a0c95559834915b945bd10821d40821d00821d80b0c88718a358835d80c"
				 "0d901189468841f8d80b0c8048", 3, r, sizeof(r) / sizeof(r[0])), 0);
}

/* A method (qualified name K.meth) whose lines go back: 12, 13, 14, then 13 again. */
static void test_pyframe_line_follows_negative_deltas(void)
{
	static const struct range r[] = {
		{ 0, 1, 12 }, { 1, 3, 13 }, { 3, 17, 14 }, { 17, 26, 13 },
	};

	CHECK_EQ_INT(check_table("8000f002011023f000011023dd191e987199189c18f003011023f100011023f4"
				 "00011023f000010923", 12, r, sizeof(r) / sizeof(r[0])), 0);
}

static void test_pyframe_line_is_unknown_for_cut_or_malformed_tables(void)
{
	uint8_t tab[64];
	size_t len = unhex("8000d808098041dd0d12903189588c58f000030513", tab);

	/* A table cut short (BPF copies a bounded part): known up to where it ends. */
	CHECK_EQ_INT(pyframe__line(tab, len, 3, 0), 3);
	CHECK_EQ_INT(pyframe__line(tab, len, 3, 200), 0);
	/* Cut inside an entry's data. */
	CHECK_EQ_INT(pyframe__line(tab, 6, 3, 100), 0);
	/* A data byte where an entry starts; an endless varint. */
	tab[0] = 0x10;
	CHECK_EQ_INT(pyframe__line(tab, len, 3, 0), 0);
	memset(tab, 0xff, sizeof(tab));
	tab[0] = 0xf0 | 0x8;	/* long form */
	for (size_t i = 1; i < sizeof(tab); i++)
		tab[i] = 0x7f;
	CHECK_EQ_INT(pyframe__line(tab, sizeof(tab), 3, 0), 0);
	CHECK_EQ_INT(pyframe__line(NULL, 0, 3, 0), 0);
}

static void test_pyframe_str_converts_kinds_and_escapes_controls(void)
{
	char out[16];
	uint16_t ucs2[] = { 'f', 0xe9, 0x20ac };
	uint32_t ucs4[] = { 'a', 0x1f600, 0xd800, 0x110000 };

	CHECK_EQ_INT((int)pyframe__str(1, "grow\ncache", 10, out, sizeof(out)), 10);
	CHECK_EQ_STR(out, "grow?cache");
	CHECK_EQ_INT((int)pyframe__str(1, "caf\xe9", 4, out, sizeof(out)), 5);
	CHECK_EQ_STR(out, "caf\xc3\xa9");
	pyframe__str(2, ucs2, sizeof(ucs2), out, sizeof(out));
	CHECK_EQ_STR(out, "f\xc3\xa9\xe2\x82\xac");
	pyframe__str(4, ucs4, sizeof(ucs4), out, sizeof(out));
	CHECK_EQ_STR(out, "a\xf0\x9f\x98\x80??");
	/* Cut at a whole character; an unknown kind is empty. */
	CHECK_EQ_INT((int)pyframe__str(2, ucs2, sizeof(ucs2), out, 3), 1);
	CHECK_EQ_STR(out, "f");
	CHECK_EQ_INT((int)pyframe__str(3, "abc", 3, out, sizeof(out)), 0);
	CHECK_EQ_STR(out, "");
}

static struct sym_frame named(const char *s)
{
	return (struct sym_frame){ .symbol = (char *)s };
}

static void test_pyframe_merge_puts_python_frames_inside_their_evaluation(void)
{
	/* malloc <- eval (runs leaf, mid: mid is its entry) <- call <- eval (main, an entry). */
	struct sym_frame native[] = { named("_PyObject_Malloc"), named("_PyEval_EvalFrameDefault"),
				      named("_PyObject_Call"),
				      named("_PyEval_EvalFrameDefault.cold"), named("Py_RunMain") };
	struct sym_frame py[] = { named("leaf"), named("mid"), named("main") };
	bool entry[] = { false, true, true };
	struct sym_frame out[8];
	static const char *const want[] = { "_PyObject_Malloc", "leaf", "mid",
					     "_PyEval_EvalFrameDefault", "_PyObject_Call", "main",
					     "_PyEval_EvalFrameDefault.cold", "Py_RunMain" };
	size_t n = pyframe__merge(native, 5, py, entry, 3, out);

	CHECK_EQ_INT((int)n, 8);
	for (size_t i = 0; i < n; i++)
		CHECK_EQ_STR(out[i].symbol, want[i]);
}

static void test_pyframe_merge_appends_frames_of_a_cut_native_stack(void)
{
	struct sym_frame native[] = { named("_PyObject_Malloc"), named("_PyEval_EvalFrameDefault") };
	struct sym_frame py[] = { named("leaf"), named("main") };
	bool entry[] = { true, true };
	struct sym_frame out[4];
	size_t n = pyframe__merge(native, 2, py, entry, 2, out);

	CHECK_EQ_INT((int)n, 4);
	CHECK_EQ_STR(out[1].symbol, "leaf");
	CHECK_EQ_STR(out[2].symbol, "_PyEval_EvalFrameDefault");
	CHECK_EQ_STR(out[3].symbol, "main");
	/* Not an evaluation frame: a name that only begins like one. */
	native[1] = named("_PyEval_EvalFrameDefaultX");
	n = pyframe__merge(native, 2, py, entry, 2, out);
	CHECK_EQ_STR(out[1].symbol, "_PyEval_EvalFrameDefaultX");
	CHECK_EQ_STR(out[2].symbol, "leaf");
}

/* A Python program's stack: the interpreter's C frames inside, the script's code outside. */
static struct sym_frame py_stack[] = {
	{ .addr = 0x7f00001000, .symbol = "_PyObject_Malloc", .offset = 4,
	  .module = "/usr/bin/python3.11", .file = "../Objects/obmalloc.c", .line = 101 },
	{ .addr = 0x7f00002000, .symbol = "_PyBytes_FromSize", .offset = 9,
	  .module = "/usr/bin/python3.11", .file = "../Objects/bytesobject.c", .line = 90 },
	{ .addr = 0x7fdd2cc65790, .symbol = "grow_cache", .file = "/srv/app.py", .line = 42,
	  .python = true },
	{ .addr = 0x7fdd2cc65a00, .symbol = "<module>", .file = "/srv/app.py", .line = 50,
	  .python = true },
	{ .addr = 0x7f00003000, .symbol = "_PyEval_EvalFrameDefault", .offset = 77,
	  .module = "/usr/bin/python3.11", .file = "../Python/ceval.c", .line = 4772 },
};

static void test_pyframe_site_is_named_after_its_innermost_python_frame(void)
{
	struct site s = { .frames = py_stack, .n_frames = 5 };
	char name[128], *title = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&title, &len);

	CHECK_EQ_STR(fmt__site_name(name, sizeof(name), &s), "grow_cache app.py:42");
	CHECK(f);
	fmt__site_title(f, &s);
	fputc('|', f);
	fmt__frame(f, 2, &py_stack[2], FRAME_ADDR);
	fclose(f);
	CHECK_EQ_STR(title, "grow_cache /srv/app.py:42|#2  0x7fdd2cc65790 grow_cache "
		     "/srv/app.py:42 [python]");
	free(title);
	/* Without Python frames: as before, the first frame that does more than allocate. */
	s.n_frames = 2;
	CHECK_EQ_STR(fmt__site_name(name, sizeof(name), &s), "_PyBytes_FromSize bytesobject.c:90");
}

static void test_pyframe_json_frame_says_python_and_has_no_module_or_offset(void)
{
	json_t *py = snapshot__frame(&py_stack[2]), *native = snapshot__frame(&py_stack[0]);
	char a[256] = "", b[256] = "";
	size_t na = json_dumpb(py, a, sizeof(a) - 1, JSON_COMPACT);
	size_t nb = json_dumpb(native, b, sizeof(b) - 1, JSON_COMPACT);

	CHECK(na && na < sizeof(a) && nb && nb < sizeof(b));
	a[na] = b[nb] = '\0';
	CHECK_EQ_STR(a, "{\"addr\":\"0x7fdd2cc65790\",\"symbol\":\"grow_cache\",\"offset\":null,"
		     "\"module\":null,\"file\":\"/srv/app.py\",\"line\":42,\"lang\":\"python\"}");
	/* Native frames are as they were: no "lang" (native when absent). */
	CHECK(strstr(b, "lang") == NULL && strstr(b, "\"offset\":4") != NULL);
	json_decref(py);
	json_decref(native);
}

int main(void)
{
	RUN(test_pyframe_line_matches_co_lines_of_a_real_table);
	RUN(test_pyframe_line_follows_negative_deltas);
	RUN(test_pyframe_line_is_unknown_for_cut_or_malformed_tables);
	RUN(test_pyframe_str_converts_kinds_and_escapes_controls);
	RUN(test_pyframe_merge_puts_python_frames_inside_their_evaluation);
	RUN(test_pyframe_merge_appends_frames_of_a_cut_native_stack);
	RUN(test_pyframe_site_is_named_after_its_innermost_python_frame);
	RUN(test_pyframe_json_frame_says_python_and_has_no_module_or_offset);
	CHECK_EXIT();
}
