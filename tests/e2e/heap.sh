#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# heap.sh - what leaktop counts for each allocator function, in `leaktop -- CMD` mode.
#
# tests/progs/heap_kinds.c leaks a known number of blocks of known sizes through every
# allocator leaktop probes, each from its own function, plus freed churn, realloc chains,
# realloc(p, 0), free(NULL) and failed allocations; the numbers below mirror it.  The
# program waits (DIR/done, DIR/quit) until leaktop has taken a snapshot of it alive, then
# exits; the assertions are on leaktop's final snapshot.

. "$(dirname "$0")/lib.sh"
require_root
require_built heap_kinds free_consumer map_hog thread_leak reallocarray_zero realloc_race

HK=$E2E_TMP/heap_kinds
HK_PID=""

run_heap_kinds() {
	run_to_done "$HK" heap_kinds || return 1
	HK_PID=$DONE_PID
	HK_STATUS=$WAIT_STATUS
}

hk() { scenario run_heap_kinds; }

# ------------------------------------------------------------ one allocator each

test_malloc_leak_counted_at_leaking_function() {
	hk || return 1
	expect_site "$HK/final.json" "$HK_PID" leak_malloc 3 303 3 0
}

test_calloc_counts_n_times_size() {
	hk || return 1
	expect_site "$HK/final.json" "$HK_PID" leak_calloc 2 182 2 0
}

test_realloc_of_null_is_an_alloc_at_realloc_call_site() {
	hk || return 1
	expect_site "$HK/final.json" "$HK_PID" leak_realloc_null 4 844 4 0
}

test_reallocarray_counts_n_times_size_once() {
	hk || return 1
	expect_site "$HK/final.json" "$HK_PID" leak_reallocarray 2 170 2 0
}

test_posix_memalign_block_counted_through_out_pointer() {
	hk || return 1
	expect_site "$HK/final.json" "$HK_PID" leak_posix_memalign 3 900 3 0
}

test_aligned_alloc_leak_counted() {
	hk || return 1
	expect_site "$HK/final.json" "$HK_PID" leak_aligned_alloc 2 512 2 0
}

test_memalign_counted_once_per_call() {
	hk || return 1
	expect_site "$HK/final.json" "$HK_PID" leak_memalign 3 360 3 0
}

test_valloc_counts_requested_size() {
	hk || return 1
	expect_site "$HK/final.json" "$HK_PID" leak_valloc 2 666 2 0
}

test_pvalloc_counts_requested_size() {
	hk || return 1
	expect_site "$HK/final.json" "$HK_PID" leak_pvalloc 2 888 2 0
}

test_leak_sites_point_at_source_line_and_caller() {
	local kind
	hk || return 1
	for kind in malloc calloc realloc_null reallocarray posix_memalign aligned_alloc \
		memalign valloc pvalloc; do
		expect_site_location "$HK/final.json" "$HK_PID" "leak_$kind" heap_kinds.c "$kind" \
			main heap_kinds || return 1
	done
}

test_alloc_bytes_is_total_ever_allocated_at_site() {
	hk || return 1
	expect_jq "alloc_bytes of the leak_malloc, churn_malloc and chain_grow2 sites" \
		'[303,3200,10000]' "$HK/final.json" \
		'[procs($pid) | (sites_at("leak_malloc"), sites_at("churn_malloc"),
		  sites_at("chain_grow2")) | .alloc_bytes]' --argjson pid "$HK_PID"
}

# ------------------------------------------------------------ frees

test_churn_site_fully_freed() {
	hk || return 1
	expect_site "$HK/final.json" "$HK_PID" churn_malloc 0 0 50 50 || return 1
	expect_site_location "$HK/final.json" "$HK_PID" churn_malloc heap_kinds.c churn_malloc \
		main heap_kinds
}

test_free_matches_blocks_of_every_allocator() {
	hk || return 1
	# churn_kinds: nine call sites (one per allocator), each 5 allocs all freed.
	expect_jq "churn_kinds sites as [count, bytes, allocs, frees]" \
		'[[0,0,5,5],[0,0,5,5],[0,0,5,5],[0,0,5,5],[0,0,5,5],[0,0,5,5],[0,0,5,5],[0,0,5,5],[0,0,5,5]]' \
		"$HK/final.json" '[procs($pid) | sites_at("churn_kinds") | nums]' --argjson pid "$HK_PID"
}

test_realloc_chain_leaves_block_at_last_realloc_site() {
	hk || return 1
	# realloc_chain() runs twice: malloc(16) -> realloc 48 -> 5000 -> 70000, kept.
	expect_site "$HK/final.json" "$HK_PID" chain_start 0 0 2 2 || return 1
	expect_site "$HK/final.json" "$HK_PID" chain_grow1 0 0 2 2 || return 1
	expect_site "$HK/final.json" "$HK_PID" chain_grow2 0 0 2 2 || return 1
	expect_site "$HK/final.json" "$HK_PID" chain_grow3 2 140000 2 0 || return 1
	expect_site_location "$HK/final.json" "$HK_PID" chain_grow3 heap_kinds.c chain_grow3 \
		realloc_chain heap_kinds
}

