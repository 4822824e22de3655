/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * options.h - the command line of `leaktop [run]`, parsed without side effects so it can be
 * unit-tested.  Errors come back as one message line; the caller prints it and exits 2.
 */
#ifndef LEAKTOP_OPTIONS_H
#define LEAKTOP_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "bpf/leaktop.h"
#include "cli/oom.h"
#include "core/heapmode.h"
#include "core/types.h"

/* Defaults and limits of the options: the one place they are set; the usage texts quote
 * them (OPT_STR). */
#define OPT_DEFAULT_INTERVAL_S		1
#define OPT_DEFAULT_STACK_DEPTH		LT_DEFAULT_STACK_DEPTH
#define OPT_DEFAULT_TOP_SITES		10	/* call sites per process in text */
#define OPT_DEFAULT_TOP_PROCS_SYSTEM	20	/* processes in a whole-system text report */
#define OPT_DEFAULT_WINDOW		40	/* samples of history per series */
#define OPT_MIN_WINDOW			8
#define OPT_MAX_WINDOW			3600
#define OPT_MAX_TOP			100000
#define OPT_DEFAULT_FILE_MODE		0600	/* output files: only their owner reads them */
#define OPT_MAX_PIDS			64
#define OPT_MAX_SCAN_STOP_MS		2000	/* = SCAN_MAX_STOP_MS (core/scan.h) */
#define OPT_DEFAULT_METRICS_SITES	20	/* flagged call sites on /metrics */
#define OPT_MAX_METRICS_SITES		1000
#define OPT_MAX_OOM_FILES		100000
#define OPT_LISTEN_LEN			64	/* "[v6 address]:port" as given, at most */
#define OPT_STOP_AT_LEN			512	/* --stop-at's function name, at most */

#define OPT_STR_(x) #x
#define OPT_STR(x) OPT_STR_(x)

enum run_mode {
	MODE_SYSTEM,		/* whole system */
	MODE_PIDS,		/* -p */
	MODE_COMMAND,		/* -- CMD */
};

struct options {
	enum run_mode mode;
	int pids[OPT_MAX_PIDS];
	size_t n_pids;
	double interval_s;
	double duration_s;	/* 0: until Ctrl-C or CMD exits */
	bool batch;
	bool batch_set;		/* -b given (otherwise decided by isatty) */
	const char *json_path;	/* NULL, a path, or "-" */
	const char *pprof_path;	/* --pprof: a pprof profile each interval, or NULL */
	const char *folded_path;	/* --folded: folded stacks each interval, or NULL */
	const char *oom_dir;	/* --oom-dir: OOM victims' snapshots; NULL: beside -j, or . */
	struct oom_limits oom;	/* --oom-max-files, --oom-max-bytes, --oom-min-gap */
	/* --stop-at SITE:N: stop the process at allocation N of SITE, a function in the stack
	 * (stop_at_fn) or a site id (stop_at_hash, non-zero); stop_at_seq 0: not asked. */
	char stop_at_fn[OPT_STOP_AT_LEN];
	uint64_t stop_at_hash;
	uint64_t stop_at_seq;
	unsigned int resources;	/* enum resource_bits */
	unsigned int stack_depth;
	bool unwind_cfi;	/* --unwind cfi (default) or fp */
	unsigned int top_sites;	/* sites per process in the text report */
	double scan_every_s;	/* --scan-every: reachability scan of the targets; 0: never */
	unsigned int scan_max_stop_ms;	/* --scan-max-stop: longest a scan stops a process */
	unsigned int window;	/* samples of history the growth verdicts look at */
	int probe_floor;	/* 0: real probes; 1: empty at entries; 2: empty where real go */
	unsigned int file_mode;	/* --file-mode: of the files written, before the umask */
	double budget_pct;	/* --budget: % of all CPUs heap tracing may cost (whole system) */
	unsigned int max_suspects;	/* --max-suspects */
	unsigned int map_share_pct;	/* --map-share: % of each shared BPF map one process
					 * may hold */
	bool map_share_set;	/* given: else -p and -- let a process hold it all */
	bool exact;		/* --exact: never suspects only */
	bool budget_set;	/* one of those given (refused outside whole-system mode) */
	bool agent;		/* --agent: heap traced in process (libleaktop-agent.so), not by
				 * uprobes; -- or -p only */
	/* --listen: where the OpenMetrics endpoint listens (listen_len 0: no endpoint); the
	 * address as the user gave it, for messages. */
	struct sockaddr_storage listen_addr;
	socklen_t listen_len;
	char listen_text[OPT_LISTEN_LEN];
	const char *listen_auth_path;	/* --listen-auth: user:password file, or NULL */
	const char *listen_token_path;	/* --listen-token: bearer token file, or NULL */
	unsigned int metrics_sites;	/* --metrics-sites: flagged sites exported, at most */
	bool exit_stop;		/* `leaktop check`: hold CMD's processes at _exit (no option) */
	bool quiet;		/* -q: no UI, no text report (files, the endpoint, -j - stay) */
	bool verbose;
	bool help;
	bool version;
	char **cmd;		/* argv after "--", NULL-terminated; NULL unless MODE_COMMAND */
};

