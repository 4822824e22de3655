#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# scan.sh - the reachability scan, `leaktop scan -p PID`, on real heap shapes.
#
# tests/progs/scan_shapes.c allocates, while traced, one shape per allocating function: a
# dropped tree of 127 blocks, the same tree kept in a global, a dropped two-block cycle, the
# same with blocks whose next chunk's header (which glibc points at) lies inside them, a
# block known only through an interior pointer, blocks whose pointer is only on a thread's
# stack or only in a register, and a block pointed to only by memory allocated before
# tracing.  The assertions are on a snapshot taken after the program allocated, summed per
# allocating function (each tree node's stack differs by its depth, so it is its own site).

. "$(dirname "$0")/lib.sh"
require_root
require_built scan_shapes

SS=$E2E_TMP/scan_shapes
SS_PID=""

run_scan_shapes() {
	mkdir -p "$SS/dir"
	"$PROGS/scan_shapes" "$SS/dir" &
	BG_PIDS+=("$!")
	wait_file "$SS/dir/ready" || return 1
	SS_PID=$(pid_in "$SS/dir/ready")
	lt_bg "$SS/out.jsonl" "$SS/err" scan -p "$SS_PID" -i "$INTERVAL" -j -
	# Traced once leaktop wrote a snapshot: only then may the program allocate.
	wait_file "$SS/out.jsonl" || return 1
	wait_lines "$SS/out.jsonl" 1 || return 1
	touch "$SS/dir/go"
	wait_file "$SS/dir/done" || return 1
	# The second snapshot from now holds a scan made after the program's last allocation.
	wait_two_more "$SS/out.jsonl" || return 1
	last_line "$SS/out.jsonl" "$SS/alive.json"
	touch "$SS/dir/quit"
	wait_exit "$LT_PID" || return 1
	[ -s "$SS/alive.json" ] || fail_because "no snapshot; stderr: $(cat "$SS/err")"
}

ss() { scenario run_scan_shapes; }

# lost_at SYMBOL: the classes of the blocks allocated in SYMBOL, summed over its sites, as
# [definite, indirect, possible, reachable] each [count, bytes].
lost_at() {
	jqc "$SS/alive.json" '[procs($pid) | .sites[] | select(.kind == "heap" and
		.stack[0].symbol == $sym) | .lost] as $l |
		["definite", "indirect", "possible", "reachable"] |
		map(. as $k | [([$l[][$k].count] | add), ([$l[][$k].bytes] | add)])' \
		--argjson pid "$SS_PID" --arg sym "$1"
}

expect_lost() {
	local sym=$1 want=$2 got
	got=$(lost_at "$sym")
	[ "$got" == "$want" ] || fail_because "blocks from $sym as [definite, indirect," \
		"possible, reachable] of [count, bytes]: got $got, expected $want; scan:" \
		"$(jqc "$SS/alive.json" '[procs($pid) | .scan]' --argjson pid "$SS_PID")"
}

test_dropped_tree_is_one_definite_root_and_126_indirect_blocks() {
	ss || return 1
	expect_lost node_dropped '[[1,32],[126,4032],[0,0],[0,0]]'
}

test_tree_kept_in_a_global_is_all_reachable() {
	ss || return 1
	expect_lost node_kept '[[0,0],[0,0],[0,0],[127,4064]]'
}

test_dropped_cycle_is_one_definite_and_one_indirect_block() {
	ss || return 1
	expect_lost cycle_block '[[1,48],[1,48],[0,0],[0,0]]'
}

test_dropped_cycle_is_definite_and_indirect_when_glibc_points_at_a_chunk_header_inside() {
	ss || return 1
	expect_lost odd_cycle_block '[[1,40],[1,40],[0,0],[0,0]]'
}

test_block_reached_only_through_interior_pointer_is_possibly_lost() {
	ss || return 1
	expect_lost interior_block '[[0,0],[0,0],[1,64],[0,0]]'
}

test_pointer_only_on_a_thread_stack_keeps_block_reachable() {
	ss || return 1
	expect_lost stack_block '[[0,0],[0,0],[0,0],[1,80]]'
}

test_pointer_only_in_a_register_keeps_block_reachable() {
	ss || return 1
	expect_lost reg_block '[[0,0],[0,0],[0,0],[1,96]]'
}

