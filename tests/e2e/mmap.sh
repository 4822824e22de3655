#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# mmap.sh - what leaktop counts for anonymous mappings and brk growth (-r mmap), in
# `leaktop -- CMD` mode.
#
# tests/progs/mmap_kinds.c maps, partly unmaps, remaps and grows the break from one function
# each; the numbers below mirror it.  The program waits (DIR/done, DIR/quit) until leaktop
# has taken two snapshots after its last call; the assertions are on the last of them,
# taken while it is alive.

. "$(dirname "$0")/lib.sh"
require_root
require_built mmap_kinds

MK=$E2E_TMP/mmap_kinds
MK_PID=""

# run_mmap_kinds NAME [LEAKTOP OPTIONS...]: a run into $MK/NAME.
run_mmap_kinds() {
	local name=$1
	shift
	run_to_done "$MK/$name" mmap_kinds "$@" || return 1
	MK_PID=$DONE_PID
}

run_default() { run_mmap_kinds default; }
run_no_mmap() { run_mmap_kinds no_mmap -r heap,fd; }

mk() { scenario run_default; }

# expect_mmap_site SYMBOL COUNT BYTES MAPS UNMAPS: exactly one mmap site of the program maps
# from SYMBOL (stack[0]), with those numbers.
expect_mmap_site() {
	local want="[[$2,$3,$4,$5]]" got
	got=$(jqc "$MK/default/alive.json" '[procs($pid) | .sites[] |
		select(.kind == "mmap" and .stack[0].symbol == $sym) | nums]' \
		--argjson pid "$MK_PID" --arg sym "$1")
	[ "$got" == "$want" ] ||
		fail_because "mmap sites at $1 as [[count, bytes, maps, unmaps]]: got $got," \
			"expected $want; the mmap sites as [function, count, bytes]: $(jqc \
			"$MK/default/alive.json" '[procs($pid) | .sites[] | select(.kind == "mmap") |
			[.stack[0].symbol, .outstanding_count, .outstanding_bytes]]' \
			--argjson pid "$MK_PID")"
}

# ------------------------------------------------------------ one case each

test_whole_munmap_of_one_of_three_mappings_at_one_site() {
	mk || return 1
	expect_mmap_site map_three_unmap_one 2 131072 3 1
}

test_munmap_of_the_middle_splits_one_mapping_in_two() {
	mk || return 1
	expect_mmap_site map_punch_hole 2 786432 1 0
}

test_mremap_moves_the_mapping_with_its_new_length() {
	mk || return 1
	expect_mmap_site map_then_remap 1 262144 1 0
}

test_mremap_of_three_merged_mappings_moves_them_as_the_first_ones() {
	mk || return 1
	expect_mmap_site merge_a 1 24576 1 0 &&
		expect_mmap_site merge_b 0 0 1 1 &&
		expect_mmap_site merge_c 0 0 1 1 &&
		expect_mmap_site merge_reserve 1 4096 1 0
}

test_mremap_growing_two_merged_mappings_in_place_counts_the_bytes_once() {
	mk || return 1
	expect_mmap_site grow_a 1 20480 1 0 &&
		expect_mmap_site grow_b 0 0 1 1 &&
		expect_mmap_site grow_reserve 0 0 1 1
}

test_file_mapping_is_counted_not_a_site() {
	mk || return 1
	expect_jq "mmap sites with map_file in their stack" 0 "$MK/default/alive.json" \
		'[procs($pid) | .sites[] | select(.kind == "mmap" and
		  any(.stack[]; .symbol == "map_file"))] | length' --argjson pid "$MK_PID" ||
		return 1
	json_true "$MK/default/alive.json" '.stats.mmap_file_or_shared >= 1' ||
		fail_because "stats.mmap_file_or_shared: $(jqc "$MK/default/alive.json" \
			'.stats.mmap_file_or_shared'), expected at least 1"
}

