/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * leaktop.h - the one header shared by the BPF programs and userspace.
 *
 * It owns the layout of every map key and value, the ring buffer events and the limits.
 * Fixed-width types and explicit padding only; each struct states who writes it.  Both
 * sides compile the static size assertions at the bottom, so a layout change that only one
 * side sees fails the build instead of corrupting maps at run time.
 */
#ifndef LEAKTOP_H
#define LEAKTOP_H

#ifdef __bpf__
/* vmlinux.h provides the fixed-width kernel types. */
#else
#include <linux/types.h>
#endif

#define LT_MAX_STACK_DEPTH	127	/* kernel.perf_event_max_stack default */
#define LT_DEFAULT_STACK_DEPTH	32

/* Map sizes: userspace may raise them before load; these are the defaults. */
#define LT_MAX_ALLOCS		(1u << 21)	/* live allocations, all processes */
#define LT_MAX_SITES		(1u << 18)	/* (process image, stack) pairs */
#define LT_MAX_STACKS		(1u << 18)	/* distinct user stacks */
#define LT_MAX_PROCS		(1u << 15)	/* traced processes */
#define LT_RINGBUF_BYTES	(1u << 18)

/*
 * How an allocator entry point takes its arguments and gives its block, one value per shape
 * (the attach cookie of its probe): every allocator's functions are one of these, e.g.
 * jemalloc's mallocx and C++ operator new are LT_FN_MALLOC (size in the first argument),
 * operator delete and sdallocx LT_FN_FREE (block in the first), rallocx LT_FN_REALLOC.
 */
enum lt_alloc_fn {
	LT_FN_MALLOC,
	LT_FN_CALLOC,
	LT_FN_REALLOC,
	LT_FN_REALLOCARRAY,
	LT_FN_FREE,
	LT_FN_POSIX_MEMALIGN,
	LT_FN_ALIGNED_ALLOC,
	LT_FN_MEMALIGN,
	LT_FN_VALLOC,
	LT_FN_PVALLOC,
	LT_FN__COUNT,
};

/*
 * Loss counters, indexes into the per-CPU `drops` array (written by BPF, summed by the
 * collector).  Every one of them is an event whose effect leaktop could not record.
 */
enum lt_drop {
	LT_DROP_ALLOC_MAP_FULL,		/* live allocation not recorded: allocs map full */
	LT_DROP_SITE_MAP_FULL,		/* allocation not counted: sites map full */
	LT_DROP_STACK_MAP_FULL,		/* stack not stored: stacks map full (site keeps no frames) */
	LT_DROP_INFLIGHT_FULL,		/* allocator call entered but no thread state could be made */
	LT_DROP_PROC_MAP_FULL,		/* new process not traced: procs map full */
	LT_DROP_RINGBUF_FULL,		/* lifecycle event lost */
	LT_DROP_LOST_RETURN,		/* an allocator call whose return probe never ran */
	LT_DROP_FD_MAP_FULL,		/* new descriptor not recorded: fds map full */
	LT_DROP_MMAP_MAP_FULL,		/* anonymous mapping (or the rest of one cut in two) not
					 * recorded: mmaps map full */
	LT_DROP_BPF_RECURSION,		/* a program the kernel skipped because another BPF program
					 * was running on that CPU (filled in by the collector from
					 * the programs' recursion_misses; BPF never writes it) */
	/* Records refused because their process held its share of the map (enum lt_share). */
	LT_DROP_HEAP_SHARE,		/* allocation not recorded (share of allocs) */
	LT_DROP_FD_SHARE,		/* descriptor not recorded (share of fds) */
	LT_DROP_MMAP_SHARE,		/* mapping not recorded (share of mmaps) */
	LT_DROP_SITE_SHARE,		/* site, or its stack, not made (the image's share of sites) */
	LT_DROP_WATCH_RINGBUF_FULL,	/* lastref: a watch event lost (watch ring buffer full) */
	LT_DROP__COUNT,
};

