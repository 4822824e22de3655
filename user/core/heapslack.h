/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * heapslack.h - allocator slack: how much of a process's heap memory the allocator holds
 * free rather than the program holds live, and how much of it malloc_trim(0) would give
 * back.  heapslack__glibc_walk is the pure walk of one glibc heap's chunk headers in a copy
 * the reachability scan made (unit-tested on synthetic heaps); finding the heaps and their
 * resident pages is live/heapslack.c's.
 */
#ifndef LEAKTOP_HEAPSLACK_H
#define LEAKTOP_HEAPSLACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HEAPSLACK_PAGE		4096ull
/* glibc's struct malloc_chunk (prev_size, size, fd, bk, fd_nextsize, bk_nextsize). */
#define HEAPSLACK_CHUNK_HDR	48ull
#define HEAPSLACK_MINSIZE	32ull
/* Chunks walked per scan, over all heaps: past it the walk stops and says it is partial. */
#define HEAPSLACK_MAX_CHUNKS	(64ull << 20)

/*
 * Allocator verdict (the process flag allocator_retention): the allocator holds at least
 * this much resident memory free, and at least a quarter of its heaps' resident memory.
 */
#define HEAPSLACK_RETENTION_MIN_BYTES	(8ull << 20)
#define HEAPSLACK_RETENTION_MIN_SHARE	0.25

/* One glibc heap to walk: a copy of [addr, addr + len) and where its chunks run. */
struct heapslack_heap {
	uint64_t addr;
	const uint8_t *data;
	size_t len;
	uint64_t first_chunk;		/* address of the first chunk header */
	uint64_t end;			/* where the top chunk ends (<= addr + len) */
	bool main_arena;		/* malloc_trim gives back its top (sbrk), not a thread heap's */
	/* Residency of its pages (bit i: page addr + i * 4096 resident); NULL: all resident. */
	const uint8_t *resident;
};

/* What the chunk headers of one or more heaps say. */
struct heapslack {
	bool valid;			/* at least one heap was walked */
	bool partial;			/* a heap's headers did not add up, or the chunk limit hit */
	uint32_t heaps;			/* heaps walked to their end */
	uint64_t resident_bytes;	/* of the heaps' mappings (smaps Rss) */
	uint64_t live_bytes;		/* tracked live blocks inside them */
	uint64_t free_chunks;		/* free chunks in bins (fastbin and tcache entries keep
					 * their in-use bit: counted as used) */
	uint64_t free_bytes;		/* resident bytes of free chunks and top chunks */
	uint64_t top_bytes;		/* of which top chunks */
	uint64_t trimmable_bytes;	/* resident pages malloc_trim(0) would give back */
	uint64_t chunks;		/* walked */
};

/*
 * Walk h's chunks from h->first_chunk to h->end, adding to out: free chunks (the next
 * chunk's PREV_INUSE bit clear) and the top chunk (the last one), and the resident pages
 * malloc_trim(0) returns from them: the whole pages of a free chunk past its 48-byte
 * header, and of the main arena's top all whole pages but the last MINSIZE + 1 bytes.
 * Every header is checked against the copy (alignment, size, bounds); a heap whose headers
 * do not lead exactly to h->end adds nothing and marks out partial.  0, or -E2BIG when the
 * chunk limit was reached (out partial).
 */
int heapslack__glibc_walk(const struct heapslack_heap *h, struct heapslack *out);

/* The allocator_retention verdict on a scan's slack. */
bool heapslack__retention(const struct heapslack *s);

#endif
