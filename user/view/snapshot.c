// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * snapshot.c - writes the model as JSON with jansson (the only file that touches it so far;
 * reading snapshots back comes with `leaktop report`).
 *
 * Field names follow the contract; unknown values are null, never 0 or "??".
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <jansson.h>

#include "util/atomic_file.h"
#include "util/vec.h"
#include "view/format.h"
#include "view/snapshot.h"

/* A JSON string of s (bytes that are not UTF-8 become U+FFFD), or null when s is NULL. */
json_t *snapshot__string(const char *s)
{
	json_t *j;
	char *clean, *w;

	if (!s)
		return json_null();
	j = json_string(s);
	if (j)
		return j;
	clean = malloc(strlen(s) * 3 + 1);
	if (!clean)
		return json_null();
	for (w = clean; *s; s++) {
		if ((unsigned char)*s < 0x80) {
			*w++ = *s;
		} else {
			memcpy(w, "\xef\xbf\xbd", 3);
			w += 3;
		}
	}
	*w = '\0';
	j = json_string(clean);
	free(clean);
	return j ? j : json_null();
}

json_t *snapshot__frame(const struct sym_frame *f)
{
	char addr[32];
	json_t *j;

	snprintf(addr, sizeof(addr), "0x%" PRIx64, f->addr);
	j = json_pack("{s:s, s:o, s:o, s:o, s:o, s:o}",
		      "addr", addr,
		      "symbol", snapshot__string(f->symbol),
		      "offset", f->symbol && !f->python ? json_integer(f->offset) : json_null(),
		      "module", snapshot__string(f->module),
		      "file", snapshot__string(f->file),
		      "line", f->line > 0 ? json_integer(f->line) : json_null());
	/* Native frames carry no "lang" (native when absent). */
	if (j && f->python && json_object_set_new(j, "lang", json_string("python"))) {
		json_decref(j);
		return NULL;
	}
	return j;
}

/* The unwind tables' use (bpf/leaktop.h, live/unwind_store.c) into stats. */
static void unwind_json(json_t *stats, const struct unwind_stats *u)
{
	static const struct {
		const char *name;
		size_t off;
	} fields[] = {
		{ "unwind_tables", offsetof(struct unwind_stats, tables) },
		{ "unwind_no_cfi", offsetof(struct unwind_stats, no_cfi) },
		{ "unwind_rows", offsetof(struct unwind_stats, rows) },
		{ "unwind_table_bytes", offsetof(struct unwind_stats, table_bytes) },
		{ "unwind_rows_capacity", offsetof(struct unwind_stats, capacity_rows) },
		{ "unwind_rows_full", offsetof(struct unwind_stats, rows_full) },
		{ "unwind_failed", offsetof(struct unwind_stats, failed) },
		{ "unwind_gone", offsetof(struct unwind_stats, gone) },
		{ "unwind_too_slow", offsetof(struct unwind_stats, too_slow) },
	};

	json_object_set_new(stats, "unwind", json_string(u->cfi ? "cfi" : "fp"));
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		json_object_set_new(stats, fields[i].name, json_integer((json_int_t)
				    *(const uint64_t *)((const char *)u + fields[i].off)));
}

static json_t *fd_types_json(const struct site *s)
{
	json_t *types = json_object();

	for (int t = 0; t < FD_TYPE__COUNT; t++)
		if (s->fd_types[t])
			json_object_set_new(types, fd_type_names[t], json_integer(s->fd_types[t]));
	return types;
}

static json_t *hex_json(uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	return json_string(buf);
}

/* {"definite": {"count", "bytes"}, "indirect": ..., "possible": ..., "reachable": ...} */
static json_t *classes_json(const uint64_t *count, const uint64_t *bytes)
{
	json_t *o = json_object();

	for (int k = SCAN__COUNT - 1; k >= 0; k--)
		json_object_set_new(o, scan_class_names[k], json_pack("{s:I, s:I}",
				    "count", (json_int_t)count[k], "bytes", (json_int_t)bytes[k]));
	return o;
}

/*
 * Sites' stacks as JSON text, kept from one snapshot to the next: resolved frames never change
 * (the model gives a site's frames a serial of their own) and they are most of a snapshot (90%
 * of a whole-system one's bytes under a build), so each stack is built and dumped once instead
 * of every interval, and the text is copied into the snapshot as it is.  Every full snapshot
 * marks the stacks it used; the others (their sites are gone) are dropped after it, so the
 * cache holds the stacks of one snapshot at most, as text (a tenth of what they take as
 * jansson values).  The text is in the form of the snapshot being written (compact, or
 * indented as at depth 0); a stack wanted in the other form is made again.
 */
struct stack_entry {
	uint64_t serial;		/* 0: free slot */
	char *text;			/* the stack as JSON (malloc'd) */
	size_t len;
	bool indent;			/* text is indented (JSON_INDENT), else compact */
	uint32_t epoch;			/* of the last full snapshot that used it */
};

static struct {
	struct stack_entry *v;
	size_t cap, n;			/* cap: 0 or a power of two */
	uint32_t epoch;
} stacks;

static struct stack_entry *stack_slot(struct stack_entry *v, size_t cap, uint64_t serial)
{
	size_t i = (size_t)((serial * 0x9e3779b97f4a7c15ULL) >> 20) & (cap - 1);

	while (v[i].serial && v[i].serial != serial)
		i = (i + 1) & (cap - 1);
	return &v[i];
}

/* A table of `cap` slots with the entries of the current epoch (all, with `all`). */
static int stacks_rehash(size_t cap, bool all)
{
	struct stack_entry *v = calloc(cap, sizeof(*v));
	size_t n = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < stacks.cap; i++) {
		struct stack_entry *e = &stacks.v[i];

		if (!e->serial)
			continue;
		if (!all && e->epoch != stacks.epoch) {
			free(e->text);
			continue;
		}
		*stack_slot(v, cap, e->serial) = *e;
		n++;
	}
	free(stacks.v);
	stacks.v = v;
	stacks.cap = cap;
	stacks.n = n;
	return 0;
}