/* Plain event counters (per-CPU array `counters`), for the header line and stats. */
enum lt_counter {
	LT_CNT_EVENTS,			/* allocator calls and frees accounted */
	LT_CNT_FREE_UNKNOWN,		/* free() of a block leaktop did not see allocated */
	LT_CNT_NESTED,			/* allocator calls made from inside another (counted once) */
	LT_CNT_FAILED_ALLOCS,		/* allocations that returned NULL */
	LT_CNT_FD_EVENTS,		/* descriptors created and closed, accounted */
	LT_CNT_SELF_HITS,		/* allocator probe hits (traps) in leaktop's own process:
					 * its allocator lives in its executable, so 0 */
	LT_CNT_SELF_SYSCALLS,		/* leaktop's own descriptor syscalls the fd tracepoints saw
					 * (no trap: they run for every process's syscalls) */
	LT_CNT_STACK_TRUNCATED,		/* stack walks stopped at a frame whose return address is
					 * not in an executable file mapping after a call */
	LT_CNT_BYSTANDER_HITS,		/* allocator probe hits in processes leaktop does not trace
					 * (-p, --): the traps its probes cost other processes */
	LT_CNT_COMPAT_SKIPPED,		/* ia32 syscalls of traced processes, not classified (the
					 * raw tracepoints' fallback only: the per-syscall ones
					 * do not fire for them, see LT_CNT_COMPAT_IMAGES) */
	LT_CNT_MMAP_FILE_OR_SHARED,	/* mmaps of files or shared memory: counted, no site */
	LT_CNT_MMAP_UNMATCHED,		/* munmap/mremap/brk pieces over more tracked mappings
					 * than one call handles (LT_MMAP_RANGE_MAX): not applied */
	LT_CNT_HEAP_CALLS,		/* allocator probe entries hit outside leaktop (the traps
					 * its heap probes cost; the overhead budget counts them) */
	LT_CNT_CALIBRATION_HITS,	/* probe hits of leaktop's start-up trap-cost calibration */
	LT_CNT_WALK_LOCK_BUSY,		/* stack walk frames taken on their call instruction alone:
					 * another thread held the mapping lock */
	LT_CNT_MMAP_SCANS,		/* unmaps whose records were searched for in the whole
					 * mmaps map (the slow path: no cheaper way found them) */
	LT_CNT_UNWIND_CFI_FRAMES,	/* stack frames found by a module's unwind table (CFI) */
	LT_CNT_UNWIND_FP_FRAMES,	/* stack frames found by the frame pointer: --unwind fp,
					 * or where a module has no table or no row for the pc */
	LT_CNT_UNWIND_NO_TABLE,		/* frames in a module whose table was not loaded (yet):
					 * taken by frame pointer; userspace is asked to load it */
	LT_CNT_OOM_VICTIMS,		/* OOM-killer victims among the watched processes */
	LT_CNT_WALK_LOCK_UNKNOWN,	/* stack walk frames taken by frame pointer: the mapping
					 * lock was taken and the module was not known lately */
	LT_CNT_COMPAT_IMAGES,		/* traced processes that exec'd a 32-bit (ELFCLASS32)
					 * program: the per-syscall tracepoints never see its
					 * syscalls (ia32), and no allocator of it is probed */
	LT_CNT_FRAME_NO_FILE,		/* frames of stacks stored without their file (no
					 * executable file mapping found: see struct lt_stack) */
	LT_CNT_PY_FRAMES,		/* Python frames put in stacks (bpf/python.bpf.c) */
	LT_CNT_PY_NOT_HOLDER,		/* allocations of a Python process by a thread that did
					 * not hold the GIL: no Python frames taken */
	LT_CNT_PY_READ_FAILED,		/* Python frame walks stopped at an unreadable or
					 * implausible frame (its frames so far kept) */
	LT_CNT_PY_CODES,		/* code objects copied to py_codes (names, line table) */
	LT_CNT_PY_CODE_FAILED,		/* code objects not copied: unreadable (frame kept, its
					 * name unknown) */
	LT_CNT__COUNT,
};

/*
 * procs: tgid -> per-process image state.  Written by BPF (fork/exec/first sight) and by
 * userspace (seeding -p / -- targets).  `gen` changes on every exec so the sites of the old
 * image and of the new one never mix; it comes from a global counter, so a recycled pid
 * never matches a dead process's records either.
 */
