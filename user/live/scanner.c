// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * scanner.c - the reachability scan of traced processes: the producer of a sample's scans.
 *
 * Before the stop, /proc/PID/smaps (scanmaps.c) says whether memory is registered with
 * userfaultfd (the process is then not scanned) and which mappings were never touched (not
 * read).  A scan stops the process (ptrace_stop.c), reads the tracked live blocks from the BPF
 * `allocs` map while it is stopped (so none is freed or reused under the scan), copies its
 * registers (general-purpose and vector) and every readable and writable mapping (thread
 * stacks from the stack pointer up), resumes it, classifies the blocks (core/scan.c) and
 * measures the allocator's slack in the same copies (heapslack.c).
 * The stop is bounded: past its limit (SCAN_MAX_STOP_MS, or less with --scan-max-stop),
 * also in the middle of a mapping's copy, the scan gives up, says how far it got (a partial copy classifies nothing: memory
 * not read could hold the only pointer to a block) and the process runs on.  Results go into the sample
 * (a scan made on demand between samples waits for the next one); the model keeps the
 * latest of each image and the views render it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "util/clock.h"
#include "live/collector.h"
#include "live/heapslack.h"
#include "live/procmaps.h"
#include "live/mounts.h"
#include "live/ptrace_stop.h"
#include "live/rootname.h"
#include "live/scanmaps.h"
#include "live/scanner.h"

#define STACK_RED_ZONE	128		/* x86-64 ABI: below the stack pointer, still live */

/* ---------------------------------------------------------------- one scan */

struct copy {
	struct scan_region *regions;
	size_t n;
	uint64_t *words;		/* registers of every thread */
	size_t n_words;
	uint64_t bytes;			/* copied */
	uint64_t total;			/* to copy */
};

static void copy_free(struct copy *c)
{
	for (size_t i = 0; i < c->n; i++)
		munmap((void *)c->regions[i].data, c->regions[i].len);
	free(c->regions);
	free(c->words);
	memset(c, 0, sizeof(*c));
}

/* Registers and writable memory of the stopped process.  0 or -errno. */
static bool skipped_file(const struct scan_file *skip, size_t n, const struct proc_map *pm)
{
	for (size_t i = 0; i < n && pm->ino; i++)
		if (skip[i].dev == pm->dev && skip[i].ino == pm->ino)
			return true;
	return false;
}

static int copy_process(const struct ptrace_stop *ps, unsigned int max_ms,
			const struct proc_maps *maps, const struct scanmaps *touch,
			const struct scan_file *skip, size_t n_skip, struct copy *c,
			char *msg, size_t msg_len)
{
	const size_t per_thread = sizeof(struct user_regs_struct) / sizeof(uint64_t);
	const size_t vec_max = sizeof(ps->threads[0].vec) / sizeof(uint64_t);

	c->regions = calloc(maps->n + 1, sizeof(*c->regions));
	c->words = calloc(ps->n * (per_thread + vec_max) + 1, sizeof(*c->words));
	if (!c->regions || !c->words)
		return -ENOMEM;
	/* Roots: each thread's general-purpose registers, then its vector registers. */
	for (size_t t = 0; t < ps->n; t++) {
		memcpy(c->words + c->n_words, &ps->threads[t].regs, per_thread * sizeof(uint64_t));
		c->n_words += per_thread;
		memcpy(c->words + c->n_words, ps->threads[t].vec,
		       ps->threads[t].n_vec * sizeof(uint64_t));
		c->n_words += ps->threads[t].n_vec;
	}
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < maps->n; i++) {
			const struct proc_map *pm = &maps->v[i];
			uint64_t lo = pm->start;
			size_t copied = 0;
			void *buf;
			int err;

			/*
			 * Never touched (smaps before the stop): zeros, not read.  A file on FUSE
			 * or NFS: an untouched page would be read from the daemon.
			 */
			if (scanmaps__skip(pm) || skipped_file(skip, n_skip, pm) ||
			    scanmaps__untouched(touch, pm) || mounts__map_refused(ps->pid, pm))
				continue;
			/* A thread stack: what lies below the stack pointer is dead. */
			for (size_t t = 0; t < ps->n; t++) {
				uint64_t sp = ps->threads[t].regs.rsp;

				if (sp >= pm->start && sp < pm->end &&
				    (sp - STACK_RED_ZONE) > lo && sp >= pm->start + STACK_RED_ZONE)
					lo = (sp - STACK_RED_ZONE) & ~7ull;
			}
			if (!pass) {
				c->total += pm->end - lo;
				continue;
			}
			/* Mapped, not malloc'd: pages are only touched as they are copied. */
			buf = mmap(NULL, pm->end - lo, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
			if (buf == MAP_FAILED)
				return -ENOMEM;
			c->regions[c->n++] = (struct scan_region){ lo, buf, pm->end - lo };
			err = ptrace_stop__read(ps, lo, buf, pm->end - lo, &copied);
			c->bytes += copied;
			if (err == -ETIME) {
				/* The amounts go in scan.partial: the line is the same each time. */
				snprintf(msg, msg_len, "the scan reached its %u ms stop limit while "
					 "copying memory: partial, nothing classified", max_ms);
				return err;
			}
			if (err)
				return err;
		}
		if (!pass && c->total > SCAN_MAX_BYTES) {
			snprintf(msg, msg_len, "process %d has %" PRIu64 " MiB of writable memory, "
				 "more than the scan copies (%llu MiB)", ps->pid, c->total >> 20,
				 SCAN_MAX_BYTES >> 20);
			return -E2BIG;
		}
	}
	return 0;
}

