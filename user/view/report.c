// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * report.c - renders the model as the readable text report of batch mode: a header (elapsed,
 * processes, probes, events, dropped), then per process its /proc counters, its heap totals
 * and its top call sites by outstanding bytes with their symbolized stacks.  Unknown symbols
 * and lines are printed as such, never invented; the modules that left them unknown are
 * named once each, with the package that would name them.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "view/format.h"
#include "view/report.h"

/* lastref's verdicts on the process's blocks (the TUI's L, `leaktop lastref`), one line each. */
static void write_lastrefs(FILE *out, const struct process *p)
{
	char line[1024];

	for (size_t i = 0; i < p->n_lastref; i++) {
		fputs("  lastref: ", out);
		fmt__str(out, fmt__lastref_line(line, sizeof(line), &p->lastref[i]), "");
		fputc('\n', out);
	}
	if (p->lastref_dropped)
		fprintf(out, "  lastref: %" PRIu32 " more verdicts not kept\n", p->lastref_dropped);
}

static void write_process(FILE *out, const struct model *m, const struct process *p,
			  const struct report_opts *o)
{
	char b1[FMT_NUM_LEN], b2[FMT_NUM_LEN], b3[FMT_NUM_LEN], cost[48];
	struct site **sites;
	unsigned int shown = 0;

	fprintf(out, "\nPID %u ", p->pid);
	fmt__str(out, p->comm, "?");
	fputs(p->exited ? " (exited)" : "", out);
	fmt__flag_names(out, p->flags);
	if (p->cmdline && *p->cmdline) {
		fputs("  [", out);
		fmt__str(out, p->cmdline, "");
		fputc(']', out);
	}
	fputc('\n', out);
	if (p->counters.valid)
		fprintf(out, "  rss %s  vm %s  fds %u  threads %u\n",
			fmt__bytes(b1, sizeof(b1), p->counters.rss_bytes),
			fmt__bytes(b2, sizeof(b2), p->counters.vm_bytes), p->counters.fd_count,
			p->counters.threads);
	if (m->heap_budgeted && p->heap_mode == PROC_HEAP_WATCH)
		fputs("  heap: watched, not traced (suspects only: see the header)\n", out);
	else
		fprintf(out, "  heap: %s outstanding in %" PRId64 " blocks (allocs %" PRIu64
			", frees %" PRIu64 ")\n",
			fmt__bytes(b3, sizeof(b3), p->heap_outstanding_bytes),
			p->heap_outstanding_count, p->heap_allocs, p->heap_frees);
	if (m->heap_budgeted && p->heap_mode == PROC_HEAP_SUSPECT)
		fprintf(out, "  heap traced as a %s since %.1fs: counts blocks allocated since then"
			"%s\n", p->heap_picked ? "pick" : "suspect",
			p->heap_since_ns > m->start_ns ? (p->heap_since_ns - m->start_ns) / 1e9 : 0,
			fmt__cost(cost, sizeof(cost), p->heap_cost_pct));
	/* Read back from a snapshot too: the mode says it, whatever the budget. */
	if (p->heap_mode == PROC_HEAP_RELEASED)
		fprintf(out, "  heap released at %.1fs: its sites as counted then, kept (stale: "
			"frees since unseen)\n",
			p->heap_released_ns > m->start_ns ?
			(p->heap_released_ns - m->start_ns) / 1e9 : 0);
	if (p->alloc_module) {
		fputs("  allocator: ", out);
		fmt__str(out, p->alloc_kind, "?");
		fputs(" in ", out);
		fmt__str(out, p->alloc_module, "?");
		fputc('\n', out);
	}
	if (m->resources & RES_FD) {
		fprintf(out, "  fds: %" PRId64 " outstanding (opens %" PRIu64 ", closes %" PRIu64,
			p->fd_outstanding, p->fd_opens, p->fd_closes);
		if (p->fd_census_valid)
			fprintf(out, ", untracked %u", p->fd_untracked);
		fputs(")\n", out);
	}
	if (m->resources & RES_MMAP)
		fprintf(out, "  mmap: %s in %" PRId64 " anonymous mappings (maps %" PRIu64
			", unmaps %" PRIu64 ")\n",
			fmt__bytes(b3, sizeof(b3), p->mmap_outstanding_bytes),
			p->mmap_outstanding_count, p->mmap_maps, p->mmap_unmaps);
	write_lastrefs(out, p);
	sites = model__sites_by_outstanding(p);
	if (!sites)
		return;
	for (size_t i = 0; i < p->n_sites && shown < o->top_sites; i++) {
		const struct site *s = sites[i];
		unsigned int frames = s->n_frames;

		if (site__outstanding(s) <= 0 && shown)
			continue;
		shown++;
		fputs(s->flagged ? "  LEAK" : "      ", out);
		if (s->kind == LT_KIND_FD) {
			fprintf(out, " %" PRId64 " fds open (opens %" PRIu64 ", closes %" PRIu64
				", %s)  ", site__outstanding(s), (uint64_t)s->allocs,
				site__frees(s),
				fmt__rate(b2, sizeof(b2), s->growth_per_s, UNIT_FDS));
		} else if (s->kind == LT_KIND_MMAP) {
			fprintf(out, " %s mapped in %" PRId64 " mappings (maps %" PRIu64
				", unmaps %" PRIu64 ", %s)  ",
				fmt__bytes(b1, sizeof(b1), s->outstanding_bytes),
				(int64_t)s->outstanding_count, (uint64_t)s->allocs,
				(uint64_t)s->frees,
				fmt__rate(b2, sizeof(b2), s->growth_per_s, UNIT_BYTES));
		} else {
			fprintf(out, " %s in %" PRId64 " blocks (allocs %" PRIu64 ", frees %"
				PRIu64 ", %s)  ",
				fmt__bytes(b1, sizeof(b1), s->outstanding_bytes),
				(int64_t)s->outstanding_count, (uint64_t)s->allocs,
				(uint64_t)s->frees,
				fmt__rate(b2, sizeof(b2), s->growth_per_s, UNIT_BYTES));
		}
		fmt__site_title(out, s);
		for (int t = 0; s->kind == LT_KIND_FD && t < FD_TYPE__COUNT; t++)
			if (s->fd_types[t])
				fprintf(out, "  %s:%u", fd_type_names[t], s->fd_types[t]);
		fputc('\n', out);
		if (o->max_frames && frames > o->max_frames)
			frames = o->max_frames;
		for (unsigned int f = 0; f < frames; f++) {
			fputs("      ", out);
			fmt__frame(out, f, &s->frames[f], FRAME_ADDR);
			fputc('\n', out);
		}
	}
	free(sites);
	(void)m;
}

