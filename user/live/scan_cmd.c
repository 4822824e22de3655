// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * scan_cmd.c - the reachability scan of traced processes, and `leaktop scan -p PID`.
 *
 * A scan stops the process (ptrace_stop.c), reads the tracked live blocks from the BPF
 * `allocs` map while it is stopped (so none is freed or reused under the scan), copies its
 * registers and every readable and writable mapping (thread stacks from the stack pointer
 * up), resumes it, and classifies the blocks (scan.c).  The stop is bounded: past
 * SCAN_MAX_STOP_MS the scan gives up and the process runs on.  The latest result of each
 * image is kept here and shown in the snapshot (processes[].scan, .leak_graph,
 * .sites[].lost) and the text report.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/options.h"
#include "live/procmaps.h"
#include "live/ptrace_stop.h"
#include "cli/run.h"
#include "live/scan_cmd.h"

#define STACK_RED_ZONE	128		/* x86-64 ABI: below the stack pointer, still live */

/* ---------------------------------------------------------------- one scan */

/* Mappings whose contents are not the process's memory or must not be read. */
static bool skip_mapping(const struct proc_map *pm)
{
	if (!pm->readable || !pm->writable || !pm->path)
		return !pm->readable || !pm->writable;
	if (!strcmp(pm->path, "[vvar]") || !strcmp(pm->path, "[vvar_vclock]") ||
	    !strcmp(pm->path, "[vsyscall]"))
		return true;
	return !strncmp(pm->path, "/dev/", 5) && strcmp(pm->path, "/dev/zero") &&
	       strncmp(pm->path, "/dev/shm/", 9);
}

struct copy {
	struct scan_region *regions;
	size_t n;
	uint64_t *words;		/* registers of every thread */
	size_t n_words;
	uint64_t bytes;
};

static void copy_free(struct copy *c)
{
	for (size_t i = 0; i < c->n; i++)
		free((void *)c->regions[i].data);
	free(c->regions);
	free(c->words);
	memset(c, 0, sizeof(*c));
}

/* Registers and writable memory of the stopped process.  0 or -errno. */
static int copy_process(const struct ptrace_stop *ps, const struct proc_maps *maps,
			struct copy *c, char *msg, size_t msg_len)
{
	const size_t per_thread = sizeof(struct user_regs_struct) / sizeof(uint64_t);
	uint64_t total = 0;

	c->regions = calloc(maps->n + 1, sizeof(*c->regions));
	c->words = calloc(ps->n * per_thread + 1, sizeof(*c->words));
	if (!c->regions || !c->words)
		return -ENOMEM;
	for (size_t t = 0; t < ps->n; t++) {
		memcpy(c->words + c->n_words, &ps->threads[t].regs, per_thread * sizeof(uint64_t));
		c->n_words += per_thread;
	}
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < maps->n; i++) {
			const struct proc_map *pm = &maps->v[i];
			uint64_t lo = pm->start;
			void *buf;
			int err;

			if (skip_mapping(pm))
				continue;
			/* A thread stack: what lies below the stack pointer is dead. */
			for (size_t t = 0; t < ps->n; t++) {
				uint64_t sp = ps->threads[t].regs.rsp;

				if (sp >= pm->start && sp < pm->end &&
				    (sp - STACK_RED_ZONE) > lo && sp >= pm->start + STACK_RED_ZONE)
					lo = (sp - STACK_RED_ZONE) & ~7ull;
			}
			if (!pass) {
				total += pm->end - lo;
				continue;
			}
			if (ptrace_stop__overdue(ps)) {
				snprintf(msg, msg_len, "copying the memory of process %d took longer "
					 "than %d ms", ps->pid, SCAN_MAX_STOP_MS);
				return -ETIME;
			}
			buf = malloc(pm->end - lo);
			if (!buf)
				return -ENOMEM;
			c->regions[c->n++] = (struct scan_region){ lo, buf, pm->end - lo };
			err = ptrace_stop__read(ps, lo, buf, pm->end - lo);
			if (err)
				return err;
			c->bytes += pm->end - lo;
		}
		if (!pass && total > SCAN_MAX_BYTES) {
			snprintf(msg, msg_len, "process %d has %" PRIu64 " MiB of writable memory, "
				 "more than the scan copies (%llu MiB)", ps->pid, total >> 20,
				 SCAN_MAX_BYTES >> 20);
			return -E2BIG;
		}
	}
	return 0;
}

int scan__process_live(int pid, scan_fetch_fn fetch, void *ctx, struct scan_result *out,
		       char *msg, size_t msg_len)
{
	struct ptrace_stop ps;
	struct proc_maps maps = {};
	struct scan_block *blocks = NULL;
	struct copy c = {};
	size_t n = 0;
	uint32_t threads;
	double stop_ms;
	int err;

	memset(out, 0, sizeof(*out));
	msg[0] = '\0';
	err = ptrace_stop__begin(&ps, pid, SCAN_MAX_STOP_MS, msg, msg_len);
	if (err)
		return err;
	threads = ps.n;
	err = procmaps__read(pid, &maps);
	if (!err)
		err = fetch(ctx, &blocks, &n);
	if (!err)
		err = copy_process(&ps, &maps, &c, msg, msg_len);
	/* Resume before the marking: it needs only the copies. */
	stop_ms = ptrace_stop__end(&ps);
	if (!err)
		err = scan__classify(blocks, n, c.regions, c.n, c.words, c.n_words, out);
	if (!err) {
		out->stop_ms = stop_ms;
		out->threads = threads;
		out->bytes_read = c.bytes;
	} else if (!msg[0]) {
		snprintf(msg, msg_len, "scan of process %d failed: %s", pid, strerror(-err));
	}
	copy_free(&c);
	procmaps__free(&maps);
	free(blocks);
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
	memcpy(*blocks, f->v, f->n * sizeof(**blocks));
	*n = f->n;
	return 0;
}

