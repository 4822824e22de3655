/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * tracker.h - the producer that follows processes: lifecycle events from the ring buffer,
 * each image's maps handed to the symbolizer while the image still exists, who each image is
 * and its counters from /proc, and the frames of stacks new to an image.  It keeps its own
 * table of images (never reads the model) and hands what it learnt to each sample.
 */
#ifndef LEAKTOP_TRACKER_H
#define LEAKTOP_TRACKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/leaktop.h"
#include "core/sample.h"
#include "util/budget.h"

struct collector;
struct symbolizer;

struct tracker_config {
	bool fork_targets;		/* -- mode: children of a target are targets */
	bool refresh_young;		/* re-read young images' maps (not in whole-system mode) */
	bool fork_borrows;		/* a forked child starts with its parent's maps and name,
					 * nothing read from /proc (whole-system mode: a build forks
					 * hundreds of processes a second) */
	struct allocs *allocs;		/* which allocator each image binds (NULL: not asked) */
};

struct tracker;
struct allocs;

int tracker__new(struct tracker **out, struct symbolizer *sym, const struct tracker_config *cfg);
void tracker__free(struct tracker *t);

/*
 * A lifecycle event: the new image's maps and name are read now, while it exists (or
 * borrowed from its parent, or from what the exec event carried), and the event is queued
 * for the next sample.  With fork_borrows, a forked child takes its parent's at once.
 */
void tracker__on_event(struct tracker *t, const struct lt_event *ev);
/*
 * OOM victims among the events queued for the next sample (an LT_EV_OOM each): up to max
 * into out; returns how many there are.
 */
size_t tracker__queued_oom(const struct tracker *t, struct dead_image *out, size_t max);
/* --stop-at: the allocation it stopped a process at (LT_EV_STOP_AT; fired: it came). */
const struct stop_record *tracker__stop(const struct tracker *t);
/* Image (pid, gen) is traced by name (-p, --): read it now, queue its first sighting. */
int tracker__add_target(struct tracker *t, uint32_t pid, uint64_t gen);
/* Between samples: re-read the maps of young images still loading their libraries. */
void tracker__refresh_young(struct tracker *t);
/*
 * Between samples: move on the questions about modules without symbols (which package owns
 * them), without blocking; their answers go to the next sample.
 */
void tracker__step_packages(struct tracker *t);

/*
 * This interval's part of s (after the collector's): the queued events; --stop-at's record
 * (s->stop); images first seen in s->sites; a reading of every image (identity; for live
 * ones counters too), sorted; frames of stacks new to their image.  Within budget b (NULL: none): /proc reads past it
 * wait for the next sample (round robin, procs_deferred) and so do new stacks
 * (stacks_pending).  Live images read are reconciled with /proc: one shown ended at two
 * readings in a row, while no event said so, gets the lost EXIT event (reconciled_*).
 * Modules the frames were resolved in that have no symbols go to s->missing once the
 * package manager answered which package owns them (asked in the background; with b->last
 * the answers still open are waited for until b's deadline).
 * Sets timing.track_ms.
 * 0 or -ENOMEM.
 */
int tracker__fill(struct tracker *t, struct collector *c, struct sample *s,
		  const struct work_budget *b);

/*
 * Lifecycle events are still waiting in the ring buffer (the last poll was cut short): the
 * next tracker__fill() then does not take an image /proc shows ended for one whose exit
 * event was lost.
 */
void tracker__set_backlog(struct tracker *t, bool backlog);

/* Images the model reaped: forget them. */
void tracker__forget(struct tracker *t, const struct dead_image *dead, size_t n);
/*
 * The heap records of pid's images (-1: every image's) were dropped while they live: the
 * frames of their stacks go to the model again when sites show them (it dropped the sites).
 */
void tracker__resend_frames(struct tracker *t, int pid);

#endif
