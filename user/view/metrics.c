// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * metrics.c - the model in the OpenMetrics and Prometheus text formats (see metrics.h).
 *
 * Each metric family is one row of a table (name, type, unit, help, the value of a process or
 * site); a family's samples are written together, after its metadata, as both formats
 * require.  The formats differ only in metadata: OpenMetrics names a counter family without
 * its _total suffix, has UNIT lines, an info type and ends with "# EOF".
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "view/format.h"
#include "view/metrics.h"

#define LABEL_MAX 256		/* bytes of one label value, escaped, at most */

enum mtype { M_GAUGE, M_COUNTER, M_INFO };

static const char *const type_names[] = {
	[M_GAUGE] = "gauge", [M_COUNTER] = "counter", [M_INFO] = "info",
};

/* A value to write, or none (unknown is not zero: the sample is left out). */
struct mval {
	bool known;
	bool is_int;
	int64_t i;
	double d;
};

#define INT(v) ((struct mval){ .known = true, .is_int = true, .i = (int64_t)(v) })
#define REAL(v) ((struct mval){ .known = !isnan(v), .d = (v) })
#define NONE ((struct mval){ .known = false })

struct family {
	const char *name;	/* without _total / _info */
	enum mtype type;
	const char *unit;	/* OpenMetrics UNIT (a suffix of name), or NULL */
	const char *help;
};

const char *metrics__content_type(enum metrics_format format)
{
	return format == METRICS_OPENMETRICS ?
	       "application/openmetrics-text; version=1.0.0; charset=utf-8" :
	       "text/plain; version=0.0.4; charset=utf-8";
}

enum metrics_format metrics__negotiate(const char *accept)
{
	return accept && strstr(accept, "application/openmetrics-text") ? METRICS_OPENMETRICS :
									  METRICS_PROMETHEUS;
}

/* The name samples of f carry. */
static void sample_name(FILE *out, const struct family *f)
{
	fputs(f->name, out);
	if (f->type == M_COUNTER)
		fputs("_total", out);
	else if (f->type == M_INFO)
		fputs("_info", out);
}

static void family_header(FILE *out, const struct metrics_opts *o, const struct family *f)
{
	if (o->format == METRICS_OPENMETRICS) {
		fprintf(out, "# TYPE %s %s\n", f->name, type_names[f->type]);
		if (f->unit)
			fprintf(out, "# UNIT %s %s\n", f->name, f->unit);
		fprintf(out, "# HELP %s %s\n", f->name, f->help);
		return;
	}
	/* The Prometheus format has no info type, and names counters with their suffix. */
	fputs("# HELP ", out);
	sample_name(out, f);
	fprintf(out, " %s\n# TYPE ", f->help);
	sample_name(out, f);
	fprintf(out, " %s\n", f->type == M_INFO ? "gauge" : type_names[f->type]);
}

/*
 * A label value: the string as the views show it (util/escape.h: control characters and
 * non-UTF-8 bytes as \xHH), cut to LABEL_MAX, then with the exposition's escapes for
 * backslash and double quote (a newline never survives the first step).
 */
static void label_value(FILE *out, const char *s)
{
	char shown[LABEL_MAX];

	fmt__str_buf(shown, sizeof(shown), s, "");
	for (const char *p = shown; *p; p++) {
		if (*p == '\\' || *p == '"')
			fputc('\\', out);
		fputc(*p, out);
	}
}

static void write_value(FILE *out, struct mval v)
{
	if (v.is_int)
		fprintf(out, " %" PRId64 "\n", v.i);
	else if (isinf(v.d))
		fprintf(out, " %cInf\n", v.d > 0 ? '+' : '-');
	else
		fprintf(out, " %.17g\n", v.d);
}

/* One sample: name{labels} value; labels is "" or already written "k=\"v\",..." text. */
static void sample(FILE *out, const struct family *f, const char *labels, struct mval v)
{
	if (!v.known)
		return;
	sample_name(out, f);
	if (labels && *labels)
		fprintf(out, "{%s}", labels);
	write_value(out, v);
}

/* A label stream opened on *labels done: true when the labels were written. */
static bool labels_done(FILE *f, char **labels)
{
	if (fclose(f) || !*labels) {
		free(*labels);
		*labels = NULL;
		return false;
	}
	return true;
}

/* What was kept: v when it holds k entries, else freed and NULL. */
static void *kept(void *v, size_t k)
{
	if (k)
		return v;
	free(v);
	return NULL;
}

