#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# retention.sh - why reachable growth is still held: the scan's retention paths
# (sites[].retained_by) on tests/progs/retain_table.c, traced with `leaktop scan -p`: a
# global hash table (g_sessions, allocated by table_new, its bucket array by dict_expand)
# gains session_new entries forever, and a thread named "holder" grows a list of hold_node
# blocks whose head is only a local of holder_loop.  Both sites grow (flagged) and every
# block is reachable; the assertions are on the first snapshot where both are flagged and
# scanned.

. "$(dirname "$0")/lib.sh"
require_root
require_built retain_table

RT=$E2E_TMP/retention
RT_PID=""

# The latest snapshot, once session_new and hold_node are flagged and have retention paths.
both_flagged_and_held() {
	last_line "$RT/out.jsonl" "$RT/alive.json"
	[ "$(jqc "$RT/alive.json" '[procs($pid) | .sites[] | select(.kind == "heap" and
		(.stack[0].symbol == "session_new" or .stack[0].symbol == "hold_node") and
		.flagged and (.retained_by | length) > 0)] | length' --argjson pid "$RT_PID")" == 2 ]
}

run_retention() {
	mkdir -p "$RT/dir"
	"$PROGS/retain_table" "$RT/dir" &
	BG_PIDS+=("$!")
	wait_file "$RT/dir/ready" || return 1
	RT_PID=$(pid_in "$RT/dir/ready")
	lt_bg "$RT/out.jsonl" "$RT/err" scan -p "$RT_PID" -i "$INTERVAL" -j -
	wait_file "$RT/out.jsonl" || return 1
	wait_lines "$RT/out.jsonl" 1 || return 1
	touch "$RT/dir/go"
	wait_until "session_new and hold_node flagged, with retention paths" \
		both_flagged_and_held || {
		fail_because "no such snapshot; stderr: $(cat "$RT/err")"
		return 1
	}
	touch "$RT/dir/quit"
	signal INT "$LT_PID"
	wait_exit "$LT_PID"
}

rt() { scenario run_retention; }

# retained SYMBOL JQ: JQ over the largest retention path of the site allocating in SYMBOL.
retained() {
	jqc "$RT/alive.json" "[procs(\$pid) | sites_at(\$sym) | .retained_by[0] | $2] | first" \
		--argjson pid "$RT_PID" --arg sym "$1"
}

test_growing_global_table_is_held_by_the_global_through_its_bucket_array() {
	rt || return 1
	expect_eq "root of session_new's blocks" '["global","g_sessions (retain_table, .bss)"]' \
		"$(retained session_new '[.root.kind, .root.name]')" || return 1
	expect_eq "sites between the root and session_new" '["table_new","dict_expand"]' \
		"$(retained session_new '[.chain[].symbol]')" || return 1
	# Every entry is in the table: the path holds all of the site's reachable bytes.
	expect_eq "share held that way" 1 "$(retained session_new '.share')"
}

test_list_held_by_a_thread_frame_names_the_function_and_the_thread() {
	rt || return 1
	local name tid
	name=$(retained hold_node '.root.name')
	tid=$(retained hold_node '.root.thread')
	expect_eq "root kind of hold_node's blocks" '"stack"' "$(retained hold_node '.root.kind')" ||
		return 1
	expect_eq "root of hold_node's blocks" "\"frame of holder_loop, thread $tid (holder)\"" \
		"$name" || return 1
	[ "$tid" != "$RT_PID" ] || fail_because "the holder's frame named the main thread ($tid)"
}

run_tests
