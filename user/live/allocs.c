// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * allocs.c - finds the allocator each process uses: the objects it maps that define one
 * (live/probes.c decides from the symbols), and the one its malloc binds to (core/bindorder.c
 * decides from the executable, LD_PRELOAD and each object's soname and needed list).
 *
 * Every file is opened by live/libcs.c (the very file the process maps, only a regular file,
 * never blocking) and read once: what it is stays in a table sorted by (dev, ino), bounded
 * (full, it starts over).  A process's LD_PRELOAD comes from /proc/PID/environ: what it was
 * started with.  /etc/ld.so.preload is not read: a preload from there binds like one from
 * the environment but is not recognised as one (documented in the README).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>

#include "core/bindorder.h"
#include "live/allocs.h"
#include "live/ldlist.h"
#include "live/probes.h"
#include "live/procfs.h"
#include "live/procmaps.h"
#include "live/safe_open.h"
#include "util/vec.h"
#include "util/search.h"

/* Files remembered at most; full, the table starts over. */
#define FACTS_MAX		4096
/* DT_NEEDED entries kept per object, and their length. */
#define NEEDED_MAX		64
#define NAME_MAX_LEN		256
/* Executable objects of one process considered (more are very rare). */
#define PROC_OBJS_MAX		256
/* LD_PRELOAD entries considered. */
#define PRELOAD_MAX		16
/* An environment variable's value read, at most. */
#define ENV_VALUE_MAX		4096

/* What one file is, for the allocator question. */
struct facts {
	uint64_t dev, ino;
	bool readable;			/* read; false: refused, gone, or not an ELF file */
	bool allocator;			/* defines a complete allocator API */
	bool exports_malloc;		/* in .dynsym: others may bind to it */
	bool defines_malloc;
	bool is_dynamic;
	const char *kind;
	char *soname;
	char **needed;
	size_t n_needed;
};

struct allocs {
	struct facts *v;		/* sorted by (dev, ino) */
	size_t n;
	struct allocs_stats stats;
	uint64_t self_dev, self_ino;	/* leaktop's executable: never probed */
};

int allocs__new(struct allocs **out)
{
	struct allocs *a = calloc(1, sizeof(*a));
	struct stat st;

	if (!a)
		return -ENOMEM;
	a->v = calloc(FACTS_MAX, sizeof(*a->v));
	if (!a->v) {
		free(a);
		return -ENOMEM;
	}
	if (!stat("/proc/self/exe", &st)) {
		a->self_dev = st.st_dev;
		a->self_ino = st.st_ino;
	}
	*out = a;
	return 0;
}

static void facts_clear(struct facts *f)
{
	free(f->soname);
	for (size_t i = 0; i < f->n_needed; i++)
		free(f->needed[i]);
	free(f->needed);
	memset(f, 0, sizeof(*f));
}

void allocs__free(struct allocs *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++)
		facts_clear(&a->v[i]);
	free(a->v);
	free(a);
}

void allocs__stats(const struct allocs *a, struct allocs_stats *out)
{
	*out = a->stats;
}

static int cmp_id(uint64_t dev, uint64_t ino, const struct facts *f)
{
	if (dev != f->dev)
		return dev < f->dev ? -1 : 1;
	if (ino != f->ino)
		return ino < f->ino ? -1 : 1;
	return 0;
}

/* Index of (dev, ino) in the table, or where it would go (*found false). */
static size_t facts_pos(const struct allocs *a, uint64_t dev, uint64_t ino, bool *found)
{
	size_t at = SEARCH_FIRST(a->n, mid, cmp_id(dev, ino, &a->v[mid]) > 0);

	*found = at < a->n && !cmp_id(dev, ino, &a->v[at]);
	return at;
}

static const struct facts *facts_find(const struct allocs *a, uint64_t dev, uint64_t ino)
{
	bool found;
	size_t i = facts_pos(a, dev, ino, &found);

	return found ? &a->v[i] : NULL;
}

