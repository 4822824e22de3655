#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# stop_at.sh - allocation sequence numbers and --stop-at (issue 17):
#   - seq_leak makes ten blocks at make_block() and leaks the 3rd, 7th and 9th: the scan
#     lists sequence numbers 3, 7 and 9 for that site (and the leak graph's roots carry them);
#   - a second run with --stop-at make_block:7 (the number the first run's scan gave)
#     stops the process at the return of exactly that allocation: 6 earlier blocks of the
#     site outstanding plus the 7th, the block the program itself later reports as its 7th;
#     leaktop writes its final snapshot, says how to debug or resume, and exits 0, leaving
#     the process stopped; SIGCONT resumes it and it finishes normally;
#   - with -p, a site id (the JSON's stack_id, from an earlier leaktop run on the same
#     process) works as SITE; numbers count from when tracing began;
#   - SITE naming no function of the program is refused in one line, before anything runs.
source "$(dirname "$0")/lib.sh"

require_root
require_built seq_leak steady_grow

T=$E2E_TMP/stop_at
mkdir -p "$T"

# state PID: the process state letter (/proc/PID/stat field 3), "" once gone.
state() {
	local stat
	{ read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 0
	stat=${stat##*) }
	echo "${stat%% *}"
}
is_stopped() { [ "$(state "$1")" = T ]; }
is_gone() { [ -z "$(state "$1")" ] || [ "$(state "$1")" = Z ]; }

# ---------------------------------------------------------------- run 1: the scan

# seq_leak under -- with a scan every interval; its last scan after the leak.
scan_run() {
	local d=$T/scan
	mkdir -p "$d/dir"
	touch "$d/dir/go"
	lt_bg "$d/out.jsonl" "$d/err" -b -i "$INTERVAL" --scan-every "$INTERVAL" -j - -- \
		"$PROGS/seq_leak" "$d/dir"
	wait_file "$d/dir/done" || return 1
	SCAN_PID=$(pid_in "$d/dir/done")
	wait_until "a scan after the leak" scanned_after_leak || return 1
	touch "$d/dir/quit"
	wait_exit "$LT_PID" || return 1
	expect_eq "exit status (stderr: $(cat "$d/err"))" 0 "$WAIT_STATUS"
}
SCAN_PID=""
# The latest snapshot whose scan saw make_block's three lost blocks.
scanned_after_leak() {
	last_line "$T/scan/out.jsonl" "$T/scan/last.json"
	json_true "$T/scan/last.json" '[procs($pid) | .sites[] | select(.kind == "heap" and
		any(.stack[]; .symbol == "make_block")) | .lost.definite.count] == [3]' \
		--argjson pid "$SCAN_PID"
}

test_seq_scan_lists_the_numbers_of_the_definitely_lost_blocks() {
	scenario scan_run || return 1
	expect_jq "make_block's site: [allocs, frees, definite count, definite seqs]" \
		'[[10,7,3,[3,7,9]]]' "$T/scan/last.json" '[procs($pid) | .sites[] |
		select(.kind == "heap" and any(.stack[]; .symbol == "make_block")) |
		[.allocs, .frees, .lost.definite.count, .lost.definite.seqs]]' \
		--argjson pid "$SCAN_PID"
}

test_seq_leak_graph_roots_carry_their_numbers() {
	scenario scan_run || return 1
	expect_jq "leak roots of make_block's site, by seq" '[3,7,9]' "$T/scan/last.json" \
		'[procs($pid) | .leak_graph[] | .root |
		select(.symbol == "make_block") | .seq] | sort' --argjson pid "$SCAN_PID"
}

# ---------------------------------------------------------------- run 2: --stop-at under --

STOP_PID=""
stop_run() {
	local d=$T/stop n
	scenario scan_run || return 1
	# N from the first run: the second definitely lost block's number.
	n=$(jqc "$T/scan/last.json" '[procs($pid) | .sites[] | select(.kind == "heap" and
		any(.stack[]; .symbol == "make_block")) | .lost.definite.seqs[1]][0]' \
		--argjson pid "$SCAN_PID")
	expect_eq "the first run's second lost block" 7 "$n" || return 1
	mkdir -p "$d/dir"
	touch "$d/dir/go"
	lt_fg "$d/out" "$d/err" -b -i "$INTERVAL" -j "$d/snap.json" --stop-at "make_block:$n" \
		-- "$PROGS/seq_leak" "$d/dir"
	expect_eq "leaktop's exit status (stderr: $(cat "$d/err"))" 0 "$LT_STATUS" || return 1
	STOP_PID=$(pid_in "$d/dir/ready")
	[ -n "$STOP_PID" ] || fail_because "the program never started" || return 1
	BG_STOPPED+=("$STOP_PID")
}
BG_STOPPED=()
# Stopped processes this script left: resumed and told to quit at the end.
resume_stopped() {
	local pid
	for pid in "${BG_STOPPED[@]}"; do
		kill -CONT "$pid" 2>/dev/null
	done
}
trap 'resume_stopped; touch "$T"/*/dir/quit 2>/dev/null; e2e_cleanup' EXIT

test_stop_at_leaves_the_process_stopped_after_leaktop_exits() {
	scenario stop_run || return 1
	expect_eq "state of pid $STOP_PID" T "$(state "$STOP_PID")"
}

test_stop_at_stopped_at_the_seventh_allocation_with_six_earlier_blocks_outstanding() {
	scenario stop_run || return 1
	# The site, in the final snapshot: 7 allocations, none freed (6 earlier + the 7th).
	expect_jq "stop_at [pid, seq, size]; its site [allocs, frees, outstanding]" \
		"[[$STOP_PID,7,48],[[7,0,7]]]" "$T/stop/snap.json" \
		'[[.stop_at.pid, .stop_at.seq, .stop_at.size_bytes], [procs($pid) | .sites[] |
		select(.kind == "heap" and .stack_id == $id) |
		[.allocs, .frees, .outstanding_count]]]' \
		--argjson pid "$STOP_PID" --arg id "$(jq -r .stop_at.stack_id "$T/stop/snap.json")"
}

