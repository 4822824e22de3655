// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * ldlist.c - what a program will load, found the way glibc's dynamic linker finds it, from
 * the files alone: nothing is run (see ldlist.h; "ld.so --list" ran the program's
 * DT_AUDIT libraries, review C11).
 *
 * Every file named here is the traced user's: opened only as a regular file, non-blocking,
 * inside the process's root when it has its own (live/safe_open.c), read through libelf
 * (never mapped: a file truncated under us is an error, not a SIGBUS).  The search for a
 * name without a slash: the requesting object's DT_RPATH and the program's (when the object
 * has no DT_RUNPATH), LD_LIBRARY_PATH, the object's DT_RUNPATH, the directories of
 * /etc/ld.so.conf (leaktop's own root only: another root's configuration is not parsed),
 * then the default ones; $ORIGIN, $LIB and $PLATFORM are expanded.  Objects already loaded
 * (by the name asked for or their DT_SONAME) are not loaded twice.  At most 4096 names are
 * tried per list: what a program's search paths make leaktop do stays bounded.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>

#include "live/ldlist.h"
#include "live/safe_open.h"

#define LIST_MAX_BYTES		(64u * 1024)
#define LIST_MAX_PATHS		512
#define NEEDED_MAX		64
#define NAME_LEN		256
#define DIRS_LEN		4096
#define CONF_DIRS_MAX		64
#define CONF_MAX_BYTES		(16u * 1024)
/* Names tried at most per list (a long LD_LIBRARY_PATH times many libraries stays short). */
#define TRIES_MAX		4096

static const char *const known_interps[] = {
	"/lib64/ld-linux-x86-64.so.2", "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
};

/* glibc's defaults after the cache (Debian's multiarch directories first). */
static const char *const default_dirs[] = {
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib",
	"/usr/lib",
};

/* What one object's headers and dynamic section say. */
struct obj_info {
	unsigned char elf_class;
	unsigned int machine;
	char interp[NAME_LEN];
	char soname[NAME_LEN];
	char rpath[DIRS_LEN];
	char runpath[DIRS_LEN];
	bool has_rpath, has_runpath;
	char needed[NEEDED_MAX][NAME_LEN];
	size_t n_needed;
};

/* The list being built. */
struct builder {
	const struct ld_env *env;
	struct ld_list *out;
	size_t used;				/* bytes of out->text */
	const char *asked[LIST_MAX_PATHS];	/* the name each object was loaded by */
	const char *soname[LIST_MAX_PATHS];
	struct obj_info exe;
	char exe_dir[DIRS_LEN];
	char conf[CONF_DIRS_MAX][NAME_LEN];	/* /etc/ld.so.conf's directories */
	size_t n_conf;
	unsigned int tries;			/* names tried so far */
};

static int open_in_root(const struct ld_env *env, const char *path, const struct file_id *want,
			int *fd)
{
	if (env->root_fd == AT_FDCWD)
		return safe_open(AT_FDCWD, path, SAFE_FOLLOW, want, fd);
	return safe_open(env->root_fd, path, SAFE_IN_ROOT, want, fd);
}

static void copy_name(char *dst, size_t len, const char *src)
{
	if (strlen(src) < len)
		memcpy(dst, src, strlen(src) + 1);
}