/* DT_SONAME and DT_NEEDED of the ELF file open at fd (nothing when it has none). */
static void read_deps(int fd, struct facts *f)
{
	Elf_Scn *scn = NULL;
	Elf *elf;

	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return;
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
			const char *name;
			GElf_Dyn d;

			if (!gelf_getdyn(data, (int)i, &d) || d.d_tag == DT_NULL)
				break;
			if (d.d_tag != DT_NEEDED && d.d_tag != DT_SONAME)
				continue;
			name = elf_strptr(elf, sh.sh_link, d.d_un.d_val);
			if (!name || strlen(name) >= NAME_MAX_LEN)
				continue;
			if (d.d_tag == DT_SONAME) {
				if (!f->soname)
					f->soname = strdup(name);
				continue;
			}
			if (!f->needed)
				f->needed = calloc(NEEDED_MAX, sizeof(*f->needed));
			if (f->needed && f->n_needed < NEEDED_MAX &&
			    (f->needed[f->n_needed] = strdup(name)))
				f->n_needed++;
		}
		break;
	}
	elf_end(elf);
}

/* Learn what ref's file is: opened safely, its symbols and dependencies read. */
static void facts_read(struct allocs *a, const struct libc_ref *ref, struct facts *f)
{
	struct probe_plan *plan = malloc(sizeof(*plan));
	char why[512];
	int fd = -1, err;

	memset(f, 0, sizeof(*f));
	f->dev = ref->dev;
	f->ino = ref->ino;
	a->stats.objects_read++;
	if (!plan || libcs__open(ref, &fd, why, sizeof(why))) {
		a->stats.objects_unreadable++;
		goto out;
	}
	err = probe_plan__scan(fd, plan);
	if (err && err != -ENOENT) {
		a->stats.objects_unreadable++;
		goto out;
	}
	f->readable = true;
	f->allocator = !err;
	f->exports_malloc = plan->exports_malloc;
	f->defines_malloc = plan->defines_malloc;
	f->is_dynamic = plan->is_dynamic;
	f->kind = plan->kind;
	read_deps(fd, f);
out:
	if (fd >= 0)
		close(fd);
	free(plan);
}

/* The facts of ref's file: remembered, or read now when `may_read` (else NULL). */
static const struct facts *facts_of(struct allocs *a, const struct libc_ref *ref, bool may_read)
{
	struct facts f;
	bool found;
	size_t i = facts_pos(a, ref->dev, ref->ino, &found);

	if (found)
		return &a->v[i];
	if (!may_read)
		return NULL;
	facts_read(a, ref, &f);
	if (a->n == FACTS_MAX) {
		for (size_t k = 0; k < a->n; k++)
			facts_clear(&a->v[k]);
		a->n = 0;
		a->stats.cache_resets++;
		i = 0;
	}
	memmove(&a->v[i + 1], &a->v[i], (a->n - i) * sizeof(*a->v));
	a->v[i] = f;
	a->n++;
	return &a->v[i];
}

/* One process's executable file objects, each once, with its facts. */
struct proc_objs {
	struct libc_ref ref[PROC_OBJS_MAX];
	const struct facts *facts[PROC_OBJS_MAX];
	size_t n;
	size_t exe;			/* index of the executable (0 when not recognised) */
};

/* Point at each object's facts once all are in (an insertion moves the table's entries). */
static void facts_resolve(const struct allocs *a, struct proc_objs *po)
{
	for (size_t i = 0; i < po->n; i++)
		po->facts[i] = facts_find(a, po->ref[i].dev, po->ref[i].ino);
}

static int proc_objs_read(struct allocs *a, int pid, struct proc_objs *po)
{
	struct proc_maps maps = { 0 };
	struct file_id exe_id;
	char exe_path[64];
	bool exe_known;
	int err;

	po->n = po->exe = 0;
	snprintf(exe_path, sizeof(exe_path), "/proc/%d/exe", pid);
	/* From the inode: a program on FUSE must not make this ask its daemon. */
	exe_known = !safe_open__link_id(exe_path, &exe_id, NULL);
	/* leaktop's own fork before it execs CMD: nothing to learn (its malloc is leaktop's). */
	if (exe_known && exe_id.dev == a->self_dev && exe_id.ino == a->self_ino)
		return -EAGAIN;
	err = procmaps__read(pid, &maps);
	if (err)
		return err;
	for (size_t i = 0; i < maps.n && po->n < PROC_OBJS_MAX; i++) {
		const struct proc_map *m = &maps.v[i];
		bool dup = false;

		if (!m->executable || !m->path || m->path[0] != '/' || !m->ino)
			continue;
		for (size_t k = 0; k < po->n && !dup; k++)
			dup = po->ref[k].dev == m->dev && po->ref[k].ino == m->ino;
		if (dup)
			continue;
		libcs__ref_of_map(pid, m, &po->ref[po->n]);
		facts_of(a, &po->ref[po->n], true);
		if (exe_known && m->ino == exe_id.ino)
			po->exe = po->n;
		po->n++;
	}
	procmaps__free(&maps);
	facts_resolve(a, po);
	return 0;
}

