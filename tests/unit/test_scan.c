// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_scan.c - unit tests of the reachability marking in user/core/scan.c on synthetic
 * memory: a fake heap region holding the tracked blocks and a fake data region of roots,
 * with pointers written where each case needs them.  Then scan__process on real processes:
 * scan_target (a plain build of tests/unit/scan_target.c) and stuck or missing ones.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "check.h"
#include "core/scan.h"
#include "live/scanner.h"
#include "live/ptrace_stop.h"
#include "live/scanner.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <stdbool.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define HEAP	0x100000ull
#define DATA	0x1000ull
#define HEAP_LEN 65536
#define DATA_LEN 256

struct fake {
	uint8_t heap[HEAP_LEN];
	uint8_t data[DATA_LEN];
	struct scan_block blocks[256];
	size_t n;
	uint64_t regs[4];
	size_t n_regs;
};

static struct fake F;

static void fake_reset(void)
{
	memset(&F, 0, sizeof(F));
}

/* A block of size bytes at heap offset off, allocated at site. */
static uint64_t blk(size_t off, uint64_t size, uint64_t site)
{
	F.blocks[F.n] = (struct scan_block){ HEAP + off, size, site, F.n + 1 };
	F.n++;
	return HEAP + off;
}

static void put(uint64_t at, uint64_t v)
{
	if (at >= HEAP && at < HEAP + HEAP_LEN)
		memcpy(F.heap + (at - HEAP), &v, 8);
	else
		memcpy(F.data + (at - DATA), &v, 8);
}

static int classify(struct scan_result *r)
{
	struct scan_region mem[2] = {
		{ DATA, F.data, DATA_LEN },
		{ HEAP, F.heap, HEAP_LEN },
	};

	return scan__classify(F.blocks, F.n, mem, 2, F.regs, F.n_regs, r);
}

static void test_block_pointed_to_from_data_is_reachable(void)
{
	struct scan_result r;
	uint64_t a;

	fake_reset();
	a = blk(0, 32, 1);
	put(DATA + 8, a);
	CHECK_EQ_INT(classify(&r), 0);
	CHECK_EQ_INT(r.cls[0], SCAN_REACHABLE);
	CHECK_EQ_INT(r.count[SCAN_REACHABLE], 1);
	CHECK_EQ_INT(r.n_leaks, 0);
	scan_result__free(&r);
}

static const struct scan_site *site_of(const struct scan_result *r, uint64_t hash)
{
	for (size_t i = 0; i < r->n_sites; i++)
		if (r->sites[i].stack_hash == hash)
			return &r->sites[i];
	return NULL;
}

/*
 * A global (DATA + 16) points to a table (site 1) whose bucket array (site 2) holds 4
 * entries (site 3), each the head of a chain of 3 entries: the entries' path is the global,
 * then the table's site, then the buckets' site; the chain within site 3 is one step.
 */
static void test_retention_path_names_the_root_word_and_the_sites_between(void)
{
	const struct scan_site *e, *b;
	struct scan_result r;
	uint64_t table, buckets;

	fake_reset();
	table = blk(0, 32, 1);
	buckets = blk(64, 32, 2);
	put(DATA + 16, table);
	put(table, buckets);
	for (int i = 0; i < 4; i++) {
		uint64_t prev = 0;

		for (int j = 2; j >= 0; j--) {
			uint64_t en = blk(256 + (size_t)(i * 3 + j) * 64, 48, 3);

			put(en, prev);
			prev = en;
		}
		put(buckets + 8 * (uint64_t)i, prev);
	}
	CHECK_EQ_INT(classify(&r), 0);
	e = site_of(&r, 3);
	CHECK(e != NULL);
	CHECK_EQ_INT(e->n_retainers, 1);
	CHECK_EQ_INT(e->retainer_paths, 1);
	CHECK_EQ_INT(e->retainers[0].blocks, 12);
	CHECK_EQ_INT(e->retainers[0].bytes, 12 * 48);
	CHECK_EQ_INT(e->retainers[0].root_addr, DATA + 16);
	CHECK_EQ_INT(e->retainers[0].root_reg, SCAN_ROOT_REG_NONE);
	CHECK_EQ_INT(e->retainers[0].n_chain, 2);
	CHECK_EQ_INT(e->retainers[0].chain[0], 1);
	CHECK_EQ_INT(e->retainers[0].chain[1], 2);
	CHECK(!e->retainers[0].cut);
	b = site_of(&r, 2);
	CHECK_EQ_INT(b->n_retainers, 1);
	CHECK_EQ_INT(b->retainers[0].n_chain, 1);
	CHECK_EQ_INT(b->retainers[0].chain[0], 1);
	scan_result__free(&r);
}

