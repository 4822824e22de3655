// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * check_cmd.c - `leaktop check`: CMD run as under `leaktop -q -- CMD` (cli/run.c, traced from
 * its first allocation, its children too), with exit stops: each traced process that calls
 * _exit is held there by BPF, its memory intact, inspected (live/exitcheck.c: the heap scan,
 * descriptors and mappings left), then let go.  At the end the rules decide
 * (core/checkgate.c) and the report, JSON and JUnit files are written (view/check_out.c);
 * the exit status is CMD's own unless a finding fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/check_cmd.h"
#include "cli/launcher.h"
#include "cli/options.h"
#include "cli/run.h"
#include "core/checkgate.h"
#include "live/session.h"
#include "util/msg.h"
#include "view/check_out.h"

#define CHECK_HELD_MAX		64	/* held processes looked at per turn of the loop */
#define CHECK_PROCS_MAX		4096	/* processes reported at most (more: counted) */
#define SUPP_FILE_MAX		(1 << 20)

struct check {
	struct check_args a;
	struct check_rules rules;
	struct check_proc *procs;
	size_t n_procs;
	uint64_t procs_dropped;		/* past CHECK_PROCS_MAX: let go unreported */
	unsigned int max_stop_ms;
	bool track_fd, track_mmap;
	char **cmd;
	int status;			/* leaktop's, once finished */
	bool finished;
};

const char *check_cmd__usage(void)
{
	return "usage: leaktop check [OPTIONS] -- CMD [ARG...]\n"
	       "Run CMD traced from its first allocation (its children too); hold each of its\n"
	       "processes when it exits, scan its memory for lost blocks, list descriptors and\n"
	       "mappings it left, then let it exit.  Exit status: CMD's own, or the leak status\n"
	       "when a finding fails.\n"
	       "  --fail-on LIST       what fails: definite, indirect, possible, fd, mmap, all\n"
	       "                       (default definite)\n"
	       "  --exit-code N        exit status when a finding fails (1-255, default 23)\n"
	       "  --suppressions FILE  known leaks: lines leak:GLOB, fd:GLOB, mmap:GLOB (a\n"
	       "                       function or module in the stack), # comments\n"
	       "  --baseline FILE      findings of an earlier run (-j or --write-baseline) pass\n"
	       "  --write-baseline FILE  write this run's findings as a baseline\n"
	       "  -j FILE              write the results as JSON (leaktop.check/1)\n"
	       "  --junit FILE         write a JUnit XML file, one test case per process\n"
	       "  --scan-max-stop MS   longest one scan may take (default 2000)\n"
	       "  --agent              trace the heap inside the processes (preloaded\n"
	       "                       libleaktop-agent.so): far cheaper per allocation; not\n"
	       "                       for static or setuid programs\n"
	       "  -v                   list suppressed findings too\n";
}

static int parse_path(const char *opt, const char *v, const char **out, char *err, size_t len)
{
	if (!v[0] || !strcmp(v, "-"))
		return msg__set(err, len, -EINVAL, "invalid %s '%s': give a file name", opt, v);
	*out = v;
	return 0;
}