int scan__process_live(int pid, unsigned int max_ms, scan_fetch_fn fetch, void *ctx,
		       struct scan_result *out, char *msg, size_t msg_len)
{
	return scan__process_live_skip(pid, max_ms, fetch, ctx, NULL, 0, out, msg, msg_len);
}

int scan__process_live_skip(int pid, unsigned int max_ms, scan_fetch_fn fetch, void *ctx,
			    const struct scan_file *skip, size_t n_skip, struct scan_result *out,
			    char *msg, size_t msg_len)
{
	struct ptrace_stop ps;
	struct proc_maps maps = {};
	struct scanmaps touch = {};
	struct scan_block *blocks = NULL;
	struct copy c = {};
	struct ptrace_thread *th = NULL;
	struct rootname_keys keys;
	size_t n = 0;
	uint32_t threads;
	double stop_ms;
	int err;

	memset(out, 0, sizeof(*out));
	msg[0] = '\0';
	if (!max_ms || max_ms > SCAN_MAX_STOP_MS)
		max_ms = SCAN_MAX_STOP_MS;
	/*
	 * smaps before the stop: its page-table walk is long on a big process.  A mapping
	 * registered with userfaultfd in between is a narrow race.
	 */
	err = scanmaps__prepare(pid, &touch, msg, msg_len);
	if (err)
		return err;
	err = ptrace_stop__begin(&ps, pid, max_ms, msg, msg_len);
	if (err) {
		scanmaps__free(&touch);
		return err;
	}
	threads = ps.n;
	/* The registers as copied, for naming retention roots after the resume. */
	th = malloc((ps.n + 1) * sizeof(*th));
	if (th && ps.n)
		memcpy(th, ps.threads, ps.n * sizeof(*th));
	err = th ? procmaps__read(pid, &maps) : -ENOMEM;
	if (!err)
		err = fetch(ctx, &blocks, &n);
	if (!err)
		err = copy_process(&ps, max_ms, &maps, &touch, skip, n_skip, &c, msg, msg_len);
	keys = (struct rootname_keys){ &maps, th, threads };
	/* Resume before the marking: it needs only the copies. */
	stop_ms = ptrace_stop__end(&ps);
	if (!err)
		err = scan__classify_keyed(blocks, n, c.regions, c.n, c.words, c.n_words,
					   rootname__key, &keys, out);
	if (!err)
		rootname__name(pid, &maps, c.regions, c.n, th, threads, out);
	/* The allocator's share of the heap, from the same copies. */
	if (!err)
		err = heapslack__measure(pid, &maps, &touch, c.regions, c.n, blocks, n,
					 &out->slack);
	if (!err) {
		out->stop_ms = stop_ms;
		out->threads = threads;
		out->bytes_read = c.bytes;
	} else if (err == -ETIME && c.total) {
		out->partial = (struct scan_partial){ true, stop_ms, c.bytes, c.total };
	}
	if (err && !msg[0])
		snprintf(msg, msg_len, "scan of process %d failed: %s", pid, strerror(-err));
	copy_free(&c);
	procmaps__free(&maps);
	scanmaps__free(&touch);
	free(blocks);
	free(th);
	return err;
}