/* The latest reachability scan of each process that has one: totals, then each leak root. */
static void write_scans(FILE *out, const struct model *m)
{
	for (size_t i = 0; i < m->n_procs; i++) {
		const struct process *p = &m->procs[i];
		const struct scan_result *r;

		if (!p->scan)
			continue;
		if (!p->scan->ok) {
			fprintf(out, "scan of %u: ", p->pid);
			fmt__str(out, p->scan->error, "");
			if (p->scan->partial.cut)
				fprintf(out, " (stopped %.1f ms, %" PRIu64 " of %" PRIu64
					" KiB read)", p->scan->partial.stop_ms,
					p->scan->partial.bytes_read >> 10,
					p->scan->partial.bytes_total >> 10);
			fputc('\n', out);
			continue;
		}
		r = &p->scan->result;
		fprintf(out, "scan of %u (stopped %.1f ms, %u threads, %" PRIu64 " KiB read):",
			p->pid, r->stop_ms, r->threads, r->bytes_read >> 10);
		for (int k = SCAN__COUNT - 1; k >= 0; k--)
			fprintf(out, " %s %" PRIu64 " (%" PRIu64 " B)%s", scan_class_names[k],
				r->count[k], r->bytes[k], k ? "," : "\n");
		if (r->slack.valid) {
			char line[256];

			fprintf(out, "  %s%s\n", p->flags & PROC_ALLOC_RETENTION ?
				"allocator_retention: " : "allocator: ",
				fmt__alloc_slack(line, sizeof(line), p));
		}
		/* Why flagged heap sites that are reachable are still held. */
		for (size_t j = 0; j < p->n_sites; j++) {
			const struct site *s = &p->sites[j];
			const struct scan_site *ss;
			char line[512];

			if (s->kind != LT_KIND_HEAP || !s->flagged ||
			    !(ss = model__scan_site(p, s->stack_hash)))
				continue;
			for (uint32_t k = 0; k < ss->n_retainers; k++) {
				fputs("  held: ", out);
				fmt__str(out, s->n_frames ? s->frames[0].symbol : NULL, "?");
				fprintf(out, ": %s\n", fmt__retainer(line, sizeof(line), p, ss, k));
			}
		}
		for (size_t l = 0; l < r->n_leaks && l < SCAN_LEAKS_SHOWN; l++) {
			const struct scan_leak *lk = &r->leaks[l];
			const struct site *s = model__heap_site(p, lk->root.stack_hash);
			const char *sym = s && s->n_frames ? s->frames[0].symbol : NULL;

			fprintf(out, "  leak: %" PRIu64 " blocks, %" PRIu64 " B, from 0x%" PRIx64
				" (%" PRIu64 " B) allocated in ", lk->blocks, lk->bytes,
				lk->root.addr, lk->root.size);
			fmt__str(out, sym, "?");
			fputs(": fix there\n", out);
			for (uint32_t k = 0; k < lk->n_edges && k < 8; k++)
				fprintf(out, "    0x%" PRIx64 " +0x%" PRIx64 " -> 0x%" PRIx64 "\n",
					lk->edges[k].from, lk->edges[k].offset, lk->edges[k].to);
			if (lk->total_edges > 8)
				fprintf(out, "    ... %" PRIu64 " more edges\n", lk->total_edges - 8);
		}
	}
}

