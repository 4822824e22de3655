// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * scan.c - conservative reachability marking over copies of a process's memory.
 *
 * Every aligned 8-byte word is a possible pointer.  Words outside tracked blocks (stacks,
 * data and bss, TLS, blocks leaktop did not see allocated) and the registers are roots.
 * A pointer to a block's first byte reaches it; one into its middle only makes it possibly
 * lost.  What roots and reachable blocks do not reach is lost: the blocks other lost blocks
 * point to are indirectly lost, the rest (one per cycle) definitely lost, each the root of
 * a leak graph listing what it drags along.  Nothing here touches a process.
 *
 * glibc's chunk layout (malloc/malloc.c) is known to the marking: a block is the user part
 * of a chunk that starts 16 bytes before it (prev_size, then the size with flags in its low
 * 3 bits), and an in-use chunk lends its block the first word of the next chunk, so for
 * requests of 16n+1 to 16n+8 bytes the next chunk's header, where the block's chunk ends,
 * lies inside the block.  glibc points at chunk headers (main_arena's top and
 * last_remainder, fastbins, bins, the links of free chunks): a word equal to the header of
 * the chunk after a block is allocator metadata, not an interior pointer into the block,
 * which would otherwise make a lost block "possibly lost".  (A program pointer to that very
 * address inside the block is taken for metadata too: the price of the rule.)  The size word
 * is read from the copy and must match the block, so other allocators' blocks are unaffected.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/scan.h"
#include "util/search.h"

const char *const scan_class_names[SCAN__COUNT] = {
	[SCAN_REACHABLE] = "reachable",
	[SCAN_POSSIBLE] = "possible",
	[SCAN_INDIRECT] = "indirect",
	[SCAN_DEFINITE] = "definite",
};

const char *const scan_root_kind_names[SCAN_ROOT__COUNT] = {
	[SCAN_ROOT_UNNAMED] = "unnamed",
	[SCAN_ROOT_GLOBAL] = "global",
	[SCAN_ROOT_STACK] = "stack",
	[SCAN_ROOT_REGISTER] = "register",
	[SCAN_ROOT_TLS] = "tls",
	[SCAN_ROOT_MEMORY] = "memory",
};

#define UNSET 0xff

/* glibc's malloc_chunk on x86-64 (SIZE_SZ 8, MALLOC_ALIGNMENT 16). */
#define CHUNK_HEADER_BYTES	16	/* prev_size, size: the block starts after them */
#define CHUNK_ALIGN_BYTES	16
#define CHUNK_MIN_BYTES		32
#define CHUNK_LENT_BYTES	8	/* the next chunk's prev_size, usable by an in-use chunk */
#define CHUNK_IS_MMAPPED	0x2ull
#define CHUNK_FLAG_BITS		0x7ull	/* PREV_INUSE, IS_MMAPPED, NON_MAIN_ARENA */

struct sblock {
	uint64_t addr, end;		/* [addr, end) */
	uint64_t next_chunk;		/* the next chunk's header when inside the block, else 0 */
	size_t in;			/* index in the caller's array */
};

struct marker {
	struct sblock *b;		/* sorted by addr */
	size_t n;
	const struct scan_region **mem;	/* sorted by addr */
	size_t n_mem;
	uint8_t *cls;			/* by sorted index */
	uint8_t *interior;
	size_t *stack;
	size_t top;
	/* What first reached each reachable block: a block (sorted index) or, with parent
	 * NO_PARENT, the root word at root_at (an address, or REG_ROOT | register index). */
	size_t *parent;
	uint64_t *root_at;
	size_t *order;			/* reachable blocks in the order they were reached */
	size_t n_order;
	scan_root_key_fn root_key;
	void *key_ctx;
};

#define NO_PARENT	SIZE_MAX
#define REG_ROOT	(1ull << 63)

