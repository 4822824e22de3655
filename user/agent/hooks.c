// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * hooks.c - the agent's allocator entry points: one exported function per symbol of
 * agent/alloc_fns.h (the list the uprobes use), each forwarding its six integer argument
 * registers to the real function (harmless for those taking fewer, x86-64 SysV) and
 * reading them by the entry's shape (enum lt_alloc_fn), as the BPF probes do.
 *
 * The real functions come from dlsym (RTLD_NEXT preloaded, RTLD_DEFAULT injected).  dlsym
 * may allocate: while this thread resolves, allocations are served from a static arena
 * whose blocks are never freed.  This file includes no libc header declaring the
 * functions it defines (it is built with -fno-builtin).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>

#include "agent/agent.h"
#include "agent/alloc_fns.h"

#define TLS	__attribute__((tls_model("initial-exec")))

typedef uint64_t (*real_fn)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);

enum {
#define X(sym, shape, family, core)	HOOK_##sym,
	LT_ALLOC_FNS(X)
#undef X
	N_HOOKS
};

static void *real[N_HOOKS];

/* The C++ operators: recorded only where their object is the allocator (below). */
#define IS_CXX_STD	0
#define IS_CXX_CXX	1
#define IS_CXX_JE	0
#define IS_CXX_TC	0
#define IS_CXX_MI	0
static const unsigned char is_cxx[N_HOOKS] = {
#define X(sym, shape, family, core)	[HOOK_##sym] = IS_CXX_##family,
	LT_ALLOC_FNS(X)
#undef X
};
/*
 * Entries not recorded: a C++ operator whose real function lives in another object than the
 * real malloc (libstdc++'s, which calls malloc: its blocks are malloc's, as the uprobes,
 * which probe operators only in allocators, see them); its malloc call records the block.
 */
static unsigned char pass_only[N_HOOKS];

/* This thread is inside a hook (recording, or an allocator calling itself). */
static __thread int in_hook TLS;
/* This thread is resolving the real functions: allocate from the arena. */
static __thread int resolving TLS;
static int resolved;			/* 0 no, 1 in progress, 2 done */

/* The bootstrap arena: 16-byte aligned blocks, each after a 16-byte size header. */
#define ARENA_BYTES	(64u * 1024)
static unsigned char arena[ARENA_BYTES] __attribute__((aligned(16)));
static uint64_t arena_used;

static int in_arena(uint64_t p)
{
	return p >= (uint64_t)arena && p < (uint64_t)arena + ARENA_BYTES;
}

static uint64_t arena_alloc(uint64_t size, int zero)
{
	uint64_t need = 16 + ((size + 15) & ~15ULL), at;

	if (size > ARENA_BYTES)
		return 0;
	at = __atomic_fetch_add(&arena_used, need, __ATOMIC_RELAXED);
	if (at + need > ARENA_BYTES)
		return 0;
	*(uint64_t *)(arena + at) = size;
	(void)zero;			/* static memory, never reused: already zero */
	return (uint64_t)(arena + at + 16);
}

/*
 * Define each hook, and the table got.c redirects to.  The table holds each hook's local
 * alias (sym__own): the address of an exported function, taken in a shared object, is the
 * one the global scope binds, which for an injected agent is the program's allocator.
 */
static uint64_t agent_call(unsigned int idx, unsigned int fn, uint64_t ra, uint64_t fp,
			   uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e, uint64_t f);

#define X(sym, shape, family, core)						\
	AGENT_API uint64_t sym(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e,	\
			       uint64_t f)						\
	{									\
		return agent_call(HOOK_##sym, LT_FN_##shape,			\
				  (uint64_t)__builtin_return_address(0),		\
				  *(uint64_t *)__builtin_frame_address(0), a, b, c, d, e, f); \
	}									\
	static __typeof__(sym) sym##__own __attribute__((alias(#sym)));
LT_ALLOC_FNS(X)
#undef X