size_t snapshot__cached_stacks(void)
{
	return stacks.n;
}

/* After a full snapshot: drop the stacks it did not use. */
static void stacks_sweep(void)
{
	size_t cap = 64;

	for (size_t i = 0; i < stacks.cap; i++)
		cap += stacks.v[i].serial && stacks.v[i].epoch == stacks.epoch;
	while (cap & (cap - 1))
		cap &= cap - 1;
	if (stacks.cap)
		stacks_rehash(cap * 4, false);
	stacks.epoch++;
}

/* ---------------------------------------------------------------- the writer */

/*
 * A snapshot is written in pieces: jansson builds and dumps one object at a time (the root
 * without its processes, each process without its sites, each site without its stack) and
 * the pieces are joined here, with the stacks' cached text, so no tree of the whole snapshot
 * is ever held.  The joins follow jansson's own layout (JSON_COMPACT, or JSON_INDENT(2) with
 * each piece's lines moved to its depth), so the document reads as one dump of it would; the
 * keys a join adds come last in their object.  Output is gathered and written a chunk at a
 * time (json_dumpf() hands each token to its own fwrite()).
 */
#define DUMP_CHUNK_BYTES (64u << 10)
#define INDENT_STEP 2

struct writer {
	FILE *f;
	char *b;			/* the chunk being gathered */
	size_t n;
	bool indent;
	size_t flags;			/* jansson's, for the pieces */
	int err;			/* the first write's error: -1 */
	char *piece;			/* the current piece's text */
	size_t piece_len, piece_cap;
};

static void w_flush(struct writer *w)
{
	if (!w->err && w->n && fwrite(w->b, 1, w->n, w->f) != w->n)
		w->err = -1;
	w->n = 0;
}

static int piece_add(const char *s, size_t len, void *ctx);

static void w_raw(struct writer *w, const char *s, size_t len)
{
	if (w->err)
		return;
	/* A writer with no file writes into its piece (a stack's text, for the cache). */
	if (!w->f) {
		if (piece_add(s, len, w))
			w->err = -1;
		return;
	}
	if (w->n + len > DUMP_CHUNK_BYTES)
		w_flush(w);
	if (len > DUMP_CHUNK_BYTES) {
		if (fwrite(s, 1, len, w->f) != len)
			w->err = -1;
		return;
	}
	memcpy(w->b + w->n, s, len);
	w->n += len;
}

static void w_str(struct writer *w, const char *s)
{
	w_raw(w, s, strlen(s));
}

/* A new line, indented to depth (indented output only). */
static void w_newline(struct writer *w, unsigned int depth)
{
	static const char spaces[] = "                                ";
	size_t n = (size_t)depth * INDENT_STEP;

	if (!w->indent)
		return;
	w_raw(w, "\n", 1);
	for (; n > sizeof(spaces) - 1; n -= sizeof(spaces) - 1)
		w_raw(w, spaces, sizeof(spaces) - 1);
	w_raw(w, spaces, n);
}

/* Text dumped as at depth 0, placed at depth: each of its lines moved over. */
static void w_text(struct writer *w, const char *s, size_t len, unsigned int depth)
{
	const char *nl;

	while (w->indent && depth && (nl = memchr(s, '\n', len))) {
		w_raw(w, s, (size_t)(nl - s));
		w_newline(w, depth);
		len -= (size_t)(nl + 1 - s);
		s = nl + 1;
	}
	w_raw(w, s, len);
}

static int piece_add(const char *s, size_t len, void *ctx)
{
	struct writer *w = ctx;

	if (VEC_RESERVE(w->piece, w->piece_cap, w->piece_len + len, 4096))
		return -1;
	memcpy(w->piece + w->piece_len, s, len);
	w->piece_len += len;
	return 0;
}

/* v dumped into w->piece (its reference taken).  0, or -1 (v NULL, or out of memory). */
static int w_dump_piece(struct writer *w, json_t *v)
{
	int err;

	w->piece_len = 0;
	err = !v || json_dump_callback(v, piece_add, w, w->flags) ? -1 : 0;
	json_decref(v);
	if (err)
		w->err = -1;
	return err;
}

/* A value (its reference taken) at depth. */
static void w_value(struct writer *w, json_t *v, unsigned int depth)
{
	if (!w_dump_piece(w, v))
		w_text(w, w->piece, w->piece_len, depth);
}

/*
 * The object obj (its reference taken) at depth, left open for more keys: false when it has
 * none yet (the first key takes no comma).
 */
static bool w_open(struct writer *w, json_t *obj, unsigned int depth)
{
	size_t len;

	if (w_dump_piece(w, obj))
		return false;
	len = w->piece_len;
	if (len && w->piece[len - 1] == '}')
		len--;
	while (len > 1 && (w->piece[len - 1] == '\n' || w->piece[len - 1] == ' '))
		len--;
	w_text(w, w->piece, len, depth);
	return len > 1;
}

/* Key `key` of the open object at depth (a name of ours: no escaping needed). */
static void w_key(struct writer *w, const char *key, unsigned int depth, bool *any)
{
	if (*any)
		w_raw(w, ",", 1);
	*any = true;
	w_newline(w, depth + 1);
	w_raw(w, "\"", 1);
	w_str(w, key);
	w_str(w, w->indent ? "\": " : "\":");
}

static void w_close(struct writer *w, unsigned int depth, bool any, char bracket)
{
	if (any)
		w_newline(w, depth);
	w_raw(w, &bracket, 1);
}

/* Element i of the array open at depth. */
static void w_elem(struct writer *w, size_t i, unsigned int depth)
{
	if (i)
		w_raw(w, ",", 1);
	w_newline(w, depth + 1);
}

/*
 * Values written as text directly, as jansson dumps them (the sites and frames of a whole-
 * system snapshot are thousands an interval: built as jansson values and dumped, they were
 * most of leaktop's own CPU time under load).  tests/unit/test_snapshot_stacks.c checks that a
 * snapshot is, byte for byte, jansson's own dump of what it reads back.
 */
