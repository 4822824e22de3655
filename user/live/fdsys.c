// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * fdsys.c - tables of descriptor syscalls and descriptor kinds.
 *
 * fd_syscalls[] is the single list of what leaktop counts as creating or closing a
 * descriptor, and of the memory mapping syscalls (-r mmap); the BPF side gets it as a byte
 * per syscall number, with the entries of the resources tracked.  fdsys__classify() names a
 * descriptor from its /proc/PID/fd link, with a table of link prefixes.
 */
#include <string.h>
#include <asm/unistd.h>

#include "live/fdsys.h"

const struct fd_syscall fd_syscalls[] = {
	{ "open", __NR_open, LT_FDC_RET },
	{ "openat", __NR_openat, LT_FDC_RET },
	{ "openat2", __NR_openat2, LT_FDC_RET },
	{ "creat", __NR_creat, LT_FDC_RET },
	{ "open_by_handle_at", __NR_open_by_handle_at, LT_FDC_RET },
	{ "socket", __NR_socket, LT_FDC_RET },
	{ "socketpair", __NR_socketpair, LT_FDC_PAIR_ARG3 },
	{ "accept", __NR_accept, LT_FDC_RET },
	{ "accept4", __NR_accept4, LT_FDC_RET },
	{ "pipe", __NR_pipe, LT_FDC_PAIR_ARG0 },
	{ "pipe2", __NR_pipe2, LT_FDC_PAIR_ARG0 },
	{ "dup", __NR_dup, LT_FDC_RET },
	{ "dup2", __NR_dup2, LT_FDC_DUP2 },
	{ "dup3", __NR_dup3, LT_FDC_DUP2 },
	{ "fcntl", __NR_fcntl, LT_FDC_FCNTL },
	{ "eventfd", __NR_eventfd, LT_FDC_RET },
	{ "eventfd2", __NR_eventfd2, LT_FDC_RET },
	{ "timerfd_create", __NR_timerfd_create, LT_FDC_RET },
	{ "signalfd", __NR_signalfd, LT_FDC_SIGNALFD },
	{ "signalfd4", __NR_signalfd4, LT_FDC_SIGNALFD },
	{ "epoll_create", __NR_epoll_create, LT_FDC_RET },
	{ "epoll_create1", __NR_epoll_create1, LT_FDC_RET },
	{ "inotify_init", __NR_inotify_init, LT_FDC_RET },
	{ "inotify_init1", __NR_inotify_init1, LT_FDC_RET },
	{ "fanotify_init", __NR_fanotify_init, LT_FDC_RET },
	{ "memfd_create", __NR_memfd_create, LT_FDC_RET },
	{ "memfd_secret", __NR_memfd_secret, LT_FDC_RET },
	{ "pidfd_open", __NR_pidfd_open, LT_FDC_RET },
	{ "pidfd_getfd", __NR_pidfd_getfd, LT_FDC_RET },
	{ "userfaultfd", __NR_userfaultfd, LT_FDC_RET },
	{ "perf_event_open", __NR_perf_event_open, LT_FDC_RET },
	{ "io_uring_setup", __NR_io_uring_setup, LT_FDC_RET },
	{ "fsopen", __NR_fsopen, LT_FDC_RET },
	{ "fsmount", __NR_fsmount, LT_FDC_RET },
	{ "fspick", __NR_fspick, LT_FDC_RET },
	{ "open_tree", __NR_open_tree, LT_FDC_RET },
	{ "recvmsg", __NR_recvmsg, LT_FDC_RECVMSG },
	{ "recvmmsg", __NR_recvmmsg, LT_FDC_RECVMMSG },
	{ "close", __NR_close, LT_FDC_CLOSE },
	{ "close_range", __NR_close_range, LT_FDC_CLOSE_RANGE },
	{ "mmap", __NR_mmap, LT_FDC_MMAP },
	{ "munmap", __NR_munmap, LT_FDC_MUNMAP },
	{ "mremap", __NR_mremap, LT_FDC_MREMAP },
	{ "brk", __NR_brk, LT_FDC_BRK },
};

const size_t n_fd_syscalls = sizeof(fd_syscalls) / sizeof(fd_syscalls[0]);

void fdsys__fill_class_table(uint8_t table[LT_MAX_SYSCALL], bool fd, bool mmap)
{
	memset(table, LT_FDC_NONE, LT_MAX_SYSCALL);
	for (size_t i = 0; i < n_fd_syscalls; i++) {
		bool is_mmap = fd_syscalls[i].cls >= LT_FDC_MMAP;

		if (fd_syscalls[i].nr < LT_MAX_SYSCALL && (is_mmap ? mmap : fd))
			table[fd_syscalls[i].nr] = fd_syscalls[i].cls;
	}
}

static const struct {
	const char *prefix;
	enum fd_type type;
} link_prefixes[] = {
	{ "socket:[", FD_SOCKET },
	{ "pipe:[", FD_PIPE },
	{ "anon_inode:[eventfd]", FD_EVENTFD },
	{ "anon_inode:[timerfd]", FD_TIMERFD },
	{ "anon_inode:[signalfd]", FD_SIGNALFD },
	{ "anon_inode:[eventpoll]", FD_EPOLL },
	{ "anon_inode:inotify", FD_INOTIFY },
	{ "anon_inode:[fanotify]", FD_FANOTIFY },
	{ "anon_inode:[pidfd]", FD_PIDFD },
	{ "anon_inode:[userfaultfd]", FD_USERFAULTFD },
	{ "anon_inode:[perf_event]", FD_PERF_EVENT },
	{ "anon_inode:[io_uring]", FD_IO_URING },
	{ "anon_inode:[fscontext]", FD_FSCONTEXT },
	{ "anon_inode:", FD_ANON_INODE },
	{ "/memfd:", FD_MEMFD },
	{ "/secretmem", FD_SECRETMEM },
	{ "pidfd:", FD_PIDFD },
};

enum fd_type fdsys__classify(const char *target)
{
	size_t len = strlen(target);

	for (size_t i = 0; i < sizeof(link_prefixes) / sizeof(link_prefixes[0]); i++)
		if (!strncmp(target, link_prefixes[i].prefix, strlen(link_prefixes[i].prefix)))
			return link_prefixes[i].type;
	if (target[0] == '/')
		return len > 1 && target[len - 1] == '/' ? FD_DIR : FD_FILE;
	/* net:[4026531840], mnt:[...]: namespace descriptors. */
	if (strstr(target, ":[") && target[len - 1] == ']')
		return FD_NAMESPACE;
	return FD_OTHER;
}
