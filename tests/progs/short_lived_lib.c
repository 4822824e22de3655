// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * short_lived_lib.c - libshort_lived.so, the shared library of short_lived.c: a leak in a
 * module only short-lived processes map.
 */
#include <stdlib.h>

#include "short_lived.h"

#define NOINLINE __attribute__((noinline))

void *short_lib_kept;

static NOINLINE void leak_in_lib(void)
{
	short_lib_kept = malloc(111);
}

void short_lib_leak(void)
{
	leak_in_lib();
}
