// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_scanmaps.c - which mappings a scan reads (live/scanmaps.c): smaps' touched bytes per
 * mapping, never-touched private mappings skipped, shared ones and unknown ones read.
 */
#include <string.h>

#include "check.h"
#include "live/procmaps.h"
#include "live/scanmaps.h"

static const char smaps[] =
	"7f0000000000-7f1000000000 rw-p 00000000 00:00 0 \n"
	"Size:           67108864 kB\n"
	"Rss:                   0 kB\n"
	"Swap:                  0 kB\n"
	"VmFlags: rd wr mr mw me nr \n"
	"7f2000000000-7f2000200000 rw-p 00000000 00:00 0 \n"
	"Size:               2048 kB\n"
	"Rss:                   0 kB\n"
	"Swap:                 12 kB\n"
	"VmFlags: rd wr mr mw me ac \n"
	"7f3000000000-7f3000001000 rw-s 00000000 00:05 17 /dev/shm/x\n"
	"Rss:                   0 kB\n"
	"Swap:                  0 kB\n";

static void test_never_touched_private_mapping_is_skipped_swapped_one_is_not(void)
{
	struct scanmaps s;
	struct proc_map huge = { .start = 0x7f0000000000, .end = 0x7f1000000000, .readable = 1,
				 .writable = 1 };
	struct proc_map swapped = { .start = 0x7f2000000000, .end = 0x7f2000200000,
				    .readable = 1, .writable = 1 };
	struct proc_map shm = { .start = 0x7f3000000000, .end = 0x7f3000001000, .readable = 1,
				.writable = 1, .shared = 1 };
	struct proc_map grown = huge, unknown = { .start = 0x1000, .end = 0x2000 };

	grown.end += 0x1000;
	CHECK_EQ_INT(scanmaps__parse(smaps, &s), 0);
	CHECK_EQ_INT(s.n, 3);
	CHECK_EQ_INT(s.v[1].touched_bytes, 12 << 10);
	CHECK(scanmaps__untouched(&s, &huge));
	CHECK(!scanmaps__untouched(&s, &swapped));
	CHECK(!scanmaps__untouched(&s, &shm));
	CHECK(!scanmaps__untouched(&s, &grown));	/* changed since: read it */
	CHECK(!scanmaps__untouched(&s, &unknown));
	scanmaps__free(&s);
}

static void test_skip_keeps_writable_memory_and_drops_devices_and_vvar(void)
{
	struct proc_map heap = { .readable = 1, .writable = 1, .path = "[heap]" };
	struct proc_map vvar = { .readable = 1, .writable = 1, .path = "[vvar]" };
	struct proc_map dev = { .readable = 1, .writable = 1, .path = "/dev/dri/card0" };
	struct proc_map ro = { .readable = 1 };

	CHECK(!scanmaps__skip(&heap));
	CHECK(scanmaps__skip(&vvar));
	CHECK(scanmaps__skip(&dev));
	CHECK(scanmaps__skip(&ro));
}

int main(void)
{
	RUN(test_never_touched_private_mapping_is_skipped_swapped_one_is_not);
	RUN(test_skip_keeps_writable_memory_and_drops_devices_and_vvar);
	CHECK_EXIT();
}
