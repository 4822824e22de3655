// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * lastref_cmd.c - `leaktop lastref`: a mode of the live run (`leaktop -q -p PID -r heap`,
 * cli/run.c) whose hooks run a lastref on the run's session (live/lastref_session.c: the
 * sites named by --site, the watch engine) and say each verdict: a line on stdout as each
 * block is resolved, the -j document at the end.  Progress lines go to stderr.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/lastref_cmd.h"
#include "cli/options.h"
#include "cli/run.h"
#include "live/session.h"
#include "live/watch.h"
#include "util/msg.h"
#include "view/format.h"
#include "view/lastref_out.h"

#define LASTREF_INTERVAL	"0.2"	/* the model (and its symbols) follows this closely */

const char *lastref_cmd__usage(void)
{
	return "usage: leaktop lastref -p PID --site SITE [--blocks K] [-d SEC] [-j FILE]\n"
	       "                       [--snapshot FILE] [-v]\n"
	       "Trace PID like `leaktop -p PID` and, for up to K new blocks allocated at SITE,\n"
	       "find every word that points into each one, watch those words with hardware\n"
	       "watchpoints, and say where the last pointer to each was lost: overwritten (with\n"
	       "the stack of the write), its holder freed, its stack frame returned, or only in\n"
	       "a register.  Where hardware watchpoints do not fire (it checks at the start),\n"
	       "references are checked by scans only.  Never writes to the process.\n"
	       "  -p PID             process to follow\n"
	       "  --site SITE        a function name in the site's stack, or its stack_id (JSON)\n"
	       "  --blocks K         blocks to follow (1-" OPT_STR(WATCH_MAX_BLOCKS) ", default "
	       OPT_STR(LASTREF_DEFAULT_BLOCKS) ")\n"
	       "  -d SEC             give up after SEC seconds (default: until K are resolved)\n"
	       "  -j FILE            write the verdicts as JSON (leaktop.lastref/1)\n"
	       "  --snapshot FILE    write the run's snapshot (leaktop.snapshot/1) each interval,\n"
	       "                     the verdicts under its process's lastref\n"
	       "  --scan-max-stop MS longest one scan keeps the process stopped (default 2000)\n"
	       "  -v                 say more\n";
}

int lastref_cmd__parse(int argc, char **argv, struct lastref_args *a, char **run_argv,
		       size_t run_max, char *err, size_t len)
{
	size_t n = 0;

	memset(a, 0, sizeof(*a));
	a->blocks = LASTREF_DEFAULT_BLOCKS;
	err[0] = '\0';
	if (run_max < 16)
		return msg__set(err, len, -EINVAL, "internal: argument room");
	run_argv[n++] = "lastref";
	run_argv[n++] = "-q";
	run_argv[n++] = "-r";
	run_argv[n++] = "heap";
	run_argv[n++] = "-i";
	run_argv[n++] = LASTREF_INTERVAL;
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i];
		unsigned long k;

		if (!strcmp(o, "-h") || !strcmp(o, "--help"))
			return 1;
		/* Room for this option, its value and the final NULL (every -v takes one). */
		if (n + 3 >= run_max)
			return msg__set(err, len, -EINVAL, "too many arguments; see leaktop lastref "
					"--help");
		if (!strcmp(o, "-v")) {
			run_argv[n++] = "-v";
			continue;
		}
		if (strcmp(o, "-p") && strcmp(o, "--site") && strcmp(o, "--blocks") &&
		    strcmp(o, "-d") && strcmp(o, "-j") && strcmp(o, "--scan-max-stop") &&
		    strcmp(o, "--snapshot"))
			return msg__set(err, len, -EINVAL, "unknown lastref argument '%s'; see leaktop "
					"lastref --help", o);
		if (i + 1 >= argc)
			return msg__set(err, len, -EINVAL, "option '%s' needs a value; see leaktop "
					"lastref --help", o);
		i++;
		if (!strcmp(o, "--site")) {
			if (!argv[i][0])
				return msg__set(err, len, -EINVAL, "empty --site: give a function name "
						"or a stack_id");
			a->site = argv[i];
		} else if (!strcmp(o, "--blocks")) {
			if (options__parse_uint(argv[i], 1, WATCH_MAX_BLOCKS, &k))
				return msg__set(err, len, -EINVAL, "invalid --blocks '%s': expected 1 to "
						"%d", argv[i], WATCH_MAX_BLOCKS);
			a->blocks = k;
		} else if (!strcmp(o, "-j")) {
			if (!argv[i][0] || !strcmp(argv[i], "-"))
				return msg__set(err, len, -EINVAL, "invalid -j '%s': give a file name",
						argv[i]);
			a->json_path = argv[i];
		} else if (!strcmp(o, "--snapshot")) {
			/* The run's own -j: a file (stdout is the verdicts'). */
			if (!argv[i][0] || !strcmp(argv[i], "-"))
				return msg__set(err, len, -EINVAL, "invalid --snapshot '%s': give a "
						"file name", argv[i]);
			run_argv[n++] = "-j";
			run_argv[n++] = argv[i];
		} else {
			if (!strcmp(o, "-p"))
				a->pid = atoi(argv[i]);
			run_argv[n++] = (char *)o;
			run_argv[n++] = argv[i];
		}
	}
	run_argv[n] = NULL;
	if (!a->pid)
		return msg__set(err, len, -EINVAL, "lastref needs a process; give -p PID");
	if (!a->site)
		return msg__set(err, len, -EINVAL, "lastref needs a call site; give --site FUNCTION "
				"or --site STACK_ID");
	return 0;
}