/* The headers, PT_INTERP and dynamic section of the ELF file open at fd. */
static int read_info(int fd, struct obj_info *o)
{
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	GElf_Phdr ph;
	size_t nph;
	Elf *elf;
	int err = 0;

	memset(o, 0, offsetof(struct obj_info, needed));
	o->n_needed = 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    elf_getphdrnum(elf, &nph)) {
		err = -ENOEXEC;
		goto out;
	}
	o->elf_class = eh.e_ident[EI_CLASS];
	o->machine = eh.e_machine;
	for (size_t i = 0; i < nph; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_INTERP || !ph.p_filesz ||
		    ph.p_filesz >= sizeof(o->interp))
			continue;
		if (pread(fd, o->interp, ph.p_filesz, ph.p_offset) != (ssize_t)ph.p_filesz)
			o->interp[0] = '\0';
		o->interp[ph.p_filesz - 1] = '\0';
	}
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		GElf_Shdr sh;
		size_t count;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			break;
		count = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < count; i++) {
			const char *s;
			GElf_Dyn d;

			if (!gelf_getdyn(data, (int)i, &d) || d.d_tag == DT_NULL)
				break;
			if (d.d_tag != DT_NEEDED && d.d_tag != DT_SONAME && d.d_tag != DT_RPATH &&
			    d.d_tag != DT_RUNPATH)
				continue;
			s = elf_strptr(elf, sh.sh_link, d.d_un.d_val);
			if (!s)
				continue;
			switch (d.d_tag) {
			case DT_NEEDED:
				if (o->n_needed < NEEDED_MAX && strlen(s) < NAME_LEN)
					copy_name(o->needed[o->n_needed++], NAME_LEN, s);
				break;
			case DT_SONAME:
				copy_name(o->soname, sizeof(o->soname), s);
				break;
			case DT_RPATH:
				copy_name(o->rpath, sizeof(o->rpath), s);
				o->has_rpath = true;
				break;
			case DT_RUNPATH:
				copy_name(o->runpath, sizeof(o->runpath), s);
				o->has_runpath = true;
				break;
			}
		}
		break;
	}
out:
	if (elf)
		elf_end(elf);
	return err;
}

/* Is the file open at fd an ELF object of the program's class and machine? */
static bool same_kind(int fd, const struct obj_info *exe)
{
	unsigned char h[20];

	if (pread(fd, h, sizeof(h), 0) != (ssize_t)sizeof(h) || memcmp(h, ELFMAG, SELFMAG))
		return false;
	return h[EI_CLASS] == exe->elf_class && (unsigned int)(h[18] | h[19] << 8) == exe->machine;
}

/* Keep s in the list's storage; NULL when full. */
static const char *keep(struct builder *b, const char *s)
{
	size_t len = strlen(s) + 1;
	char *p;

	if (b->used + len > LIST_MAX_BYTES)
		return NULL;
	p = b->out->text + b->used;
	memcpy(p, s, len);
	b->used += len;
	return p;
}

/* Is an object loaded by this name (asked for, or its soname) already in the list? */
static bool loaded(const struct builder *b, const char *name)
{
	for (size_t i = 0; i < b->out->n; i++)
		if ((b->asked[i] && !strcmp(b->asked[i], name)) ||
		    (b->soname[i] && !strcmp(b->soname[i], name)))
			return true;
	return false;
}

/* Add the object at path (open at fd, identity id), asked for as name. */
static void add(struct builder *b, const char *name, const char *path, int fd,
		const struct file_id *id)
{
	struct ld_list *l = b->out;
	struct obj_info *o;

	if (l->n == LIST_MAX_PATHS)
		return;
	for (size_t i = 0; i < l->n; i++)
		if (l->ids[i].dev == id->dev && l->ids[i].ino == id->ino)
			return;
	l->paths[l->n] = keep(b, path);
	if (!l->paths[l->n])
		return;
	o = malloc(sizeof(*o));
	b->asked[l->n] = keep(b, name);
	b->soname[l->n] = NULL;
	if (o && !read_info(fd, o) && o->soname[0])
		b->soname[l->n] = keep(b, o->soname);
	free(o);
	l->ids[l->n++] = *id;
}

/* Try dir/name (a path inside the root): added when it is an object of the program's kind. */
static bool try_path(struct builder *b, const char *name, const char *path)
{
	struct file_id id;
	struct stat st;
	int fd;
	bool ok;

	if (path[0] != '/' || b->tries >= TRIES_MAX)
		return false;
	b->tries++;
	if (open_in_root(b->env, path, NULL, &fd))
		return false;
	ok = same_kind(fd, &b->exe) && !fstat(fd, &st);
	if (ok) {
		id.dev = st.st_dev;
		id.ino = st.st_ino;
		add(b, name, path, fd, &id);
	}
	close(fd);
	return ok;
}

