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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "cli/options.h"
#include "util/msg.h"

static const char usage_text[] =
"Usage: leaktop [OPTIONS]                      trace the whole system\n"
"       leaktop [OPTIONS] -p PID[,PID...]      trace these processes\n"
"       leaktop [OPTIONS] -- CMD [ARG...]      run CMD and trace it and its children\n"
"       leaktop report SNAPSHOT.json [OPTIONS] show a saved snapshot (report --help)\n"
"       leaktop diff OLD.json NEW.json [--json] what grew between two (diff --help)\n"
"       leaktop scan -p PID [-i SEC] [-d SEC]   find lost blocks by reachability (scan --help)\n"
"       leaktop lastref -p PID --site SITE      where the last pointer to its blocks is lost\n"
"                                               (lastref --help)\n"
"\n"
"Options:\n"
"  -p, --pid LIST          comma-separated PIDs to watch (default: whole system)\n"
"  -i, --interval SEC      sampling interval, fractions allowed (default "
				OPT_STR(OPT_DEFAULT_INTERVAL_S) ")\n"
"  -d, --duration SEC      stop after SEC seconds (0: until Ctrl-C or CMD exits)\n"
"  -b, --batch             plain-text report on stdout each interval, no curses UI\n"
"  -j, --json PATH         write a snapshot each interval, replaced atomically;\n"
"                          '-' writes one snapshot per line (JSON Lines) on stdout\n"
"      --pprof FILE        write a gzipped pprof profile of the heap call sites each\n"
"                          interval, replaced atomically\n"
"      --folded FILE       write folded stacks (for flame graphs) each interval,\n"
"                          replaced atomically\n"
"      --oom-dir DIR       where a watched process's full snapshot goes when the OOM\n"
"                          killer chooses it, as leaktop-oom-PID-TIME.json (default:\n"
"                          the -j file's directory, else the current one)\n"
"      --oom-max-files N   OOM snapshots kept in that directory, the oldest removed\n"
"                          first (0: no limit; default " OPT_STR(OOM_DEFAULT_MAX_FILES) ")\n"
"      --oom-max-bytes SIZE\n"
"                          their bytes at most, the oldest removed first (K, M, G;\n"
"                          0: no limit; default 64M)\n"
"      --oom-min-gap SEC   at most one OOM snapshot per cgroup every SEC seconds\n"
"                          (0: every victim; default " OPT_STR(OOM_DEFAULT_MIN_GAP_S) ")\n"
"      --stop-at SITE:N    stop the process (SIGSTOP) at the return of allocation N\n"
"                          (1-based) of SITE: a function in the site's stack, or a\n"
"                          site id (the JSON's stack_id); leaktop then writes its\n"
"                          report and exits, the process stays stopped (-p or --)\n"
"      --listen ADDR:PORT  serve OpenMetrics at http://ADDR:PORT/metrics, refreshed each\n"
"                          interval; PORT alone listens on 127.0.0.1 only, '*:PORT'\n"
"                          on every IPv4 address, '[::1]:PORT' on IPv6\n"
"      --listen-auth FILE  answer /metrics only with HTTP basic auth: FILE holds one line\n"
"                          user:password (owned by root, mode 0600)\n"
"      --listen-token FILE answer /metrics only with the bearer token FILE holds\n"
"                          (owned by root, mode 0600)\n"
"      --metrics-sites N   flagged call sites exported on /metrics (0-"
				OPT_STR(OPT_MAX_METRICS_SITES) ", default "
				OPT_STR(OPT_DEFAULT_METRICS_SITES) ")\n"
"  -q, --quiet             no UI and no report on stdout: only the files, --listen\n"
"                          and -j - (for running as a service)\n"
"  -r, --resources LIST    what to track: heap, fd, mmap (default: all)\n"
"      --stack-depth N     user stack frames kept per call site (1-" OPT_STR(LT_MAX_STACK_DEPTH)
				", default " OPT_STR(OPT_DEFAULT_STACK_DEPTH) ")\n"
"      --unwind HOW        how stacks are walked: 'cfi' (default: each module's .eh_frame,\n"
"                          frame pointers where a module has none) or 'fp' (frame\n"
"                          pointers only)\n"
"  -n, --top N             call sites shown per process in the text report (default "
				OPT_STR(OPT_DEFAULT_TOP_SITES) ")\n"
