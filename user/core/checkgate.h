/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * checkgate.h - `leaktop check`'s verdicts: what each process left at its exit (findings), which
 * of them the rules let pass (--suppressions, --baseline), which fail (--fail-on), and the
 * exit status that follows.  Pure logic over findings already symbolized (live/exitcheck.c
 * makes them); unit-tested.
 */
#ifndef LEAKTOP_CHECKGATE_H
#define LEAKTOP_CHECKGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/frame.h"

enum check_kind {
	CHECK_DEFINITE,			/* heap blocks no pointer reaches: leak roots */
	CHECK_INDIRECT,			/* heap blocks only lost blocks reach */
	CHECK_POSSIBLE,			/* heap blocks reached only through interior pointers */
	CHECK_FD,			/* descriptors opened during the run, open at exit */
	CHECK_MMAP,			/* anonymous mappings made during the run, mapped at exit */
	CHECK__COUNT,
};

extern const char *const check_kind_names[CHECK__COUNT];

#define CHECK_DEFAULT_EXIT_CODE	23
#define CHECK_SUPP_PATTERN_MAX	256

/* One site's finding: what was left there, and the stack that made it. */
struct check_finding {
	enum check_kind kind;
	uint64_t stack_hash;
	uint64_t bytes;			/* heap, mmap; 0 for fds */
	uint64_t objects;		/* blocks, descriptors, mappings */
	char what[128];			/* fds: the first one's number and target, escaped */
	struct sym_frame *frames;	/* innermost first (allocator frames not captured) */
	uint32_t n_frames;
	bool suppressed;
	char suppressed_by[CHECK_SUPP_PATTERN_MAX + 16];	/* "leak:foo", "baseline" */
};

/* One traced process, inspected when it was about to exit. */
struct check_proc {
	int pid;
	int ppid;
	char comm[64];			/* escaped */
	bool scanned;			/* the heap was scanned (else scan_msg says why not) */
	char scan_msg[256];
	double stop_ms;			/* how long the scan held it */
	struct check_finding *findings;
	size_t n_findings;
};

/* One rule of a suppressions file: `leak:GLOB`, `fd:GLOB` or `mmap:GLOB`. */
struct check_rule {
	unsigned int kinds;		/* bits of enum check_kind it applies to */
	char pattern[CHECK_SUPP_PATTERN_MAX];
	char text[CHECK_SUPP_PATTERN_MAX + 16];	/* as written, for the report */
	uint64_t used;			/* findings it suppressed */
};

struct check_rules {
	struct check_rule *rules;
	size_t n;
	char **baseline_keys;		/* sorted: checkgate__finding_key of known findings */
	size_t n_baseline;
};

#define CHECK_FAIL_DEFAULT	(1u << CHECK_DEFINITE)

/*
 * --fail-on LIST (comma-separated kind names, `all`): the bits into *mask.  0 or -EINVAL
 * with one line in err.
 */
int checkgate__parse_fail_on(const char *list, unsigned int *mask, char *err, size_t len);

/*
 * Add the rules of a suppressions file's text (`#` comments, blank lines; `leak:` covers the
 * three heap kinds).  A pattern is a glob (fnmatch) matched against each frame's function
 * and module (its path and its base name).  0 or -EINVAL (line number and cause in err) or
 * -ENOMEM.
 */
int checkgate__parse_rules(struct check_rules *r, const char *text, char *err, size_t len);
/* Known findings: keys (checkgate__finding_key) copied in.  0 or -ENOMEM. */
int checkgate__add_baseline(struct check_rules *r, char *const *keys, size_t n);
void check_rules__free(struct check_rules *r);

/*
 * The key a finding is known by across runs, as `leaktop diff` matches sites: its kind and,
 * per frame, module, function and line (malloc'd; NULL: out of memory).
 */
char *checkgate__finding_key(const struct check_finding *f);

/* Mark p's suppressed findings (rules first, then the baseline); counts rule uses. */
void checkgate__apply(struct check_rules *r, struct check_proc *p);

/* Does this unsuppressed finding fail under mask? */
bool checkgate__fails(const struct check_finding *f, unsigned int mask);

/* Totals of a process's findings by kind: failing ones, suppressed ones. */
struct check_totals {
	uint64_t objects[CHECK__COUNT];
	uint64_t bytes[CHECK__COUNT];
	uint64_t suppressed[CHECK__COUNT];
	size_t failing;			/* findings that fail under the mask */
};
void checkgate__totals(const struct check_proc *p, unsigned int mask, struct check_totals *t);

/*
 * leaktop check's exit status: CMD's own when nothing fails (its exit code, or 128 + the
 * signal that killed it), else exit_code.  Leaks win over a signal: the report says both.
 */
int checkgate__exit_status(bool failing, int cmd_wait_status, int exit_code);

void check_proc__free(struct check_proc *p);

#endif