test_stop_at_reports_the_block_its_stack_and_how_to_debug() {
	scenario stop_run || return 1
	json_true "$T/stop/snap.json" '.stop_at.stack[0].symbol == "make_block" and
		any(.stop_at.stack[]; .symbol == "main")' ||
		fail_because "stop_at stack: $(jqc "$T/stop/snap.json" '[.stop_at.stack[].symbol]')" ||
		return 1
	grep -q "at allocation 7 of site" "$T/stop/err" &&
		grep -q "gdb -p $STOP_PID" "$T/stop/err" && grep -q "kill -CONT $STOP_PID" "$T/stop/err" &&
		grep -q "make_block" "$T/stop/err" ||
		fail_because "stderr: $(cat "$T/stop/err")"
}

test_stop_at_resumed_with_sigcont_the_process_finishes_and_the_block_was_its_seventh() {
	scenario stop_run || return 1
	local addr want
	kill -CONT "$STOP_PID"
	wait_file "$T/stop/dir/done" || return 1
	# The program's own account: its 7th block is the one leaktop stopped at.
	want=$(awk '$1 == 7 { print $2 }' "$T/stop/dir/blocks")
	addr=$(jq -r .stop_at.addr "$T/stop/snap.json")
	expect_eq "the stopped-at block" "$want" "$addr" || return 1
	touch "$T/stop/dir/quit"
	wait_until "pid $STOP_PID to end" is_gone "$STOP_PID"
}

# ---------------------------------------------------------------- -p and a site id

PID_RUN_PID=""
pid_run() {
	local d=$T/pid id
	mkdir -p "$d/dir"
	"$PROGS/steady_grow" "$d/dir" 48 20 &
	PID_RUN_PID=$!
	BG_PIDS+=("$PID_RUN_PID")
	wait_file "$d/dir/ready" || return 1
	# A first leaktop run names the site...
	lt_fg "$d/first.out" "$d/first.err" -b -i "$INTERVAL" -d 1 -j "$d/first.json" \
		-p "$PID_RUN_PID"
	id=$(jqc "$d/first.json" '[procs($pid) | .sites[] | select(.kind == "heap" and
		.stack[0].symbol == "grow_leak") | .stack_id][0]' --argjson pid "$PID_RUN_PID" |
		tr -d '"')
	[[ $id =~ ^[0-9a-f]{16}$ ]] ||
		fail_because "no grow_leak site id in the first run: $id" || return 1
	SITE_ID=$id
	# ... a second stops at the 5th allocation it sees there.
	BG_STOPPED+=("$PID_RUN_PID")
	lt_fg "$d/out" "$d/err" -b -i "$INTERVAL" -j "$d/snap.json" --stop-at "$id:5" \
		-p "$PID_RUN_PID"
	expect_eq "leaktop's exit status (stderr: $(cat "$d/err"))" 0 "$LT_STATUS"
}
SITE_ID=""

test_stop_at_site_id_under_pid_stops_at_the_fifth_allocation_since_tracing_began() {
	scenario pid_run || return 1
	expect_eq "state of pid $PID_RUN_PID" T "$(state "$PID_RUN_PID")" || return 1
	expect_jq "stop_at [stack_id, seq]; the site's allocs" "[[\"$SITE_ID\",5],[5]]" \
		"$T/pid/snap.json" '[[.stop_at.stack_id, .stop_at.seq], [procs($pid) | .sites[] |
		select(.stack_id == $id) | .allocs]]' --argjson pid "$PID_RUN_PID" --arg id "$SITE_ID"
}

test_stop_at_resumed_process_under_pid_goes_on_allocating() {
	scenario pid_run || return 1
	kill -CONT "$PID_RUN_PID"
	wait_until "pid $PID_RUN_PID to run again" not_stopped "$PID_RUN_PID"
}
not_stopped() { ! is_stopped "$1"; }

# ---------------------------------------------------------------- refusals

test_stop_at_a_function_the_program_does_not_have_is_refused_in_one_line() {
	mkdir -p "$T/none"
	lt_fg "$T/none/out" "$T/none/err" -b --stop-at no_such_function_here:3 -- \
		"$PROGS/seq_leak" "$T/none"
	expect_eq "exit status" 1 "$LT_STATUS" || return 1
	expect_eq "stderr lines ($(cat "$T/none/err"))" 1 "$(stderr_lines "$T/none/err")" || return 1
	expect_match "message" "no function 'no_such_function_here'" "$(cat "$T/none/err")" ||
		return 1
	[ ! -e "$T/none/ready" ] || fail_because "the command ran"
}

test_stop_at_refuses_bad_forms_and_the_whole_system() {
	local arg
	for arg in "make_block" "make_block:0" ":3" "make_block:x"; do
		lt_fg "$T/bad.out" "$T/bad.err" --stop-at "$arg" -- true
		expect_eq "exit status for '$arg'" 2 "$LT_STATUS" || return 1
		expect_match "message for '$arg'" "invalid --stop-at" "$(cat "$T/bad.err")" ||
			return 1
	done
	lt_fg "$T/bad.out" "$T/bad.err" --stop-at make_block:3
	expect_eq "exit status (whole system)" 2 "$LT_STATUS" || return 1
	expect_match "message" "give -p PID or -- CMD" "$(cat "$T/bad.err")"
}

run_tests