struct lt_proc {
	__u64 gen;
	__u64 start_ns;			/* when leaktop started tracing this image */
	/* The executable file mapping that holds the allocator's code (libc's text), learned by
	 * BPF at the image's first allocator call (0, 0 until then); stack walks accept return
	 * addresses in it without a vma lookup.  An image never unmaps its libc. */
	__u64 alloc_text_start;
	__u64 alloc_text_end;
	__u64 heap_calls;		/* allocator probe entries hit in this image (the budget's
					 * per-process cost) */
	__u64 brk_top;			/* start of this image's topmost brk record (0: none);
					 * each brk record names the one below (brk_prev) */
	__u32 has_mmaps;		/* this image ever had a mapping record: unmaps look */
	__u32 pad;
	/*
	 * Per-process shares of the maps every process shares (written by BPF with atomic
	 * adds, read by the collector): records held, by kind (enum lt_share), and the records
	 * of this process that were lost (refused over its share, or the map was full).  Heap,
	 * mapping and site records are the image's (reset on exec; the old image's go with
	 * it); descriptors outlive exec, so their count is the process's.
	 */
	__s64 share_held[4];		/* LT_SHARE__COUNT */
	__u64 share_drops[4];
	__u64 purged_heap;		/* of share_purges' counts, those taken off share_held */
	__u64 purged_sites;
};

/*
 * share_purges: tgid -> heap records and heap sites of its image `gen` that userspace
 * removed while the image lives (the overhead budget stops tracing its heap), so far.
 * Written by userspace (adding); BPF takes them off the image's share when it reaches it.
 */
struct lt_share_purge {
	__u64 gen;
	__u64 heap;
	__u64 sites;
};

/* The kinds of records a process holds a share of (indexes of lt_proc.share_*). */
enum lt_share {
	LT_SHARE_HEAP,			/* allocs (and realloc/alloc calls in progress) */
	LT_SHARE_FD,			/* fds */
	LT_SHARE_MMAP,			/* mmaps */
	LT_SHARE_SITE,			/* sites (a new stack is interned for a new site) */
	LT_SHARE__COUNT,
};

/* Default share of each shared map one process may hold: capacity / LT_SHARE_DIV. */
#define LT_SHARE_DIV		4

enum lt_site_kind {
	LT_KIND_HEAP = 0,
	LT_KIND_FD = 1,
	LT_KIND_MMAP = 2,		/* anonymous private mappings and brk growth */
};

/* sites: (tgid, kind, gen, stack) -> aggregates.  Key written by BPF; userspace deletes
 * dead ones. */
struct lt_site_key {
	__u32 tgid;
	__u32 kind;			/* enum lt_site_kind */
	__u64 gen;
	__u64 stack_hash;		/* 0: stack unknown (see LT_DROP_STACK_MAP_FULL) */
};

/* Written by BPF with atomic adds; read (never written) by userspace.  For fd sites
 * allocs/frees count opens/closes and the byte fields stay 0; for mmap sites they count maps
 * and unmaps of whole mappings (a split adds to outstanding_count only). */
struct lt_site_val {
	__s64 outstanding_bytes;
	__s64 outstanding_count;
	__u64 allocs;
	__u64 frees;
	__u64 alloc_bytes;		/* total bytes ever allocated here */
	__u64 live_since_ns;		/* first allocation since outstanding_count was last 0 */
	__u64 last_alloc_ns;
	__u32 stop_match;		/* heap: the site is --stop-at's (set by BPF when made) */
	__u32 pad;
};

/* allocs: (tgid, address) -> live block.  Written by BPF; the collector's janitor deletes
 * the records of processes that exited or exec'd. */
struct lt_alloc_key {
	__u32 tgid;
	__u32 pad;
	__u64 addr;
};

struct lt_alloc_val {
	__u64 size_bytes;
	__u64 ts_ns;
	__u64 gen;
	__u64 stack_hash;
	__u64 seq;			/* the block's allocation number at its site (1-based): its
					 * site's allocs count once it was taken */
};

/*
 * stacks: stack_hash -> frames (return addresses, innermost first), and the file each one
 * lies in.  Written by BPF.  The hash covers the addresses only.  The map's value is cut to
 * the run's depth D (the loader sets it): nr, ips[0..D), then D struct lt_frame_file, so the
 * files of frame i are w[D + 2 * i] and the word after.  They are looked up once, when the
 * stack is first stored, so a frame still names its file after its process is gone.
 */
