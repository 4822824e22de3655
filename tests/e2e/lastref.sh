#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# lastref.sh - `leaktop lastref`: where the last pointer to a block was lost.
#
# tests/progs/lastref_prog.c keeps the only pointer to one block from make_it() in a global
# it then overwrites, in a heap struct it then frees, in a local of a function that then
# returns, or (register) only in %r12 at the end.  Each run: leaktop lastref follows that
# block; once it says it watches the block's reference the program drops it; the verdict's
# function and line must be the ones the source marks with a "lastref:" comment.  After
# leaktop ends, the program is not stopped, its thread has every debug register back
# (build/tests/progs/bp_slots) and it exits normally.
# The verdicts are also in the run's snapshot (--snapshot): the process's lastref.

. "$(dirname "$0")/lib.sh"
require_root
require_built lastref_prog
require_built bp_slots
require_built hwbp_fires

SRC=$PROG_SRC/lastref_prog.c

# marker NAME: the line of SRC that carries "lastref: NAME".
marker() { grep -n "lastref: $1 \*/" "$SRC" | cut -d: -f1; }

# run_scenario NAME ARG [LEAKTOP ARGS...]: `lastref_prog DIR ARG` under leaktop lastref in
# E2E_TMP/NAME (out, err, out.json); the program is given go once leaktop watches (not with
# NO_GO set), and quit after leaktop ended (its state then in state, its granted debug
# registers in slots, its exit status in prog_status).
run_scenario() {
	local name=$2 d=$E2E_TMP/$1 pid
	shift 2
	mkdir -p "$d/dir"
	"$PROGS/lastref_prog" "$d/dir" "$name" &
	pid=$!
	BG_PIDS+=("$pid")
	echo "$pid" >"$d/pid"
	wait_file "$d/dir/ready" || return 1
	lt_bg "$d/out" "$d/err" lastref -p "$pid" --site make_it --blocks 1 -j "$d/out.json" "$@"
	wait_until "leaktop to trace" grep -q "lastref: tracing process" "$d/err" || return 1
	touch "$d/dir/alloc"
	wait_file "$d/dir/allocated" || return 1
	if [ -z "${NO_GO:-}" ]; then
		wait_until "leaktop to watch the block" grep -q "lastref: watching" "$d/err" ||
			return 1
		touch "$d/dir/go"
	fi
	wait_exit "$LT_PID" || return 1
	echo "$WAIT_STATUS" >"$d/lt_status"
	awk '/^State:/ { print $2 }' "/proc/$pid/status" >"$d/state"
	awk '/^TracerPid:/ { print $2 }' "/proc/$pid/status" >"$d/tracer"
	"$PROGS/bp_slots" "$pid" >"$d/slots"
	touch "$d/dir/go" "$d/dir/quit"
	wait_exit "$pid" || return 1
	echo "$WAIT_STATUS" >"$d/prog_status"
}

global() { scenario run_global; }
run_global() { run_scenario global global --snapshot "$E2E_TMP/global/snap.json"; }
top() { scenario run_top; }
run_top() { run_scenario top top; }
top_undropped() { scenario run_top_undropped; }
run_top_undropped() { NO_GO=1 run_scenario top_undropped top -d 3; }
uffd() { scenario run_uffd; }
run_uffd() { NO_GO=1 run_scenario uffd uffd; }
big() { scenario run_big; }
run_big() { NO_GO=1 run_scenario big big --scan-max-stop 1; }
redzone() { scenario run_redzone; }
run_redzone() { NO_GO=1 run_scenario redzone redzone -d 3; }
holder() { scenario run_holder; }
run_holder() { run_scenario holder holder; }
local_() { scenario run_local; }
run_local() { run_scenario local local; }
local_linger() { scenario run_local_linger; }
run_local_linger() { run_scenario local_linger local-linger; }
local_nofp() { scenario run_local_nofp; }
run_local_nofp() { run_scenario local_nofp local-nofp; }
register() { scenario run_register; }
run_register() { run_scenario register register; }
undropped() { scenario run_undropped; }
run_undropped() {
	NO_GO=1 run_scenario undropped global -d 3 --snapshot "$E2E_TMP/undropped/snap.json"
}

