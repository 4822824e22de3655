// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * self_alloc.c - leaktop's own allocator entry points, linked into its executable only.
 *
 * In whole-system mode leaktop's uprobes sit on the allocator of every libc, leaktop's own
 * included: every malloc of leaktop's (and of jansson, libdw, libbpf, ... on its behalf) would
 * take a trap and a return trampoline only for the BPF program to ignore it.  So the
 * executable links jemalloc statically (Debian's libjemalloc_pic.a) and exports its entry
 * points in its dynamic symbol table (see LEAKTOP_ALLOC_LDFLAGS in the Makefile): the dynamic
 * linker binds every library's malloc, and libc's own internal calls (strdup, fopen, getline,
 * qsort go through libc's GOT/PLT), to the executable's, and libc's probed allocator is never
 * called.  The kernel counts any call that still reaches it (stats.self_hits; tests/e2e/self.sh
 * expects 0).
 *
 * This file adds the two entry points glibc has and jemalloc 5.3 lacks, built on jemalloc's,
 * so that a call to them never falls through to libc's.  It is not in the unit tests: they
 * keep libc's allocator (and the sanitizers' interceptors).
 */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

/*
 * jemalloc's options, read at its first call (MALLOC_CONF in the environment is read after
 * them and wins).  leaktop allocates in bursts (a report's JSON, a table being built, a file's
 * symbols) and frees them: by default jemalloc keeps freed pages resident for 10 s, which under
 * load was half of leaktop's peak memory.  Pages freed go back to the kernel within about a
 * second, at once rather than through a second (muzzy) stage; one arena: leaktop's work is
 * on one thread (the metrics server's and detaching's threads allocate little).
 */
const char *malloc_conf = "narenas:1,dirty_decay_ms:1000,muzzy_decay_ms:0";

/* glibc's reallocarray: realloc(ptr, n * m), ENOMEM when the product overflows. */
void *reallocarray(void *ptr, size_t n, size_t m)
{
	size_t size_bytes;

	if (__builtin_mul_overflow(n, m, &size_bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(ptr, size_bytes);
}

/* glibc's pvalloc: page-aligned, the size rounded up to whole pages (one page for 0). */
void *pvalloc(size_t size_bytes)
{
	size_t page_bytes = (size_t)sysconf(_SC_PAGESIZE);
	size_t rounded;

	if (__builtin_add_overflow(size_bytes, page_bytes - 1, &rounded)) {
		errno = ENOMEM;
		return NULL;
	}
	rounded &= ~(page_bytes - 1);
	return memalign(page_bytes, rounded ? rounded : page_bytes);
}
