/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * short_lived.h - the function libshort_lived.so (short_lived_lib.c) gives short_lived.c.
 */
#ifndef SHORT_LIVED_H
#define SHORT_LIVED_H

/* Leaks 1 x 111 bytes, allocated in leak_in_lib(). */
void short_lib_leak(void);

#endif