/* Two roots hold one site: a register 3 blocks, a global 1; the larger path comes first. */
static void test_retention_paths_of_a_site_come_largest_first_with_registers_by_index(void)
{
	const struct scan_site *s;
	struct scan_result r;

	fake_reset();
	F.regs[0] = 0;
	F.regs[1] = blk(0, 32, 5);
	F.n_regs = 2;
	put(F.regs[1], blk(64, 32, 5));
	put(HEAP + 64, blk(128, 32, 5));
	put(DATA + 8, blk(256, 32, 5));
	CHECK_EQ_INT(classify(&r), 0);
	s = site_of(&r, 5);
	CHECK_EQ_INT(s->n_retainers, 2);
	CHECK_EQ_INT(s->retainers[0].root_reg, 1);
	CHECK_EQ_INT(s->retainers[0].blocks, 3);
	CHECK_EQ_INT(s->retainers[0].n_chain, 0);
	CHECK_EQ_INT(s->retainers[1].root_addr, DATA + 8);
	CHECK_EQ_INT(s->retainers[1].blocks, 1);
	scan_result__free(&r);
}

/* A chain of sites longer than SCAN_CHAIN_MAX is cut, and says so. */
static void test_retention_chain_longer_than_its_bound_is_cut(void)
{
	const struct scan_site *s;
	struct scan_result r;
	uint64_t prev;

	fake_reset();
	prev = blk(0, 32, 100);
	put(DATA, prev);
	for (uint64_t i = 1; i <= SCAN_CHAIN_MAX + 3; i++) {
		uint64_t b = blk(64 * i, 32, 100 + i);

		put(prev, b);
		prev = b;
	}
	CHECK_EQ_INT(classify(&r), 0);
	s = site_of(&r, 100 + SCAN_CHAIN_MAX + 3);
	CHECK(s != NULL);
	CHECK_EQ_INT(s->retainers[0].n_chain, SCAN_CHAIN_MAX);
	CHECK(s->retainers[0].cut);
	CHECK_EQ_INT(s->retainers[0].chain[0], 100);
	scan_result__free(&r);
}

static void test_unreferenced_block_is_definitely_lost(void)
{
	struct scan_result r;

	fake_reset();
	blk(0, 48, 7);
	CHECK_EQ_INT(classify(&r), 0);
	CHECK_EQ_INT(r.cls[0], SCAN_DEFINITE);
	CHECK_EQ_INT(r.n_leaks, 1);
	CHECK_EQ_INT(r.leaks[0].blocks, 1);
	CHECK_EQ_INT(r.leaks[0].bytes, 48);
	CHECK_EQ_INT(r.leaks[0].root.stack_hash, 7);
	CHECK_EQ_INT(r.n_sites, 1);
	CHECK_EQ_INT(r.sites[0].count[SCAN_DEFINITE], 1);
	CHECK_EQ_INT(r.sites[0].bytes[SCAN_DEFINITE], 48);
	scan_result__free(&r);
}

