// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * check_out.c - `leaktop check`'s report, JSON document and JUnit file.  Names and paths a
 * traced process chose are escaped in text (util/escape.c) and XML-escaped in JUnit.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <jansson.h>

#include "util/atomic_file.h"
#include "util/escape.h"
#include "util/msg.h"
#include "view/check_out.h"
#include "view/snapshot.h"

static const char *const kind_title[CHECK__COUNT] = {
	[CHECK_DEFINITE] = "Direct leak",
	[CHECK_INDIRECT] = "Indirect leak",
	[CHECK_POSSIBLE] = "Possible leak",
	[CHECK_FD] = "Open descriptor",
	[CHECK_MMAP] = "Anonymous mapping",
};

void check_out__describe_status(int status, char *buf, size_t len)
{
	if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else if (WIFEXITED(status))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
	else
		snprintf(buf, len, "ended (status 0x%x)", status);
}

static void frames_text(FILE *out, const struct check_finding *f)
{
	if (!f->n_frames)
		fputs("    (stack unknown)\n", out);
	for (uint32_t i = 0; i < f->n_frames; i++) {
		const struct sym_frame *fr = &f->frames[i];

		fprintf(out, "    #%u 0x%" PRIx64 " in ", i, fr->addr);
		escape__fputs(out, fr->symbol ? fr->symbol : "??");
		if (fr->file) {
			fputc(' ', out);
			escape__fputs(out, fr->file);
			if (fr->line > 0)
				fprintf(out, ":%d", fr->line);
		} else if (fr->symbol) {
			fprintf(out, "+0x%" PRIx64, fr->offset);
		}
		if (fr->module) {
			fputs(" (", out);
			escape__fputs(out, fr->module);
			fputc(')', out);
		}
		fputc('\n', out);
	}
}

static void finding_text(FILE *out, const struct check_finding *f)
{
	if (f->suppressed) {
		fputs("Suppressed (", out);
		escape__fputs(out, f->suppressed_by);
		fputs("): ", out);
	}
	switch (f->kind) {
	case CHECK_FD:
		fprintf(out, "%s: %" PRIu64 " descriptor(s) left open (", kind_title[f->kind],
			f->objects);
		escape__fputs(out, f->what);
		fputs("), opened at:\n", out);
		break;
	case CHECK_MMAP:
		fprintf(out, "%s: %" PRIu64 " byte(s) in %" PRIu64 " mapping(s) left mapped, "
			"mapped at:\n", kind_title[f->kind], f->bytes, f->objects);
		break;
	default:
		fprintf(out, "%s of %" PRIu64 " byte(s) in %" PRIu64 " object(s) allocated from:\n",
			kind_title[f->kind], f->bytes, f->objects);
	}
	frames_text(out, f);
	fputc('\n', out);
}

/* Findings to show: those that fail first, then the others found, suppressed ones last. */
static bool shown(const struct check_run *r, const struct check_finding *f, int pass)
{
	bool fails = checkgate__fails(f, r->fail_on);

	if (pass == 0)
		return fails;
	if (pass == 1)
		return !fails && !f->suppressed;
	return f->suppressed && r->verbose;
}

void check_out__process_text(FILE *out, const struct check_run *r, const struct check_proc *p)
{
	struct check_totals t;

	checkgate__totals(p, r->fail_on, &t);
	fprintf(out, "==%d== leaktop check: process %d (", p->pid, p->pid);
	escape__fputs(out, p->comm);
	fprintf(out, ") at exit%s\n", t.failing ? ": FAILED" : "");
	if (!p->scanned) {
		fprintf(out, "==%d== heap not scanned: ", p->pid);
		escape__fputs(out, p->scan_msg);
		fputc('\n', out);
	}
	fputc('\n', out);
	for (int pass = 0; pass < 3; pass++)
		for (size_t i = 0; i < p->n_findings; i++)
			if (shown(r, &p->findings[i], pass))
				finding_text(out, &p->findings[i]);
}

