// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * export.c - writes the model's heap and mmap call sites for other tools: pprof profiles and
 * folded stacks.  It owns both formats' mapping from the model; the pprof wire encoding is
 * protobuf-c's, from C generated out of proto/profile.proto at build time, gzipped with zlib.
 *
 * pprof: strings, functions, locations and mappings are interned (each distinct one once),
 * every id is its index + 1, string 0 is "".  A location is one captured frame (its runtime
 * address, with the function and line leaktop resolved, never guessed); a mapping is one
 * module file, with its GNU build id when the file can be read, and with its address range
 * unknown (0), as snapshots do not record where modules were loaded.  Only processes a report
 * would show are exported, heap sites and, when mappings were tracked, mmap sites (fd sites
 * have no bytes).  An mmap site's values are sample types of their own (mmap_objects,
 * mmap_space), 0 in the heap's and the heap's 0 in them, as Go's heap profiles keep alloc_*
 * and inuse_* apart: adding brk growth to the heap blocks inside it would count those bytes
 * twice.  Folded stacks have one number per line: the heap's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "util/atomic_file.h"
#include "util/escape.h"
#include "view/export.h"
#include "proto/profile.pb-c.h"
#include "util/vec.h"

/* ---------------------------------------------------------------- folded stacks */

/* Text of a folded line: a character every text output would escape (util/escape.h) is
 * one '?' (flame graph tools show names as they are), and ';' (the frame separator) is ':'. */
static void write_folded_text(FILE *out, const char *text)
{
	char one[ESCAPE_MAX];
	size_t shown, n;

	while (*text) {
		n = escape__next(text, one, &shown);
		text += n;
		if (shown != n)
			fputc('?', out);
		else
			fputs(one[0] == ';' ? ":" : one, out);
	}
}

/* A frame's name in a folded line: its function, else [its module's file name], else its
 * address. */
static void write_folded_frame(FILE *out, const struct sym_frame *f)
{
	const char *base = f->module ? strrchr(f->module, '/') : NULL;
	char buf[32];

	if (f->symbol) {
		write_folded_text(out, f->symbol);
	} else if (f->module) {
		fputc('[', out);
		write_folded_text(out, base ? base + 1 : f->module);
		fputc(']', out);
	} else {
		snprintf(buf, sizeof(buf), "0x%" PRIx64, f->addr);
		fputs(buf, out);
	}
}

int export__folded(FILE *out, const struct model *m)
{
	for (size_t i = 0; i < m->n_procs; i++) {
		const struct process *p = &m->procs[i];

		if (!model__visible(p))
			continue;
		for (size_t j = 0; j < p->n_sites; j++) {
			const struct site *s = &p->sites[j];

			if (s->kind != LT_KIND_HEAP || s->outstanding_bytes <= 0)
				continue;
			if (!s->n_frames)
				fputs("[stack unknown]", out);
			for (uint32_t f = s->n_frames; f-- > 0;) {
				write_folded_frame(out, &s->frames[f]);
				if (f)
					fputc(';', out);
			}
			fprintf(out, " %" PRId64 "\n", (int64_t)s->outstanding_bytes);
		}
	}
	return fflush(out) || ferror(out) ? -EIO : 0;
}

/* ---------------------------------------------------------------- interning */