static void w_null(struct writer *w)
{
	w_raw(w, "null", 4);
}

static void w_bool(struct writer *w, bool v)
{
	if (v)
		w_raw(w, "true", 4);
	else
		w_raw(w, "false", 5);
}

static void w_int(struct writer *w, int64_t v)
{
	char buf[24];

	w_raw(w, buf, (size_t)snprintf(buf, sizeof(buf), "%" PRId64, v));
}

static void w_hex(struct writer *w, uint64_t v)
{
	char buf[24];

	w_raw(w, buf, (size_t)snprintf(buf, sizeof(buf), "\"0x%" PRIx64 "\"", v));
}

/*
 * A real as jansson writes one with JSON_REAL_PRECISION(10): %.10g with a '.' as the decimal
 * point, ".0" added when it would read as an integer, no '+' or leading zeros in the exponent.
 * Not finite: null (jansson has no such value).
 */
static void w_real(struct writer *w, double v)
{
	char buf[40], *e, *from;
	int n;

	if (!isfinite(v)) {
		w_null(w);
		return;
	}
	n = snprintf(buf, sizeof(buf) - 3, "%.10g", v);
	if (n < 0 || (size_t)n >= sizeof(buf) - 3) {
		w_null(w);
		return;
	}
	for (int i = 0; i < n; i++)
		if (buf[i] != '-' && buf[i] != '+' && buf[i] != 'e' && (buf[i] < '0' || buf[i] > '9'))
			buf[i] = '.';	/* the locale's decimal point */
	if (!memchr(buf, '.', (size_t)n) && !memchr(buf, 'e', (size_t)n)) {
		memcpy(buf + n, ".0", 3);
		n += 2;
	}
	e = memchr(buf, 'e', (size_t)n);
	if (e) {
		char *start = e + 1;

		from = start + 1;
		if (*start == '-')
			start++;
		while (*from == '0')
			from++;
		if (from != start) {
			memmove(start, from, (size_t)(buf + n + 1 - from));
			n -= (int)(from - start);
		}
	}
	w_raw(w, buf, (size_t)n);
}

/* The length of the UTF-8 sequence at s (as jansson accepts it: no overlong form, no
 * surrogate, nothing past U+10FFFF), or 0. */
static size_t utf8_len(const unsigned char *s)
{
	uint32_t cp;
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] < 0xc2)
		return 0;
	n = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : s[0] < 0xf5 ? 4 : 0;
	if (!n)
		return 0;
	cp = s[0] & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

static bool utf8_valid(const char *s)
{
	for (size_t n; *s; s += n) {
		n = utf8_len((const unsigned char *)s);
		if (!n)
			return false;
	}
	return true;
}

/*
 * A string as JSON (null for NULL), as snapshot__string() makes it and jansson dumps it:
 * '"', '\\' and control characters escaped; when s is not UTF-8, every byte from 0x80 up
 * becomes U+FFFD.
 */
static void w_string(struct writer *w, const char *s)
{
	bool valid;
	const char *run;

	if (!s) {
		w_null(w);
		return;
	}
	valid = utf8_valid(s);
	w_raw(w, "\"", 1);
	for (run = s; *s; s++) {
		unsigned char c = (unsigned char)*s;
		char esc[8];
		const char *text = esc;
		size_t len = 2;

		if (c >= 0x20 && c != '"' && c != '\\' && (c < 0x80 || valid))
			continue;
		w_raw(w, run, (size_t)(s - run));
		run = s + 1;
		switch (c) {
		case '"': text = "\\\""; break;
		case '\\': text = "\\\\"; break;
		case '\b': text = "\\b"; break;
		case '\f': text = "\\f"; break;
		case '\n': text = "\\n"; break;
		case '\r': text = "\\r"; break;
		case '\t': text = "\\t"; break;
		default:
			if (c >= 0x80) {
				text = "\xef\xbf\xbd";
				len = 3;
			} else {
				len = (size_t)snprintf(esc, sizeof(esc), "\\u%04X", c);
			}
		}
		w_raw(w, text, len);
	}
	w_raw(w, run, (size_t)(s - run));
	w_raw(w, "\"", 1);
}

/* A frame at depth (an element of a stack), as snapshot__frame() would be dumped. */
static void w_frame(struct writer *w, const struct sym_frame *f, unsigned int depth)
{
	bool any = false;

	w_raw(w, "{", 1);
	w_key(w, "addr", depth, &any);
	w_hex(w, f->addr);
	w_key(w, "symbol", depth, &any);
	w_string(w, f->symbol);
	w_key(w, "offset", depth, &any);
	if (f->symbol && !f->python)
		w_int(w, (int64_t)f->offset);
	else
		w_null(w);
	w_key(w, "module", depth, &any);
	w_string(w, f->module);
	w_key(w, "file", depth, &any);
	w_string(w, f->file);
	w_key(w, "line", depth, &any);
	if (f->line > 0)
		w_int(w, f->line);
	else
		w_null(w);
	/* Native frames carry no "lang" (native when absent). */
	if (f->python) {
		w_key(w, "lang", depth, &any);
		w_string(w, "python");
	}
	w_close(w, depth, any, '}');
}