static int cmp_sblock(const void *a, const void *b)
{
	const struct sblock *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int cmp_region(const void *a, const void *b)
{
	const struct scan_region *x = *(const struct scan_region *const *)a;
	const struct scan_region *y = *(const struct scan_region *const *)b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Sorted index of the block v points into (never at its successor's chunk header), or -1. */
static long find_block(const struct marker *m, uint64_t v)
{
	size_t lo = 0, hi = m->n;

	lo = SEARCH_FIRST(hi, mid, m->b[mid].addr <= v);
	if (!lo)
		return -1;
	lo--;
	if (v == m->b[lo].addr)
		return lo;
	if (v < m->b[lo].end && v != m->b[lo].next_chunk)
		return lo;
	return -1;
}

/* The copied region holding address a, or NULL. */
static const struct scan_region *region_of(const struct marker *m, uint64_t a)
{
	size_t lo = 0, hi = m->n_mem;
	const struct scan_region *r;

	lo = SEARCH_FIRST(hi, mid, m->mem[mid]->addr <= a);
	if (!lo)
		return NULL;
	r = m->mem[lo - 1];
	return a - r->addr < r->len ? r : NULL;
}

/* The copied bytes of block k (clipped to the region holding its start), or NULL. */
static const uint8_t *contents(const struct marker *m, size_t k, size_t *len)
{
	const struct scan_region *r = region_of(m, m->b[k].addr);
	uint64_t end;

	if (!r)
		return NULL;
	end = m->b[k].end < r->addr + r->len ? m->b[k].end : r->addr + r->len;
	*len = end - m->b[k].addr;
	return (const uint8_t *)r->data + (m->b[k].addr - r->addr);
}

static uint64_t word_at(const uint8_t *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof(w));
	return w;
}

uint64_t scan__glibc_next_chunk(uint64_t addr, uint64_t size, uint64_t size_word)
{
	uint64_t chunk_bytes = size_word & ~CHUNK_FLAG_BITS;

	if (addr % CHUNK_ALIGN_BYTES || addr < CHUNK_HEADER_BYTES ||
	    size > UINT64_MAX - CHUNK_HEADER_BYTES || (size_word & CHUNK_IS_MMAPPED) ||
	    chunk_bytes < CHUNK_MIN_BYTES || chunk_bytes % CHUNK_ALIGN_BYTES ||
	    chunk_bytes - CHUNK_HEADER_BYTES + CHUNK_LENT_BYTES < size ||
	    chunk_bytes >= size + CHUNK_HEADER_BYTES)
		return 0;
	return addr - CHUNK_HEADER_BYTES + chunk_bytes;
}

/* scan__glibc_next_chunk of block b, its size word read from the copy (0: not copied). */
static uint64_t next_chunk_inside(const struct marker *m, const struct sblock *b)
{
	uint64_t at = b->addr - sizeof(uint64_t);
	const struct scan_region *r;

	if (b->addr < CHUNK_HEADER_BYTES)
		return 0;
	r = region_of(m, at);
	if (!r || r->len - (at - r->addr) < sizeof(uint64_t))
		return 0;
	return scan__glibc_next_chunk(b->addr, b->end - b->addr,
				      word_at((const uint8_t *)r->data + (at - r->addr)));
}

/* Aligned words of block k: its copied bytes are p[first..len), stepping by 8. */
static const uint8_t *block_words(const struct marker *m, size_t k, size_t *first, size_t *len)
{
	const uint8_t *p = contents(m, k, len);

	*first = (8 - (m->b[k].addr & 7)) & 7;
	return p;
}

/*
 * A root or reachable word holding v: v's block is reachable, or possibly lost.  parent: the
 * block holding the word, or NO_PARENT for a root at root_at.
 */
static void mark_from_reachable(struct marker *m, uint64_t v, size_t parent, uint64_t root_at)
{
	long k = find_block(m, v);

	if (k < 0)
		return;
	if (v != m->b[k].addr) {
		m->interior[k] = 1;
		return;
	}
	if (m->cls[k] == UNSET) {
		m->cls[k] = SCAN_REACHABLE;
		m->stack[m->top++] = k;
		m->parent[k] = parent;
		m->root_at[k] = parent == NO_PARENT && !(root_at & REG_ROOT) && m->root_key ?
				m->root_key(m->key_ctx, root_at) & ~REG_ROOT : root_at;
		m->order[m->n_order++] = k;
	}
}

static void propagate(struct marker *m, enum scan_class cls)
{
	size_t first, len;

	while (m->top) {
		size_t k = m->stack[--m->top];
		const uint8_t *p = block_words(m, k, &first, &len);

		for (size_t off = first; p && off + 8 <= len; off += 8) {
			uint64_t v = word_at(p + off);
			long t;

			if (cls == SCAN_REACHABLE) {
				mark_from_reachable(m, v, k, 0);
				continue;
			}
			t = find_block(m, v);
			if (t >= 0 && m->cls[t] == UNSET) {
				m->cls[t] = cls;
				m->stack[m->top++] = t;
			}
		}
	}
}

static void scan_roots(struct marker *m, const uint64_t *words, size_t n_words)
{
	/*
	 * Memory first, registers last: a block both hold is named by the variable (a global,
	 * a stack slot) rather than by a register that happens to hold a copy.
	 */
	for (size_t r = 0; r < m->n_mem; r++) {
		const struct scan_region *reg = m->mem[r];
		uint64_t a = (reg->addr + 7) & ~7ull, end = reg->addr + reg->len;
		size_t k = 0, hi = m->n;

		/* First block ending after a. */
		k = SEARCH_FIRST(hi, mid, m->b[mid].end <= a);
		while (a + 8 <= end) {
			while (k < m->n && m->b[k].end <= a)
				k++;
			/* The contents of tracked blocks are not roots. */
			if (k < m->n && m->b[k].addr <= a) {
				a = (m->b[k].end + 7) & ~7ull;
				continue;
			}
			mark_from_reachable(m, word_at((const uint8_t *)reg->data + (a - reg->addr)),
					    NO_PARENT, a);
			a += 8;
		}
		propagate(m, SCAN_REACHABLE);
	}
	for (size_t i = 0; i < n_words; i++)
		mark_from_reachable(m, words[i], NO_PARENT, REG_ROOT | i);
	propagate(m, SCAN_REACHABLE);
}

static size_t leader_of(size_t *leader, size_t k)
{
	size_t r = k;

	while (leader[r] != r)
		r = leader[r];
	while (leader[k] != r) {
		size_t next = leader[k];

		leader[k] = r;
		k = next;
	}
	return r;
}

/*
 * Lost blocks: walking from each one not yet reached (by address), everything it reaches
 * joins its group as indirect; a former group root it reaches joins too, with its group.
 */
static void group_lost(struct marker *m, size_t *leader)
{
	size_t first, len;

	for (size_t k = 0; k < m->n; k++) {
		if (m->cls[k] != UNSET)
			continue;
		m->cls[k] = SCAN_DEFINITE;
		leader[k] = k;
		m->stack[m->top++] = k;
		while (m->top) {
			size_t x = m->stack[--m->top];

			const uint8_t *p = block_words(m, x, &first, &len);

			for (size_t off = first; p && off + 8 <= len; off += 8) {
				long t = find_block(m, word_at(p + off));

				if (t < 0 || (size_t)t == k)
					continue;
				if (m->cls[t] == UNSET) {
					m->cls[t] = SCAN_INDIRECT;
					leader[t] = k;
					m->stack[m->top++] = t;
				} else if (m->cls[t] == SCAN_DEFINITE) {
					m->cls[t] = SCAN_INDIRECT;
					leader[t] = k;
				}
			}
		}
	}
}

static int cmp_site(const void *a, const void *b)
{
	const struct scan_site *x = a, *y = b;

	return x->stack_hash < y->stack_hash ? -1 : x->stack_hash > y->stack_hash;
}

static int cmp_leak(const void *a, const void *b)
{
	const struct scan_leak *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->root.addr < y->root.addr ? -1 : x->root.addr > y->root.addr;
}

/* Keep seq among the lowest SCAN_SEQS_MAX definitely lost numbers of site s, ascending. */
static void note_seq(struct scan_site *s, uint64_t seq)
{
	uint32_t i, n = s->n_definite_seqs;

	if (!seq || (n == SCAN_SEQS_MAX && seq >= s->definite_seqs[n - 1]))
		return;
	for (i = n; i > 0 && s->definite_seqs[i - 1] > seq; i--)
		if (i < SCAN_SEQS_MAX)
			s->definite_seqs[i] = s->definite_seqs[i - 1];
	s->definite_seqs[i] = seq;
	if (n < SCAN_SEQS_MAX)
		s->n_definite_seqs++;
}

static int summarize(struct marker *m, const struct scan_block *blocks, size_t *leader,
		     struct scan_result *out)
{
	size_t *leak_of = malloc((m->n + 1) * sizeof(*leak_of)), n_leaks = 0, first, len;
	const uint8_t *p;
	int err = 0;

	out->sites = calloc(m->n + 1, sizeof(*out->sites));
	if (!leak_of || !out->sites) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < m->n; k++) {
		const struct scan_block *b = &blocks[m->b[k].in];
		struct scan_site key = { .stack_hash = b->stack_hash }, *s;

		out->cls[m->b[k].in] = m->cls[k];
		out->count[m->cls[k]]++;
		out->bytes[m->cls[k]] += b->size;
		s = bsearch(&key, out->sites, out->n_sites, sizeof(key), cmp_site);
		if (!s) {
			out->sites[out->n_sites++] = key;
			qsort(out->sites, out->n_sites, sizeof(key), cmp_site);
			s = bsearch(&key, out->sites, out->n_sites, sizeof(key), cmp_site);
		}
		s->count[m->cls[k]]++;
		s->bytes[m->cls[k]] += b->size;
		if (m->cls[k] == SCAN_DEFINITE) {
			note_seq(s, b->seq);
			n_leaks++;
		}
	}
	out->leaks = calloc(n_leaks + 1, sizeof(*out->leaks));
	if (!out->leaks) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < m->n; k++) {
		if (m->cls[k] != SCAN_DEFINITE)
			continue;
		leak_of[k] = out->n_leaks;
		out->leaks[out->n_leaks++].root = blocks[m->b[k].in];
	}
	for (size_t k = 0; k < m->n; k++) {
		struct scan_leak *l;
		size_t r;

		if (m->cls[k] != SCAN_DEFINITE && m->cls[k] != SCAN_INDIRECT)
			continue;
		r = leader_of(leader, k);
		l = &out->leaks[leak_of[r]];
		l->blocks++;
		l->bytes += blocks[m->b[k].in].size;
		p = block_words(m, k, &first, &len);
		for (size_t off = first; p && off + 8 <= len; off += 8) {
			long t = find_block(m, word_at(p + off));

			if (t < 0 || (m->cls[t] != SCAN_DEFINITE && m->cls[t] != SCAN_INDIRECT) ||
			    leader_of(leader, t) != r)
				continue;
			if (l->n_edges < SCAN_MAX_EDGES)
				l->edges[l->n_edges++] = (struct scan_edge){
					.from = m->b[k].addr, .offset = off, .to = m->b[t].addr };
			l->total_edges++;
		}
	}
	qsort(out->leaks, out->n_leaks, sizeof(*out->leaks), cmp_leak);
out:
	free(leak_of);
	return err;
}

