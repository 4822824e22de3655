/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * types.h - small value types shared by the producers (live/), the model and the views:
 * which resources are tracked, the kinds of file descriptors, one process's counters from
 * /proc, and the name of a process image.  No behaviour here but the names of the kinds.
 */
#ifndef LEAKTOP_TYPES_H
#define LEAKTOP_TYPES_H

#include <stdbool.h>
#include <stdint.h>

/* What is tracked (-r). */
enum resource_bits {
	RES_HEAP = 1u << 0,
	RES_FD = 1u << 1,
	RES_MMAP = 1u << 2,
	RES_ALL = RES_HEAP | RES_FD | RES_MMAP,
};

/* Kinds of descriptors, as /proc/PID/fd names them (live/fdsys.c classifies). */
enum fd_type {
	FD_FILE,
	FD_DIR,
	FD_SOCKET,
	FD_PIPE,
	FD_EVENTFD,
	FD_TIMERFD,
	FD_SIGNALFD,
	FD_EPOLL,
	FD_INOTIFY,
	FD_FANOTIFY,
	FD_MEMFD,
	FD_SECRETMEM,
	FD_PIDFD,
	FD_USERFAULTFD,
	FD_PERF_EVENT,
	FD_IO_URING,
	FD_FSCONTEXT,
	FD_NAMESPACE,
	FD_ANON_INODE,
	FD_OTHER,
	FD_TYPE__COUNT,
};

extern const char *const fd_type_names[FD_TYPE__COUNT];

/* The name of a site kind (enum lt_site_kind): "heap", "fd" or "mmap". */
const char *site_kind_name(unsigned int kind);

/* A process's counters: the Linux cousins of Working Set, Virtual Bytes, Handle Count and
 * thread count. */
struct proc_counters {
	uint64_t rss_bytes;
	uint64_t vm_bytes;
	uint32_t fd_count;
	uint32_t threads;
	/* The resident set by kind (/proc/PID/status RssAnon, RssFile, RssShmem). */
	uint64_t rss_anon_bytes;
	uint64_t rss_file_bytes;
	uint64_t rss_shmem_bytes;
	bool valid;		/* false: the process was gone or unreadable */
	bool rss_split_valid;	/* the three above were read (a kernel without them: false) */
};

/* --stop-at: the allocation a process was stopped at (fired false: none yet). */
struct stop_record {
	bool fired;
	uint32_t pid, tid;
	uint64_t gen;
	uint64_t addr, size_bytes;
	uint64_t seq;			/* its number at its site, 1-based */
	uint64_t stack_hash;		/* its site */
};

/* A process image: a pid and its exec generation (unique across pids). */
struct dead_image {
	uint32_t tgid;
	uint64_t gen;
};

/* The unwind tables in the BPF maps (--unwind cfi), as the store last counted them. */
struct unwind_stats {
	bool cfi;				/* --unwind cfi (else: frame pointers only) */
	uint64_t tables;			/* objects with a table */
	uint64_t no_cfi;			/* objects known to have none (frame pointers used) */
	uint64_t rows;				/* rows in use */
	uint64_t table_bytes;			/* the memory those rows and objects take */
	uint64_t capacity_rows;			/* rows the map holds (allocated at load) */
	uint64_t rows_full;			/* tables not loaded (or evicted): no room */
	uint64_t failed;			/* objects whose file could not be opened or read */
	uint64_t gone;				/* asked for by a process that exited first */
	uint64_t too_slow;			/* given up: CFI that took too long to read */
};

#endif