static bool has_text(const struct check_run *r, const struct check_proc *p)
{
	if (!p->scanned)
		return true;
	for (size_t i = 0; i < p->n_findings; i++)
		for (int pass = 0; pass < 3; pass++)
			if (shown(r, &p->findings[i], pass))
				return true;
	return false;
}

void check_out__text(FILE *out, const struct check_run *r)
{
	uint64_t objects[CHECK__COUNT] = { 0 }, bytes[CHECK__COUNT] = { 0 };
	uint64_t suppressed = 0;
	size_t failing_procs = 0;
	char how[96];

	for (size_t i = 0; i < r->n_procs; i++) {
		struct check_totals t;

		checkgate__totals(&r->procs[i], r->fail_on, &t);
		for (int k = 0; k < CHECK__COUNT; k++) {
			objects[k] += t.objects[k];
			bytes[k] += t.bytes[k];
			suppressed += t.suppressed[k];
		}
		failing_procs += t.failing > 0;
		if (has_text(r, &r->procs[i]))
			check_out__process_text(out, r, &r->procs[i]);
	}
	if (r->verbose && r->rules)
		for (size_t i = 0; i < r->rules->n; i++) {
			fprintf(out, "leaktop check: suppression %" PRIu64 "x ", r->rules->rules[i].used);
			escape__fputs(out, r->rules->rules[i].text);
			fputc('\n', out);
		}
	fprintf(out, "SUMMARY: leaktop check: %zu process(es) checked, %zu failed; lost %" PRIu64
		" byte(s) in %" PRIu64 " definite, %" PRIu64 " byte(s) in %" PRIu64 " indirect, %"
		PRIu64 " byte(s) in %" PRIu64 " possible object(s); %" PRIu64 " fd(s), %" PRIu64
		" mapping(s) left; %" PRIu64 " suppressed\n", r->n_procs, failing_procs,
		bytes[CHECK_DEFINITE], objects[CHECK_DEFINITE], bytes[CHECK_INDIRECT],
		objects[CHECK_INDIRECT], bytes[CHECK_POSSIBLE], objects[CHECK_POSSIBLE],
		objects[CHECK_FD], objects[CHECK_MMAP], suppressed);
	if (r->cmd_reaped) {
		check_out__describe_status(r->cmd_status, how, sizeof(how));
		fputs("leaktop check: ", out);
		escape__fputs(out, r->cmd[0]);
		fprintf(out, " %s%s; leaktop exits %d\n", how, WIFSIGNALED(r->cmd_status) ?
			" (before its exit: its memory was not checked)" : "", r->status);
	}
}

/* ---------------------------------------------------------------- JSON */

static json_t *finding_json(const struct check_run *r, const struct check_finding *f)
{
	json_t *o = json_object(), *frames = json_array();
	char id[24], *key = checkgate__finding_key(f);

	snprintf(id, sizeof(id), "%016" PRIx64, f->stack_hash);
	for (uint32_t i = 0; i < f->n_frames; i++)
		json_array_append_new(frames, snapshot__frame(&f->frames[i]));
	json_object_set_new(o, "kind", json_string(check_kind_names[f->kind]));
	json_object_set_new(o, "objects", json_integer((json_int_t)f->objects));
	json_object_set_new(o, "bytes", f->kind == CHECK_FD ? json_null() :
				     json_integer((json_int_t)f->bytes));
	json_object_set_new(o, "what", f->what[0] ? snapshot__string(f->what) : json_null());
	json_object_set_new(o, "stack_id", json_string(id));
	json_object_set_new(o, "fails", json_boolean(checkgate__fails(f, r->fail_on)));
	json_object_set_new(o, "suppressed_by", f->suppressed ? snapshot__string(f->suppressed_by)
							      : json_null());
	json_object_set_new(o, "key", key ? snapshot__string(key) : json_null());
	json_object_set_new(o, "frames", frames);
	free(key);
	return o;
}