struct lt_frame_file {
	__u64 ino;			/* 0: unknown (no executable file mapping found there) */
	__u32 dev;			/* kernel dev_t: major << 20 | minor */
	__u32 off;			/* file offset of the address (files of 4 GiB and more:
					 * unknown) */
};

struct lt_stack {
	__u32 nr;
	__u32 pad;
	union {
		__u64 ips[LT_MAX_STACK_DEPTH];
		__u64 w[3 * LT_MAX_STACK_DEPTH];	/* ips[D], then D frame files */
	};
};

/*
 * file_paths: (device, inode) -> a name of the file, as the kernel's dentries give it (from
 * the root of the mapping process's mount namespace), learned with the stacks that have a
 * frame in it: a file only processes that are gone mapped can still be opened (by that
 * name, and only if it is still that file).  Written by BPF (LRU).
 */
#define LT_PATH_LEN		256
#define LT_MAX_FILE_PATHS	2048

struct lt_file_path {
	char path[LT_PATH_LEN];		/* NUL-terminated; "" when it did not fit */
};

/*
 * inflight (task storage): the outer allocator call a thread is inside.  BPF only.
 * realloc's old block is taken out of `allocs` at the call's entry, while the thread still
 * owns the address: once realloc has freed it inside libc, another thread may be handed the
 * same address before this call returns, and its record must not be the one removed.  The
 * return then takes the old block off its site (realloc freed it) or puts the record back
 * (realloc failed and the block lives on).
 */
/*
 * Which attachments an allocator probe belongs to: the system-wide ones or those filtered on
 * one process (their attach cookie has LT_COOKIE_PID; uprobe_multi entries have the
 * function in the low 32 bits).  Both kinds are attached at once only while heap tracing
 * switches between them; heap.bpf.c's heap_kinds_off and heap_kinds_gone say which runs.
 */
#define LT_HEAP_KIND_SYSTEM	1
#define LT_HEAP_KIND_PID	2
#define LT_COOKIE_PID		(1ULL << 32)

#define LT_INFL_SHARE_NONE	0	/* nothing taken (nested, or not an allocation) */
#define LT_INFL_SHARE_HELD	1	/* one record of the image's share taken at entry */
#define LT_INFL_SHARE_REFUSED	2	/* over the share: the block is not recorded */

struct lt_inflight {
	__u64 size_bytes;		/* requested size (n*m for calloc/reallocarray) */
	__u64 arg_ptr;			/* realloc's old pointer / posix_memalign's out-pointer */
	__u64 gen;			/* image the call belongs to, looked up at entry */
	__u64 entry_sp;			/* user %rsp at the outer call's entry */
	__u64 entry_ra;			/* its return address, as the caller pushed it */
	__u64 alloc_text_start;		/* the image's lt_proc.alloc_text_*, for the walk */
	__u64 alloc_text_end;
	__u32 fn;			/* enum lt_alloc_fn */
	__u16 depth;			/* nested allocator calls currently inside this one */
	__u16 active;			/* 1 between the outer call's entry and return */
	__u32 old_held;			/* 1: `old` is arg_ptr's record, out of `allocs` */
	__u16 share;			/* the call's allocs share: LT_INFL_SHARE_* */
	__u16 kind;			/* LT_HEAP_KIND_* of the probe that took the entry */
	struct lt_alloc_val old;	/* realloc's old block, as it was recorded */
	/*
	 * The thread's last free, while no allocation of it came since: a free-shaped entry
	 * that passes its pointer on to another probed one (operator delete jumping to free,
	 * mi_free_size to mi_free) is seen by both probes, at the same or a deeper %rsp.
	 */
	__u64 free_ptr;
	__u64 free_sp;
};

/* fds: (tgid, fd) -> the site that created an open descriptor.  Written by BPF; the
 * collector removes records of descriptors /proc shows closed (repairs) and of dead images. */
struct lt_fd_key {
	__u32 tgid;
	__s32 fd;
};