/* The stack of site s as JSON text (from the cache when it is there), or NULL. */
static const char *stack_text(struct writer *w, const struct site *s, size_t *len)
{
	struct stack_entry *e = NULL;
	struct writer mem;
	char *text;

	if (s->frames_serial && stacks.cap) {
		e = stack_slot(stacks.v, stacks.cap, s->frames_serial);
		if (e->serial && e->indent == w->indent) {
			e->epoch = stacks.epoch;
			*len = e->len;
			return e->text;
		}
		if (!e->serial)
			e = NULL;
	}
	/* Written as at depth 0, into the piece (a writer of its own, with no file). */
	mem = (struct writer){ .indent = w->indent, .piece = w->piece, .piece_cap = w->piece_cap };
	w_raw(&mem, "[", 1);
	for (uint32_t i = 0; i < s->n_frames; i++) {
		w_elem(&mem, i, 0);
		w_frame(&mem, &s->frames[i], 1);
	}
	w_close(&mem, 0, s->n_frames > 0, ']');
	w->piece = mem.piece;
	w->piece_cap = mem.piece_cap;
	w->piece_len = mem.piece_len;
	if (mem.err) {
		w->err = -1;
		return NULL;
	}
	*len = w->piece_len;
	if (!s->frames_serial)
		return w->piece;
	text = malloc(w->piece_len ? w->piece_len : 1);
	if (!text)
		return w->piece;
	memcpy(text, w->piece, w->piece_len);
	if (e) {
		/* Kept in the other form: this one replaces it. */
		free(e->text);
	} else {
		/* Kept at most half full; a cache that cannot grow only makes the stack again. */
		if (2 * (stacks.n + 1) > stacks.cap &&
		    stacks_rehash(stacks.cap ? 2 * stacks.cap : 256, true)) {
			free(text);
			return w->piece;
		}
		e = stack_slot(stacks.v, stacks.cap, s->frames_serial);
		stacks.n++;
	}
	*e = (struct stack_entry){ .serial = s->frames_serial, .text = text, .len = *len,
				   .indent = w->indent, .epoch = stacks.epoch };
	return text;
}

/*
 * sites[].retained_by: the paths from roots that hold the site's reachable blocks, largest
 * first: the root (kind, name, thread), the sites in between (from the root's side), and the
 * blocks and bytes held that way, with their share of the site's reachable bytes.
 */
static json_t *retained_json(const struct process *p, const struct scan_site *ss)
{
	json_t *arr = json_array();

	for (uint32_t i = 0; i < ss->n_retainers; i++) {
		const struct scan_retainer *rt = &ss->retainers[i];
		uint64_t reach = ss->bytes[SCAN_REACHABLE];
		json_t *chain = json_array();

		for (uint8_t c = 0; c < rt->n_chain; c++) {
			const struct site *cs = model__heap_site(p, rt->chain[c]);
			char id[24];

			snprintf(id, sizeof(id), "%016" PRIx64, rt->chain[c]);
			json_array_append_new(chain, json_pack("{s:s, s:o}", "stack_id", id,
					      "symbol", snapshot__string(cs && cs->n_frames ?
						      cs->frames[0].symbol : NULL)));
		}
		json_array_append_new(arr, json_pack("{s:{s:s, s:o, s:o, s:o}, s:o, s:b, s:I, "
						     "s:I, s:f}", "root",
			"kind", scan_root_kind_names[rt->root_kind < SCAN_ROOT__COUNT ?
						     rt->root_kind : 0],
			"name", rt->root_name[0] ? snapshot__string(rt->root_name) : json_null(),
			"addr", rt->root_reg == SCAN_ROOT_REG_NONE ? hex_json(rt->root_addr) :
								      json_null(),
			"thread", rt->root_tid ? json_integer(rt->root_tid) : json_null(),
			"chain", chain, "chain_cut", rt->cut,
			"blocks", (json_int_t)rt->blocks, "bytes", (json_int_t)rt->bytes,
			"share", reach ? (double)rt->bytes / (double)reach : 0.0));
	}
	return arr;
}

static json_t *counters_json(const struct proc_counters *c)
{
	bool split = c->valid && c->rss_split_valid;

	if (!c->valid)
		return json_pack("{s:n, s:n, s:n, s:n, s:n, s:n, s:n}", "rss_bytes", "vm_bytes",
				 "fd_count", "threads", "rss_anon_bytes", "rss_file_bytes",
				 "rss_shmem_bytes");
	return json_pack("{s:I, s:I, s:I, s:I, s:o, s:o, s:o}",
			 "rss_bytes", (json_int_t)c->rss_bytes,
			 "vm_bytes", (json_int_t)c->vm_bytes, "fd_count", (json_int_t)c->fd_count,
			 "threads", (json_int_t)c->threads,
			 "rss_anon_bytes", split ? json_integer(c->rss_anon_bytes) : json_null(),
			 "rss_file_bytes", split ? json_integer(c->rss_file_bytes) : json_null(),
			 "rss_shmem_bytes", split ? json_integer(c->rss_shmem_bytes) : json_null());
}

static json_t *leak_json(const struct process *p, const struct scan_leak *l)
{
	const struct site *site = model__heap_site(p, l->root.stack_hash);
	const char *sym = site && site->n_frames ? site->frames[0].symbol : NULL;
	json_t *edges = json_array();
	char id[24];

	for (uint32_t i = 0; i < l->n_edges; i++)
		json_array_append_new(edges, json_pack("{s:o, s:I, s:o}",
				      "from", hex_json(l->edges[i].from),
				      "offset", (json_int_t)l->edges[i].offset,
				      "to", hex_json(l->edges[i].to)));
	snprintf(id, sizeof(id), "%016" PRIx64, l->root.stack_hash);
	return json_pack("{s:{s:o, s:I, s:s, s:o, s:o}, s:I, s:I, s:o, s:I}",
			 "root", "addr", hex_json(l->root.addr), "size", (json_int_t)l->root.size,
			 "stack_id", id, "symbol", snapshot__string(sym),
			 "seq", l->root.seq ? json_integer((json_int_t)l->root.seq) : json_null(),
			 "blocks", (json_int_t)l->blocks, "bytes", (json_int_t)l->bytes,
			 "edges", edges, "edges_total", (json_int_t)l->total_edges);
}

/* scan.allocator: the glibc heaps' slack (null: no glibc heap walked). */
static json_t *slack_json(const struct heapslack *h)
{
	if (!h->valid)
		return json_null();
	return json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b}", "kind", "glibc",
			 "heaps", (json_int_t)h->heaps,
			 "resident_bytes", (json_int_t)h->resident_bytes,
			 "live_bytes", (json_int_t)h->live_bytes,
			 "free_bytes", (json_int_t)h->free_bytes,
			 "free_chunks", (json_int_t)h->free_chunks,
			 "top_bytes", (json_int_t)h->top_bytes,
			 "trimmable_bytes", (json_int_t)h->trimmable_bytes,
			 "partial", h->partial);
}

