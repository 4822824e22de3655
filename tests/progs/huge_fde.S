/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * huge_fde.S - a library whose call frame information is crafted to be slow to read: each
 * of its HUGE_FDES functions has one FDE of 2 x HUGE_PAIRS rows (nop, then the CFA moved by
 * 8 and back), far more than real code has (Debian's largest: 6,678 rows, in cc1).  libdw
 * interprets an FDE from its start for each row, so reading every row of it costs seconds
 * (review C3).  huge_fde_call(fn) calls fn from inside the first of them, so a stack walk
 * through fn's callees passes through it; huge_fde_other() is an ordinary function after
 * them.  Built into a shared library by tests/unit (test_cfi) and tests/e2e/hostile_elf.sh.
 */
#ifndef HUGE_FDES
#define HUGE_FDES	8
#endif
#ifndef HUGE_PAIRS
#define HUGE_PAIRS	20000
#endif

	.text

/* void huge_fde_call(void (*fn)(void)) */
	.globl	huge_fde_call
	.type	huge_fde_call, @function
huge_fde_call:
	.cfi_startproc
	subq	$8, %rsp
	.cfi_adjust_cfa_offset 8
	.rept	HUGE_PAIRS
	nop
	.cfi_adjust_cfa_offset 8
	nop
	.cfi_adjust_cfa_offset -8
	.endr
	call	*%rdi
	addq	$8, %rsp
	.cfi_adjust_cfa_offset -8
	ret
	.cfi_endproc
	.size	huge_fde_call, .-huge_fde_call

/* More of the same, never called. */
	.rept	HUGE_FDES - 1
	.cfi_startproc
	.rept	HUGE_PAIRS
	nop
	.cfi_adjust_cfa_offset 8
	nop
	.cfi_adjust_cfa_offset -8
	.endr
	ret
	.cfi_endproc
	.endr

/* int huge_fde_other(void): an ordinary function, its rows after the crafted ones. */
	.globl	huge_fde_other
	.type	huge_fde_other, @function
huge_fde_other:
	.cfi_startproc
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_offset %rbp, -16
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	movl	$42, %eax
	popq	%rbp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size	huge_fde_other, .-huge_fde_other

	.section .note.GNU-stack,"",@progbits
