#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# stacks.sh - what a frame-pointer walk keeps when %rbp holds no frame pointer.
#
# tests/progs/garbage_frames.c allocates and dups with %rbp pointing at fake frames whose
# "return addresses" are garbage of three kinds (text read off a stack, a heap address after
# bytes that look like a call, code that follows no call) or a real return address followed
# by garbage.  The walk keeps a return address only if it follows a call instruction and lies
# in an executable mapping of a file, and stops at the first that fails (counted in
# stats.stack_truncated): the garbage variants are one site, no frame lacks a module.

. "$(dirname "$0")/lib.sh"
require_root
require_built garbage_frames

GF=$E2E_TMP/garbage_frames
GF_PID=""

run_garbage_frames() {
	run_to_done "$GF" garbage_frames || return 1
	GF_PID=$DONE_PID
}

gf() { scenario run_garbage_frames; }

# The stacks of KIND sites of the program as [[outstanding_count, outstanding_bytes,
# [symbol or address, ...]], ...] whose first frame is SYMBOL, sorted.
gf_stacks() {
	jqc "$GF/alive.json" '[procs($pid) | .sites[] |
		select(.kind == $kind and .stack[0].symbol == $sym) |
		[.outstanding_count, .outstanding_bytes, [.stack[] | .symbol // .addr]]] | sort' \
		--argjson pid "$GF_PID" --arg kind "$1" --arg sym "$2"
}

test_stack_garbage_return_addresses_of_every_kind_make_one_site() {
	gf || return 1
	# 9 blocks of 40 bytes through three kinds of garbage frame; without the check each
	# kind (and each heap address) is a site of its own with a frame outside every module.
	expect_eq "heap sites at alloc_with_rbp as [count, bytes, frames]" \
		'[[3,120,["alloc_with_rbp","main"]],[9,360,["alloc_with_rbp"]]]' \
		"$(gf_stacks heap alloc_with_rbp)"
}

test_stack_walk_keeps_real_frames_before_the_first_bad_one() {
	gf || return 1
	# CHAIN: a real return address into main(), then garbage: main stays, the garbage goes.
	expect_jq "frames of the CHAIN site" '[["alloc_with_rbp","main"]]' "$GF/alive.json" \
		'[procs($pid) | .sites[] | select(.kind == "heap" and .outstanding_count == 3 and
		  .outstanding_bytes == 120) | [.stack[] | .symbol]]' --argjson pid "$GF_PID"
}

test_stack_fd_walk_stops_at_garbage_too() {
	gf || return 1
	expect_eq "fd sites at dup_with_rbp as [count, bytes, frames]" \
		'[[1,0,["dup_with_rbp","main"]],[2,0,["dup_with_rbp"]]]' \
		"$(gf_stacks fd dup_with_rbp)"
}

test_stack_no_frame_lies_outside_every_module() {
	gf || return 1
	expect_jq "frames of the program without a module" '[]' "$GF/alive.json" \
		'[procs($pid) | .sites[] | .stack[] | select(.module == null) | .addr]' \
		--argjson pid "$GF_PID"
}

test_stack_truncated_walks_are_counted() {
	gf || return 1
	# 12 allocations and the CHAIN dup stop at a bad frame (other walks may too).
	expect_jq "stats.stack_truncated >= 13" true "$GF/alive.json" '.stats.stack_truncated >= 13'
}

test_stack_run_has_no_drops() {
	gf || return 1
	expect_no_drops "$GF/out.jsonl" jsonl
}

run_tests
