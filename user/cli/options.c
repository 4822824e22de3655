// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * options.c - parsing of the `leaktop` command line into struct options.
 *
 * Pure: no I/O and no state of its own (only getopt's, reset on each call), so every
 * accepted and rejected form is unit-tested.  The result points into argv (see options.h).
 * Number parsing is strict (the whole argument must be a number in range); anything else is
 * a usage error described in one line.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/options.h"
#include "bpf/leaktop.h"

static const char usage_text[] =
"Usage: leaktop [OPTIONS]                      trace the whole system\n"
"       leaktop [OPTIONS] -p PID[,PID...]      trace these processes\n"
"       leaktop [OPTIONS] -- CMD [ARG...]      run CMD and trace it and its children\n"
"       leaktop report SNAPSHOT.json [OPTIONS] show a saved snapshot (report --help)\n"
"       leaktop diff OLD.json NEW.json [--json] what grew between two (diff --help)\n"
"       leaktop scan -p PID [-i SEC] [-d SEC]   find lost blocks by reachability (scan --help)\n"
"\n"
"Options:\n"
"  -p, --pid LIST          comma-separated PIDs to watch (default: whole system)\n"
"  -i, --interval SEC      sampling interval, fractions allowed (default 1)\n"
"  -d, --duration SEC      stop after SEC seconds (0: until Ctrl-C or CMD exits)\n"
"  -b, --batch             plain-text report on stdout each interval, no curses UI\n"
"  -j, --json PATH         write a snapshot each interval, replaced atomically;\n"
"                          '-' writes one snapshot per line (JSON Lines) on stdout\n"
"      --pprof FILE        write a gzipped pprof profile of the heap call sites each\n"
"                          interval, replaced atomically\n"
"      --folded FILE       write folded stacks (for flame graphs) each interval,\n"
"                          replaced atomically\n"
"  -r, --resources LIST    what to track: heap, fd (default: all)\n"
"      --stack-depth N     user stack frames kept per call site (1-127, default 32)\n"
"  -n, --top N             call sites shown per process in the text report (default 10)\n"
"      --window N          samples of history the growth verdicts use (8-3600, default 40)\n"
"      --scan-every SEC    stop the traced processes briefly every SEC seconds to find\n"
"                          the blocks no pointer reaches any more (needs -p or --)\n"
"  -v, --verbose           show libbpf's messages and probe placement\n"
"      --probe-floor WHERE for benchmarks: attach empty programs instead, at every\n"
"                          function's entry ('entry') or where leaktop's go ('planned')\n"
"  -h, --help              this text\n"
"  -V, --version           print the version\n"
"\n"
"Needs root, or CAP_BPF + CAP_PERFMON + CAP_SYS_PTRACE.\n"
"Exit status: 0 success, 1 runtime failure, 2 usage error.\n";

const char *options__usage(void)
{
	return usage_text;
}

static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int parse_seconds(const char *s, double min, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < min || v > 1e7)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_pids(const char *list, struct options *o, char *err, size_t len)
{
	char buf[1024], *save = NULL, *tok;
	unsigned long pid;

	if (strlen(list) >= sizeof(buf) || !*list)
		return fail(err, len, "invalid PID list '%s': expected PID[,PID...]", list);
	strcpy(buf, list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (parse_uint(tok, 1, INT_MAX, &pid))
			return fail(err, len, "invalid PID '%s': expected a positive number", tok);
		if (o->n_pids == OPT_MAX_PIDS)
			return fail(err, len, "too many PIDs: at most %d", OPT_MAX_PIDS);
		o->pids[o->n_pids++] = (int)pid;
	}
	if (!o->n_pids)
		return fail(err, len, "invalid PID list '%s': expected PID[,PID...]", list);
	return 0;
}

static const struct {
	const char *name;
	unsigned int bit;
} resource_names[] = {
	{ "heap", RES_HEAP },
	{ "fd", RES_FD },
	{ "all", RES_ALL },
};

static int parse_resources(const char *list, unsigned int *out, char *err, size_t len)
{
	char buf[256], *save = NULL, *tok;
	unsigned int bits = 0;
	size_t i;

	if (strlen(list) >= sizeof(buf))
		return fail(err, len, "invalid resource list '%s'", list);
	strcpy(buf, list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < sizeof(resource_names) / sizeof(resource_names[0]); i++)
			if (!strcmp(tok, resource_names[i].name))
				break;
		if (i == sizeof(resource_names) / sizeof(resource_names[0]))
			return fail(err, len, "unknown resource '%s': use heap, fd or both", tok);
		bits |= resource_names[i].bit;
	}
	if (!bits)
		return fail(err, len, "empty resource list: use heap, fd or both");
	*out = bits;
	return 0;
}

