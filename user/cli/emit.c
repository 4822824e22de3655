// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * emit.c - the interval's outputs (see emit.h): each file replaced atomically, the metrics
 * page rendered in both formats, stdout or the TUI.  A failed file is one line each interval
 * it happens, retried at the next: monitoring goes on.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/emit.h"
#include "cli/metrics_server.h"
#include "tui/tui.h"
#include "util/msg.h"
#include "view/export.h"
#include "view/metrics.h"
#include "view/report.h"
#include "view/snapshot.h"

void emit__say(struct emitter *e, const struct model *m, const char *line)
{
	if (e->tui)
		tui__message(e->tui, m, line);
	else
		err_line("%s", line);
}

/* One failed file write: a line on stderr (the TUI's message line), remembered. */
static void file_failed(struct emitter *e, const struct model *m, const char *path, int err)
{
	char msg[4200];

	msg__write_failed(msg, sizeof(msg), path, err);
	emit__say(e, m, msg);
	e->files_failed = true;
}

static double wall_s(void)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return now.tv_sec + now.tv_nsec / 1e9;
}

/*
 * The files written each interval (--pprof, --folded, -j FILE), each replaced atomically.
 * Whether the last attempt failed is kept for the exit status.
 */
static void write_files(struct emitter *e, const struct model *m)
{
	const struct options *o = e->o;
	struct export_opts eo = { .duration_s = model__elapsed_s(m), .build_id = e->build_id,
				  .build_id_ctx = e->build_id_ctx, .time_s = wall_s() };
	int err;

	e->files_failed = false;
	if (o->pprof_path) {
		err = export__pprof_file(o->pprof_path, m, &eo);
		if (err)
			file_failed(e, m, o->pprof_path, err);
	}
	if (o->folded_path) {
		err = export__folded_file(o->folded_path, m);
		if (err)
			file_failed(e, m, o->folded_path, err);
	}
	if (o->json_path && strcmp(o->json_path, "-")) {
		err = snapshot__write_file(o->json_path, m);
		if (err)
			file_failed(e, m, o->json_path, err);
	}
}

/* One format of the metrics as a malloc'd page; NULL if out of memory. */
static char *render_metrics(const struct emitter *e, const struct model *m,
			    enum metrics_format fmt, double time_s, size_t *len)
{
	struct metrics_opts mo = { .format = fmt, .max_sites = e->o->metrics_sites,
				   .time_s = time_s };
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	if (metrics__write(f, m, &mo) | fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* --listen: this interval's metrics, in both formats, served from now on. */
static void publish_metrics(struct emitter *e, const struct model *m)
{
	size_t prom_len = 0, om_len = 0;
	double t = wall_s();
	char *prom = render_metrics(e, m, METRICS_PROMETHEUS, t, &prom_len);
	char *om = render_metrics(e, m, METRICS_OPENMETRICS, t, &om_len);

	if (!prom || !om) {
		/* The last page stays: it says when it was made. */
		free(prom);
		free(om);
		return;
	}
	metrics_server__publish(e->ms, prom, prom_len, om, om_len);
}

int emit__interval(struct emitter *e, const struct model *m)
{
	const struct options *o = e->o;
	struct report_opts ro = { .top_sites = o->top_sites, .max_frames = 0,
				  .symbols_once = true,
				  .top_procs = o->mode == MODE_SYSTEM ?
					       OPT_DEFAULT_TOP_PROCS_SYSTEM : 0 };
	int err;

	write_files(e, m);
	if (e->ms)
		publish_metrics(e, m);
	if (e->tui) {
		tui__update(e->tui, m);
	} else if (o->json_path && !strcmp(o->json_path, "-")) {
		err = snapshot__write_line(stdout, m);
		if (err && err != -EPIPE)
			err_line("cannot write the snapshot to stdout: %s", strerror(-err));
		return err;
	} else if (!o->quiet) {
		report__write(stdout, m, &ro);
		if (fflush(stdout) || ferror(stdout))
			return errno == EPIPE ? -EPIPE : -EIO;
	}
	return 0;
}

void emit__snapshot_now(struct emitter *e, const struct model *m)
{
	char name[64], msg[4200];
	const char *path = e->o->json_path;
	time_t now = time(NULL);
	struct tm tm;
	int err;

	if (!path || !strcmp(path, "-")) {
		localtime_r(&now, &tm);
		strftime(name, sizeof(name), "leaktop-%Y%m%d-%H%M%S.json", &tm);
		path = name;
	}
	err = snapshot__write_file(path, m);
	if (err)
		msg__write_failed(msg, sizeof(msg), path, err);
	else
		snprintf(msg, sizeof(msg), "wrote %s", path);
	tui__message(e->tui, m, msg);
}