const struct agent_hook agent_hooks[] = {
#define X(sym, shape, family, core)	{ #sym, (void *)sym##__own, &real[HOOK_##sym], LT_FN_##shape },
	LT_ALLOC_FNS(X)
#undef X
};
const unsigned int agent_n_hooks = N_HOOKS;

static void mark_pass_only(void)
{
	Dl_info m, o;

	if (!real[HOOK_malloc] || !dladdr(real[HOOK_malloc], &m))
		return;
	for (unsigned int i = 0; i < N_HOOKS; i++)
		if (is_cxx[i] && real[i] && dladdr(real[i], &o) && o.dli_fbase != m.dli_fbase)
			pass_only[i] = 1;
}

int agent_resolve(unsigned int flags)
{
	int expect = 0;

	if (__atomic_load_n(&resolved, __ATOMIC_ACQUIRE) == 2 || resolving)
		return 0;
	if (!__atomic_compare_exchange_n(&resolved, &expect, 1, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		/* Another thread resolves (only at start-up): wait for it. */
		while (__atomic_load_n(&resolved, __ATOMIC_ACQUIRE) != 2)
			__builtin_ia32_pause();
		return 0;
	}
	resolving = 1;
	for (unsigned int i = 0; i < N_HOOKS; i++) {
		void *p = dlsym((flags & LT_AGENT_INJECTED) ? RTLD_DEFAULT : RTLD_NEXT,
				agent_hooks[i].name);

		/* Never ourselves: an injected agent found first would call itself. */
		if (p == agent_hooks[i].hook)
			p = 0;
		if (!__atomic_load_n(&real[i], __ATOMIC_RELAXED))
			__atomic_store_n(&real[i], p, __ATOMIC_RELEASE);
	}
	mark_pass_only();
	resolving = 0;
	__atomic_store_n(&resolved, 2, __ATOMIC_RELEASE);
	return 0;
}

static uint64_t mul_sat(uint64_t n, uint64_t m)
{
	uint64_t r;

	return __builtin_mul_overflow(n, m, &r) ? ~0ULL : r;
}

/* The requested size and the pointer argument of an entry of shape fn. */
static uint64_t shape_size(unsigned int fn, uint64_t a, uint64_t b, uint64_t c)
{
	switch (fn) {
	case LT_FN_CALLOC:
		return mul_sat(a, b);
	case LT_FN_REALLOC:
	case LT_FN_ALIGNED_ALLOC:
	case LT_FN_MEMALIGN:
		return b;
	case LT_FN_REALLOCARRAY:
		return mul_sat(b, c);
	case LT_FN_POSIX_MEMALIGN:
		return c;
	default:
		return a;
	}
}

/* An entry whose real function does not exist (its allocator is not loaded). */
static uint64_t absent(unsigned int fn)
{
	if (fn == LT_FN_FREE)
		return 0;
	errno = ENOMEM;
	return fn == LT_FN_POSIX_MEMALIGN ? ENOMEM : 0;
}

/* While this thread resolves: the arena serves, frees of its blocks are ignored. */
static uint64_t bootstrap(unsigned int fn, uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t size = shape_size(fn, a, b, c), p;

	switch (fn) {
	case LT_FN_FREE:
		return 0;
	case LT_FN_POSIX_MEMALIGN:
		if (b > 16)
			return ENOMEM;
		p = arena_alloc(size, 0);
		if (!p)
			return ENOMEM;
		*(uint64_t *)a = p;
		return 0;
	case LT_FN_REALLOC:
	case LT_FN_REALLOCARRAY:
		p = arena_alloc(size, 0);
		if (p && a && in_arena(a)) {
			uint64_t old = *(uint64_t *)(a - 16);

			__builtin_memcpy((void *)p, (void *)a, old < size ? old : size);
		}
		return p;
	case LT_FN_ALIGNED_ALLOC:
	case LT_FN_MEMALIGN:
		return a > 16 ? 0 : arena_alloc(size, 0);
	default:
		return arena_alloc(size, fn == LT_FN_CALLOC);
	}
}

/* realloc of an arena block, after resolution: a real block with its bytes. */
static uint64_t arena_realloc(uint64_t old, uint64_t size)
{
	real_fn m = (real_fn)real[HOOK_malloc];
	uint64_t osz = *(uint64_t *)(old - 16), p;

	if (!m)
		return 0;
	p = m(size, 0, 0, 0, 0, 0);
	if (p)
		__builtin_memcpy((void *)p, (void *)old, osz < size ? osz : size);
	return p;
}

static uint64_t agent_call(unsigned int idx, unsigned int fn, uint64_t ra, uint64_t fp,
			   uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e, uint64_t f)
{
	real_fn r = (real_fn)__atomic_load_n(&real[idx], __ATOMIC_ACQUIRE);
	struct lt_agent_hdr *ch;
	uint64_t size, ret, addr;
	uint32_t site = 0;
	uint64_t old_size = 0;
	int held = 0;

	if (__builtin_expect(!r, 0)) {
		if (resolving)
			return bootstrap(fn, a, b, c);
		agent_resolve(0);
		r = (real_fn)__atomic_load_n(&real[idx], __ATOMIC_ACQUIRE);
		if (!r)
			return absent(fn);
	}
	/* Arena blocks never reach the real allocator. */
	if (__builtin_expect(fn == LT_FN_FREE && in_arena(a), 0))
		return 0;
	if (__builtin_expect((fn == LT_FN_REALLOC || fn == LT_FN_REALLOCARRAY) && in_arena(a), 0))
		return arena_realloc(a, shape_size(fn, a, b, c));

	if (pass_only[idx])
		return r(a, b, c, d, e, f);
	ch = agent_channel;
	if (__builtin_expect(!ch && !in_hook && !resolving && !agent_started, 0)) {
		/* Calls before the constructor ran (other libraries' initializers). */
		in_hook = 1;
		agent_early_start();
		in_hook = 0;
		ch = agent_channel;
	}
	if (!ch || in_hook) {
		if (ch && in_hook)
			agent_count(ch, LT_AGENT_CNT_NESTED);
		return r(a, b, c, d, e, f);
	}
	in_hook = 1;
	agent_count(ch, LT_AGENT_CNT_CALLS);
	agent_tick(ch);
	size = shape_size(fn, a, b, c);

	switch (fn) {
	case LT_FN_FREE:
		/* Out of the records before the block is free for another thread to get. */
		if (a && agent_record_take(ch, a, &site, &old_size))
			agent_record_freed(ch, site, old_size);
		else if (a)
			agent_count(ch, LT_AGENT_CNT_FREE_UNKNOWN);
		ret = r(a, b, c, d, e, f);
		in_hook = 0;
		return ret;
	case LT_FN_REALLOC:
	case LT_FN_REALLOCARRAY:
		if (a) {
			held = agent_record_take(ch, a, &site, &old_size);
			if (!held)
				agent_count(ch, LT_AGENT_CNT_FREE_UNKNOWN);
		}
		ret = r(a, b, c, d, e, f);
		if (held) {
			/* realloc(p, n) frees p when it succeeds, and when n is 0 (glibc). */
			if (ret || size == 0)
				agent_record_freed(ch, site, old_size);
			else
				agent_record_put_back(ch, a, site, old_size);
		}
		addr = ret;
		break;
	case LT_FN_POSIX_MEMALIGN:
		ret = r(a, b, c, d, e, f);
		addr = ((int)ret == 0 && a) ? *(uint64_t *)a : 0;
		break;
	default:
		ret = r(a, b, c, d, e, f);
		addr = ret;
		break;
	}
	if (addr)
		agent_record_alloc(ch, addr, size, ra, fp);
	else if (size || (fn != LT_FN_REALLOC && fn != LT_FN_REALLOCARRAY))
		agent_count(ch, LT_AGENT_CNT_FAILED);
	in_hook = 0;
	return ret;
}