struct lt_fd_val {
	__u64 gen;
	__u64 stack_hash;
	__u64 ts_ns;
};

/* How a syscall creates or closes descriptors, or maps memory (rodata table cfg_fd_class,
 * indexed by nr). */
enum lt_fd_class {
	LT_FDC_NONE = 0,
	LT_FDC_RET,			/* the return value is a new fd */
	LT_FDC_PAIR_ARG0,		/* int[2] at arg 0: pipe, pipe2 */
	LT_FDC_PAIR_ARG3,		/* int[2] at arg 3: socketpair */
	LT_FDC_DUP2,			/* dup2/dup3: returns arg 1, closing what was open there */
	LT_FDC_FCNTL,			/* fcntl: a new fd for F_DUPFD and F_DUPFD_CLOEXEC */
	LT_FDC_SIGNALFD,		/* a new fd only when arg 0 is -1 */
	LT_FDC_RECVMSG,			/* SCM_RIGHTS fds in the msghdr at arg 1 */
	LT_FDC_RECVMMSG,		/* SCM_RIGHTS fds in each mmsghdr at arg 1 */
	LT_FDC_CLOSE,			/* close(arg 0) */
	LT_FDC_CLOSE_RANGE,		/* close_range(arg 0, arg 1, flags) */
	/* Memory mapping syscalls (-r mmap), dispatched to bpf/mmap.bpf.c. */
	LT_FDC_MMAP,			/* mmap(addr, len, prot, flags, ...): returns the start */
	LT_FDC_MUNMAP,			/* munmap(addr, len) */
	LT_FDC_MREMAP,			/* mremap(old, old_len, new_len, flags, new_addr) */
	LT_FDC_BRK,			/* brk(addr): returns the new break; sys_enter keeps the
					 * old one in args[1] */
};

#define LT_MAX_SYSCALL		512	/* size of cfg_fd_class */
#define LT_MAX_FDS		(1u << 16)	/* open descriptors tracked, all processes */
#define LT_MAX_SCM_FDS		16	/* fds taken from one SCM_RIGHTS message */

/* mmaps: (tgid, start) -> a live anonymous private mapping or brk extension, and its site.
 * Written by BPF; the collector deletes the records of dead images. */
#define LT_MAX_MMAPS		(1u << 16)
#define LT_MMAP_RANGE_MAX	8	/* tracked mappings one munmap/brk shrink edits */
#define LT_MMAP_CHAIN_MAX	16	/* records an unmap follows from a known start */
#define LT_MAX_SCAN_CACHE	4096	/* syscall instructions whose stack scan is kept */
#define LT_UNMAP_HINT_SCAN	0	/* records may be anywhere in the range: search */
#define LT_UNMAP_HINT_NONE	1	/* no anonymous private mapping in the range */

struct lt_mmap_key {
	__u32 tgid;
	__u32 pad;
	__u64 start;
};

struct lt_mmap_val {
	__u64 len;
	__u64 gen;
	__u64 stack_hash;
	__u64 ts_ns;
	__u64 brk_prev;			/* a brk record: the start of the brk record below it */
};

/* sysargs (pid_tgid ->): a traced thread's fd or mapping syscall between entry and exit.
 * BPF only. */
#define LT_MAX_SYSARGS		(1u << 15)
struct lt_sysargs {
	__u64 args[4];
	__u64 hint;			/* an unmapping syscall: where its records may be
					 * (LT_UNMAP_HINT_*, or the start of the run of anonymous
					 * mappings it touches), learned before the call */
	__u64 hint_end;			/* the end of that run */
	__u64 gen;
	__u32 nr;
	__u32 active;
};

/* Ring buffer: lifecycle of traced processes, BPF -> userspace. */
enum lt_event_type {
	LT_EV_FORK = 1,
	LT_EV_EXEC = 2,
	LT_EV_EXIT = 3,
	LT_EV_FIRST = 4,		/* whole-system mode: first allocator call of a process */
	LT_EV_OOM = 5,			/* the OOM killer chose tgid (image new_gen) */
	LT_EV_STOP_AT = 6,		/* --stop-at: tgid stopped at the allocation in `stop` */
};