# expect_line NAME REGEX: leaktop's one stdout line of scenario NAME.
expect_line() {
	local d=$E2E_TMP/$1
	expect_eq "leaktop's exit status" 0 "$(cat "$d/lt_status")" || return 1
	expect_eq "lines on stdout" 1 "$(wc -l <"$d/out")" || return 1
	expect_match "stdout (stderr: $(tr '\n' ' ' <"$d/err"))" "$2" "$(cat "$d/out")"
}

# expect_target_unharmed NAME: not stopped, not traced, every debug register free, and it
# ran to its normal end.
expect_target_unharmed() {
	local d=$E2E_TMP/$1
	expect_match "target's state after leaktop" '^[SR]$' "$(cat "$d/state")" || return 1
	expect_eq "target's tracer after leaktop" 0 "$(cat "$d/tracer")" || return 1
	expect_eq "debug registers the target's thread can take after leaktop" 4 \
		"$(cat "$d/slots")" || return 1
	expect_eq "target's exit status" 0 "$(cat "$d/prog_status")"
}

ALLOC="allocated at make_it lastref_prog\.c:$(marker alloc)"

# Where hardware watchpoints do not fire (watchpoints_fire), leaktop says so once, writes
# "watchpoints": false, checks references by scans only, and a reference lost between two
# of them ends with what the scan saw: no function, since nobody saw the write.
NO_WP_LINE="leaktop: lastref: hardware watchpoints do not fire on this machine (a virtual machine without debug-register support): writes cannot be caught; references are checked by scans only"
SCAN_OVERWRITE="overwritten while not watched, between [0-9]+\.[0-9]{3} s and [0-9]+\.[0-9]{3} s \(it was at 0x[0-9a-f]+\)"

# expect_no_watchpoints NAME REGEX: the degraded run of scenario NAME: its stderr line (once),
# the JSON's watchpoints and unwatched, the verdict line, and its target unharmed.
expect_no_watchpoints() {
	local d=$E2E_TMP/$1
	expect_eq "lines saying watchpoints do not fire (stderr)" 1 \
		"$(grep -cxF "$NO_WP_LINE" "$d/err")" || return 1
	expect_jq "watchpoints, the verdict's unwatched" '[false,true]' "$d/out.json" \
		'[.watchpoints, .lastref[0].unwatched]' || return 1
	expect_line "$1" "$2" || return 1
	expect_target_unharmed "$1"
}

test_lastref_reports_overwrite_in_named_function() {
	global || return 1
	watchpoints_fire || {
		expect_no_watchpoints global "^last pointer to 0x[0-9a-f]+ \($ALLOC\) $SCAN_OVERWRITE$"
		return
	}
	expect_line global "^last pointer to 0x[0-9a-f]+ \($ALLOC\) overwritten at forget_it lastref_prog\.c:$(marker overwrite) \(it was at 0x[0-9a-f]+, thread [0-9]+\)$"
}

test_lastref_json_has_verdict_stack_and_reference() {
	global || return 1
	watchpoints_fire || {
		expect_jq "lastref[0] as [verdict, at, reference.kind, unwatched, size], watchpoints" \
			'["overwritten",[],"memory",true,64,false]' "$E2E_TMP/global/out.json" \
			'[(.lastref[0] | .verdict, .at, .reference.kind, .unwatched, .size), .watchpoints]'
		return
	}
	expect_jq "watchpoints" 'true' "$E2E_TMP/global/out.json" '.watchpoints' || return 1
	expect_jq "lastref[0] as [verdict, at[0].symbol, at[0].line, allocated_at.line, reference.kind, unwatched, size]" \
		"[\"overwritten\",\"forget_it\",$(marker overwrite),$(marker alloc),\"memory\",false,64]" \
		"$E2E_TMP/global/out.json" '.lastref[0] | [.verdict, .at[0].symbol, .at[0].line,
		.allocated_at.line, .reference.kind, .unwatched, .size]'
}

