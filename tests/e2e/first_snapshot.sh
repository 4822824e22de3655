#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# first_snapshot.sh - leaktop's first snapshot means heap tracing has begun: a script that
# waits for it and only then starts its workload misses nothing.  The workload is
# tests/progs/fifo_burst: it blocks reading a FIFO (no allocation, no polling), and once
# the test writes a byte it leaks 1000 blocks of 48 bytes at once.  Every one of them is
# counted in the final snapshot, with -p (the process runs before leaktop), with -- (leaktop
# starts it) and on the whole system with --exact (it runs before leaktop).

. "$(dirname "$0")/lib.sh"
require_root
require_built fifo_burst

FS_N=1000
FS_P="" FS_STATUS=""

# first_then_burst DIR LEAKTOP-ARGS...: fifo_burst in DIR (under -- when the arguments end
# with --, else started first and its pid given as %PID%), leaktop -j DIR/snap.json; the burst
# once the first snapshot is there; then one SIGINT and the final snapshot in DIR/final.json.
first_then_burst() {
	local dir=$1 fd arg args=() command=0
	shift
	mkdir -p "$dir/w" && mkfifo "$dir/w/go" || return 1
	[ "${*: -1}" = -- ] && command=1
	if [ "$command" = 0 ]; then
		"$PROGS/fifo_burst" "$dir/w" "$FS_N" &
		FS_P=$!
		BG_PIDS+=("$FS_P")
		wait_file "$dir/w/ready" || return 1
	fi
	for arg in "$@"; do
		args+=("${arg//%PID%/$FS_P}")
	done
	[ "$command" = 1 ] && args+=("$PROGS/fifo_burst" "$dir/w" "$FS_N")
	lt_bg "$dir/out" "$dir/err" -b -i "$INTERVAL" -j "$dir/snap.json" "${args[@]}"
	wait_snapshot_file "$dir/snap.json" "$dir/err" || return 1
	if [ "$command" = 1 ]; then
		wait_file "$dir/w/ready" || return 1
		FS_P=$(pid_in "$dir/w/ready")
	fi
	# The workload starts now: the byte opens the FIFO's read; the burst follows at once.
	exec {fd}>"$dir/w/go" || return 1
	printf g >&"$fd"
	wait_file "$dir/w/done" || { exec {fd}>&-; return 1; }
	# SIGINT at once: the final report, written after the signal, still counts and names the
	# whole burst (it names what it can until a while after the signal).
	signal INT "$LT_PID"
	wait_exit "$LT_PID"
	FS_STATUS=$WAIT_STATUS
	# End of file: fifo_burst exits.
	exec {fd}>&-
	cp "$dir/snap.json" "$dir/final.json"
	[ "$command" = 1 ] || wait_exit "$FS_P"
}

FP=$E2E_TMP/pid
FP_P=""
run_pid() {
	first_then_burst "$FP" -p %PID% || return 1
	FP_P=$FS_P
}

test_pid_mode_first_snapshot_means_every_block_after_it_is_counted() {
	scenario run_pid || return 1
	expect_eq "leaktop's exit status" 0 "$FS_STATUS" || return 1
	expect_site "$FP/final.json" "$FP_P" burst "$FS_N" $((FS_N * 48)) "$FS_N" 0
}

FC=$E2E_TMP/command
FC_P=""
run_command() {
	first_then_burst "$FC" -- || return 1
	FC_P=$FS_P
}

test_command_mode_first_snapshot_means_every_block_after_it_is_counted() {
	scenario run_command || return 1
	expect_eq "leaktop's exit status" 0 "$FS_STATUS" || return 1
	expect_site "$FC/final.json" "$FC_P" burst "$FS_N" $((FS_N * 48)) "$FS_N" 0
}

FW=$E2E_TMP/system
FW_P=""
run_system() {
	first_then_burst "$FW" --exact || return 1
	FW_P=$FS_P
}

test_system_mode_first_snapshot_means_every_block_after_it_is_counted() {
	scenario run_system || return 1
	expect_eq "leaktop's exit status" 0 "$FS_STATUS" || return 1
	expect_site "$FW/final.json" "$FW_P" burst "$FS_N" $((FS_N * 48)) "$FS_N" 0
}

run_tests