/* processes[].scan and .leak_graph: the latest scan's summary, or its error. */
static void scan_json(json_t *obj, const struct process *p)
{
	const struct scan_result *r = &p->scan->result;
	json_t *graph;

	if (!p->scan->ok) {
		const struct scan_partial *c = &p->scan->partial;
		json_t *o = json_pack("{s:s}", "error", p->scan->error);

		if (o && c->cut)
			json_object_set_new(o, "partial", json_pack("{s:f, s:I, s:I}",
					    "stop_ms", c->stop_ms,
					    "bytes_read", (json_int_t)c->bytes_read,
					    "bytes_total", (json_int_t)c->bytes_total));
		json_object_set_new(obj, "scan", o);
		return;
	}
	json_object_set_new(obj, "scan", json_pack("{s:f, s:I, s:I, s:I, s:o, s:o}",
			    "stop_ms", r->stop_ms, "threads", (json_int_t)r->threads,
			    "bytes_read", (json_int_t)r->bytes_read,
			    "blocks", (json_int_t)r->n_blocks,
			    "lost", classes_json(r->count, r->bytes),
			    "allocator", slack_json(&r->slack)));
	graph = json_array();
	for (size_t i = 0; i < r->n_leaks && i < SCAN_LEAKS_SHOWN; i++)
		json_array_append_new(graph, leak_json(p, &r->leaks[i]));
	json_object_set_new(obj, "leak_graph", graph);
}

/* A number, or null when unknown (NaN). */
static json_t *real_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

/* A time of the run clock as run time (like elapsed_s); null for 0 (never). */
static json_t *run_time_or_null(const struct model *m, uint64_t ns)
{
	return !ns || ns < m->start_ns ? json_null() : json_real((ns - m->start_ns) / 1e9);
}

/*
 * How this image's heap is traced: mode, since when (run time, like elapsed_s; null for a
 * watched one), when it was last released (null: never), what tracing it alone costs
 * (suspects mode, null: unknown or not traced), and whether the user picked it.
 */
static void heap_mode_json(const struct model *m, json_t *heap, const struct process *p)
{
	if (!heap)
		return;
	json_object_set_new(heap, "mode", json_string(heapmode__proc_name(p->heap_mode)));
	json_object_set_new(heap, "traced_since_s",
			    p->heap_mode == PROC_HEAP_WATCH || p->heap_since_ns < m->start_ns ?
			    json_null() : json_real((p->heap_since_ns - m->start_ns) / 1e9));
	json_object_set_new(heap, "released_at_s", run_time_or_null(m, p->heap_released_ns));
	json_object_set_new(heap, "cost_pct", real_or_null(p->heap_cost_pct));
	json_object_set_new(heap, "picked", json_boolean(p->heap_picked));
	/* Which path traced its heap: the uprobes, or the in-process agent (--agent). */
	json_object_set_new(heap, "via", json_string(p->heap_via_agent ? "agent" : "uprobes"));
	/* Allocator calls per second that trapped: unknown while not traced. */
	json_object_set_new(heap, "calls_per_s", p->heap_mode == PROC_HEAP_WATCH || !p->heap_calls_ns ?
			    json_null() : json_real(p->heap_calls_per_s));
}

/* The run's heap tracing under the budget (whole-system mode; null parts elsewhere). */
static void heap_stats_json(const struct model *m, json_t *stats)
{
	json_object_set_new(stats, "heap_mode", json_string(heapmode__name(m->heap_mode)));
	json_object_set_new(stats, "cost_pct", real_or_null(m->heap_cost_pct));
	json_object_set_new(stats, "exact_cost_pct", real_or_null(m->heap_exact_cost_pct));
	json_object_set_new(stats, "budget_pct", real_or_null(m->heap_budget_pct));
	json_object_set_new(stats, "trap_ns", real_or_null(m->heap_trap_ns));
	json_object_set_new(stats, "heap_switches", json_integer(m->heap_switches));
	json_object_set_new(stats, "traced_cost_pct", real_or_null(m->heap_traced_cost_pct));
	json_object_set_new(stats, "bucket_fill", real_or_null(m->heap_bucket_fill));
	json_object_set_new(stats, "heap_released", m->heap_budgeted ?
			    json_integer((json_int_t)model__heap_released(m)) : json_null());
}

/* The process as JSON, less its sites (the writer adds them). */
static json_t *lastref_hex(uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	return json_string(buf);
}

json_t *snapshot__lastref(const struct lastref_result *r)
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
				"addr", c->ref.kind == LR_REF_REGISTER ? json_null() : lastref_hex(c->ref.loc),
				"holder", c->ref.kind == LR_REF_HEAP ? lastref_hex(c->ref.holder) : json_null(),
				"thread", c->ref.tid ? json_integer(c->ref.tid) : json_null(),
				"register", r->reg[0] && c->verdict == LR_REGISTER_ONLY ?
					    json_string(r->reg) : json_null());
	o = json_pack("{s:o, s:I, s:s, s:o, s:s, s:o, s:o, s:o, s:b, s:o, s:o, s:I, s:s}",
		      "addr", lastref_hex(r->b.addr), "size", (json_int_t)r->b.size, "stack_id", id,
		      "allocated_at", snapshot__frame(&r->alloc),
		      "verdict", lr_verdict_names[c->verdict],
		      "at", at,
		      "at_s", c->verdict == LR_UNRESOLVED ? json_null() : json_real(r->at_s),
		      "thread", c->tid ? json_integer(c->tid) : json_null(),
		      "unwatched", c->unwatched,
		      "between_s", c->unwatched ? json_pack("[f, f]", r->since_s, r->at_s) : json_null(),
		      "reference", ref,
		      "references_left", (json_int_t)r->b.n_refs,
		      "line", fmt__lastref_line(line, sizeof(line), r));
	if (o)
		json_object_set_new(o, "reason", c->why[0] ? json_string(c->why) : json_null());
	if (o && (c->verdict == LR_FRAME_RETURNED || c->verdict == LR_REGISTER_ONLY))
		json_object_set_new(o, c->verdict == LR_FRAME_RETURNED ? "frame" : "thread_at",
				    snapshot__frame(&r->frame));
	return o;
}

