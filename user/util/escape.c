// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * escape.c - decides, character by character, what of a hostile string may reach a
 * terminal as it is.  A character is shown as it is when it is well-formed UTF-8 (no
 * overlong forms, no surrogates, nothing past U+10FFFF) and not a control: C0 (tab and
 * newline included: every field is shown on one line), DEL, C1 (U+0080-U+009F, which
 * terminals take as CSI, OSC, ...) or a bidirectional embedding, override or isolate
 * (U+202A-U+202E, U+2066-U+2069, which reorder what follows on the line).  Anything else
 * is shown byte by byte as \xHH.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "util/escape.h"

/* Length of the well-formed UTF-8 sequence at s and its code point, or 0 if there is none. */
static size_t utf8_char(const unsigned char *s, uint32_t *cp)
{
	static const struct {
		unsigned char first_lo, first_hi;	/* lead byte range */
		unsigned char second_lo, second_hi;	/* allowed second byte */
		unsigned char len;
		unsigned char mask;			/* payload bits of the lead byte */
	} forms[] = {
		{ 0xc2, 0xdf, 0x80, 0xbf, 2, 0x1f },
		{ 0xe0, 0xe0, 0xa0, 0xbf, 3, 0x0f },	/* no overlong forms */
		{ 0xe1, 0xec, 0x80, 0xbf, 3, 0x0f },
		{ 0xed, 0xed, 0x80, 0x9f, 3, 0x0f },	/* no surrogates */
		{ 0xee, 0xef, 0x80, 0xbf, 3, 0x0f },
		{ 0xf0, 0xf0, 0x90, 0xbf, 4, 0x07 },	/* no overlong forms */
		{ 0xf1, 0xf3, 0x80, 0xbf, 4, 0x07 },
		{ 0xf4, 0xf4, 0x80, 0x8f, 4, 0x07 },	/* nothing past U+10FFFF */
	};

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		if (s[0] < forms[i].first_lo || s[0] > forms[i].first_hi)
			continue;
		if (s[1] < forms[i].second_lo || s[1] > forms[i].second_hi)
			return 0;
		*cp = s[0] & forms[i].mask;
		for (size_t k = 1; k < forms[i].len; k++) {
			if ((s[k] & 0xc0) != 0x80)
				return 0;
			*cp = *cp << 6 | (s[k] & 0x3f);
		}
		return forms[i].len;
	}
	return 0;
}

static bool is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

size_t escape__next(const char *s, char out[ESCAPE_MAX], size_t *shown)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	uint32_t cp = u[0];
	size_t n = u[0] < 0x80 ? 1 : utf8_char(u, &cp);

	if (n && !is_control(cp)) {
		memcpy(out, s, n);
		out[n] = '\0';
		*shown = n;
		return n;
	}
	/* A control or a malformed sequence: every byte of it, or the one bad byte. */
	if (!n)
		n = 1;
	for (size_t i = 0; i < n; i++) {
		out[4 * i] = '\\';
		out[4 * i + 1] = 'x';
		out[4 * i + 2] = hex[u[i] >> 4];
		out[4 * i + 3] = hex[u[i] & 15];
	}
	out[4 * n] = '\0';
	*shown = 4 * n;
	return n;
}

bool escape__needed(const char *s)
{
	char out[ESCAPE_MAX];
	size_t shown;

	while (*s) {
		size_t n = escape__next(s, out, &shown);

		if (shown != n)
			return true;
		s += n;
	}
	return false;
}

int escape__fputs(FILE *out, const char *s)
{
	char buf[ESCAPE_MAX];
	size_t shown;

	while (*s) {
		s += escape__next(s, buf, &shown);
		if (fwrite(buf, 1, shown, out) != shown)
			return -EIO;
	}
	return 0;
}

const char *escape__str(char *buf, size_t len, const char *s)
{
	char one[ESCAPE_MAX];
	size_t w = 0, shown;

	while (*s) {
		size_t n = escape__next(s, one, &shown);

		if (w + shown >= len)
			break;
		memcpy(buf + w, one, shown);
		w += shown;
		s += n;
	}
	buf[w] = '\0';
	return buf;
}