/* ------------------------------------------------------------------ processes */

/* A process as exported, with its labels written out once. */
struct mproc {
	const struct process *p;
	char *labels;		/* pid="..",comm=".."[,container=".."][,cgroup=".."] */
};

struct proc_family {
	struct family f;
	unsigned int resource;	/* RES_* it needs, 0: any */
	struct mval (*value)(const struct process *p);
};

static bool heap_traced(const struct process *p)
{
	return p->heap_mode != PROC_HEAP_WATCH;
}

static struct mval heap_bytes(const struct process *p)
{
	return heap_traced(p) ? INT(p->heap_outstanding_bytes) : NONE;
}

static struct mval heap_blocks(const struct process *p)
{
	return heap_traced(p) ? INT(p->heap_outstanding_count) : NONE;
}

static struct mval heap_allocs(const struct process *p)
{
	return heap_traced(p) ? INT(p->heap_allocs) : NONE;
}

static struct mval heap_frees(const struct process *p)
{
	return heap_traced(p) ? INT(p->heap_frees) : NONE;
}

static struct mval heap_growth(const struct process *p)
{
	return heap_traced(p) ? REAL(p->heap_growth_per_s) : NONE;
}

static struct mval fd_outstanding(const struct process *p)
{
	return INT(p->fd_outstanding);
}

static struct mval fd_opens(const struct process *p)
{
	return INT(p->fd_opens);
}

static struct mval fd_closes(const struct process *p)
{
	return INT(p->fd_closes);
}

static struct mval mmap_bytes(const struct process *p)
{
	return INT(p->mmap_outstanding_bytes);
}

static struct mval mmap_maps(const struct process *p)
{
	return INT(p->mmap_outstanding_count);
}

static struct mval rss(const struct process *p)
{
	return p->counters.valid ? INT(p->counters.rss_bytes) : NONE;
}

static struct mval rss_anon(const struct process *p)
{
	return p->counters.valid && p->counters.rss_split_valid ?
	       INT(p->counters.rss_anon_bytes) : NONE;
}

static struct mval vm(const struct process *p)
{
	return p->counters.valid ? INT(p->counters.vm_bytes) : NONE;
}

static struct mval open_fds(const struct process *p)
{
	return p->counters.valid ? INT(p->counters.fd_count) : NONE;
}

static struct mval threads(const struct process *p)
{
	return p->counters.valid ? INT(p->counters.threads) : NONE;
}

static const struct proc_family proc_families[] = {
	{ { "leaktop_heap_outstanding_bytes", M_GAUGE, "bytes",
	    "Heap bytes allocated while traced and not freed" }, RES_HEAP, heap_bytes },
	{ { "leaktop_heap_outstanding_blocks", M_GAUGE, NULL,
	    "Heap blocks allocated while traced and not freed" }, RES_HEAP, heap_blocks },
	{ { "leaktop_heap_allocs", M_COUNTER, NULL,
	    "Heap allocations seen while traced" }, RES_HEAP, heap_allocs },
	{ { "leaktop_heap_frees", M_COUNTER, NULL,
	    "Frees of heap blocks allocated while traced" }, RES_HEAP, heap_frees },
	{ { "leaktop_heap_growth_bytes_per_second", M_GAUGE, NULL,
	    "Growth of the outstanding heap over the analysis window" }, RES_HEAP, heap_growth },
	{ { "leaktop_fd_outstanding", M_GAUGE, NULL,
	    "File descriptors opened while traced and still open" }, RES_FD, fd_outstanding },
	{ { "leaktop_fd_opens", M_COUNTER, NULL,
	    "File descriptors opened while traced" }, RES_FD, fd_opens },
	{ { "leaktop_fd_closes", M_COUNTER, NULL,
	    "Closes of file descriptors opened while traced" }, RES_FD, fd_closes },
	{ { "leaktop_mmap_outstanding_bytes", M_GAUGE, "bytes",
	    "Anonymous mapping and brk bytes mapped while traced and still mapped" }, RES_MMAP,
	  mmap_bytes },
	{ { "leaktop_mmap_outstanding_mappings", M_GAUGE, NULL,
	    "Anonymous mappings made while traced and still mapped" }, RES_MMAP, mmap_maps },
	{ { "leaktop_process_resident_memory_bytes", M_GAUGE, "bytes",
	    "Resident set size (working set)" }, 0, rss },
	{ { "leaktop_process_resident_anonymous_memory_bytes", M_GAUGE, "bytes",
	    "Anonymous part of the resident set" }, 0, rss_anon },
	{ { "leaktop_process_virtual_memory_bytes", M_GAUGE, "bytes",
	    "Virtual memory size" }, 0, vm },
	{ { "leaktop_process_open_fds", M_GAUGE, NULL,
	    "Open file descriptors (handle count)" }, 0, open_fds },
	{ { "leaktop_process_threads", M_GAUGE, NULL, "Threads" }, 0, threads },
};