static void test_definitely_lost_blocks_list_their_allocation_numbers_per_site(void)
{
	static const uint64_t lost[] = { 3, 7, 9 };
	struct scan_result r;

	fake_reset();
	/* Ten blocks of site 5, numbered 1..10 (blk's order), in blocks' reverse order: the
	 * list comes out ascending whatever the input order.  Only 3, 7 and 9 lose their
	 * pointer; a block of another site is lost too. */
	for (int i = 9; i >= 0; i--)
		F.blocks[F.n++] = (struct scan_block){ HEAP + i * 64, 48, 5, i + 1 };
	for (int i = 0; i < 10; i++)
		if (i + 1 != 3 && i + 1 != 7 && i + 1 != 9)
			put(DATA + i * 8, HEAP + i * 64);
	F.blocks[F.n++] = (struct scan_block){ HEAP + 4096, 16, 6, 2 };
	CHECK_EQ_INT(classify(&r), 0);
	CHECK_EQ_INT(r.n_sites, 2);
	CHECK_EQ_INT(r.sites[0].stack_hash, 5);
	CHECK_EQ_INT(r.sites[0].count[SCAN_DEFINITE], 3);
	CHECK_EQ_INT(r.sites[0].n_definite_seqs, 3);
	for (int i = 0; i < 3; i++)
		CHECK_EQ_INT(r.sites[0].definite_seqs[i], lost[i]);
	CHECK_EQ_INT(r.sites[1].n_definite_seqs, 1);
	CHECK_EQ_INT(r.sites[1].definite_seqs[0], 2);
	/* The leak roots carry their numbers too. */
	for (size_t i = 0; i < r.n_leaks; i++)
		CHECK(r.leaks[i].root.seq == (r.leaks[i].root.stack_hash == 6 ? 2 :
					      r.leaks[i].root.addr == HEAP + 2 * 64 ? 3 :
					      r.leaks[i].root.addr == HEAP + 6 * 64 ? 7 : 9));
	scan_result__free(&r);
}

static void test_definite_numbers_keep_the_lowest_when_there_are_too_many(void)
{
	struct scan_result r;

	fake_reset();
	/* 40 lost blocks of one site, numbered 40 down to 1; one more of unknown number. */
	for (int i = 0; i < 40; i++)
		F.blocks[F.n++] = (struct scan_block){ HEAP + i * 32, 16, 5, 40 - i };
	F.blocks[F.n++] = (struct scan_block){ HEAP + 40 * 32, 16, 5, 0 };
	CHECK_EQ_INT(classify(&r), 0);
	CHECK_EQ_INT(r.sites[0].count[SCAN_DEFINITE], 41);
	CHECK_EQ_INT(r.sites[0].n_definite_seqs, SCAN_SEQS_MAX);
	for (int i = 0; i < SCAN_SEQS_MAX; i++)
		CHECK_EQ_INT(r.sites[0].definite_seqs[i], i + 1);
	scan_result__free(&r);
}

/* Tree of 127 nodes (left at +0, right at +8) laid out in heap order, root first. */
static void build_tree(void)
{
	for (size_t i = 0; i < 127; i++)
		blk(i * 32, 32, i ? 2 : 1);
	for (size_t i = 0; i < 63; i++) {
		put(HEAP + i * 32, HEAP + (2 * i + 1) * 32);
		put(HEAP + i * 32 + 8, HEAP + (2 * i + 2) * 32);
	}
}

static void test_dropped_tree_is_one_definite_root_and_indirect_rest(void)
{
	struct scan_result r;

	fake_reset();
	build_tree();
	CHECK_EQ_INT(classify(&r), 0);
	CHECK_EQ_INT(r.count[SCAN_DEFINITE], 1);
	CHECK_EQ_INT(r.count[SCAN_INDIRECT], 126);
	CHECK_EQ_INT(r.bytes[SCAN_INDIRECT], 126 * 32);
	CHECK_EQ_INT(r.cls[0], SCAN_DEFINITE);
	CHECK_EQ_INT(r.n_leaks, 1);
	CHECK_EQ_INT(r.leaks[0].root.addr, HEAP);
	CHECK_EQ_INT(r.leaks[0].blocks, 127);
	CHECK_EQ_INT(r.leaks[0].bytes, 127 * 32);
	CHECK_EQ_INT(r.leaks[0].total_edges, 126);
	CHECK_EQ_INT(r.leaks[0].n_edges, SCAN_MAX_EDGES);
	CHECK_EQ_INT(r.leaks[0].edges[1].from, HEAP);
	CHECK_EQ_INT(r.leaks[0].edges[1].offset, 8);
	CHECK_EQ_INT(r.leaks[0].edges[1].to, HEAP + 64);
	scan_result__free(&r);
}

static void test_tree_root_listed_after_its_children_still_leads_the_leak(void)
{
	struct scan_result r;

	fake_reset();
	/* Children at lower addresses than the root: the root absorbs their groups. */
	blk(0, 32, 2);
	blk(32, 32, 2);
	blk(64, 32, 1);
	put(HEAP + 64, HEAP);
	put(HEAP + 72, HEAP + 32);
	CHECK_EQ_INT(classify(&r), 0);
	CHECK_EQ_INT(r.cls[2], SCAN_DEFINITE);
	CHECK_EQ_INT(r.cls[0], SCAN_INDIRECT);
	CHECK_EQ_INT(r.cls[1], SCAN_INDIRECT);
	CHECK_EQ_INT(r.n_leaks, 1);
	CHECK_EQ_INT(r.leaks[0].blocks, 3);
	CHECK_EQ_INT(r.leaks[0].root.stack_hash, 1);
	scan_result__free(&r);
}