"      --window N          samples of history the growth verdicts use ("
				OPT_STR(OPT_MIN_WINDOW) "-" OPT_STR(OPT_MAX_WINDOW) ", default "
				OPT_STR(OPT_DEFAULT_WINDOW) ")\n"
"      --scan-every SEC    stop the traced processes briefly every SEC seconds to find\n"
"                          the blocks no pointer reaches any more (needs -p or --)\n"
"      --scan-max-stop MS  longest a scan keeps a process stopped; past it the scan gives\n"
"                          up, partial (1-" OPT_STR(OPT_MAX_SCAN_STOP_MS) ", default "
				OPT_STR(OPT_MAX_SCAN_STOP_MS) ")\n"
"      --budget PCT        whole system: the share of all CPUs heap tracing may cost,\n"
"                          over 30 s; past it the costliest processes are released\n"
"                          (sites kept) and growing ones traced (default "
				OPT_STR(HEAPMODE_DEFAULT_BUDGET_PCT_TEXT) ")\n"
"      --max-suspects N    whole system, over budget: most processes heap-traced as\n"
"                          suspects at once (0-" OPT_STR(HEAPMODE_MAX_SUSPECTS) ", default "
				OPT_STR(HEAPMODE_DEFAULT_MAX_SUSPECTS) ")\n"
"      --map-share PCT     the share of each of leaktop's kernel tables (live blocks,\n"
"                          descriptors, mappings, call sites) one process may hold;\n"
"                          its records beyond it are counted lost (1-100, default 25)\n"
"      --exact             whole system: trace every process's heap whatever it costs\n"
"      --agent             trace the heap inside the process (libleaktop-agent.so,\n"
"                          preloaded under --, injected with -p): near-native cost\n"
"      --file-mode MODE    mode of the files written (octal, default "
				OPT_STR(OPT_DEFAULT_FILE_MODE) "; the umask applies)\n"
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

/*
 * An output path given to --NAME: not empty, and not "--", which getopt hands over as the
 * argument when the path was forgotten before a command (`-j -- CMD`).
 */
static int check_path_arg(const char *name, const char *arg, bool stdout_ok, char *err,
			  size_t len)
{
	if (!*arg)
		return msg__set(err, len, -EINVAL, "empty --%s path: give a file name%s", name,
				stdout_ok ? " or '-'" : "");
	if (!strcmp(arg, "--"))
		return msg__set(err, len, -EINVAL, "--%s needs a file name%s before '--'", name,
				stdout_ok ? " or '-'" : "");
	return 0;
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

int options__parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out)
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

