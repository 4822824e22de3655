#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# bystanders.sh - what leaktop's allocator probes cost processes it was not asked to trace.
#
# A bystander (tests/progs/busy_leak.c, one thread inside malloc and free all the time) runs
# beside `leaktop -p PID` and `leaktop -- CMD`.  stats.bystander_hits counts the probe hits
# (traps) in processes leaktop does not trace.  -p attaches its probes to the chosen
# processes only, so the bystander never traps; -- still attaches them to the whole libc
# (review finding A7, issue 13), and the count says how much that costs.

. "$(dirname "$0")/lib.sh"
require_root
require_built waiter busy_leak

BY=$E2E_TMP/bystanders
BY_BUSY="" BY_DIR=""

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

run_pid_mode() {
	local w
	start_bystander pid_mode || return 1
	mkdir -p "$BY/w"
	"$PROGS/waiter" "$BY/w" nogo &
	w=$!
	BG_PIDS+=("$w")
	wait_file "$BY/w/ready" || return 1
	lt_fg "$BY/pid.out" "$BY/pid.err" -b -i 0.5 -d 2 -j "$BY/pid.json" -p "$w"
	touch "$BY/w/quit"
	wait_exit "$w"
	kill -0 "$BY_BUSY" 2>/dev/null ||
		fail_because "the bystander was not running all along" || return 1
	stop_bystander || return 1
	[ "$LT_STATUS" = 0 ] || fail_because "leaktop -p ended with $LT_STATUS: $(cat "$BY/pid.err")"
}

run_command_mode() {
	start_bystander command_mode || return 1
	lt_fg "$BY/cmd.out" "$BY/cmd.err" -b -i 0.5 -j "$BY/cmd.json" -- sleep 1.5
	kill -0 "$BY_BUSY" 2>/dev/null ||
		fail_because "the bystander was not running all along" || return 1
	stop_bystander || return 1
	[ "$LT_STATUS" = 0 ] || fail_because "leaktop -- ended with $LT_STATUS: $(cat "$BY/cmd.err")"
}

test_pid_mode_costs_other_processes_no_probe_hit() {
	scenario run_pid_mode || return 1
	expect_jq "stats.bystander_hits under -p" 0 "$BY/pid.json" '.stats.bystander_hits'
}

test_command_mode_probe_hits_in_other_processes_are_counted() {
	scenario run_command_mode || return 1
	# 1.5 s of a malloc/free loop: far more than a thousand traps.
	expect_jq "stats.bystander_hits under -- > 1000" true "$BY/cmd.json" \
		'.stats.bystander_hits > 1000'
}

run_tests
