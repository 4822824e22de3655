// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_snapshot_lastref.c - lastref's verdicts from the sample to the snapshot: a verdict the
 * sample brings is folded into its process (model__apply) and written under the process's
 * "lastref" as `leaktop lastref -j` writes it (verdict, where, the reference, the line); a
 * process no lastref ran on has no "lastref" at all.  Read back (`leaktop report FILE`), the
 * verdicts are the same: the same line, register names included; a bad one is refused.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "check.h"
#include "core/model.h"
#include "core/sample.h"
#include "view/format.h"
#include "view/snapshot.h"
#include "view/snapshot_read.h"

#define NS 1000000000ull

/* The snapshot of m as text (NULL: it could not be written). */
static char *snapshot_text(const struct model *m, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	if (snapshot__write_line(f, m)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	return buf;
}

/* The snapshot of m as one parsed document (NULL: it could not be written or read). */
static json_t *snapshot_doc(const struct model *m)
{
	size_t len = 0;
	char *text = snapshot_text(m, &len);
	json_t *doc = text ? json_loadb(text, len, 0, NULL) : NULL;

	free(text);
	return doc;
}

/* The process pid of the document, or NULL. */
static json_t *process_of(json_t *doc, uint32_t pid)
{
	json_t *procs = json_object_get(doc, "processes"), *p;
	size_t i;

	json_array_foreach(procs, i, p)
		if (json_integer_value(json_object_get(p, "pid")) == pid)
			return p;
	return NULL;
}

static void test_snapshot_process_has_the_lastref_verdicts_of_its_sample(void)
{
	struct sample_site sites[] = {
		{ .pid = 900, .kind = LT_KIND_HEAP, .gen = 1, .stack_hash = 0x90,
		  .outstanding_bytes = 64, .outstanding_count = 1, .allocs = 1, .alloc_bytes = 64 },
		{ .pid = 901, .kind = LT_KIND_HEAP, .gen = 1, .stack_hash = 0x91,
		  .outstanding_bytes = 64, .outstanding_count = 1, .allocs = 1, .alloc_bytes = 64 },
	};
	struct lastref_result *r;
	struct sample_event *ev;
	json_t *doc = NULL, *p, *v, *other;
	struct sample s;
	struct model m;

	model__init(&m, 1.0, RES_ALL, 8);
	memset(&s, 0, sizeof(s));
	s.ts_ns = NS;
	s.sites = sites;
	s.n_sites = 2;
	for (uint32_t pid = 900; pid <= 901; pid++) {
		ev = sample__add_event(&s);
		*ev = (struct sample_event){ .type = SAMPLE_EV_FIRST, .pid = pid, .gen = 1,
					     .target = true };
	}
	r = sample__add_lastref(&s);
	r->pid = 900;
	r->gen = 1;
	r->b.addr = 0x5000;
	r->b.size = 64;
	r->b.stack_hash = 0x90;
	r->b.cause = (struct lr_cause){ .verdict = LR_OVERWRITTEN, .tid = 900,
					.ref = { .kind = LR_REF_MEMORY, .loc = 0x404040 } };
	r->at = calloc(1, sizeof(*r->at));
	r->n_at = 1;
	r->at[0] = (struct sym_frame){ .addr = 0x401100, .symbol = strdup("forget_it"),
				       .file = strdup("prog.c"), .line = 30 };
	r->alloc = (struct sym_frame){ .addr = 0x401000, .symbol = strdup("make_it"),
				       .file = strdup("prog.c"), .line = 12 };
	r->at_s = 1.5;
	CHECK_EQ_INT(model__apply(&m, &s), 0);
	s.sites = NULL;
	s.n_sites = 0;
	sample__free(&s);
	doc = snapshot_doc(&m);
	CHECK(doc != NULL);
	p = process_of(doc, 900);
	other = process_of(doc, 901);
	CHECK(p && other);
	CHECK(!json_object_get(other, "lastref"));
	CHECK_EQ_INT(json_array_size(json_object_get(p, "lastref")), 1);
	CHECK_EQ_INT(json_integer_value(json_object_get(p, "lastref_dropped")), 0);
	v = json_array_get(json_object_get(p, "lastref"), 0);
	CHECK_EQ_STR(json_string_value(json_object_get(v, "verdict")), "overwritten");
	CHECK_EQ_STR(json_string_value(json_object_get(v, "addr")), "0x5000");
	CHECK_EQ_INT(json_integer_value(json_object_get(v, "size")), 64);
	CHECK_EQ_STR(json_string_value(json_object_get(v, "stack_id")), "0000000000000090");
	CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(json_object_get(v, "at"), 0),
						       "symbol")), "forget_it");
	CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(v, "allocated_at"),
							"line")), 12);
	CHECK_EQ_STR(json_string_value(json_object_get(json_object_get(v, "reference"), "kind")),
		     "memory");
	CHECK_EQ_STR(json_string_value(json_object_get(v, "line")),
		     "last pointer to 0x5000 (allocated at make_it prog.c:12) overwritten at "
		     "forget_it prog.c:30 (it was at 0x404040, thread 900)");
	json_decref(doc);
	model__free(&m);
}