/* ---------------------------------------------------------------- retention paths */

/* A path: a root (base NO_NODE, key its root_at) or a path extended by one site (key). */
#define NO_NODE UINT32_MAX

struct pnode {
	uint32_t base;
	uint8_t depth;			/* sites after the root */
	bool cut;			/* a longer chain was cut here */
	uint64_t key;
};

struct paths {
	struct pnode *v;
	uint32_t n;
	uint32_t *slot;			/* open addressing over (base, key): node index + 1 */
	size_t cap;			/* a power of two */
};

static size_t path_hash(uint32_t base, uint64_t key)
{
	uint64_t h = (key ^ ((uint64_t)base << 32 | base)) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h ^ (h >> 29));
}

/* The node (base, key), added if new (the table has room for every block and root). */
static uint32_t intern(struct paths *ps, uint32_t base, uint64_t key)
{
	size_t i = path_hash(base, key) & (ps->cap - 1);

	for (; ps->slot[i]; i = (i + 1) & (ps->cap - 1)) {
		const struct pnode *p = &ps->v[ps->slot[i] - 1];

		if (p->base == base && p->key == key)
			return ps->slot[i] - 1;
	}
	ps->v[ps->n] = (struct pnode){ base, base == NO_NODE ? 0 : ps->v[base].depth + 1, false,
				       key };
	ps->slot[i] = ++ps->n;
	return ps->n - 1;
}