test_realloc_in_place_still_moves_block_to_realloc_site() {
	hk || return 1
	# heap_kinds exits 3 if the shrinking realloc moved the block (checked by the scenario).
	expect_site "$HK/final.json" "$HK_PID" shrink_start 0 0 1 1 || return 1
	expect_site "$HK/final.json" "$HK_PID" shrink_in_place 1 400 1 0
}

test_realloc_to_zero_frees_and_allocates_nothing() {
	hk || return 1
	expect_site "$HK/final.json" "$HK_PID" zero_start 0 0 1 1 || return 1
	expect_no_site "$HK/final.json" "$HK_PID" realloc_to_zero
}

test_failed_realloc_leaves_block_alive_at_its_site() {
	hk || return 1
	expect_site "$HK/final.json" "$HK_PID" realloc_fail_start 1 40 1 0 || return 1
	expect_no_site "$HK/final.json" "$HK_PID" realloc_fail
}

test_mmap_sized_blocks_counted() {
	hk || return 1
	expect_site "$HK/final.json" "$HK_PID" leak_big 1 1048576 1 0 || return 1
	expect_site "$HK/final.json" "$HK_PID" churn_big 0 0 3 3
}

test_realloc_of_mmapped_block_moves_it_to_realloc_site() {
	hk || return 1
	expect_site "$HK/final.json" "$HK_PID" big_start 0 0 1 1 || return 1
	expect_site "$HK/final.json" "$HK_PID" big_grow 1 600000 1 0
}

test_free_of_null_ignored() {
	hk || return 1
	# Every free() of heap_kinds is of a block leaktop saw allocated; free(NULL) is no event.
	expect_jq "stats.free_unknown" 0 "$HK/final.json" '.stats.free_unknown'
}

test_failed_allocations_not_counted() {
	hk || return 1
	expect_jq "stats.failed_allocs (malloc(SIZE_MAX), calloc(SIZE_MAX, 2), realloc(p, SIZE_MAX))" 3 \
		"$HK/final.json" '.stats.failed_allocs' || return 1
	expect_no_site "$HK/final.json" "$HK_PID" fail_alloc
}

test_nested_allocator_calls_counted_once() {
	hk || return 1
	# 136 allocations and 107 frees in all (see heap_kinds.c); realloc(NULL, n) and
	# reallocarray() call other allocators inside libc, which must not add blocks.
	expect_jq "heap totals [outstanding_count, outstanding_bytes, allocs, frees]" \
		'[29,1793841,136,107]' "$HK/final.json" \
		'[procs($pid) | .heap | [.outstanding_count, .outstanding_bytes, .allocs, .frees]][0]' \
		--argjson pid "$HK_PID"
}

test_process_heap_totals_are_sums_of_sites() {
	hk || return 1
	expect_jq "heap totals minus sums over sites" '[0,0,0,0]' "$HK/final.json" \
		'[procs($pid) | . as $p | [.sites[] | select(.kind == "heap")] |
		  [($p.heap.outstanding_count - (map(.outstanding_count) | add)),
		   ($p.heap.outstanding_bytes - (map(.outstanding_bytes) | add)),
		   ($p.heap.allocs - (map(.allocs) | add)),
		   ($p.heap.frees - (map(.frees) | add))]][0]' --argjson pid "$HK_PID"
}

# ------------------------------------------------------------ the run itself

# reallocarray(p, 0, n) is realloc(p, 0): a free, not a failed allocation.
RZ=$E2E_TMP/reallocarray_zero
RZ_PID=""

run_reallocarray_zero() {
	mkdir -p "$RZ/dir"
	lt_bg "$RZ/out.jsonl" "$RZ/err" -b -i "$INTERVAL" -j - -- "$PROGS/reallocarray_zero" \
		"$RZ/dir"
	wait_file "$RZ/dir/done" || return 1
	RZ_PID=$(pid_in "$RZ/dir/done")
	wait_two_more "$RZ/out.jsonl" || return 1
	touch "$RZ/dir/quit"
	wait_exit "$LT_PID" || return 1
	last_line "$RZ/out.jsonl" "$RZ/final.json"
	expect_eq "leaktop's exit status" 0 "$WAIT_STATUS"
}

test_reallocarray_to_zero_frees_and_is_not_a_failure() {
	scenario run_reallocarray_zero || return 1
	expect_site "$RZ/final.json" "$RZ_PID" zero_array_start 0 0 1 1 || return 1
	expect_no_site "$RZ/final.json" "$RZ_PID" reallocarray_to_zero || return 1
	expect_jq "stats.failed_allocs" 0 "$RZ/final.json" '.stats.failed_allocs'
}

