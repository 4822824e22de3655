// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * bp_slots.c - how many hardware write watchpoints a thread can still take: opens 4 (x86's
 * debug registers) on thread TID as perf events and prints how many the kernel granted.
 * tests/e2e/lastref.sh: after `leaktop lastref` ends, its target has all 4 again.
 *
 * Usage: bp_slots TID
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>

int main(int argc, char **argv)
{
	int granted = 0;

	if (argc != 2)
		return 2;
	for (int i = 0; i < 4; i++) {
		struct perf_event_attr a = {
			.type = PERF_TYPE_BREAKPOINT, .size = sizeof(a),
			.bp_type = HW_BREAKPOINT_W, .bp_addr = 0x10000 + 8 * i,
			.bp_len = HW_BREAKPOINT_LEN_8, .sample_period = 1,
			.exclude_kernel = 1, .exclude_hv = 1, .disabled = 1,
		};

		if (syscall(SYS_perf_event_open, &a, atoi(argv[1]), -1, -1, 0) >= 0)
			granted++;
	}
	printf("%d\n", granted);
	return 0;
}
