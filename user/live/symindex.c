// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * symindex.c - a module's symbol table sorted by address (see symindex.h).
 *
 * What dwfl_module_addrinfo() answers, as libdwfl (0.188) decides it, with adjusted addresses
 * (x86-64: a symbol's address is its value plus the module's bias): among the named symbols
 * that are not sections, files or TLS, at or below the address, first the global ones (from
 * dwfl_module_getsymtab_first_global() on), then, if none of them with a size contains the
 * address, the local ones, unless a global one without a size sits exactly at the address.
 * Within a pass, in table order, a symbol with a size that contains the address replaces
 * the one chosen so far when it starts higher or binds more strongly (global, weak, local),
 * or starts at the same address, binds as strongly and is smaller.
 * When no symbol with a size contains the address, a symbol without a size is taken: the last
 * in search order that starts at the highest end of every symbol seen (no sized symbol may
 * reach past it), if it is in the address's section (an absolute one: at the very address).
 *
 * Each pass's symbols are kept sorted by address with the highest end so far, so the symbols
 * containing an address are found from a binary search, walking down only while some symbol
 * below still reaches past the address.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <elf.h>
#include <gelf.h>

#include "live/symindex.h"
#include "util/vec.h"
#include "util/search.h"

struct ix_entry {
	uint64_t value;			/* adjusted address */
	uint64_t size;
	uint32_t ndx;			/* in the module's symbol table */
	uint8_t rank;			/* binding: global 3, weak 2, local 1, other 0 */
	bool abs;			/* section index >= SHN_LORESERVE */
};

struct ix_table {
	struct ix_entry *e;		/* sorted by value, then ndx */
	uint64_t *max_end;		/* max_end[k]: highest value + size of e[0..k] */
	size_t n, cap;
};

struct sym_index {
	struct ix_table global, local;	/* searched first; then, maybe, the locals */
};

static uint8_t rank_of(const GElf_Sym *s)
{
	switch (GELF_ST_BIND(s->st_info)) {
	case STB_GLOBAL:
		return 3;
	case STB_WEAK:
		return 2;
	case STB_LOCAL:
		return 1;
	default:
		return 0;
	}
}

static int cmp_entry(const void *a, const void *b)
{
	const struct ix_entry *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return x->ndx < y->ndx ? -1 : x->ndx > y->ndx;
}

static int cmp_ndx(const void *a, const void *b)
{
	const struct ix_entry *x = *(const struct ix_entry *const *)a;
	const struct ix_entry *y = *(const struct ix_entry *const *)b;

	return x->ndx < y->ndx ? -1 : x->ndx > y->ndx;
}

static int table_add(struct ix_table *t, const struct ix_entry *e)
{
	if (VEC_RESERVE(t->e, t->cap, t->n + 1, 256))
		return -ENOMEM;
	t->e[t->n++] = *e;
	return 0;
}

static int table_finish(struct ix_table *t)
{
	uint64_t high = 0;

	if (!t->n)
		return 0;
	qsort(t->e, t->n, sizeof(*t->e), cmp_entry);
	t->max_end = malloc(t->n * sizeof(*t->max_end));
	if (!t->max_end)
		return -ENOMEM;
	for (size_t k = 0; k < t->n; k++) {
		uint64_t end = t->e[k].value + t->e[k].size;

		if (end < t->e[k].value)
			end = UINT64_MAX;
		if (end > high)
			high = end;
		t->max_end[k] = high;
	}
	return 0;
}

void sym_index__free(struct sym_index *ix)
{
	if (!ix)
		return;
	free(ix->global.e);
	free(ix->global.max_end);
	free(ix->local.e);
	free(ix->local.max_end);
	free(ix);
}

int sym_index__build(Dwfl_Module *mod, struct sym_index **out)
{
	struct sym_index *ix = calloc(1, sizeof(*ix));
	int n, first_global, err = 0;

	*out = NULL;
	if (!ix)
		return -ENOMEM;
	n = dwfl_module_getsymtab(mod);
	if (n > SYM_INDEX_MAX_SYMBOLS) {
		free(ix);
		return -E2BIG;
	}
	first_global = dwfl_module_getsymtab_first_global(mod);
	if (first_global < 1)
		first_global = 1;
	for (int i = 1; i < n && !err; i++) {
		GElf_Sym sym;
		GElf_Addr value;
		GElf_Word shndx;
		struct ix_entry e;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &value, &shndx, NULL,
							   NULL);
		int type = GELF_ST_TYPE(sym.st_info);

		if (!name || !*name || sym.st_shndx == SHN_UNDEF || type == STT_SECTION ||
		    type == STT_FILE || type == STT_TLS)
			continue;
		e = (struct ix_entry){ .value = value, .size = sym.st_size, .ndx = (uint32_t)i,
				       .rank = rank_of(&sym), .abs = shndx >= SHN_LORESERVE };
		err = table_add(i >= first_global ? &ix->global : &ix->local, &e);
	}
	if (!err)
		err = table_finish(&ix->global);
	if (!err)
		err = table_finish(&ix->local);
	if (err) {
		sym_index__free(ix);
		return err;
	}
	*out = ix;
	return 0;
}

