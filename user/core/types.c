// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * types.c - the names of the shared kinds (descriptor types), as reports and snapshots
 * spell them.
 */
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