/* A model with process 900 and one verdict of each kind given (register-only, returned). */
static void model_with_verdicts(struct model *m)
{
	struct sample_site site = { .pid = 900, .kind = LT_KIND_HEAP, .gen = 1, .stack_hash = 0x90,
				    .outstanding_bytes = 64, .outstanding_count = 1, .allocs = 1,
				    .alloc_bytes = 64 };
	struct lastref_result *r;
	struct sample_event *ev;
	struct sample s;

	model__init(m, 1.0, RES_ALL, 8);
	memset(&s, 0, sizeof(s));
	s.ts_ns = NS;
	s.sites = &site;
	s.n_sites = 1;
	ev = sample__add_event(&s);
	*ev = (struct sample_event){ .type = SAMPLE_EV_FIRST, .pid = 900, .gen = 1, .target = true };
	r = sample__add_lastref(&s);
	*r = (struct lastref_result){ .pid = 900, .gen = 1, .at_s = 2.25, .reg = "r12" };
	r->b.addr = 0x5000;
	r->b.size = 64;
	r->b.stack_hash = 0x90;
	r->b.cause = (struct lr_cause){ .verdict = LR_REGISTER_ONLY,
					.ref = { .kind = LR_REF_REGISTER, .tid = 901 } };
	r->alloc = (struct sym_frame){ .addr = 0x401000, .symbol = strdup("make_it"),
				       .file = strdup("prog.c"), .line = 12 };
	r->frame = (struct sym_frame){ .addr = 0x401200, .symbol = strdup("hold_it"),
				       .file = strdup("prog.c"), .line = 40 };
	r = sample__add_lastref(&s);
	*r = (struct lastref_result){ .pid = 900, .gen = 1, .at_s = 3.5, .since_s = 3.0 };
	r->b.addr = 0x6000;
	r->b.size = 32;
	r->b.stack_hash = 0x90;
	r->b.cause = (struct lr_cause){ .verdict = LR_FRAME_RETURNED, .unwatched = true, .tid = 900,
					.ref = { .kind = LR_REF_STACK, .tid = 900,
						 .loc = 0x7ffc0000 } };
	r->frame = (struct sym_frame){ .addr = 0x401300, .symbol = strdup("local_"),
				       .file = strdup("prog.c"), .line = 50 };
	CHECK_EQ_INT(model__apply(m, &s), 0);
	s.sites = NULL;
	s.n_sites = 0;
	sample__free(&s);
}

static void test_snapshot_lastref_verdicts_read_back_give_the_same_lines(void)
{
	char want[1024], got[1024], err[256] = "";
	const struct process *p, *q;
	struct snapshot_info info;
	struct model m, back;
	size_t len = 0;
	char *text;

	model_with_verdicts(&m);
	text = snapshot_text(&m, &len);
	CHECK(text != NULL);
	memset(&back, 0, sizeof(back));
	CHECK_EQ_INT(snapshot__read_buf(text, len, "t.json", NULL, &back, &info, err, sizeof(err)), 0);
	CHECK_EQ_STR(err, "");
	p = model__find(&m, 900, 1);
	q = back.n_procs == 1 ? &back.procs[0] : NULL;
	CHECK(p && q);
	CHECK_EQ_INT(q ? q->n_lastref : 0, 2);
	for (size_t i = 0; q && i < q->n_lastref && i < p->n_lastref; i++) {
		fmt__lastref_line(want, sizeof(want), &p->lastref[i]);
		fmt__lastref_line(got, sizeof(got), &q->lastref[i]);
		CHECK_EQ_STR(got, want);
		CHECK(q->lastref[i].b.stack_hash == 0x90);
	}
	CHECK_EQ_STR(q && q->n_lastref ? q->lastref[0].reg : "", "r12");
	free(text);
	model__free(&back);
	model__free(&m);
}

static void test_snapshot_read_refuses_an_unknown_lastref_verdict(void)
{
	char err[256] = "", *text, *at;
	struct snapshot_info info;
	struct model m, back;
	size_t len = 0;

	model_with_verdicts(&m);
	text = snapshot_text(&m, &len);
	CHECK(text != NULL);
	at = text ? strstr(text, "\"register_only\"") : NULL;
	CHECK(at != NULL);
	if (at)
		memcpy(at, "\"sideways_gone\"", strlen("\"sideways_gone\""));
	memset(&back, 0, sizeof(back));
	CHECK_EQ_INT(snapshot__read_buf(text, len, "t.json", NULL, &back, &info, err, sizeof(err)),
		     -EINVAL);
	CHECK(strstr(err, "lastref[0].verdict") && strstr(err, "sideways_gone"));
	free(text);
	model__free(&back);
	model__free(&m);
}

int main(void)
{
	RUN(test_snapshot_process_has_the_lastref_verdicts_of_its_sample);
	RUN(test_snapshot_lastref_verdicts_read_back_give_the_same_lines);
	RUN(test_snapshot_read_refuses_an_unknown_lastref_verdict);
	CHECK_EXIT();
}
