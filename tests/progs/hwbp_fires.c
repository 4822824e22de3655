// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * hwbp_fires.c - do hardware watchpoints fire on this machine?  The self-test of leaktop's
 * watch engine (user/live/watch.c watcher__selftest): a write breakpoint on a variable of
 * its own thread, written 16 times; prints "yes" when the count is not 0, else "no" (also
 * when the breakpoint cannot be opened).  tests/e2e/lib.sh watchpoints_fire.
 */
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>

static volatile uint64_t word;

int main(void)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_BREAKPOINT,
		.size = sizeof(a),
		.bp_type = HW_BREAKPOINT_W,
		.bp_addr = (uint64_t)(uintptr_t)&word,
		.bp_len = HW_BREAKPOINT_LEN_8,
		.sample_period = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	uint64_t count = 0;
	int fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);

	if (fd >= 0) {
		for (unsigned int i = 0; i < 16; i++)
			word = i + 1;
		if (read(fd, &count, sizeof(count)) != sizeof(count))
			count = 0;
		close(fd);
	}
	puts(count ? "yes" : "no");
	return 0;
}
