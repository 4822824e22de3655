/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * loader.h - the BPF side as userspace sees it: load the skeleton with the run's settings,
 * attach the allocator probes to a libc (for one process or the whole system), attach the
 * lifecycle tracepoints, poll lifecycle events, and tear everything down.
 */
#ifndef LEAKTOP_LOADER_H
#define LEAKTOP_LOADER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "bpf/leaktop.h"
#include "live/libcs.h"
#include "util/budget.h"

struct loader;

enum probe_kind {
	PROBES_ACCOUNTING,	/* the real programs */
	PROBES_FLOOR_ENTRY,	/* empty programs at every function's entry (bench floor) */
	PROBES_FLOOR_PLANNED,	/* empty programs where the real ones go (bench) */
};

struct loader_config {
	enum lt_filter filter;
	bool follow_fork;
	unsigned int stack_depth;
	bool unwind_cfi;	/* walk by the modules' CFI tables (the unwind maps sized) */
	uint32_t unwind_rows;	/* capacity of the rows map (unwind_cfi) */
	int self_tgid;
	bool verbose;
	bool track_fd;		/* attach the syscall tracepoints for descriptors */
	bool track_mmap;	/* ... and for memory mappings */
	bool no_uprobe_multi;	/* one perf event per probe even where uprobe_multi works */
	bool no_tracefs;	/* trees attach system-wide, as where tracefs cannot be had */
	unsigned int map_share_pct;	/* records of each shared map one process may hold, % of
					 * its capacity (0: 100 / LT_SHARE_DIV) */
	bool exec_stop;		/* hold traced processes at exec until released (-p, --) */
	bool exit_stop;		/* hold them at _exit (`leaktop check`), with or without exec_stop */
	enum probe_kind probes;
};

#define LT_MAX_PROGS 32

/* File descriptors of the maps (and programs, for their miss counts) the collector reads. */
struct lt_map_fds {
	int procs, sites, allocs, stacks, drops, counters, fds, mmaps;
	int share_purges;
	int unwind_rows, unwind_objects, unwind_wanted;
	int file_paths;
	int py_procs, py_codes;
	int progs[LT_MAX_PROGS];
	int n_progs;
};

typedef void (*loader_event_fn)(void *ctx, const struct lt_event *ev);

/* Open and load the BPF object, attach the tracepoints.  0 or -errno; *msg gets one line. */
int loader__open(struct loader **out, const struct loader_config *cfg, loader_event_fn fn,
		 void *fn_ctx, char *msg, size_t msg_len);
void loader__destroy(struct loader *ld);

/*
 * Exec stops (cfg.exec_stop): an LT_EV_EXEC event with LT_EXEC_STOPPED means the process is
 * held before the new program's first instruction; loader__exec_release lets it go on
 * (SIGCONT), once its probes are in.  loader__exec_plain tells BPF an executable needs no
 * look when exec'd without LD_PRELOAD or LD_LIBRARY_PATH (dev is the kernel's dev_t, as the
 * event carried it).  loader__exec_release_all ends the stops and releases every process
 * still held, whether or not its event was read (teardown; loader__destroy does it too).
 * loader__exec_release_all_now does the same from a signal handler (async-signal-safe,
 * for the loader opened last).
 */
void loader__exec_release(struct loader *ld, int tgid);
void loader__exec_plain(struct loader *ld, uint32_t dev, uint64_t ino);
void loader__exec_release_all(struct loader *ld);
/*
 * Exit stops (`leaktop check`, needs cfg.exit_stop): hold a traced process when it calls _exit
 * in the object at path (a C library, a static executable), its memory intact, until
 * loader__exit_release; 0 or -errno with one line in msg.  loader__exit_stopped lists the
 * processes held at exit now (at most max).  Released at teardown like the exec stops, and
 * by the guard after a few seconds if leaktop stalls.
 */
int loader__attach_exit_stop(struct loader *ld, const char *path, char *msg, size_t msg_len);
size_t loader__exit_stopped(struct loader *ld, uint32_t *tgids, size_t max);
void loader__exit_release(struct loader *ld, uint32_t tgid);
void loader__exec_release_all_now(void);

/*
 * Attach the allocator probes to the libc ref names, for process `pid` or every process
 * (-1): the file is opened once (libcs__open: the very file the process maps, or refused),
 * decoded from that descriptor and attached through /proc/self/fd/N, so the kernel probes
 * exactly that inode; the descriptor is closed on return.  Attaching the same (dev, ino,
 * pid) twice is a no-op (returns 0).  0 or -errno (-ESTALE: refused, and counted) with one
 * line in msg.
 */
int loader__attach_libc(struct loader *ld, const struct libc_ref *ref, int pid, char *msg,
			size_t msg_len);
/*
 * The same probes on process pid and every process it forks from then on (threads,
 * children, theirs, across exec), and on no other process: tracefs uprobe events opened as
 * inherited perf events (live/tracefs.h).  A pid that some earlier tree of the same libc
 * covers (it descends from that tree's root) is a no-op.  Where tracefs cannot be had or the
 * kernel refuses, the probes are attached system-wide instead (said once with -v;
 * loader__heap_attach() tells).  0 or -errno with one line in msg.
 */
int loader__attach_libc_tree(struct loader *ld, const struct libc_ref *ref, int pid, char *msg,
			     size_t msg_len);
/*
 * How the allocator probes reach processes: "system" (some libc for every process that
 * maps it), else "tree" (-- : the command's processes), else "pid" (-p); NULL: none.
 */
