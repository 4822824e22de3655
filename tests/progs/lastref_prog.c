// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * lastref_prog.c - where the last pointer to a block goes, one scenario per run, for
 * tests/e2e/lastref.sh (`leaktop lastref`).
 *
 * Usage: lastref_prog DIR global|top|uffd|big|redzone|holder|local|register|bench [N]
 * Creates DIR/ready, waits for DIR/alloc, allocates one 64-byte block in make_it() and keeps
 * its only pointer
 *   global    in a global, overwritten in forget_it();
 *   top       the same with a 40-byte block carved from the top of the heap (exit 3 if it
 *             is not): glibc's main_arena.top then points 32 bytes into it, at the header
 *             of the top chunk; after forget_it() the program allocates every 10 ms, which
 *             moves main_arena.top (the allocator's word, not a reference: the verdict must
 *             still name forget_it());
 *   uffd      as global, with 16 MiB registered with userfaultfd whose faults nothing
 *             serves (as root: kernel-mode faults too);
 *   big       as global, with N MiB (default 128) mapped and touched first;
 *   redzone   only in the red zone of redzone_wait(), a leaf function that waits in raw
 *             nanosleep syscalls until DIR/quit (made right after DIR/allocated);
 *   holder    in a heap struct, freed in free_holder();
 *   local     in a local of keep_local(), which then returns to main();
 *   register  in a global that register_only() moves into %r12 (and clears) before it waits
 *             in raw nanosleep syscalls, touching no memory, until DIR/quit;
 * creates DIR/allocated, waits for DIR/go, drops the pointer, creates DIR/dropped and waits
 * for DIR/quit.  The lines the test expects carry a "lastref:" comment.
 * bench (tests/bench/run.sh, section 11): four blocks from make_it() kept in globals; at go,
 * N malloc(64)+free pairs each followed by a store of the same pointer into one of the
 * globals (what a watched word costs when it is written without losing its block); the ns
 * per pair go to DIR/result.  Every wait ends
 * after 300 s.
 */
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <malloc.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nofp_call.h"

#define NOINLINE __attribute__((noinline))

struct holder {
	void *ptr;
	long pad[3];
};

static const char *dir;
void *g_global;
struct holder *g_holder;
void *g_reg;
void *volatile g_bench[4];
static volatile int release_flag;
static size_t block_size = 64;
void *g_churn[1024];
static const struct timespec tick = { 0, 10 * 1000 * 1000 };

static void touch(const char *name)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
}

NOINLINE static void wait_for(const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (int i = 0; i < 30000 && access(path, F_OK); i++)
		nanosleep(&tick, NULL);
}

/* Dead stack below and the caller-saved registers hold no copy of a pointer after this. */
NOINLINE static void scrub(void)
{
	volatile char pad[16384];

	for (size_t i = 0; i < sizeof(pad); i++)
		pad[i] = 0;
	__asm__ volatile("xor %%eax, %%eax\n\txor %%ecx, %%ecx\n\txor %%edx, %%edx\n\t"
			 "xor %%esi, %%esi\n\txor %%edi, %%edi\n\txor %%r8d, %%r8d\n\t"
			 "xor %%r9d, %%r9d\n\txor %%r10d, %%r10d\n\txor %%r11d, %%r11d"
			 ::: "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11");
}

NOINLINE static void *make_it(void)
{
	char *p = malloc(block_size); /* lastref: alloc */

	if (p)
		memset(p, 1, block_size);
	return p;
}

/*
 * Is block p (block_size bytes) the last chunk before the heap's top chunk, whose header
 * then lies inside it (a 48-byte chunk lends its 40-byte block the next chunk's first word),
 * the top chunk reaching the program break?
 */
static int at_heap_top(const void *p)
{
	const uintptr_t next = (uintptr_t)p - 16 + 48;
	uintptr_t top_size;

	memcpy(&top_size, (const void *)(next + 8), sizeof(top_size));
	return next + (top_size & ~(uintptr_t)7) == (uintptr_t)sbrk(0);
}