static const struct family flag_family = {
	"leaktop_process_flag", M_GAUGE, NULL,
	"1 for each flag set on a process (heap_growth, fd_growth, ...)"
};

/*
 * The processes to export: the visible ones, in the views' order.  An image that exited in
 * this interval is left out when its pid has a live image (an exec): the two would carry the
 * same labels.  Of two exited images of one pid (two OOM-killed ones, kept a minute, the pid
 * reused), only the newer is exported: a duplicate series is an invalid page.  Returns the
 * count; *out malloc'd (NULL with 0).
 */
static size_t export_procs(const struct model *m, struct mproc **out)
{
	struct process **procs;
	struct mproc *v;
	size_t n = 0, k = 0;

	*out = NULL;
	procs = model__procs_by_outstanding(m, &n);
	v = n ? calloc(n, sizeof(*v)) : NULL;
	for (size_t i = 0; v && i < n; i++) {
		const struct process *p = procs[i];
		const struct process *live = model__find_pid(m, p->pid);
		size_t len = 0;
		FILE *f;

		size_t same = k;

		if (!model__visible(p) || (p->exited && live && live != p))
			continue;
		for (size_t j = 0; p->exited && j < k; j++)
			if (v[j].p->pid == p->pid)
				same = j;
		if (same < k && v[same].p->gen > p->gen)
			continue;
		if (same < k) {
			/* The newer one takes the older's place: one series per pid. */
			free(v[same].labels);
			memmove(&v[same], &v[same + 1], (k - same - 1) * sizeof(*v));
			k--;
		}
		f = open_memstream(&v[k].labels, &len);
		if (!f)
			break;
		fprintf(f, "pid=\"%" PRIu32 "\",comm=\"", p->pid);
		label_value(f, p->comm);
		fputc('"', f);
		if (p->container[0]) {
			fputs(",container=\"", f);
			label_value(f, p->container);
			fputc('"', f);
		}
		if (p->cgroup) {
			fputs(",cgroup=\"", f);
			label_value(f, p->cgroup);
			fputc('"', f);
		}
		if (!labels_done(f, &v[k].labels))
			break;
		v[k++].p = p;
	}
	free(procs);
	*out = kept(v, k);
	return k;
}

static void write_procs(FILE *out, const struct model *m, const struct metrics_opts *o,
			const struct mproc *procs, size_t n)
{
	for (size_t k = 0; k < sizeof(proc_families) / sizeof(proc_families[0]); k++) {
		const struct proc_family *pf = &proc_families[k];

		if (pf->resource && !(m->resources & pf->resource))
			continue;
		family_header(out, o, &pf->f);
		for (size_t i = 0; i < n; i++)
			sample(out, &pf->f, procs[i].labels, pf->value(procs[i].p));
	}
	family_header(out, o, &flag_family);
	for (size_t i = 0; i < n; i++) {
		for (int b = 0; b < PROC_FLAG__COUNT; b++) {
			if (!(procs[i].p->flags & (1u << b)))
				continue;
			sample_name(out, &flag_family);
			fprintf(out, "{%s,flag=\"%s\"}", procs[i].labels, proc_flags[b].name);
			write_value(out, INT(1));
		}
	}
}

/* ------------------------------------------------------------------ call sites */

struct msite {
	const struct mproc *proc;
	const struct site *s;
	char *labels;
};

static const char *const kind_names[] = {
	[LT_KIND_HEAP] = "heap", [LT_KIND_FD] = "fd", [LT_KIND_MMAP] = "mmap",
};

static bool kind_has_bytes(const struct site *s)
{
	return s->kind != LT_KIND_FD;
}

static struct mval site_bytes(const struct site *s)
{
	return kind_has_bytes(s) ? INT(s->outstanding_bytes) : NONE;
}

static struct mval site_objects(const struct site *s)
{
	return INT(site__outstanding(s));
}

static struct mval site_growth_bytes(const struct site *s)
{
	return kind_has_bytes(s) ? REAL(s->growth_per_s) : NONE;
}

