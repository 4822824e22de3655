// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * checkgate.c - `leaktop check`'s verdicts over symbolized findings: --fail-on, suppression
 * rules, the baseline of known findings, totals and the exit status.
 */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "core/checkgate.h"
#include "util/msg.h"

const char *const check_kind_names[CHECK__COUNT] = {
	[CHECK_DEFINITE] = "definite",
	[CHECK_INDIRECT] = "indirect",
	[CHECK_POSSIBLE] = "possible",
	[CHECK_FD] = "fd",
	[CHECK_MMAP] = "mmap",
};

#define HEAP_KINDS ((1u << CHECK_DEFINITE) | (1u << CHECK_INDIRECT) | (1u << CHECK_POSSIBLE))

/* Rule prefixes of a suppressions file and the kinds each covers. */
static const struct {
	const char *prefix;
	unsigned int kinds;
} rule_prefixes[] = {
	{ "leak:", HEAP_KINDS },
	{ "fd:", 1u << CHECK_FD },
	{ "mmap:", 1u << CHECK_MMAP },
};

int checkgate__parse_fail_on(const char *list, unsigned int *mask, char *err, size_t len)
{
	const char *p = list;

	*mask = 0;
	while (*p) {
		size_t n = strcspn(p, ",");
		bool found = false;

		if (n == 3 && !strncmp(p, "all", 3)) {
			*mask = (1u << CHECK__COUNT) - 1;
			found = true;
		}
		for (int k = 0; k < CHECK__COUNT && !found; k++) {
			if (strlen(check_kind_names[k]) == n && !strncmp(p, check_kind_names[k], n)) {
				*mask |= 1u << k;
				found = true;
			}
		}
		if (!found)
			return msg__set(err, len, -EINVAL, "invalid --fail-on '%s': expected a list of "
					"definite, indirect, possible, fd, mmap or all", list);
		p += n;
		if (*p == ',')
			p++;
	}
	if (!*mask)
		return msg__set(err, len, -EINVAL, "empty --fail-on: give definite, indirect, "
				"possible, fd, mmap or all");
	return 0;
}