int scan__process(int pid, const struct scan_block *blocks, size_t n, struct scan_result *out,
		  char *msg, size_t msg_len)
{
	struct fixed_blocks f = { blocks, n };

	return scan__process_live(pid, fetch_fixed, &f, out, msg, msg_len);
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
					    raw[i].val.stack_hash };
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
	default:
		return "the process was resumed untouched";
	}
}

int scan_cmd__scan_one(struct collector *c, struct model *m, uint32_t pid, char *msg,
		       size_t len)
{
	const struct process *p = model__find_pid(m, pid);
	struct fetch_ctx f;
	struct scan_result r;
	char why[256];
	int err;

	if (!p) {
		snprintf(msg, len, "process %u is not traced any more", pid);
		return -ESRCH;
	}
	f = (struct fetch_ctx){ c, p->pid, p->gen };
	err = scan__process_live(p->pid, fetch_allocs, &f, &r, why, sizeof(why));
	if (err) {
		snprintf(msg, len, "cannot scan process %u: %s; %s", pid, why, fix_for(err));
		return err;
	}
	snprintf(msg, len, "scan of %u: %llu definitely lost (%llu B), %llu indirectly, %llu "
		 "possibly; stopped %.1f ms", pid,
		 (unsigned long long)r.count[SCAN_DEFINITE],
		 (unsigned long long)r.bytes[SCAN_DEFINITE],
		 (unsigned long long)r.count[SCAN_INDIRECT],
		 (unsigned long long)r.count[SCAN_POSSIBLE], r.stop_ms);
	err = model__set_scan(m, p->pid, p->gen, &r, NULL);
	scan_result__free(&r);
	return err;
}

int scan_cmd__scan_targets(struct collector *c, struct model *m)
{
	int scanned = 0;

	for (size_t i = 0; i < m->n_procs; i++) {
		const struct process *p = &m->procs[i];
		struct fetch_ctx f = { c, p->pid, p->gen };
		struct scan_result r;
		char msg[256];
		int err;

		if (!p->target || p->exited)
			continue;
		err = scan__process_live(p->pid, fetch_allocs, &f, &r, msg, sizeof(msg));
		if (err) {
			char line[SCAN_ERROR_LEN];

			snprintf(line, sizeof(line), "cannot scan process %u: %s; %s", p->pid, msg,
				 fix_for(err));
			/* Once per cause, not every interval. */
			if (!p->scan || strcmp(line, p->scan->error))
				fprintf(stderr, "leaktop: %s\n", line);
			if (model__set_scan(m, p->pid, p->gen, NULL, line))
				return -ENOMEM;
			continue;
		}
		err = model__set_scan(m, p->pid, p->gen, &r, NULL);
		scan_result__free(&r);
		if (err)
			return err;
		scanned++;
	}
	return scanned;
}

/* ---------------------------------------------------------------- leaktop scan */

static const char usage[] =
	"usage: leaktop scan -p PID [-i SEC] [-d SEC] [-j FILE]\n"
	"Trace PID like `leaktop -p PID` and, every interval, stop it briefly to find the\n"
	"blocks allocated while traced that no pointer reaches any more.\n"
	"  -p PID    process to scan\n"
	"  -i SEC    seconds between scans (default 1)\n"
	"  -d SEC    stop after SEC seconds (default: until Ctrl-C or the process exits)\n"
	"  -j FILE   write the JSON snapshot to FILE ('-': JSON Lines on stdout)\n";

int scan_cmd__main(int argc, char **argv)
{
	const char *pid = NULL, *every = "1", *dur = NULL, *json = NULL;
	char *args[16], err[512];
	struct options o;
	int n = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage, stdout);
			return 0;
		}
		if (strcmp(a, "-p") && strcmp(a, "-i") && strcmp(a, "-d") && strcmp(a, "-j")) {
			fprintf(stderr, "leaktop: unknown scan argument '%s'; see leaktop scan "
				"--help\n", a);
			return 2;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "leaktop: option '%s' needs a value; see leaktop scan "
				"--help\n", a);
			return 2;
		}
		if (a[1] == 'p')
			pid = argv[++i];
		else if (a[1] == 'i')
			every = argv[++i];
		else if (a[1] == 'd')
			dur = argv[++i];
		else
			json = argv[++i];
	}
	if (!pid) {
		fprintf(stderr, "leaktop: scan needs a process; give -p PID\n");
		return 2;
	}
	args[n++] = "scan";
	args[n++] = "-b";
	args[n++] = "-p";
	args[n++] = (char *)pid;
	args[n++] = "-i";
	args[n++] = (char *)every;
	args[n++] = "--scan-every";
	args[n++] = (char *)every;
	if (dur) {
		args[n++] = "-d";
		args[n++] = (char *)dur;
	}
	if (json) {
		args[n++] = "-j";
		args[n++] = (char *)json;
	}
	args[n] = NULL;
	if (options__parse(n, args, &o, err, sizeof(err))) {
		fprintf(stderr, "leaktop: %s\n", err);
		return 2;
	}
	if (o.n_pids != 1) {
		fprintf(stderr, "leaktop: scan takes one process; give -p PID\n");
		return 2;
	}
	return run__main(&o);
}