const char *loader__heap_attach(const struct loader *ld);
/*
 * What the fd and mmap programs are attached to: "syscall" (the per-syscall tracepoints of
 * the syscalls they classify), "raw" (sys_enter/sys_exit: every syscall of every process,
 * where the per-syscall ones cannot be had; *why, if asked, says why), NULL (neither -r fd
 * nor -r mmap).
 */
const char *loader__syscall_attach(const struct loader *ld, const char **why);
/* How many times a libc was refused because no way to it reached the mapped file. */
size_t loader__libcs_refused(const struct loader *ld);
bool loader__has_libc(struct loader *ld, uint64_t dev, uint64_t ino, int pid);
size_t loader__probe_count(const struct loader *ld);
/*
 * Do the pid-filtered probes follow the whole thread group?  uprobe_multi links do; a perf
 * event follows the memory of the thread it was opened with, gone when that thread exits.
 */
bool loader__probes_follow_thread_group(const struct loader *ld);

/* Detach every allocator probe attached for pid (-1: the system-wide ones). */
void loader__detach_pid(struct loader *ld, int pid);
/* Detach every allocator probe attached for one process (all but the system-wide ones). */
void loader__detach_pid_filtered(struct loader *ld);
/*
 * Switch the heap probes between the system-wide ones and those of single processes
 * (to_pid) with no call missed nor seen twice: begin turns the new kind's entries off, the
 * caller attaches the new kind, end turns the old kind's entries off and the new kind's on
 * in one store, then detaches the old kind (its calls in flight return to the new one).
 */
void loader__heap_switch_begin(struct loader *ld, bool to_pid);
void loader__heap_switch_end(struct loader *ld, bool to_pid);

/* The allocator probes' hits in tgid (0: none) are the calibration's: counted, not traced. */
void loader__set_calibration_tgid(struct loader *ld, int tgid);
/* Have the kernel count the programs' run time from now on (until the loader is destroyed). */
int loader__count_run_time(struct loader *ld);
/* Run time and runs of the allocator programs so far; -ENODATA when not counted. */
int loader__heap_run_time(struct loader *ld, uint64_t *run_ns, uint64_t *run_cnt);

/* Put tgid in `procs` as a traced image with a fresh generation; returns the gen (0: error). */
uint64_t loader__seed_proc(struct loader *ld, int tgid);
/* --stop-at: the heap return probes stop the process at cfg's allocation.  0 or -errno. */
int loader__arm_stop_at(struct loader *ld, const struct lt_stop_cfg *cfg);
/* --stop-at fires no more from now on (the run is ending). */
void loader__disarm_stop_at(struct loader *ld);
/*
 * Has --stop-at stopped a process?  Then true, and *ev gets the LT_EV_STOP_AT event that says
 * where (read from the maps, whether or not the ring buffer brought it).
 */
bool loader__stop_fired(struct loader *ld, struct lt_event *ev);
/* Detach every allocator probe (no program of theirs runs once this returns). */
void loader__detach_allocators(struct loader *ld);

/*
 * Wait up to timeout_ms for lifecycle events and deliver them, spending at most about
 * timeout_ms (1 ms for 0) delivering: on a busy machine the ring never runs dry, and what
 * is left stays queued for the next poll (loader__events_pending()).  Delivery also stops
 * after the event during which *stop (loader__set_stop_flag) became non-zero.
 * >= 0 or -errno (-EINTR: a signal arrived while waiting).
 */
int loader__poll(struct loader *ld, int timeout_ms);
/*
 * Deliver the events waiting in the ring buffer, without waiting for more, until it is empty
 * or b is spent (b's stop flag and deadline, not loader__set_stop_flag's: the last report
 * drains with no stop flag; without either, 10 ms).  >= 0 or -errno; loader__events_pending() tells if it was cut.
 */
int loader__drain(struct loader *ld, const struct work_budget *b);
bool loader__events_pending(const struct loader *ld);
void loader__set_stop_flag(struct loader *ld, const volatile sig_atomic_t *stop);

/* Why OOM-killer victims cannot be seen (the tracepoint was refused), one line; NULL: fine. */
const char *loader__oom_problem(const struct loader *ld);

/*
 * `leaktop lastref` (bpf/watch.bpf.c, bpf/watch.h).  watch_begin follows process tgid: its
 * watch events go to fn from loader__poll on.  watch_prog_fd is the program to attach to
 * each breakpoint perf event; watch_slot arms (slot) or forgets (NULL) what a hit at addr
 * means; watch_free reports (on) or stops reporting the free of the block at addr.  0 or
 * -errno.
 */
struct lt_watch_event;
struct lt_watch_slot;
typedef void (*loader_watch_fn)(void *ctx, const struct lt_watch_event *ev);
int loader__watch_begin(struct loader *ld, int tgid, loader_watch_fn fn, void *ctx);
int loader__watch_prog_fd(const struct loader *ld);
/* Watch events lost so far (the watch ring buffer was full). */
uint64_t loader__watch_lost(const struct loader *ld);
int loader__watch_slot(struct loader *ld, uint64_t addr, const struct lt_watch_slot *slot);
int loader__watch_free(struct loader *ld, uint64_t addr, bool on);

/*
 * Is thread tid inside a traced allocator call?  0 with where its return address was pushed
 * (*entry_sp) and what it was (*entry_ra): the uretprobe replaced it there with the kernel's
 * trampoline, which a walk of the stopped thread cannot follow.  -ENOENT: not in a call;
 * -errno.  (The heap programs' per-thread state, looked up by a thread pidfd.)
 */
int loader__thread_call(const struct loader *ld, int tid, uint64_t *entry_sp, uint64_t *entry_ra);

const struct lt_map_fds *loader__maps(const struct loader *ld);
unsigned int loader__stack_depth(const struct loader *ld);

#endif
