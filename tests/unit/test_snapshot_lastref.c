// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_snapshot_lastref.c - lastref's verdicts from the sample to the snapshot: a verdict the
 * sample brings is folded into its process (model__apply) and written under the process's
 * "lastref" as `leaktop lastref -j` writes it (verdict, where, the reference, the line); a
 * process no lastref ran on has no "lastref" at all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "check.h"
#include "core/model.h"
#include "core/sample.h"
#include "view/snapshot.h"

#define NS 1000000000ull

/* The snapshot of m as one parsed document (NULL: it could not be written or read). */
static json_t *snapshot_doc(const struct model *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_t *doc = NULL;

	if (!f)
		return NULL;
	if (!snapshot__write_line(f, m)) {
		fclose(f);
		doc = json_loads(buf, 0, NULL);
	} else {
		fclose(f);
	}
	free(buf);
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

int main(void)
{
	RUN(test_snapshot_process_has_the_lastref_verdicts_of_its_sample);
	CHECK_EXIT();
}