static void test_tree_kept_in_data_is_all_reachable(void)
{
	struct scan_result r;

	fake_reset();
	build_tree();
	put(DATA + 16, HEAP);
	CHECK_EQ_INT(classify(&r), 0);
	CHECK_EQ_INT(r.count[SCAN_REACHABLE], 127);
	CHECK_EQ_INT(r.n_leaks, 0);
	scan_result__free(&r);
}

static void test_dropped_cycle_is_one_definite_one_indirect(void)
{
	struct scan_result r;
	uint64_t a, b;

	fake_reset();
	a = blk(0, 32, 1);
	b = blk(64, 32, 1);
	put(a + 16, b);
	put(b + 24, a);
	CHECK_EQ_INT(classify(&r), 0);
	CHECK_EQ_INT(r.count[SCAN_DEFINITE], 1);
	CHECK_EQ_INT(r.count[SCAN_INDIRECT], 1);
	CHECK_EQ_INT(r.n_leaks, 1);
	CHECK_EQ_INT(r.leaks[0].blocks, 2);
	CHECK_EQ_INT(r.leaks[0].total_edges, 2);
	scan_result__free(&r);
}

static void test_interior_pointer_only_is_possibly_lost(void)
{
	struct scan_result r;
	uint64_t a, b;

	fake_reset();
	a = blk(0, 64, 1);
	b = blk(128, 32, 2);
	put(DATA, a + 24);
	put(a + 8, b);		/* what a possibly lost block reaches is possibly lost too */
	CHECK_EQ_INT(classify(&r), 0);
	CHECK_EQ_INT(r.cls[0], SCAN_POSSIBLE);
	CHECK_EQ_INT(r.cls[1], SCAN_POSSIBLE);
	CHECK_EQ_INT(r.n_leaks, 0);
	scan_result__free(&r);
}

/*
 * A block of size bytes laid out as glibc does: its chunk starts 16 bytes before it, the
 * size word (chunk bytes | PREV_INUSE) 8 bytes before it; the chunk is the smallest that
 * holds size plus the 8 bytes lent by the next chunk.  off is the chunk's heap offset.
 */
static uint64_t glibc_blk(size_t off, uint64_t size, uint64_t site)
{
	uint64_t chunk_bytes = (size + 8 + 15) & ~15ull;

	put(HEAP + off + 8, (chunk_bytes < 32 ? 32 : chunk_bytes) | 1);
	return blk(off + 16, size, site);
}

/*
 * Two dropped 40-byte blocks pointing at each other: each 48-byte chunk's successor starts
 * 32 bytes into the block.  glibc points at the header of b's successor (a free chunk: a
 * fastbin, or main_arena's top) and, for a's successor, at b's header: metadata, so the
 * cycle stays one definite and one indirect block, as valgrind reports it.
 */
static void test_dropped_cycle_stays_lost_when_glibc_points_at_the_next_chunk_header(void)
{
	struct scan_result r;
	uint64_t a, b;

	fake_reset();
	a = glibc_blk(0, 40, 1);
	b = glibc_blk(48, 40, 1);
	put(HEAP + 96 + 8, 0x41);	/* b's successor: a free chunk of 64 bytes */
	put(a, b);
	put(b, a);
	put(DATA, b + 32);		/* a bin or top: the free chunk's header */
	put(DATA + 8, a + 32);		/* b's header, 16 bytes before b */
	CHECK_EQ_INT(classify(&r), 0);
	CHECK_EQ_INT(r.count[SCAN_DEFINITE], 1);
	CHECK_EQ_INT(r.count[SCAN_INDIRECT], 1);
	CHECK_EQ_INT(r.count[SCAN_POSSIBLE], 0);
	CHECK_EQ_INT(r.n_leaks, 1);
	CHECK_EQ_INT(r.leaks[0].blocks, 2);
	CHECK_EQ_INT(r.leaks[0].bytes, 80);
	CHECK_EQ_INT(r.leaks[0].total_edges, 2);
	scan_result__free(&r);
}