/*
 * Exec stops (-p, --): a traced process that execs a program whose allocator may need
 * probes not yet in place is held (SIGSTOP, before its first instruction) until userspace
 * has attached them and sends SIGCONT.  `exec_plain` holds the executables (kernel dev_t,
 * inode) userspace found need nothing new, when exec'd with neither LD_PRELOAD nor
 * LD_LIBRARY_PATH; `exec_stopped` the processes held now (tgid -> time of the stop), so
 * none is left stopped whatever happens to the event.
 */
#define LT_EXEC_STOPPED		1u	/* LT_EV_EXEC flag: held, userspace must SIGCONT it */
#define LT_MAX_EXEC_PLAIN	4096
#define LT_MAX_EXEC_STOPPED	1024

struct lt_exec_key {
	__u32 dev;
	__u32 pad;
	__u64 ino;
};

/* LT_EV_STOP_AT: the allocation the process was stopped at (SIGSTOP from its return probe). */
struct lt_stop_info {
	__u64 gen;
	__u64 addr;
	__u64 size_bytes;
	__u64 seq;
	__u64 stack_hash;
	__u32 tid;
	__u32 pad;
};

/*
 * --stop-at SITE:N, written by userspace before the processes run (array `stop_cfg`, one
 * entry): stop the process at the allocation numbered `seq` of a heap site that is its site,
 * i.e. whose stack hash is `stack_hash` (non-zero: the site id form), or else whose stack has
 * a frame in one of `ranges` (the function named, by file and offset; `nranges` of them).
 * BPF sets `fired` (once: the first match stops, later ones do not), only with the event
 * that says so reserved.
 */
#define LT_STOP_RANGES 8

struct lt_stop_range {
	__u64 dev;			/* the file's device, kernel dev_t (major << 20 | minor) */
	__u64 ino;
	__u64 start;			/* file offsets [start, end) of the function's code */
	__u64 end;
};

struct lt_stop_cfg {
	__u32 armed;
	__u32 fired;
	__u64 seq;
	__u64 stack_hash;
	__u32 nranges;
	__u32 missed;			/* BPF: allocation N matched with no room for its event
					 * (nothing stopped): the next match past N stops */
	struct lt_stop_range ranges[LT_STOP_RANGES];
};

#define LT_EXE_LEN 160

struct lt_event {
	__u32 type;			/* enum lt_event_type */
	__u32 tgid;
	__u32 ppid;			/* LT_EV_FORK: the parent; LT_EV_EXEC: LT_EXEC_* flags */
	__u32 exe_dev;			/* LT_EV_EXEC: the exec'd file's device (kernel dev_t:
					 * major << 20 | minor) and inode, which identify it */
	__u64 old_gen;			/* LT_EV_EXEC / LT_EV_EXIT: image whose records are dead */
	__u64 new_gen;			/* LT_EV_FORK / LT_EV_EXEC: the new image */
	__u64 ts_ns;
	/* LT_EV_EXEC: the program's code range and file name, so its frames resolve even if
	 * it exits before userspace can read its maps. */
	__u64 start_code;
	__u64 end_code;
	__u64 exe_ino;
	union {
		char exe[LT_EXE_LEN];
		struct lt_stop_info stop;	/* LT_EV_STOP_AT */
	};
};

/*
 * Unwind tables (--unwind cfi): each executable object's .eh_frame, turned by userspace
 * (user/live/cfi.c) into rows sorted by file offset, one table per (device, inode), shared by
 * every process mapping the file.  The tables lie end to end in one array map, `unwind_rows`
 * (memory-mapped by userspace, sized at load); `unwind_objects` says where each object's
 * table is.  A row holds from its pc up to the next row's.  x86-64 only: the return address
 * is always at CFA - 8 (rows where CFI says otherwise are LT_UW_NONE).
 */
#define LT_UNWIND_ROWS		(1u << 21)	/* default capacity: 16 MiB */
#define LT_MAX_UNWIND_OBJECTS	2048
#define LT_MAX_UNWIND_WANTED	256
#define LT_UW_RBP_LOST		(-128)	/* rbp cannot be recovered for the caller */

