/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * metrics.h - the model as metrics a Prometheus server scrapes: the OpenMetrics text format
 * (application/openmetrics-text 1.0.0) and the older Prometheus text format (0.0.4), names
 * prefixed leaktop_, base units, counters ending in _total.
 *
 * Run-level series (build, events, drops by cause, probes, cost, leaktop's own memory and
 * collect time), per process (labels pid, comm, and container and cgroup when known: heap,
 * fds, mappings, /proc counters, growth, one series per flag set), and per call site only
 * for at most max_sites flagged sites, in the views' order (labels pid, comm, kind, a short
 * readable site name and its stack id; never a whole stack).  Every label value a traced
 * process controls is escaped (control characters and bytes that are not UTF-8 as \xHH,
 * util/escape.h) and cut to a bounded length.
 */
#ifndef LEAKTOP_METRICS_H
#define LEAKTOP_METRICS_H

#include <stdio.h>

#include "core/model.h"

enum metrics_format {
	METRICS_PROMETHEUS,	/* text/plain; version=0.0.4 */
	METRICS_OPENMETRICS,	/* application/openmetrics-text; version=1.0.0 */
};

struct metrics_opts {
	enum metrics_format format;
	unsigned int max_sites;	/* flagged call sites exported, at most */
	double time_s;		/* Unix time the model was updated; 0: unknown (not exported) */
};

/* The HTTP Content-Type of format. */
const char *metrics__content_type(enum metrics_format format);
/*
 * The format a scraper asked for in its Accept header (NULL: none): OpenMetrics when it
 * lists application/openmetrics-text, else the Prometheus text format.
 */
enum metrics_format metrics__negotiate(const char *accept);
/* Write the model's metrics in o->format.  0 or -EIO. */
int metrics__write(FILE *out, const struct model *m, const struct metrics_opts *o);

#endif