static json_t *process_json(const struct model *m, const struct process *p)
{
	json_t *obj, *flags;

	flags = json_array();
	for (int f = 0; f < PROC_FLAG__COUNT; f++)
		if (p->flags & (1u << f))
			json_array_append_new(flags, json_string(proc_flags[f].name));
	obj = json_pack("{s:I, s:o, s:o, s:o, s:{s:I, s:I, s:I, s:I}, s:o, s:b}",
			"pid", (json_int_t)p->pid,
			"comm", snapshot__string(p->comm[0] ? p->comm : NULL),
			"cmdline", snapshot__string(p->cmdline),
			"counters", counters_json(&p->counters),
			"heap",
			"outstanding_bytes", (json_int_t)p->heap_outstanding_bytes,
			"outstanding_count", (json_int_t)p->heap_outstanding_count,
			"allocs", (json_int_t)p->heap_allocs,
			"frees", (json_int_t)p->heap_frees,
			"flags", flags,
			"exited", p->exited);
	if (obj) {
		json_t *heap = json_object_get(obj, "heap");

		heap_mode_json(m, heap, p);
		/* The allocator its malloc binds to: unknown is null. */
		json_object_set_new(heap, "allocator", p->alloc_module ?
				    json_pack("{s:o, s:o}",
					      "module", snapshot__string(p->alloc_module),
					      "kind", snapshot__string(p->alloc_kind)) :
				    json_null());
	}
	if (obj && p->scan)
		scan_json(obj, p);
	/* lastref's verdicts on its blocks, once one ran on it. */
	if (obj && (p->n_lastref || p->lastref_dropped)) {
		json_t *arr = json_array();

		for (size_t i = 0; i < p->n_lastref; i++)
			json_array_append_new(arr, snapshot__lastref(&p->lastref[i]));
		json_object_set_new(obj, "lastref", arr);
		json_object_set_new(obj, "lastref_dropped", json_integer(p->lastref_dropped));
	}
	if (obj) {
		/* Its cgroup and the container that names it; unknown is null. */
		json_object_set_new(obj, "cgroup", snapshot__string(p->cgroup));
		json_object_set_new(obj, "container",
				    snapshot__string(p->container[0] ? p->container : NULL));
	}
	if (obj && p->start_ticks)
		json_object_set_new(obj, "start_ticks", json_integer(p->start_ticks));
	if (obj) {
		/* Its records the shared maps lost: over its share, or a full map. */
		json_t *lost = json_object();

		for (int i = 0; i < LT_SHARE__COUNT; i++)
			json_object_set_new(lost, share_names[i],
					    json_integer((json_int_t)p->share_drops[i]));
		json_object_set_new(obj, "drops", lost);
	}
	if (obj && (m->resources & RES_FD))
		json_object_set_new(obj, "fd", json_pack("{s:I, s:I, s:I, s:I, s:o}",
			"outstanding_count", (json_int_t)p->fd_outstanding,
			"opens", (json_int_t)p->fd_opens,
			"closes", (json_int_t)p->fd_closes,
			"repaired", (json_int_t)p->fd_repaired,
			"untracked", p->fd_census_valid ? json_integer(p->fd_untracked)
							: json_null()));
	if (obj && (m->resources & RES_MMAP))
		json_object_set_new(obj, "mmap", json_pack("{s:I, s:I, s:I, s:I}",
			"outstanding_bytes", (json_int_t)p->mmap_outstanding_bytes,
			"outstanding_count", (json_int_t)p->mmap_outstanding_count,
			"maps", (json_int_t)p->mmap_maps,
			"unmaps", (json_int_t)p->mmap_unmaps));
	return obj;
}

/*
 * "symbols_missing": each module frames were resolved in that has no symbols, with its
 * package, the debug package that would name its functions, and the hint the text report
 * prints; null where unknown.
 */
static json_t *symbols_missing_json(const struct model *m)
{
	json_t *arr = json_array();
	char hint[FMT_HINT_LEN];

	for (size_t i = 0; arr && i < m->n_sym_missing; i++) {
		const struct sym_missing *h = &m->sym_missing[i];

		json_array_append_new(arr, json_pack("{s:o, s:o, s:s, s:o, s:o, s:o, s:o}",
			"module", snapshot__string(h->module),
			"build_id", snapshot__string(h->build_id),
			"package_lookup", sym_pkg_lookup_names[h->lookup],
			"package", snapshot__string(h->package),
			"source_package", snapshot__string(h->source),
			"debug_package", snapshot__string(h->debug_package),
			"hint", snapshot__string(fmt__symbols_hint(hint, sizeof(hint), h))));
	}
	return arr ? arr : json_null();
}

/* The model as a snapshot: every visible process, or only `only` (visible or not). */
/*
 * --stop-at's allocation: {"pid", "tid", "addr", "size_bytes", "seq", "stack_id", "stack"}
 * (the stack of its site when the snapshot holds it, else null).
 */
static json_t *stop_json(const struct model *m)
{
	const struct stop_record *st = &m->stop;
	const struct process *p = model__find(m, st->pid, st->gen);
	const struct site *s = p ? model__heap_site(p, st->stack_hash) : NULL;
	json_t *stack = s ? json_array() : json_null();
	char id[24];

	for (uint32_t i = 0; s && i < s->n_frames; i++)
		json_array_append_new(stack, snapshot__frame(&s->frames[i]));
	snprintf(id, sizeof(id), "%016" PRIx64, st->stack_hash);
	return json_pack("{s:I, s:I, s:o, s:I, s:I, s:s, s:o}",
			 "pid", (json_int_t)st->pid,
			 "tid", (json_int_t)st->tid,
			 "addr", hex_json(st->addr),
			 "size_bytes", (json_int_t)st->size_bytes,
			 "seq", (json_int_t)st->seq,
			 "stack_id", id,
			 "stack", stack);
}

