// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_bindorder.c - unit tests of user/core/bindorder.c: which object a process's malloc
 * binds to, by the dynamic linker's search order.
 */
#include <string.h>

#include "check.h"
#include "core/bindorder.h"

static const char *const exe_needs_je_then_c[] = { "libjemalloc.so.2", "libc.so.6" };
static const char *const exe_needs_c[] = { "libc.so.6" };
static const char *const exe_needs_stdcxx_c[] = { "libstdc++.so.6", "libc.so.6" };
static const char *const stdcxx_needs[] = { "libm.so.6", "libc.so.6" };
static const char *const je_needs[] = { "libc.so.6", "libstdc++.so.6" };

#define LIBDIR "/usr/lib/x86_64-linux-gnu/"

static void test_bind_linked_jemalloc_before_libc_wins(void)
{
	const struct bind_obj objs[] = {
		{ "/usr/bin/redis-server", NULL, exe_needs_je_then_c, 2, false },
		{ LIBDIR "libc.so.6", "libc.so.6", NULL, 0, true },
		{ LIBDIR "libjemalloc.so.2", "libjemalloc.so.2", je_needs, 2, true },
	};

	CHECK_EQ_INT(bind_order__pick(objs, 3, 0, NULL, 0), 2);
}

static void test_bind_preload_wins_over_needed_libc(void)
{
	const struct bind_obj objs[] = {
		{ LIBDIR "libc.so.6", "libc.so.6", NULL, 0, true },
		{ "/usr/bin/prog", NULL, exe_needs_c, 1, false },
		{ LIBDIR "libtcmalloc_minimal.so.4.5.9", "libtcmalloc_minimal.so.4", NULL, 0,
		  true },
	};
	const char *preload[] = { "libtcmalloc_minimal.so.4" };

	CHECK_EQ_INT(bind_order__pick(objs, 3, 1, preload, 1), 2);
}

static void test_bind_preload_by_path_must_match_the_path(void)
{
	const struct bind_obj objs[] = {
		{ "/usr/bin/prog", NULL, exe_needs_c, 1, false },
		{ LIBDIR "libc.so.6", "libc.so.6", NULL, 0, true },
		{ LIBDIR "libmimalloc.so.2.0", "libmimalloc.so.2", NULL, 0, true },
	};
	const char *right[] = { LIBDIR "libmimalloc.so.2.0" };
	const char *wrong[] = { "/opt/libmimalloc.so.2.0" };

	CHECK_EQ_INT(bind_order__pick(objs, 3, 0, right, 1), 2);
	/* A path that names no mapped object preloads nothing: libc by its needed entry. */
	CHECK_EQ_INT(bind_order__pick(objs, 3, 0, wrong, 1), 1);
}

static void test_bind_first_of_two_preloads_wins(void)
{
	const struct bind_obj objs[] = {
		{ "/usr/bin/prog", NULL, exe_needs_c, 1, false },
		{ LIBDIR "libc.so.6", "libc.so.6", NULL, 0, true },
		{ LIBDIR "libmimalloc.so.2.0", "libmimalloc.so.2", NULL, 0, true },
		{ LIBDIR "libtcmalloc_minimal.so.4.5.9", "libtcmalloc_minimal.so.4", NULL, 0,
		  true },
	};
	const char *preload[] = { "libtcmalloc_minimal.so.4", "libmimalloc.so.2" };

	CHECK_EQ_INT(bind_order__pick(objs, 4, 0, preload, 2), 3);
}

static void test_bind_exe_exporting_malloc_wins_over_everything(void)
{
	const struct bind_obj objs[] = {
		{ LIBDIR "libc.so.6", "libc.so.6", NULL, 0, true },
		{ "/usr/sbin/leaktop", NULL, exe_needs_c, 1, true },
		{ LIBDIR "libmimalloc.so.2.0", "libmimalloc.so.2", NULL, 0, true },
	};
	const char *preload[] = { "libmimalloc.so.2" };

	CHECK_EQ_INT(bind_order__pick(objs, 3, 1, preload, 1), 1);
}