struct fixed_blocks {
	const struct scan_block *v;
	size_t n;
};

static int fetch_fixed(void *ctx, struct scan_block **blocks, size_t *n)
{
	const struct fixed_blocks *f = ctx;

	*blocks = malloc((f->n + 1) * sizeof(**blocks));
	if (!*blocks)
		return -ENOMEM;
	if (f->n)
		memcpy(*blocks, f->v, f->n * sizeof(**blocks));
	*n = f->n;
	return 0;
}

int scan__process(int pid, unsigned int max_ms, const struct scan_block *blocks, size_t n,
		  struct scan_result *out, char *msg, size_t msg_len)
{
	struct fixed_blocks f = { blocks, n };

	return scan__process_live(pid, max_ms, fetch_fixed, &f, out, msg, msg_len);
}

/* ---------------------------------------------------------------- scans of traced images */

struct fetch_ctx {
	struct collector *c;
	uint32_t pid;
	uint64_t gen;
};

static int fetch_allocs(void *ctx, struct scan_block **blocks, size_t *n)
{
	const struct fetch_ctx *f = ctx;
	struct raw_alloc *raw = NULL;
	struct scan_block *b;
	size_t nr = 0;
	int err;

	err = collector__read_allocs(f->c, f->pid, f->gen, &raw, &nr);
	if (err)
		return err;
	b = malloc((nr + 1) * sizeof(*b));
	if (!b) {
		free(raw);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nr; i++)
		b[i] = (struct scan_block){ raw[i].key.addr, raw[i].val.size_bytes,
					    raw[i].val.stack_hash, raw[i].val.seq };
	free(raw);
	*blocks = b;
	*n = nr;
	return 0;
}

static const char *fix_for(int err)
{
	switch (err) {
	case -EBUSY:
		return "detach the debugger and run the scan again";
	case -EPERM:
		return "run leaktop as root, or lower kernel.yama.ptrace_scope";
	case -ETIME:
		return "the process was resumed untouched; scan it again when it is less busy";
	case -E2BIG:
		return "scan a smaller process";
	case -EOPNOTSUPP:
		return "the process was resumed untouched; it cannot be scanned";
	default:
		return "the process was resumed untouched";
	}
}

/* Last error reported for an image: the same cause is printed once, not every interval. */
struct scan_error {
	uint32_t pid;
	uint64_t gen;
	char line[512];
};

struct scanner {
	struct collector *col;
	unsigned int max_ms;		/* stop limit */
	struct sample_scan *pending;	/* scans made on demand since the last sample */
	size_t n_pending;
	struct scan_error *errors;
	size_t n_errors;
};

int scanner__new(struct scanner **out, struct collector *c, unsigned int max_ms)
{
	struct scanner *sc = calloc(1, sizeof(*sc));

	if (!sc)
		return -ENOMEM;
	sc->col = c;
	sc->max_ms = max_ms;
	*out = sc;
	return 0;
}

void scanner__free(struct scanner *sc)
{
	if (!sc)
		return;
	for (size_t i = 0; i < sc->n_pending; i++)
		scan_result__free(&sc->pending[i].result);
	free(sc->pending);
	free(sc->errors);
	free(sc);
}

