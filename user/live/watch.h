/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * watch.h - `leaktop lastref`'s engine: follow up to K new blocks of one process's chosen
 * allocation sites, find the words that point into them (a bounded ptrace stop, as the
 * reachability scan does), watch those words with hardware breakpoints (perf events, 4 debug
 * registers per thread, rotated when there are more words), follow what the BPF program
 * (bpf/watch.bpf.c) reports, and say when each block's last reference went.  The bookkeeping
 * is core/lastref.c; this file does the stops, the reads and the perf events.
 */
#ifndef LEAKTOP_WATCH_H_USER
#define LEAKTOP_WATCH_H_USER

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/lastref.h"

struct loader;
struct collector;
struct watcher;

#define WATCH_MAX_BLOCKS	16	/* --blocks at most */
#define WATCH_DEBUG_REGS	4	/* x86-64: DR0-DR3 per thread */

struct watch_config {
	int pid;
	uint64_t gen;			/* the traced image */
	unsigned int max_blocks;	/* K */
	unsigned int max_stop_ms;	/* longest one scan keeps the process stopped */
	bool verbose;
};

/* A line to say (on stderr, or the TUI's message line). */
typedef void (*watch_say_fn)(void *ctx, const char *line);
/* Block b got its verdict (b->state is LR_DONE). */
typedef void (*watch_done_fn)(void *ctx, const struct lr_block *b);

/*
 * Start following (loader__watch_begin).  0 or -errno with one line in msg.  Nothing is armed
 * until blocks come.
 */
int watcher__new(struct watcher **out, struct loader *ld, struct collector *col,
		 const struct watch_config *cfg, watch_say_fn say, watch_done_fn done, void *ctx,
		 char *msg, size_t msg_len);
/* The sites (stack hashes) whose new blocks are followed (replaces the earlier set). */
int watcher__set_sites(struct watcher *w, const uint64_t *hashes, size_t n);
/*
 * One turn: handle the events loader__poll queued, scan for blocks whose last reference
 * went, take new blocks, rotate the watchpoints.  Returns 1 when K blocks have their
 * verdict, 0 to go on, -errno on a failure that ends the run (msg: one line).
 */
int watcher__step(struct watcher *w, uint64_t now_ns, char *msg, size_t msg_len);
/* End: every block left gets LR_UNRESOLVED (reported), every watchpoint is removed. */
void watcher__finish(struct watcher *w);
void watcher__free(struct watcher *w);
/*
 * Do hardware watchpoints fire here?  A write breakpoint on a variable of leaktop's own
 * thread, written, must count: 1 yes, 0 no (why: the cause, in one phrase).  watcher__new
 * runs it once; without them the watcher arms nothing and checks references by scans.
 */
int watcher__selftest(char *why, size_t why_len);
/* The self-test's answer for this watcher. */
bool watcher__hw_fires(const struct watcher *w);
/* Blocks followed so far (resolved or not). */
size_t watcher__blocks(const struct watcher *w, const struct lr_block **out);
/* Name of register index reg of struct user_regs_struct ("rax"...). */
const char *watcher__reg_name(uint32_t reg);

#endif