/* Distinct strings (keys) to ids 1..n, in order of first sight. */
struct intern {
	char **keys;		/* by id - 1 */
	size_t *slots;		/* open addressing: id, 0 empty */
	size_t n, cap;		/* cap: a power of two, over twice n */
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int intern_grow(struct intern *t)
{
	size_t cap = t->cap ? t->cap * 2 : 64;
	size_t *slots = calloc(cap, sizeof(*slots));
	char **keys = realloc(t->keys, cap / 2 * sizeof(*keys));

	if (keys)
		t->keys = keys;
	if (!slots || !keys) {
		free(slots);
		return -ENOMEM;
	}
	for (size_t id = 1; id <= t->n; id++) {
		size_t at = hash_str(t->keys[id - 1]) & (cap - 1);

		while (slots[at])
			at = (at + 1) & (cap - 1);
		slots[at] = id;
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

/* The id of key (copied when new); *added tells whether it is new.  0 on failure. */
static size_t intern_id(struct intern *t, const char *key, bool *added)
{
	size_t at;

	*added = false;
	if ((t->n + 1) * 2 > t->cap && intern_grow(t))
		return 0;
	for (at = hash_str(key) & (t->cap - 1); t->slots[at]; at = (at + 1) & (t->cap - 1))
		if (!strcmp(t->keys[t->slots[at] - 1], key))
			return t->slots[at];
	t->keys[t->n] = strdup(key);
	if (!t->keys[t->n])
		return 0;
	t->slots[at] = ++t->n;
	*added = true;
	return t->n;
}

static void intern_free(struct intern *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->keys[i]);
	free(t->keys);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

/* Grow *v (elements of `size` bytes) to hold at least n + 1. */
static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	return vec__reserve(v, cap, n + 1, size, 16, true);
}

/* ---------------------------------------------------------------- pprof */

struct pmap {
	Perftools__Profiles__Mapping msg;
};

struct ploc {
	Perftools__Profiles__Location msg;
	Perftools__Profiles__Line line;
	Perftools__Profiles__Line *linep;
};

/* The sample types, in the profile's order: values[] of a sample are indexed by them. */
enum ptype {
	PT_INUSE_OBJECTS,
	PT_INUSE_SPACE,
	PT_MMAP_OBJECTS,	/* only when mappings were tracked */
	PT_MMAP_SPACE,
	PT__COUNT,
};

static const struct {
	const char *type, *unit;
} ptypes[PT__COUNT] = {
	[PT_INUSE_OBJECTS] = { "inuse_objects", "count" },
	[PT_INUSE_SPACE] = { "inuse_space", "bytes" },
	[PT_MMAP_OBJECTS] = { "mmap_objects", "count" },
	[PT_MMAP_SPACE] = { "mmap_space", "bytes" },
};

struct psample {
	Perftools__Profiles__Sample msg;
	int64_t values[PT__COUNT];
	Perftools__Profiles__Label labels[2];
	Perftools__Profiles__Label *labelp[2];
};

struct pprof {
	const struct export_opts *o;
	struct intern strs, funcs, locs, maps;
	Perftools__Profiles__Function *fn;	/* by id - 1 */
	struct ploc *loc;
	struct pmap *map;
	struct psample *smp;
	size_t cap_fn, cap_loc, cap_map, n_smp, cap_smp;
	bool oom;			/* a string could not be interned */
	char key[8192];
};

/* The string table index of s ("" is 0, as is NULL); out of memory sets pp->oom. */
static int64_t str_index(struct pprof *pp, const char *s)
{
	bool added;
	size_t id = intern_id(&pp->strs, s ? s : "", &added);

	pp->oom |= !id;
	return id ? (int64_t)id - 1 : 0;
}

/* The mapping id of a module (0: none known). */
static uint64_t map_id(struct pprof *pp, const char *module)
{
	Perftools__Profiles__Mapping init = PERFTOOLS__PROFILES__MAPPING__INIT, *mp;
	char *build_id;
	bool added;
	size_t id;

	if (!module)
		return 0;
	id = intern_id(&pp->maps, module, &added);
	if (!id || !added)
		return id;
	if (grow((void **)&pp->map, &pp->cap_map, id - 1, sizeof(*pp->map)))
		return 0;
	mp = &pp->map[id - 1].msg;
	*mp = init;
	mp->id = id;
	mp->filename = str_index(pp, module);
	build_id = pp->o->build_id ? pp->o->build_id(pp->o->build_id_ctx, module) : NULL;
	mp->build_id = build_id ? str_index(pp, build_id) : 0;
	free(build_id);
	/* Cleared below by any location of this mapping that lacks them. */
	mp->has_functions = mp->has_filenames = mp->has_line_numbers = true;
	return id;
}

static uint64_t func_id(struct pprof *pp, const struct sym_frame *f)
{
	Perftools__Profiles__Function init = PERFTOOLS__PROFILES__FUNCTION__INIT, *fn;
	bool added;
	size_t id;

	snprintf(pp->key, sizeof(pp->key), "%s\x1f%s", f->symbol, f->file ? f->file : "");
	id = intern_id(&pp->funcs, pp->key, &added);
	if (!id || !added)
		return id;
	if (grow((void **)&pp->fn, &pp->cap_fn, id - 1, sizeof(*pp->fn)))
		return 0;
	fn = &pp->fn[id - 1];
	*fn = init;
	fn->id = id;
	fn->name = fn->system_name = str_index(pp, f->symbol);
	fn->filename = str_index(pp, f->file);
	return id;
}

/* The location id of a frame; 0 when out of memory. */
static uint64_t loc_id(struct pprof *pp, const struct sym_frame *f)
{
	Perftools__Profiles__Location init = PERFTOOLS__PROFILES__LOCATION__INIT;
	Perftools__Profiles__Line line_init = PERFTOOLS__PROFILES__LINE__INIT;
	struct ploc *l;
	uint64_t mapping;
	bool added;
	size_t id;

	snprintf(pp->key, sizeof(pp->key), "%" PRIx64 "\x1f%s\x1f%s\x1f%s\x1f%d", f->addr,
		 f->module ? f->module : "", f->symbol ? f->symbol : "", f->file ? f->file : "",
		 f->line);
	id = intern_id(&pp->locs, pp->key, &added);
	if (!id || !added)
		return id;
	if (grow((void **)&pp->loc, &pp->cap_loc, id - 1, sizeof(*pp->loc)))
		return 0;
	l = &pp->loc[id - 1];
	l->msg = init;
	l->line = line_init;
	l->msg.id = id;
	l->msg.address = f->addr;
	mapping = map_id(pp, f->module);
	l->msg.mapping_id = mapping;
	if (mapping) {
		Perftools__Profiles__Mapping *mp = &pp->map[mapping - 1].msg;

		mp->has_functions &= !!f->symbol;
		mp->has_filenames &= !!f->file;
		mp->has_line_numbers &= f->line > 0;
	}
	if (f->symbol) {
		l->line.function_id = func_id(pp, f);
		l->line.line = f->line > 0 ? f->line : 0;
		if (!l->line.function_id)
			return 0;
		l->msg.n_line = 1;	/* line pointers are set once the array stops moving */
	}
	return id;
}

static int add_sample(struct pprof *pp, const struct process *p, const struct site *s)
{
	Perftools__Profiles__Sample init = PERFTOOLS__PROFILES__SAMPLE__INIT;
	Perftools__Profiles__Label label_init = PERFTOOLS__PROFILES__LABEL__INIT;
	struct psample *sm;

	if (grow((void **)&pp->smp, &pp->cap_smp, pp->n_smp, sizeof(*pp->smp)))
		return -ENOMEM;
	sm = &pp->smp[pp->n_smp++];
	sm->msg = init;
	sm->msg.location_id = s->n_frames ? calloc(s->n_frames, sizeof(uint64_t)) : NULL;
	if (s->n_frames && !sm->msg.location_id)
		return -ENOMEM;
	/* Leaf first, as the captured stack is. */
	for (uint32_t f = 0; f < s->n_frames; f++) {
		sm->msg.location_id[f] = loc_id(pp, &s->frames[f]);
		if (!sm->msg.location_id[f])
			return -ENOMEM;
		sm->msg.n_location_id++;
	}
	if (s->kind == LT_KIND_MMAP) {
		sm->values[PT_MMAP_OBJECTS] = s->outstanding_count;
		sm->values[PT_MMAP_SPACE] = s->outstanding_bytes;
	} else {
		sm->values[PT_INUSE_OBJECTS] = s->outstanding_count;
		sm->values[PT_INUSE_SPACE] = s->outstanding_bytes;
	}
	sm->labels[0] = sm->labels[1] = label_init;
	sm->labels[0].key = str_index(pp, "pid");
	sm->labels[0].num = p->pid;
	sm->labels[1].key = str_index(pp, "comm");
	sm->labels[1].str = str_index(pp, p->comm[0] ? p->comm : NULL);
	return pp->oom ? -ENOMEM : 0;
}

static void pprof_free(struct pprof *pp)
{
	for (size_t i = 0; i < pp->n_smp; i++)
		free(pp->smp[i].msg.location_id);
	free(pp->smp);
	free(pp->loc);
	free(pp->map);
	free(pp->fn);
	intern_free(&pp->strs);
	intern_free(&pp->funcs);
	intern_free(&pp->locs);
	intern_free(&pp->maps);
}

static int gzip_buf(const uint8_t *in, size_t n, uint8_t **out, size_t *out_len)
{
	z_stream zs = {};
	uLong bound;
	int ret = -ENOMEM;

	*out = NULL;
	/* 15 + 16: deflate with a gzip header and trailer. */
	if (deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY))
		return -ENOMEM;
	bound = deflateBound(&zs, n) + 64;
	*out = malloc(bound);
	if (!*out)
		goto out;
	zs.next_in = (Bytef *)in;
	zs.avail_in = n;
	zs.next_out = *out;
	zs.avail_out = bound;
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END) {
		ret = -EIO;
		goto out;
	}
	*out_len = zs.total_out;
	ret = 0;
out:
	deflateEnd(&zs);
	if (ret) {
		free(*out);
		*out = NULL;
	}
	return ret;
}

