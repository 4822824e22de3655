// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * scan_target.c - the live process test_scan stops and scans.  Built without sanitizers,
 * unlike the unit tests: an instrumented process maps terabytes of writable shadow memory,
 * far more than a scan copies.
 *
 * Allocates two blocks of 32 bytes, the first pointing to the second and kept in a global,
 * writes their addresses ("0xA 0xB\n") on stdout, then counts forever in the first word of
 * the shared memory on fd 3, so the test sees it running.  It dies with its parent.  With an
 * argument N it first maps and touches N MiB more of writable memory, for a scan to copy;
 * with "uffd" it maps 16 MiB registered with userfaultfd, whose faults nothing serves.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/prctl.h>

static void *volatile kept;

static int register_uffd(size_t len)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	int fd = syscall(SYS_userfaultfd, O_CLOEXEC);
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (fd < 0 || m == MAP_FAILED || ioctl(fd, UFFDIO_API, &api))
		return -1;
	reg.range.start = (uintptr_t)m;
	reg.range.len = len;
	return ioctl(fd, UFFDIO_REGISTER, &reg);
}

int main(int argc, char **argv)
{
	volatile uint64_t *ticks = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, 3, 0);
	size_t big = argc > 1 ? strtoul(argv[1], NULL, 10) << 20 : 0;
	bool uffd = argc > 1 && !strcmp(argv[1], "uffd");
	void **a = malloc(32), *b = malloc(32);

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || ticks == MAP_FAILED || !a || !b)
		return 1;
	if (big) {
		void *m = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);

		if (m == MAP_FAILED)
			return 1;
		memset(m, 1, big);
	}
	if (uffd && register_uffd(16 << 20))
		return 1;
	*a = b;
	kept = a;
	if (printf("%p %p\n", (void *)a, b) < 0 || fflush(stdout))
		return 1;
	a = NULL;
	b = NULL;
	for (;;)
		(*ticks)++;
}