int options__parse_size(const char *s, uint64_t *out)
{
	static const struct {
		char suffix;
		unsigned int shift;
	} units[] = { { 'K', 10 }, { 'M', 20 }, { 'G', 30 }, { 'T', 40 } };
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	if (*end) {
		size_t i;

		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if ((*end & ~0x20) == units[i].suffix)
				break;
		if (i == sizeof(units) / sizeof(units[0]))
			return -EINVAL;
		shift = units[i].shift;
		end++;
		if (!strcmp(end, "iB") || !strcmp(end, "B"))
			end += strlen(end);
		if (*end)
			return -EINVAL;
	}
	if (shift && v > (UINT64_MAX >> shift))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

int options__parse_mode(const char *s, unsigned int *out)
{
	char *end;
	unsigned long v;

	if (!*s || strspn(s, "01234567") != strlen(s) || strlen(s) > 4)
		return -EINVAL;
	v = strtoul(s, &end, 8);
	if (*end || v > 0777)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_pids(const char *list, struct options *o, char *err, size_t len)
{
	char buf[1024], *save = NULL, *tok;
	unsigned long pid;

	if (strlen(list) >= sizeof(buf) || !*list)
		return msg__set(err, len, -EINVAL, "invalid PID list '%s': expected PID[,PID...]",
				list);
	strcpy(buf, list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (options__parse_uint(tok, 1, INT_MAX, &pid))
			return msg__set(err, len, -EINVAL, "invalid PID '%s': expected a positive "
					"number", tok);
		if (o->n_pids == OPT_MAX_PIDS)
			return msg__set(err, len, -EINVAL, "too many PIDs: at most %d",
					OPT_MAX_PIDS);
		o->pids[o->n_pids++] = (int)pid;
	}
	if (!o->n_pids)
		return msg__set(err, len, -EINVAL, "invalid PID list '%s': expected PID[,PID...]",
				list);
	return 0;
}

static const struct {
	const char *name;
	unsigned int bit;
} resource_names[] = {
	{ "heap", RES_HEAP },
	{ "fd", RES_FD },
	{ "mmap", RES_MMAP },
	{ "all", RES_ALL },
};

static int parse_resources(const char *list, unsigned int *out, char *err, size_t len)
{
	char buf[256], *save = NULL, *tok;
	unsigned int bits = 0;
	size_t i;

	if (strlen(list) >= sizeof(buf))
		return msg__set(err, len, -EINVAL, "invalid resource list '%s'", list);
	strcpy(buf, list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < sizeof(resource_names) / sizeof(resource_names[0]); i++)
			if (!strcmp(tok, resource_names[i].name))
				break;
		if (i == sizeof(resource_names) / sizeof(resource_names[0]))
			return msg__set(err, len, -EINVAL, "unknown resource '%s': use heap, fd or "
					"both", tok);
		bits |= resource_names[i].bit;
	}
	if (!bits)
		return msg__set(err, len, -EINVAL, "empty resource list: use heap, fd or both");
	*out = bits;
	return 0;
}

enum { OPT_STACK_DEPTH = 1000, OPT_PROBE_FLOOR, OPT_WINDOW, OPT_PPROF, OPT_FOLDED,
       OPT_SCAN_EVERY, OPT_SCAN_MAX_STOP, OPT_FILE_MODE, OPT_BUDGET, OPT_MAX_SUSPECTS,
       OPT_MAP_SHARE,
       OPT_EXACT, OPT_UNWIND, OPT_LISTEN, OPT_METRICS_SITES, OPT_OOM_DIR,
       OPT_STOP_AT, OPT_OOM_MAX_FILES, OPT_OOM_MAX_BYTES, OPT_OOM_MIN_GAP,
       OPT_LISTEN_AUTH, OPT_LISTEN_TOKEN, OPT_AGENT };

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
	{ "scan-max-stop", required_argument, NULL, OPT_SCAN_MAX_STOP },
	{ "file-mode", required_argument, NULL, OPT_FILE_MODE },
	{ "budget", required_argument, NULL, OPT_BUDGET },
	{ "max-suspects", required_argument, NULL, OPT_MAX_SUSPECTS },
	{ "map-share", required_argument, NULL, OPT_MAP_SHARE },
	{ "exact", no_argument, NULL, OPT_EXACT },
	{ "agent", no_argument, NULL, OPT_AGENT },
	{ "unwind", required_argument, NULL, OPT_UNWIND },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "listen-auth", required_argument, NULL, OPT_LISTEN_AUTH },
	{ "listen-token", required_argument, NULL, OPT_LISTEN_TOKEN },
	{ "metrics-sites", required_argument, NULL, OPT_METRICS_SITES },
	{ "quiet", no_argument, NULL, 'q' },
	{ "oom-dir", required_argument, NULL, OPT_OOM_DIR },
	{ "oom-max-files", required_argument, NULL, OPT_OOM_MAX_FILES },
	{ "oom-max-bytes", required_argument, NULL, OPT_OOM_MAX_BYTES },
	{ "oom-min-gap", required_argument, NULL, OPT_OOM_MIN_GAP },
	{ "stop-at", required_argument, NULL, OPT_STOP_AT },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static void defaults(struct options *o)
{
	memset(o, 0, sizeof(*o));
	o->interval_s = OPT_DEFAULT_INTERVAL_S;
	o->resources = RES_ALL;
	o->stack_depth = OPT_DEFAULT_STACK_DEPTH;
	o->top_sites = OPT_DEFAULT_TOP_SITES;
	o->window = OPT_DEFAULT_WINDOW;
	o->file_mode = OPT_DEFAULT_FILE_MODE;
	o->scan_max_stop_ms = OPT_MAX_SCAN_STOP_MS;
	o->budget_pct = HEAPMODE_DEFAULT_BUDGET_PCT;
	o->max_suspects = HEAPMODE_DEFAULT_MAX_SUSPECTS;
	o->map_share_pct = 100 / LT_SHARE_DIV;
	o->unwind_cfi = true;
	o->metrics_sites = OPT_DEFAULT_METRICS_SITES;
	o->oom.max_files = OOM_DEFAULT_MAX_FILES;
	o->oom.max_bytes = OOM_DEFAULT_MAX_BYTES;
	o->oom.min_gap_s = OOM_DEFAULT_MIN_GAP_S;
}