static struct mval site_growth_fds(const struct site *s)
{
	return kind_has_bytes(s) ? NONE : REAL(s->growth_per_s);
}

static struct mval site_allocs(const struct site *s)
{
	return INT(s->allocs);
}

static const struct site_family {
	struct family f;
	struct mval (*value)(const struct site *s);
} site_families[] = {
	{ { "leaktop_site_outstanding_bytes", M_GAUGE, "bytes",
	    "Bytes a flagged call site allocated or mapped and did not free" }, site_bytes },
	{ { "leaktop_site_outstanding_objects", M_GAUGE, NULL,
	    "Blocks, descriptors or mappings a flagged call site made that are still live" },
	  site_objects },
	{ { "leaktop_site_growth_bytes_per_second", M_GAUGE, NULL,
	    "Growth of a flagged heap or mmap call site over the analysis window" },
	  site_growth_bytes },
	{ { "leaktop_site_growth_fds_per_second", M_GAUGE, NULL,
	    "Growth of a flagged fd call site over the analysis window" }, site_growth_fds },
	{ { "leaktop_site_allocs", M_COUNTER, NULL,
	    "Allocations, opens or mappings by a flagged call site" }, site_allocs },
};

/* The flagged sites to export: at most max, processes and sites in the views' order. */
static size_t export_sites(const struct mproc *procs, size_t n_procs, unsigned int max,
			   struct msite **out)
{
	struct msite *v = max ? calloc(max, sizeof(*v)) : NULL;
	size_t k = 0;

	for (size_t i = 0; v && i < n_procs && k < max; i++) {
		const struct process *p = procs[i].p;
		struct site **sites = model__sites_by_outstanding(p);

		for (size_t j = 0; sites && j < p->n_sites && k < max; j++) {
			const struct site *s = sites[j];
			char name[LABEL_MAX];
			size_t len = 0;
			FILE *f;

			if (!s->flagged)
				continue;
			f = open_memstream(&v[k].labels, &len);
			if (!f)
				break;
			fmt__site_name(name, sizeof(name), s);
			fprintf(f, "%s,kind=\"%s\",site=\"", procs[i].labels,
				s->kind < sizeof(kind_names) / sizeof(kind_names[0]) ?
				kind_names[s->kind] : "?");
			label_value(f, name);
			fprintf(f, "\",site_id=\"%016" PRIx64 "\"", s->stack_hash);
			if (!labels_done(f, &v[k].labels))
				break;
			v[k].proc = &procs[i];
			v[k++].s = s;
		}
		free(sites);
	}
	*out = kept(v, k);
	return k;
}

static void write_sites(FILE *out, const struct metrics_opts *o, const struct msite *sites,
			size_t n)
{
	for (size_t k = 0; k < sizeof(site_families) / sizeof(site_families[0]); k++) {
		const struct site_family *sf = &site_families[k];

		family_header(out, o, &sf->f);
		for (size_t i = 0; i < n; i++)
			sample(out, &sf->f, sites[i].labels, sf->value(sites[i].s));
	}
}

/* ------------------------------------------------------------------ the run */

static const struct family
	f_build = { "leaktop_build", M_INFO, NULL, "The leaktop that serves these metrics" },
	f_elapsed = { "leaktop_elapsed_seconds", M_GAUGE, "seconds",
		      "Time since tracing started, as of the latest update" },
	f_interval = { "leaktop_interval_seconds", M_GAUGE, "seconds", "Sampling interval" },
	f_updated = { "leaktop_last_update_timestamp_seconds", M_GAUGE, "seconds",
		      "Unix time of the latest update" },
	f_events = { "leaktop_events", M_COUNTER, NULL, "Events the BPF programs counted" },
	f_drops = { "leaktop_dropped_events", M_COUNTER, NULL,
		    "Events lost, by cause (a full map, a stack that could not be read, ...)" },
	f_probes = { "leaktop_probes", M_GAUGE, NULL, "Probes attached" },
	f_oom = { "leaktop_oom_victims", M_COUNTER, NULL,
		  "Watched processes the OOM killer chose" },
	f_oom_failed = { "leaktop_oom_snapshots_failed", M_COUNTER, NULL,
			 "OOM victims whose snapshot could not be written" },
	f_oom_skipped = { "leaktop_oom_snapshots_skipped", M_COUNTER, NULL,
			  "OOM victims whose snapshot the rate limit (--oom-min-gap) skipped" },
	f_oom_removed = { "leaktop_oom_snapshots_removed", M_COUNTER, NULL,
			  "OOM snapshot files removed to stay within --oom-max-files/-bytes" },
	f_procs = { "leaktop_processes", M_GAUGE, NULL, "Processes exported" },
	f_sites = { "leaktop_flagged_sites", M_GAUGE, NULL,
		    "Flagged call sites, all of them (at most --metrics-sites are exported)" },
	f_cost = { "leaktop_heap_cost_ratio", M_GAUGE, "ratio",
		   "Estimated share of all CPUs heap tracing costs" },
	f_self_rss = { "leaktop_self_resident_memory_bytes", M_GAUGE, "bytes",
		       "leaktop's own resident set" },
	f_self_cpu = { "leaktop_self_cpu_seconds", M_COUNTER, "seconds",
		       "CPU time leaktop itself used" },
	f_collect = { "leaktop_collect_duration_seconds", M_GAUGE, "seconds",
		      "Time the latest interval's collection took" };