size_t sym_index__bytes(const struct sym_index *ix)
{
	if (!ix)
		return 0;
	return sizeof(*ix) + (ix->global.cap + ix->local.cap) * sizeof(struct ix_entry) +
	       (ix->global.n + ix->local.n) * sizeof(uint64_t);
}

/* Entries of t whose value is <= addr (< addr with `strict`): their count. */
static size_t count_below(const struct ix_table *t, uint64_t addr, bool strict)
{
	size_t lo = 0, hi = t->n;

	lo = SEARCH_FIRST(hi, mid, t->e[mid].value < addr || (!strict && t->e[mid].value == addr));
	return lo;
}

/*
 * One pass's choice among its sized symbols containing addr (`below`: entries at or under
 * addr), in table order: NULL, or the one libdwfl keeps.  -ENOMEM: not decided.
 */
static int pick_sized(const struct ix_table *t, size_t below, uint64_t addr,
		      const struct ix_entry **best)
{
	const struct ix_entry *stack_v[16], **v = stack_v;
	size_t n = 0, cap = 16;
	int err = 0;

	*best = NULL;
	for (size_t k = below; k-- > 0 && t->max_end[k] > addr;) {
		const struct ix_entry *e = &t->e[k];

		if (!e->size || addr - e->value >= e->size)
			continue;
		if (n == cap) {
			const struct ix_entry **w = malloc(2 * cap * sizeof(*w));

			if (!w) {
				err = -ENOMEM;
				goto out;
			}
			memcpy(w, v, n * sizeof(*w));
			if (v != stack_v)
				free(v);
			v = w;
			cap *= 2;
		}
		v[n++] = e;
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_ndx);
	for (size_t i = 0; i < n; i++) {
		const struct ix_entry *b = *best;

		if (!b || b->value < v[i]->value || b->rank < v[i]->rank ||
		    (b->value == v[i]->value && b->rank == v[i]->rank && b->size > v[i]->size))
			*best = v[i];
	}
out:
	if (v != stack_v)
		free(v);
	return err;
}

/* Is a symbol without size at e in addr's section, as libdwfl judges it? */
static bool same_section(Dwfl_Module *mod, uint64_t addr, const struct ix_entry *e)
{
	Dwarf_Addr a = addr, v = e->value, bias;

	if (e->abs)
		return e->value == addr;
	return dwfl_module_address_section(mod, &a, &bias) ==
	       dwfl_module_address_section(mod, &v, &bias);
}

/* The last symbol without size of t at `value` (in table order) in addr's section, or NULL. */
static const struct ix_entry *last_sizeless_at(const struct ix_table *t, Dwfl_Module *mod,
					       uint64_t value, uint64_t addr)
{
	size_t lo = count_below(t, value, true), hi = count_below(t, value, false);

	while (hi-- > lo) {
		if (!t->e[hi].size && same_section(mod, addr, &t->e[hi]))
			return &t->e[hi];
	}
	return NULL;
}

const char *sym_index__lookup(const struct sym_index *ix, Dwfl_Module *mod, GElf_Addr addr,
			      GElf_Off *off)
{
	const struct ix_table *g = &ix->global, *l = &ix->local;
	const struct ix_entry *best = NULL;
	size_t g_below = count_below(g, addr, false), l_below = 0;
	uint64_t min_label = g_below ? g->max_end[g_below - 1] : 0;
	bool locals = false;
	GElf_Sym sym;
	GElf_Addr value;

	if (pick_sized(g, g_below, addr, &best))
		return NULL;
	if (!best && l->n) {
		/* The locals are skipped when a global label sits at the very address. */
		size_t at = count_below(g, addr, true);

		locals = true;
		for (size_t k = at; k < g_below && locals; k++)
			locals = g->e[k].size != 0;
	}
	if (locals) {
		l_below = count_below(l, addr, false);
		if (pick_sized(l, l_below, addr, &best))
			return NULL;
		if (l_below && l->max_end[l_below - 1] > min_label)
			min_label = l->max_end[l_below - 1];
	}
	if (!best && min_label <= addr) {
		if (locals)
			best = last_sizeless_at(l, mod, min_label, addr);
		if (!best)
			best = last_sizeless_at(g, mod, min_label, addr);
	}
	if (!best)
		return NULL;
	*off = addr - best->value;
	return dwfl_module_getsym_info(mod, (int)best->ndx, &sym, &value, NULL, NULL, NULL);
}