struct held {
	uint64_t site;
	uint32_t path;
	uint64_t bytes;
};

static int cmp_held(const void *a, const void *b)
{
	const struct held *x = a, *y = b;

	if (x->site != y->site)
		return x->site < y->site ? -1 : 1;
	return x->path < y->path ? -1 : x->path > y->path;
}

/* Keep retainer r among site s's SCAN_RETAINERS_MAX largest, by bytes. */
static void keep_retainer(struct scan_site *s, const struct scan_retainer *r)
{
	uint32_t i;

	if (s->n_retainers == SCAN_RETAINERS_MAX &&
	    s->retainers[SCAN_RETAINERS_MAX - 1].bytes >= r->bytes)
		return;
	i = s->n_retainers < SCAN_RETAINERS_MAX ? s->n_retainers++ : SCAN_RETAINERS_MAX - 1;
	for (; i > 0 && s->retainers[i - 1].bytes < r->bytes; i--)
		s->retainers[i] = s->retainers[i - 1];
	s->retainers[i] = *r;
}

/* The retainer of path id: its root and its chain of sites. */
static void path_retainer(const struct paths *ps, uint32_t id, struct scan_retainer *r)
{
	uint32_t at = id;

	r->n_chain = ps->v[id].depth < SCAN_CHAIN_MAX ? ps->v[id].depth : SCAN_CHAIN_MAX;
	r->cut = ps->v[id].cut;
	for (uint32_t i = r->n_chain; ps->v[at].base != NO_NODE; at = ps->v[at].base)
		if (i)
			r->chain[--i] = ps->v[at].key;
	if (ps->v[at].key & REG_ROOT) {
		r->root_reg = (uint32_t)(ps->v[at].key & ~REG_ROOT);
		r->root_addr = 0;
	} else {
		r->root_reg = SCAN_ROOT_REG_NONE;
		r->root_addr = ps->v[at].key;
	}
}

