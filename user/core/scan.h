/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * scan.h - the reachability scan: which of a process's tracked live blocks can still be
 * reached through pointers, and which are lost.  scan__classify is the pure marking over
 * memory already copied (unit-tested on synthetic memory).  Stopping a live process and
 * copying its memory (scan__process) is live/scanner.h's.
 */
#ifndef LEAKTOP_SCAN_H
#define LEAKTOP_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/heapslack.h"

/* One tracked live block, as the `allocs` map holds it. */
struct scan_block {
	uint64_t addr;
	uint64_t size;
	uint64_t stack_hash;		/* the allocation site */
	uint64_t seq;			/* its allocation number at its site (1-based); 0: unknown */
};

enum scan_class {
	SCAN_REACHABLE,			/* a pointer to its start from a root or reachable block */
	SCAN_POSSIBLE,			/* reached only through interior pointers */
	SCAN_INDIRECT,			/* reached only from lost blocks */
	SCAN_DEFINITE,			/* no pointer at all: the root of a leak */
	SCAN__COUNT,
};

extern const char *const scan_class_names[SCAN__COUNT];

/* A copy of target memory: len bytes that were at addr. */
struct scan_region {
	uint64_t addr;
	const void *data;
	size_t len;
};

/*
 * Retention paths: how a site's reachable blocks are held.  The marking remembers, for each
 * reachable block, what first reached it (a block, or a root: a word of memory outside every
 * block, or a register word); a path is the root and the chain of sites from it down to the
 * block's site (runs of one site, a linked list, are one step).  Per site the
 * SCAN_RETAINERS_MAX paths that hold the most of its reachable bytes are kept.
 */
#define SCAN_RETAINERS_MAX	3
#define SCAN_CHAIN_MAX		6	/* sites kept between the root and the block's site */
#define SCAN_ROOT_NAME_LEN	160
#define SCAN_ROOT_REG_NONE	UINT32_MAX

enum scan_root_kind {
	SCAN_ROOT_UNNAMED,		/* not named (no naming ran, or nothing known of it) */
	SCAN_ROOT_GLOBAL,		/* a module's data or bss: a symbol, or the section */
	SCAN_ROOT_STACK,		/* a thread's stack frame */
	SCAN_ROOT_REGISTER,		/* a thread's register */
	SCAN_ROOT_TLS,			/* a thread's TLS */
	SCAN_ROOT_MEMORY,		/* other memory: untracked heap, anonymous mappings */
	SCAN_ROOT__COUNT,
};

extern const char *const scan_root_kind_names[SCAN_ROOT__COUNT];

struct scan_retainer {
	uint64_t root_addr;		/* the root word's address (memory roots) */
	uint32_t root_reg;		/* index in the root words (registers), or _NONE */
	uint8_t root_kind;		/* enum scan_root_kind, set by naming */
	uint8_t n_chain;
	bool cut;			/* the chain was longer than SCAN_CHAIN_MAX sites */
	uint64_t chain[SCAN_CHAIN_MAX];	/* sites (stack_hash), from the root's side */
	uint64_t blocks, bytes;		/* the site's reachable blocks held this way */
	char root_name[SCAN_ROOT_NAME_LEN];	/* "g_sessions (server, .bss)"; "": unnamed */
	uint32_t root_tid;		/* stack, register, TLS: the thread (0: none) */
};

#define SCAN_SEQS_MAX 32		/* definitely lost blocks' numbers kept per site */

/*
 * Per site (stack_hash): blocks and bytes of each class, and the allocation numbers of its
 * definitely lost blocks: the lowest SCAN_SEQS_MAX, ascending (count[SCAN_DEFINITE] says
 * how many there are in all; blocks of unknown number are left out).
 */
struct scan_site {
	uint64_t stack_hash;
	uint64_t count[SCAN__COUNT];
	uint64_t bytes[SCAN__COUNT];
	uint64_t definite_seqs[SCAN_SEQS_MAX];
	uint32_t n_definite_seqs;
	struct scan_retainer retainers[SCAN_RETAINERS_MAX];	/* by bytes, largest first */
	uint32_t n_retainers;
	uint64_t retainer_paths;	/* distinct paths found for its reachable blocks */
};