test_reallocarray_zero_run_has_no_drops() {
	scenario run_reallocarray_zero || return 1
	expect_no_drops "$RZ/out.jsonl" jsonl
}

# A consumer thread that only frees frees one address twice in a row (a producer thread got
# it back in between): both frees are real (tests/progs/free_consumer.c).
FC=$E2E_TMP/free_consumer
FC_PID=""

run_free_consumer() {
	run_to_done "$FC" free_consumer -r heap || return 1
	FC_PID=$DONE_PID
}

test_consumer_freeing_an_address_twice_in_a_row_leaves_nothing_outstanding() {
	scenario run_free_consumer || return 1
	# produce() is called from three places: a site each; their sums.
	expect_jq "produce()'s sites summed as [count, bytes, allocs, frees]" '[0,0,27,27]' \
		"$FC/alive.json" '[procs($pid) | sites_at("produce")] |
		[(map(.outstanding_count) | add), (map(.outstanding_bytes) | add),
		 (map(.allocs) | add), (map(.frees) | add)]' --argjson pid "$FC_PID"
}

# A process holds at most its share of the live-block table (--map-share 1: 1% of 2,097,152
# records, 20,971); the blocks past it are counted against it (tests/progs/map_hog.c).  Its
# snapshots are not named *.json: their drops are the point, not a loss of this script's.
MH=$E2E_TMP/map_hog
MH_PID=""

run_heap_share() {
	mkdir -p "$MH/dir"
	lt_bg "$MH/out.lines" "$MH/err" -b -i "$INTERVAL" -r heap --map-share 1 -j - -- \
		"$PROGS/map_hog" "$MH/dir" heap 30000
	wait_file "$MH/dir/done" || return 1
	MH_PID=$(pid_in "$MH/dir/done")
	wait_two_more "$MH/out.lines" || return 1
	last_line "$MH/out.lines" "$MH/alive.snap"
	touch "$MH/dir/quit"
	wait_exit "$LT_PID"
}

test_process_holds_its_share_of_live_blocks_and_the_rest_is_counted_against_it() {
	scenario run_heap_share || return 1
	expect_jq "the process's outstanding blocks (its share)" 20971 "$MH/alive.snap" \
		'[procs($pid) | .heap.outstanding_count][0]' --argjson pid "$MH_PID" || return 1
	expect_jq "its heap drops, at least 30000 - 20971" true "$MH/alive.snap" \
		'[procs($pid) | .drops.heap >= 9029][0]' --argjson pid "$MH_PID" || return 1
	expect_jq "stats.drops.heap_share" true "$MH/alive.snap" \
		'.stats.drops.heap_share == ([procs($pid) | .drops.heap][0])' --argjson pid "$MH_PID"
}

test_heap_kinds_run_has_no_drops() {
	hk || return 1
	expect_no_drops "$HK/out.jsonl" jsonl
}

test_snapshot_has_schema_and_stats() {
	hk || return 1
	expect_jq "schema and stats fields" \
		'["leaktop.snapshot/1",true,true,true,true,true,true,true]' "$HK/final.json" \
		'[.schema, (.stats | has("events"), has("dropped"), has("drops"),
		  has("free_unknown"), has("nested"), has("failed_allocs")), (.stats.probes > 0)]'
}

test_live_process_has_counters_and_is_not_exited() {
	hk || return 1
	expect_jq "[exited, rss_bytes > 0, vm_bytes > 0, fd_count > 0, threads] while alive" \
		'[false,true,true,true,1]' "$HK/alive.json" \
		'[procs($pid) | [.exited, (.counters.rss_bytes > 0), (.counters.vm_bytes > 0),
		  (.counters.fd_count > 0), .counters.threads]][0]' --argjson pid "$HK_PID" || return 1
	# heap_kinds has a heap and maps its libc: both kinds of resident memory are there,
	# and the kinds add up to about the whole (statm and status are two readings).
	expect_jq "[rss_anon_bytes > 0, rss_file_bytes > 0, anon + file + shmem ~ rss]" \
		'[true,true,true]' "$HK/alive.json" \
		'[procs($pid) | .counters | [(.rss_anon_bytes > 0), (.rss_file_bytes > 0),
		  ((.rss_anon_bytes + .rss_file_bytes + .rss_shmem_bytes - .rss_bytes) | fabs <
		   1048576)]][0]' --argjson pid "$HK_PID" || return 1
	expect_site "$HK/alive.json" "$HK_PID" leak_malloc 3 303 3 0
}