static void write_run(FILE *out, const struct model *m, const struct metrics_opts *o,
		      size_t n_procs, size_t n_flagged)
{
	family_header(out, o, &f_build);
	sample(out, &f_build, "version=\"" LEAKTOP_VERSION "\"", INT(1));
	family_header(out, o, &f_elapsed);
	sample(out, &f_elapsed, "", REAL(model__elapsed_s(m)));
	family_header(out, o, &f_interval);
	sample(out, &f_interval, "", REAL(m->interval_s));
	if (o->time_s > 0) {
		family_header(out, o, &f_updated);
		sample(out, &f_updated, "", REAL(o->time_s));
	}
	family_header(out, o, &f_events);
	sample(out, &f_events, "", INT(model__events(m)));
	family_header(out, o, &f_drops);
	for (int i = 0; i < LT_DROP__COUNT; i++) {
		char label[64];

		snprintf(label, sizeof(label), "cause=\"%s\"", drop_names[i]);
		sample(out, &f_drops, label, INT(m->drops[i]));
	}
	family_header(out, o, &f_probes);
	sample(out, &f_probes, "", INT(m->probes_attached));
	family_header(out, o, &f_oom);
	sample(out, &f_oom, "", INT(m->counters[LT_CNT_OOM_VICTIMS]));
	family_header(out, o, &f_oom_failed);
	sample(out, &f_oom_failed, "", INT(m->oom_snapshots_failed));
	family_header(out, o, &f_oom_skipped);
	sample(out, &f_oom_skipped, "", INT(m->oom_snapshots_skipped));
	family_header(out, o, &f_oom_removed);
	sample(out, &f_oom_removed, "", INT(m->oom_snapshots_removed));
	family_header(out, o, &f_procs);
	sample(out, &f_procs, "", INT(n_procs));
	family_header(out, o, &f_sites);
	sample(out, &f_sites, "", INT(n_flagged));
	if (m->heap_budgeted && !isnan(m->heap_cost_pct)) {
		family_header(out, o, &f_cost);
		sample(out, &f_cost, "", REAL(m->heap_cost_pct / 100));
	}
	if (m->self_rss_bytes) {
		family_header(out, o, &f_self_rss);
		sample(out, &f_self_rss, "", INT(m->self_rss_bytes));
	}
	if (m->self_cpu_s > 0) {
		family_header(out, o, &f_self_cpu);
		sample(out, &f_self_cpu, "", REAL(m->self_cpu_s));
	}
	family_header(out, o, &f_collect);
	sample(out, &f_collect, "", REAL(m->collect_ms / 1000));
}

int metrics__write(FILE *out, const struct model *m, const struct metrics_opts *o)
{
	struct mproc *procs;
	struct msite *sites;
	size_t n_procs = export_procs(m, &procs), n_sites, n_flagged = 0;

	for (size_t i = 0; i < n_procs; i++)
		for (size_t j = 0; j < procs[i].p->n_sites; j++)
			n_flagged += procs[i].p->sites[j].flagged;
	n_sites = export_sites(procs, n_procs, o->max_sites, &sites);
	write_run(out, m, o, n_procs, n_flagged);
	write_procs(out, m, o, procs, n_procs);
	write_sites(out, o, sites, n_sites);
	if (o->format == METRICS_OPENMETRICS)
		fputs("# EOF\n", out);
	for (size_t i = 0; i < n_sites; i++)
		free(sites[i].labels);
	free(sites);
	for (size_t i = 0; i < n_procs; i++)
		free(procs[i].labels);
	free(procs);
	return ferror(out) ? -EIO : 0;
}
