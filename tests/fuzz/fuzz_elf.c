// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * fuzz_elf.c - libFuzzer target for the symbolizer's module loading: any bytes are the ELF
 * file of an exec'd program (a traced program chooses its files' bytes).  They are written
 * to a temporary regular file, registered as an image through symbolizer__add_exe_image
 * (opened by live/safe_open.c against the file's device and inode), and a few addresses are
 * resolved, which reads its program headers, symbol tables and DWARF and runs the search for
 * separate debug information its .gnu_debuglink, .gnu_debugaltlink and build id name; then
 * the same file's unwind table is built (live/cfi.c: program headers, .eh_frame_hdr, the CFI).
 * Built by `make fuzz` (clang -fsanitize=fuzzer,address); seeds: tests/fuzz/elf_seed.c, built.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "live/cfi.h"
#include "live/safe_open.h"
#include "live/symbolize.h"

#define CODE_START	0x400000ull
#define CODE_SIZE	0x100000ull
#define PROBES		16

static char path[] = "/tmp/lt-fuzz-elf-XXXXXX";
static int fd = -1;

static void remove_file(void)
{
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct symbolizer *sym;
	struct file_id id;
	struct sym_frame f;
	struct stat st;
	int i;

	if (fd < 0) {
		fd = mkstemp(path);
		if (fd < 0)
			abort();
		atexit(remove_file);
	}
	if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size) ||
	    fstat(fd, &st))
		abort();
	id = (struct file_id){ .dev = st.st_dev, .ino = st.st_ino };
	sym = symbolizer__new();
	if (!sym)
		abort();
	if (!symbolizer__add_exe_image(sym, 1, 0, path, &id, CODE_START, CODE_START + CODE_SIZE)) {
		for (i = 0; i < PROBES; i++) {
			symbolizer__resolve(sym, 1, CODE_START + i * (CODE_SIZE / PROBES) + i, i & 1,
					    &f);
			sym_frame__clear(&f);
		}
	}
	symbolizer__free(sym);
	/* The same bytes as an object whose unwind table a traced process makes leaktop build. */
	{
		struct cfi_table t;

		if (!cfi__build(fd, CFI_MAX_BUILD_NS, &t))
			cfi__free(&t);
	}
	return 0;
}
