/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * procfs.h - per-process counters and identity from /proc: the Linux cousins of
 * Performance Monitor's Working Set, Virtual Bytes, Handle Count and thread count.
 * The text parsers are separate from the readers so they can be unit-tested.
 */
#ifndef LEAKTOP_PROCFS_H
#define LEAKTOP_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/types.h"

int procfs__parse_statm(const char *text, long page_size, struct proc_counters *c);
int procfs__parse_status_threads(const char *text, uint32_t *threads);
/* RssAnon, RssFile and RssShmem of /proc/PID/status into c (rss_split_valid); -EINVAL if one
 * is missing (then c->rss_split_valid is false). */
int procfs__parse_status_rss(const char *text, struct proc_counters *c);
/* Field 22 of /proc/PID/stat (start time in clock ticks since boot), 0 on error. */
int procfs__parse_stat_starttime(const char *text, uint64_t *ticks);

bool procfs__exists(int pid);
int procfs__counters(int pid, struct proc_counters *c);
int procfs__comm(int pid, char *buf, size_t len);
/* Arguments joined by spaces. */
int procfs__cmdline(int pid, char *buf, size_t len);
/*
 * The value of environment variable `name` in /proc/PID/environ (what the process was
 * started with; its first 64 KiB), into buf.  0, -ENOENT (not set), or -errno.
 */
int procfs__environ_value(int pid, const char *name, char *buf, size_t len);
int procfs__start_ticks(int pid, uint64_t *ticks);
/*
 * The cgroup a process is in, from the text of /proc/PID/cgroup: the unified hierarchy's
 * path ("0::PATH") unless it is the root, else the memory controller's, else systemd's
 * (name=systemd), else "/".  0, or -EINVAL when the text has no cgroup line.
 */
int procfs__parse_cgroup(const char *text, char *path, size_t len);
/*
 * The container a cgroup path names, as container engines name their cgroups (docker,
 * containerd, CRI-O, podman, Kubernetes pods): a component of 64 hex digits, bare or as
 * "docker-ID.scope", "cri-containerd-ID.scope", "crio-ID.scope", "libpod-ID.scope"; its
 * first 12 digits in id (len >= 13).  0, or -ENOENT when the path names none.
 */
int procfs__container_id(const char *cgroup_path, char *id, size_t len);
/* procfs__parse_cgroup of /proc/PID/cgroup. */
int procfs__cgroup(int pid, char *path, size_t len);
/* Field 4 of /proc/PID/stat (the parent process). */
int procfs__parse_stat_ppid(const char *text, int *ppid);
int procfs__ppid(int pid, int *ppid);
/* The process (thread group) a task id belongs to. */
int procfs__tgid(int tid, int *tgid);
/* Its owner: the real uid (/proc/PID/status Uid, whatever it made of its dumpable flag). */
int procfs__uid(int pid, uint32_t *uid);
/* A live thread of pid: prefer if it still runs, else any other; or -ESRCH/-errno. */
int procfs__live_thread(int pid, int prefer);
/* All numeric entries of /proc; *pids is malloc'd. */
int procfs__list_pids(int **pids, size_t *n);
/* Read a whole small /proc file into buf (NUL-terminated).  Bytes read or -errno. */
long procfs__read_file(const char *path, char *buf, size_t len);
/* The machine's busy CPU time (all CPUs, every state but idle and iowait) from /proc/stat's
 * first line, in clock ticks; 0 or -EINVAL. */
int procfs__parse_cpu_busy_ticks(const char *stat, uint64_t *busy_ticks);
/* The same, read now, in ns.  0 or -errno. */
int procfs__cpu_busy_ns(uint64_t *busy_ns);

#endif