/* One line per module without symbols: what is missing and the fix. */
static void write_symbols_missing(FILE *out, const struct model *m, const struct report_opts *o)
{
	char hint[FMT_HINT_LEN];

	for (size_t i = 0; i < m->n_sym_missing; i++) {
		const struct sym_missing *h = &m->sym_missing[i];

		if (o->symbols_once && h->reported)
			continue;
		fmt__str(out, fmt__symbols_hint(hint, sizeof(hint), h), "");
		fputc('\n', out);
	}
}

void report__write_stop(FILE *out, const struct model *m, bool with_stack)
{
	const struct stop_record *st = &m->stop;
	const struct process *p = model__find(m, st->pid, st->gen);
	const struct site *s = p ? model__heap_site(p, st->stack_hash) : NULL;
	char size[FMT_NUM_LEN];

	if (!st->fired)
		return;
	fprintf(out, "stopped: process %" PRIu32 " (", st->pid);
	fmt__str(out, p ? p->comm : NULL, "?");
	fprintf(out, "), thread %" PRIu32 ", at allocation %" PRIu64 " of site %016" PRIx64,
		st->tid, st->seq, st->stack_hash);
	if (s) {
		fputs(" (", out);
		fmt__site_title(out, s);
		fputc(')', out);
	}
	fprintf(out, ": block 0x%" PRIx64 ", %s\n", st->addr,
		fmt__bytes(size, sizeof(size), st->size_bytes));
	for (uint32_t i = 0; with_stack && s && i < s->n_frames; i++) {
		fputs("  ", out);
		fmt__frame(out, i, &s->frames[i], FRAME_ADDR);
		fputc('\n', out);
	}
	fprintf(out, "it stays stopped: debug it with 'gdb -p %" PRIu32 "', resume it with "
		"'kill -CONT %" PRIu32 "'\n", st->pid, st->pid);
}

void report__write(FILE *out, const struct model *m, const struct report_opts *o)
{
	struct process **procs;
	size_t n, shown = 0, visible = 0;

	procs = model__procs_by_outstanding(m, &n);
	if (!procs)
		return;
	for (size_t i = 0; i < n; i++)
		visible += model__visible(procs[i]);
	fprintf(out, "leaktop %s  elapsed %.1fs  interval %.2gs  processes %zu  probes %zu  "
		"events %" PRIu64 "  dropped %" PRIu64 "\n",
		LEAKTOP_VERSION, model__elapsed_s(m), m->interval_s, visible,
		m->probes_attached, model__events(m), model__dropped(m));
	if (m->heap_budgeted) {
		char heap[256];

		fprintf(out, "%s\n", fmt__heap_mode(heap, sizeof(heap), m));
	}
	/* Work the interval's budget left for later: said, never silently skipped. */
	if (m->stacks_pending || m->procs_deferred)
		fprintf(out, "deferred: %" PRIu32 " stacks not symbolized yet, %" PRIu32
			" processes' /proc not re-read (collect %.0f ms)\n", m->stacks_pending,
			m->procs_deferred, m->collect_ms);
	write_symbols_missing(out, m, o);
	report__write_stop(out, m, false);
	for (size_t i = 0; i < n; i++) {
		if (o->top_procs && shown >= o->top_procs)
			break;
		if (!model__visible(procs[i]))
			continue;
		write_process(out, m, procs[i], o);
		shown++;
	}
	if (o->top_procs && visible > shown)
		fprintf(out, "\n(%zu more processes not shown)\n", visible - shown);
	free(procs);
	fputc('\n', out);
	write_scans(out, m);
	fflush(out);
}