/* Per site, the paths holding its reachable blocks (m->order: parents before children). */
static int retention(const struct marker *m, const struct scan_block *blocks,
		     struct scan_result *out)
{
	struct paths ps = {};
	uint32_t *path_of = malloc((m->n + 1) * sizeof(*path_of));
	struct held *h = malloc((m->n_order + 1) * sizeof(*h));
	int err = 0;

	ps.cap = 16;
	while (ps.cap < 2 * (m->n_order + 1))
		ps.cap *= 2;
	ps.v = malloc((m->n_order + 1) * sizeof(*ps.v));
	ps.slot = calloc(ps.cap, sizeof(*ps.slot));
	if (!path_of || !h || !ps.v || !ps.slot) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < m->n_order; i++) {
		size_t k = m->order[i], p = m->parent[k];
		uint32_t base;
		uint64_t site;

		if (p == NO_PARENT) {
			path_of[k] = intern(&ps, NO_NODE, m->root_at[k]);
		} else {
			base = path_of[p];
			site = blocks[m->b[p].in].stack_hash;
			if (ps.v[base].base != NO_NODE && ps.v[base].key == site) {
				path_of[k] = base;	/* a run of one site */
			} else if (ps.v[base].depth >= SCAN_CHAIN_MAX) {
				ps.v[base].cut = true;
				path_of[k] = base;
			} else {
				path_of[k] = intern(&ps, base, site);
			}
		}
		/* A run of the block's own site ends its path: the path is what holds the run. */
		base = path_of[k];
		site = blocks[m->b[k].in].stack_hash;
		if (ps.v[base].base != NO_NODE && ps.v[base].key == site)
			base = ps.v[base].base;
		h[i] = (struct held){ site, base, blocks[m->b[k].in].size };
	}
	qsort(h, m->n_order, sizeof(*h), cmp_held);
	for (size_t i = 0; i < m->n_order;) {
		struct scan_site key = { .stack_hash = h[i].site }, *s;
		struct scan_retainer r = {};
		size_t j = i;

		s = bsearch(&key, out->sites, out->n_sites, sizeof(key), cmp_site);
		for (; j < m->n_order && h[j].site == h[i].site && h[j].path == h[i].path; j++) {
			r.blocks++;
			r.bytes += h[j].bytes;
		}
		if (s) {
			path_retainer(&ps, h[i].path, &r);
			keep_retainer(s, &r);
			s->retainer_paths++;
		}
		i = j;
	}