/* One search-path entry with $ORIGIN, $LIB and $PLATFORM expanded into buf; false: unusable. */
static bool expand(const char *entry, const char *origin, char *buf, size_t len)
{
	static const struct { const char *token, *value; } tokens[] = {
		{ "${ORIGIN}", NULL }, { "$ORIGIN", NULL }, { "${LIB}", "lib/x86_64-linux-gnu" },
		{ "$LIB", "lib/x86_64-linux-gnu" }, { "${PLATFORM}", "x86_64" },
		{ "$PLATFORM", "x86_64" },
	};
	size_t n = 0;

	while (*entry) {
		bool matched = false;

		for (size_t i = 0; i < sizeof(tokens) / sizeof(tokens[0]) && *entry == '$'; i++) {
			const char *v = tokens[i].value ? tokens[i].value : origin;
			size_t tl = strlen(tokens[i].token), vl = strlen(v);

			if (strncmp(entry, tokens[i].token, tl))
				continue;
			if (n + vl >= len)
				return false;
			memcpy(buf + n, v, vl);
			n += vl;
			entry += tl;
			matched = true;
			break;
		}
		if (matched)
			continue;
		if (*entry == '$' || n + 1 >= len)
			return false;
		buf[n++] = *entry++;
	}
	buf[n] = '\0';
	return n > 0 && buf[0] == '/';
}

/* Search the entries of a colon (or semicolon) separated path list for name. */
static bool search_list(struct builder *b, const char *name, const char *list, const char *origin)
{
	char copy[DIRS_LEN], dir[DIRS_LEN], path[DIRS_LEN + NAME_LEN + 2], *save = NULL, *tok;

	if (!list || strlen(list) >= sizeof(copy))
		return false;
	memcpy(copy, list, strlen(list) + 1);
	for (tok = strtok_r(copy, ":;", &save); tok; tok = strtok_r(NULL, ":;", &save)) {
		if (!expand(tok, origin, dir, sizeof(dir)))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		if (try_path(b, name, path))
			return true;
	}
	return false;
}