int check_cmd__parse(int argc, char **argv, struct check_args *a, char **run_argv,
		     size_t run_max, char *err, size_t len)
{
	size_t n = 0;
	int i, ret;

	memset(a, 0, sizeof(*a));
	a->exit_code = CHECK_DEFAULT_EXIT_CODE;
	a->fail_on = CHECK_FAIL_DEFAULT;
	err[0] = '\0';
	if (run_max < 16)
		return msg__set(err, len, -EINVAL, "internal: argument room");
	run_argv[n++] = "check";
	run_argv[n++] = "-q";
	for (i = 1; i < argc; i++) {
		const char *o = argv[i];
		unsigned long k;

		if (!strcmp(o, "--"))
			break;
		if (!strcmp(o, "-h") || !strcmp(o, "--help"))
			return 1;
		if (!strcmp(o, "-v")) {
			a->verbose = true;
			continue;
		}
		if (!strcmp(o, "--agent")) {
			run_argv[n++] = "--agent";
			continue;
		}
		if (i + 1 >= argc)
			return msg__set(err, len, -EINVAL, "unknown check argument '%s' or a value "
					"missing; see leaktop check --help", o);
		i++;
		if (!strcmp(o, "--fail-on")) {
			ret = checkgate__parse_fail_on(argv[i], &a->fail_on, err, len);
		} else if (!strcmp(o, "--exit-code")) {
			ret = 0;
			if (options__parse_uint(argv[i], 1, 255, &k))
				ret = msg__set(err, len, -EINVAL, "invalid --exit-code '%s': expected "
					       "1 to 255", argv[i]);
			a->exit_code = (int)k;
		} else if (!strcmp(o, "--suppressions")) {
			ret = parse_path(o, argv[i], &a->suppressions, err, len);
		} else if (!strcmp(o, "--baseline")) {
			ret = parse_path(o, argv[i], &a->baseline, err, len);
		} else if (!strcmp(o, "--write-baseline")) {
			ret = parse_path(o, argv[i], &a->write_baseline, err, len);
		} else if (!strcmp(o, "-j") || !strcmp(o, "--json")) {
			ret = parse_path(o, argv[i], &a->json_path, err, len);
		} else if (!strcmp(o, "--junit")) {
			ret = parse_path(o, argv[i], &a->junit_path, err, len);
		} else if (!strcmp(o, "--scan-max-stop")) {
			run_argv[n++] = (char *)o;
			run_argv[n++] = argv[i];
			ret = 0;
		} else {
			ret = msg__set(err, len, -EINVAL, "unknown check argument '%s'; see leaktop "
				       "check --help", o);
		}
		if (ret)
			return ret;
	}
	if (i >= argc - 1)
		return msg__set(err, len, -EINVAL, "check needs a command: leaktop check [OPTIONS] "
				"-- CMD [ARG...]");
	run_argv[n++] = "-r";
	run_argv[n++] = a->fail_on & (1u << CHECK_MMAP) ? "heap,fd,mmap" : "heap,fd";
	for (; i < argc && n + 1 < run_max; i++)
		run_argv[n++] = argv[i];
	if (i < argc)
		return msg__set(err, len, -EINVAL, "too many arguments; see leaktop check --help");
	run_argv[n] = NULL;
	return 0;
}

/* ---------------------------------------------------------------- the hooks */

/* Inspect and let go each process held at its exit now. */
static int take_held(struct check *c, const struct run_live *lv)
{
	uint32_t held[CHECK_HELD_MAX];
	size_t n = session__exit_stopped(lv->sess, held, CHECK_HELD_MAX);

	for (size_t i = 0; i < n; i++) {
		struct check_proc p, *v;
		int err;

		if (c->n_procs >= CHECK_PROCS_MAX) {
			c->procs_dropped++;
			session__exit_release(lv->sess, held[i]);
			continue;
		}
		err = session__exit_check(lv->sess, (int)held[i], c->track_fd, c->track_mmap,
					  c->max_stop_ms, &p);
		session__exit_release(lv->sess, held[i]);
		if (err) {
			check_proc__free(&p);
			return err;
		}
		v = realloc(c->procs, (c->n_procs + 1) * sizeof(*v));
		if (!v) {
			check_proc__free(&p);
			return -ENOMEM;
		}
		c->procs = v;
		c->procs[c->n_procs++] = p;
	}
	return 0;
}

static int hook_step(void *ctx, const struct run_live *lv)
{
	struct check *c = ctx;
	int err = take_held(c, lv);

	if (err)
		err_line("out of memory");
	return err;
}