# A 40-byte block carved from the top of the heap: main_arena.top points 32 bytes into it
# (the top chunk's header, inside the block's last word), and moves at the program's next
# malloc.  That word is glibc's, not a reference: the verdict names forget_it, not
# _int_malloc.
test_lastref_does_not_take_glibc_arena_top_for_a_reference() {
	top || return 1
	watchpoints_fire || {
		expect_no_watchpoints top "^last pointer to 0x[0-9a-f]+ \($ALLOC\) $SCAN_OVERWRITE$" ||
			return 1
		expect_jq "size, the reference's kind" '[40,"memory"]' "$E2E_TMP/top/out.json" \
			'.lastref[0] | [.size, .reference.kind]'
		return
	}
	expect_line top "^last pointer to 0x[0-9a-f]+ \($ALLOC\) overwritten at forget_it lastref_prog\.c:$(marker overwrite) \(it was at 0x[0-9a-f]+, thread [0-9]+\)$" ||
		return 1
	expect_jq "size, the reference's kind" '[40,"memory"]' "$E2E_TMP/top/out.json" \
		'.lastref[0] | [.size, .reference.kind]'
}

# The same block, never dropped: its one reference is the program's global (the scan alone
# says so: no watchpoint has to fire).
test_lastref_counts_only_the_programs_pointer_to_a_block_at_the_heap_top() {
	top_undropped || return 1
	expect_line top_undropped "^0x[0-9a-f]+ \($ALLOC\): unresolved, 1 reference still known$" ||
		return 1
	expect_match "progress (stderr)" "watching 0x[0-9a-f]+ \(40 bytes\): 1 reference \(memory 0x[0-9a-f]+\)" \
		"$(cat "$E2E_TMP/top_undropped/err")"
}

# Memory registered with userfaultfd (kernel-mode faults: the program runs as root) would be
# read waiting for a thread the scan stopped: the scan refuses it before the stop, and the
# block gets its verdict at once (it deadlocked, leaktop in state D, the target stopped).
test_lastref_refuses_a_process_with_userfaultfd_memory() {
	uffd || return 1
	expect_line uffd "^0x[0-9a-f]+ \($ALLOC\): could not confirm: process [0-9]+ has memory registered with userfaultfd \(at 0x[0-9a-f]+\), which a scan cannot read without waiting for a thread it stopped$" ||
		return 1
	expect_target_unharmed uffd
}

# 128 MiB touched cannot be read within --scan-max-stop 1: each scan gives up, the next one
# waits (1 s, then 2 s), and the third failure is the block's verdict; the process is
# stopped three times in all, not at every turn of the loop until -d.
test_lastref_gives_up_on_a_block_its_stop_limit_cannot_scan() {
	big || return 1
	expect_line big "^0x[0-9a-f]+ \($ALLOC\): could not confirm: 3 scans reached the 1 ms stop limit \(the process is too large for it\)$" ||
		return 1
	expect_eq "scans that reached the limit (stderr)" 3 \
		"$(grep -c 'the scan reached its 1 ms stop limit' "$E2E_TMP/big/err")" || return 1
	expect_jq "verdict, reason" '["unresolved","could not confirm: 3 scans reached the 1 ms stop limit (the process is too large for it)"]' \
		"$E2E_TMP/big/out.json" '.lastref[0] | [.verdict, .reason]' || return 1
	expect_target_unharmed big
}