out:
	free(path_of);
	free(h);
	free(ps.v);
	free(ps.slot);
	return err;
}

int scan__classify(const struct scan_block *blocks, size_t n, const struct scan_region *mem,
		   size_t n_mem, const uint64_t *root_words, size_t n_root_words,
		   struct scan_result *out)
{
	return scan__classify_keyed(blocks, n, mem, n_mem, root_words, n_root_words, NULL, NULL,
				    out);
}

int scan__classify_keyed(const struct scan_block *blocks, size_t n,
			 const struct scan_region *mem, size_t n_mem, const uint64_t *root_words,
			 size_t n_root_words, scan_root_key_fn root_key, void *key_ctx,
			 struct scan_result *out)
{
	struct marker m = { .n = n, .n_mem = n_mem, .root_key = root_key, .key_ctx = key_ctx };
	size_t *leader = NULL;
	int err = 0;

	memset(out, 0, sizeof(*out));
	m.b = malloc((n + 1) * sizeof(*m.b));
	m.mem = malloc((n_mem + 1) * sizeof(*m.mem));
	m.cls = malloc(n + 1);
	m.interior = calloc(n + 1, 1);
	m.stack = malloc((n + 1) * sizeof(*m.stack));
	m.parent = malloc((n + 1) * sizeof(*m.parent));
	m.root_at = malloc((n + 1) * sizeof(*m.root_at));
	m.order = malloc((n + 1) * sizeof(*m.order));
	leader = malloc((n + 1) * sizeof(*leader));
	out->cls = calloc(n + 1, 1);
	out->n_blocks = n;
	if (!m.b || !m.mem || !m.cls || !m.interior || !m.stack || !leader || !out->cls ||
	    !m.parent || !m.root_at || !m.order) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		m.b[i] = (struct sblock){ .addr = blocks[i].addr,
					  .end = blocks[i].addr + blocks[i].size, .in = i };
		leader[i] = i;
	}
	qsort(m.b, n, sizeof(*m.b), cmp_sblock);
	for (size_t i = 0; i < n_mem; i++)
		m.mem[i] = &mem[i];
	qsort(m.mem, n_mem, sizeof(*m.mem), cmp_region);
	for (size_t i = 0; i < n; i++)
		m.b[i].next_chunk = next_chunk_inside(&m, &m.b[i]);
	memset(m.cls, UNSET, n + 1);

	scan_roots(&m, root_words, n_root_words);
	/* Reached only through interior pointers: possibly lost, with all they reach. */
	for (size_t k = 0; k < n; k++) {
		if (m.interior[k] && m.cls[k] == UNSET) {
			m.cls[k] = SCAN_POSSIBLE;
			m.stack[m.top++] = k;
		}
	}
	propagate(&m, SCAN_POSSIBLE);
	group_lost(&m, leader);
	err = summarize(&m, blocks, leader, out);
	if (!err)
		err = retention(&m, blocks, out);
out:
	free(m.parent);
	free(m.root_at);
	free(m.order);
	free(m.b);
	free(m.mem);
	free(m.cls);
	free(m.interior);
	free(m.stack);
	free(leader);
	if (err)
		scan_result__free(out);
	return err;
}

void scan_result__free(struct scan_result *r)
{
	free(r->cls);
	free(r->sites);
	free(r->leaks);
	memset(r, 0, sizeof(*r));
}
