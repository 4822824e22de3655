// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_inject.c - unit tests of the pure parts of user/live/inject.c: which system calls a
 * thread may be held in for a call into it (none an allocator makes holding its lock, no
 * futex, no clone/exec/exit), and the stack of such a call (below the red zone and the
 * data, aligned as at a function's entry).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "check.h"
#include "live/inject.h"

#include <stdint.h>
#include <sys/syscall.h>

static void test_inject_waits_out_allocator_and_lock_syscalls(void)
{
	static const long unsafe[] = {
		SYS_mmap, SYS_munmap, SYS_mremap, SYS_brk, SYS_madvise, SYS_mprotect,
		SYS_futex, SYS_clone, SYS_clone3, SYS_vfork, SYS_fork, SYS_execve,
		SYS_execveat, SYS_exit, SYS_exit_group, SYS_rt_sigreturn,
	};

	for (size_t i = 0; i < sizeof(unsafe) / sizeof(unsafe[0]); i++)
		CHECK_EQ_INT(inject__syscall_is_safe(unsafe[i]), 0);
	/* Not in a system call at all. */
	CHECK_EQ_INT(inject__syscall_is_safe(-1), 0);
}

static void test_inject_calls_from_blocking_io_syscalls(void)
{
	static const long safe[] = {
		SYS_read, SYS_write, SYS_epoll_wait, SYS_epoll_pwait, SYS_poll, SYS_select,
		SYS_nanosleep, SYS_clock_nanosleep, SYS_accept4, SYS_recvfrom, SYS_pause,
		SYS_wait4, SYS_newfstatat,
	};

	for (size_t i = 0; i < sizeof(safe) / sizeof(safe[0]); i++)
		CHECK_EQ_INT(inject__syscall_is_safe(safe[i]), 1);
}

static void test_inject_call_stack_spares_red_zone_and_is_aligned(void)
{
	static const uint64_t sps[] = { 0x7ffc12345678, 0x7ffc12345670, 0x7ffc1234567f,
					0x7ffc12345001 };
	static const size_t reserves[] = { 0, 1, 24, 4144 };

	for (size_t i = 0; i < sizeof(sps) / sizeof(sps[0]); i++) {
		for (size_t k = 0; k < sizeof(reserves) / sizeof(reserves[0]); k++) {
			uint64_t data = 0, sp = inject__call_sp(sps[i], reserves[k], &data);

			/* At a function's entry rsp + 8 is 16-byte aligned (SysV x86-64). */
			CHECK_EQ_INT((sp + 8) % 16, 0);
			/* The return address just below the data, the data below the red zone. */
			CHECK_EQ_INT(data, sp + 8);
			CHECK(data + reserves[k] <= sps[i] - 128);
			CHECK(data % 16 == 0);
		}
	}
}

int main(void)
{
	RUN(test_inject_waits_out_allocator_and_lock_syscalls);
	RUN(test_inject_calls_from_blocking_io_syscalls);
	RUN(test_inject_call_stack_spares_red_zone_and_is_aligned);
	CHECK_EXIT();
}