# The thread waits in a leaf function that keeps the only pointer in its red zone, below
# %rsp: the scan reads the red zone as the reachability scan does, the innermost frame's.
test_lastref_finds_a_pointer_kept_in_a_leaf_functions_red_zone() {
	redzone || return 1
	expect_line redzone "^0x[0-9a-f]+ \($ALLOC\): unresolved, 1 reference still known$" ||
		return 1
	expect_match "progress (stderr)" "watching 0x[0-9a-f]+ \(64 bytes\): 1 reference \(stack 0x[0-9a-f]+\)" \
		"$(cat "$E2E_TMP/redzone/err")"
}

# After keep_local returns, main's next call covers its frame without writing it, and waits
# there: the confirmation scan finds the pointer in that dead word and must not take it for
# a reference (it did, now and then: the block then ended "overwritten" by the next write).
test_lastref_returned_frame_is_lost_even_while_a_new_frame_covers_its_stale_word() {
	local_linger || return 1
	watchpoints_fire || {
		expect_no_watchpoints local_linger "^last pointer to 0x[0-9a-f]+ \($ALLOC\) lost: the frame of keep_local lastref_prog\.c:$(marker frame) that held it returned, seen by a scan between [0-9]+\.[0-9]{3} s and [0-9]+\.[0-9]{3} s \(it was at 0x[0-9a-f]+\)$"
		return
	}
	expect_line local_linger "^last pointer to 0x[0-9a-f]+ \($ALLOC\) lost: the frame of keep_local lastref_prog\.c:$(marker frame) that held it returned \(to main lastref_prog\.c:$(marker returns-to-linger)\)$"
}

# The thread waits below a function that zeroes %rbp: no frame pointer chain reaches the
# frame holding the pointer, the CFI walk does.
test_lastref_finds_the_returned_frame_below_code_without_frame_pointers() {
	local_nofp || return 1
	watchpoints_fire || {
		expect_no_watchpoints local_nofp "^last pointer to 0x[0-9a-f]+ \($ALLOC\) ($SCAN_OVERWRITE|lost: the frame of keep_local_nofp lastref_prog\.c:$(marker frame-nofp) that held it returned, seen by a scan between [0-9]+\.[0-9]{3} s and [0-9]+\.[0-9]{3} s \(it was at 0x[0-9a-f]+\))$"
		return
	}
	expect_line local_nofp "^last pointer to 0x[0-9a-f]+ \($ALLOC\) lost: the frame of keep_local_nofp lastref_prog\.c:$(marker frame-nofp) that held it returned \(to main lastref_prog\.c:$(marker returns-to-nofp)\)$"
}

test_lastref_reports_holder_freed_where_it_was_freed() {
	holder || return 1
	expect_line holder "^last pointer to 0x[0-9a-f]+ \($ALLOC\) lost: its holder 0x[0-9a-f]+ was freed at free_holder lastref_prog\.c:$(marker holder-free)$"
}

test_lastref_reports_returned_frame_and_where_it_returned_to() {
	local_ || return 1
	watchpoints_fire || {
		expect_no_watchpoints local "^last pointer to 0x[0-9a-f]+ \($ALLOC\) ($SCAN_OVERWRITE|lost: the frame of keep_local lastref_prog\.c:$(marker frame) that held it returned, seen by a scan between [0-9]+\.[0-9]{3} s and [0-9]+\.[0-9]{3} s \(it was at 0x[0-9a-f]+\))$"
		return
	}
	expect_line local "^last pointer to 0x[0-9a-f]+ \($ALLOC\) lost: the frame of keep_local lastref_prog\.c:$(marker frame) that held it returned \(to main lastref_prog\.c:$(marker returns-to)\)$"
}

test_lastref_says_a_pointer_only_in_a_register_could_not_be_watched() {
	register || return 1
	expect_line register "^last pointer to 0x[0-9a-f]+ \($ALLOC\) lived only in register r12 of thread [0-9]+ at register_only lastref_prog\.c:$(marker register): a register cannot be watched$"
}