int options__parse_stop_at(const char *s, char *fn, size_t len, uint64_t *hash, uint64_t *seq)
{
	const char *colon = strrchr(s, ':'), *site = s;
	size_t site_len = colon ? (size_t)(colon - s) : 0;
	unsigned long n;

	*hash = 0;
	*seq = 0;
	fn[0] = '\0';
	if (!colon || !site_len || options__parse_uint(colon + 1, 1, ULONG_MAX, &n))
		return -EINVAL;
	if (site_len > 2 && !strncmp(site, "0x", 2)) {
		site += 2;
		site_len -= 2;
	}
	if (site_len == 16 && strspn(site, "0123456789abcdefABCDEF") >= 16) {
		char hex[17];

		memcpy(hex, site, 16);
		hex[16] = '\0';
		*hash = strtoull(hex, NULL, 16);
		if (!*hash)
			return -EINVAL;
	} else {
		if ((size_t)(colon - s) >= len || memchr(s, ' ', colon - s) == s)
			return -EINVAL;
		memcpy(fn, s, colon - s);
		fn[colon - s] = '\0';
	}
	*seq = n;
	return 0;
}

int options__parse_listen(const char *s, struct sockaddr_storage *addr, socklen_t *len)
{
	char host[OPT_LISTEN_LEN];
	const char *colon = strrchr(s, ':'), *port_s = colon ? colon + 1 : s;
	unsigned long port;
	size_t host_len;

	memset(addr, 0, sizeof(*addr));
	if (options__parse_uint(port_s, 1, 65535, &port))
		return -EINVAL;
	host_len = colon ? (size_t)(colon - s) : 0;
	if (host_len >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, host_len);
	host[host_len] = '\0';
	if (host[0] == '[') {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)addr;

		if (host_len < 3 || host[host_len - 1] != ']')
			return -EINVAL;
		host[host_len - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &a6->sin6_addr) != 1)
			return -EINVAL;
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(port);
		*len = sizeof(*a6);
		return 0;
	}
	struct sockaddr_in *a4 = (struct sockaddr_in *)addr;

	a4->sin_family = AF_INET;
	a4->sin_port = htons(port);
	*len = sizeof(*a4);
	if (!colon || !strcmp(host, "localhost"))
		a4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	else if (!strcmp(host, "*"))
		a4->sin_addr.s_addr = htonl(INADDR_ANY);
	else if (inet_pton(AF_INET, host, &a4->sin_addr) != 1)
		return -EINVAL;
	return 0;
}

/* One option of the whole-system budget and the maps' shares: as parse_trace_opt. */
static int parse_budget_opt(int c, struct options *o, char *err, size_t len)
{
	unsigned long n;

	switch (c) {
	case OPT_BUDGET:
		if (parse_seconds(optarg, 0, &o->budget_pct) || o->budget_pct <= 0 ||
		    o->budget_pct > 100)
			return msg__set(err, len, -EINVAL, "invalid --budget '%s': expected a "
					"percentage of the CPUs above 0 and up to 100", optarg);
		o->budget_set = true;
		break;
	case OPT_MAP_SHARE:
		if (options__parse_uint(optarg, 1, 100, &n))
			return msg__set(err, len, -EINVAL, "invalid --map-share '%s': "
					"expected 1 to 100 percent", optarg);
		o->map_share_pct = n;
		o->map_share_set = true;
		break;
	case OPT_MAX_SUSPECTS:
		if (options__parse_uint(optarg, 0, HEAPMODE_MAX_SUSPECTS, &n))
			return msg__set(err, len, -EINVAL, "invalid --max-suspects '%s': "
					"expected 0 to %d processes", optarg,
					HEAPMODE_MAX_SUSPECTS);
		o->max_suspects = n;
		o->budget_set = true;
		break;
	case OPT_EXACT:
		o->exact = true;
		o->budget_set = true;
		break;
	case OPT_AGENT:
		o->agent = true;
		break;
	default:
		return 1;
	}
	return 0;
}

