#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# bystanders.sh - what leaktop's allocator probes cost processes it was not asked to trace:
# nothing, under -p and under --.
#
# A bystander (tests/progs/busy_leak.c, one thread inside malloc and free all the time) runs
# beside `leaktop -p PID` and `leaktop -- CMD`.  stats.bystander_hits counts the probe hits
# (traps) in processes leaktop does not trace: 0.  A check that does not rely on BPF
# running: while leaktop runs, the bystander's libc holds no breakpoint (0xcc) at the
# probed malloc, and the traced processes do (-- : CMD, a shell, and the program it
# forked), so the check can fail.  Another tool probing libc's malloc in every process at
# the same time would fail it too: e2e scripts run one at a time.

. "$(dirname "$0")/lib.sh"
require_root
require_built waiter busy_leak

BY=$E2E_TMP/bystanders
BY_BUSY="" BY_DIR=""
# The byte at the probed malloc in each process while leaktop runs.
BY_PID_BYSTANDER="" BY_PID_TRACED=""
BY_CMD_BYSTANDER="" BY_CMD_SHELL="" BY_CMD_CHILD=""

# start_bystander NAME: a bystander with its own handshake directory.
start_bystander() {
	BY_DIR=$BY/$1
	mkdir -p "$BY_DIR"
	"$PROGS/busy_leak" "$BY_DIR" 1 &
	BY_BUSY=$!
	BG_PIDS+=("$BY_BUSY")
	wait_file "$BY_DIR/ready"
}

stop_bystander() {
	touch "$BY_DIR/go" "$BY_DIR/quit"
	wait_exit "$BY_BUSY"
}

# at_malloc ERR PID: the byte at the malloc leaktop (stderr in ERR, -v) probes, in PID.
at_malloc() {
	local where
	where=$(probed_at "$1" malloc)
	[ -n "$where" ] || { echo "no-offset"; return; }
	text_byte "$2" $where
}

run_pid_mode() {
	local w
	start_bystander pid_mode || return 1
	mkdir -p "$BY/w"
	"$PROGS/waiter" "$BY/w" nogo &
	w=$!
	BG_PIDS+=("$w")
	wait_file "$BY/w/ready" || return 1
	# No -d: leaktop must still run when the bytes are read (python3 may take a second).
	lt_bg "$BY/pid.out" "$BY/pid.err" -v -b -i 0.5 -j "$BY/pid.json" -p "$w"
	wait_snapshot_file "$BY/pid.json" "$BY/pid.err" || return 1
	BY_PID_BYSTANDER=$(at_malloc "$BY/pid.err" "$BY_BUSY")
	BY_PID_TRACED=$(at_malloc "$BY/pid.err" "$w")
	# The bystander's loop beside leaktop for a while more.
	nap 1
	kill -0 "$LT_PID" 2>/dev/null ||
		fail_because "leaktop -p ended early: $(cat "$BY/pid.err")" || return 1
	signal INT "$LT_PID"
	wait_exit "$LT_PID" || return 1
	LT_STATUS=$WAIT_STATUS
	touch "$BY/w/quit"
	wait_exit "$w"
	kill -0 "$BY_BUSY" 2>/dev/null ||
		fail_because "the bystander was not running all along" || return 1
	stop_bystander || return 1
	[ "$LT_STATUS" = 0 ] || fail_because "leaktop -p ended with $LT_STATUS: $(cat "$BY/pid.err")"
}

run_command_mode() {
	local shell
	start_bystander command_mode || return 1
	mkdir -p "$BY/c"
	# The shell forks the waiter (a command that is not its last) and waits for it.
	lt_bg "$BY/cmd.out" "$BY/cmd.err" -v -b -i 0.5 -j "$BY/cmd.json" -- \
		sh -c '"$1" "$2" nogo; exit 0' sh "$PROGS/waiter" "$BY/c"
	wait_file "$BY/c/done" || return 1
	shell=$(pgrep -P "$LT_PID" -x sh)
	wait_snapshot_file "$BY/cmd.json" "$BY/cmd.err" || return 1
	BY_CMD_BYSTANDER=$(at_malloc "$BY/cmd.err" "$BY_BUSY")
	BY_CMD_SHELL=$(at_malloc "$BY/cmd.err" "$shell")
	BY_CMD_CHILD=$(at_malloc "$BY/cmd.err" "$(pid_in "$BY/c/ready")")
	# 1.5 s of the bystander's malloc/free loop beside the traced command.
	nap 1.5
	# The waiter as it lives (replaced atomically: a whole file): after quit it exits, and
	# an interval may report it gone before the last snapshot.
	cp "$BY/cmd.json" "$BY/cmd-alive.json"
	touch "$BY/c/quit"
	wait_exit "$LT_PID" || return 1
	LT_STATUS=$WAIT_STATUS
	kill -0 "$BY_BUSY" 2>/dev/null ||
		fail_because "the bystander was not running all along" || return 1
	stop_bystander || return 1
	[ "$LT_STATUS" = 0 ] || fail_because "leaktop -- ended with $LT_STATUS: $(cat "$BY/cmd.err")"
}

