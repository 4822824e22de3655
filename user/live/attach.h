/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * attach.h - the attach policy: which allocator objects get heap probes, per mode and over
 * time.  Whole system: every distinct allocator, no pid filter, rescanned now and then.
 * -p: pid-filtered probes on each process's own allocators (followed again when the thread
 * they were attached with exits).  --: the command's, for it and what it forks, before it
 * runs; later ones as its programs map them.  Under -p and --, a process held at exec goes
 * on once the probes its new program needs are in.
 */
#ifndef LEAKTOP_ATTACH_H
#define LEAKTOP_ATTACH_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct attach;
struct allocs;
struct loader;
struct tracker;
struct unwind_store;
struct model;
struct lt_event;

enum attach_mode {
	ATTACH_SYSTEM,			/* every process */
	ATTACH_PIDS,			/* -p PID... */
	ATTACH_COMMAND,			/* -- CMD: a child held before exec */
};

struct attach_config {
	enum attach_mode mode;
	bool heap;			/* heap probes wanted at all (-r heap, not --agent) */
	bool verbose;
	const int *pids;		/* ATTACH_PIDS */
	size_t n_pids;
	int child_pid;			/* ATTACH_COMMAND: held before exec */
	bool exit_stop;			/* ... `leaktop check`: hold its processes at _exit */
	const char *cmd_name;		/* ... as the user gave it (messages) */
	const char *cmd_path;		/* ... found in PATH, or NULL */
	/* ATTACH_COMMAND: lets the child exec once its probes are in; 0 or -errno. */
	int (*release_child)(void *ctx);
	void *release_ctx;
	/* A stop signal came: a rescan ends early, an exec stop attaches nothing. */
	const volatile sig_atomic_t *stop;
};

/* uw may be NULL (--unwind fp).  0 or -ENOMEM. */
int attach__new(struct attach **out, struct loader *ld, struct allocs *al,
		struct unwind_store *uw, struct tracker *tr, const struct attach_config *cfg);
void attach__free(struct attach *at);

/* The first attach for the mode, said on stderr when it fails: 0 or -errno. */
int attach__start(struct attach *at);
/*
 * Whole-system mode: the allocators of every process not probed yet (quiet: a rescan, a
 * few new objects at a time, failures only said with -v).  0 or -errno.
 */
int attach__system(struct attach *at, bool quiet);
/* A traced process held at exec (LT_EXEC_STOPPED): its probes, then it goes on. */
void attach__on_exec_stop(struct attach *at, const struct lt_event *ev);
/*
 * After an interval's report (m the model it showed): -- follows new allocators of its
 * processes; -p attaches again for processes whose probing thread exited.
 */
void attach__follow(struct attach *at, const struct model *m);
/* -v at the end: processes held at exec, and how long. */
void attach__say_exec_stops(const struct attach *at);

#endif