/* One option of what is traced and how: 0, -EINVAL with one line in err, or 1: not one
 * of these. */
static int parse_trace_opt(int c, struct options *o, char *err, size_t len)
{
	unsigned long n;
	int ret;

	ret = parse_budget_opt(c, o, err, len);
	if (ret != 1)
		return ret;
	switch (c) {
	case 'p':
		ret = parse_pids(optarg, o, err, len);
		if (ret)
			return ret;
		break;
	case 'i':
		if (parse_seconds(optarg, 0.01, &o->interval_s))
			return msg__set(err, len, -EINVAL, "invalid interval '%s': "
					"expected seconds >= 0.01", optarg);
		break;
	case 'd':
		if (parse_seconds(optarg, 0, &o->duration_s))
			return msg__set(err, len, -EINVAL, "invalid duration '%s': "
					"expected seconds >= 0", optarg);
		break;
	case 'b':
		o->batch = true;
		o->batch_set = true;
		break;
	case OPT_STOP_AT:
		if (options__parse_stop_at(optarg, o->stop_at_fn, sizeof(o->stop_at_fn),
					   &o->stop_at_hash, &o->stop_at_seq))
			return msg__set(err, len, -EINVAL, "invalid --stop-at '%s': expected "
					"SITE:N, SITE a function name or a site id (16 hex "
					"digits), N an allocation number from 1", optarg);
		break;
	case OPT_SCAN_EVERY:
		if (parse_seconds(optarg, 0.01, &o->scan_every_s))
			return msg__set(err, len, -EINVAL, "invalid --scan-every '%s': "
					"expected seconds >= 0.01", optarg);
		break;
	case OPT_SCAN_MAX_STOP:
		if (options__parse_uint(optarg, 1, OPT_MAX_SCAN_STOP_MS, &n))
			return msg__set(err, len, -EINVAL, "invalid --scan-max-stop '%s': "
					"expected 1 to %d milliseconds", optarg,
					OPT_MAX_SCAN_STOP_MS);
		o->scan_max_stop_ms = n;
		break;
	case OPT_UNWIND:
		if (strcmp(optarg, "cfi") && strcmp(optarg, "fp"))
			return msg__set(err, len, -EINVAL, "invalid --unwind '%s': expected "
					"'cfi' or 'fp'", optarg);
		o->unwind_cfi = !strcmp(optarg, "cfi");
		break;
	case 'r':
		ret = parse_resources(optarg, &o->resources, err, len);
		if (ret)
			return ret;
		break;
	case OPT_STACK_DEPTH:
		if (options__parse_uint(optarg, 1, LT_MAX_STACK_DEPTH, &n))
			return msg__set(err, len, -EINVAL, "invalid stack depth '%s': "
					"expected 1 to %d", optarg, LT_MAX_STACK_DEPTH);
		o->stack_depth = n;
		break;
	case OPT_WINDOW:
		if (options__parse_uint(optarg, OPT_MIN_WINDOW, OPT_MAX_WINDOW, &n))
			return msg__set(err, len, -EINVAL, "invalid --window '%s': "
					"expected %d to %d samples",
					optarg, OPT_MIN_WINDOW, OPT_MAX_WINDOW);
		o->window = n;
		break;
	case OPT_PROBE_FLOOR:
		if (!strcmp(optarg, "entry"))
			o->probe_floor = 1;
		else if (!strcmp(optarg, "planned"))
			o->probe_floor = 2;
		else
			return msg__set(err, len, -EINVAL, "invalid --probe-floor '%s': "
					"use entry or planned", optarg);
		break;
	case 'v':
		o->verbose = true;
		break;
	default:
		return 1;
	}
	return 0;
}

