// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * symhint.c - entries of modules without symbols (their life) and the rule that names the
 * Debian debug package of a binary package: a short table of hand-made -dbg packages by
 * source package, else the automatic PACKAGE-dbgsym.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/symhint.h"

const char *const sym_pkg_lookup_names[SYM_PKG__COUNT] = {
	[SYM_PKG_UNKNOWN] = "unknown",
	[SYM_PKG_OWNED] = "owned",
	[SYM_PKG_NOT_OWNED] = "not_owned",
};

void sym_missing__clear(struct sym_missing *h)
{
	free(h->module);
	free(h->build_id);
	free(h->package);
	free(h->source);
	free(h->debug_package);
	memset(h, 0, sizeof(*h));
}

static int dup_str(char **dst, const char *src)
{
	*dst = src ? strdup(src) : NULL;
	return src && !*dst ? -ENOMEM : 0;
}

int sym_missing__copy(struct sym_missing *dst, const struct sym_missing *src)
{
	*dst = (struct sym_missing){ .lookup = src->lookup, .reported = src->reported };
	if (dup_str(&dst->module, src->module) || dup_str(&dst->build_id, src->build_id) ||
	    dup_str(&dst->package, src->package) || dup_str(&dst->source, src->source) ||
	    dup_str(&dst->debug_package, src->debug_package)) {
		sym_missing__clear(dst);
		return -ENOMEM;
	}
	return 0;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

bool sym_missing__same(const struct sym_missing *a, const struct sym_missing *b)
{
	return same_str(a->module, b->module) && same_str(a->build_id, b->build_id);
}

/*
 * Debian's hand-made debug packages (in the main archive, no debug archive needed), by
 * source package; `binary` NULL: every binary package of the source.
 */
static const struct {
	const char *source, *binary, *debug;
} dbg_table[] = {
	{ "glibc", NULL, "libc6-dbg" },
	{ "gcc-12", "libstdc++6", "libstdc++6-12-dbg" },
	{ "krb5", NULL, "libkrb5-dbg" },
	{ "db5.3", NULL, "libdb5.3-dbg" },
	{ "lua5.1", NULL, "liblua5.1-0-dbg" },
	{ "lua5.3", NULL, "liblua5.3-0-dbg" },
	{ "lua5.4", NULL, "liblua5.4-0-dbg" },
};

/* "python3.11": the interpreter's source, whose -dbg package carries its debug files. */
static bool python_source(const char *source)
{
	const char *p;

	if (strncmp(source, "python3.", 8) || !source[8])
		return false;
	for (p = source + 8; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

int symhint__debug_package(const char *package, const char *source, const char *arch,
			   const char *native_arch, char *buf, size_t size)
{
	char name[256], qual[64] = "";
	const char *colon, *debug = NULL;
	size_t i, len;
	int n;

	if (!package || !*package || !size)
		return -EINVAL;
	colon = strchr(package, ':');
	len = colon ? (size_t)(colon - package) : strlen(package);
	if (!len || len >= sizeof(name))
		return -EINVAL;
	memcpy(name, package, len);
	name[len] = '\0';
	if (!arch && colon)
		arch = colon + 1;
	/* A foreign architecture's package needs its qualifier; "all" and the native do not. */
	if (arch && *arch && strcmp(arch, "all") && (!native_arch || strcmp(arch, native_arch)))
		snprintf(qual, sizeof(qual), ":%s", arch);
	for (i = 0; source && i < sizeof(dbg_table) / sizeof(dbg_table[0]); i++) {
		if (strcmp(dbg_table[i].source, source))
			continue;
		if (dbg_table[i].binary && strcmp(dbg_table[i].binary, name))
			continue;
		debug = dbg_table[i].debug;
		break;
	}
	if (debug)
		n = snprintf(buf, size, "%s%s", debug, qual);
	else if (source && python_source(source))
		n = snprintf(buf, size, "%s-dbg%s", source, qual);
	else
		n = snprintf(buf, size, "%s-dbgsym%s", name, qual);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

bool symhint__is_dbgsym(const char *debug_package)
{
	const char *end;
	size_t len;

	if (!debug_package)
		return false;
	end = strchr(debug_package, ':');
	len = end ? (size_t)(end - debug_package) : strlen(debug_package);
	return len > 7 && !strncmp(debug_package + len - 7, "-dbgsym", 7);
}
