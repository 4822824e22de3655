// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * scan_shapes.c - heap shapes for the reachability scan, each allocated from its own
 * function so each is its own site:
 *   node_dropped     a binary tree of 127 blocks of 32 bytes whose root pointer is dropped
 *   node_kept        the same tree, its root kept in a global
 *   cycle_block      two blocks of 48 bytes pointing at each other, dropped
 *   odd_cycle_block  two blocks of 40 bytes pointing at each other, dropped, where glibc
 *                    keeps a pointer into the second: its chunk of 48 bytes lends the
 *                    block the next chunk's first word, so the next chunk's header lies 32
 *                    bytes into the block, and that chunk (an odd_spare) is freed into a
 *                    fastbin whose head in main_arena points at its header
 *   interior_block   a block of 64 bytes known only through a pointer 24 bytes into it
 *   stack_block      a block of 80 bytes whose pointer is only on a thread's stack
 *   reg_block        a block of 96 bytes whose pointer is only in register r12 of a thread
 *                    spinning in inline asm
 *   pre_target       a block of 112 bytes pointed to only by a block allocated before
 *                    tracing (and itself dropped)
 * Other sizes are multiples of 16 so glibc's chunk headers never fall inside a block.
 *
 * Usage: scan_shapes DIR [MIB].  With MIB, first maps and touches MIB MiB of writable memory
 * (for a scan whose copy outlasts its time limit).  Creates DIR/ready (pid) and waits for
 * DIR/go (leaktop traces it), allocates, creates DIR/done and waits for DIR/quit, then
 * exits 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

struct node {
	struct node *left, *right;
	long pad[2];
};

struct pair {
	struct pair *next;
	long pad[5];
};

/* 40 bytes: glibc's smallest chunk for it is 48 bytes, header included. */
struct odd {
	struct odd *next;
	long pad[4];
};

#define ODD_CHUNK_BYTES 48
#define TCACHE_FILL 7		/* glibc's default tcache_count: frees beyond it skip the tcache */

static struct node *kept_tree;
static char *interior_ptr;
static volatile int quit;
static volatile int threads_ready;

/* Files in dir: create dir/NAME holding our pid (atomically) and/or wait for dir/WAIT. */
static void handshake(const char *dir, const char *name, const char *wait)
{
	struct timespec ts;
	char path[4096];
	int fd, i;

	if (name) {
		char tmp[4096], buf[32];
		int n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());

		snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, buf, n) != n || close(fd) || rename(tmp, path))
			_exit(2);
	}
	if (!wait)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, wait);
	for (i = 0; access(path, F_OK); i++) {
		if (i == 18000)
			_exit(3);
		ts.tv_sec = 0;
		ts.tv_nsec = 10 * 1000 * 1000;
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
}

NOINLINE struct node *node_dropped(void)
{
	return calloc(1, sizeof(struct node));
}

NOINLINE struct node *node_kept(void)
{
	return calloc(1, sizeof(struct node));
}

NOINLINE struct node *tree(int depth, struct node *(*alloc)(void))
{
	struct node *n = alloc();

	if (depth > 1) {
		n->left = tree(depth - 1, alloc);
		n->right = tree(depth - 1, alloc);
	}
	return n;
}

NOINLINE void drop_tree(void)
{
	tree(7, node_dropped);
}

NOINLINE struct pair *cycle_block(void)
{
	return calloc(1, sizeof(struct pair));
}

NOINLINE void drop_cycle(void)
{
	struct pair *a = cycle_block(), *b = cycle_block();

	a->next = b;
	b->next = a;
}

NOINLINE struct odd *odd_cycle_block(void)
{
	return calloc(1, sizeof(struct odd));
}

NOINLINE void *odd_spare(void)
{
	return malloc(sizeof(struct odd));
}

/*
 * The spares first take whatever 48-byte chunks glibc had free; freed again they fill the
 * tcache, so the chunk right after b goes to a fastbin.  Exits 5 if the chunks did not
 * come out next to each other (the layout this shape needs).
 */