enum lt_unwind_kind {
	LT_UW_NONE = 0,			/* no usable CFI for these pcs: the frame pointer is tried */
	LT_UW_RSP,			/* CFA = rsp + 8 * cfa */
	LT_UW_RBP,			/* CFA = rbp + 8 * cfa */
	LT_UW_PLT,			/* a PLT entry: CFA = rsp + 8 * cfa, plus 8 when
					 * (pc & 15) >= rbp (the ABI's PLT expression) */
	LT_UW_SIGNAL,			/* a signal trampoline: the interrupted rsp is saved at
					 * rsp + 8 * cfa, its rip right after it, its rbp at
					 * rsp + 8 * rbp */
	LT_UW_OUTERMOST,		/* the return address is undefined: the stack ends here */
};

struct lt_unwind_row {
	__u32 pc;			/* file offset of the first byte the row covers */
	__s16 cfa;			/* in 8-byte units, as the kind says */
	__s8 rbp;			/* the caller's rbp saved at CFA + 8 * rbp; 0: rbp unchanged;
					 * LT_UW_RBP_LOST: unknown (PLT, SIGNAL: as the kind says) */
	__u8 kind;			/* enum lt_unwind_kind */
};

/* unwind_objects: which file a mapping shows, as the kernel names it. */
struct lt_unwind_key {
	__u64 ino;
	__u32 dev;			/* kernel dev_t: major << 20 | minor */
	__u32 pad;
};

/* Written by userspace after the rows are in place; nrows 0: the file has no usable CFI. */
struct lt_unwind_obj {
	__u32 first;			/* index of its first row in unwind_rows */
	__u32 nrows;
};

/*
 * unwind_wanted: objects a walk met without a table, and where: userspace opens the file
 * through /proc/TGID/map_files/START-END and loads its table.  Written by BPF (LRU), drained
 * by userspace each interval.
 */
struct lt_unwind_want {
	__u64 start, end;		/* the mapping */
	__u32 tgid;
	__u32 pad;
};

/*
 * Python frames (CPython 3.11: bpf/python.bpf.c, user/live/pyproc.c).  py_procs: tgid -> where
 * the interpreter of image `gen` keeps the thread state holding the GIL, and the offsets of
 * the fields the walk reads, found by userspace from the `_PyRuntime` and `Py_Version`
 * symbols of the python executable or libpython.  Only processes listed here are walked.
 */
#define LT_MAX_PY_PROCS		1024
#define LT_MAX_PY_CODES		4096
#define LT_PY_MAX_FRAMES	32	/* Python frames a stack keeps at most */
#define LT_PY_STR_LEN		128	/* bytes of a name or file name copied */
#define LT_PY_LINETABLE_LEN	1024	/* bytes of a line table copied */

/*
 * A Python frame in struct lt_stack's ips: the tag bit, the entry bit (the frame is the first
 * one its evaluation of _PyEval_EvalFrameDefault runs: _PyInterpreterFrame.is_entry), the
 * instruction offset in code units (capped), the code object's address.  Python frames follow
 * the native frames of a stack, innermost first; userspace puts them in their place.
 */
#define LT_PY_FRAME_TAG		(1ULL << 63)
#define LT_PY_FRAME_ENTRY	(1ULL << 62)
#define LT_PY_LASTI_SHIFT	48
#define LT_PY_LASTI_MAX		0x3fffULL
#define LT_PY_ADDR_MASK		((1ULL << 48) - 1)

struct lt_py_proc {
	__u64 gen;			/* the image the offsets are for */
	__u64 tstate_addr;		/* &_PyRuntime.gilstate.tstate_current */
	__u16 ts_cframe;		/* PyThreadState.cframe */
	__u16 ts_native_tid;		/* PyThreadState.native_thread_id */
	__u16 cframe_frame;		/* _PyCFrame.current_frame */
	__u16 frame_code;		/* _PyInterpreterFrame.f_code */
	__u16 frame_previous;		/* .previous */
	__u16 frame_prev_instr;		/* .prev_instr */
	__u16 frame_is_entry;		/* .is_entry */
	__u16 code_firstlineno;		/* PyCodeObject.co_firstlineno */
	__u16 code_filename;		/* .co_filename */
	__u16 code_qualname;		/* .co_qualname */
	__u16 code_linetable;		/* .co_linetable */
	__u16 code_adaptive;		/* ._co_code_adaptive: the instructions */
	__u16 str_length;		/* PyASCIIObject.length */
	__u16 str_state;		/* .state */
	__u16 str_ascii_data;		/* sizeof(PyASCIIObject): a compact ASCII string's bytes */
	__u16 str_compact_data;		/* sizeof(PyCompactUnicodeObject): other compact strings' */
	__u16 bytes_size;		/* PyVarObject.ob_size of a bytes object */
	__u16 bytes_data;		/* PyBytesObject.ob_sval */
	__u16 pad[2];
};

