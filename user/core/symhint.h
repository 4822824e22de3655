/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * symhint.h - modules whose frames cannot be named, and what would name them: a module with
 * neither a symbol table (.symtab, or MiniDebugInfo's) nor a separate debug file, the
 * package that owns it and the debug package that carries its build id.  Pure data and
 * rules: the tracker fills entries (live/debpkg.c reads dpkg's database), the model keeps
 * one per module, the views print them (view/format.c spells the hint).
 */
#ifndef LEAKTOP_SYMHINT_H
#define LEAKTOP_SYMHINT_H

#include <stdbool.h>
#include <stddef.h>

/* Modules a model keeps at most (more are not said: the first ones are what to fix). */
#define SYM_MISSING_MAX 1024

/* What the package manager said of the module's file. */
enum sym_pkg_lookup {
	SYM_PKG_UNKNOWN,	/* not asked or no answer (no dpkg database, another mount
				 * namespace, a path it cannot be asked about, not in time) */
	SYM_PKG_OWNED,		/* an installed package owns it */
	SYM_PKG_NOT_OWNED,	/* no installed package owns it */
	SYM_PKG__COUNT,
};

/* JSON's names: "unknown", "owned", "not_owned". */
extern const char *const sym_pkg_lookup_names[SYM_PKG__COUNT];

struct sym_missing {
	char *module;		/* path as the processes saw it */
	char *build_id;		/* lower-case hex; NULL: the file has none */
	enum sym_pkg_lookup lookup;
	char *package;		/* the owning binary package, as dpkg names it; NULL: none */
	char *source;		/* its source package; NULL: unknown */
	char *debug_package;	/* what to install for its symbols; NULL: none known */
	bool reported;		/* a live report already said it (views that say it once) */
};

void sym_missing__clear(struct sym_missing *h);
/* A deep copy; 0 or -ENOMEM (dst then cleared). */
int sym_missing__copy(struct sym_missing *dst, const struct sym_missing *src);
/* Same module file: path and build id (both may be NULL). */
bool sym_missing__same(const struct sym_missing *a, const struct sym_missing *b);

/*
 * The debug package for binary package `package` (dpkg's name, maybe ":ARCH"-qualified)
 * built from `source` (NULL: unknown) of architecture `arch` (NULL: from the qualifier),
 * on a system whose native architecture is `native_arch` (NULL: unknown): a hand-made -dbg
 * package when Debian has one for that source (glibc: libc6-dbg; python3.X: python3.X-dbg;
 * ...), else PACKAGE-dbgsym from Debian's debug archive; ":ARCH" kept for a foreign
 * architecture.  Into buf; 0, or -EINVAL (no package) / -ENAMETOOLONG.
 */
int symhint__debug_package(const char *package, const char *source, const char *arch,
			   const char *native_arch, char *buf, size_t size);
/* Is `debug_package` one from Debian's debug archive (NAME-dbgsym[:ARCH])? */
bool symhint__is_dbgsym(const char *debug_package);

#endif