static void test_pointer_inside_block_before_the_next_chunk_header_is_interior(void)
{
	struct scan_result r;
	uint64_t a, b;

	fake_reset();
	a = glibc_blk(0, 40, 1);
	b = glibc_blk(48, 40, 1);
	put(a, b);
	put(b, a);
	put(DATA, b + 24);
	CHECK_EQ_INT(classify(&r), 0);
	CHECK_EQ_INT(r.cls[0], SCAN_POSSIBLE);
	CHECK_EQ_INT(r.cls[1], SCAN_POSSIBLE);
	scan_result__free(&r);
}

/*
 * The rule needs the block's own size word to say so: a bigger chunk (memalign's slack), an
 * mmapped one, or no glibc header at all (another allocator) leave +32 an interior pointer.
 */
static void test_chunk_header_rule_needs_a_size_word_matching_the_block(void)
{
	const uint64_t size_words[] = { 0x51, 0x32, 0 };
	struct scan_result r;
	uint64_t b;

	for (size_t i = 0; i < sizeof(size_words) / sizeof(size_words[0]); i++) {
		fake_reset();
		b = blk(16, 40, 1);
		put(HEAP + 8, size_words[i]);
		put(DATA, b + 32);
		CHECK_EQ_INT(classify(&r), 0);
		CHECK_EQ_INT(r.cls[0], SCAN_POSSIBLE);
		scan_result__free(&r);
	}
}

static void test_pointer_in_register_only_is_reachable(void)
{
	struct scan_result r;
	uint64_t a, b;

	fake_reset();
	a = blk(0, 32, 1);
	b = blk(32, 32, 1);
	put(a, b);
	F.regs[F.n_regs++] = a;
	CHECK_EQ_INT(classify(&r), 0);
	CHECK_EQ_INT(r.count[SCAN_REACHABLE], 2);
	scan_result__free(&r);
}

static void test_untracked_heap_memory_is_a_root(void)
{
	struct scan_result r;
	uint64_t a;

	fake_reset();
	/* Heap bytes outside every tracked block (allocated before tracing) point to a. */
	a = blk(256, 32, 1);
	put(HEAP + 8, a);
	CHECK_EQ_INT(classify(&r), 0);
	CHECK_EQ_INT(r.cls[0], SCAN_REACHABLE);
	scan_result__free(&r);
}

static void test_pointer_from_lost_block_does_not_make_reachable(void)
{
	struct scan_result r;
	uint64_t a, b;

	fake_reset();
	a = blk(0, 32, 1);
	b = blk(32, 32, 2);
	put(a, b);
	/* b's own contents hold a pointer back into data: irrelevant. */
	put(b, DATA);
	CHECK_EQ_INT(classify(&r), 0);
	CHECK_EQ_INT(r.cls[0], SCAN_DEFINITE);
	CHECK_EQ_INT(r.cls[1], SCAN_INDIRECT);
	CHECK_EQ_INT(r.n_sites, 2);
	CHECK_EQ_INT(r.sites[1].stack_hash, 2);
	CHECK_EQ_INT(r.sites[1].count[SCAN_INDIRECT], 1);
	scan_result__free(&r);
}

static void test_block_outside_copied_memory_has_no_contents(void)
{
	struct scan_result r;
	struct scan_block b[2] = { { 0x900000, 32, 1, 1 }, { HEAP, 32, 1, 2 } };
	struct scan_region mem[1] = { { DATA, F.data, DATA_LEN } };

	fake_reset();
	put(DATA, 0x900000);
	CHECK_EQ_INT(scan__classify(b, 2, mem, 1, NULL, 0, &r), 0);
	CHECK_EQ_INT(r.cls[0], SCAN_REACHABLE);
	CHECK_EQ_INT(r.cls[1], SCAN_DEFINITE);
	scan_result__free(&r);
}

static void test_no_blocks_is_empty_result(void)
{
	struct scan_result r;

	CHECK_EQ_INT(scan__classify(NULL, 0, NULL, 0, NULL, 0, &r), 0);
	CHECK_EQ_INT(r.n_sites, 0);
	CHECK_EQ_INT(r.n_leaks, 0);
	scan_result__free(&r);
}

/* ------------------------------------------------------------ a real process */

