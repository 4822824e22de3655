/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * alloc_fns.h - every allocator entry point leaktop knows, by symbol, with its argument
 * shape (enum lt_alloc_fn without its LT_FN_ prefix), its family (STD, CXX, JE, TC, MI) and
 * whether it is its family's `core` pair (its malloc and its free make an object an
 * allocator).  The one list: the uprobe plan (user/live/probes.c) and the in-process agent's
 * hooks (user/agent/hooks.c) both expand it, so the two paths trace the same functions.
 *
 * Usage: #define X(sym, shape, family, core) ..., then LT_ALLOC_FNS(X).  Every name is a C
 * identifier (the mangled C++ names included).  Not here: functions that only report or
 * resize in place (xallocx, malloc_usable_size), helpers that allocate through a listed entry
 * (strdup), and mimalloc's mi_reallocf (it frees its block when it fails, which the realloc
 * shape would not see).
 */
#ifndef LEAKTOP_AGENT_ALLOC_FNS_H
#define LEAKTOP_AGENT_ALLOC_FNS_H

#define LT_ALLOC_FNS(X) \
	/* the C library's names */ \
	X(malloc, MALLOC, STD, 1) \
	X(calloc, CALLOC, STD, 0) \
	X(realloc, REALLOC, STD, 0) \
	X(reallocarray, REALLOCARRAY, STD, 0) \
	X(free, FREE, STD, 1) \
	X(posix_memalign, POSIX_MEMALIGN, STD, 0) \
	X(aligned_alloc, ALIGNED_ALLOC, STD, 0) \
	X(memalign, MEMALIGN, STD, 0) \
	X(valloc, VALLOC, STD, 0) \
	X(pvalloc, PVALLOC, STD, 0) \
	X(cfree, FREE, STD, 0) \
	X(free_sized, FREE, STD, 0) \
	X(free_aligned_sized, FREE, STD, 0) \
	/* C++ operator new and delete, every variant */ \
	X(_Znwm, MALLOC, CXX, 0) \
	X(_Znam, MALLOC, CXX, 0) \
	X(_ZnwmRKSt9nothrow_t, MALLOC, CXX, 0) \
	X(_ZnamRKSt9nothrow_t, MALLOC, CXX, 0) \
	X(_ZnwmSt11align_val_t, MALLOC, CXX, 0) \
	X(_ZnamSt11align_val_t, MALLOC, CXX, 0) \
	X(_ZnwmSt11align_val_tRKSt9nothrow_t, MALLOC, CXX, 0) \
	X(_ZnamSt11align_val_tRKSt9nothrow_t, MALLOC, CXX, 0) \
	X(_ZdlPv, FREE, CXX, 0) \
	X(_ZdaPv, FREE, CXX, 0) \
	X(_ZdlPvm, FREE, CXX, 0) \
	X(_ZdaPvm, FREE, CXX, 0) \
	X(_ZdlPvRKSt9nothrow_t, FREE, CXX, 0) \
	X(_ZdaPvRKSt9nothrow_t, FREE, CXX, 0) \
	X(_ZdlPvSt11align_val_t, FREE, CXX, 0) \
	X(_ZdaPvSt11align_val_t, FREE, CXX, 0) \
	X(_ZdlPvmSt11align_val_t, FREE, CXX, 0) \
	X(_ZdaPvmSt11align_val_t, FREE, CXX, 0) \
	X(_ZdlPvSt11align_val_tRKSt9nothrow_t, FREE, CXX, 0) \
	X(_ZdaPvSt11align_val_tRKSt9nothrow_t, FREE, CXX, 0) \
	/* jemalloc: the *allocx API (size first, then flags), and a je_ prefix when built so */ \
	X(mallocx, MALLOC, JE, 1) \
	X(rallocx, REALLOC, JE, 0) \
	X(dallocx, FREE, JE, 1) \
	X(sdallocx, FREE, JE, 0) \
	X(je_malloc, MALLOC, JE, 1) \
	X(je_calloc, CALLOC, JE, 0) \
	X(je_realloc, REALLOC, JE, 0) \
	X(je_free, FREE, JE, 1) \
	X(je_posix_memalign, POSIX_MEMALIGN, JE, 0) \
	X(je_aligned_alloc, ALIGNED_ALLOC, JE, 0) \
	X(je_memalign, MEMALIGN, JE, 0) \
	X(je_valloc, VALLOC, JE, 0) \
	X(je_mallocx, MALLOC, JE, 0) \
	X(je_rallocx, REALLOC, JE, 0) \
	X(je_dallocx, FREE, JE, 0) \
	X(je_sdallocx, FREE, JE, 0) \
	/* tcmalloc (gperftools) */ \
	X(tc_malloc, MALLOC, TC, 1) \
	X(tc_calloc, CALLOC, TC, 0) \
	X(tc_realloc, REALLOC, TC, 0) \
	X(tc_free, FREE, TC, 1) \
	X(tc_free_sized, FREE, TC, 0) \
	X(tc_cfree, FREE, TC, 0) \
	X(tc_memalign, MEMALIGN, TC, 0) \
	X(tc_posix_memalign, POSIX_MEMALIGN, TC, 0) \
	X(tc_valloc, VALLOC, TC, 0) \
	X(tc_pvalloc, PVALLOC, TC, 0) \
	X(tc_malloc_skip_new_handler, MALLOC, TC, 0) \
	X(tc_new, MALLOC, TC, 0) \
	X(tc_newarray, MALLOC, TC, 0) \
	X(tc_new_nothrow, MALLOC, TC, 0) \
	X(tc_newarray_nothrow, MALLOC, TC, 0) \
	X(tc_new_aligned, MALLOC, TC, 0) \
	X(tc_newarray_aligned, MALLOC, TC, 0) \
	X(tc_new_aligned_nothrow, MALLOC, TC, 0) \
	X(tc_newarray_aligned_nothrow, MALLOC, TC, 0) \
	X(tc_delete, FREE, TC, 0) \
	X(tc_deletearray, FREE, TC, 0) \
	X(tc_delete_nothrow, FREE, TC, 0) \
	X(tc_deletearray_nothrow, FREE, TC, 0) \
	X(tc_delete_sized, FREE, TC, 0) \
	X(tc_deletearray_sized, FREE, TC, 0) \
	X(tc_delete_aligned, FREE, TC, 0) \
	X(tc_deletearray_aligned, FREE, TC, 0) \
	X(tc_delete_sized_aligned, FREE, TC, 0) \
	X(tc_deletearray_sized_aligned, FREE, TC, 0) \
	X(tc_delete_aligned_nothrow, FREE, TC, 0) \
	X(tc_deletearray_aligned_nothrow, FREE, TC, 0) \
	/* mimalloc */ \
	X(mi_malloc, MALLOC, MI, 1) \
	X(mi_zalloc, MALLOC, MI, 0) \
	X(mi_calloc, CALLOC, MI, 0) \
	X(mi_mallocn, CALLOC, MI, 0) \
	X(mi_realloc, REALLOC, MI, 0) \
	X(mi_reallocn, REALLOCARRAY, MI, 0) \
	X(mi_reallocarray, REALLOCARRAY, MI, 0) \
	X(mi_free, FREE, MI, 1) \
	X(mi_cfree, FREE, MI, 0) \
	X(mi_free_size, FREE, MI, 0) \
	X(mi_free_aligned, FREE, MI, 0) \
	X(mi_free_size_aligned, FREE, MI, 0) \
	X(mi_malloc_aligned, MALLOC, MI, 0) \
	X(mi_zalloc_aligned, MALLOC, MI, 0) \
	X(mi_calloc_aligned, CALLOC, MI, 0) \
	X(mi_realloc_aligned, REALLOC, MI, 0) \
	X(mi_aligned_alloc, ALIGNED_ALLOC, MI, 0) \
	X(mi_memalign, MEMALIGN, MI, 0) \
	X(mi_posix_memalign, POSIX_MEMALIGN, MI, 0) \
	X(mi_valloc, VALLOC, MI, 0) \
	X(mi_pvalloc, PVALLOC, MI, 0) \
	X(mi_new, MALLOC, MI, 0) \
	X(mi_new_nothrow, MALLOC, MI, 0) \
	X(mi_new_aligned, MALLOC, MI, 0) \
	X(mi_new_aligned_nothrow, MALLOC, MI, 0) \
	X(mi_new_n, CALLOC, MI, 0) \
	X(mi_new_realloc, REALLOC, MI, 0) \
	X(mi_new_reallocn, REALLOCARRAY, MI, 0)

#endif