/*
 * Parse argv (argv[0] is the program or subcommand name, argv[argc] is NULL).  Returns 0, or
 * -EINVAL with a one-line reason (no trailing newline) in err.
 *
 * Nothing is copied: json_path, pprof_path, folded_path, oom_dir and cmd point into argv, so argv
 * (the array and its strings) must outlive *opts.  argv is not modified ("+": options stop
 * at the first non-option, nothing is permuted).  Uses getopt_long, whose globals (optind,
 * opterr) it resets on entry: not reentrant, not thread-safe.
 */
int options__parse(int argc, char **argv, struct options *opts, char *err, size_t err_len);
/*
 * A subcommand built on the live run (`check`, `lastref`): its own parse gave ret (1: --help,
 * usage printed on stdout; other non-zero: the error in err, said on stderr), then the run's
 * options from the NULL-ended run_argv.  -1: go on; else the exit status (0 or 2).
 */
int options__parse_run_argv(int ret, const char *usage, char **run_argv, struct options *o,
			    char *err, size_t len);
/* The --help text. */
const char *options__usage(void);
/* The strict number parsing of every command: s is all decimal digits, min <= value <= max.
 * 0 or -EINVAL. */
int options__parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out);
/*
 * A --listen address: "PORT" (loopback, 127.0.0.1), "HOST:PORT" with an IPv4 address,
 * "localhost" or "*" (every IPv4 address), or "[IPv6]:PORT" ("[::]" every address).  No
 * name lookup.  0 or -EINVAL.
 */
int options__parse_listen(const char *s, struct sockaddr_storage *addr, socklen_t *len);
/*
 * --stop-at SITE:N: N (1-based) after the last ':'; SITE a site id (16 hex digits, as
 * the JSON's stack_id, "0x" allowed) into *hash, else a function name into fn (len bytes).
 * 0 or -EINVAL.
 */
int options__parse_stop_at(const char *s, char *fn, size_t len, uint64_t *hash, uint64_t *seq);
/* An octal file mode, 0 to 0777 ("600", "0640").  0 or -EINVAL. */
int options__parse_mode(const char *s, unsigned int *out);
/* A size in bytes: decimal digits, optionally K, M, G or T (powers of 1024, "KiB" and "KB"
 * too).  0 or -EINVAL. */
int options__parse_size(const char *s, uint64_t *out);

/*
 * `leaktop scan -p PID [-i SEC] [-d SEC] [-j FILE]`: the options of `leaktop -b -p PID -i SEC
 * --scan-every SEC ...`.  0 (o->help set for -h), or -EINVAL with one line in err.
 */
int options__parse_scan(int argc, char **argv, struct options *o, char *err, size_t len);
const char *options__scan_usage(void);

#endif