enum { OPT_STACK_DEPTH = 1000, OPT_PROBE_FLOOR, OPT_WINDOW, OPT_PPROF, OPT_FOLDED,
       OPT_SCAN_EVERY };

static const struct option long_opts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "interval", required_argument, NULL, 'i' },
	{ "duration", required_argument, NULL, 'd' },
	{ "batch", no_argument, NULL, 'b' },
	{ "json", required_argument, NULL, 'j' },
	{ "resources", required_argument, NULL, 'r' },
	{ "stack-depth", required_argument, NULL, OPT_STACK_DEPTH },
	{ "top", required_argument, NULL, 'n' },
	{ "probe-floor", required_argument, NULL, OPT_PROBE_FLOOR },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "pprof", required_argument, NULL, OPT_PPROF },
	{ "folded", required_argument, NULL, OPT_FOLDED },
	{ "scan-every", required_argument, NULL, OPT_SCAN_EVERY },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static void defaults(struct options *o)
{
	memset(o, 0, sizeof(*o));
	o->interval_s = 1.0;
	o->resources = RES_ALL;
	o->stack_depth = LT_DEFAULT_STACK_DEPTH;
	o->top_sites = 10;
	o->window = 40;
}

int options__parse(int argc, char **argv, struct options *o, char *err, size_t len)
{
	unsigned long n;
	int c, ret;

	defaults(o);
	err[0] = '\0';

	/* "+": stop at the first non-option so CMD's own options are left alone. */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:p:i:d:bj:r:n:vhV", long_opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			ret = parse_pids(optarg, o, err, len);
			if (ret)
				return ret;
			break;
		case 'i':
			if (parse_seconds(optarg, 0.01, &o->interval_s))
				return fail(err, len, "invalid interval '%s': expected seconds >= 0.01",
					    optarg);
			break;
		case 'd':
			if (parse_seconds(optarg, 0, &o->duration_s))
				return fail(err, len, "invalid duration '%s': expected seconds >= 0",
					    optarg);
			break;
		case 'b':
			o->batch = true;
			o->batch_set = true;
			break;
		case 'j':
			if (!*optarg)
				return fail(err, len, "empty --json path: give a file name or '-'");
			o->json_path = optarg;
			break;
		case OPT_PPROF:
			if (!*optarg)
				return fail(err, len, "empty --pprof path: give a file name");
			o->pprof_path = optarg;
			break;
		case OPT_FOLDED:
			if (!*optarg)
				return fail(err, len, "empty --folded path: give a file name");
			o->folded_path = optarg;
			break;
		case OPT_SCAN_EVERY:
			if (parse_seconds(optarg, 0.01, &o->scan_every_s))
				return fail(err, len, "invalid --scan-every '%s': expected seconds >= "
					    "0.01", optarg);
			break;
		case 'r':
			ret = parse_resources(optarg, &o->resources, err, len);
			if (ret)
				return ret;
			break;
		case OPT_STACK_DEPTH:
			if (parse_uint(optarg, 1, LT_MAX_STACK_DEPTH, &n))
				return fail(err, len, "invalid stack depth '%s': expected 1 to %d",
					    optarg, LT_MAX_STACK_DEPTH);
			o->stack_depth = n;
			break;
		case 'n':
			if (parse_uint(optarg, 1, 100000, &n))
				return fail(err, len, "invalid --top '%s': expected a positive number",
					    optarg);
			o->top_sites = n;
			break;
		case OPT_WINDOW:
			if (parse_uint(optarg, 8, 3600, &n))
				return fail(err, len, "invalid --window '%s': expected 8 to 3600 samples",
					    optarg);
			o->window = n;
			break;
		case OPT_PROBE_FLOOR:
			if (!strcmp(optarg, "entry"))
				o->probe_floor = 1;
			else if (!strcmp(optarg, "planned"))
				o->probe_floor = 2;
			else
				return fail(err, len, "invalid --probe-floor '%s': use entry or planned",
					    optarg);
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			o->help = true;
			return 0;
		case 'V':
			o->version = true;
			return 0;
		case ':':
			return fail(err, len, "option '%s' needs a value; see leaktop --help",
				    argv[optind - 1]);
		default:
			if (optopt && optopt < 256)
				return fail(err, len, "unknown option '-%c'; see leaktop --help",
					    optopt);
			return fail(err, len, "unknown option '%s'; see leaktop --help",
				    argv[optind - 1]);
		}
	}

	if (optind < argc) {
		if (strcmp(argv[optind - 1], "--"))
			return fail(err, len, "unexpected argument '%s'; to run a command put it "
				    "after '--'", argv[optind]);
		o->cmd = &argv[optind];
		o->mode = MODE_COMMAND;
	} else if (optind > 0 && optind <= argc && !strcmp(argv[optind - 1], "--")) {
		return fail(err, len, "missing command after '--': leaktop -- CMD [ARG...]");
	}
	if (o->n_pids && o->mode == MODE_COMMAND)
		return fail(err, len, "-p and -- CMD cannot be combined: choose one");
	if (o->n_pids)
		o->mode = MODE_PIDS;
	if (o->scan_every_s > 0 && o->mode == MODE_SYSTEM)
		return fail(err, len, "--scan-every scans traced processes: give -p PID or -- CMD");
	return 0;
}