/* One option of the outputs: as parse_trace_opt. */
static int parse_output_opt(int c, struct options *o, char *err, size_t len)
{
	unsigned long n;

	switch (c) {
	case 'j':
		if (check_path_arg("json", optarg, true, err, len))
			return -EINVAL;
		o->json_path = optarg;
		break;
	case OPT_PPROF:
		if (check_path_arg("pprof", optarg, false, err, len))
			return -EINVAL;
		o->pprof_path = optarg;
		break;
	case OPT_FOLDED:
		if (check_path_arg("folded", optarg, false, err, len))
			return -EINVAL;
		o->folded_path = optarg;
		break;
	case OPT_OOM_DIR:
		if (!*optarg || !strcmp(optarg, "--"))
			return msg__set(err, len, -EINVAL, "--oom-dir needs a directory; "
					"see leaktop --help");
		o->oom_dir = optarg;
		break;
	case OPT_OOM_MAX_FILES:
		if (options__parse_uint(optarg, 0, OPT_MAX_OOM_FILES, &n))
			return msg__set(err, len, -EINVAL, "invalid --oom-max-files '%s': "
					"expected 0 (no limit) to %d files", optarg,
					OPT_MAX_OOM_FILES);
		o->oom.max_files = n;
		break;
	case OPT_OOM_MAX_BYTES:
		if (options__parse_size(optarg, &o->oom.max_bytes))
			return msg__set(err, len, -EINVAL, "invalid --oom-max-bytes '%s': "
					"expected bytes, or a size such as 64M or 1G (0: no "
					"limit)", optarg);
		break;
	case OPT_OOM_MIN_GAP:
		if (parse_seconds(optarg, 0, &o->oom.min_gap_s))
			return msg__set(err, len, -EINVAL, "invalid --oom-min-gap '%s': "
					"expected seconds >= 0", optarg);
		break;
	case OPT_FILE_MODE:
		if (options__parse_mode(optarg, &o->file_mode))
			return msg__set(err, len, -EINVAL, "invalid --file-mode '%s': "
					"expected an octal mode such as 0600 or 0640",
					optarg);
		break;
	case 'n':
		if (options__parse_uint(optarg, 1, OPT_MAX_TOP, &n))
			return msg__set(err, len, -EINVAL, "invalid --top '%s': expected a "
					"positive number", optarg);
		o->top_sites = n;
		break;
	case OPT_LISTEN:
		if (strlen(optarg) >= sizeof(o->listen_text) ||
		    options__parse_listen(optarg, &o->listen_addr, &o->listen_len))
			return msg__set(err, len, -EINVAL, "invalid --listen '%s': expected "
					"PORT, ADDR:PORT or [IPv6]:PORT (an address, not a "
					"name; port 1-65535)", optarg);
		snprintf(o->listen_text, sizeof(o->listen_text), "%s", optarg);
		break;
	case OPT_LISTEN_AUTH:
		if (check_path_arg("listen-auth", optarg, false, err, len))
			return -EINVAL;
		o->listen_auth_path = optarg;
		break;
	case OPT_LISTEN_TOKEN:
		if (check_path_arg("listen-token", optarg, false, err, len))
			return -EINVAL;
		o->listen_token_path = optarg;
		break;
	case OPT_METRICS_SITES:
		if (options__parse_uint(optarg, 0, OPT_MAX_METRICS_SITES, &n))
			return msg__set(err, len, -EINVAL, "invalid --metrics-sites '%s': "
					"expected 0 to %d call sites", optarg,
					OPT_MAX_METRICS_SITES);
		o->metrics_sites = n;
		break;
	case 'q':
		o->quiet = true;
		break;
	default:
		return 1;
	}
	return 0;
}