static json_t *proc_json(const struct check_run *r, const struct check_proc *p)
{
	json_t *o = json_object(), *v = json_array(), *tot = json_object(), *sup = json_object();
	struct check_totals t;

	checkgate__totals(p, r->fail_on, &t);
	for (int k = 0; k < CHECK__COUNT; k++) {
		json_t *e = json_object();

		json_object_set_new(e, "objects", json_integer((json_int_t)t.objects[k]));
		json_object_set_new(e, "bytes", k == CHECK_FD ? json_null() :
					     json_integer((json_int_t)t.bytes[k]));
		json_object_set_new(tot, check_kind_names[k], e);
		json_object_set_new(sup, check_kind_names[k],
				    json_integer((json_int_t)t.suppressed[k]));
	}
	for (size_t i = 0; i < p->n_findings; i++)
		json_array_append_new(v, finding_json(r, &p->findings[i]));
	json_object_set_new(o, "pid", json_integer(p->pid));
	json_object_set_new(o, "ppid", p->ppid ? json_integer(p->ppid) : json_null());
	json_object_set_new(o, "comm", snapshot__string(p->comm));
	json_object_set_new(o, "scanned", json_boolean(p->scanned));
	json_object_set_new(o, "scan_error", p->scanned ? json_null() :
					     snapshot__string(p->scan_msg));
	json_object_set_new(o, "stop_ms", p->scanned ? json_real(p->stop_ms) : json_null());
	json_object_set_new(o, "failed", json_boolean(t.failing > 0));
	json_object_set_new(o, "totals", tot);
	json_object_set_new(o, "suppressed", sup);
	json_object_set_new(o, "findings", v);
	return o;
}

static json_t *run_json(const struct check_run *r)
{
	json_t *doc = json_object(), *cmd = json_array(), *procs = json_array();
	json_t *fail_on = json_array(), *rules = json_array(), *st = json_object();

	for (char **a = r->cmd; a && *a; a++)
		json_array_append_new(cmd, snapshot__string(*a));
	for (int k = 0; k < CHECK__COUNT; k++)
		if (r->fail_on & (1u << k))
			json_array_append_new(fail_on, json_string(check_kind_names[k]));
	for (size_t i = 0; i < r->n_procs; i++)
		json_array_append_new(procs, proc_json(r, &r->procs[i]));
	for (size_t i = 0; r->rules && i < r->rules->n; i++) {
		json_t *e = json_object();

		json_object_set_new(e, "rule", snapshot__string(r->rules->rules[i].text));
		json_object_set_new(e, "used", json_integer((json_int_t)r->rules->rules[i].used));
		json_array_append_new(rules, e);
	}
	json_object_set_new(st, "pid", json_integer(r->cmd_pid));
	json_object_set_new(st, "exit_code", r->cmd_reaped && WIFEXITED(r->cmd_status) ?
				json_integer(WEXITSTATUS(r->cmd_status)) : json_null());
	json_object_set_new(st, "signal", r->cmd_reaped && WIFSIGNALED(r->cmd_status) ?
				json_integer(WTERMSIG(r->cmd_status)) : json_null());
	json_object_set_new(doc, "schema", json_string("leaktop.check/1"));
	json_object_set_new(doc, "command", cmd);
	json_object_set_new(doc, "command_status", st);
	json_object_set_new(doc, "fail_on", fail_on);
	json_object_set_new(doc, "exit_code", json_integer(r->exit_code));
	json_object_set_new(doc, "failed", json_boolean(r->failed));
	json_object_set_new(doc, "status", json_integer(r->status));
	json_object_set_new(doc, "suppressions", rules);
	json_object_set_new(doc, "processes", procs);
	return doc;
}

int check_out__write_json(const char *path, const struct check_run *r)
{
	return snapshot__write_doc(path, run_json(r));
}

/* ---------------------------------------------------------------- JUnit */

