/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * tracefs.h - uprobe events defined through tracefs (uprobe_events) and opened as perf
 * events on one process and, inherited, on every process it forks from then on: how `--`
 * keeps its allocator probes on CMD and its descendants only.  And the kernel's own events
 * (syscalls:sys_enter_openat...) opened for a BPF program.
 */
#ifndef LEAKTOP_TRACEFS_H
#define LEAKTOP_TRACEFS_H

#include <stdbool.h>
#include <stdint.h>

struct tracefs;

/*
 * A directory descriptor of tracefs's root, reached without changing the system's mounts:
 * a detached mount of its own (fsopen, fsmount: no path leads to it, and it goes away with
 * the descriptor), else an already mounted /sys/kernel/tracing or /sys/kernel/debug/tracing.
 * -errno (the detached mount's) when neither can be had.
 */
int tracefs__root(void);

/* The id of the event group/name (events/GROUP/NAME/id) under the tracefs root `root`. */
int tracefs__event_id(int root, const char *group, const char *name, int *id);

/*
 * Open the event `id` (a tracepoint) as a perf event of every process, to attach a BPF
 * program to: the kernel runs it for the event on every CPU.  A descriptor or -errno.
 */
int tracefs__open_system_event(int id);

/*
 * Reach tracefs without changing the system's mounts: a detached mount of its own (fsopen,
 * fsmount), else an already mounted /sys/kernel/tracing or /sys/kernel/debug/tracing.
 * The definitions of this run go in the group "leaktop_<our pid>".  0 or -errno.
 */
int tracefs__open(struct tracefs **out);
/*
 * Remove every definition this run made (its group), then let go of tracefs.  Call it after
 * closing the perf events on them: the kernel keeps a definition that one still uses.
 */
void tracefs__close(struct tracefs *t);

/*
 * Remove the groups "leaktop_<pid>" whose pid no longer runs: definitions a leaktop that
 * was killed left behind.  With no perf event open on them they are inert (no breakpoint
 * anywhere), but they are not ours to keep.  Returns how many groups were removed.
 */
int tracefs__remove_stale(struct tracefs *t);

/*
 * Define the uprobe (or uretprobe) event NAME of this run's group at offset of path (a
 * path the kernel resolves while leaktop writes, /proc/self/fd/N works) and return its event
 * id in *id.  0 or -errno.
 */
int tracefs__define(struct tracefs *t, const char *name, bool ret_probe, const char *path,
		    uint64_t offset, int *id);

/*
 * Open the event `id` as a disabled perf event on pid and, with inherit, on every task it
 * creates from now on (threads, children, their children).  A descriptor or -errno.
 * Inherited events keep every process's context its own (see tracefs.c); where the kernel
 * cannot (before Linux 6.12) the event is opened all the same and *swappable (if not NULL)
 * is set: a descendant may then lose its breakpoints when a child of its exits.
 */
int tracefs__open_event(int id, int pid, bool inherit, bool *swappable);

#endif
