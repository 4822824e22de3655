/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * heapctl.h - whole-system heap tracing under an overhead budget: measures what the heap
 * probes cost, lets core/heapmode.c decide, and carries the decisions out (the loader
 * attaches and detaches, the collector forgets the heap records of processes no longer
 * traced).
 */
#ifndef LEAKTOP_HEAPCTL_H
#define LEAKTOP_HEAPCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/heapmode.h"

struct heapctl;
struct allocs;
struct loader;
struct collector;
struct tracker;
struct model;
struct sample_heap;
struct attach;

struct heapctl_config {
	double budget_pct;
	uint32_t max_suspects;
	bool exact;
	double interval_s;
	int self_tgid;
	bool verbose;
	struct allocs *allocs;		/* which allocators a suspect uses */
	struct attach *attach;		/* the system-wide probes, when exact again */
};

/* Calibrates the trap cost (about 0.1 s) and starts counting the programs' run time. */
int heapctl__new(struct heapctl **out, struct loader *ld, struct collector *col,
		 struct tracker *tr, const struct heapctl_config *cfg, uint64_t now_ns, char *msg,
		 size_t msg_len);
void heapctl__free(struct heapctl *hc);

/*
 * After an interval's analysis: measure the cost, decide, and carry the decision out (attach
 * and detach; back to exact: the system-wide probes go in again through the attach policy,
 * then the per-process ones come off, no call missed nor seen twice in between).  Lines
 * worth telling the user (switches, suspects taken and released) go to say(ctx, line).
 */
void heapctl__step(struct heapctl *hc, const struct model *m, uint64_t now_ns,
		   void (*say)(void *ctx, const char *line), void *say_ctx);

/*
 * Exact mode, between intervals (called often; acts every HEAPMODE_WINDOW_S): a cost far over
 * the budget switches to suspects only now, not at the interval's end.  The suspects
 * themselves are chosen at the next heapctl__step().
 */
void heapctl__window(struct heapctl *hc, uint64_t now_ns, void (*say)(void *ctx, const char *line),
		     void *say_ctx);

/* The user's trace/untrace of pid's heap (the TUI key); one line saying what happened. */
void heapctl__toggle(struct heapctl *hc, const struct model *m, uint32_t pid, uint64_t now_ns,
		     char *msg, size_t msg_len);

/* What the model is told of it (the traced list is borrowed until the next call). */
void heapctl__describe(struct heapctl *hc, struct sample_heap *out);

bool heapctl__exact(const struct heapctl *hc);

#endif
