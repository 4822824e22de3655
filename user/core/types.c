// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * types.c - the names of the shared kinds (descriptor types, site kinds), as reports and
 * snapshots spell them.
 */
#include "bpf/leaktop.h"
#include "core/types.h"

const char *const fd_type_names[FD_TYPE__COUNT] = {
	[FD_FILE] = "file",
	[FD_DIR] = "dir",
	[FD_SOCKET] = "socket",
	[FD_PIPE] = "pipe",
	[FD_EVENTFD] = "eventfd",
	[FD_TIMERFD] = "timerfd",
	[FD_SIGNALFD] = "signalfd",
	[FD_EPOLL] = "epoll",
	[FD_INOTIFY] = "inotify",
	[FD_FANOTIFY] = "fanotify",
	[FD_MEMFD] = "memfd",
	[FD_SECRETMEM] = "secretmem",
	[FD_PIDFD] = "pidfd",
	[FD_USERFAULTFD] = "userfaultfd",
	[FD_PERF_EVENT] = "perf_event",
	[FD_IO_URING] = "io_uring",
	[FD_FSCONTEXT] = "fscontext",
	[FD_NAMESPACE] = "namespace",
	[FD_ANON_INODE] = "anon_inode",
	[FD_OTHER] = "other",
};

static const char *const site_kind_names[] = {
	[LT_KIND_HEAP] = "heap",
	[LT_KIND_FD] = "fd",
	[LT_KIND_MMAP] = "mmap",
};

const char *site_kind_name(unsigned int kind)
{
	return kind < sizeof(site_kind_names) / sizeof(site_kind_names[0]) &&
	       site_kind_names[kind] ? site_kind_names[kind] : "heap";
}
