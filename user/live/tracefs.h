/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * tracefs.h - uprobe events defined through tracefs (uprobe_events) and opened as perf
 * events on one process and, inherited, on every process it forks from then on: how `--`
 * keeps its allocator probes on CMD and its descendants only.
 */
#ifndef LEAKTOP_TRACEFS_H
#define LEAKTOP_TRACEFS_H

#include <stdbool.h>
#include <stdint.h>

struct tracefs;

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
 */
int tracefs__open_event(int id, int pid, bool inherit);

#endif
