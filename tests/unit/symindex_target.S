/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * symindex_target.S - symbols that test the rules of libdwfl's choice (test_symindex.c
 * compares the index with dwfl_module_addrinfo() at every byte): a global function holding a
 * weak and a local one; three names (global, weak, global) for one function; local and global
 * labels without size between sized functions, two at one address; a weak function that
 * overlaps the end of a global one; an absolute symbol.  Built as a shared object.
 */
	.text
	.p2align 4
	.globl	outer
	.type	outer, @function
outer:
	.fill 16, 1, 0x90
	.weak	inner_weak
	.type	inner_weak, @function
inner_weak:
	.fill 16, 1, 0x90
	.size	inner_weak, 16
	.type	inner_local, @function
inner_local:
	.fill 32, 1, 0x90
	.size	inner_local, 16
	.size	outer, 64
	.weak	alias_w
	.type	alias_w, @function
	.globl	alias_a
	.type	alias_a, @function
	.globl	alias_b
	.type	alias_b, @function
alias_w:
alias_a:
alias_b:
	.fill 32, 1, 0x90
	.size	alias_w, 32
	.size	alias_a, 32
	.size	alias_b, 32
local_label1:
	.fill 8, 1, 0x90
local_label2:
	.fill 8, 1, 0x90
	.globl	glabel
glabel:
	.fill 8, 1, 0x90
	.type	lfunc, @function
lfunc:
	.fill 16, 1, 0x90
	.size	lfunc, 16
	.globl	glabel2
glabel2:
local_same:
	.fill 8, 1, 0x90
	.globl	ov_g
	.type	ov_g, @function
ov_g:
	.fill 8, 1, 0x90
	.weak	ov_w
	.type	ov_w, @function
ov_w:
	.fill 8, 1, 0x90
	.size	ov_g, 16
	.fill 8, 1, 0x90
	.size	ov_w, 16
	.fill 16, 1, 0x90
	.globl	abs_sym
	.set	abs_sym, 0x40
	.section .note.GNU-stack,"",@progbits