/* Allocate (and keep) every 10 ms until DIR/quit: each malloc moves main_arena.top. */
NOINLINE static void churn_until_quit(void)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/quit", dir);
	for (int i = 0; i < 30000 && access(path, F_OK); i++) {
		g_churn[i % 1024] = malloc(200);
		nanosleep(&tick, NULL);
	}
}

/* len bytes registered with userfaultfd (missing mode); no thread serves the faults. */
static int register_uffd(size_t len)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	int fd = syscall(SYS_userfaultfd, O_CLOEXEC);
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (fd < 0 || m == MAP_FAILED || ioctl(fd, UFFDIO_API, &api))
		return -1;
	reg.range.start = (uintptr_t)m;
	reg.range.len = len;
	return ioctl(fd, UFFDIO_REGISTER, &reg);
}

/*
 * redzone_wait(holder, flag, ts): moves *holder into the word below the return address (the
 * red zone: a leaf function's, no call follows), clears *holder and the rest of the red zone,
 * then sleeps in raw nanosleep(ts) syscalls (which touch no user memory) until *flag.
 */
void redzone_wait(void **holder, volatile int *flag, const struct timespec *ts);
__asm__(".pushsection .text\n"
	".type redzone_wait, @function\n"
	"redzone_wait:\n"
	".cfi_startproc\n"
	"mov $-128, %rax\n"
	"0: movq $0, (%rsp,%rax)\n"		/* the red zone, clean */
	"add $8, %rax\n"
	"jnz 0b\n"
	"mov (%rdi), %rax\n"
	"mov %rax, -8(%rsp)\n"			/* lastref: redzone */
	"movq $0, (%rdi)\n"
	"xor %eax, %eax\n"
	"mov %rsi, %r8\n"
	"mov %rdx, %r9\n"
	"1: mov $35, %eax\n"
	"mov %r9, %rdi\n"
	"xor %esi, %esi\n"
	"syscall\n"
	"cmpl $0, (%r8)\n"
	"je 1b\n"
	"movq $0, -8(%rsp)\n"
	"ret\n"
	".cfi_endproc\n"
	".size redzone_wait, .-redzone_wait\n"
	".popsection\n");

NOINLINE static struct holder *make_holder(void)
{
	return calloc(1, sizeof(struct holder));
}

NOINLINE static void forget_it(void)
{
	g_global = NULL; /* lastref: overwrite */
}

NOINLINE static void free_holder(void)
{
	free(g_holder); /* lastref: holder-free */
	g_holder = NULL;
}

NOINLINE static void keep_local(void)
{
	void *volatile p = make_it();

	scrub();
	touch("allocated");
	wait_for("go"); /* lastref: frame */
	/* p stays in memory, used, but is not loaded into a register on the way out: a
	 * pointer left in %rax at the return would make the block "register only" when the
	 * confirmation scan stops the thread right after the return. */
	__asm__ volatile("" : : "m"(p));
}

/*
 * linger(fn): a frame of 264 bytes it never writes, then fn.  Called right after keep_local
 * returned, it covers keep_local's dead frame with the pointer still in it while fn waits.
 */
void linger(void (*fn)(void));
__asm__(".pushsection .text\n"
	".type linger, @function\n"
	"linger:\n"
	".cfi_startproc\n"
	"sub $264, %rsp\n"
	".cfi_adjust_cfa_offset 264\n"
	"call *%rdi\n"
	"add $264, %rsp\n"
	".cfi_adjust_cfa_offset -264\n"
	"ret\n"
	".cfi_endproc\n"
	".size linger, .-linger\n"
	".popsection\n");

static void dropped_and_wait(void)
{
	touch("dropped");
	wait_for("quit");
}

static void announce_and_wait(void)
{
	scrub();
	touch("allocated");
	wait_for("go");
}

/* keep_local, with every stop after the store below a frame that has no frame pointer. */
NOINLINE static void keep_local_nofp(void)
{
	void *volatile p = make_it();

	nofp_call(announce_and_wait); /* lastref: frame-nofp */
	__asm__ volatile("" : : "m"(p));
}

