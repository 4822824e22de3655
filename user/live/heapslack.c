// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * heapslack.c - allocator slack of a scanned process (see heapslack.h).  A glibc heap is the
 * "[heap]" mapping (the main arena, chunks from its start) or an anonymous read-write
 * mapping aligned to glibc's 64 MiB HEAP_MAX_SIZE whose first words are a heap_info that
 * agrees with the mapping (a thread arena's heap; the first of an arena holds its
 * malloc_state before the chunks).  Everything read comes from the scan's copy of the
 * target's memory and is checked before use: the chunk walk (core/heapslack.c) counts a
 * heap only when its headers lead exactly to its end.  Residency comes from
 * /proc/PID/pagemap, read after the process was resumed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "live/heapslack.h"
#include "live/procmaps.h"
#include "live/scanmaps.h"

#define GLIBC_HEAP_MAX		(64ull << 20)	/* HEAP_MAX_SIZE on 64-bit */
#define MSTATE_SIZE		2200ull		/* sizeof(struct malloc_state), glibc >= 2.27 */
#define PAGEMAP_PRESENT		(1ull << 63)
#define PAGEMAP_BATCH		512		/* entries per read */

static const struct scan_region *region_of(const struct scan_region *r, size_t n,
					   const struct proc_map *pm)
{
	for (size_t i = 0; i < n; i++)
		if (r[i].addr == pm->start && r[i].len == pm->end - pm->start)
			return &r[i];
	return NULL;
}

/* Bit per page of [start, end): resident (pagemap's present bit).  NULL when unreadable. */
static uint8_t *read_residency(int fd, uint64_t start, uint64_t end)
{
	uint64_t pages = (end - start) / HEAPSLACK_PAGE, buf[PAGEMAP_BATCH];
	uint8_t *bits;

	if (fd < 0)
		return NULL;
	bits = calloc(pages / 8 + 1, 1);
	if (!bits)
		return NULL;
	for (uint64_t i = 0; i < pages;) {
		size_t want = pages - i < PAGEMAP_BATCH ? pages - i : PAGEMAP_BATCH;
		ssize_t got = pread(fd, buf, want * sizeof(buf[0]),
				    (off_t)((start / HEAPSLACK_PAGE + i) * sizeof(buf[0])));

		if (got <= 0 || got % sizeof(buf[0])) {
			free(bits);
			return NULL;
		}
		for (size_t k = 0; k < (size_t)got / sizeof(buf[0]); k++, i++)
			if (buf[k] & PAGEMAP_PRESENT)
				bits[i / 8] |= 1u << (i % 8);
	}
	return bits;
}

static uint64_t word_in(const struct scan_region *r, uint64_t off)
{
	uint64_t w;

	memcpy(&w, (const uint8_t *)r->data + off, sizeof(w));
	return w;
}

/*
 * Where a thread arena heap's chunks start, or 0 when the mapping is not one: heap_info is
 * { ar_ptr, prev, size, mprotect_size, [pagesize,] pad } (32 or 48 bytes by glibc version),
 * the rw part is mprotect_size long, and the arena's first heap holds the malloc_state.
 */
static uint64_t thread_heap_chunks(const struct scan_region *r, uint64_t *end, uint64_t hdr)
{
	uint64_t ar_ptr, size, mprotect_size, first;

	if (r->addr % GLIBC_HEAP_MAX || r->len < 4096)
		return 0;
	ar_ptr = word_in(r, 0);
	size = word_in(r, 16);
	mprotect_size = word_in(r, 24);
	if (mprotect_size != r->len || size > mprotect_size || size < hdr + HEAPSLACK_MINSIZE)
		return 0;
	*end = r->addr + size;
	if (ar_ptr == r->addr + hdr) {
		/* top = the aligned chunk after the malloc_state (_int_new_arena). */
		first = r->addr + hdr + MSTATE_SIZE;
		if ((first + 16) % 16)
			first += 16 - (first + 16) % 16;
		return first;
	}
	return r->addr + hdr;
}

/* Walk a candidate heap; merge it into out only if its headers add up. */
static bool try_walk(struct heapslack_heap *h, struct heapslack *out)
{
	struct heapslack one = { .chunks = out->chunks };

	if (heapslack__glibc_walk(h, &one))
		out->partial = true;
	out->chunks = one.chunks;
	if (!one.valid || one.partial)
		return false;
	out->valid = true;
	out->heaps += one.heaps;
	out->free_chunks += one.free_chunks;
	out->free_bytes += one.free_bytes;
	out->top_bytes += one.top_bytes;
	out->trimmable_bytes += one.trimmable_bytes;
	return true;
}

int heapslack__measure(int pid, const struct proc_maps *maps, const struct scanmaps *touch,
		       const struct scan_region *regions, size_t n_regions,
		       const struct scan_block *blocks, size_t n_blocks, struct heapslack *out)
{
	char path[64];
	int fd;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	for (size_t i = 0; i < maps->n; i++) {
		const struct proc_map *pm = &maps->v[i];
		const struct scan_region *r;
		const struct scanmaps_touch *t;
		struct heapslack_heap h;
		bool main_heap = pm->path && !strcmp(pm->path, "[heap]"), walked = false;
		uint64_t end = pm->end;

		if ((pm->path && !main_heap) || !pm->readable || !pm->writable || pm->shared)
			continue;
		r = region_of(regions, n_regions, pm);
		if (!r)
			continue;
		h = (struct heapslack_heap){ r->addr, r->data, r->len, r->addr, pm->end, true,
					     NULL };
		if (!main_heap) {
			h.main_arena = false;
			h.first_chunk = thread_heap_chunks(r, &end, 48);
			if (!h.first_chunk)
				h.first_chunk = thread_heap_chunks(r, &end, 32);
			if (!h.first_chunk)
				continue;
			h.end = end;
		}
		h.resident = read_residency(fd, pm->start, pm->end);
		walked = try_walk(&h, out);
		free((void *)h.resident);
		if (!walked) {
			/* The brk heap is glibc's unless its headers say otherwise: say so. */
			if (main_heap)
				out->partial = true;
			continue;
		}
		t = scanmaps__find(touch, pm->start);
		if (t)
			out->resident_bytes += t->rss_bytes;
		for (size_t b = 0; b < n_blocks; b++)
			if (blocks[b].addr >= pm->start && blocks[b].addr < pm->end)
				out->live_bytes += blocks[b].size;
		if (out->chunks >= HEAPSLACK_MAX_CHUNKS)
			break;
	}
	if (fd >= 0)
		close(fd);
	return 0;
}