test_lastref_at_its_duration_says_a_referenced_block_is_unresolved() {
	undropped || return 1
	expect_line undropped "^0x[0-9a-f]+ \($ALLOC\): unresolved, 1 reference still known$" ||
		return 1
	expect_jq "verdict" '"unresolved"' "$E2E_TMP/undropped/out.json" '.lastref[0].verdict'
}

# The verdicts are in the run's model: --snapshot's document (the run's -j) has them under
# the process's lastref, as -j's document has them (verdict, block, site, line); a block still
# referenced when -d ends is there too, unresolved (the final report comes after the stop).
expect_verdict_in_snapshot() {
	local d=$E2E_TMP/$1 pid want
	pid=$(cat "$d/pid")
	want=$(jqc "$d/out.json" '[.lastref[0] | .verdict, .addr, .stack_id, .line]')
	expect_jq "verdict of -j" "$2" "$d/out.json" '.lastref[0].verdict' || return 1
	expect_jq "process $pid's lastref in the snapshot, as [verdict, addr, stack_id, line]" \
		"$want" "$d/snap.json" \
		"[.processes[] | select(.pid == $pid) | .lastref[0] | .verdict, .addr, .stack_id, .line]" ||
		return 1
	expect_jq "lastref verdicts, dropped" '[1,0]' "$d/snap.json" \
		"[.processes[] | select(.pid == $pid) | (.lastref | length), .lastref_dropped]"
}

test_lastref_verdict_is_in_the_runs_snapshot() {
	global || return 1
	expect_verdict_in_snapshot global '"overwritten"'
}

test_lastref_unresolved_at_its_duration_is_in_the_runs_snapshot() {
	undropped || return 1
	expect_verdict_in_snapshot undropped '"unresolved"'
}

# `leaktop report` of that snapshot reads the verdicts back and prints each as its line says.
expect_verdict_in_report() {
	local d=$E2E_TMP/$1 pid line
	pid=$(cat "$d/pid")
	line=$(jq -r '.lastref[0].line' "$d/out.json")
	"$LEAKTOP" report -p "$pid" "$d/snap.json" >"$d/report" 2>"$d/report.err" || {
		echo "leaktop report failed: $(head -c 300 "$d/report.err")"
		return 1
	}
	grep -qxF "  lastref: $line" "$d/report" && return 0
	echo "the report of $d/snap.json lacks the line '  lastref: $line'; its lastref lines:"
	grep 'lastref' "$d/report" | head -5
	return 1
}

test_lastref_verdicts_are_in_the_text_report_of_the_snapshot() {
	global || return 1
	expect_verdict_in_report global || return 1
	undropped || return 1
	expect_verdict_in_report undropped
}

test_lastref_leaves_every_target_running_untraced_with_its_debug_registers() {
	local s
	for s in global top holder local_ local_linger local_nofp register undropped; do
		"$s" || return 1
	done
	for s in global top holder local local_linger local_nofp register undropped; do
		expect_target_unharmed "$s" || { FAIL_MSG="$s: $FAIL_MSG"; return 1; }
	done
}

test_lastref_without_site_is_a_usage_error() {
	lt_fg "$E2E_TMP/nosite.out" "$E2E_TMP/nosite.err" lastref -p 1
	expect_eq "exit status" 2 "$LT_STATUS" || return 1
	expect_eq "stderr" "leaktop: lastref needs a call site; give --site FUNCTION or --site STACK_ID" \
		"$(cat "$E2E_TMP/nosite.err")"
}

test_lastref_with_too_many_blocks_is_a_usage_error() {
	lt_fg "$E2E_TMP/many.out" "$E2E_TMP/many.err" lastref -p 1 --site f --blocks 17
	expect_eq "exit status" 2 "$LT_STATUS" || return 1
	expect_eq "stderr" "leaktop: invalid --blocks '17': expected 1 to 16" \
		"$(cat "$E2E_TMP/many.err")"
}

run_tests