/* The snapshot's root, less its processes, symbols_missing and stop_at (the writer adds them). */
static json_t *root_json(const struct model *m)
{
	json_t *root, *stats, *drops = json_object();
	struct utsname u;
	char when[32];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (uname(&u))
		memset(&u, 0, sizeof(u));
	for (int i = 0; i < LT_DROP__COUNT; i++)
		json_object_set_new(drops, drop_names[i], json_integer(m->drops[i]));
	stats = json_pack("{s:I, s:I, s:o}",
			  "events", (json_int_t)model__events(m),
			  "dropped", (json_int_t)model__dropped(m),
			  "drops", drops);
	for (int i = 0; stats && i < LT_CNT__COUNT; i++) {
		if (i != LT_CNT_EVENTS)
			json_object_set_new(stats, counter_names[i],
					    json_integer((json_int_t)m->counters[i]));
	}
	if (stats) {
		json_object_set_new(stats, "probes", json_integer((json_int_t)m->probes_attached));
		json_object_set_new(stats, "libcs_refused",
				    json_integer((json_int_t)m->libcs_refused));
		json_object_set_new(stats, "files_refused_fs",
				    json_integer((json_int_t)m->files_refused_fs));
		json_object_set_new(stats, "alloc_unreadable",
				    json_integer((json_int_t)m->alloc_unreadable));
		json_object_set_new(stats, "alloc_scan_pending",
				    json_integer((json_int_t)m->alloc_scan_pending));
		json_object_set_new(stats, "heap_attach", m->heap_attach[0] ?
				    json_string(m->heap_attach) : json_null());
		json_object_set_new(stats, "syscall_attach", m->syscall_attach[0] ?
				    json_string(m->syscall_attach) : json_null());
		json_object_set_new(stats, "syscall_attach_why", m->syscall_why[0] ?
				    json_string(m->syscall_why) : json_null());
		json_object_set_new(stats, "collect_ms", json_real(m->collect_ms));
		json_object_set_new(stats, "oom_snapshots_failed",
				    json_integer((json_int_t)m->oom_snapshots_failed));
		json_object_set_new(stats, "oom_snapshots_skipped",
				    json_integer((json_int_t)m->oom_snapshots_skipped));
		json_object_set_new(stats, "oom_snapshots_removed",
				    json_integer((json_int_t)m->oom_snapshots_removed));
		unwind_json(stats, &m->unwind);
	}
	root = json_pack("{s:s, s:s, s:s, s:s, s:s, s:f, s:f, s:o}",
			 "schema", SNAPSHOT_SCHEMA,
			 "leaktop_version", LEAKTOP_VERSION,
			 "host", u.nodename,
			 "kernel", u.release,
			 "time", when,
			 "elapsed_s", model__elapsed_s(m),
			 "interval_s", m->interval_s,
			 "stats", stats);
	stats = root ? json_object_get(root, "stats") : NULL;
	if (stats) {
		/* Work the interval's budget left for the next one. */
		json_object_set_new(stats, "deferred",
				    json_pack("{s:I, s:I}",
					      "sites", (json_int_t)m->stacks_pending,
					      "procs", (json_int_t)m->procs_deferred));
		/* Processes found ended in /proc, their end event lost. */
		json_object_set_new(stats, "reconciled",
				    json_pack("{s:I, s:I}",
					      "exited", (json_int_t)m->reconciled_exited,
					      "reused", (json_int_t)m->reconciled_reused));
		/* leaktop's own cost; unknown (a saved snapshot re-emitted) is null. */
		json_object_set_new(stats, "self_rss_bytes", m->self_rss_bytes ?
				    json_integer(m->self_rss_bytes) : json_null());
		json_object_set_new(stats, "self_cpu_s", m->self_cpu_s > 0 ?
				    json_real(m->self_cpu_s) : json_null());
		heap_stats_json(m, stats);
	}
	return root;
}