test_block_pointed_to_by_memory_from_before_tracing_is_not_lost() {
	ss || return 1
	expect_lost pre_target '[[0,0],[0,0],[0,0],[1,112]]'
}

test_leak_graph_names_tree_root_with_what_it_drags() {
	ss || return 1
	expect_jq "leak graph entry of the dropped tree as [symbol, size, blocks, bytes, edges
		found, edges kept]" '[["node_dropped",32,127,4064,126,64]]' \
		"$SS/alive.json" '[procs($pid) | .leak_graph[] |
		select(.root.symbol == "node_dropped") |
		[.root.symbol, .root.size, .blocks, .bytes, .edges_total, (.edges | length)]]' \
		--argjson pid "$SS_PID"
}

test_leak_graph_edges_link_blocks_of_the_cycle() {
	ss || return 1
	expect_jq "edges of the dropped cycle as [offset, from root, to root]" \
		'[[0,true,false],[0,false,true]]' "$SS/alive.json" '[procs($pid) |
		.leak_graph[] | select(.root.symbol == "cycle_block") | .root.addr as $r |
		.edges[] | [.offset, .from == $r, .to == $r]] | sort | reverse' \
		--argjson pid "$SS_PID"
}

test_scan_reports_its_stop_time_and_threads() {
	ss || return 1
	expect_jq "scan summary as [threads, stop_ms > 0, stop_ms < 2000]" '[3,true,true]' \
		"$SS/alive.json" '[procs($pid) | .scan | .threads, .stop_ms > 0, .stop_ms < 2000]' \
		--argjson pid "$SS_PID"
}

test_scanned_process_runs_on_and_exits_normally() {
	ss || return 1
	WAIT_LIMIT=$EXIT_WAIT_S wait_until "scan_shapes to exit" not_running "$SS_PID" || return 1
	expect_eq "leaktop's stderr" "leaktop: every traced process has exited" "$(cat "$SS/err")"
}

