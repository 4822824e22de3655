// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * snapshot_read.c - turns a "leaktop.snapshot/1" file back into a struct model, so `leaktop
 * report`, `leaktop diff` and the exports render saved data with the code that renders live
 * data.  It owns the checks a file must pass and their messages.
 *
 * The file is parsed by jansson, the library snapshot.c writes it with, with duplicate keys
 * refused.  Limits that hold whatever the file holds: its size is checked before it is read
 * (SNAPSHOT_MAX_FILE_BYTES); jansson allocates through a counting allocator that refuses to
 * go past SNAPSHOT_MAX_JSON_BYTES while a snapshot loads (a small file of many tiny values
 * could otherwise take gigabytes); jansson stops at JSON_PARSER_MAX_DEPTH levels of nesting;
 * numbers are bounded to 2^53, so no sum a view makes overflows.  Then every field a view
 * reads is checked for presence, type and range, and a failure names the field's path
 * ("processes[2].sites[0].allocs").  Fields added by later versions are ignored; values the
 * file marks unknown (null) stay unknown in the model.
 *
 * The model is built the way model.c builds its own, so model__free() releases it: processes
 * sorted by (pid, gen) with gen the process's position in the file, sites sorted by (kind,
 * stack hash), empty histories.  Process totals are the file's, not sums recomputed here.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>

#include "util/vec.h"
#include "view/format.h"
#include "view/snapshot.h"
#include "view/snapshot_read.h"

#define FIX_SNAPSHOT "pass a snapshot file written by leaktop -j"
#define FIX_DAMAGED "the file is damaged or was not written by leaktop: take a new snapshot " \
		    "with leaktop -j"
#define NUM_MAX (1ll << 53)		/* largest count a file may hold (exact in a double) */
#define SECONDS_MAX 1e9			/* ~31 years */
#define TIME_BASE_NS (1ull << 62)	/* model clock origin: room for ages before "start" */
#define STR_(x) #x
#define STR(x) STR_(x)

/* ---------------------------------------------------------------- jansson's memory */

/*
 * jansson allocates through these from the start of the process (a constructor installs
 * them, so no jansson value ever predates them).  Outside a load they only count; during a
 * load, an allocation that would take the load past `limit` fails, jansson reports
 * json_error_out_of_memory and frees what it built.
 */
static struct {
	long long live;		/* bytes jansson holds now */
	long long base;		/* `live` when the current load started */
	long long limit;
	bool armed;
	bool refused;		/* the current load hit the limit */
} jmem = { .limit = SNAPSHOT_MAX_JSON_BYTES };

static void *jmem_malloc(size_t n)
{
	max_align_t *h;

	if (jmem.armed && (n > (size_t)jmem.limit ||
			   jmem.live - jmem.base > jmem.limit - (long long)n)) {
		jmem.refused = true;
		return NULL;
	}
	h = malloc(sizeof(*h) + n);
	if (!h)
		return NULL;
	*(size_t *)h = n;
	jmem.live += n;
	return h + 1;
}

static void jmem_free(void *ptr)
{
	max_align_t *h;

	if (!ptr)
		return;
	h = (max_align_t *)ptr - 1;
	jmem.live -= *(size_t *)h;
	free(h);
}

__attribute__((constructor)) static void jmem_install(void)
{
	json_set_alloc_funcs(jmem_malloc, jmem_free);
}

static void jmem_arm(bool on)
{
	jmem.armed = on;
	jmem.base = jmem.live;
	if (on)
		jmem.refused = false;
}

size_t snapshot__set_json_limit(size_t bytes)
{
	size_t old = jmem.limit;

	jmem.limit = bytes;
	return old;
}

/* ---------------------------------------------------------------- loading */

/* Messages are one line: control characters from a path or from the file become '?'. */
static void one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

static const struct {
	enum json_error_code code;
	const char *cause;	/* follows "snapshot PATH " */
	const char *fix;
	bool detail;		/* add jansson's position and message */
} parse_errors[] = {
	{ json_error_premature_end_of_input, "is truncated (it ends inside a JSON value)",
	  "use a complete snapshot: leaktop -j replaces its file whole, copy that file", false },
	{ json_error_stack_overflow, "nests JSON deeper than " STR(JSON_PARSER_MAX_DEPTH)
	  " levels", FIX_SNAPSHOT, false },
	{ json_error_out_of_memory, "is too large to load: its JSON values need more memory than "
	  "a snapshot may use", FIX_SNAPSHOT, false },
	{ json_error_end_of_input_expected, "holds more than one JSON value",
	  "pass one snapshot (from JSON Lines written by -j -, take one line: "
	  "tail -n 1 FILE > snapshot.json)", true },
	{ json_error_duplicate_key, "has a duplicate key", FIX_SNAPSHOT, true },
	{ json_error_invalid_utf8, "is not valid UTF-8", FIX_SNAPSHOT, true },
	{ json_error_numeric_overflow, "has a number out of range", FIX_SNAPSHOT, true },
};

/* The first byte of a document that is not white space (0 if none). */
static int first_byte(const unsigned char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strchr(" \t\r\n", buf[i]))
			return buf[i];
	return 0;
}

/* `first`: the document's first byte (first_byte()). */
static int parse_error(const char *name, const json_error_t *je, size_t size, int first,
		       char *err, size_t len)
{
	enum json_error_code code = json_error_code(je);
	const char *cause = "is not valid JSON", *fix = FIX_SNAPSHOT;
	bool detail = true;

	/* Some of jansson's allocation failures come back without an error code. */
	if (jmem.refused)
		code = json_error_out_of_memory;
	/* An object or array that fails at its very end was cut there ("nu", "2.", "\u1"). */
	if ((code == json_error_invalid_syntax || code == json_error_invalid_utf8) &&
	    (size_t)je->position >= size && (first == '{' || first == '['))
		code = json_error_premature_end_of_input;
	for (size_t i = 0; i < sizeof(parse_errors) / sizeof(parse_errors[0]); i++) {
		if (parse_errors[i].code != code)
			continue;
		cause = parse_errors[i].cause;
		fix = parse_errors[i].fix;
		detail = parse_errors[i].detail;
	}
	if (detail)
		snprintf(err, len, "snapshot %s %s (line %d, column %d: %s); %s", name, cause,
			 je->line, je->column, je->text, fix);
	else
		snprintf(err, len, "snapshot %s %s; %s", name, cause, fix);
	return code == json_error_out_of_memory ? -ENOMEM : -EINVAL;
}

static int check_schema(json_t *root, const char *name, char *err, size_t len)
{
	json_t *schema;

	if (!json_is_object(root)) {
		snprintf(err, len, "%s is not a leaktop snapshot (a JSON %s, not an object); "
			 FIX_SNAPSHOT, name, json_is_array(root) ? "array" : "scalar");
		return -EINVAL;
	}
	schema = json_object_get(root, "schema");
	if (!schema) {
		snprintf(err, len, "%s is not a leaktop snapshot (it has no \"schema\" field); "
			 FIX_SNAPSHOT, name);
		return -EINVAL;
	}
	if (!json_is_string(schema) || strcmp(json_string_value(schema), SNAPSHOT_SCHEMA)) {
		snprintf(err, len, "%s is not a leaktop snapshot (schema \"%.60s\", expected \""
			 SNAPSHOT_SCHEMA "\"); " FIX_SNAPSHOT, name,
			 json_is_string(schema) ? json_string_value(schema) : "(not a string)");
		return -EINVAL;
	}
	return 0;
}

static int too_large(const char *name, unsigned long long size, char *err, size_t len)
{
	snprintf(err, len, "snapshot %s is %.1f MiB, more than the %llu MiB a snapshot may be; "
		 FIX_SNAPSHOT, name, size / 1048576.0, SNAPSHOT_MAX_FILE_BYTES >> 20);
	return -EFBIG;
}

int snapshot__load(const char *path, json_t **root, char *err, size_t len)
{
	unsigned char head[256];
	json_error_t je;
	struct stat st;
	FILE *f = NULL;
	ssize_t n;
	int fd, ret = 0;

	*root = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, len, "cannot open snapshot %s: %s; check the path", path,
			 strerror(-ret));
		goto out;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		snprintf(err, len, "cannot read snapshot %s: %s; check the path", path,
			 strerror(-ret));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		snprintf(err, len, "%s is %s, not a snapshot file; " FIX_SNAPSHOT, path,
			 S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
		goto out;
	}
	if (!st.st_size) {
		ret = -EINVAL;
		snprintf(err, len, "snapshot %s is empty; " FIX_SNAPSHOT, path);
		goto out;
	}
	if ((unsigned long long)st.st_size > SNAPSHOT_MAX_FILE_BYTES) {
		ret = too_large(path, st.st_size, err, len);
		goto out;
	}
	n = pread(fd, head, sizeof(head), 0);
	/* Buffered: json_loadfd() would make one read() per byte. */
	f = fdopen(fd, "r");
	if (!f) {
		ret = -errno;
		snprintf(err, len, "cannot read snapshot %s: %s; free some memory and retry", path,
			 strerror(-ret));
		goto out;
	}
	fd = -1;
	jmem_arm(true);
	*root = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
	jmem_arm(false);
	if (!*root) {
		ret = parse_error(path, &je, st.st_size, first_byte(head, n > 0 ? n : 0), err,
				  len);
		goto out;
	}
	ret = check_schema(*root, path, err, len);
out:
	if (f)
		fclose(f);
	if (fd >= 0)
		close(fd);
	if (ret) {
		json_decref(*root);
		*root = NULL;
		one_line(err);
	}
	return ret;
}

static int load_buf(const void *buf, size_t size, const char *name, json_t **root, char *err,
		    size_t len)
{
	json_error_t je;
	int ret = 0;

	*root = NULL;
	if (!size) {
		ret = -EINVAL;
		snprintf(err, len, "snapshot %s is empty; " FIX_SNAPSHOT, name);
		goto out;
	}
	if (size > SNAPSHOT_MAX_FILE_BYTES) {
		ret = too_large(name, size, err, len);
		goto out;
	}
	jmem_arm(true);
	*root = json_loadb(buf, size, JSON_REJECT_DUPLICATES, &je);
	jmem_arm(false);
	if (!*root) {
		ret = parse_error(name, &je, size, first_byte(buf, size < 256 ? size : 256), err,
				  len);
		goto out;
	}
	ret = check_schema(*root, name, err, len);
out:
	if (ret) {
		json_decref(*root);
		*root = NULL;
		one_line(err);
	}
	return ret;
}

/* ---------------------------------------------------------------- field checks */

/* Where the reader is in the document, for messages: "processes[2].sites[0]". */
struct rd {
	char *err;
	size_t len;
	char where[192];
};

static const char *const type_names[] = {
	[JSON_OBJECT] = "an object", [JSON_ARRAY] = "an array", [JSON_STRING] = "a string",
	[JSON_INTEGER] = "an integer", [JSON_REAL] = "a real number", [JSON_TRUE] = "true",
	[JSON_FALSE] = "false", [JSON_NULL] = "null",
};

static size_t at_key(struct rd *r, const char *key)
{
	size_t mark = strlen(r->where);

	snprintf(r->where + mark, sizeof(r->where) - mark, "%s%s", mark ? "." : "", key);
	return mark;
}

static size_t at_index(struct rd *r, size_t i)
{
	size_t mark = strlen(r->where);

	snprintf(r->where + mark, sizeof(r->where) - mark, "[%zu]", i);
	return mark;
}

static void back(struct rd *r, size_t mark)
{
	r->where[mark] = '\0';
}

/* "<where>.<key> <why>"; always -EINVAL. */
__attribute__((format(printf, 3, 4)))
static int bad(struct rd *r, const char *key, const char *fmt, ...)
{
	size_t mark = key ? at_key(r, key) : strlen(r->where);
	int n = snprintf(r->err, r->len, "%s ", r->where[0] ? r->where : "the document");
	va_list ap;

	back(r, mark);
	if (n < 0 || (size_t)n >= r->len)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(r->err + n, r->len - n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int bad_type(struct rd *r, const char *key, const json_t *v, const char *want)
{
	return bad(r, key, "is %s, expected %s", type_names[json_typeof(v)], want);
}

enum {
	F_REQ = 1 << 0,		/* must be present */
	F_NULL = 1 << 1,	/* may be null: unknown, left 0 */
};

/* A member that must be `type` (or null, with F_NULL); NULL when absent or null. */
static int member(struct rd *r, json_t *obj, const char *key, json_type type, unsigned int flags,
		  json_t **out)
{
	static const char *const want[] = {
		[JSON_OBJECT] = "an object", [JSON_ARRAY] = "an array", [JSON_STRING] = "a string",
		[JSON_INTEGER] = "an integer", [JSON_REAL] = "a number", [JSON_TRUE] = "a boolean",
		[JSON_FALSE] = "a boolean", [JSON_NULL] = "null",
	};
	json_t *v = json_object_get(obj, key);
	bool ok;

	*out = NULL;
	if (!v)
		return flags & F_REQ ? bad(r, key, "is missing") : 0;
	if (json_is_null(v)) {
		if (flags & F_NULL)
			return 0;
		return bad(r, key, "is null, expected %s", want[type]);
	}
	if (type == JSON_REAL)
		ok = json_is_number(v);
	else if (type == JSON_TRUE || type == JSON_FALSE)
		ok = json_is_boolean(v);
	else
		ok = json_typeof(v) == type;
	if (!ok)
		return bad_type(r, key, v, want[type]);
	*out = v;
	return 0;
}

struct int_field {
	const char *key;
	size_t off;		/* into the destination */
	unsigned char size;	/* 4 or 8 bytes */
	long long min, max;
	unsigned char flags;
};

/* Read integer fields into dst; bit i of *known is set when field i held a number. */
static int read_ints(struct rd *r, json_t *obj, void *dst, const struct int_field *f, size_t n,
		     unsigned int *known)
{
	unsigned int mask = 0;
	int ret;

	for (size_t i = 0; i < n; i++) {
		json_t *v;
		long long x;

		ret = member(r, obj, f[i].key, JSON_INTEGER, f[i].flags, &v);
		if (ret)
			return ret;
		if (!v)
			continue;
		x = json_integer_value(v);
		if (x < f[i].min || x > f[i].max)
			return bad(r, f[i].key, "is %lld, expected %lld to %lld", x, f[i].min,
				   f[i].max);
		if (f[i].size == 8) {
			int64_t v64 = x;

			memcpy((char *)dst + f[i].off, &v64, 8);
		} else {
			uint32_t v32 = (uint32_t)x;

			memcpy((char *)dst + f[i].off, &v32, 4);
		}
		mask |= 1u << i;
	}
	if (known)
		*known = mask;
	return 0;
}

struct real_field {
	const char *key;
	size_t off;		/* of a double in the destination */
	double min, max;
	unsigned char flags;
};

static int read_reals(struct rd *r, json_t *obj, void *dst, const struct real_field *f, size_t n,
		      unsigned int *known)
{
	unsigned int mask = 0;
	int ret;

	for (size_t i = 0; i < n; i++) {
		json_t *v;
		double x;

		ret = member(r, obj, f[i].key, JSON_REAL, f[i].flags, &v);
		if (ret)
			return ret;
		if (!v)
			continue;
		x = json_number_value(v);
		if (!isfinite(x) || x < f[i].min || x > f[i].max)
			return bad(r, f[i].key, "is %g, expected %g to %g", x, f[i].min, f[i].max);
		memcpy((char *)dst + f[i].off, &x, sizeof(x));
		mask |= 1u << i;
	}
	if (known)
		*known = mask;
	return 0;
}

/* A string member copied with strdup (*out NULL when absent or null). */
static int read_strdup(struct rd *r, json_t *obj, const char *key, unsigned int flags, char **out)
{
	json_t *v;
	int ret = member(r, obj, key, JSON_STRING, flags | F_NULL, &v);

	*out = NULL;
	if (ret || !v)
		return ret;
	*out = strdup(json_string_value(v));
	return *out ? 0 : -ENOMEM;
}

/* A string member copied into buf (truncated); "" when absent or null. */
static int read_strbuf(struct rd *r, json_t *obj, const char *key, unsigned int flags, char *buf,
		       size_t size)
{
	json_t *v;
	int ret = member(r, obj, key, JSON_STRING, flags | F_NULL, &v);

	buf[0] = '\0';
	if (ret || !v)
		return ret;
	snprintf(buf, size, "%s", json_string_value(v));
	return 0;
}

static int read_bool(struct rd *r, json_t *obj, const char *key, unsigned int flags, bool *out)
{
	json_t *v;
	int ret = member(r, obj, key, JSON_TRUE, flags, &v);

	*out = v && json_is_true(v);
	return ret;
}

/* "0x55d0c0ffee00" (at most 16 hex digits). */
static int parse_hex(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	size_t n = 0;

	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return -EINVAL;
	for (s += 2; *s; s++, n++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if ((*s | 0x20) >= 'a' && (*s | 0x20) <= 'f')
			d = (*s | 0x20) - 'a' + 10;
		else
			return -EINVAL;
		if (n == 16)
			return -EINVAL;
		v = v << 4 | d;
	}
	if (!n)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Digits of a fixed-width field; -1 if any is not a digit. */
static int digits(const char *s, int n)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

/* RFC 3339 ("2026-11-21T10:00:00Z", with an optional fraction and offset) to Unix seconds. */
static int parse_time(const char *s, double *out)
{
	struct tm tm = {};
	double frac = 0, scale = 0.1;
	int offset = 0, y, mo, d, h, mi, sec;
	const char *p;
	time_t t;

	if (strlen(s) < 20 || s[4] != '-' || s[7] != '-' || (s[10] | 0x20) != 't' ||
	    s[13] != ':' || s[16] != ':')
		return -EINVAL;
	y = digits(s, 4);
	mo = digits(s + 5, 2);
	d = digits(s + 8, 2);
	h = digits(s + 11, 2);
	mi = digits(s + 14, 2);
	sec = digits(s + 17, 2);
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 ||
	    mi > 59 || sec < 0 || sec > 60)
		return -EINVAL;
	p = s + 19;
	if (*p == '.') {
		if (p[1] < '0' || p[1] > '9')
			return -EINVAL;
		for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10)
			frac += (*p - '0') * scale;
	}
	if ((*p | 0x20) == 'z') {
		p++;
	} else if ((*p == '+' || *p == '-') && digits(p + 1, 2) >= 0 && p[3] == ':' &&
		   digits(p + 4, 2) >= 0) {
		offset = (digits(p + 1, 2) * 60 + digits(p + 4, 2)) * 60 * (*p == '-' ? -1 : 1);
		p += 6;
	} else {
		return -EINVAL;
	}
	if (*p)
		return -EINVAL;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	t = timegm(&tm);
	if (t == (time_t)-1)
		return -EINVAL;
	*out = (double)t - offset + frac;
	return 0;
}

/* ---------------------------------------------------------------- the model */

static void site_clear(struct site *s)
{
	for (uint32_t i = 0; i < s->n_frames; i++)
		sym_frame__clear(&s->frames[i]);
	free(s->frames);
	series__free(&s->hist);
	memset(s, 0, sizeof(*s));
}

static void process_clear(struct process *p)
{
	if (p->scan) {
		scan_result__free(&p->scan->result);
		free(p->scan);
	}
	for (size_t i = 0; i < p->n_sites; i++)
		site_clear(&p->sites[i]);
	free(p->sites);
	free(p->cmdline);
	free(p->cgroup);
	free(p->alloc_module);
	memset(p, 0, sizeof(*p));
}

/*
 * heap.mode, released_at_s and cost_pct: how the image's heap was traced (absent in older
 * files: exact; an unknown mode is refused).
 */
static int read_heap_mode(struct rd *r, json_t *jh, struct process *p)
{
	static const struct real_field reals[] = {
		{ "released_at_s", 0, 0, SECONDS_MAX, F_NULL },
		{ "cost_pct", 1 * sizeof(double), 0, 1e6, F_NULL },
	};
	double v[2] = { NAN, NAN };
	char mode[16];
	bool found = false;
	int ret = read_strbuf(r, jh, "mode", F_NULL, mode, sizeof(mode));

	p->heap_mode = PROC_HEAP_EXACT;
	for (int i = PROC_HEAP_EXACT; !ret && mode[0] && i <= PROC_HEAP_RELEASED; i++) {
		if (strcmp(mode, heapmode__proc_name(i)))
			continue;
		p->heap_mode = i;
		found = true;
	}
	if (!ret && mode[0] && !found)
		ret = bad(r, "mode", "is \"%s\", not a heap mode", mode);
	if (!ret)
		ret = read_reals(r, jh, v, reals, 2, NULL);
	if (ret)
		return ret;
	p->heap_released_ns = isnan(v[0]) ? 0 : TIME_BASE_NS + (uint64_t)(v[0] * 1e9);
	p->heap_cost_pct = v[1];
	return 0;
}

/* heap.allocator: {"module": PATH, "kind": NAME}, or null / absent (unknown; older files). */
static int read_allocator(struct rd *r, json_t *jh, struct process *p)
{
	json_t *ja;
	size_t mark;
	int ret = member(r, jh, "allocator", JSON_OBJECT, F_NULL, &ja);

	if (ret || !ja)
		return ret;
	mark = at_key(r, "allocator");
	ret = read_strdup(r, ja, "module", F_REQ, &p->alloc_module);
	if (!ret)
		ret = read_strbuf(r, ja, "kind", F_REQ, p->alloc_kind, sizeof(p->alloc_kind));
	back(r, mark);
	return ret;
}

/* "lang": "native" (or absent: files before it) or "python". */
static int read_lang(struct rd *r, json_t *jf, struct sym_frame *f)
{
	json_t *lang = json_object_get(jf, "lang");
	const char *v;

	if (!lang || json_is_null(lang))
		return 0;
	v = json_string_value(lang);
	if (!v || (strcmp(v, "native") && strcmp(v, "python")))
		return bad(r, "lang", "is not \"native\" or \"python\"");
	f->python = !strcmp(v, "python");
	return 0;
}

static int read_frame(struct rd *r, json_t *jf, struct sym_frame *f)
{
	static const struct int_field fields[] = {
		{ "offset", offsetof(struct sym_frame, offset), 8, 0, NUM_MAX, F_NULL },
		{ "line", offsetof(struct sym_frame, line), 4, 0, 0x7fffffff, F_NULL },
	};
	json_t *addr;
	int ret;

	if (!json_is_object(jf))
		return bad_type(r, NULL, jf, "an object");
	ret = member(r, jf, "addr", JSON_STRING, F_REQ, &addr);
	if (ret)
		return ret;
	if (parse_hex(json_string_value(addr), &f->addr))
		return bad(r, "addr", "is \"%.40s\", expected a hex address like "
			   "\"0x55d0c0ffee00\"", json_string_value(addr));
	ret = read_ints(r, jf, f, fields, sizeof(fields) / sizeof(fields[0]), NULL);
	if (!ret)
		ret = read_strdup(r, jf, "symbol", 0, &f->symbol);
	if (!ret)
		ret = read_strdup(r, jf, "module", 0, &f->module);
	if (!ret)
		ret = read_strdup(r, jf, "file", 0, &f->file);
	if (!ret)
		ret = read_lang(r, jf, f);
	if (!f->symbol)
		f->offset = 0;
	return ret;
}

static int read_stack(struct rd *r, json_t *js, struct site *s)
{
	size_t n = json_array_size(js), mark;
	int ret = 0;

	s->frames = n ? calloc(n, sizeof(*s->frames)) : NULL;
	if (n && !s->frames)
		return -ENOMEM;
	for (size_t i = 0; i < n && !ret; i++) {
		mark = at_index(r, i);
		s->n_frames++;
		ret = read_frame(r, json_array_get(js, i), &s->frames[i]);
		back(r, mark);
	}
	return ret;
}

static int read_fd_details(struct rd *r, json_t *js, struct site *s)
{
	json_t *types, *samples, *v;
	const char *name;
	int ret;

	ret = member(r, js, "fd_types", JSON_OBJECT, F_NULL, &types);
	if (!ret && types) {
		size_t mark = at_key(r, "fd_types");

		json_object_foreach(types, name, v) {
			if (!json_is_integer(v) || json_integer_value(v) < 0 ||
			    json_integer_value(v) > UINT32_MAX) {
				ret = bad(r, name, "is not a count of descriptors");
				break;
			}
			for (int t = 0; t < FD_TYPE__COUNT; t++)
				if (!strcmp(name, fd_type_names[t]))
					s->fd_types[t] = json_integer_value(v);
		}
		back(r, mark);
	}
	if (!ret)
		ret = member(r, js, "fd_samples", JSON_ARRAY, F_NULL, &samples);
	for (size_t i = 0; !ret && samples && i < json_array_size(samples); i++) {
		v = json_array_get(samples, i);
		if (!json_is_string(v)) {
			size_t mark = at_key(r, "fd_samples");

			at_index(r, i);
			ret = bad_type(r, NULL, v, "a string");
			back(r, mark);
			break;
		}
		if (s->n_fd_samples < FD_SAMPLES)
			snprintf(s->fd_samples[s->n_fd_samples++], sizeof(s->fd_samples[0]), "%s",
				 json_string_value(v));
	}
	return ret;
}

static const struct {
	const char *name;
	enum lt_site_kind kind;
} site_kinds[] = {
	{ "heap", LT_KIND_HEAP },
	{ "fd", LT_KIND_FD },
	{ "mmap", LT_KIND_MMAP },
};

/* {"definite": {"count", "bytes"}, ...}: the blocks of each scan class (absent: zeros). */
static int read_classes(struct rd *r, json_t *obj, uint64_t *count, uint64_t *bytes)
{
	static const struct int_field fields[] = {
		{ "count", 0, 8, 0, NUM_MAX, F_REQ },
		{ "bytes", 8, 8, 0, NUM_MAX, F_REQ },
	};
	int ret = 0;

	for (int k = 0; k < SCAN__COUNT && !ret; k++) {
		uint64_t v[2] = { 0, 0 };
		json_t *c;
		size_t mark;

		ret = member(r, obj, scan_class_names[k], JSON_OBJECT, F_NULL, &c);
		if (ret || !c)
			continue;
		mark = at_key(r, scan_class_names[k]);
		ret = read_ints(r, c, v, fields, 2, NULL);
		back(r, mark);
		count[k] = v[0];
		bytes[k] = v[1];
	}
	return ret;
}

/* lost.definite.seqs (absent in older files): allocation numbers, at most SCAN_SEQS_MAX. */
static int read_lost_seqs(struct rd *r, json_t *lost, struct site *s)
{
	json_t *def = json_object_get(lost, "definite"), *seqs;
	size_t mark, n;
	int ret;

	s->n_lost_seqs = 0;
	if (!json_is_object(def))
		return 0;
	mark = at_key(r, "definite");
	ret = member(r, def, "seqs", JSON_ARRAY, F_NULL, &seqs);
	n = seqs ? json_array_size(seqs) : 0;
	if (!ret && n > SCAN_SEQS_MAX)
		ret = bad(r, "seqs", "has %zu entries, expected at most %d", n, SCAN_SEQS_MAX);
	for (size_t i = 0; !ret && i < n; i++) {
		json_t *v = json_array_get(seqs, i);

		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > NUM_MAX)
			ret = bad(r, "seqs", "holds %s, expected allocation numbers from 1",
				  json_is_integer(v) ? "a number out of range" : "a non-integer");
		else
			s->lost_seqs[s->n_lost_seqs++] = json_integer_value(v);
	}
	back(r, mark);
	return ret;
}

static int read_site_lost(struct rd *r, json_t *js, struct site *s)
{
	json_t *lost;
	size_t mark;
	int ret = member(r, js, "lost", JSON_OBJECT, F_NULL, &lost);

	if (ret || !lost)
		return ret;
	s->has_lost = true;
	mark = at_key(r, "lost");
	ret = read_classes(r, lost, s->lost_count, s->lost_bytes);
	if (!ret)
		ret = read_lost_seqs(r, lost, s);
	back(r, mark);
	return ret;
}

/* Fill s from js; *skip when the site is of a kind this version does not know. */
static int read_site(struct rd *r, json_t *js, uint64_t now_ns, struct site *s, bool *skip)
{
	static const struct int_field ints[] = {
		{ "outstanding_bytes", offsetof(struct site, outstanding_bytes), 8, -NUM_MAX,
		  NUM_MAX, F_REQ },
		{ "outstanding_count", offsetof(struct site, outstanding_count), 8, -NUM_MAX,
		  NUM_MAX, F_REQ },
		{ "allocs", offsetof(struct site, allocs), 8, 0, NUM_MAX, F_REQ },
		{ "frees", offsetof(struct site, frees), 8, 0, NUM_MAX, F_REQ },
		{ "alloc_bytes", offsetof(struct site, alloc_bytes), 8, 0, NUM_MAX, F_NULL },
		{ "repaired", offsetof(struct site, repaired), 8, 0, NUM_MAX, F_NULL },
	};
	static const struct real_field reals[] = {
		{ "growth_per_s", offsetof(struct site, growth_per_s), -1e300, 1e300, F_REQ },
		{ "trend_z", offsetof(struct site, trend_z), -1e300, 1e300, F_NULL },
	};
	json_t *kind, *stack, *id, *age;
	int ret;

	*skip = false;
	if (!json_is_object(js))
		return bad_type(r, NULL, js, "an object");
	ret = member(r, js, "kind", JSON_STRING, F_REQ, &kind);
	if (ret)
		return ret;
	*skip = true;
	for (size_t i = 0; i < sizeof(site_kinds) / sizeof(site_kinds[0]); i++) {
		if (strcmp(json_string_value(kind), site_kinds[i].name))
			continue;
		s->kind = site_kinds[i].kind;
		*skip = false;
	}
	if (*skip)
		return 0;
	ret = read_ints(r, js, s, ints, sizeof(ints) / sizeof(ints[0]), NULL);
	if (!ret)
		ret = read_reals(r, js, s, reals, sizeof(reals) / sizeof(reals[0]), NULL);
	if (!ret)
		ret = read_bool(r, js, "flagged", F_REQ, &s->flagged);
	if (!ret)
		ret = read_bool(r, js, "stale", F_NULL, &s->stale);
	if (!ret)
		ret = member(r, js, "oldest_age_s", JSON_REAL, F_NULL, &age);
	if (!ret && age && (json_number_value(age) < 0 || json_number_value(age) > SECONDS_MAX))
		ret = bad(r, "oldest_age_s", "is %g, expected 0 to %g", json_number_value(age),
			  SECONDS_MAX);
	if (!ret)
		ret = member(r, js, "stack_id", JSON_STRING, F_NULL, &id);
	if (!ret && id) {
		char hex[24];
		uint64_t hash;

		snprintf(hex, sizeof(hex), "0x%.20s", json_string_value(id));
		if (parse_hex(hex, &hash))
			ret = bad(r, "stack_id", "is \"%.40s\", expected up to 16 hex digits",
				  json_string_value(id));
		s->stack_hash = hash;
	}
	if (!ret)
		ret = member(r, js, "stack", JSON_ARRAY, F_REQ, &stack);
	if (!ret) {
		size_t mark = at_key(r, "stack");

		ret = read_stack(r, stack, s);
		back(r, mark);
	}
	if (ret)
		return ret;
	/* The file has what a view shows: outstanding and frees with fd repairs applied. */
	if (s->repaired > s->frees)
		return bad(r, "repaired", "is more than frees (%llu)",
			   (unsigned long long)s->frees);
	s->frees -= s->repaired;
	s->outstanding_count += s->repaired;
	if (age && s->outstanding_count > 0)
		s->live_since_ns = now_ns - (uint64_t)(json_number_value(age) * 1e9);
	if (s->kind == LT_KIND_FD)
		ret = read_fd_details(r, js, s);
	if (!ret)
		ret = read_site_lost(r, js, s);
	return ret;
}

static int cmp_site_key(const void *a, const void *b)
{
	const struct site *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->stack_hash != y->stack_hash)
		return x->stack_hash < y->stack_hash ? -1 : 1;
	return 0;
}

static int read_sites(struct rd *r, json_t *arr, uint64_t now_ns, struct process *p)
{
	size_t n = json_array_size(arr), mark;
	int ret = 0;

	p->sites = n ? calloc(n, sizeof(*p->sites)) : NULL;
	if (n && !p->sites)
		return -ENOMEM;
	p->cap_sites = n;
	for (size_t i = 0; i < n && !ret; i++) {
		struct site *s = &p->sites[p->n_sites++];
		bool skip;

		mark = at_index(r, i);
		ret = read_site(r, json_array_get(arr, i), now_ns, s, &skip);
		back(r, mark);
		if (skip) {
			site_clear(s);
			p->n_sites--;
		}
	}
	if (!ret)
		qsort(p->sites, p->n_sites, sizeof(*p->sites), cmp_site_key);
	return ret;
}

static int read_counters(struct rd *r, json_t *jp, struct process *p)
{
	static const struct int_field fields[] = {
		{ "rss_bytes", offsetof(struct proc_counters, rss_bytes), 8, 0, NUM_MAX, F_NULL },
		{ "vm_bytes", offsetof(struct proc_counters, vm_bytes), 8, 0, NUM_MAX, F_NULL },
		{ "fd_count", offsetof(struct proc_counters, fd_count), 4, 0, UINT32_MAX, F_NULL },
		{ "threads", offsetof(struct proc_counters, threads), 4, 0, UINT32_MAX, F_NULL },
		{ "rss_anon_bytes", offsetof(struct proc_counters, rss_anon_bytes), 8, 0, NUM_MAX,
		  F_NULL },
		{ "rss_file_bytes", offsetof(struct proc_counters, rss_file_bytes), 8, 0, NUM_MAX,
		  F_NULL },
		{ "rss_shmem_bytes", offsetof(struct proc_counters, rss_shmem_bytes), 8, 0, NUM_MAX,
		  F_NULL },
	};
	unsigned int known;
	json_t *c;
	size_t mark;
	int ret = member(r, jp, "counters", JSON_OBJECT, F_NULL, &c);

	if (ret || !c)
		return ret;
	mark = at_key(r, "counters");
	ret = read_ints(r, c, &p->counters, fields, 7, &known);
	back(r, mark);
	/* Counters are one reading of /proc: all known or none (the split may be unknown:
	 * snapshots from before it, or a kernel without it). */
	p->counters.valid = !ret && (known & 0xf) == 0xf;
	p->counters.rss_split_valid = p->counters.valid && (known & 0x70) == 0x70;
	return ret;
}

static int read_fd_totals(struct rd *r, json_t *jp, struct process *p, unsigned int *res)
{
	static const struct int_field fields[] = {
		{ "outstanding_count", offsetof(struct process, fd_outstanding), 8, -NUM_MAX,
		  NUM_MAX, F_REQ },
		{ "opens", offsetof(struct process, fd_opens), 8, 0, NUM_MAX, F_REQ },
		{ "closes", offsetof(struct process, fd_closes), 8, 0, NUM_MAX, F_REQ },
		{ "repaired", offsetof(struct process, fd_repaired), 8, 0, NUM_MAX, F_NULL },
		{ "untracked", offsetof(struct process, fd_untracked), 4, 0, UINT32_MAX, F_NULL },
	};
	unsigned int known;
	json_t *fd;
	size_t mark;
	int ret = member(r, jp, "fd", JSON_OBJECT, F_NULL, &fd);

	if (ret || !fd)
		return ret;
	*res |= RES_FD;
	mark = at_key(r, "fd");
	ret = read_ints(r, fd, p, fields, sizeof(fields) / sizeof(fields[0]), &known);
	back(r, mark);
	p->fd_census_valid = known & (1u << 4);
	return ret;
}

/* "mmap": {outstanding_bytes, outstanding_count, maps, unmaps}, when mmap was tracked. */
static int read_mmap_totals(struct rd *r, json_t *jp, struct process *p, unsigned int *res)
{
	static const struct int_field fields[] = {
		{ "outstanding_bytes", offsetof(struct process, mmap_outstanding_bytes), 8,
		  -NUM_MAX, NUM_MAX, F_REQ },
		{ "outstanding_count", offsetof(struct process, mmap_outstanding_count), 8,
		  -NUM_MAX, NUM_MAX, F_REQ },
		{ "maps", offsetof(struct process, mmap_maps), 8, 0, NUM_MAX, F_REQ },
		{ "unmaps", offsetof(struct process, mmap_unmaps), 8, 0, NUM_MAX, F_REQ },
	};
	json_t *mm;
	size_t mark;
	int ret = member(r, jp, "mmap", JSON_OBJECT, F_NULL, &mm);

	if (ret || !mm)
		return ret;
	*res |= RES_MMAP;
	mark = at_key(r, "mmap");
	ret = read_ints(r, mm, p, fields, sizeof(fields) / sizeof(fields[0]), NULL);
	back(r, mark);
	return ret;
}

/* "drops": {heap, fd, mmap, sites}: its records the shared maps lost (absent: none known). */
static int read_share_drops(struct rd *r, json_t *jp, struct process *p)
{
	json_t *jd;
	size_t mark;
	int ret = member(r, jp, "drops", JSON_OBJECT, F_NULL, &jd);

	if (ret || !jd)
		return ret;
	mark = at_key(r, "drops");
	for (int i = 0; !ret && i < LT_SHARE__COUNT; i++) {
		struct int_field f = { share_names[i], 0, 8, 0, NUM_MAX, F_NULL };

		ret = read_ints(r, jd, &p->share_drops[i], &f, 1, NULL);
	}
	back(r, mark);
	return ret;
}

static int read_flags(struct rd *r, json_t *jp, struct process *p)
{
	json_t *flags, *v;
	size_t i;
	int flag, ret = member(r, jp, "flags", JSON_ARRAY, F_NULL, &flags);

	if (ret || !flags)
		return ret;
	json_array_foreach(flags, i, v) {
		if (!json_is_string(v)) {
			size_t mark = at_key(r, "flags");

			at_index(r, i);
			ret = bad_type(r, NULL, v, "a string");
			back(r, mark);
			return ret;
		}
		/* Flags a later version adds are not ours to show. */
		flag = fmt__flag_by_name(json_string_value(v));
		if (flag >= 0)
			p->flags |= 1u << flag;
	}
	return 0;
}

static int read_hex(struct rd *r, json_t *obj, const char *key, uint64_t *out)
{
	json_t *v;
	int ret = member(r, obj, key, JSON_STRING, F_REQ, &v);

	if (!ret && parse_hex(json_string_value(v), out))
		ret = bad(r, key, "is \"%.40s\", expected a hex address like \"0x55d0c0ffee00\"",
			  json_string_value(v));
	return ret;
}

static int read_edge(struct rd *r, json_t *je, struct scan_edge *e)
{
	static const struct int_field fields[] = {
		{ "offset", offsetof(struct scan_edge, offset), 8, 0, NUM_MAX, F_REQ },
	};
	int ret;

	if (!json_is_object(je))
		return bad_type(r, NULL, je, "an object");
	ret = read_hex(r, je, "from", &e->from);
	if (!ret)
		ret = read_hex(r, je, "to", &e->to);
	if (!ret)
		ret = read_ints(r, je, e, fields, 1, NULL);
	return ret;
}

/* One leak_graph entry: a definitely lost root and what it drags along. */
static int read_leak(struct rd *r, json_t *jl, struct scan_leak *l)
{
	static const struct int_field fields[] = {
		{ "blocks", offsetof(struct scan_leak, blocks), 8, 0, NUM_MAX, F_REQ },
		{ "bytes", offsetof(struct scan_leak, bytes), 8, 0, NUM_MAX, F_REQ },
		{ "edges_total", offsetof(struct scan_leak, total_edges), 8, 0, NUM_MAX, F_REQ },
	};
	static const struct int_field root_fields[] = {
		{ "size", offsetof(struct scan_block, size), 8, 0, NUM_MAX, F_REQ },
		{ "seq", offsetof(struct scan_block, seq), 8, 1, NUM_MAX, F_NULL },
	};
	json_t *root, *edges, *id;
	size_t mark;
	int ret;

	if (!json_is_object(jl))
		return bad_type(r, NULL, jl, "an object");
	ret = read_ints(r, jl, l, fields, 3, NULL);
	if (!ret)
		ret = member(r, jl, "root", JSON_OBJECT, F_REQ, &root);
	if (!ret) {
		mark = at_key(r, "root");
		ret = read_hex(r, root, "addr", &l->root.addr);
		if (!ret)
			ret = read_ints(r, root, &l->root, root_fields, 2, NULL);
		if (!ret)
			ret = member(r, root, "stack_id", JSON_STRING, F_REQ, &id);
		if (!ret) {
			char hex[24];

			snprintf(hex, sizeof(hex), "0x%.20s", json_string_value(id));
			if (parse_hex(hex, &l->root.stack_hash))
				ret = bad(r, "stack_id", "is \"%.40s\", expected up to 16 hex digits",
					  json_string_value(id));
		}
		back(r, mark);
	}
	if (!ret)
		ret = member(r, jl, "edges", JSON_ARRAY, F_REQ, &edges);
	if (ret)
		return ret;
	if (json_array_size(edges) > SCAN_MAX_EDGES)
		return bad(r, "edges", "holds %zu edges, expected at most %d",
			   json_array_size(edges), SCAN_MAX_EDGES);
	mark = at_key(r, "edges");
	for (size_t i = 0; i < json_array_size(edges) && !ret; i++) {
		size_t m2 = at_index(r, i);

		ret = read_edge(r, json_array_get(edges, i), &l->edges[l->n_edges++]);
		back(r, m2);
	}
	back(r, mark);
	return ret;
}

/* processes[].scan and .leak_graph: the latest scan of the process, or its error. */
static int read_scan(struct rd *r, json_t *jp, struct process *p)
{
	static const struct int_field fields[] = {
		{ "threads", offsetof(struct scan_result, threads), 4, 0, UINT32_MAX, F_REQ },
		{ "bytes_read", offsetof(struct scan_result, bytes_read), 8, 0, NUM_MAX, F_REQ },
		{ "blocks", offsetof(struct scan_result, n_blocks), 8, 0, NUM_MAX, F_REQ },
	};
	static const struct real_field reals[] = {
		{ "stop_ms", offsetof(struct scan_result, stop_ms), 0, 1e12, F_REQ },
	};
	json_t *js, *error, *lost, *graph;
	struct scan_result *res;
	size_t mark, n;
	int ret = member(r, jp, "scan", JSON_OBJECT, F_NULL, &js);

	if (ret || !js)
		return ret;
	p->scan = calloc(1, sizeof(*p->scan));
	if (!p->scan)
		return -ENOMEM;
	res = &p->scan->result;
	mark = at_key(r, "scan");
	ret = member(r, js, "error", JSON_STRING, 0, &error);
	if (!ret && error) {
		snprintf(p->scan->error, sizeof(p->scan->error), "%s", json_string_value(error));
		back(r, mark);
		return 0;
	}
	if (!ret)
		ret = read_ints(r, js, res, fields, 3, NULL);
	if (!ret)
		ret = read_reals(r, js, res, reals, 1, NULL);
	if (!ret)
		ret = member(r, js, "lost", JSON_OBJECT, F_REQ, &lost);
	if (!ret) {
		size_t m2 = at_key(r, "lost");

		ret = read_classes(r, lost, res->count, res->bytes);
		back(r, m2);
	}
	back(r, mark);
	if (!ret)
		ret = member(r, jp, "leak_graph", JSON_ARRAY, F_NULL, &graph);
	if (ret || !graph) {
		p->scan->ok = !ret;
		return ret;
	}
	n = json_array_size(graph);
	res->leaks = n ? calloc(n, sizeof(*res->leaks)) : NULL;
	if (n && !res->leaks)
		return -ENOMEM;
	mark = at_key(r, "leak_graph");
	for (size_t i = 0; i < n && !ret; i++) {
		size_t m2 = at_index(r, i);

		ret = read_leak(r, json_array_get(graph, i), &res->leaks[res->n_leaks++]);
		back(r, m2);
	}
	back(r, mark);
	p->scan->ok = !ret;
	return ret;
}

/* A name of names[0..n) (the JSON spells enums by name): its index, or -1. */
static int name_index(const char *const *names, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (names[i] && !strcmp(names[i], s))
			return i;
	return -1;
}

/* lastref[].reference: the reference that went (null for freed and unresolved blocks). */
static int read_lastref_ref(struct rd *r, json_t *jr, struct lastref_result *out)
{
	struct lr_ref *ref = &out->b.cause.ref;
	json_t *kind, *v;
	int k, ret = member(r, jr, "kind", JSON_STRING, F_REQ, &kind);

	if (ret)
		return ret;
	k = name_index(lr_ref_kind_names, LR_REF__COUNT, json_string_value(kind));
	if (k < 0)
		return bad(r, "kind", "is \"%.40s\", expected a reference kind (memory, heap, "
			   "stack, register)", json_string_value(kind));
	ref->kind = k;
	ret = member(r, jr, "addr", JSON_STRING, F_NULL, &v);
	if (!ret && v)
		ret = read_hex(r, jr, "addr", &ref->loc);
	if (!ret)
		ret = member(r, jr, "holder", JSON_STRING, F_NULL, &v);
	if (!ret && v)
		ret = read_hex(r, jr, "holder", &ref->holder);
	if (!ret) {
		static const struct int_field tid[] = {
			{ "thread", offsetof(struct lr_ref, tid), 4, 1, 0x7fffffff, F_NULL },
		};

		ret = read_ints(r, jr, ref, tid, 1, NULL);
	}
	if (!ret)
		ret = read_strbuf(r, jr, "register", 0, out->reg, sizeof(out->reg));
	return ret;
}

/* A frame member of a lastref verdict, left empty when absent or null. */
static int read_lastref_frame(struct rd *r, json_t *jl, const char *key, struct sym_frame *f)
{
	json_t *v;
	size_t mark;
	int ret = member(r, jl, key, JSON_OBJECT, F_NULL, &v);

	if (ret || !v)
		return ret;
	mark = at_key(r, key);
	ret = read_frame(r, v, f);
	back(r, mark);
	return ret;
}

/* processes[].lastref[]: one verdict of lastref on a block of this image. */
static int read_lastref(struct rd *r, json_t *jl, struct lastref_result *out)
{
	static const struct int_field fields[] = {
		{ "size", offsetof(struct lastref_result, b.size), 8, 0, NUM_MAX, F_REQ },
		{ "thread", offsetof(struct lastref_result, b.cause.tid), 4, 1, 0x7fffffff, F_NULL },
		{ "references_left", offsetof(struct lastref_result, b.n_refs), 4, 0, LR_MAX_REFS,
		  F_NULL },
	};
	static const struct real_field reals[] = {
		{ "at_s", offsetof(struct lastref_result, at_s), 0, 1e12, F_NULL },
	};
	json_t *verdict, *at, *id, *ref, *between;
	char hex[24];
	size_t mark;
	int v, ret;

	if (!json_is_object(jl))
		return bad_type(r, NULL, jl, "an object");
	ret = read_hex(r, jl, "addr", &out->b.addr);
	if (!ret)
		ret = read_ints(r, jl, out, fields, 3, NULL);
	if (!ret)
		ret = read_reals(r, jl, out, reals, 1, NULL);
	if (!ret)
		ret = member(r, jl, "stack_id", JSON_STRING, F_REQ, &id);
	if (!ret) {
		snprintf(hex, sizeof(hex), "0x%.20s", json_string_value(id));
		if (parse_hex(hex, &out->b.stack_hash))
			ret = bad(r, "stack_id", "is \"%.40s\", expected up to 16 hex digits",
				  json_string_value(id));
	}
	if (!ret)
		ret = member(r, jl, "verdict", JSON_STRING, F_REQ, &verdict);
	if (ret)
		return ret;
	v = name_index(lr_verdict_names, LR_VERDICT__COUNT, json_string_value(verdict));
	if (v < 0)
		return bad(r, "verdict", "is \"%.40s\", expected a lastref verdict",
			   json_string_value(verdict));
	out->b.cause.verdict = v;
	out->b.state = LR_DONE;
	ret = read_bool(r, jl, "unwatched", 0, &out->b.cause.unwatched);
	if (!ret)
		ret = member(r, jl, "between_s", JSON_ARRAY, F_NULL, &between);
	if (!ret && between) {
		json_t *since = json_array_get(between, 0);

		if (json_array_size(between) != 2 || !json_is_number(since))
			return bad(r, "between_s", "expected [since_s, at_s]");
		out->since_s = json_number_value(since);
	}
	if (!ret)
		ret = read_strbuf(r, jl, "reason", 0, out->b.cause.why, sizeof(out->b.cause.why));
	if (!ret)
		ret = read_lastref_frame(r, jl, "allocated_at", &out->alloc);
	if (!ret)
		ret = read_lastref_frame(r, jl, v == LR_FRAME_RETURNED ? "frame" : "thread_at",
					 &out->frame);
	if (!ret)
		ret = member(r, jl, "reference", JSON_OBJECT, F_NULL, &ref);
	if (!ret && ref) {
		mark = at_key(r, "reference");
		ret = read_lastref_ref(r, ref, out);
		back(r, mark);
	}
	if (!ret)
		ret = member(r, jl, "at", JSON_ARRAY, F_REQ, &at);
	if (ret)
		return ret;
	if (json_array_size(at) > LR_MAX_FRAMES)
		return bad(r, "at", "holds %zu frames, expected at most %d", json_array_size(at),
			   LR_MAX_FRAMES);
	out->at = json_array_size(at) ? calloc(json_array_size(at), sizeof(*out->at)) : NULL;
	if (json_array_size(at) && !out->at)
		return -ENOMEM;
	mark = at_key(r, "at");
	for (size_t i = 0; i < json_array_size(at) && !ret; i++) {
		size_t m2 = at_index(r, i);

		ret = read_frame(r, json_array_get(at, i), &out->at[out->n_at++]);
		back(r, m2);
	}
	back(r, mark);
	return ret;
}

/* processes[].lastref and .lastref_dropped, present once a lastref ran on the image. */
static int read_lastrefs(struct rd *r, json_t *jp, struct process *p)
{
	static const struct int_field dropped[] = {
		{ "lastref_dropped", offsetof(struct process, lastref_dropped), 4, 0, UINT32_MAX,
		  F_NULL },
	};
	json_t *arr;
	size_t mark, n;
	int ret = member(r, jp, "lastref", JSON_ARRAY, F_NULL, &arr);

	if (!ret)
		ret = read_ints(r, jp, p, dropped, 1, NULL);
	if (ret || !arr)
		return ret;
	n = json_array_size(arr);
	if (n > PROC_LASTREF_MAX)
		return bad(r, "lastref", "holds %zu verdicts, expected at most %d", n,
			   PROC_LASTREF_MAX);
	if (n && VEC_RESERVE_ZEROED(p->lastref, p->cap_lastref, n, n))
		return -ENOMEM;
	mark = at_key(r, "lastref");
	for (size_t i = 0; i < n && !ret; i++) {
		size_t m2 = at_index(r, i);
		struct lastref_result *lr = &p->lastref[p->n_lastref++];

		lr->pid = p->pid;
		lr->gen = p->gen;
		ret = read_lastref(r, json_array_get(arr, i), lr);
		back(r, m2);
	}
	back(r, mark);
	return ret;
}

static int read_process(struct rd *r, json_t *jp, uint64_t now_ns, struct process *p,
			unsigned int *res)
{
	static const struct int_field ids[] = {
		{ "pid", offsetof(struct process, pid), 4, 1, 0x7fffffff, F_REQ },
		{ "start_ticks", offsetof(struct process, start_ticks), 8, 0, NUM_MAX, F_NULL },
	};
	static const struct int_field heap[] = {
		{ "outstanding_bytes", offsetof(struct process, heap_outstanding_bytes), 8,
		  -NUM_MAX, NUM_MAX, F_REQ },
		{ "outstanding_count", offsetof(struct process, heap_outstanding_count), 8,
		  -NUM_MAX, NUM_MAX, F_REQ },
		{ "allocs", offsetof(struct process, heap_allocs), 8, 0, NUM_MAX, F_REQ },
		{ "frees", offsetof(struct process, heap_frees), 8, 0, NUM_MAX, F_REQ },
	};
	json_t *jh, *sites;
	size_t mark;
	int ret;

	if (!json_is_object(jp))
		return bad_type(r, NULL, jp, "an object");
	ret = read_ints(r, jp, p, ids, 2, NULL);
	if (!ret)
		ret = read_strbuf(r, jp, "comm", 0, p->comm, sizeof(p->comm));
	if (!ret)
		ret = read_strdup(r, jp, "cmdline", 0, &p->cmdline);
	if (!ret)
		ret = read_strdup(r, jp, "cgroup", 0, &p->cgroup);
	if (!ret)
		ret = read_strbuf(r, jp, "container", 0, p->container, sizeof(p->container));
	if (!ret)
		ret = read_counters(r, jp, p);
	if (!ret)
		ret = member(r, jp, "heap", JSON_OBJECT, F_REQ, &jh);
	if (!ret) {
		mark = at_key(r, "heap");
		ret = read_ints(r, jh, p, heap, 4, NULL);
		if (!ret)
			ret = read_allocator(r, jh, p);
		if (!ret)
			ret = read_heap_mode(r, jh, p);
		back(r, mark);
	}
	if (!ret)
		ret = read_fd_totals(r, jp, p, res);
	if (!ret)
		ret = read_mmap_totals(r, jp, p, res);
	if (!ret)
		ret = read_share_drops(r, jp, p);
	if (!ret)
		ret = read_flags(r, jp, p);
	if (!ret)
		ret = read_bool(r, jp, "exited", 0, &p->exited);
	if (!ret)
		ret = member(r, jp, "sites", JSON_ARRAY, F_REQ, &sites);
	if (!ret) {
		mark = at_key(r, "sites");
		ret = read_sites(r, sites, now_ns, p);
		back(r, mark);
	}
	if (!ret)
		ret = read_scan(r, jp, p);
	if (!ret)
		ret = read_lastrefs(r, jp, p);
	/* It was in the snapshot, so it was shown: keep it shown whatever its numbers. */
	p->target = true;
	return ret;
}

static int cmp_proc_key(const void *a, const void *b)
{
	const struct process *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->gen < y->gen ? -1 : x->gen > y->gen;
}

static int read_stats(struct rd *r, json_t *root, struct model *m, struct snapshot_info *info)
{
	static const struct int_field misc[] = {
		{ "dropped", offsetof(struct snapshot_info, dropped), 8, 0, NUM_MAX, F_REQ },
	};
	static const struct int_field probes[] = {
		{ "probes", offsetof(struct model, probes_attached), 8, 0, NUM_MAX, F_NULL },
		{ "libcs_refused", offsetof(struct model, libcs_refused), 8, 0, NUM_MAX, F_NULL },
		{ "files_refused_fs", offsetof(struct model, files_refused_fs), 8, 0, NUM_MAX,
		  F_NULL },
		{ "alloc_unreadable", offsetof(struct model, alloc_unreadable), 8, 0, NUM_MAX,
		  F_NULL },
		{ "alloc_scan_pending", offsetof(struct model, alloc_scan_pending), 8, 0, NUM_MAX,
		  F_NULL },
		{ "oom_snapshots_failed", offsetof(struct model, oom_snapshots_failed), 8, 0,
		  NUM_MAX, F_NULL },
		{ "oom_snapshots_skipped", offsetof(struct model, oom_snapshots_skipped), 8, 0,
		  NUM_MAX, F_NULL },
		{ "oom_snapshots_removed", offsetof(struct model, oom_snapshots_removed), 8, 0,
		  NUM_MAX, F_NULL },
	};
	static const struct real_field collect[] = {
		{ "collect_ms", offsetof(struct model, collect_ms), 0, 1e12, F_NULL },
	};
	static const struct int_field reconciled[] = {
		{ "exited", offsetof(struct model, reconciled_exited), 8, 0, NUM_MAX, F_NULL },
		{ "reused", offsetof(struct model, reconciled_reused), 8, 0, NUM_MAX, F_NULL },
	};
	json_t *stats, *drops, *rec;
	uint64_t sum = 0;
	size_t mark;
	int ret = member(r, root, "stats", JSON_OBJECT, F_REQ, &stats);

	if (ret)
		return ret;
	mark = at_key(r, "stats");
	for (int i = 0; !ret && i < LT_CNT__COUNT; i++) {
		struct int_field f = { counter_names[i], 0, 8, 0, NUM_MAX,
				       i == LT_CNT_EVENTS ? F_REQ : F_NULL };

		ret = read_ints(r, stats, &m->counters[i], &f, 1, NULL);
	}
	if (!ret)
		ret = read_ints(r, stats, info, misc, 1, NULL);
	if (!ret)
		ret = read_ints(r, stats, m, probes, sizeof(probes) / sizeof(probes[0]), NULL);
	if (!ret)
		ret = read_reals(r, stats, m, collect, 1, NULL);
	if (!ret)
		ret = read_strbuf(r, stats, "heap_attach", F_NULL, m->heap_attach,
				  sizeof(m->heap_attach));
	if (!ret)
		ret = read_strbuf(r, stats, "syscall_attach", F_NULL, m->syscall_attach,
				  sizeof(m->syscall_attach));
	if (!ret)
		ret = read_strbuf(r, stats, "syscall_attach_why", F_NULL, m->syscall_why,
				  sizeof(m->syscall_why));
	if (!ret)
		ret = member(r, stats, "drops", JSON_OBJECT, F_NULL, &drops);
	for (int i = 0; !ret && drops && i < LT_DROP__COUNT; i++) {
		struct int_field f = { drop_names[i], 0, 8, 0, NUM_MAX, F_NULL };

		ret = read_ints(r, drops, &m->drops[i], &f, 1, NULL);
		sum += m->drops[i];
	}
	if (!ret && sum > info->dropped)
		ret = bad(r, "drops", "add up to %llu, more than dropped (%llu)",
			  (unsigned long long)sum, (unsigned long long)info->dropped);
	/*
	 * Losses of a cause this version does not know (or a file without the breakdown) have
	 * no slot of their own; views show the total, which must stay the file's.
	 */
	if (!ret)
		m->drops[0] += info->dropped - sum;
	if (!ret)
		ret = member(r, stats, "reconciled", JSON_OBJECT, F_NULL, &rec);
	if (!ret && rec)
		ret = read_ints(r, rec, m, reconciled, 2, NULL);
	back(r, mark);
	return ret;
}

static int read_missing_entry(struct rd *r, json_t *je, struct sym_missing *h)
{
	json_t *lookup;
	int ret, k;

	if (!json_is_object(je))
		return bad_type(r, NULL, je, "an object");
	ret = read_strdup(r, je, "module", F_REQ, &h->module);
	if (!ret && !h->module)
		ret = bad(r, "module", "is null, expected a string");
	if (!ret)
		ret = read_strdup(r, je, "build_id", 0, &h->build_id);
	if (!ret)
		ret = read_strdup(r, je, "package", 0, &h->package);
	if (!ret)
		ret = read_strdup(r, je, "source_package", 0, &h->source);
	if (!ret)
		ret = read_strdup(r, je, "debug_package", 0, &h->debug_package);
	if (!ret)
		ret = member(r, je, "package_lookup", JSON_STRING, F_NULL, &lookup);
	if (ret || !lookup)
		return ret;
	for (k = 0; k < SYM_PKG__COUNT; k++)
		if (!strcmp(json_string_value(lookup), sym_pkg_lookup_names[k]))
			break;
	if (k == SYM_PKG__COUNT)
		return bad(r, "package_lookup", "is \"%.40s\", expected \"owned\", "
			   "\"not_owned\" or \"unknown\"", json_string_value(lookup));
	h->lookup = k;
	return 0;
}

/* "symbols_missing" (absent in files from before it: none); its "hint"s are derived. */
static int read_symbols_missing(struct rd *r, json_t *root, struct model *m)
{
	json_t *arr;
	size_t mark, n;
	int ret = member(r, root, "symbols_missing", JSON_ARRAY, F_NULL, &arr);

	if (ret || !arr)
		return ret;
	n = json_array_size(arr);
	if (n > SYM_MISSING_MAX)
		return bad(r, "symbols_missing", "has %zu entries, expected at most %d", n,
			   SYM_MISSING_MAX);
	mark = at_key(r, "symbols_missing");
	for (size_t i = 0; i < n && !ret; i++) {
		struct sym_missing h = {};
		size_t at = at_index(r, i);

		ret = read_missing_entry(r, json_array_get(arr, i), &h);
		if (!ret)
			ret = model__add_missing(m, &h);
		sym_missing__clear(&h);
		back(r, at);
	}
	back(r, mark);
	return ret;
}

/*
 * "stop_at" (absent: --stop-at did not fire): the allocation a process was stopped at.  Its
 * stack is its site's, found again by stack_id in that process (gen: the image read).
 */
static int read_stop_at(struct rd *r, json_t *root, struct model *m)
{
	static const struct int_field fields[] = {
		{ "pid", offsetof(struct stop_record, pid), 4, 1, INT32_MAX, F_REQ },
		{ "tid", offsetof(struct stop_record, tid), 4, 1, INT32_MAX, F_REQ },
		{ "size_bytes", offsetof(struct stop_record, size_bytes), 8, 0, NUM_MAX, F_REQ },
		{ "seq", offsetof(struct stop_record, seq), 8, 1, NUM_MAX, F_REQ },
	};
	struct stop_record st = {};
	json_t *js, *id;
	char hex[24];
	size_t mark;
	int ret = member(r, root, "stop_at", JSON_OBJECT, F_NULL, &js);

	if (ret || !js)
		return ret;
	mark = at_key(r, "stop_at");
	ret = read_ints(r, js, &st, fields, sizeof(fields) / sizeof(fields[0]), NULL);
	if (!ret)
		ret = read_hex(r, js, "addr", &st.addr);
	if (!ret)
		ret = member(r, js, "stack_id", JSON_STRING, F_REQ, &id);
	if (!ret) {
		snprintf(hex, sizeof(hex), "0x%.20s", json_string_value(id));
		if (parse_hex(hex, &st.stack_hash))
			ret = bad(r, "stack_id", "is \"%.40s\", expected up to 16 hex digits",
				  json_string_value(id));
	}
	back(r, mark);
	if (ret)
		return ret;
	st.fired = true;
	for (size_t i = 0; i < m->n_procs; i++)
		if (m->procs[i].pid == st.pid)
			st.gen = m->procs[i].gen;
	m->stop = st;
	return 0;
}

int snapshot__from_json(json_t *root, const char *name, const struct snapshot_read_opts *o,
			struct model *m, struct snapshot_info *info, char *err, size_t len)
{
	static const struct real_field times[] = {
		{ "elapsed_s", offsetof(struct snapshot_info, elapsed_s), 0, SECONDS_MAX, F_REQ },
	};
	static const struct real_field interval[] = {
		{ "interval_s", offsetof(struct model, interval_s), 0, SECONDS_MAX, F_REQ },
	};
	char why[384] = "";
	struct rd r = { .err = why, .len = sizeof(why) };
	json_t *t, *procs;
	unsigned int res = RES_HEAP;
	int ret;

	memset(m, 0, sizeof(*m));
	memset(info, 0, sizeof(*info));
	ret = read_reals(&r, root, info, times, 1, NULL);
	if (!ret)
		ret = read_reals(&r, root, m, interval, 1, NULL);
	if (!ret)
		ret = member(&r, root, "time", JSON_STRING, F_REQ, &t);
	if (!ret && parse_time(json_string_value(t), &info->time_s))
		ret = bad(&r, "time", "is \"%.40s\", expected an RFC 3339 time like "
			  "\"2026-11-21T10:00:00Z\"", json_string_value(t));
	if (!ret)
		snprintf(info->time, sizeof(info->time), "%s", json_string_value(t));
	if (!ret)
		ret = read_strbuf(&r, root, "host", 0, info->host, sizeof(info->host));
	if (!ret)
		ret = read_stats(&r, root, m, info);
	if (!ret)
		ret = read_symbols_missing(&r, root, m);
	if (!ret)
		ret = member(&r, root, "processes", JSON_ARRAY, F_REQ, &procs);
	if (ret)
		goto out;

	m->start_ns = TIME_BASE_NS;
	m->now_ns = TIME_BASE_NS + (uint64_t)(info->elapsed_s * 1e9);
	m->n_procs = 0;
	m->cap_procs = json_array_size(procs);
	m->procs = m->cap_procs ? calloc(m->cap_procs, sizeof(*m->procs)) : NULL;
	if (m->cap_procs && !m->procs) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < m->cap_procs && !ret; i++) {
		struct process *p = &m->procs[m->n_procs++];
		size_t mark = at_key(&r, "processes");

		at_index(&r, i);
		p->gen = i + 1;
		ret = read_process(&r, json_array_get(procs, i), m->now_ns, p, &res);
		back(&r, mark);
		if (!ret && o && o->pid && p->pid != o->pid) {
			process_clear(p);
			m->n_procs--;
		}
	}
	if (m->n_procs)		/* qsort's base is declared nonnull, even for none */
		qsort(m->procs, m->n_procs, sizeof(*m->procs), cmp_proc_key);
	m->resources = res;
	if (!ret)
		ret = read_stop_at(&r, root, m);
out:
	if (ret == -ENOMEM)
		snprintf(err, len, "out of memory reading snapshot %s; free some memory and retry",
			 name);
	else if (ret)
		snprintf(err, len, "snapshot %s: %s; " FIX_DAMAGED, name, why);
	if (ret)
		one_line(err);
	return ret;
}

int snapshot__read_file(const char *path, const struct snapshot_read_opts *o, struct model *m,
			struct snapshot_info *info, char *err, size_t len)
{
	json_t *root;
	int ret;

	memset(m, 0, sizeof(*m));
	ret = snapshot__load(path, &root, err, len);
	if (ret)
		return ret;
	ret = snapshot__from_json(root, path, o, m, info, err, len);
	json_decref(root);
	return ret;
}

int snapshot__read_buf(const void *buf, size_t size, const char *name,
		       const struct snapshot_read_opts *o, struct model *m,
		       struct snapshot_info *info, char *err, size_t len)
{
	json_t *root;
	int ret;

	memset(m, 0, sizeof(*m));
	ret = load_buf(buf, size, name, &root, err, len);
	if (ret)
		return ret;
	ret = snapshot__from_json(root, name, o, m, info, err, len);
	json_decref(root);
	return ret;
}
