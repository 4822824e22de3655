// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * lastref_out.c - the text line and the JSON document of `leaktop lastref` (lastref_out.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "view/format.h"
#include "view/lastref_out.h"
#include "view/snapshot.h"

/* "function file:line" (the file's last component), or what is known of it. */
static const char *where(char *buf, size_t len, const struct sym_frame *f)
{
	char sym[112], file[112];
	const char *base = f->file ? strrchr(f->file, '/') : NULL;

	fmt__str_buf(sym, sizeof(sym), f->symbol, "?");
	fmt__str_buf(file, sizeof(file), base ? base + 1 : f->file, "?");
	if (f->symbol && f->file && f->line)
		snprintf(buf, len, "%s %s:%d", sym, file, f->line);
	else if (f->symbol)
		snprintf(buf, len, "%s", sym);
	else
		snprintf(buf, len, "0x%" PRIx64, f->addr);
	return buf;
}

/* The first frame of the moment's stack: where the program was. */
static const struct sym_frame *at_frame(const struct lastref_result *r)
{
	static const struct sym_frame none;

	return r->n_at ? &r->at[0] : &none;
}

const char *lastref_out__line(char *buf, size_t len, const struct lastref_result *r)
{
	const struct lr_cause *c = &r->b.cause;
	char alloc[256], at[256], fr[256], head[360];

	where(alloc, sizeof(alloc), &r->alloc);
	where(at, sizeof(at), at_frame(r));
	snprintf(head, sizeof(head), "last pointer to 0x%" PRIx64 " (allocated at %s)", r->b.addr,
		 alloc);
	switch (c->verdict) {
	case LR_OVERWRITTEN:
		if (c->unwatched)
			snprintf(buf, len, "%s overwritten while not watched, between %.3f s and "
				 "%.3f s (it was at 0x%" PRIx64 ")", head, r->since_s, r->at_s,
				 c->ref.loc);
		else
			snprintf(buf, len, "%s overwritten at %s (it was at 0x%" PRIx64 ", thread %u)",
				 head, at, c->ref.loc, c->tid);
		break;
	case LR_HOLDER_FREED:
		snprintf(buf, len, "%s lost: its holder 0x%" PRIx64 " was freed at %s", head,
			 c->ref.holder, at);
		break;
	case LR_FRAME_RETURNED:
		if (c->unwatched)
			snprintf(buf, len, "%s lost: the frame of %s that held it returned, seen by "
				 "a scan between %.3f s and %.3f s (it was at 0x%" PRIx64 ")", head,
				 where(fr, sizeof(fr), &r->frame), r->since_s, r->at_s, c->ref.loc);
		else
			snprintf(buf, len, "%s lost: the frame of %s that held it returned (to %s)",
				 head, where(fr, sizeof(fr), &r->frame), at);
		break;
	case LR_REGISTER_ONLY:
		snprintf(buf, len, "%s lived only in register %s of thread %u at %s: a register "
			 "cannot be watched", head, r->reg ? r->reg : "?", c->ref.tid,
			 where(fr, sizeof(fr), &r->frame));
		break;
	case LR_FREED:
		snprintf(buf, len, "0x%" PRIx64 " (allocated at %s) was freed at %s: freed, not lost",
			 r->b.addr, alloc, at);
		break;
	default:
		if (c->why[0])	/* given up: a scan that cannot be made, events lost */
			snprintf(buf, len, "0x%" PRIx64 " (allocated at %s): %s", r->b.addr, alloc,
				 c->why);
		else
			snprintf(buf, len, "0x%" PRIx64 " (allocated at %s): unresolved, %u "
				 "reference%s still known", r->b.addr, alloc, r->b.n_refs,
				 r->b.n_refs == 1 ? "" : "s");
		break;
	}
	return buf;
}

static json_t *hex(uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	return json_string(buf);
}

static json_t *result_json(const struct lastref_result *r)
{
	const struct lr_cause *c = &r->b.cause;
	json_t *at = json_array(), *o, *ref = json_null();
	char id[24], line[1024];

	for (uint32_t i = 0; i < r->n_at; i++)
		json_array_append_new(at, snapshot__frame(&r->at[i]));
	snprintf(id, sizeof(id), "%016" PRIx64, r->b.stack_hash);
	if (c->verdict != LR_FREED && c->verdict != LR_UNRESOLVED && c->verdict != LR_PENDING)
		ref = json_pack("{s:s, s:o, s:o, s:o, s:o}",
				"kind", lr_ref_kind_names[c->ref.kind],
				"addr", c->ref.kind == LR_REF_REGISTER ? json_null() : hex(c->ref.loc),
				"holder", c->ref.kind == LR_REF_HEAP ? hex(c->ref.holder) : json_null(),
				"thread", c->ref.tid ? json_integer(c->ref.tid) : json_null(),
				"register", r->reg && c->verdict == LR_REGISTER_ONLY ?
					    json_string(r->reg) : json_null());
	o = json_pack("{s:o, s:I, s:s, s:o, s:s, s:o, s:o, s:o, s:b, s:o, s:o, s:I, s:s}",
		      "addr", hex(r->b.addr), "size", (json_int_t)r->b.size, "stack_id", id,
		      "allocated_at", snapshot__frame(&r->alloc),
		      "verdict", lr_verdict_names[c->verdict],
		      "at", at,
		      "at_s", c->verdict == LR_UNRESOLVED ? json_null() : json_real(r->at_s),
		      "thread", c->tid ? json_integer(c->tid) : json_null(),
		      "unwatched", c->unwatched,
		      "between_s", c->unwatched ? json_pack("[f, f]", r->since_s, r->at_s) : json_null(),
		      "reference", ref,
		      "references_left", (json_int_t)r->b.n_refs,
		      "line", lastref_out__line(line, sizeof(line), r));
	if (o)
		json_object_set_new(o, "reason", c->why[0] ? json_string(c->why) : json_null());
	if (o && (c->verdict == LR_FRAME_RETURNED || c->verdict == LR_REGISTER_ONLY))
		json_object_set_new(o, c->verdict == LR_FRAME_RETURNED ? "frame" : "thread_at",
				    snapshot__frame(&r->frame));
	return o;
}

int lastref_out__write(const char *path, int pid, const char *site, int watchpoints,
		       const struct lastref_result *v, size_t n)
{
	json_t *arr = json_array(), *doc;

	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, result_json(&v[i]));
	doc = json_pack("{s:s, s:s, s:i, s:o, s:o}", "schema", "leaktop.lastref/1",
			"leaktop_version", LEAKTOP_VERSION, "pid", pid, "site", snapshot__string(site),
			"lastref", arr);
	if (!doc)
		return -ENOMEM;
	json_object_set_new(doc, "watchpoints", watchpoints < 0 ? json_null() :
			    json_boolean(watchpoints));
	return snapshot__write_doc(path, doc);
}