/* Find and add the object name needed by req (whose directory is origin). */
static void search(struct builder *b, const char *name, const struct obj_info *req,
		   const char *origin)
{
	char path[NAME_LEN * 2 + 2];

	if (loaded(b, name))
		return;
	if (strchr(name, '/')) {
		try_path(b, name, name);
		return;
	}
	if (!req->has_runpath) {
		if (req->has_rpath && search_list(b, name, req->rpath, origin))
			return;
		if (req != &b->exe && b->exe.has_rpath && !b->exe.has_runpath &&
		    search_list(b, name, b->exe.rpath, b->exe_dir))
			return;
	}
	if (search_list(b, name, b->env->library_path, origin))
		return;
	if (req->has_runpath && search_list(b, name, req->runpath, origin))
		return;
	for (size_t i = 0; i < b->n_conf; i++) {
		snprintf(path, sizeof(path), "%s/%s", b->conf[i], name);
		if (try_path(b, name, path))
			return;
	}
	for (size_t i = 0; i < sizeof(default_dirs) / sizeof(default_dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", default_dirs[i], name);
		if (try_path(b, name, path))
			return;
	}
}

static void conf_file(struct builder *b, const char *path, int depth);

/* One line of an ld.so.conf file: a directory, or "include PATTERN". */
static void conf_line(struct builder *b, char *line, const char *file, int depth)
{
	char pattern[NAME_LEN * 2], *p = line + strspn(line, " \t");
	glob_t g;

	p[strcspn(p, "#")] = '\0';
	while (*p && strchr(" \t\r", p[strlen(p) - 1]))
		p[strlen(p) - 1] = '\0';
	if (!strncmp(p, "include", 7) && (p[7] == ' ' || p[7] == '\t')) {
		const char *slash = strrchr(file, '/');

		p += 8 + strspn(p + 8, " \t");
		if (depth >= 2 || !*p)
			return;
		if (*p == '/')
			snprintf(pattern, sizeof(pattern), "%s", p);
		else
			snprintf(pattern, sizeof(pattern), "%.*s/%s",
				 (int)(slash ? slash - file : 0), file, p);
		if (glob(pattern, GLOB_NOSORT, NULL, &g))
			return;
		for (size_t i = 0; i < g.gl_pathc; i++)
			conf_file(b, g.gl_pathv[i], depth + 1);
		globfree(&g);
		return;
	}
	if (*p == '/' && b->n_conf < CONF_DIRS_MAX && strlen(p) < NAME_LEN)
		copy_name(b->conf[b->n_conf++], NAME_LEN, p);
}

/* The directories an ld.so.conf file (of leaktop's own root: the system's) lists. */
static void conf_file(struct builder *b, const char *path, int depth)
{
	char *buf = malloc(CONF_MAX_BYTES), *line, *save = NULL;
	ssize_t n;
	int fd;

	if (!buf || safe_open(AT_FDCWD, path, SAFE_FOLLOW, NULL, &fd)) {
		free(buf);
		return;
	}
	n = read(fd, buf, CONF_MAX_BYTES - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		conf_line(b, line, path, depth);
	free(buf);
}

static void dir_of(const char *path, char *buf, size_t len)
{
	const char *slash = strrchr(path, '/');

	snprintf(buf, len, "%.*s", slash && slash != path ? (int)(slash - path) : 1, path);
}

int ldlist__resolve(const char *path, const struct ld_env *env, struct ld_list *out)
{
	struct builder *b = calloc(1, sizeof(*b));
	struct obj_info *o = malloc(sizeof(*o));
	char origin[DIRS_LEN], copy[DIRS_LEN], *save = NULL, *tok;
	bool trusted = false;
	int fd = -1, err;

	memset(out, 0, sizeof(*out));
	if (!b || !o) {
		err = -ENOMEM;
		goto out;
	}
	b->env = env;
	b->out = out;
	err = open_in_root(env, path, NULL, &fd);
	if (err)
		goto out;
	err = read_info(fd, &b->exe);
	close(fd);
	if (err)
		goto out;
	for (size_t i = 0; i < sizeof(known_interps) / sizeof(known_interps[0]); i++)
		trusted |= !strcmp(b->exe.interp, known_interps[i]);
	if (!trusted)
		goto out;			/* static, or another linker's rules: nothing */
	out->text = malloc(LIST_MAX_BYTES);
	out->paths = calloc(LIST_MAX_PATHS, sizeof(*out->paths));
	out->ids = calloc(LIST_MAX_PATHS, sizeof(*out->ids));
	if (!out->text || !out->paths || !out->ids) {
		err = -ENOMEM;
		goto out;
	}
	if (env->root_fd == AT_FDCWD)
		conf_file(b, "/etc/ld.so.conf", 0);
	dir_of(path, b->exe_dir, sizeof(b->exe_dir));
	/* LD_PRELOAD first, searched for as the program's own needs are. */
	if (env->preload && strlen(env->preload) < sizeof(copy)) {
		memcpy(copy, env->preload, strlen(env->preload) + 1);
		for (tok = strtok_r(copy, " :", &save); tok; tok = strtok_r(NULL, " :", &save))
			if (strlen(tok) < NAME_LEN)
				search(b, tok, &b->exe, b->exe_dir);
	}
	for (size_t i = 0; i < b->exe.n_needed; i++)
		search(b, b->exe.needed[i], &b->exe, b->exe_dir);
	/* Breadth first: each object's needs once it is its turn, as the linker maps them. */
	for (size_t k = 0; k < out->n; k++) {
		if (open_in_root(env, out->paths[k], &out->ids[k], &fd))
			continue;
		err = read_info(fd, o);
		close(fd);
		if (err)
			continue;
		dir_of(out->paths[k], origin, sizeof(origin));
		for (size_t i = 0; i < o->n_needed; i++)
			search(b, o->needed[i], o, origin);
	}
	err = 0;
	try_path(b, b->exe.interp, b->exe.interp);
out:
	if (err)
		ldlist__free(out);
	free(o);
	free(b);
	return err;
}

int ldlist__read(const char *path, struct ld_list *out)
{
	struct ld_env env = { .root_fd = AT_FDCWD, .preload = getenv("LD_PRELOAD"),
			      .library_path = getenv("LD_LIBRARY_PATH") };

	return ldlist__resolve(path, &env, out);
}

void ldlist__free(struct ld_list *l)
{
	free(l->text);
	free(l->paths);
	free(l->ids);
	memset(l, 0, sizeof(*l));
}