int checkgate__parse_rules(struct check_rules *r, const char *text, char *err, size_t len)
{
	unsigned int line_no = 0;
	const char *p = text;

	while (*p) {
		size_t n = strcspn(p, "\n");
		char line[CHECK_SUPP_PATTERN_MAX + 32];
		char *s, *e;
		size_t i;

		line_no++;
		if (n >= sizeof(line))
			return msg__set(err, len, -EINVAL, "suppressions line %u is too long (at most "
					"%d characters)", line_no, CHECK_SUPP_PATTERN_MAX);
		memcpy(line, p, n);
		line[n] = '\0';
		p += n + (p[n] == '\n');
		for (s = line; *s == ' ' || *s == '\t'; s++)
			;
		for (e = s + strlen(s); e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r');)
			*--e = '\0';
		if (!*s || *s == '#')
			continue;
		for (i = 0; i < sizeof(rule_prefixes) / sizeof(rule_prefixes[0]); i++)
			if (!strncmp(s, rule_prefixes[i].prefix, strlen(rule_prefixes[i].prefix)))
				break;
		if (i == sizeof(rule_prefixes) / sizeof(rule_prefixes[0]))
			return msg__set(err, len, -EINVAL, "suppressions line %u: expected "
					"leak:PATTERN, fd:PATTERN or mmap:PATTERN", line_no);
		if (!s[strlen(rule_prefixes[i].prefix)])
			return msg__set(err, len, -EINVAL, "suppressions line %u: empty pattern",
					line_no);
		{
			struct check_rule *v = realloc(r->rules, (r->n + 1) * sizeof(*v));

			if (!v)
				return -ENOMEM;
			r->rules = v;
			memset(&v[r->n], 0, sizeof(v[r->n]));
			v[r->n].kinds = rule_prefixes[i].kinds;
			snprintf(v[r->n].pattern, sizeof(v[r->n].pattern), "%s",
				 s + strlen(rule_prefixes[i].prefix));
			snprintf(v[r->n].text, sizeof(v[r->n].text), "%s", s);
			r->n++;
		}
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int checkgate__add_baseline(struct check_rules *r, char *const *keys, size_t n)
{
	char **v = realloc(r->baseline_keys, (r->n_baseline + n + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	r->baseline_keys = v;
	for (size_t i = 0; i < n; i++) {
		v[r->n_baseline] = strdup(keys[i]);
		if (!v[r->n_baseline])
			return -ENOMEM;
		r->n_baseline++;
	}
	qsort(v, r->n_baseline, sizeof(*v), cmp_str);
	return 0;
}

void check_rules__free(struct check_rules *r)
{
	for (size_t i = 0; i < r->n_baseline; i++)
		free(r->baseline_keys[i]);
	free(r->baseline_keys);
	free(r->rules);
	memset(r, 0, sizeof(*r));
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

char *checkgate__finding_key(const struct check_finding *f)
{
	/* The heap kinds share a key: a block definitely lost once may be indirect later. */
	static const char *const kind_key[CHECK__COUNT] = { "heap", "heap", "heap", "fd", "mmap" };

	return sym_frames__key(kind_key[f->kind], f->frames, f->n_frames);
}

static bool rule_matches(const struct check_rule *r, const struct check_finding *f)
{
	if (!(r->kinds & (1u << f->kind)))
		return false;
	for (uint32_t i = 0; i < f->n_frames; i++) {
		const struct sym_frame *fr = &f->frames[i];

		if (fr->symbol && !fnmatch(r->pattern, fr->symbol, 0))
			return true;
		if (fr->module && (!fnmatch(r->pattern, fr->module, 0) ||
				   !fnmatch(r->pattern, base_name(fr->module), 0)))
			return true;
	}
	return false;
}

void checkgate__apply(struct check_rules *r, struct check_proc *p)
{
	for (size_t i = 0; i < p->n_findings; i++) {
		struct check_finding *f = &p->findings[i];

		f->suppressed = false;
		for (size_t k = 0; k < r->n && !f->suppressed; k++) {
			if (rule_matches(&r->rules[k], f)) {
				f->suppressed = true;
				r->rules[k].used++;
				snprintf(f->suppressed_by, sizeof(f->suppressed_by), "%s",
					 r->rules[k].text);
			}
		}
		if (!f->suppressed && r->n_baseline) {
			char *key = checkgate__finding_key(f);

			if (key && bsearch(&key, r->baseline_keys, r->n_baseline,
					   sizeof(*r->baseline_keys), cmp_str)) {
				f->suppressed = true;
				snprintf(f->suppressed_by, sizeof(f->suppressed_by), "baseline");
			}
			free(key);
		}
	}
}

bool checkgate__fails(const struct check_finding *f, unsigned int mask)
{
	return !f->suppressed && (mask & (1u << f->kind)) && f->objects > 0;
}

void checkgate__totals(const struct check_proc *p, unsigned int mask, struct check_totals *t)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < p->n_findings; i++) {
		const struct check_finding *f = &p->findings[i];

		if (f->suppressed) {
			t->suppressed[f->kind] += f->objects;
			continue;
		}
		t->objects[f->kind] += f->objects;
		t->bytes[f->kind] += f->bytes;
		if (checkgate__fails(f, mask))
			t->failing++;
	}
}

int checkgate__exit_status(bool failing, int cmd_wait_status, int exit_code)
{
	if (failing)
		return exit_code;
	if (WIFSIGNALED(cmd_wait_status))
		return 128 + WTERMSIG(cmd_wait_status);
	if (WIFEXITED(cmd_wait_status))
		return WEXITSTATUS(cmd_wait_status);
	return 1;
}

void check_proc__free(struct check_proc *p)
{
	for (size_t i = 0; i < p->n_findings; i++) {
		for (uint32_t k = 0; k < p->findings[i].n_frames; k++)
			sym_frame__clear(&p->findings[i].frames[k]);
		free(p->findings[i].frames);
	}
	free(p->findings);
	p->findings = NULL;
	p->n_findings = 0;
}