/* After the options: the mode (CMD after --, -p) and the combinations refused. */
static int check_mode(int argc, char **argv, struct options *o, char *err, size_t len)
{
	if (optind < argc) {
		if (strcmp(argv[optind - 1], "--"))
			return msg__set(err, len, -EINVAL, "unexpected argument '%s'; to run a "
					"command put it after '--'", argv[optind]);
		o->cmd = &argv[optind];
		o->mode = MODE_COMMAND;
	} else if (optind > 0 && optind <= argc && !strcmp(argv[optind - 1], "--")) {
		return msg__set(err, len, -EINVAL, "missing command after '--': leaktop -- CMD "
				"[ARG...]");
	}
	if (o->n_pids && o->mode == MODE_COMMAND)
		return msg__set(err, len, -EINVAL, "-p and -- CMD cannot be combined: choose one");
	if (o->n_pids)
		o->mode = MODE_PIDS;
	if (o->budget_set && o->mode != MODE_SYSTEM)
		return msg__set(err, len, -EINVAL, "--budget, --max-suspects and --exact are for the "
				"whole system: -p and -- trace their processes exactly");
	if (o->agent && o->mode == MODE_SYSTEM)
		return msg__set(err, len, -EINVAL, "--agent traces the heap inside chosen processes: "
				"give -- CMD (preloaded) or -p PID (injected)");
	if (o->agent && (o->stop_at_seq || o->scan_every_s > 0))
		return msg__set(err, len, -EINVAL, "--stop-at and --scan-every use the uprobes' "
				"block records: leave out --agent for them");
	if (o->agent && !(o->resources & RES_HEAP))
		return msg__set(err, len, -EINVAL, "--agent traces the heap: keep heap in -r");
	if ((o->listen_auth_path || o->listen_token_path) && !o->listen_len)
		return msg__set(err, len, -EINVAL, "--listen-auth and --listen-token protect the "
				"--listen endpoint: give --listen ADDR:PORT too");
	if (o->scan_every_s > 0 && o->mode == MODE_SYSTEM)
		return msg__set(err, len, -EINVAL, "--scan-every scans traced processes: give -p "
				"PID or -- CMD");
	if (o->stop_at_seq && o->mode == MODE_SYSTEM)
		return msg__set(err, len, -EINVAL, "--stop-at stops a traced process: give -p PID "
				"or -- CMD");
	return 0;
}

int options__parse(int argc, char **argv, struct options *o, char *err, size_t len)
{
	int c, ret;

	defaults(o);
	err[0] = '\0';

	/* "+": stop at the first non-option so CMD's own options are left alone. */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:p:i:d:bj:r:n:qvhV", long_opts, NULL)) != -1) {
		if (c == 'h' || c == 'V') {
			o->help = c == 'h';
			o->version = c == 'V';
			return 0;
		}
		if (c == ':')
			return msg__set(err, len, -EINVAL, "option '%s' needs a value; see leaktop "
					"--help", argv[optind - 1]);
		ret = parse_trace_opt(c, o, err, len);
		if (ret == 1)
			ret = parse_output_opt(c, o, err, len);
		if (ret == 1 && optopt && optopt < 256)
			return msg__set(err, len, -EINVAL, "unknown option '-%c'; see "
					"leaktop --help", optopt);
		if (ret == 1)
			return msg__set(err, len, -EINVAL, "unknown option '%s'; see leaktop "
					"--help", argv[optind - 1]);
		if (ret)
			return ret;
	}
	return check_mode(argc, argv, o, err, len);
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
			return msg__set(err, len, -EINVAL, "unknown scan argument '%s'; see leaktop scan --help",
				    a);
		if (i + 1 >= argc)
			return msg__set(err, len, -EINVAL, "option '%s' needs a value; see leaktop scan --help",
				    a);
		a = argv[++i];
		switch (argv[i - 1][1]) {
		case 'p':
			pid = a;
			break;
		case 'i':
			if (parse_seconds(a, 0.01, &o->interval_s))
				return msg__set(err, len, -EINVAL, "invalid interval '%s': expected seconds >= 0.01",
					    a);
			o->scan_every_s = o->interval_s;
			break;
		case 'd':
			if (parse_seconds(a, 0, &o->duration_s))
				return msg__set(err, len, -EINVAL, "invalid duration '%s': expected seconds >= 0", a);
			break;
		default:
			if (!*a)
				return msg__set(err, len, -EINVAL, "empty --json path: give a file name or '-'");
			o->json_path = a;
			break;
		}
	}
	if (!pid)
		return msg__set(err, len, -EINVAL, "scan needs a process; give -p PID");
	ret = parse_pids(pid, o, err, len);
	if (ret)
		return ret;
	if (o->n_pids != 1)
		return msg__set(err, len, -EINVAL, "scan takes one process; give -p PID");
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

int options__parse_run_argv(int ret, const char *usage, char **run_argv, struct options *o,
			    char *err, size_t len)
{
	int n = 0;

	if (ret == 1) {
		fputs(usage, stdout);
		return 0;
	}
	if (!ret) {
		while (run_argv[n])
			n++;
		ret = options__parse(n, run_argv, o, err, len);
	}
	if (ret) {
		err_line("%s", err);
		return 2;
	}
	return -1;
}