int export__pprof_pack(const struct model *m, const struct export_opts *o, uint8_t **buf,
		       size_t *len)
{
	Perftools__Profiles__Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType types[PT__COUNT], *typep[PT__COUNT];
	Perftools__Profiles__ValueType period = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	bool mmap = m->resources & RES_MMAP;
	size_t n_types = mmap ? PT__COUNT : PT_MMAP_OBJECTS;
	Perftools__Profiles__Function **fnp = NULL;
	Perftools__Profiles__Location **locp = NULL;
	Perftools__Profiles__Mapping **mapp = NULL;
	Perftools__Profiles__Sample **smpp = NULL;
	struct export_opts none = {};
	struct pprof pp = { .o = o ? o : &none };
	int64_t comment[2];
	uint8_t *packed = NULL;
	size_t n;
	int ret = -ENOMEM;

	*buf = NULL;
	*len = 0;
	str_index(&pp, "");
	for (size_t i = 0; i < n_types; i++) {
		types[i] = period;
		types[i].type = str_index(&pp, ptypes[i].type);
		types[i].unit = str_index(&pp, ptypes[i].unit);
		typep[i] = &types[i];
	}
	period.type = str_index(&pp, "space");
	period.unit = str_index(&pp, "bytes");
	comment[0] = str_index(&pp, "leaktop " LEAKTOP_VERSION ": heap bytes and blocks "
			       "allocated while tracing and still live, per call site");
	if (mmap)
		comment[1] = str_index(&pp, "mmap_objects, mmap_space: anonymous private mappings "
				       "and brk growth made while tracing and still mapped, per "
				       "call site");
	for (size_t i = 0; i < m->n_procs; i++) {
		const struct process *p = &m->procs[i];

		if (!model__visible(p))
			continue;
		for (size_t j = 0; j < p->n_sites; j++) {
			const struct site *s = &p->sites[j];

			if ((s->kind != LT_KIND_HEAP && !(s->kind == LT_KIND_MMAP && mmap)) ||
			    (s->outstanding_bytes <= 0 && s->outstanding_count <= 0))
				continue;
			if (add_sample(&pp, p, s))
				goto out;
		}
	}
	if (pp.oom)
		goto out;

	/* Every array is final now: point the messages at their parts. */
	fnp = calloc(pp.funcs.n + 1, sizeof(*fnp));
	locp = calloc(pp.locs.n + 1, sizeof(*locp));
	mapp = calloc(pp.maps.n + 1, sizeof(*mapp));
	smpp = calloc(pp.n_smp + 1, sizeof(*smpp));
	if (!fnp || !locp || !mapp || !smpp)
		goto out;
	for (size_t i = 0; i < pp.funcs.n; i++)
		fnp[i] = &pp.fn[i];
	for (size_t i = 0; i < pp.maps.n; i++)
		mapp[i] = &pp.map[i].msg;
	for (size_t i = 0; i < pp.locs.n; i++) {
		pp.loc[i].linep = &pp.loc[i].line;
		pp.loc[i].msg.line = &pp.loc[i].linep;
		locp[i] = &pp.loc[i].msg;
	}
	for (size_t i = 0; i < pp.n_smp; i++) {
		struct psample *sm = &pp.smp[i];

		sm->msg.n_value = n_types;
		sm->msg.value = sm->values;
		sm->labelp[0] = &sm->labels[0];
		sm->labelp[1] = &sm->labels[1];
		sm->msg.n_label = 2;
		sm->msg.label = sm->labelp;
		smpp[i] = &sm->msg;
	}
	prof.n_sample_type = n_types;
	prof.sample_type = typep;
	prof.n_sample = pp.n_smp;
	prof.sample = smpp;
	prof.n_mapping = pp.maps.n;
	prof.mapping = mapp;
	prof.n_location = pp.locs.n;
	prof.location = locp;
	prof.n_function = pp.funcs.n;
	prof.function = fnp;
	prof.n_string_table = pp.strs.n;
	prof.string_table = pp.strs.keys;
	prof.time_nanos = pp.o->time_s > 0 ? (int64_t)(pp.o->time_s * 1e9) : 0;
	prof.duration_nanos = pp.o->duration_s > 0 ? (int64_t)(pp.o->duration_s * 1e9) : 0;
	prof.period_type = &period;
	prof.period = 1;	/* every allocation is counted, none sampled */
	prof.n_comment = mmap ? 2 : 1;
	prof.comment = comment;
	prof.default_sample_type = types[PT_INUSE_SPACE].type;

	n = perftools__profiles__profile__get_packed_size(&prof);
	packed = malloc(n ? n : 1);
	if (!packed)
		goto out;
	if (perftools__profiles__profile__pack(&prof, packed) != n) {
		ret = -EIO;
		goto out;
	}
	ret = gzip_buf(packed, n, buf, len);
out:
	free(packed);
	free(fnp);
	free(locp);
	free(mapp);
	free(smpp);
	pprof_free(&pp);
	return ret;
}

int export__pprof(FILE *out, const struct model *m, const struct export_opts *o)
{
	uint8_t *buf;
	size_t len;
	int ret = export__pprof_pack(m, o, &buf, &len);

	if (ret)
		return ret;
	if (fwrite(buf, 1, len, out) != len || fflush(out))
		ret = -EIO;
	free(buf);
	return ret;
}

int export__folded_file(const char *path, const struct model *m)
{
	struct atomic_file af;
	int ret = atomic_file__open(&af, path);

	if (ret)
		return ret;
	ret = export__folded(af.f, m);
	return atomic_file__close(&af, !ret) ?: ret;
}

int export__pprof_file(const char *path, const struct model *m, const struct export_opts *o)
{
	struct atomic_file af;
	int ret = atomic_file__open(&af, path);

	if (ret)
		return ret;
	ret = export__pprof(af.f, m, o);
	return atomic_file__close(&af, !ret) ?: ret;
}