/* s as XML character data: markup escaped, control characters (never valid XML) shown. */
static void xml_fputs(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '<')
			fputs("&lt;", out);
		else if (c == '>')
			fputs("&gt;", out);
		else if (c == '&')
			fputs("&amp;", out);
		else if (c == '"')
			fputs("&quot;", out);
		else if (c < 0x20 && c != '\n' && c != '\t')
			fprintf(out, "\\x%02x", c);
		else
			fputc(c, out);
	}
}

int check_out__write_junit(const char *path, const struct check_run *r)
{
	struct atomic_file af;
	size_t failures = 0;
	int err, ok;

	for (size_t i = 0; i < r->n_procs; i++) {
		struct check_totals t;

		checkgate__totals(&r->procs[i], r->fail_on, &t);
		failures += t.failing > 0;
	}
	err = atomic_file__open(&af, path);
	if (err)
		return err;
	fprintf(af.f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
		"<testsuite name=\"leaktop check\" tests=\"%zu\" failures=\"%zu\">\n",
		r->n_procs, failures);
	for (size_t i = 0; i < r->n_procs; i++) {
		const struct check_proc *p = &r->procs[i];
		struct check_totals t;
		char *text = NULL;
		size_t len = 0;
		FILE *m;

		checkgate__totals(p, r->fail_on, &t);
		fprintf(af.f, "<testcase classname=\"leaktop.check\" name=\"pid %d ", p->pid);
		xml_fputs(af.f, p->comm);
		fputs("\">\n", af.f);
		m = open_memstream(&text, &len);
		if (m) {
			check_out__process_text(m, r, p);
			fclose(m);
		}
		if (t.failing) {
			fprintf(af.f, "<failure message=\"%zu leak finding(s) at exit\">", t.failing);
			xml_fputs(af.f, text ? text : "");
			fputs("</failure>\n", af.f);
		} else if (text) {
			fputs("<system-err>", af.f);
			xml_fputs(af.f, text);
			fputs("</system-err>\n", af.f);
		}
		free(text);
		fputs("</testcase>\n", af.f);
	}
	if (r->cmd_reaped && WIFSIGNALED(r->cmd_status)) {
		char how[96];

		check_out__describe_status(r->cmd_status, how, sizeof(how));
		fprintf(af.f, "<testcase classname=\"leaktop.check\" name=\"pid %d signal\">\n"
			"<failure message=\"", r->cmd_pid);
		xml_fputs(af.f, how);
		fputs("\"/>\n</testcase>\n", af.f);
	}
	ok = fputs("</testsuite>\n</testsuites>\n", af.f) != EOF;
	err = atomic_file__close(&af, ok);
	return err ? err : ok ? 0 : -EIO;
}

/* ---------------------------------------------------------------- baseline */

int check_out__read_baseline(const char *path, char ***keys, size_t *n, char *err, size_t len)
{
	json_error_t jerr;
	json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr), *procs, *p;
	const char *schema;
	size_t i, k;
	char **v = NULL;

	*keys = NULL;
	*n = 0;
	if (!doc)
		return msg__set(err, len, -EINVAL, "cannot read baseline %s: %s; give a file "
				"written by leaktop check --write-baseline", path, jerr.text);
	schema = json_string_value(json_object_get(doc, "schema"));
	procs = json_object_get(doc, "processes");
	if (!schema || strcmp(schema, "leaktop.check/1") || !json_is_array(procs)) {
		json_decref(doc);
		return msg__set(err, len, -EINVAL, "baseline %s is not a leaktop.check/1 document; "
				"give a file written by leaktop check --write-baseline", path);
	}
	json_array_foreach(procs, i, p) {
		json_t *fs = json_object_get(p, "findings"), *f;

		json_array_foreach(fs, k, f) {
			const char *key = json_string_value(json_object_get(f, "key"));
			char **nv;

			if (!key)
				continue;
			nv = realloc(v, (*n + 1) * sizeof(*v));
			if (!nv || !(nv[*n] = strdup(key))) {
				free(nv ? nv : v);
				json_decref(doc);
				return -ENOMEM;
			}
			v = nv;
			(*n)++;
		}
	}
	json_decref(doc);
	*keys = v;
	return 0;
}