test_exited_command_in_final_snapshot_with_null_counters() {
	hk || return 1
	expect_jq "[comm, exited, counters] of the command in the final snapshot" \
		'[["heap_kinds",true,{"rss_bytes":null,"vm_bytes":null,"fd_count":null,"threads":null,"rss_anon_bytes":null,"rss_file_bytes":null,"rss_shmem_bytes":null}]]' \
		"$HK/final.json" '[procs($pid) | [.comm, .exited, .counters]]' --argjson pid "$HK_PID"
}

test_command_mode_reports_exit_status_on_stderr() {
	hk || return 1
	expect_eq "leaktop's exit status" 0 "$HK_STATUS" || return 1
	expect_eq "last line of leaktop's stderr" \
		"leaktop: $PROGS/heap_kinds exited with status 0" "$(tail -n 1 "$HK/err")"
}

test_command_nonzero_exit_status_reported() {
	local d=$E2E_TMP/status3
	mkdir -p "$d"
	lt_fg "$d/out.jsonl" "$d/err" -b -i "$INTERVAL" -j - -- /bin/sh -c 'exit 3'
	expect_eq "last line of leaktop's stderr" "leaktop: /bin/sh exited with status 3" \
		"$(tail -n 1 "$d/err")"
}

# ------------------------------------------------------------ threads

TH=$E2E_TMP/threads
TH_PID=""

run_threads() {
	mkdir -p "$TH/dir"
	lt_bg "$TH/out.jsonl" "$TH/err" -b -i "$INTERVAL" -j - -- "$PROGS/thread_leak" "$TH/dir"
	wait_file "$TH/dir/done" || return 1
	TH_PID=$(pid_in "$TH/dir/done")
	wait_two_more "$TH/out.jsonl" || return 1
	touch "$TH/dir/quit"
	wait_exit "$LT_PID" || return 1
	last_line "$TH/out.jsonl" "$TH/final.json"
	expect_eq "leaktop's exit status" 0 "$WAIT_STATUS"
}

test_two_threads_leaking_at_one_function_make_one_site() {
	scenario run_threads || return 1
	expect_site "$TH/final.json" "$TH_PID" leak_in_thread 16 896 16 0 || return 1
	expect_site_location "$TH/final.json" "$TH_PID" leak_in_thread thread_leak.c thread \
		thread_main thread_leak
}

test_threads_churning_side_by_side_free_every_block() {
	scenario run_threads || return 1
	expect_site "$TH/final.json" "$TH_PID" churn_in_thread 0 0 10000 10000
}

test_block_freed_by_another_thread_taken_off_its_site() {
	scenario run_threads || return 1
	expect_site "$TH/final.json" "$TH_PID" handoff_alloc 0 0 10 10
}

test_threads_run_has_no_drops() {
	scenario run_threads || return 1
	expect_no_drops "$TH/out.jsonl" jsonl
}

# realloc_race.c: a thread's malloc gets the block another thread's realloc freed inside
# libc before that realloc returned (DIR/hits times); 60000 rounds each, 1200 blocks kept.
RR=$E2E_TMP/realloc_race
RR_PID=""

run_realloc_race() {
	run_to_done "$RR" realloc_race || return 1
	RR_PID=$DONE_PID
	expect_eq "leaktop's exit status" 0 "$WAIT_STATUS"
}

test_block_reused_during_realloc_keeps_its_new_owner() {
	scenario run_realloc_race || return 1
	expect_site "$RR/alive.json" "$RR_PID" keep_block 1200 2457600 1200 0 || return 1
	expect_site "$RR/alive.json" "$RR_PID" take_block 0 0 58800 58800 || return 1
	# Each thread's exit frees its malloc thread cache, which glibc allocated without
	# calling malloc: 2 frees of blocks leaktop never saw; the program has no other.
	expect_jq "stats.free_unknown (the two threads' exits)" 2 "$RR/alive.json" \
		'.stats.free_unknown'
}

test_realloc_racing_malloc_frees_every_moved_block_once() {
	scenario run_realloc_race || return 1
	expect_site "$RR/alive.json" "$RR_PID" move_start 0 0 60000 60000 || return 1
	expect_site "$RR/alive.json" "$RR_PID" move_guard 0 0 60000 60000 || return 1
	expect_site "$RR/alive.json" "$RR_PID" move_grow 0 0 60000 60000
}

test_realloc_race_was_exercised() {
	scenario run_realloc_race || return 1
	[ "$(cat "$RR/dir/hits")" -gt 0 ] ||
		fail_because "no malloc got a block while a realloc that freed it was in progress"
}

test_realloc_race_run_has_no_drops() {
	scenario run_realloc_race || return 1
	expect_no_drops "$RR/out.jsonl" jsonl
}

# ------------------------------------------------------------ every run

# Runs after every other test of this script: no run above lost an event.
test_every_run_of_this_script_dropped_nothing() {
	expect_no_drops_anywhere
}

run_tests