/* Block at from + offset points to block at to. */
struct scan_edge {
	uint64_t from;
	uint64_t offset;
	uint64_t to;
};

#define SCAN_MAX_EDGES 64		/* edges kept per leak root */

/* One definitely lost block and what it drags along (itself included). */
struct scan_leak {
	struct scan_block root;
	uint64_t blocks;
	uint64_t bytes;
	struct scan_edge edges[SCAN_MAX_EDGES];
	uint32_t n_edges;		/* kept */
	uint64_t total_edges;		/* found */
};

/* A scan its time limit cut short while copying: nothing is classified from a partial copy. */
struct scan_partial {
	bool cut;
	double stop_ms;			/* the process was stopped this long */
	uint64_t bytes_read;		/* copied when the limit was reached */
	uint64_t bytes_total;		/* to copy */
};

struct scan_result {
	uint8_t *cls;			/* enum scan_class of each input block, in input order */
	size_t n_blocks;
	struct scan_site *sites;	/* sorted by stack_hash */
	size_t n_sites;
	struct scan_leak *leaks;	/* by bytes dragged, largest first */
	size_t n_leaks;
	uint64_t count[SCAN__COUNT];	/* totals */
	uint64_t bytes[SCAN__COUNT];
	double stop_ms;			/* how long the process was stopped (scan__process) */
	uint64_t bytes_read;		/* memory copied (scan__process) */
	uint32_t threads;		/* threads stopped (scan__process) */
	struct scan_partial partial;	/* set (cut) when it failed with -ETIME while copying */
	struct heapslack slack;		/* the allocator's free memory (scan__process) */
};

/*
 * Classify blocks[0..n) given copies of the target's memory (mem, any order, not
 * overlapping) and extra root words (registers).  Words of mem outside every block are
 * roots; words inside a block are its contents.  Only 8-byte aligned words are pointers,
 * and a word equal to the header of the glibc chunk after a block, when that header lies
 * inside the block (scan.c), is allocator metadata, not a pointer into it.
 * 0 or -errno; free out with scan_result__free.
 */
int scan__classify(const struct scan_block *blocks, size_t n, const struct scan_region *mem,
		   size_t n_mem, const uint64_t *root_words, size_t n_root_words,
		   struct scan_result *out);

/*
 * Retention paths aggregate roots by key: the root word's address, or what root_key makes of
 * it (the live scan gives every word of one untracked memory region one key, so a table of
 * pointers nobody tracked is one root, not one per slot).
 */
typedef uint64_t (*scan_root_key_fn)(void *ctx, uint64_t root_addr);

/* scan__classify with root words' addresses mapped to keys by root_key (NULL: as they are). */
int scan__classify_keyed(const struct scan_block *blocks, size_t n,
			 const struct scan_region *mem, size_t n_mem, const uint64_t *root_words,
			 size_t n_root_words, scan_root_key_fn root_key, void *key_ctx,
			 struct scan_result *out);

/*
 * glibc's own pointer into a live block: the header of the chunk after the block at addr
 * (size bytes asked for) when glibc's layout puts that header inside the block, else 0.
 * size_word is the word 8 bytes before the block (its chunk's size and flags): it must be
 * that of a heap chunk just big enough for the block, the only chunk size whose successor
 * starts inside the block (requests of 16n+1 to 16n+8 bytes).  A word holding that address
 * is glibc's (main_arena's or a thread arena's top and last_remainder, a bin, a free
 * chunk's link), not a reference the program holds: the scan and lastref both skip it.
 */
uint64_t scan__glibc_next_chunk(uint64_t addr, uint64_t size, uint64_t size_word);

/*
 * Longest a process stays stopped (the default and the most --scan-max-stop allows); beyond
 * it the scan gives up (-ETIME) and resumes it.
 */
#define SCAN_MAX_STOP_MS 2000
/* Most writable memory copied; a bigger process is refused (-E2BIG) before it is stopped. */
#define SCAN_MAX_BYTES (4ull << 30)

void scan_result__free(struct scan_result *r);

#endif
