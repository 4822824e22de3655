// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_fdsys.c - the descriptor syscall table and the naming of descriptors from their
 * /proc/PID/fd links.
 */
#include <asm/unistd.h>

#include "check.h"
#include "live/fdsys.h"

static void test_fd_classify_names_every_link_kind(void)
{
	CHECK_EQ_STR(fd_type_names[fdsys__classify("socket:[12345]")], "socket");
	CHECK_EQ_STR(fd_type_names[fdsys__classify("pipe:[77]")], "pipe");
	CHECK_EQ_STR(fd_type_names[fdsys__classify("anon_inode:[eventfd]")], "eventfd");
	CHECK_EQ_STR(fd_type_names[fdsys__classify("anon_inode:[timerfd]")], "timerfd");
	CHECK_EQ_STR(fd_type_names[fdsys__classify("anon_inode:[eventpoll]")], "epoll");
	CHECK_EQ_STR(fd_type_names[fdsys__classify("anon_inode:[signalfd]")], "signalfd");
	CHECK_EQ_STR(fd_type_names[fdsys__classify("anon_inode:inotify")], "inotify");
	CHECK_EQ_STR(fd_type_names[fdsys__classify("anon_inode:[pidfd]")], "pidfd");
	CHECK_EQ_STR(fd_type_names[fdsys__classify("anon_inode:[io_uring]")], "io_uring");
	CHECK_EQ_STR(fd_type_names[fdsys__classify("anon_inode:bpf-map")], "anon_inode");
	CHECK_EQ_STR(fd_type_names[fdsys__classify("/memfd:cache (deleted)")], "memfd");
	CHECK_EQ_STR(fd_type_names[fdsys__classify("/etc/hostname")], "file");
	CHECK_EQ_STR(fd_type_names[fdsys__classify("net:[4026531840]")], "namespace");
	CHECK_EQ_STR(fd_type_names[fdsys__classify("")], "other");
}

static void test_fd_syscall_table_covers_create_and_close(void)
{
	uint8_t table[LT_MAX_SYSCALL];

	fdsys__fill_class_table(table, true, false);
	CHECK_EQ_INT(table[__NR_openat], LT_FDC_RET);
	CHECK_EQ_INT(table[__NR_pipe2], LT_FDC_PAIR_ARG0);
	CHECK_EQ_INT(table[__NR_socketpair], LT_FDC_PAIR_ARG3);
	CHECK_EQ_INT(table[__NR_dup3], LT_FDC_DUP2);
	CHECK_EQ_INT(table[__NR_close], LT_FDC_CLOSE);
	CHECK_EQ_INT(table[__NR_close_range], LT_FDC_CLOSE_RANGE);
	CHECK_EQ_INT(table[__NR_recvmsg], LT_FDC_RECVMSG);
	CHECK_EQ_INT(table[__NR_read], LT_FDC_NONE);
	CHECK_EQ_INT(table[__NR_mmap], LT_FDC_NONE);
	for (size_t i = 0; i < n_fd_syscalls; i++)
		CHECK(fd_syscalls[i].nr < LT_MAX_SYSCALL);
}

static void test_mmap_syscalls_only_with_mmap_tracked(void)
{
	uint8_t table[LT_MAX_SYSCALL];

	fdsys__fill_class_table(table, false, true);
	CHECK_EQ_INT(table[__NR_mmap], LT_FDC_MMAP);
	CHECK_EQ_INT(table[__NR_munmap], LT_FDC_MUNMAP);
	CHECK_EQ_INT(table[__NR_mremap], LT_FDC_MREMAP);
	CHECK_EQ_INT(table[__NR_brk], LT_FDC_BRK);
	CHECK_EQ_INT(table[__NR_openat], LT_FDC_NONE);
	fdsys__fill_class_table(table, true, true);
	CHECK_EQ_INT(table[__NR_openat], LT_FDC_RET);
	CHECK_EQ_INT(table[__NR_brk], LT_FDC_BRK);
}

int main(void)
{
	RUN(test_fd_classify_names_every_link_kind);
	RUN(test_fd_syscall_table_covers_create_and_close);
	RUN(test_mmap_syscalls_only_with_mmap_tracked);
	CHECK_EXIT();
}
