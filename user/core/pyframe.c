// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * pyframe.c - CPython 3.11 location tables, str characters and the merge of Python frames
 * with native ones (see pyframe.h).
 */
#include <string.h>

#include "core/pyframe.h"

/*
 * Location table entries (3.11): a first byte with bit 7 set, the entry's kind in bits 3-6
 * and its length in code units minus one in bits 0-2, then the kind's data in bytes with bit
 * 7 clear.  Numbers are varints of 6-bit chunks, least significant first, bit 6 saying
 * another chunk follows; signed ones keep their sign in bit 0.
 */
enum {
	PY_LOC_ONE_LINE0 = 10,		/* 10..12: the line moves by 0, 1, 2; two column bytes */
	PY_LOC_NO_COLUMNS = 13,		/* a signed line delta */
	PY_LOC_LONG = 14,		/* signed line delta, end line delta, two columns */
	PY_LOC_NONE = 15,		/* no location */
};

struct loc_reader {
	const uint8_t *p;
	size_t len, at;
	bool bad;
};

static uint32_t read_varint(struct loc_reader *r)
{
	uint32_t v = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (r->at >= r->len || (r->p[r->at] & 0x80) || shift > 30) {
			r->bad = true;
			return 0;
		}
		b = r->p[r->at++];
		v |= (uint32_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return v;
}

static int read_svarint(struct loc_reader *r)
{
	uint32_t v = read_varint(r);

	return v & 1 ? -(int)(v >> 1) : (int)(v >> 1);
}

int pyframe__line(const uint8_t *table, size_t len, int firstlineno, uint32_t lasti)
{
	struct loc_reader r = { .p = table, .len = len };
	uint64_t addr = 0;
	int line = firstlineno;

	while (r.at < r.len && !r.bad) {
		uint8_t b = r.p[r.at++];
		unsigned int code = (b >> 3) & 15, units = (b & 7) + 1;

		if (!(b & 0x80))
			return 0;
		if (code == PY_LOC_LONG) {
			line += read_svarint(&r);
			for (int i = 0; i < 3; i++)
				read_varint(&r);
		} else if (code == PY_LOC_NO_COLUMNS) {
			line += read_svarint(&r);
		} else if (code >= PY_LOC_ONE_LINE0 && code < PY_LOC_NO_COLUMNS) {
			line += code - PY_LOC_ONE_LINE0;
			r.at += 2;
		} else if (code < PY_LOC_ONE_LINE0) {
			r.at += 1;
		}
		if (r.bad || r.at > r.len)
			return 0;
		if (lasti < addr + units)
			return code == PY_LOC_NONE || line <= 0 ? 0 : line;
		addr += units;
	}
	return 0;
}

/* Put code point c in out as UTF-8 if it fits before `end`: the bytes written (0: no room). */
static size_t put_utf8(uint32_t c, char *out, const char *end)
{
	size_t n = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;

	if (out + n >= end)
		return 0;
	if (n == 1) {
		out[0] = (char)c;
	} else if (n == 2) {
		out[0] = (char)(0xc0 | c >> 6);
		out[1] = (char)(0x80 | (c & 63));
	} else if (n == 3) {
		out[0] = (char)(0xe0 | c >> 12);
		out[1] = (char)(0x80 | ((c >> 6) & 63));
		out[2] = (char)(0x80 | (c & 63));
	} else {
		out[0] = (char)(0xf0 | c >> 18);
		out[1] = (char)(0x80 | ((c >> 12) & 63));
		out[2] = (char)(0x80 | ((c >> 6) & 63));
		out[3] = (char)(0x80 | (c & 63));
	}
	return n;
}

size_t pyframe__str(unsigned int kind, const void *chars, size_t n, char *out, size_t size)
{
	const uint8_t *p = chars;
	char *w = out, *end = out + size;

	if (!size)
		return 0;
	if (kind == 1 || kind == 2 || kind == 4) {
		for (size_t i = 0; i + kind <= n; i += kind) {
			uint32_t c = 0;
			size_t k;

			memcpy(&c, p + i, kind);	/* little-endian (x86-64) */
			if (c < 0x20 || (c >= 0x7f && c < 0xa0) || (c >= 0xd800 && c < 0xe000) ||
			    c > 0x10ffff)
				c = '?';
			k = put_utf8(c, w, end);
			if (!k)
				break;
			w += k;
		}
	}
	*w = '\0';
	return (size_t)(w - out);
}

bool pyframe__is_eval(const struct sym_frame *f)
{
	static const char name[] = "_PyEval_EvalFrameDefault";
	size_t n = sizeof(name) - 1;

	/* Its hot/cold parts too (_PyEval_EvalFrameDefault.cold). */
	return f->symbol && !strncmp(f->symbol, name, n) &&
	       (f->symbol[n] == '\0' || f->symbol[n] == '.');
}

size_t pyframe__merge(const struct sym_frame *native, size_t n_native, const struct sym_frame *py,
		      const bool *entry, size_t n_py, struct sym_frame *out)
{
	size_t n = 0, k = 0;

	for (size_t i = 0; i < n_native; i++) {
		if (pyframe__is_eval(&native[i])) {
			while (k < n_py) {
				bool last = entry[k];

				out[n++] = py[k++];
				if (last)
					break;
			}
		}
		out[n++] = native[i];
	}
	while (k < n_py)
		out[n++] = py[k++];
	return n;
}