/* The pointer goes from g_reg into %r12, which then is all that holds it until DIR/quit. */
NOINLINE static void register_only(void)
{
	__asm__ volatile("mov %[g], %%r12\n\t" /* lastref: register */
			 "movq $0, %[g]\n\t"
			 "1:\n\t"
			 "mov $35, %%eax\n\t"		/* nanosleep(&tick, NULL) */
			 "lea %[ts], %%rdi\n\t"
			 "xor %%esi, %%esi\n\t"
			 "syscall\n\t"
			 "cmpl $0, %[flag]\n\t"
			 "je 1b\n\t"
			 "xor %%r12d, %%r12d"
			 : [g] "+m"(g_reg)
			 : [ts] "m"(tick), [flag] "m"(release_flag)
			 : "rax", "rdi", "rsi", "rcx", "r11", "r12", "memory");
}

NOINLINE static void bench(long n)
{
	struct timespec t0, t1;
	char path[4096];
	FILE *f;

	for (int i = 0; i < 4; i++)
		g_bench[i] = make_it();
	scrub();
	touch("allocated");
	wait_for("go");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < n; i++) {
		void *q = malloc(64);

		free(q);
		g_bench[i & 3] = g_bench[i & 3];
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	snprintf(path, sizeof(path), "%s/result", dir);
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "%.1f\n", ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / n);
		fclose(f);
	}
}

static void *releaser(void *arg)
{
	wait_for("quit");
	release_flag = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc != 3 && argc != 4)
		return 2;
	dir = argv[1];
	touch("ready");
	wait_for("alloc");
	if (!strcmp(argv[2], "global")) {
		g_global = make_it();
		scrub();
		touch("allocated");
		wait_for("go");
		forget_it();
	} else if (!strcmp(argv[2], "top")) {
		block_size = 40;
		malloc_trim(0);
		g_global = make_it();
		if (!at_heap_top(g_global))
			return 3;
		scrub();
		touch("allocated");
		wait_for("go");
		forget_it();
		touch("dropped");
		churn_until_quit();
		return 0;
	} else if (!strcmp(argv[2], "uffd") || !strcmp(argv[2], "big")) {
		if (!strcmp(argv[2], "uffd") && register_uffd(16 << 20))
			return 3;
		if (!strcmp(argv[2], "big")) {
			size_t len = (argc > 3 ? strtoul(argv[3], NULL, 10) : 128) << 20;
			void *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (m == MAP_FAILED)
				return 3;
			memset(m, 1, len);
		}
		g_global = make_it();
		scrub();
		touch("allocated");
		wait_for("go");
		forget_it();
	} else if (!strcmp(argv[2], "redzone")) {
		if (pthread_create(&t, NULL, releaser, NULL))
			return 1;
		touch("allocated");
		g_reg = make_it();
		redzone_wait(&g_reg, &release_flag, &tick);
		pthread_join(t, NULL);
	} else if (!strcmp(argv[2], "holder")) {
		g_holder = make_holder();
		g_holder->ptr = make_it();
		scrub();
		touch("allocated");
		wait_for("go");
		free_holder();
	} else if (!strcmp(argv[2], "local")) {
		keep_local(); /* lastref: returns-to */
	} else if (!strcmp(argv[2], "local-linger")) {
		keep_local(); /* lastref: returns-to-linger */
		linger(dropped_and_wait);
		return 0;
	} else if (!strcmp(argv[2], "local-nofp")) {
		keep_local_nofp(); /* lastref: returns-to-nofp */
	} else if (!strcmp(argv[2], "register")) {
		if (pthread_create(&t, NULL, releaser, NULL))
			return 1;
		g_reg = make_it();
		scrub();
		touch("allocated");
		wait_for("go");
		register_only();
		pthread_join(t, NULL);
	} else if (!strcmp(argv[2], "bench")) {
		bench(argc > 3 ? strtol(argv[3], NULL, 10) : 1000000);
	} else {
		return 2;
	}
	touch("dropped");
	wait_for("quit");
	return 0;
}