/*
 * Starts scan_target (next to this binary): its stdout on a pipe, fd 3 the shared page it
 * counts in.  Fills the addresses of its two blocks; the child's pid, or -1.
 */
static pid_t start_scan_target(volatile uint64_t **ticks, uint64_t *a, uint64_t *b,
			       const char *big_mib)
{
	char exe[4096], line[128], *slash;
	int mem = memfd_create("scan_target_ticks", MFD_CLOEXEC), out[2] = { -1, -1 };
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	pid_t pid = -1;
	FILE *f = NULL;

	*ticks = MAP_FAILED;
	if (mem < 0 || n <= 0 || ftruncate(mem, 4096) || pipe2(out, O_CLOEXEC))
		goto out;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash || (size_t)(slash - exe) + sizeof("/scan_target") > sizeof(exe))
		goto out;
	strcpy(slash, "/scan_target");
	*ticks = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, mem, 0);
	if (*ticks == MAP_FAILED)
		goto out;
	pid = fork();
	if (!pid) {
		/* (dup2 onto itself would leave fd 3 close-on-exec) */
		bool mem_ok = mem == 3 ? !fcntl(3, F_SETFD, 0) : dup2(mem, 3) == 3;

		if (mem_ok && dup2(out[1], STDOUT_FILENO) == STDOUT_FILENO)
			execl(exe, exe, big_mib, (char *)NULL);
		_exit(127);
	}
	if (pid < 0)
		goto out;
	close(out[1]);
	out[1] = -1;
	f = fdopen(out[0], "r");
	if (f)
		out[0] = -1;
	if (!f || !fgets(line, sizeof(line), f) ||
	    sscanf(line, "%" SCNx64 " %" SCNx64, a, b) != 2) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	}
out:
	if (f)
		fclose(f);
	if (out[0] >= 0)
		close(out[0]);
	if (out[1] >= 0)
		close(out[1]);
	if (mem >= 0)
		close(mem);
	return pid;
}

static void test_scan_of_live_child_reads_memory_and_resumes_it(void)
{
	volatile uint64_t *ticks;
	struct scan_block blocks[2];
	struct scan_result r;
	uint64_t a, b, before;
	char msg[256];
	pid_t pid;
	int err;

	pid = start_scan_target(&ticks, &a, &b, NULL);
	if (pid < 0 && ticks != MAP_FAILED)
		munmap((void *)ticks, 4096);
	CHECK(pid > 0);
	blocks[0] = (struct scan_block){ a, 32, 1, 1 };
	blocks[1] = (struct scan_block){ b, 32, 2, 1 };
	while (!*ticks)
		;
	err = scan__process(pid, SCAN_MAX_STOP_MS, blocks, 2, &r, msg, sizeof(msg));
	before = *ticks;
	while (*ticks == before)	/* running again */
		;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	munmap((void *)ticks, 4096);
	CHECK_EQ_STR(err ? msg : "", "");
	CHECK_EQ_INT(r.threads, 1);
	CHECK(r.bytes_read > 0);
	CHECK(r.stop_ms >= 0 && r.stop_ms < SCAN_MAX_STOP_MS);
	CHECK_EQ_INT(r.cls[0], SCAN_REACHABLE);
	CHECK_EQ_INT(r.cls[1], SCAN_REACHABLE);
	scan_result__free(&r);
}

static char check__proc_state(pid_t pid);
static double secs(void);
static void *sleeper(void *arg);
static int count_threads(pid_t pid);

/*
 * 256 MiB take far longer than 5 ms to copy: the limit holds inside the mapping's copy, the
 * scan says how far it got and classifies nothing, and the process runs on, not stopped.
 */