test_pid_mode_costs_other_processes_no_probe_hit() {
	scenario run_pid_mode || return 1
	expect_jq "stats.bystander_hits under -p" 0 "$BY/pid.json" '.stats.bystander_hits' ||
		return 1
	expect_jq "stats.heap_attach under -p" '"pid"' "$BY/pid.json" '.stats.heap_attach'
}

test_pid_mode_puts_no_breakpoint_into_other_processes() {
	scenario run_pid_mode || return 1
	expect_eq "the byte at malloc in the traced process (int3)" cc "$BY_PID_TRACED" ||
		return 1
	[ "$BY_PID_BYSTANDER" != cc ] && [ "$BY_PID_BYSTANDER" != none ] &&
		[ "$BY_PID_BYSTANDER" != unreadable ] ||
		fail_because "the byte at malloc in the bystander: got '$BY_PID_BYSTANDER'," \
			"expected the instruction, not a breakpoint"
}

test_command_mode_costs_other_processes_no_probe_hit() {
	scenario run_command_mode || return 1
	expect_jq "stats.bystander_hits under --" 0 "$BY/cmd.json" '.stats.bystander_hits' ||
		return 1
	expect_jq "stats.heap_attach under --" '"tree"' "$BY/cmd.json" '.stats.heap_attach'
}

test_command_mode_puts_breakpoints_into_the_command_and_its_children_only() {
	scenario run_command_mode || return 1
	expect_eq "the byte at malloc in the command (the shell)" cc "$BY_CMD_SHELL" || return 1
	expect_eq "the byte at malloc in the program the shell forked" cc "$BY_CMD_CHILD" ||
		return 1
	[ "$BY_CMD_BYSTANDER" != cc ] && [ "$BY_CMD_BYSTANDER" != none ] &&
		[ "$BY_CMD_BYSTANDER" != unreadable ] ||
		fail_because "the byte at malloc in the bystander: got '$BY_CMD_BYSTANDER'," \
			"expected the instruction, not a breakpoint"
}

test_command_mode_counts_the_forked_program_exactly() {
	scenario run_command_mode || return 1
	# The waiter (nogo): 2 blocks before ready, one of them freed, then 5.  (Its first
	# malloc grows the heap: an mmap site of its own that begins at leak_before_go too.)
	expect_jq "the waiter's blocks [leak_before_go, leak_after_go]" '[[1],[5]]' \
		"$BY/cmd-alive.json" '[.processes[].sites[] | select(.kind == "heap")] as $s |
		["leak_before_go", "leak_after_go"] |
		map(. as $f | [$s[] | select(.stack[0].symbol == $f) | .outstanding_count])'
}

# Where tracefs cannot be had, -- falls back to probes on every process that maps the libc
# (LEAKTOP_NO_TRACEFS=1 forces it): said with -v, told by stats.heap_attach, and costly.
run_command_fallback() {
	start_bystander command_fallback || return 1
	LEAKTOP_NO_TRACEFS=1 lt_fg "$BY/fb.out" "$BY/fb.err" -v -b -i 0.5 -j "$BY/fb.json" \
		-- sleep 1.5
	stop_bystander || return 1
	[ "$LT_STATUS" = 0 ] || fail_because "leaktop -- ended with $LT_STATUS: $(cat "$BY/fb.err")"
}

test_command_mode_without_tracefs_probes_every_process_and_says_so() {
	scenario run_command_fallback || return 1
	expect_jq "stats.heap_attach" '"system"' "$BY/fb.json" '.stats.heap_attach' || return 1
	expect_eq "-v lines naming the fallback" 1 \
		"$(grep -c "attaching them to every process that maps" "$BY/fb.err")" || return 1
	# 1.5 s of a malloc/free loop: far more than a thousand traps.
	expect_jq "stats.bystander_hits > 1000" true "$BY/fb.json" '.stats.bystander_hits > 1000'
}

run_tests
