/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * nofp_call.h - nofp_call(fn) calls fn with %rbp zero, as code that uses %rbp as a general
 * register leaves it (glibc's printf, any -fomit-frame-pointer build): a frame pointer walk
 * from anywhere below it ends there.  Its CFI says where the caller's %rbp and return address
 * are, so a CFI walk goes on.  Include it in one file of a program.
 */
#ifndef LEAKTOP_TEST_NOFP_CALL_H
#define LEAKTOP_TEST_NOFP_CALL_H

void nofp_call(void (*fn)(void));
__asm__(".pushsection .text\n"
	".type nofp_call, @function\n"
	"nofp_call:\n"
	".cfi_startproc\n"
	"push %rbp\n"
	".cfi_adjust_cfa_offset 8\n"
	".cfi_rel_offset %rbp, 0\n"
	"xor %ebp, %ebp\n"
	"call *%rdi\n"
	"pop %rbp\n"
	".cfi_adjust_cfa_offset -8\n"
	".cfi_restore %rbp\n"
	"ret\n"
	".cfi_endproc\n"
	".size nofp_call, .-nofp_call\n"
	".popsection\n");

#endif