NOINLINE void drop_odd_cycle(void)
{
	void *spare[TCACHE_FILL];
	struct odd *a, *b;
	char *after_b;
	int i;

	for (i = 0; i < TCACHE_FILL; i++)
		spare[i] = odd_spare();
	a = odd_cycle_block();
	b = odd_cycle_block();
	after_b = odd_spare();
	if (!a || !b || after_b != (char *)b + ODD_CHUNK_BYTES) {
		fprintf(stderr, "scan_shapes: glibc did not put the chunk after b right after it "
			"(b %p, next %p)\n", (void *)b, (void *)after_b);
		_exit(5);
	}
	a->next = b;
	b->next = a;
	for (i = 0; i < TCACHE_FILL; i++)
		free(spare[i]);
	free(after_b);
}

NOINLINE char *interior_block(void)
{
	return malloc(64);
}

NOINLINE void *stack_block(void)
{
	return malloc(80);
}

NOINLINE void *reg_block(void)
{
	return malloc(96);
}

NOINLINE void *pre_target(void)
{
	return malloc(112);
}

/* Wipe the dead frames below us, so no stale copy of a pointer survives on the stack. */
NOINLINE void scrub_stack(void)
{
	volatile char junk[64 * 1024];

	memset((char *)junk, 0, sizeof(junk));
}

static void *stack_thread(void *arg)
{
	void *volatile on_stack = stack_block();

	scrub_stack();
	__atomic_add_fetch(&threads_ready, 1, __ATOMIC_SEQ_CST);
	while (!quit)
		usleep(10000);
	return (void *)on_stack == arg ? NULL : NULL;
}

static void *reg_thread(void *arg)
{
	void *p = reg_block();

	scrub_stack();
	/*
	 * The pointer goes to r12 and nowhere else: its stack slot and every scratch register
	 * are cleared, then the thread spins until quit.
	 */
	__atomic_add_fetch(&threads_ready, 1, __ATOMIC_SEQ_CST);
	asm volatile("mov %0, %%r12\n\t"
		     "movq $0, %0\n\t"
		     "xor %%eax, %%eax\n\t"
		     "xor %%ecx, %%ecx\n\t"
		     "xor %%edx, %%edx\n\t"
		     "xor %%esi, %%esi\n\t"
		     "xor %%edi, %%edi\n\t"
		     "xor %%r8d, %%r8d\n\t"
		     "xor %%r9d, %%r9d\n\t"
		     "xor %%r10d, %%r10d\n\t"
		     "xor %%r11d, %%r11d\n\t"
		     "1: pause\n\t"
		     "cmpl $0, %1\n\t"
		     "je 1b\n\t"
		     "xor %%r12d, %%r12d\n\t"
		     : "+m"(p)
		     : "m"(quit)
		     : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12",
		       "memory");
	return NULL;
}

NOINLINE void allocate_all(void **pre)
{
	drop_tree();
	kept_tree = tree(7, node_kept);
	drop_cycle();
	drop_odd_cycle();
	interior_ptr = interior_block() + 24;
	*pre = pre_target();
}

int main(int argc, char **argv)
{
	pthread_t st, rt;
	void **pre;

	if (argc != 2 && argc != 3)
		return 2;
	if (argc == 3) {
		size_t big = strtoul(argv[2], NULL, 10) << 20;
		void *m = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);

		if (m == MAP_FAILED)
			return 5;
		memset(m, 1, big);
	}
	/* Allocated before tracing: leaktop never saw it; only it points to pre_target. */
	pre = malloc(64);
	handshake(argv[1], "ready", "go");
	allocate_all(pre);
	pre = NULL;
	if (pthread_create(&st, NULL, stack_thread, NULL) ||
	    pthread_create(&rt, NULL, reg_thread, NULL))
		return 4;
	while (threads_ready < 2)
		usleep(1000);
	scrub_stack();
	handshake(argv[1], "done", "quit");
	quit = 1;
	pthread_join(st, NULL);
	pthread_join(rt, NULL);
	return 0;
}