int options__parse_scan(int argc, char **argv, struct options *o, char *err, size_t len)
{
	const char *pid = NULL;
	int ret;

	defaults(o);
	err[0] = '\0';
	o->mode = MODE_PIDS;
	o->batch = o->batch_set = true;
	o->scan_every_s = o->interval_s;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			o->help = true;
			return 0;
		}
		if (strcmp(a, "-p") && strcmp(a, "-i") && strcmp(a, "-d") && strcmp(a, "-j"))
			return fail(err, len, "unknown scan argument '%s'; see leaktop scan --help",
				    a);
		if (i + 1 >= argc)
			return fail(err, len, "option '%s' needs a value; see leaktop scan --help",
				    a);
		a = argv[++i];
		switch (argv[i - 1][1]) {
		case 'p':
			pid = a;
			break;
		case 'i':
			if (parse_seconds(a, 0.01, &o->interval_s))
				return fail(err, len, "invalid interval '%s': expected seconds >= 0.01",
					    a);
			o->scan_every_s = o->interval_s;
			break;
		case 'd':
			if (parse_seconds(a, 0, &o->duration_s))
				return fail(err, len, "invalid duration '%s': expected seconds >= 0", a);
			break;
		default:
			if (!*a)
				return fail(err, len, "empty --json path: give a file name or '-'");
			o->json_path = a;
			break;
		}
	}
	if (!pid)
		return fail(err, len, "scan needs a process; give -p PID");
	ret = parse_pids(pid, o, err, len);
	if (ret)
		return ret;
	if (o->n_pids != 1)
		return fail(err, len, "scan takes one process; give -p PID");
	return 0;
}

const char *options__scan_usage(void)
{
	return "usage: leaktop scan -p PID [-i SEC] [-d SEC] [-j FILE]\n"
	       "Trace PID like `leaktop -p PID` and, every interval, stop it briefly to find the\n"
	       "blocks allocated while traced that no pointer reaches any more.\n"
	       "  -p PID    process to scan\n"
	       "  -i SEC    seconds between scans (default 1)\n"
	       "  -d SEC    stop after SEC seconds (default: until Ctrl-C or the process exits)\n"
	       "  -j FILE   write the JSON snapshot to FILE ('-': JSON Lines on stdout)\n";
}