/* py_codes: (tgid, code object address) -> what the symbolizer needs of it.  Written by BPF
 * (LRU) when a walk first meets the code object, or meets it changed. */
struct lt_py_code_key {
	__u32 tgid;
	__u32 pad;
	__u64 code;
};

struct lt_py_code {
	__u64 qualname_ptr;		/* the objects copied from: a code object freed and another */
	__u64 filename_ptr;		/* made at its address has others, and is copied again */
	__u64 linetable_ptr;
	__s32 firstlineno;
	__u32 linetable_len;		/* bytes in linetable (the table's first ones) */
	__u32 linetable_size;		/* the table's size */
	__u16 qualname_len;		/* bytes in qualname */
	__u16 filename_len;		/* bytes in filename (its last ones, when longer) */
	__u8 qualname_kind;		/* bytes per character: 1 (ASCII, Latin-1), 2, 4; 0 unknown */
	__u8 filename_kind;
	__u8 qualname_ascii;
	__u8 filename_ascii;
	__u32 pad;
	char qualname[LT_PY_STR_LEN];
	char filename[LT_PY_STR_LEN];
	__u8 linetable[LT_PY_LINETABLE_LEN];
};

/* Filter modes (rodata `cfg_filter`). */
enum lt_filter {
	LT_FILTER_ALL = 0,		/* whole system: every process except leaktop itself */
	LT_FILTER_PROCS = 1,		/* only tgids present in `procs` (seeded + descendants) */
};

#define LT_ASSERT_SIZE(type, size) _Static_assert(sizeof(type) == (size), #type " layout changed")
LT_ASSERT_SIZE(struct lt_proc, 72 + 16 * LT_SHARE__COUNT);
LT_ASSERT_SIZE(struct lt_share_purge, 24);
LT_ASSERT_SIZE(struct lt_site_key, 24);
LT_ASSERT_SIZE(struct lt_site_val, 64);
LT_ASSERT_SIZE(struct lt_alloc_key, 16);
LT_ASSERT_SIZE(struct lt_alloc_val, 40);
LT_ASSERT_SIZE(struct lt_stop_info, 48);
LT_ASSERT_SIZE(struct lt_stop_cfg, 32 + 32 * LT_STOP_RANGES);
LT_ASSERT_SIZE(struct lt_stack, 8 + 24 * LT_MAX_STACK_DEPTH);
LT_ASSERT_SIZE(struct lt_frame_file, 16);
LT_ASSERT_SIZE(struct lt_inflight, 128);
LT_ASSERT_SIZE(struct lt_event, 64 + LT_EXE_LEN);
LT_ASSERT_SIZE(struct lt_exec_key, 16);
LT_ASSERT_SIZE(struct lt_fd_key, 8);
LT_ASSERT_SIZE(struct lt_fd_val, 24);
LT_ASSERT_SIZE(struct lt_sysargs, 64);
LT_ASSERT_SIZE(struct lt_mmap_key, 16);
LT_ASSERT_SIZE(struct lt_mmap_val, 40);
LT_ASSERT_SIZE(struct lt_unwind_row, 8);
LT_ASSERT_SIZE(struct lt_unwind_key, 16);
LT_ASSERT_SIZE(struct lt_unwind_obj, 8);
LT_ASSERT_SIZE(struct lt_unwind_want, 24);
LT_ASSERT_SIZE(struct lt_py_proc, 56);
LT_ASSERT_SIZE(struct lt_py_code_key, 16);
LT_ASSERT_SIZE(struct lt_py_code, 48 + 2 * LT_PY_STR_LEN + LT_PY_LINETABLE_LEN);

#endif /* LEAKTOP_H */
