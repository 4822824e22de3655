// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * fuzz_cfi.c - libFuzzer target for the unwind table builder (live/cfi.c): any bytes are an
 * object file a traced process maps (its owner chooses its program headers, .eh_frame_hdr
 * and .eh_frame).  They are written to a temporary regular file (not root's alone: copied
 * into memory, as a user's file is), and its table is built in
 * steps of 5 ms, as the unwind store builds it; a table built must be sorted, within
 * CFI_MAX_ROWS, and made of the row kinds BPF knows.  Every input ends within the build's
 * CPU bound (CFI_MAX_BUILD_NS): `make fuzz` runs it with -timeout, so an input that makes
 * one step or one build overrun is reported as a timeout.  Seeds: a small program and a
 * small object shaped like tests/progs/huge_fde.S (see the Makefile).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>

#include "live/cfi.h"
#include "util/clock.h"

#define STEP_NS		(5ull * 1000000)

static char path[] = "/tmp/lt-fuzz-cfi-XXXXXX";
static int fd = -1;

static void remove_file(void)
{
	unlink(path);
}

static void check_table(const struct cfi_table *t)
{
	if (!t->n || t->n > CFI_MAX_ROWS || !t->rows)
		abort();
	for (size_t i = 0; i < t->n; i++) {
		if (t->rows[i].kind > LT_UW_OUTERMOST)
			abort();
		if (i && t->rows[i].pc <= t->rows[i - 1].pc)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfi_build *b;
	struct cfi_table t = {};
	int err;

	if (fd < 0) {
		fd = mkstemp(path);
		/* Writable by its group: not root's alone, so copied, as a user's files are. */
		if (fd < 0 || fchmod(fd, 0660))
			abort();
		atexit(remove_file);
	}
	if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		abort();
	if (cfi__start(fd, &b))
		return 0;
	do
		err = cfi__step(b, monotonic_ns() + STEP_NS, &t);
	while (err == -EINPROGRESS);
	if (!err) {
		check_table(&t);
		cfi__free(&t);
	}
	return 0;
}