static void test_scan_cut_by_its_limit_inside_a_mapping_is_partial_and_resumes(void)
{
	volatile uint64_t *ticks;
	struct scan_block blocks[1];
	struct scan_result r;
	uint64_t a, b, before;
	char msg[256], state;
	pid_t pid;
	int err;

	pid = start_scan_target(&ticks, &a, &b, "256");
	if (pid < 0 && ticks != MAP_FAILED)
		munmap((void *)ticks, 4096);
	CHECK(pid > 0);
	blocks[0] = (struct scan_block){ a, 32, 1, 1 };
	while (!*ticks)
		;
	err = scan__process(pid, 5, blocks, 1, &r, msg, sizeof(msg));
	before = *ticks;
	/*
	 * Running again.  Under load the 5 ms can end before the thread stopped: it is then
	 * detached as soon as it stops, by the reap the run loop makes each turn (here).
	 */
	while (*ticks == before)
		ptrace_stop__reap();
	state = check__proc_state(pid);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	munmap((void *)ticks, 4096);
	CHECK_EQ_INT(err, -ETIME);
	CHECK_EQ_STR(msg, "the scan reached its 5 ms stop limit while copying memory: partial, "
		     "nothing classified");
	CHECK(r.partial.cut);
	CHECK(r.partial.bytes_total >= 256ull << 20);
	CHECK(r.partial.bytes_read < r.partial.bytes_total);
	/* One chunk past the limit at most, and the seizing: far below the whole copy. */
	CHECK(r.partial.stop_ms >= 5 && r.partial.stop_ms < 100);
	CHECK(!r.cls && !r.n_sites);
	CHECK(state != 't');
}

/*
 * A thread SIGKILLed while stopped is a traced zombie: the end of the stop reaps it (or a
 * later reap does), so its leader is reaped by its parent, with the status a wait of ours
 * collected if it was ours.
 */
static void test_threads_killed_during_a_stop_are_reaped_not_left_as_zombies(void)
{
	struct ptrace_stop ps;
	char msg[256];
	double t0;
	pid_t pid;
	int status = 0, err;
	bool gone = false;

	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		pthread_t t;

		if (pthread_create(&t, NULL, sleeper, NULL))
			_exit(1);
		sleeper(NULL);
	}
	t0 = secs();
	while (count_threads(pid) < 2 && secs() - t0 < 5)
		usleep(1000);
	err = ptrace_stop__begin(&ps, pid, SCAN_MAX_STOP_MS, msg, sizeof(msg));
	if (err) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	CHECK_EQ_STR(err ? msg : "", "");
	CHECK_EQ_INT(ps.n, 2);
	kill(pid, SIGKILL);
	usleep(100 * 1000);
	ptrace_stop__end(&ps);
	t0 = secs();
	while (!gone && secs() - t0 < 3) {
		ptrace_stop__reap();
		gone = ptrace_stop__exit_status(pid, &status) ||
		       waitpid(pid, &status, WNOHANG) == pid;
		usleep(1000);
	}
	if (!gone) {
		/* Cleaning up: the tracer's wait for every thread ends the zombies. */
		while (waitpid(-1, NULL, __WALL | WNOHANG) > 0)
			;
		waitpid(pid, NULL, 0);
	}
	CHECK(gone);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	CHECK_EQ_INT(ptrace_stop__reap(), 0);
}

/*
 * Reading userfaultfd memory waits for the process's handler, which the scan stopped (or,
 * here, which does not exist): the scan refuses such a process instead of hanging in
 * process_vm_readv.  The scan runs in a child, so a hang is a failure, not a stuck test.
 */
static void test_scan_refuses_userfaultfd_memory_instead_of_hanging(void)
{
	volatile uint64_t *ticks;
	int res[2], err = 0, status;
	char msg[256] = "";
	struct scan_result r;
	pid_t target, scanner;
	uint64_t a, b;
	double t0;
	bool done = false;

	CHECK(!pipe(res));
	target = start_scan_target(&ticks, &a, &b, "uffd");
	if (target < 0 && ticks != MAP_FAILED)
		munmap((void *)ticks, 4096);
	CHECK(target > 0);
	scanner = fork();
	CHECK(scanner >= 0);
	if (!scanner) {
		err = scan__process(target, SCAN_MAX_STOP_MS, NULL, 0, &r, msg, sizeof(msg));
		if (write(res[1], &err, sizeof(err)) < 0 || write(res[1], msg, sizeof(msg)) < 0)
			_exit(1);
		_exit(0);
	}
	t0 = secs();
	while (!done && secs() - t0 < 15) {
		done = waitpid(scanner, &status, WNOHANG) == scanner;
		usleep(10000);
	}
	if (!done) {
		kill(scanner, SIGKILL);
		waitpid(scanner, NULL, 0);
	}
	kill(target, SIGKILL);
	waitpid(target, NULL, 0);
	munmap((void *)ticks, 4096);
	close(res[1]);
	if (done && (read(res[0], &err, sizeof(err)) != sizeof(err) ||
		     read(res[0], msg, sizeof(msg)) != sizeof(msg)))
		done = false;
	close(res[0]);
	CHECK(done);
	CHECK_EQ_INT(err, -EOPNOTSUPP);
	CHECK(strstr(msg, "has memory registered with userfaultfd") != NULL);
}