/* Scan image (pid, gen) into out; on failure out->error gets the one line.  0 or -errno. */
static int scan_image(struct scanner *sc, uint32_t pid, uint64_t gen, struct sample_scan *out)
{
	struct fetch_ctx f = { sc->col, pid, gen };
	char why[256];
	int err;

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	out->gen = gen;
	err = scan__process_live(pid, sc->max_ms, fetch_allocs, &f, &out->result, why,
				 sizeof(why));
	if (err) {
		snprintf(out->error, sizeof(out->error), "cannot scan process %u: %s; %s", pid, why,
			 fix_for(err));
		return err;
	}
	out->ok = true;
	return 0;
}

int scanner__scan_now(struct scanner *sc, uint32_t pid, uint64_t gen, char *msg, size_t len)
{
	struct sample_scan r, *v;
	int err = scan_image(sc, pid, gen, &r);

	if (err) {
		snprintf(msg, len, "%s", r.error);
		return err;
	}
	snprintf(msg, len, "scan of %u: %llu definitely lost (%llu B), %llu indirectly, %llu "
		 "possibly; stopped %.1f ms", pid,
		 (unsigned long long)r.result.count[SCAN_DEFINITE],
		 (unsigned long long)r.result.bytes[SCAN_DEFINITE],
		 (unsigned long long)r.result.count[SCAN_INDIRECT],
		 (unsigned long long)r.result.count[SCAN_POSSIBLE], r.result.stop_ms);
	v = realloc(sc->pending, (sc->n_pending + 1) * sizeof(*v));
	if (!v) {
		scan_result__free(&r.result);
		return -ENOMEM;
	}
	sc->pending = v;
	sc->pending[sc->n_pending++] = r;
	return 0;
}

/* Print err's line unless it is the one last printed for this image. */
static void report_error(struct scanner *sc, const struct sample_scan *r)
{
	struct scan_error *e = NULL, *v;

	for (size_t i = 0; i < sc->n_errors && !e; i++)
		if (sc->errors[i].pid == r->pid && sc->errors[i].gen == r->gen)
			e = &sc->errors[i];
	if (e && !strcmp(e->line, r->error))
		return;
	fprintf(stderr, "leaktop: %s\n", r->error);
	if (!e) {
		v = realloc(sc->errors, (sc->n_errors + 1) * sizeof(*v));
		if (!v)
			return;
		sc->errors = v;
		e = &sc->errors[sc->n_errors++];
		e->pid = r->pid;
		e->gen = r->gen;
	}
	snprintf(e->line, sizeof(e->line), "%s", r->error);
}

/* Forget the errors of images the sample no longer shows alive. */
static void prune_errors(struct scanner *sc, const struct sample *s)
{
	size_t keep = 0;

	for (size_t i = 0; i < sc->n_errors; i++) {
		const struct sample_proc *p = sample__find_proc(s, sc->errors[i].pid,
								sc->errors[i].gen);

		if (p && p->alive)
			sc->errors[keep++] = sc->errors[i];
	}
	sc->n_errors = keep;
}

int scanner__fill(struct scanner *sc, struct sample *s, bool due)
{
	uint64_t t0 = monotonic_ns();
	int scanned = 0;

	for (size_t i = 0; i < sc->n_pending; i++) {
		struct sample_scan *r = sample__add_scan(s);

		if (!r) {
			scan_result__free(&sc->pending[i].result);
			continue;
		}
		*r = sc->pending[i];
	}
	sc->n_pending = 0;
	prune_errors(sc, s);
	for (size_t i = 0; due && i < s->n_procs; i++) {
		const struct sample_proc *p = &s->procs[i];
		struct sample_scan *r;

		if (!p->target || !p->alive)
			continue;
		r = sample__add_scan(s);
		if (!r)
			return -ENOMEM;
		if (scan_image(sc, p->pid, p->gen, r)) {
			report_error(sc, r);
			continue;
		}
		scanned++;
	}
	s->timing.scan_ms = (monotonic_ns() - t0) / 1e6;
	return scanned;
}