/*
 * Which of the objects malloc binds to (the dynamic linker's rules), given the preload
 * names; -1 when none.  A static executable with an allocator is its own.
 */
static int pick_bound(const struct libc_ref *ref, const struct facts *const *facts, size_t n,
		      size_t exe, const char **preload, size_t n_preload)
{
	struct bind_obj objs[PROC_OBJS_MAX];
	int k;

	if (!n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		objs[i] = (struct bind_obj){
			.path = ref[i].path,
			.soname = facts[i] ? facts[i]->soname : NULL,
			.needed = facts[i] ? (const char *const *)facts[i]->needed : NULL,
			.n_needed = facts[i] ? facts[i]->n_needed : 0,
			.exports_malloc = facts[i] && facts[i]->allocator &&
					  facts[i]->exports_malloc,
		};
	}
	if (facts[exe] && facts[exe]->allocator && !facts[exe]->is_dynamic)
		return (int)exe;
	k = bind_order__pick(objs, n, exe, preload, n_preload);
	return k >= 0 && facts[k] && facts[k]->allocator ? k : -1;
}

/*
 * The objects to probe among n: the bound one, and allocators nobody binds to by name (an
 * API under a prefix only, or a malloc defined but not exported), which are called directly.
 */
static void objs_to_probe(const struct libc_ref *ref, const struct facts *const *facts, size_t n,
			  int bound, struct alloc_obj *out, size_t max, size_t *n_out)
{
	*n_out = 0;
	for (size_t i = 0; i < n && *n_out < max; i++) {
		const struct facts *f = facts[i];

		if (!f || !f->allocator)
			continue;
		if ((int)i != bound && f->exports_malloc)
			continue;
		if ((int)i != bound && !f->is_dynamic)
			continue;
		out[*n_out] = (struct alloc_obj){ .ref = ref[i], .kind = f->kind,
						  .bound = (int)i == bound };
		(*n_out)++;
	}
}

/* Does pid see leaktop's root?  Else *root_fd gets an O_PATH descriptor of its own. */
static int root_of(int pid, int *root_fd)
{
	struct stat mine, its;
	char path[64];

	*root_fd = AT_FDCWD;
	snprintf(path, sizeof(path), "/proc/%d/root", pid);
	if (stat("/", &mine) || stat(path, &its))
		return -errno;
	if (mine.st_dev == its.st_dev && mine.st_ino == its.st_ino)
		return 0;
	*root_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return *root_fd < 0 ? -errno : 0;
}

/*
 * LD_PRELOAD entries given as paths name the object by what the path leads to (a symbolic
 * link like libtcmalloc_minimal.so.4 names the file maps lists as ...so.4.5.10): each one
 * that leads (inside pid's root; 0: leaktop's) to one of po's objects is replaced by that
 * object's path, so the binding rules match it.
 */
static void canon_preload(int pid, const struct proc_objs *po, const char **preload, size_t n)
{
	int root_fd = AT_FDCWD;

	if (pid > 0 && root_of(pid, &root_fd))
		return;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		int fd;

		if (!strchr(preload[i], '/') || preload[i][0] != '/')
			continue;
		if (safe_open(root_fd, preload[i], root_fd == AT_FDCWD ? SAFE_FOLLOW : SAFE_IN_ROOT,
			      NULL, &fd))
			continue;
		if (!fstat(fd, &st)) {
			for (size_t k = 0; k < po->n; k++)
				if (po->ref[k].dev == (uint64_t)st.st_dev &&
				    po->ref[k].ino == (uint64_t)st.st_ino)
					preload[i] = po->ref[k].path;
		}
		close(fd);
	}
	if (root_fd != AT_FDCWD)
		close(root_fd);
}

static size_t preload_of_pid(int pid, char *buf, size_t len, const char **out)
{
	if (procfs__environ_value(pid, "LD_PRELOAD", buf, len))
		return 0;
	return bind_order__split_preload(buf, out, PRELOAD_MAX);
}

