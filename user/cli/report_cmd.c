// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * report_cmd.c - `leaktop report SNAPSHOT.json` and `leaktop diff OLD.json NEW.json`: their
 * command lines, help texts and messages.  The work is elsewhere: snapshot_read.c reads the
 * files into models, report.c renders text exactly as batch mode does, export.c writes pprof
 * and folded stacks, diff.c compares.  Output goes to stdout, or with -o to a file replaced
 * atomically (as -j's snapshots are); nothing is written when the input is bad.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "util/atomic_file.h"
#include "util/msg.h"
#include "cli/options.h"
#include "view/diff.h"
#include "view/export.h"
#include "view/report.h"
#include "cli/report_cmd.h"
#include "view/snapshot_read.h"

static const char report_usage[] =
"Usage: leaktop report SNAPSHOT.json [OPTIONS]\n"
"Show a snapshot written by leaktop -j: the text report batch mode prints, or an export.\n"
"\n"
"Options:\n"
"  -f, --format FMT     text (default); json: the snapshot itself, filtered by --pid and\n"
"                       --top; pprof: gzipped pprof profile of the heap call sites;\n"
"                       folded: stacks with outstanding bytes, for flame graphs\n"
"  -o, --output FILE    write to FILE (replaced atomically) instead of stdout\n"
"  -n, --top N          call sites shown per process (text: default "
			OPT_STR(OPT_DEFAULT_TOP_SITES) "; json: all)\n"
"  -p, --pid PID        only this process\n"
"      --pprof FILE     also write a pprof profile to FILE\n"
"      --folded FILE    also write folded stacks to FILE\n"
"      --file-mode MODE of the files written (octal, default " OPT_STR(OPT_DEFAULT_FILE_MODE)
			"; the umask applies)\n"
"  -h, --help           this text\n"
"\n"
"Exit status: 0 success, 1 unreadable or invalid snapshot, 2 usage error.\n";

static const char diff_usage[] =
"Usage: leaktop diff OLD.json NEW.json [OPTIONS]\n"
"What grew between two snapshots written by leaktop -j.  Processes are matched by pid and\n"
"start time, or by command when the pids differ (another run); call sites by their\n"
"symbolized stacks.  For each: outstanding bytes, blocks and descriptors before and after,\n"
"the change and the change per second; new and vanished ones; largest growth first.\n"
"\n"
"Options:\n"
"      --json           machine-readable output (schema \"" DIFF_SCHEMA "\")\n"
"  -o, --output FILE    write to FILE (replaced atomically) instead of stdout\n"
"      --file-mode MODE of FILE (octal, default " OPT_STR(OPT_DEFAULT_FILE_MODE)
			"; the umask applies)\n"
"  -n, --top N          changed call sites shown per process in text (default "
			OPT_STR(OPT_DEFAULT_TOP_SITES) ")\n"
"  -h, --help           this text\n"
"\n"
"Exit status: 0 success, 1 unreadable or invalid snapshot, 2 usage error.\n";

/* --file-mode: the mode of the files written from now on.  0 or -EINVAL (said). */
static int set_file_mode(const char *arg)
{
	unsigned int mode;

	if (options__parse_mode(arg, &mode)) {
		err_line("invalid --file-mode '%s': expected an octal mode such as 0600 or 0640",
			 arg);
		return -EINVAL;
	}
	atomic_file__set_mode(mode);
	return 0;
}

/* The usage error for getopt's verdict c on argv; always 2. */
static int bad_option(const char *cmd, int c, char **argv)
{
	if (c == ':')
		err_line("option '%s' needs a value; see leaktop %s --help", argv[optind - 1], cmd);
	else if (optopt && optopt < 256)
		err_line("unknown option '-%c'; see leaktop %s --help", optopt, cmd);
	else
		err_line("unknown option '%s'; see leaktop %s --help", argv[optind - 1], cmd);
	return 2;
}

/* ---------------------------------------------------------------- output */

struct job {
	const char *path;
	struct json_t *root;
	struct model m;
	struct snapshot_info info;
	unsigned int top;
	bool top_set;
	uint32_t pid;
	const struct diff *diff;
};

typedef int (*write_fn)(FILE *out, const struct job *j);

/* -n/--top: how many call sites per process.  0 or -EINVAL (said). */
static int set_top(const char *arg, struct job *j)
{
	unsigned long n;

	if (options__parse_uint(arg, 1, OPT_MAX_TOP, &n)) {
		err_line("invalid --top '%s': expected a positive number", arg);
		return -EINVAL;
	}
	j->top = n;
	j->top_set = true;
	return 0;
}

/* fn's output to path (replaced atomically), or to stdout when path is NULL; 0 or 1. */
static int write_out(const char *path, write_fn fn, const struct job *j)
{
	struct atomic_file af;
	char msg[4200];
	int ret;

	if (!path) {
		ret = fn(stdout, j);
		if (ret)
			err_line("cannot write to stdout: %s", strerror(-ret));
		return ret ? 1 : 0;
	}
	ret = atomic_file__open(&af, path);
	if (!ret) {
		ret = fn(af.f, j);
		ret = atomic_file__close(&af, !ret) ?: ret;
	}
	if (ret)
		err_line("%s", msg__write_failed(msg, sizeof(msg), path, ret));
	return ret ? 1 : 0;
}

static int write_text(FILE *out, const struct job *j)
{
	struct report_opts ro = { .top_sites = j->top };

	report__write(out, &j->m, &ro);
	return ferror(out) ? -EIO : 0;
}

/* The snapshot as read, with only --pid's processes and --top's first sites of each. */
static int write_json(FILE *out, const struct job *j)
{
	json_t *procs = json_object_get(j->root, "processes"), *p, *sites;
	size_t i = json_array_size(procs);

	while (i-- > 0) {
		p = json_array_get(procs, i);
		if (j->pid && json_integer_value(json_object_get(p, "pid")) != j->pid) {
			json_array_remove(procs, i);
			continue;
		}
		sites = json_object_get(p, "sites");
		for (size_t k = json_array_size(sites); j->top_set && k-- > j->top;)
			json_array_remove(sites, k);
	}
	if (json_dumpf(j->root, out, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) ||
	    fputc('\n', out) == EOF || fflush(out))
		return -EIO;
	return 0;
}

/*
 * No build ids: a snapshot names modules by the paths the processes saw, and nothing says
 * which file (device, inode) such a path leads to here, if any.  The live run's --pprof has
 * them, from the files it symbolized.
 */
static struct export_opts snapshot_export_opts(const struct job *j)
{
	return (struct export_opts){ .time_s = j->info.time_s, .duration_s = j->info.elapsed_s };
}

static int write_pprof(FILE *out, const struct job *j)
{
	struct export_opts eo = snapshot_export_opts(j);

	return export__pprof(out, &j->m, &eo);
}

static int write_folded(FILE *out, const struct job *j)
{
	return export__folded(out, &j->m);
}

static const struct {
	const char *name;
	write_fn fn;
	bool binary;		/* not for a terminal */
} formats[] = {
	{ "text", write_text, false },
	{ "json", write_json, false },
	{ "pprof", write_pprof, true },
	{ "folded", write_folded, false },
};

#define N_FORMATS (sizeof(formats) / sizeof(formats[0]))

/* ---------------------------------------------------------------- leaktop report */

enum { OPT_PPROF = 1000, OPT_FOLDED, OPT_JSON, OPT_FILE_MODE };

static const struct option report_opts[] = {
	{ "format", required_argument, NULL, 'f' },
	{ "output", required_argument, NULL, 'o' },
	{ "top", required_argument, NULL, 'n' },
	{ "pid", required_argument, NULL, 'p' },
	{ "pprof", required_argument, NULL, OPT_PPROF },
	{ "folded", required_argument, NULL, OPT_FOLDED },
	{ "file-mode", required_argument, NULL, OPT_FILE_MODE },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int report_cmd__report(int argc, char **argv)
{
	const char *output = NULL, *pprof = NULL, *folded = NULL;
	struct snapshot_read_opts ro = {};
	struct job j = { .top = OPT_DEFAULT_TOP_SITES };
	size_t fmt = 0;
	unsigned long n;
	char err[1024];
	int c, ret;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:o:n:p:h", report_opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			for (fmt = 0; fmt < N_FORMATS; fmt++)
				if (!strcmp(optarg, formats[fmt].name))
					break;
			if (fmt == N_FORMATS) {
				err_line("unknown format '%s': use text, json, pprof or folded",
					 optarg);
				return 2;
			}
			break;
		case 'o':
			output = optarg;
			break;
		case 'n':
			if (set_top(optarg, &j))
				return 2;
			break;
		case 'p':
			if (options__parse_uint(optarg, 1, 0x7fffffff, &n)) {
				err_line("invalid PID '%s': expected a positive number", optarg);
				return 2;
			}
			j.pid = ro.pid = n;
			break;
		case OPT_PPROF:
			pprof = optarg;
			break;
		case OPT_FOLDED:
			folded = optarg;
			break;
		case OPT_FILE_MODE:
			if (set_file_mode(optarg))
				return 2;
			break;
		case 'h':
			fputs(report_usage, stdout);
			return 0;
		default:
			return bad_option("report", c, argv);
		}
	}
	if (argc - optind != 1) {
		err_line(argc == optind ? "missing snapshot file: leaktop report SNAPSHOT.json" :
			 "too many arguments: leaktop report takes one snapshot file");
		return 2;
	}
	if (formats[fmt].binary && !output && isatty(STDOUT_FILENO)) {
		err_line("not writing a binary %s profile to a terminal; add -o FILE or redirect "
			 "stdout", formats[fmt].name);
		return 2;
	}
	j.path = argv[optind];

	ret = snapshot__load(j.path, &j.root, err, sizeof(err));
	if (!ret)
		ret = snapshot__from_json(j.root, j.path, &ro, &j.m, &j.info, err, sizeof(err));
	if (ret) {
		err_line("%s", err);
		ret = 1;
		goto out;
	}
	if (j.pid && !j.m.n_procs) {
		err_line("no process with PID %u in %s; leave out --pid to see every process",
			 j.pid, j.path);
		ret = 1;
		goto out;
	}
	ret = pprof ? write_out(pprof, write_pprof, &j) : 0;
	if (!ret && folded)
		ret = write_out(folded, write_folded, &j);
	if (!ret)
		ret = write_out(output, formats[fmt].fn, &j);
out:
	model__free(&j.m);
	json_decref(j.root);
	return ret;
}