/* libstdc++ needs libc before jemalloc is reached: breadth first, the exe's list comes first. */
static void test_bind_breadth_first_not_depth_first(void)
{
	static const char *const exe_needs[] = { "libstdc++.so.6", "libjemalloc.so.2",
						 "libc.so.6" };
	const struct bind_obj objs[] = {
		{ "/usr/bin/prog", NULL, exe_needs, 3, false },
		{ LIBDIR "libstdc++.so.6.0.30", "libstdc++.so.6", stdcxx_needs, 2, false },
		{ LIBDIR "libc.so.6", "libc.so.6", NULL, 0, true },
		{ LIBDIR "libjemalloc.so.2", "libjemalloc.so.2", je_needs, 2, true },
	};

	CHECK_EQ_INT(bind_order__pick(objs, 4, 0, NULL, 0), 3);
}

/* A library only dlopen()ed (needed by no one in the scope) never interposes. */
static void test_bind_ignores_dlopened_allocator(void)
{
	const struct bind_obj objs[] = {
		{ "/usr/bin/prog", NULL, exe_needs_stdcxx_c, 2, false },
		{ LIBDIR "libstdc++.so.6.0.30", "libstdc++.so.6", stdcxx_needs, 2, false },
		{ LIBDIR "plugin_with_malloc.so", NULL, NULL, 0, true },
		{ LIBDIR "libc.so.6", "libc.so.6", NULL, 0, true },
	};

	CHECK_EQ_INT(bind_order__pick(objs, 4, 0, NULL, 0), 3);
}

static void test_bind_none_when_no_object_exports_malloc(void)
{
	const struct bind_obj objs[] = {
		{ "/usr/bin/prog", NULL, exe_needs_c, 1, false },
	};

	CHECK_EQ_INT(bind_order__pick(objs, 1, 0, NULL, 0), -1);
	CHECK_EQ_INT(bind_order__pick(objs, 1, 5, NULL, 0), -1);
}

static void test_bind_cyclic_needed_entries_end(void)
{
	static const char *const a_needs[] = { "libb.so" };
	static const char *const b_needs[] = { "liba.so" };
	const struct bind_obj objs[] = {
		{ "/usr/bin/prog", NULL, a_needs, 1, false },
		{ "/lib/liba.so", "liba.so", b_needs, 1, false },
		{ "/lib/libb.so", "libb.so", a_needs, 1, false },
	};

	CHECK_EQ_INT(bind_order__pick(objs, 3, 0, NULL, 0), -1);
}

static void test_split_preload_on_spaces_and_colons(void)
{
	char buf[] = " libtcmalloc_minimal.so.4:/opt/x.so  libm.so.6::";
	const char *out[4];

	CHECK_EQ_INT(bind_order__split_preload(buf, out, 4), 3);
	CHECK(!strcmp(out[0], "libtcmalloc_minimal.so.4"));
	CHECK(!strcmp(out[1], "/opt/x.so"));
	CHECK(!strcmp(out[2], "libm.so.6"));
}

static void test_split_preload_stops_at_max(void)
{
	char buf[] = "a b c d";
	const char *out[2];

	CHECK_EQ_INT(bind_order__split_preload(buf, out, 2), 2);
	CHECK(!strcmp(out[1], "b"));
}

int main(void)
{
	RUN(test_bind_linked_jemalloc_before_libc_wins);
	RUN(test_bind_preload_wins_over_needed_libc);
	RUN(test_bind_preload_by_path_must_match_the_path);
	RUN(test_bind_first_of_two_preloads_wins);
	RUN(test_bind_exe_exporting_malloc_wins_over_everything);
	RUN(test_bind_breadth_first_not_depth_first);
	RUN(test_bind_ignores_dlopened_allocator);
	RUN(test_bind_none_when_no_object_exports_malloc);
	RUN(test_bind_cyclic_needed_entries_end);
	RUN(test_split_preload_on_spaces_and_colons);
	RUN(test_split_preload_stops_at_max);
	CHECK_EXIT();
}
