// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * heapslack.c - the walk of a glibc heap's chunk headers in a scan's copy (see heapslack.h):
 * which chunks are free, what the top chunk holds, and what malloc_trim(0) gives back
 * (glibc's mtrim: the whole pages inside each binned free chunk past its header; systrim:
 * the main arena's top but its last page).  The copy is the traced process's memory, so
 * every size is checked before it is followed.
 */
#include <errno.h>
#include <string.h>

#include "core/heapslack.h"

#define PREV_INUSE	1ull
#define SIZE_BITS	7ull

static uint64_t word_at(const struct heapslack_heap *h, uint64_t addr)
{
	uint64_t w;

	memcpy(&w, h->data + (addr - h->addr), sizeof(w));
	return w;
}

static bool page_resident(const struct heapslack_heap *h, uint64_t page_addr)
{
	uint64_t i = (page_addr - (h->addr & ~(HEAPSLACK_PAGE - 1))) / HEAPSLACK_PAGE;

	return !h->resident || (h->resident[i / 8] >> (i % 8)) & 1;
}

/* Bytes of [lo, hi) on resident pages. */
static uint64_t resident_bytes(const struct heapslack_heap *h, uint64_t lo, uint64_t hi)
{
	uint64_t sum = 0;

	if (!h->resident)
		return hi - lo;
	while (lo < hi) {
		uint64_t page = lo & ~(HEAPSLACK_PAGE - 1);
		uint64_t stop = page + HEAPSLACK_PAGE < hi ? page + HEAPSLACK_PAGE : hi;

		if (page_resident(h, page))
			sum += stop - lo;
		lo = stop;
	}
	return sum;
}

/* mtrim's pages of a free chunk at c of size bytes: whole pages past its header. */
static uint64_t chunk_trimmable(const struct heapslack_heap *h, uint64_t c, uint64_t size)
{
	uint64_t lo, rem;

	if (size <= HEAPSLACK_PAGE - 1 + HEAPSLACK_CHUNK_HDR)
		return 0;
	lo = (c + HEAPSLACK_CHUNK_HDR + HEAPSLACK_PAGE - 1) & ~(HEAPSLACK_PAGE - 1);
	rem = size - (lo - c);
	if (rem < HEAPSLACK_PAGE)
		return 0;
	return resident_bytes(h, lo, lo + (rem & ~(HEAPSLACK_PAGE - 1)));
}

/* systrim(0): the top's whole pages but MINSIZE + 1 bytes, released from its end. */
static uint64_t top_trimmable(const struct heapslack_heap *h, uint64_t end, uint64_t size)
{
	uint64_t extra;

	if (size <= HEAPSLACK_MINSIZE + 1)
		return 0;
	extra = (size - HEAPSLACK_MINSIZE - 1) & ~(HEAPSLACK_PAGE - 1);
	return resident_bytes(h, end - extra, end);
}

int heapslack__glibc_walk(const struct heapslack_heap *h, struct heapslack *out)
{
	struct heapslack add = {};
	uint64_t copy_end = h->addr + h->len, c = h->first_chunk;

	if (h->end > copy_end || c < h->addr || c % 16 || c >= h->end)
		goto bad;
	for (;;) {
		uint64_t size, next;

		if (out->chunks + add.chunks >= HEAPSLACK_MAX_CHUNKS) {
			out->partial = true;
			return -E2BIG;
		}
		add.chunks++;
		if (c + 16 > copy_end)
			goto bad;
		size = word_at(h, c + 8) & ~SIZE_BITS;
		if (size < HEAPSLACK_MINSIZE || size % 16 || size > h->end - c)
			goto bad;
		next = c + size;
		if (next + HEAPSLACK_MINSIZE > h->end) {
			/* The top chunk: free by definition, the last before the heap's end. */
			add.top_bytes = resident_bytes(h, c, next);
			add.free_bytes += add.top_bytes;
			if (h->main_arena)
				add.trimmable_bytes += top_trimmable(h, next, size);
			break;
		}
		if (next + 16 > copy_end)
			goto bad;
		if (!(word_at(h, next + 8) & PREV_INUSE)) {
			add.free_chunks++;
			add.free_bytes += resident_bytes(h, c, next);
			add.trimmable_bytes += chunk_trimmable(h, c, size);
		}
		c = next;
	}
	out->valid = true;
	out->heaps++;
	out->chunks += add.chunks;
	out->free_chunks += add.free_chunks;
	out->free_bytes += add.free_bytes;
	out->top_bytes += add.top_bytes;
	out->trimmable_bytes += add.trimmable_bytes;
	return 0;
bad:
	/* Not a glibc heap as far as its headers go: nothing of it counts. */
	out->partial = true;
	out->chunks += add.chunks;
	return 0;
}

bool heapslack__retention(const struct heapslack *s)
{
	return s->valid && s->free_bytes >= HEAPSLACK_RETENTION_MIN_BYTES &&
	       (double)s->free_bytes >= HEAPSLACK_RETENTION_MIN_SHARE * (double)s->resident_bytes;
}
