#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# frames.sh - frames that outlive their process.  A process that exits before leaktop reads
# its memory map (it exits in a millisecond, or leaktop is not scheduled for a while) still
# gets every frame named: the stack walk notes, for each frame of a stack it stores, the
# file the frame lies in (device, inode, offset), and leaktop names the frame from that file
# (loaded already for another process, or opened by the name the kernel gave it, if that
# still leads to the same file).
#
# tests/progs/short_lived.c leaks 1 x 111 bytes in leak_in_lib() of its own library
# (libshort_lived.so, which nothing else maps) and 1 x 222 bytes in leak_in_main(), appends
# its pid to a file and exits.  A bash loop runs it SL_RUNS times under a whole-system
# leaktop; "leaktop is late" is made certain by stopping leaktop (SIGSTOP) meanwhile.

. "$(dirname "$0")/lib.sh"
require_root
require_built short_lived libshort_lived.so

SL=$E2E_TMP/short_lived
SL_RUNS=20
SL_PIDS=""		# the JSON array of the short_lived processes' pids
SL_EXECD=""		# and of every process of the test that exec'd (the loop's bash too)

run_short_lived() {
	local loop_pid
	mkdir -p "$SL"
	: >"$SL/seen"
	SL_OFF=0
	lt_bg "$SL/out.jsonl" "$SL/err" -b --exact -i "$INTERVAL" -j -
	wait_lines "$SL/out.jsonl" 1 || return 1
	signal STOP "$LT_PID"
	bash -c 'echo $$ >"$1/loop_pid"; for ((i = 0; i < $2; i++)); do "$3" "$1/pids"; done' \
		loop "$SL" "$SL_RUNS" "$PROGS/short_lived"
	local ok=$?
	signal CONT "$LT_PID"
	expect_eq "the loop's exit status" 0 "$ok" || return 1
	SL_PIDS=$(jq -s -c . "$SL/pids")
	loop_pid=$(pid_in "$SL/loop_pid")
	SL_EXECD=$(jq -c --argjson loop "$loop_pid" '. + [$loop]' <<<"$SL_PIDS")
	# leaktop catches up with what happened while it was stopped (events, stacks) in as
	# many intervals as that takes: until every short_lived was reported.
	wait_until "every short_lived reported" sl_all_seen || return 1
	wait_two_more "$SL/out.jsonl" || return 1
	signal INT "$LT_PID"
	wait_exit "$LT_PID" || return 1
	expect_eq "leaktop's exit status" 0 "$WAIT_STATUS" || return 1
	# Every report of the test's processes, as one array (parsed once leaktop is gone: only
	# theirs are kept), and each one's last report.
	complete_lines "$SL/out.jsonl" | jq -c --argjson pids "$SL_EXECD" \
		'.processes[] | select(.pid as $p | $pids | index($p))' | jq -s -c . \
		>"$SL/ours.json"
	jq -c 'group_by([.pid, .comm]) | map(last)' "$SL/ours.json" >"$SL/last.json"
}

sl() { scenario run_short_lived; }

# sl_seen_new: the pids of the short_lived processes reported in the snapshots completed since
# the last call, appended to SL/seen.  Whole-system snapshots are big (every site of every
# process, the test's own shell among them), and under --exact a jq that parses them pays a
# probe per allocation it makes: a poll that parsed them falls behind the file it reads.
# grep reads each snapshot once, as text.
SL_OFF=0	# bytes of out.jsonl looked at so far (complete lines only)
sl_seen_new() {
	local n
	tail -c +$((SL_OFF + 1)) "$SL/out.jsonl" >"$SL/chunk"
	n=$(wc -l <"$SL/chunk")
	if [ "$n" -gt 0 ]; then
		head -n "$n" "$SL/chunk" >"$SL/chunk.lines"
		SL_OFF=$((SL_OFF + $(stat -c %s "$SL/chunk.lines")))
		grep -o '"pid":[0-9]*,"comm":"short_lived"' "$SL/chunk.lines" |
			sed 's/^"pid":\([0-9]*\),.*/\1/' >>"$SL/seen"
	fi
	rm -f "$SL/chunk" "$SL/chunk.lines"
}

# Has every short_lived process (SL_PIDS) been reported?  (What the reports say of their
# frames is what the tests check, in every report.)
sl_all_seen() {
	local n
	sl_seen_new
	n=$(sort -u "$SL/seen" | grep -c -x -F -f <(jq -r '.[]' <<<"$SL_PIDS"))
	[ "$n" -eq "$SL_RUNS" ]
}

# The reports of short_lived's images (not of the loop's forks before they exec'd it).
JQ_DEFS+='
def sl($pids): select(.comm == "short_lived" and (.pid as $p | $pids | index($p)));
'

test_frames_short_lived_processes_all_reported() {
	sl || return 1
	expect_jq "short_lived processes reported" "$SL_RUNS" "$SL/last.json" \
		'[.[] | sl($pids)] | length' --argjson pids "$SL_PIDS"
}

# The sites of a process as [first function, count, bytes, [function, module]... up to main].
SL_SITES='[.sites[] | select(.kind == "heap") |
	[.stack[0].symbol, .outstanding_count, .outstanding_bytes,
	 [.stack | (map(.symbol) | index("main")) as $m | .[0:($m // -1) + 1][] |
	  [.symbol, (.module | base)]]]] | sort'

test_frames_of_processes_gone_before_leaktop_looks_name_library_and_program() {
	sl || return 1
	local want
	want='[["leak_in_lib",1,111,[["leak_in_lib","libshort_lived.so"],'
	want+='["short_lib_leak","libshort_lived.so"],["main","short_lived"]]],'
	want+='["leak_in_main",1,222,[["leak_in_main","short_lived"],["main","short_lived"]]]]'
	# Every run alike: one answer.
	expect_jq "short_lived's heap sites as [function, count, bytes, [[function, module]...]], the distinct answers of its $SL_RUNS runs" \
		"[$want]" "$SL/last.json" \
		"[.[] | sl(\$pids) | $SL_SITES] | unique" \
		--argjson pids "$SL_PIDS"
}

test_frames_of_processes_gone_before_leaktop_looks_all_have_a_module() {
	sl || return 1
	expect_jq "frames of short_lived's sites without a module, as [pid, addr]" '[]' \
		"$SL/ours.json" '[.[] | sl($pids) | .pid as $p |
		 .sites[] | .stack[] | select(.module == null) | [$p, .addr]] | unique' \
		--argjson pids "$SL_PIDS" || return 1
	expect_jq "short_lived's frames (all its sites)" true "$SL/last.json" \
		'[.[] | sl($pids) | .sites[] | .stack[]] | length >=
		 5 * $n' --argjson pids "$SL_PIDS" --argjson n "$SL_RUNS"
}

# The issue's "no frame of a process that was seen to exec lacks a module", on the test's
# own: the loop's bash (exec'd by the test, allocating, gone while leaktop was stopped) and
# every short_lived, in every report of them.
test_frames_no_frame_of_an_execd_process_lacks_a_module() {
	sl || return 1
	expect_jq "frames without a module of the test's exec'd processes, as [pid, comm, addr]" \
		'[]' "$SL/ours.json" '[.[] | .pid as $p | .comm as $c | .sites[] |
		 .stack[] | select(.module == null) | [$p, $c, .addr]] | unique' || return 1
	expect_jq "the loop's bash has heap sites" true "$SL/last.json" \
		'[.[] | select(.pid == ($pids | last)) | .sites[] | select(.kind == "heap")] |
		 length > 0' --argjson pids "$SL_EXECD"
}

run_tests