static void finish(struct check *c, const struct run_live *lv)
{
	struct check_run r = {
		.cmd = c->cmd, .fail_on = c->a.fail_on, .exit_code = c->a.exit_code,
		.rules = &c->rules, .verbose = c->a.verbose,
	};
	char msg[512];

	for (size_t i = 0; i < c->n_procs; i++) {
		struct check_totals t;

		checkgate__apply(&c->rules, &c->procs[i]);
		checkgate__totals(&c->procs[i], c->a.fail_on, &t);
		r.failed |= t.failing > 0;
	}
	r.procs = c->procs;
	r.n_procs = c->n_procs;
	if (lv->child) {
		r.cmd_pid = lv->child->pid;
		r.cmd_reaped = lv->child->reaped;
		r.cmd_status = lv->child->status;
	}
	c->status = r.cmd_reaped ? checkgate__exit_status(r.failed, r.cmd_status, c->a.exit_code)
				 : r.failed ? c->a.exit_code : 1;
	r.status = c->status;
	if (c->procs_dropped)
		err_line("%llu processes past the first %d were not checked",
			 (unsigned long long)c->procs_dropped, CHECK_PROCS_MAX);
	check_out__text(stderr, &r);
	if (c->a.json_path) {
		int e = check_out__write_json(c->a.json_path, &r);

		if (e) {
			err_line("%s", msg__write_failed(msg, sizeof(msg), c->a.json_path, e));
			c->status = 1;
		}
	}
	if (c->a.write_baseline) {
		int e = check_out__write_json(c->a.write_baseline, &r);

		if (e) {
			err_line("%s", msg__write_failed(msg, sizeof(msg), c->a.write_baseline, e));
			c->status = 1;
		}
	}
	if (c->a.junit_path) {
		int e = check_out__write_junit(c->a.junit_path, &r);

		if (e) {
			err_line("%s", msg__write_failed(msg, sizeof(msg), c->a.junit_path, e));
			c->status = 1;
		}
	}
	c->finished = true;
}

static void hook_finish(void *ctx, const struct run_live *lv)
{
	struct check *c = ctx;

	/* Those held while the run ended: inspected too (the loader releases the rest). */
	if (lv->sess && take_held(c, lv))
		err_line("out of memory");
	if (lv->sess)
		finish(c, lv);
}

/* ---------------------------------------------------------------- set-up */

/* A suppressions file: a regular file of at most SUPP_FILE_MAX bytes. */
static int load_rules(struct check *c, char *err, size_t len)
{
	char *text = NULL;
	struct stat st;
	ssize_t got;
	int fd, ret;

	if (c->a.suppressions) {
		fd = open(c->a.suppressions, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd < 0)
			return msg__set(err, len, -errno, "cannot read suppressions %s: %s; check "
					"the path", c->a.suppressions, strerror(errno));
		if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > SUPP_FILE_MAX) {
			close(fd);
			return msg__set(err, len, -EINVAL, "suppressions %s: not a regular file of "
					"at most 1 MiB; give a text file", c->a.suppressions);
		}
		text = calloc(1, st.st_size + 1);
		got = text ? read(fd, text, st.st_size) : -1;
		close(fd);
		if (got < 0) {
			free(text);
			return msg__set(err, len, -EIO, "cannot read suppressions %s",
					c->a.suppressions);
		}
		text[got] = '\0';
		ret = checkgate__parse_rules(&c->rules, text, err, len);
		free(text);
		if (ret)
			return ret;
	}
	if (c->a.baseline) {
		char **keys;
		size_t n;

		ret = check_out__read_baseline(c->a.baseline, &keys, &n, err, len);
		if (ret)
			return ret;
		ret = checkgate__add_baseline(&c->rules, keys, n);
		for (size_t i = 0; i < n; i++)
			free(keys[i]);
		free(keys);
		if (ret)
			return msg__set(err, len, ret, "out of memory");
	}
	return 0;
}

int check_cmd__main(int argc, char **argv)
{
	char *run_argv[256], err[512];
	struct check c = { .status = 1 };
	struct run_hooks hooks = { NULL, hook_step, hook_finish, &c };
	struct options o;
	int ret, status;

	ret = check_cmd__parse(argc, argv, &c.a, run_argv, 256, err, sizeof(err));
	ret = options__parse_run_argv(ret, check_cmd__usage(), run_argv, &o, err, sizeof(err));
	if (ret >= 0)
		return ret;
	if (load_rules(&c, err, sizeof(err))) {
		err_line("%s", err);
		check_rules__free(&c.rules);
		return 2;
	}
	o.exit_stop = true;
	o.verbose = false;
	c.cmd = o.cmd;
	c.max_stop_ms = o.scan_max_stop_ms;
	c.track_fd = o.resources & RES_FD;
	c.track_mmap = o.resources & RES_MMAP;
	status = run__main_hooked(&o, &hooks);
	if (!status || c.finished)
		status = c.finished ? c.status : status;
	for (size_t i = 0; i < c.n_procs; i++)
		check_proc__free(&c.procs[i]);
	free(c.procs);
	check_rules__free(&c.rules);
	return status;
}