/* ---------------------------------------------------------------- leaktop diff */

static const struct option diff_opts[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ "file-mode", required_argument, NULL, OPT_FILE_MODE },
	{ "output", required_argument, NULL, 'o' },
	{ "top", required_argument, NULL, 'n' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int write_diff_text(FILE *out, const struct job *j)
{
	struct diff_text_opts o = { .top_sites = j->top };

	return diff__write_text(out, j->diff, &o);
}

static int write_diff_json(FILE *out, const struct job *j)
{
	return diff__write_json(out, j->diff);
}

int report_cmd__diff(int argc, char **argv)
{
	struct model m[2] = {};
	struct snapshot_info info[2];
	struct diff_side side[2];
	struct diff d = {};
	struct job j = { .top = OPT_DEFAULT_TOP_SITES, .diff = &d };
	const char *output = NULL;
	bool json = false;
	char err[1024];
	int c, ret = 0;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:n:h", diff_opts, NULL)) != -1) {
		switch (c) {
		case OPT_JSON:
			json = true;
			break;
		case OPT_FILE_MODE:
			if (set_file_mode(optarg))
				return 2;
			break;
		case 'o':
			output = optarg;
			break;
		case 'n':
			if (set_top(optarg, &j))
				return 2;
			break;
		case 'h':
			fputs(diff_usage, stdout);
			return 0;
		default:
			return bad_option("diff", c, argv);
		}
	}
	if (argc - optind != 2) {
		err_line("%s: leaktop diff OLD.json NEW.json", argc - optind < 2 ?
			 "diff needs two snapshot files" : "too many arguments");
		return 2;
	}
	for (int i = 0; i < 2 && !ret; i++) {
		ret = snapshot__read_file(argv[optind + i], NULL, &m[i], &info[i], err,
					  sizeof(err));
		side[i] = (struct diff_side){ argv[optind + i], &m[i], &info[i] };
	}
	if (ret) {
		err_line("%s", err);
		ret = 1;
		goto out;
	}
	if (diff__compute(&side[0], &side[1], &d)) {
		err_line("out of memory comparing the snapshots; free some memory and retry");
		ret = 1;
		goto out;
	}
	ret = write_out(output, json ? write_diff_json : write_diff_text, &j);
out:
	diff__free(&d);
	model__free(&m[0]);
	model__free(&m[1]);
	return ret;
}