/* Site s of process p at depth (an element of its process's "sites"), its stack last. */
static void write_site(struct writer *w, const struct model *m, const struct process *p,
		       const struct site *s, unsigned int depth)
{
	const struct scan_site *ss = s->kind == LT_KIND_HEAP && p ?
				     model__scan_site(p, s->stack_hash) : NULL;
	int64_t outstanding = site__outstanding(s);
	const char *stack;
	bool any = false;
	char id[24];
	size_t len;

	w_raw(w, "{", 1);
	w_key(w, "kind", depth, &any);
	w_string(w, site_kind_name(s->kind));
	w_key(w, "outstanding_bytes", depth, &any);
	w_int(w, (int64_t)s->outstanding_bytes);
	w_key(w, "outstanding_count", depth, &any);
	w_int(w, outstanding);
	w_key(w, "allocs", depth, &any);
	w_int(w, (int64_t)s->allocs);
	w_key(w, "frees", depth, &any);
	w_int(w, (int64_t)site__frees(s));
	w_key(w, "growth_per_s", depth, &any);
	w_real(w, s->growth_per_s);
	w_key(w, "flagged", depth, &any);
	w_bool(w, s->flagged);
	w_key(w, "oldest_age_s", depth, &any);
	if (outstanding > 0 && s->live_since_ns && s->live_since_ns <= m->now_ns)
		w_real(w, (m->now_ns - s->live_since_ns) / 1e9);
	else
		w_null(w);
	w_key(w, "stack_id", depth, &any);
	snprintf(id, sizeof(id), "%016" PRIx64, (uint64_t)s->stack_hash);
	w_string(w, id);
	w_key(w, "trend_z", depth, &any);
	w_real(w, s->trend_z);
	if (s->kind == LT_KIND_HEAP) {
		w_key(w, "stale", depth, &any);
		w_bool(w, s->stale);
	}
	if (s->kind == LT_KIND_FD) {
		json_t *samples = json_array();

		for (uint32_t i = 0; i < s->n_fd_samples; i++)
			json_array_append_new(samples, snapshot__string(s->fd_samples[i]));
		w_key(w, "fd_types", depth, &any);
		w_value(w, fd_types_json(s), depth + 1);
		w_key(w, "fd_samples", depth, &any);
		w_value(w, samples, depth + 1);
		w_key(w, "repaired", depth, &any);
		w_int(w, (int64_t)s->repaired);
	} else {
		w_key(w, "alloc_bytes", depth, &any);
		w_int(w, (int64_t)s->alloc_bytes);
	}
	if (s->has_lost) {
		json_t *lost = classes_json(s->lost_count, s->lost_bytes), *seqs = json_array();

		/* The definitely lost blocks' allocation numbers (the lowest; count: all). */
		for (uint32_t i = 0; i < s->n_lost_seqs; i++)
			json_array_append_new(seqs, json_integer((json_int_t)s->lost_seqs[i]));
		json_object_set_new(json_object_get(lost, "definite"), "seqs", seqs);
		w_key(w, "lost", depth, &any);
		w_value(w, lost, depth + 1);
	}
	if (ss && ss->count[SCAN_REACHABLE]) {
		w_key(w, "retained_by", depth, &any);
		w_value(w, retained_json(p, ss), depth + 1);
		w_key(w, "retained_paths", depth, &any);
		w_int(w, (int64_t)ss->retainer_paths);
	}
	if (w->err)
		return;
	w_key(w, "stack", depth, &any);
	stack = stack_text(w, s, &len);
	if (stack)
		w_text(w, stack, len, depth + 1);
	w_close(w, depth, any, '}');
}

/* Process p at depth (an element of "processes"). */
static void write_process(struct writer *w, const struct model *m, const struct process *p,
			  unsigned int depth)
{
	struct site **sites = model__sites_by_outstanding(p);
	bool any = w_open(w, process_json(m, p), depth);

	if (!sites && p->n_sites)
		w->err = -1;
	if (!w->err) {
		w_key(w, "sites", depth, &any);
		w_raw(w, "[", 1);
		for (size_t i = 0; i < p->n_sites && !w->err; i++) {
			w_elem(w, i, depth + 1);
			write_site(w, m, p, sites[i], depth + 2);
		}
		w_close(w, depth + 1, p->n_sites > 0, ']');
		w_close(w, depth, any, '}');
	}
	free(sites);
}

/*
 * The model as a snapshot to f (indented, or one line): every visible process, or only
 * `only` (visible or not).  0, or -1 with errno from the failed write (or ENOMEM).
 */
static int write_snapshot(FILE *f, const struct model *m, const struct process *only,
			  bool indent)
{
	struct writer w = { .f = f, .b = malloc(DUMP_CHUNK_BYTES), .indent = indent,
			    .flags = (indent ? JSON_INDENT(INDENT_STEP) : JSON_COMPACT) |
				     JSON_REAL_PRECISION(10) };
	struct process **procs = NULL;
	size_t n = 0, shown = 0;
	bool any;

	if (!w.b) {
		errno = ENOMEM;
		return -1;
	}
	if (!only) {
		procs = model__procs_by_outstanding(m, &n);
		if (!procs && n)
			w.err = -1;
	}
	any = w_open(&w, root_json(m), 0);
	w_key(&w, "processes", 0, &any);
	w_raw(&w, "[", 1);
	for (size_t i = 0; i < n && !w.err; i++) {
		if (!model__visible(procs[i]))
			continue;
		w_elem(&w, shown++, 1);
		write_process(&w, m, procs[i], 2);
	}
	if (only) {
		w_elem(&w, shown++, 1);
		write_process(&w, m, only, 2);
	}
	free(procs);
	w_close(&w, 1, shown > 0, ']');
	w_key(&w, "symbols_missing", 0, &any);
	w_value(&w, symbols_missing_json(m), 1);
	if (m->stop.fired && (!only || only->pid == m->stop.pid)) {
		w_key(&w, "stop_at", 0, &any);
		w_value(&w, stop_json(m), 1);
	}
	w_close(&w, 0, any, '}');
	w_raw(&w, "\n", 1);
	w_flush(&w);
	if (!only && !w.err)
		stacks_sweep();
	free(w.b);
	free(w.piece);
	if (w.err && !errno)
		errno = EIO;
	return w.err;
}

static int write_file(const char *path, const struct model *m, const struct process *only)
{
	struct atomic_file af;
	int err, ok;

	err = atomic_file__open(&af, path);
	if (err)
		return err;
	errno = 0;
	ok = write_snapshot(af.f, m, only, true) == 0;
	err = atomic_file__close(&af, ok);
	return err ? err : (ok ? 0 : -EIO);
}

int snapshot__write_file(const char *path, const struct model *m)
{
	return write_file(path, m, NULL);
}

int snapshot__write_process_file(const char *path, const struct model *m,
				 const struct process *p)
{
	return write_file(path, m, p);
}

int snapshot__write_line(FILE *out, const struct model *m)
{
	errno = 0;
	if (write_snapshot(out, m, NULL, false) || fflush(out))
		return errno == EPIPE ? -EPIPE : -EIO;
	return 0;
}

int snapshot__write_doc(const char *path, json_t *doc)
{
	struct atomic_file af;
	int err, ok;

	if (!doc)
		return -ENOMEM;
	err = atomic_file__open(&af, path);
	if (err) {
		json_decref(doc);
		return err;
	}
	ok = !json_dumpf(doc, af.f, JSON_INDENT(1)) && fputc('\n', af.f) != EOF;
	json_decref(doc);
	err = atomic_file__close(&af, ok);
	return err ? err : ok ? 0 : -EIO;
}
