/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * collector.h - the BPF maps' part of each interval's sample (the only reader of the maps, with
 * the loader), plus the upkeep of those maps: dead images' sites, live-block records,
 * descriptors /proc showed closed and unreferenced stacks are removed here.
 */
#ifndef LEAKTOP_COLLECTOR_H
#define LEAKTOP_COLLECTOR_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/leaktop.h"
#include "core/sample.h"
#include "core/types.h"
#include "live/loader.h"

struct collector;

int collector__new(struct collector **out, const struct lt_map_fds *fds, unsigned int depth);
void collector__free(struct collector *c);

/*
 * Fill s's map records (sites, fds), drops, counters, time and timing.read_ms; the rest of
 * s is the other producers'.  0 or -errno.
 */
int collector__read(struct collector *c, struct sample *s);

/* One live block record of the `allocs` map. */
struct raw_alloc {
	struct lt_alloc_key key;
	struct lt_alloc_val val;
};

/*
 * The live blocks of image (tgid, gen) (any image of tgid when gen is 0): one batched read
 * of `allocs`, kept records malloc'd in *out (free()).  0 or -errno.
 */
int collector__read_allocs(struct collector *c, uint32_t tgid, uint64_t gen,
			   struct raw_alloc **out, size_t *n);

/*
 * Frames of a stack (innermost first), and with files (may be NULL) the file each one lies
 * in, as BPF found it when the stack was stored (ino 0: unknown).  Returns the count, 0 if
 * unknown.
 */
uint32_t collector__stack(struct collector *c, uint64_t hash, uint64_t *ips,
			  struct lt_frame_file *files, uint32_t max);
/*
 * Store a stack the in-process agent recorded (live/agent_channel.c) under its hash, as the
 * BPF walk stores one (frames cut to the run's depth; files may be NULL: unknown).  A
 * stack already there stays.  0 or -errno.
 */
int collector__put_stack(struct collector *c, uint64_t hash, const uint64_t *ips,
			 const struct lt_frame_file *files, uint32_t nr);
/* The image generation the kernel's procs map holds for tgid, and since when it is traced
 * (CLOCK_MONOTONIC: fork, exec or seeding).  0 or -errno (-ENOENT). */
int collector__proc_gen(struct collector *c, uint32_t tgid, uint64_t *gen, uint64_t *start_ns);

/*
 * The name BPF noted for the file (dev: kernel dev_t, as struct lt_frame_file has it) into
 * buf (NUL-terminated; the file's process chose it: check what it leads to).  0 or -ENOENT.
 */
int collector__file_path(struct collector *c, uint32_t dev, uint64_t ino, char *buf,
			 size_t len);

/*
 * Python frames (bpf/python.bpf.c): walk the Python frames of tgid's image py->gen, laid out
 * as *py says (live/pyproc.c); 0 or -errno.  collector__py_code: what BPF copied of code
 * object `code` of tgid; 0 or -ENOENT.
 */
int collector__py_register(struct collector *c, uint32_t tgid, const struct lt_py_proc *py);
int collector__py_code(struct collector *c, uint32_t tgid, uint64_t code, struct lt_py_code *out);

/*
 * Forget dead images' sites (a batched sweep of `sites`), and the stacks no other site uses
 * (the sites map as it is after the sweep, and sites made meanwhile, keep theirs).  Records
 * removed or -errno.
 */
long collector__purge_sites(struct collector *c, const struct dead_image *dead, size_t n);
/* Forget dead images' live blocks (a batched sweep of `allocs`).  Records removed or -errno. */
/* One of the kernel's counters (LT_CNT_*) now, summed over the CPUs; 0 or -errno. */
int collector__counter(struct collector *c, uint32_t idx, uint64_t *out);

/*
 * Heap records (heap sites, live blocks) of processes whose heap is no longer traced: of the
 * tgids listed (keep false), or of every other process (keep true).  Sites removed or -errno.
 */
long collector__purge_heap(struct collector *c, const uint32_t *tgids, size_t n, bool keep);
long collector__purge_allocs(struct collector *c, const struct dead_image *dead, size_t n);
/* Forget dead images' descriptors (a batched sweep of `fds`).  Records removed or -errno. */
long collector__purge_fds(struct collector *c, const struct dead_image *dead, size_t n);
/* The same for the mapping records (mmaps map). */
long collector__purge_mmaps(struct collector *c, const struct dead_image *dead, size_t n);

/*
 * Delete the record `seen` (from this interval's sample) of a descriptor /proc showed closed
 * without a close leaktop saw, if the map still holds that very record.  0 if this call
 * deleted it, -errno otherwise (-ENOENT: a racing close did; -ESTALE: the number was
 * opened again since, and the record is the new descriptor's).
 */
int collector__forget_fd(struct collector *c, const struct sample_fd *seen);

/* Delete stacks referenced by no site in `s` for two sweeps in a row.  Count or -errno. */
long collector__gc_stacks(struct collector *c, const struct sample *s);


#endif