static void test_scan_of_missing_process_says_so(void)
{
	struct scan_result r;
	char msg[256];

	CHECK_EQ_INT(scan__process(999999999, SCAN_MAX_STOP_MS, NULL, 0, &r, msg, sizeof(msg)),
		     -ESRCH);
	CHECK_EQ_STR(msg, "process 999999999 does not exist");
}

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* Threads of pid, from /proc/PID/status; 0 if unreadable. */
static int count_threads(pid_t pid)
{
	char path[64], line[256];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	fclose(f);
	return n;
}

static double secs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * A process waiting in vfork() for its child cannot stop: the scan gives up after
 * SCAN_MAX_STOP_MS, and the process runs on once the wait ends (detached as it stops).
 */
static void test_scan_of_process_that_cannot_stop_gives_up_and_resumes_it(void)
{
	volatile uint64_t *ticks = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct scan_result r;
	char msg[256], want[256];
	uint64_t before;
	double t0;
	pid_t pid;
	int err, status;

	CHECK(ticks != MAP_FAILED);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		if (!vfork()) {
			struct timespec ts = { 3, 0 };

			nanosleep(&ts, NULL);
			_exit(0);
		}
		for (;;)
			(*ticks)++;
	}
	t0 = secs();
	while (check__proc_state(pid) != 'D' && secs() - t0 < 60)
		;
	err = scan__process(pid, SCAN_MAX_STOP_MS, NULL, 0, &r, msg, sizeof(msg));
	t0 = secs();
	while (ptrace_stop__reap() && secs() - t0 < 10)
		usleep(1000);
	before = *ticks;
	t0 = secs();
	while (*ticks == before && secs() - t0 < 10)
		;
	before = *ticks - before;
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	munmap((void *)ticks, 4096);
	snprintf(want, sizeof(want), "thread %d of process %d did not stop within the scan's "
		 "time limit", (int)pid, (int)pid);
	CHECK_EQ_INT(err, -ETIME);
	CHECK_EQ_STR(msg, want);
	CHECK(before > 0);
}

int main(void)
{
	RUN(test_definitely_lost_blocks_list_their_allocation_numbers_per_site);
	RUN(test_definite_numbers_keep_the_lowest_when_there_are_too_many);
	RUN(test_block_pointed_to_from_data_is_reachable);
	RUN(test_retention_path_names_the_root_word_and_the_sites_between);
	RUN(test_retention_paths_of_a_site_come_largest_first_with_registers_by_index);
	RUN(test_retention_chain_longer_than_its_bound_is_cut);
	RUN(test_unreferenced_block_is_definitely_lost);
	RUN(test_dropped_tree_is_one_definite_root_and_indirect_rest);
	RUN(test_tree_root_listed_after_its_children_still_leads_the_leak);
	RUN(test_tree_kept_in_data_is_all_reachable);
	RUN(test_dropped_cycle_is_one_definite_one_indirect);
	RUN(test_interior_pointer_only_is_possibly_lost);
	RUN(test_dropped_cycle_stays_lost_when_glibc_points_at_the_next_chunk_header);
	RUN(test_pointer_inside_block_before_the_next_chunk_header_is_interior);
	RUN(test_chunk_header_rule_needs_a_size_word_matching_the_block);
	RUN(test_pointer_in_register_only_is_reachable);
	RUN(test_untracked_heap_memory_is_a_root);
	RUN(test_pointer_from_lost_block_does_not_make_reachable);
	RUN(test_block_outside_copied_memory_has_no_contents);
	RUN(test_no_blocks_is_empty_result);
	RUN(test_scan_of_live_child_reads_memory_and_resumes_it);
	RUN(test_scan_cut_by_its_limit_inside_a_mapping_is_partial_and_resumes);
	RUN(test_threads_killed_during_a_stop_are_reaped_not_left_as_zombies);
	RUN(test_scan_refuses_userfaultfd_memory_instead_of_hanging);
	RUN(test_scan_of_missing_process_says_so);
	RUN(test_scan_of_process_that_cannot_stop_gives_up_and_resumes_it);
	CHECK_EXIT();
}