# stopped_samples PID: of 20 looks at PID's threads 50 ms apart, how many found one in a
# tracing stop ('t').
stopped_samples() {
	local i n=0
	for ((i = 0; i < 20; i++)); do
		grep -q '^State:[[:space:]]*t' /proc/"$1"/task/*/status 2>/dev/null && n=$((n + 1))
		sleep 0.05
	done
	echo "$n"
}

# 512 MiB take far longer than 5 ms to copy: the limit holds inside the mapping's copy, and
# the scan says it is partial instead of overrunning; the process is never left stopped.
test_scan_past_its_stop_limit_is_partial_and_leaves_process_running() {
	local d=$E2E_TMP/partial pid stopped others
	mkdir -p "$d/dir"
	"$PROGS/scan_shapes" "$d/dir" 512 &
	BG_PIDS+=("$!")
	wait_file "$d/dir/ready" || return 1
	pid=$(pid_in "$d/dir/ready")
	lt_bg "$d/out.jsonl" "$d/err" -b -p "$pid" -i "$INTERVAL" --scan-every "$INTERVAL" \
		--scan-max-stop 5 -j -
	wait_file "$d/out.jsonl" || return 1
	wait_lines "$d/out.jsonl" 3 || return 1
	# A scan stops it for about 5 ms per interval: a look rarely finds it stopped.
	stopped=$(stopped_samples "$pid")
	touch "$d/dir/go"
	wait_file "$d/dir/done" || return 1
	touch "$d/dir/quit"
	wait_exit "$LT_PID" || return 1
	# Every scan is partial, or failed to stop a thread within 5 ms on a busy machine.
	expect_eq "partial scans as [any, all stopped < 100 ms, all read less than the total, all totals >= 512 MiB], and scans that completed" \
		'[true,true,true,true] 0' \
		"$(jqs "$d/out.jsonl" '[.[] | procs($pid) | .scan | select(.partial != null)] |
		[length > 0, all(.partial.stop_ms < 100),
		 all(.partial.bytes_read < .partial.bytes_total),
		 all(.partial.bytes_total >= 536870912)]' --argjson pid "$pid") $(jqs \
		"$d/out.jsonl" '[.[] | procs($pid) | .scan | select(.error == null)] | length' \
		--argjson pid "$pid")" || return 1
	expect_match "scan error" "reached its 5 ms stop limit while copying memory: partial, nothing classified" \
		"$(jqs "$d/out.jsonl" '[.[] | procs($pid) | .scan.error] | map(select(. != null and
		test("stop limit"))) | .[0]' --argjson pid "$pid")" || return 1
	[ "$stopped" -le 3 ] || fail_because "found stopped at $stopped of 20 looks" || return 1
	# Once per cause: again only after another cause came between.
	others=$(jqs "$d/out.jsonl" '[.[] | procs($pid) | .scan.error | select(. != null and
		(test("stop limit") | not))] | length' --argjson pid "$pid")
	[ "$others" != 0 ] || expect_eq "stderr lines (once per cause)" 1 \
		"$(grep -c 'stop limit' "$d/err")"
}

# ------------------------------------------------------------ saved snapshots

reports_in() { grep -c '^leaktop [0-9]' "$1" 2>/dev/null; }
reports_at_least() { [ "$(reports_in "$1")" -ge "$2" ]; }

test_report_of_saved_snapshot_prints_the_leak_lines_batch_mode_printed() {
	local d=$E2E_TMP/scan_report n
	mkdir -p "$d/dir"
	"$PROGS/scan_shapes" "$d/dir" &
	BG_PIDS+=("$!")
	wait_file "$d/dir/ready" || return 1
	lt_bg "$d/batch.txt" "$d/err" scan -p "$(pid_in "$d/dir/ready")" -i "$INTERVAL" \
		-j "$d/snap.json"
	wait_snapshot_file "$d/snap.json" "$d/err" || return 1
	touch "$d/dir/go"
	wait_file "$d/dir/done" || return 1
	# Two reports from now hold a scan made after the program's last allocation.
	n=$(reports_in "$d/batch.txt")
	wait_until "two more batch reports" reports_at_least "$d/batch.txt" $((n + 2)) || return 1
	touch "$d/dir/quit"
	wait_exit "$LT_PID" || return 1
	# The snapshot file is the model of the last report: compare that report's leak lines.
	awk '/^leaktop [0-9]/ { buf = "" } /^  leak: / { buf = buf $0 "\n" }
	     END { printf "%s", buf }' "$d/batch.txt" >"$d/batch.leaks"
	"$LEAKTOP" report "$d/snap.json" >"$d/report.txt" 2>"$d/report.err"
	grep '^  leak: ' "$d/report.txt" >"$d/report.leaks"
	expect_eq "leak lines of the last batch report (node_dropped and cycle_block roots)" 2 \
		"$(grep -c 'allocated in \(node_dropped\|cycle_block\): fix there' \
		"$d/batch.leaks")" || return 1
	expect_eq "leak lines of 'leaktop report' of the saved snapshot" \
		"$(cat "$d/batch.leaks")" "$(cat "$d/report.leaks")"
}

# ------------------------------------------------------------ refusals

test_process_already_traced_is_refused_politely() {
	local d=$E2E_TMP/traced
	mkdir -p "$d/dir"
	strace -o /dev/null -f "$PROGS/scan_shapes" "$d/dir" &
	BG_PIDS+=("$!")
	wait_file "$d/dir/ready" || return 1
	lt_fg "$d/out" "$d/err" scan -p "$(pid_in "$d/dir/ready")" -i 0.2 -d 1
	touch "$d/dir/go" "$d/dir/quit"
	expect_match "stderr" "^leaktop: cannot scan process [0-9]+: process [0-9]+ is already being traced by process [0-9]+ \(a debugger\?\); detach the debugger" "$(head -n 1 "$d/err")" || return 1
	expect_eq "stderr lines (once per cause)" 1 "$(stderr_lines "$d/err")"
}

test_scan_without_pid_is_a_usage_error() {
	lt_fg "$E2E_TMP/nopid.out" "$E2E_TMP/nopid.err" scan
	expect_eq "exit status" 2 "$LT_STATUS" || return 1
	expect_eq "stderr" "leaktop: scan needs a process; give -p PID" "$(cat "$E2E_TMP/nopid.err")"
}

run_tests