/* The objects of pid and the index of the bound one; po is the caller's (it is large). */
static int bind_pid(struct allocs *a, int pid, struct proc_objs *po, int *bound)
{
	const char *preload[PRELOAD_MAX];
	char env[4096];
	size_t n_preload;
	int err;

	err = proc_objs_read(a, pid, po);
	if (err)
		return err;
	n_preload = preload_of_pid(pid, env, sizeof(env), preload);
	canon_preload(pid, po, preload, n_preload);
	*bound = pick_bound(po->ref, po->facts, po->n, po->exe, preload, n_preload);
	return 0;
}

int allocs__of_pid(struct allocs *a, int pid, struct alloc_obj *out, size_t max, size_t *n)
{
	struct proc_objs *po = malloc(sizeof(*po));
	int bound, err;

	*n = 0;
	if (!po)
		return -ENOMEM;
	err = bind_pid(a, pid, po, &bound);
	if (!err)
		objs_to_probe(po->ref, po->facts, po->n, bound, out, max, n);
	free(po);
	return err;
}

int allocs__bound_of_pid(struct allocs *a, int pid, char *module, size_t len, const char **kind)
{
	struct proc_objs *po = malloc(sizeof(*po));
	int bound, err;

	if (!po)
		return -ENOMEM;
	err = bind_pid(a, pid, po, &bound);
	if (!err && bound < 0)
		err = -ENOENT;
	if (!err) {
		snprintf(module, len, "%s", po->ref[bound].path);
		*kind = po->facts[bound]->kind;
	}
	free(po);
	return err;
}

/* A file by path in leaktop's namespace, as a ref with no process (0, or -errno). */
static int ref_of_path(const char *path, struct libc_ref *r)
{
	struct stat st;

	memset(r, 0, sizeof(*r));
	if (stat(path, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	snprintf(r->path, sizeof(r->path), "%s", path);
	r->dev = st.st_dev;
	r->ino = st.st_ino;
	return 0;
}

/*
 * Add what list names to po, each file once, as refs with no process: the paths are inside
 * a root leaktop reaches as prefix (empty: its own), and each is opened later only if it is
 * still the file listed (libcs__open checks the identity).
 */
static void add_listed(struct allocs *a, struct proc_objs *po, const struct ld_list *l,
		       const char *prefix)
{
	for (size_t i = 0; i < l->n && po->n < PROC_OBJS_MAX; i++) {
		struct libc_ref *r = &po->ref[po->n];
		bool dup = false;

		for (size_t k = 0; k < po->n && !dup; k++)
			dup = po->ref[k].dev == l->ids[i].dev && po->ref[k].ino == l->ids[i].ino;
		if (dup)
			continue;
		memset(r, 0, sizeof(*r));
		if (snprintf(r->path, sizeof(r->path), "%s%s", prefix, l->paths[i]) >=
		    (int)sizeof(r->path))
			continue;
		r->dev = l->ids[i].dev;
		r->ino = l->ids[i].ino;
		facts_of(a, r, true);
		po->n++;
	}
}

/* The objects to probe among po's, bound by the preload names in env (a copy is cut). */
static void pick_and_probe(int pid, const struct proc_objs *po, char *preload_env,
			   struct alloc_obj *out, size_t max, size_t *n)
{
	const char *preload[PRELOAD_MAX];
	size_t n_preload = 0;
	int bound;

	if (preload_env)
		n_preload = bind_order__split_preload(preload_env, preload, PRELOAD_MAX);
	canon_preload(pid, po, preload, n_preload);
	bound = pick_bound(po->ref, po->facts, po->n, po->exe, preload, n_preload);
	objs_to_probe(po->ref, po->facts, po->n, bound, out, max, n);
}

int allocs__of_command(struct allocs *a, const char *path, struct alloc_obj *out, size_t max,
		       size_t *n)
{
	struct proc_objs *po = malloc(sizeof(*po));
	struct ld_list list = { 0 };
	char env[4096];
	const char *pre;
	int err;

	*n = 0;
	if (!po)
		return -ENOMEM;
	po->n = po->exe = 0;
	err = ref_of_path(path, &po->ref[0]);
	if (err)
		goto out;
	facts_of(a, &po->ref[po->n++], true);
	/* Not listing is no error: a static program, or another dynamic linker. */
	if (!ldlist__read(path, &list))
		add_listed(a, po, &list, "");
	facts_resolve(a, po);
	pre = getenv("LD_PRELOAD");
	snprintf(env, sizeof(env), "%s", pre ? pre : "");
	pick_and_probe(0, po, env, out, max, n);
	ldlist__free(&list);
out:
	free(po);
	return err;
}

int allocs__of_exec(struct allocs *a, int pid, struct alloc_obj *out, size_t max, size_t *n,
		    bool *env_set)
{
	struct proc_objs *po = malloc(sizeof(*po));
	char *preload = malloc(ENV_VALUE_MAX), *libpath = malloc(ENV_VALUE_MAX), prefix[64];
	struct ld_env env = { .root_fd = AT_FDCWD };
	struct ld_list list = { 0 };
	int err;

	*n = 0;
	*env_set = false;
	if (!po || !preload || !libpath) {
		err = -ENOMEM;
		goto out;
	}
	err = proc_objs_read(a, pid, po);
	if (err)
		goto out;
	if (!procfs__environ_value(pid, "LD_PRELOAD", preload, ENV_VALUE_MAX))
		env.preload = preload;
	if (!procfs__environ_value(pid, "LD_LIBRARY_PATH", libpath, ENV_VALUE_MAX))
		env.library_path = libpath;
	*env_set = env.preload || env.library_path;
	/* What ld.so will map next, found in the process's root (the program is mapped). */
	if (po->n && !root_of(pid, &env.root_fd)) {
		prefix[0] = '\0';
		if (env.root_fd != AT_FDCWD)
			snprintf(prefix, sizeof(prefix), "/proc/%d/root", pid);
		if (!ldlist__resolve(po->ref[po->exe].path, &env, &list))
			add_listed(a, po, &list, prefix);
		if (env.root_fd != AT_FDCWD)
			close(env.root_fd);
	}
	facts_resolve(a, po);
	pick_and_probe(pid, po, env.preload ? preload : NULL, out, max, n);
	ldlist__free(&list);
out:
	free(po);
	free(preload);
	free(libpath);
	return err;
}

/* Add ref to the distinct allocator objects v[0..*n) (grown by doubling). */
static int push_unique(struct alloc_obj **v, size_t *n, size_t *cap, const struct libc_ref *ref,
		       const char *kind)
{
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i].ref.dev == ref->dev && (*v)[i].ref.ino == ref->ino)
			return 0;
	if (VEC_RESERVE(*v, *cap, *n + 1, 8))
		return -ENOMEM;
	(*v)[(*n)++] = (struct alloc_obj){ .ref = *ref, .kind = kind };
	return 0;
}

