// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * check_parity.cc - memcheck's leak scenarios, each from its own allocating function, for
 * tests/e2e/check_parity.sh to compare `leaktop check` with `valgrind --leak-check=full`:
 *   alloc_lost         one block, pointer dropped                         definite
 *   alloc_interior     one block, only a pointer into its middle kept     possible
 *   alloc_cycle        two blocks pointing at each other, nothing else    definite + indirect
 *   alloc_tree_root    a root pointing at two children, root dropped      definite
 *   alloc_tree_node    the two children                                   indirect
 *   alloc_zero         malloc(0), dropped                                 definite (0 bytes)
 *   alloc_new_array    new int[10], dropped                               definite
 *   alloc_kept_global  kept in a global                                   reachable
 *   alloc_in_tls       kept in a __thread variable                        reachable
 *   alloc_thread_stack kept on the stack of a thread blocked at exit      reachable
 *   alloc_in_register  kept only in %r15 when _exit is called             reachable
 *   alloc_in_xmm0      kept only in %xmm0 when _exit is called            reachable for
 *                      leaktop; memcheck reads general-purpose registers only (definite)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

struct node {
	struct node *left, *right;
	char pad[16];
};

static void *kept_global;
static char *interior;
static __thread void *tls_ptr;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int thread_ready;

/* Wipes what a dropped pointer left in caller-saved registers and below the stack. */
static NOINLINE void scrub(void)
{
	volatile char buf[4096];

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = 0;
}

extern "C" NOINLINE void *alloc_lost(void) { return malloc(40); }
extern "C" NOINLINE void *alloc_interior(void) { return malloc(64); }
extern "C" NOINLINE void *alloc_cycle(void) { return calloc(1, sizeof(struct node)); }
extern "C" NOINLINE void *alloc_tree_root(void) { return calloc(1, sizeof(struct node)); }
extern "C" NOINLINE void *alloc_tree_node(void) { return calloc(1, sizeof(struct node)); }
extern "C" NOINLINE void *alloc_zero(void) { return malloc(0); }
extern "C" NOINLINE int *alloc_new_array(void) { return new int[10]; }
extern "C" NOINLINE void *alloc_kept_global(void) { return malloc(24); }
extern "C" NOINLINE void *alloc_in_tls(void) { return malloc(24); }
extern "C" NOINLINE void *alloc_thread_stack(void) { return malloc(24); }
extern "C" NOINLINE void *alloc_in_register(void) { return malloc(24); }
extern "C" NOINLINE void *alloc_in_xmm0(void) { return malloc(24); }

static void *holder(void *)
{
	void *volatile mine = alloc_thread_stack();

	pthread_mutex_lock(&mu);
	thread_ready = 1;
	pthread_cond_signal(&cv);
	for (;;)
		pthread_cond_wait(&cv, &mu);	/* until exit_group */
	return mine;
}

static NOINLINE void make_lost(void)
{
	struct node *a, *b, *root;
	int *arr;

	memset(alloc_lost(), 1, 40);
	interior = (char *)alloc_interior() + 32;
	a = (struct node *)alloc_cycle();
	b = (struct node *)alloc_cycle();
	a->left = b;
	b->left = a;
	root = (struct node *)alloc_tree_root();
	root->left = (struct node *)alloc_tree_node();
	root->right = (struct node *)alloc_tree_node();
	alloc_zero();
	arr = alloc_new_array();
	arr[0] = 1;
	kept_global = alloc_kept_global();
	tls_ptr = alloc_in_tls();
}

/* The blocks only registers hold, then _exit: nothing else between. */
static void *volatile in_reg, *volatile in_xmm;

int main(void)
{
	pthread_t t;

	pthread_create(&t, NULL, holder, NULL);
	pthread_mutex_lock(&mu);
	while (!thread_ready)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	make_lost();
	scrub();
	in_reg = alloc_in_register();
	in_xmm = alloc_in_xmm0();
	__asm__ volatile(
		"movq %0, %%r15\n\t"
		"movq %1, %%xmm0\n\t"
		"movq $0, %0\n\t"
		"movq $0, %1\n\t"
		"xorl %%eax, %%eax\n\t"
		"xorl %%ecx, %%ecx\n\t"
		"xorl %%edx, %%edx\n\t"
		"xorl %%esi, %%esi\n\t"
		"xorl %%edi, %%edi\n\t"
		"xorl %%r8d, %%r8d\n\t"
		"xorl %%r9d, %%r9d\n\t"
		"xorl %%r10d, %%r10d\n\t"
		"xorl %%r11d, %%r11d\n\t"
		"andq $-16, %%rsp\n\t"
		"call _exit@PLT\n\t"
		: "+m"(in_reg), "+m"(in_xmm) : : "memory");
	return 0;
}