test_brk_growth_is_charged_to_its_caller() {
	mk || return 1
	expect_jq "bytes of the mmap sites with grow_brk in their stack" 12288 \
		"$MK/default/alive.json" '[procs($pid) | .sites[] | select(.kind == "mmap" and
		  any(.stack[]; .symbol == "grow_brk")) | .outstanding_bytes] | add' \
		--argjson pid "$MK_PID"
}

# brk records the break growth the program asked for, not the pages the kernel mapped.
test_brk_growth_counts_the_bytes_requested_not_pages() {
	mk || return 1
	expect_jq "bytes of the mmap sites with grow_brk_unaligned in their stack" 100 \
		"$MK/default/alive.json" '[procs($pid) | .sites[] | select(.kind == "mmap" and
		  any(.stack[]; .symbol == "grow_brk_unaligned")) | .outstanding_bytes] | add' \
		--argjson pid "$MK_PID"
}

test_mmap_fixed_over_a_mapping_splits_it_and_is_a_mapping_of_its_own() {
	mk || return 1
	expect_mmap_site map_fixed_over 2 12288 1 0 || return 1
	expect_mmap_site map_fixed_into 1 4096 1 0
}

test_munmap_across_two_adjacent_mappings_trims_both() {
	mk || return 1
	expect_mmap_site map_tiles_a 1 4096 1 0 || return 1
	expect_mmap_site map_tiles_b 1 4096 1 0 || return 1
	expect_jq "outstanding bytes of map_tiles_reserve, wholly replaced" 0 \
		"$MK/default/alive.json" '[procs($pid) | .sites[] | select(.kind == "mmap" and
		  .stack[0].symbol == "map_tiles_reserve") | .outstanding_bytes] | add // 0' \
		--argjson pid "$MK_PID"
}

test_munmap_of_a_mapping_split_by_mprotect_trims_its_record() {
	mk || return 1
	expect_mmap_site map_split_trim 1 8192 1 0
}

test_brk_shrink_releases_and_trims_the_topmost_growth() {
	mk || return 1
	expect_mmap_site brk_up_down 2 6144 3 1 || return 1
	expect_mmap_site grow_brk 1 12288 1 0
}

# ld.so's segments, MAP_FIXED over mappings, splits, brk shrinks: each unmap finds its records
# from the mappings around it, never by searching the whole map (hundreds of microseconds).
test_unmaps_of_a_program_traced_from_its_start_never_search_the_map() {
	mk || return 1
	expect_jq "stats.mmap_scans" 0 "$MK/default/alive.json" '.stats.mmap_scans'
}

test_process_mmap_totals_are_the_sum_of_its_mmap_sites() {
	mk || return 1
	expect_jq "the process's mmap object against the sum of its mmap sites" true \
		"$MK/default/alive.json" '[procs($pid) | .mmap as $m |
		  [.sites[] | select(.kind == "mmap")] as $s |
		  $m.outstanding_bytes == ([$s[].outstanding_bytes] | add) and
		  $m.outstanding_count == ([$s[].outstanding_count] | add) and
		  $m.maps == ([$s[].allocs] | add) and $m.unmaps == ([$s[].frees] | add) and
		  $m.outstanding_bytes >= 131072 + 786432 + 262144 + 12288 + 6144] | .[0]' \
		--argjson pid "$MK_PID"
}

test_mmap_run_dropped_nothing() {
	mk || return 1
	expect_no_drops "$MK/default/out.jsonl" jsonl || return 1
	expect_jq "stats.mmap_unmatched" 0 "$MK/default/alive.json" '.stats.mmap_unmatched'
}

test_resources_without_mmap_make_no_mmap_site() {
	scenario run_no_mmap || return 1
	expect_jq "mmap sites and mmap objects with -r heap,fd" '[0,0]' "$MK/no_mmap/alive.json" \
		'[([.processes[].sites[] | select(.kind == "mmap")] | length),
		  ([.processes[] | select(has("mmap"))] | length)]'
}

# ------------------------------------------------------------ every run

test_every_run_of_this_script_dropped_nothing() {
	expect_no_drops_anywhere
}

run_tests