int allocs__scan_system(struct allocs *a, size_t budget, struct alloc_obj **out, size_t *n)
{
	struct alloc_obj *v = NULL;
	size_t cnt = 0, cap = 0, np, read = 0;
	int *pids, err, self = getpid();
	uint32_t pending = 0;

	err = procfs__list_pids(&pids, &np);
	if (err)
		return err;
	for (size_t i = 0; i < np && !err; i++) {
		struct proc_maps maps = { 0 };

		if (pids[i] == self || procmaps__read(pids[i], &maps))
			continue;	/* leaktop, gone, or a kernel thread */
		for (size_t k = 0; k < maps.n && !err; k++) {
			const struct proc_map *m = &maps.v[k];
			const struct facts *f;
			struct libc_ref ref;
			bool may_read;

			if (!m->executable || !m->path || m->path[0] != '/' || !m->ino)
				continue;
			if (m->dev == a->self_dev && m->ino == a->self_ino)
				continue;
			f = facts_find(a, m->dev, m->ino);
			if (!f) {
				may_read = read < budget || libcs__is_libc_path(m->path);
				if (!may_read) {
					pending++;
					continue;
				}
				libcs__ref_of_map(pids[i], m, &ref);
				f = facts_of(a, &ref, true);
				read++;
			}
			if (!f->allocator)
				continue;
			libcs__ref_of_map(pids[i], m, &ref);
			err = push_unique(&v, &cnt, &cap, &ref, f->kind);
		}
		procmaps__free(&maps);
	}
	free(pids);
	a->stats.scan_pending = pending;
	if (err) {
		free(v);
		return err;
	}
	*out = v;
	*n = cnt;
	return 0;
}