/* ---------------------------------------------------------------- the hooks */

/* The command's lastref on the run: its spec, and the -j document's outcome. */
struct lastref_cmd {
	struct lastref_args a;
	struct lastref_spec spec;
	int json_status;		/* -j could not be written: 1 */
	bool finished;			/* the run's end came (the hook wrote -j) */
};

/* The -j document of n verdicts v: 0, or 1 (said). */
static int write_json(const struct lastref_cmd *c, int watchpoints,
		      const struct lastref_result *v, size_t n)
{
	char msg[4200];
	int err;

	if (!c->a.json_path)
		return 0;
	err = lastref_out__write(c->a.json_path, c->a.pid, c->a.site, watchpoints, v, n);
	if (!err)
		return 0;
	err_line("%s", msg__write_failed(msg, sizeof(msg), c->a.json_path, err));
	return 1;
}

static void print_verdict(void *ctx, const struct lastref_result *r)
{
	char line[1024];

	printf("%s\n", fmt__lastref_line(line, sizeof(line), r));
	fflush(stdout);
}

static void print_err_line(void *ctx, const char *line)
{
	err_line("%s", line);
}

static int hook_start(void *ctx, const struct run_live *lv)
{
	struct lastref_cmd *c = ctx;

	return session__lastref_start(lv->sess, lv->model, &c->spec);
}

static int hook_step(void *ctx, const struct run_live *lv)
{
	return session__lastref_step(lv->sess, lv->model);
}

/* The run ended (the blocks left have their verdict): the -j document. */
static void hook_finish(void *ctx, const struct run_live *lv)
{
	struct lastref_cmd *c = ctx;
	const struct lastref_result *v;
	int watchpoints;
	size_t n = session__lastref_results(lv->sess, &v, &watchpoints);

	c->finished = true;
	c->json_status = write_json(c, watchpoints, v, n);
}

int lastref_cmd__main(int argc, char **argv)
{
	char *run_argv[32], err[512], *end;
	struct lastref_cmd c = { 0 };
	struct run_hooks hooks = { hook_start, hook_step, hook_finish, &c };
	unsigned long long id;
	struct options o;
	int ret, status;

	ret = lastref_cmd__parse(argc, argv, &c.a, run_argv, 32, err, sizeof(err));
	ret = options__parse_run_argv(ret, lastref_cmd__usage(), run_argv, &o, err, sizeof(err));
	if (ret >= 0)
		return ret;
	if (o.n_pids != 1) {
		err_line("lastref follows one process; give -p PID");
		return 2;
	}
	/* 16 hex digits: a stack_id as the JSON gives it. */
	id = strtoull(c.a.site, &end, 16);
	c.spec = (struct lastref_spec){
		.pid = c.a.pid, .site = c.a.site,
		.site_id = strlen(c.a.site) == 16 && !*end ? id : 0,
		.blocks = c.a.blocks, .max_stop_ms = o.scan_max_stop_ms,
		.out = print_verdict, .say = print_err_line, .ctx = &c,
	};
	status = run__main_hooked(&o, &hooks);
	/* The run ended before it began (its checks): the document says so. */
	if (!c.finished)
		c.json_status = write_json(&c, -1, NULL, 0);
	return c.json_status ? 1 : status;
}
