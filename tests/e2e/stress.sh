#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# stress.sh - whole-system leaktop on a busy machine: compiles (two gcc -O2 at a time, the
# test programs' sources over and over) and a process churn (ls, python3, sh -c, short-lived
# children) run for STRESS_S seconds (20) under `leaktop -b -j FILE`, then one SIGINT.
#
# leaktop must end on that one signal, by itself, with status 0, having written a final
# snapshot after the signal that is valid JSON with the fields the contract names; drops
# are counted (stats.dropped is the sum of stats.drops), deferred work and leaktop's own RSS
# are reported, no frame of a site of a live process lies outside every module (a garbage
# return address read off a stack has no module) and no probe fired in leaktop's own process
# (stats.self_hits).  A second signal during the final write ends leaktop at once and
# leaves no temporary file behind; a closed stdout ends a batch run cleanly.
# How long anything took is `make bench`'s business ("busy machine"), not asserted here.

. "$(dirname "$0")/lib.sh"
require_root
require_built
command -v gcc >/dev/null || { echo "FAIL $(basename "$0"): gcc is not installed"; exit 1; }
command -v python3 >/dev/null || { echo "FAIL $(basename "$0"): python3 is not installed"; exit 1; }

STRESS_S=${STRESS_S:-20}

# own_errors ERR: leaktop's stderr but the libcs it skipped (other tests' private mounts).
# What leaktop said besides skipped libcs and the overhead budget's switches and suspects
# (a busy machine is where the default budget leaves exact tracing: test_stress_budget...).
own_errors() { grep -v -e '^leaktop: skipping ' -e '^leaktop: heap tracing: ' "$1"; }
ST=$E2E_TMP/stress
LOAD_PIDS=()

# compile_loop DIR: gcc -O2 every test program's source, again and again, until DIR/stop.
compile_loop() {
	local dir=$1 src
	while [ ! -e "$dir/stop" ]; do
		for src in "$PROG_SRC"/*.c; do
			[ -e "$dir/stop" ] && break
			gcc -O2 -c -o "$dir/$(basename "$src" .c).$BASHPID.o" "$src" 2>/dev/null
		done
	done
}

# churn_loop DIR: short-lived processes, a few per tenth of a second, until DIR/stop.
churn_loop() {
	local dir=$1
	while [ ! -e "$dir/stop" ]; do
		ls / >/dev/null
		python3 -c 'import json; json.dumps(list(range(100)))'
		sh -c 'true; true' </dev/null
		( : ) &
		wait $!
		nap 0.05
	done
}

start_load() {
	local dir=$1
	mkdir -p "$dir"
	compile_loop "$dir" & LOAD_PIDS+=($!)
	compile_loop "$dir" & LOAD_PIDS+=($!)
	churn_loop "$dir" & LOAD_PIDS+=($!)
	BG_PIDS+=("${LOAD_PIDS[@]}")
}

stop_load() {
	local dir=$1 pid
	touch "$dir/stop"
	for pid in "${LOAD_PIDS[@]}"; do
		wait_exit "$pid" || true
	done
	LOAD_PIDS=()
}

# The busy run: leaktop first (so it sees the load start), the load for STRESS_S seconds,
# one SIGINT while the load still runs.
ST_STATUS="" ST_SIGNAL_ELAPSED=""
run_busy() {
	mkdir -p "$ST"
	lt_bg "$ST/out.txt" "$ST/err.txt" -b -i 1 -j "$ST/snap.json"
	wait_snapshot_file "$ST/snap.json" "$ST/err.txt" || return 1
	start_load "$ST/load"
	nap "$STRESS_S"
	# What the latest snapshot said before the signal: the final one must be later.
	ST_SIGNAL_ELAPSED=$(jq '.elapsed_s' "$ST/snap.json" 2>/dev/null)
	signal INT "$LT_PID"
	wait_exit "$LT_PID" || { stop_load "$ST/load"; fail_because \
		"leaktop did not end within ${EXIT_WAIT_S}s of one SIGINT on a busy machine"; return 1; }
	ST_STATUS=$WAIT_STATUS
	stop_load "$ST/load"
}

test_stress_one_sigint_ends_a_busy_whole_system_run() {
	scenario run_busy || return 1
	expect_eq "exit status after one SIGINT" 0 "$ST_STATUS" || return 1
	expect_eq "stderr" "" "$(own_errors "$ST/err.txt")"
}

test_stress_budget_leaves_exact_tracing_on_a_busy_machine_once() {
	scenario run_busy || return 1
	expect_eq "switches to suspects only" 1 \
		"$(grep -c '^leaktop: heap tracing: suspects only' "$ST/err.txt")" || return 1
	expect_jq "heap mode at the end" '"suspects"' "$ST/snap.json" '.stats.heap_mode'
}

test_stress_final_snapshot_is_valid_and_written_after_the_signal() {
	scenario run_busy || return 1
	expect_jq "schema" '"leaktop.snapshot/1"' "$ST/snap.json" '.schema' || return 1
	expect_jq "the snapshot's shape" true "$ST/snap.json" \
		'(.processes | type == "array") and (.stats.events | type == "number") and
		 all(.processes[]; (.pid | type == "number") and (.sites | type == "array"))' ||
		return 1
	expect_jq "final snapshot newer than the one before the signal" true "$ST/snap.json" \
		'.elapsed_s > $before' --argjson before "${ST_SIGNAL_ELAPSED:-0}" || return 1
	[ -z "$(find "$ST" -maxdepth 1 -name '.snap.json.*')" ] ||
		fail_because "temporary files left: $(ls -a "$ST")"
}

test_stress_drops_are_counted_not_hidden() {
	scenario run_busy || return 1
	expect_jq "stats.dropped is the sum of stats.drops" true "$ST/snap.json" \
		'(.stats.dropped | type == "number") and
		 .stats.dropped == ([.stats.drops[]] | add)'
}

test_stress_deferred_work_and_own_rss_are_reported() {
	scenario run_busy || return 1
	expect_jq "stats.deferred" true "$ST/snap.json" \
		'(.stats.deferred.sites | type == "number") and
		 (.stats.deferred.procs | type == "number")' || return 1
	expect_jq "stats.self_rss_bytes" true "$ST/snap.json" \
		'(.stats.self_rss_bytes | type == "number") and .stats.self_rss_bytes > 0'
}

# The frame-pointer walk keeps only return addresses in an executable file mapping
# (tests/e2e/stacks.sh has the exact cases).  Checked among the processes leaktop has read
# (alive, their /proc counters known): a process that lived less than an interval (an `as`,
# an `ls`) may be gone before its maps were read, and its frames' modules are then unknown
# (null), which says nothing about the walk.
test_stress_no_frame_lies_outside_every_module() {
	scenario run_busy || return 1
	expect_jq "frames without a module" '[]' "$ST/snap.json" \
		'[.processes[] | select((.exited | not) and .counters.rss_bytes != null) |
		  .comm as $c | .sites[] | .stack[] | select(.module == null) |
		  "\($c) \(.addr)"] | unique | .[:10]'
}

# Needs the BPF side's count of probe hits in leaktop's own process (issue 11).
test_stress_leaktop_takes_no_probe_hit_itself() {
	scenario run_busy || return 1
	expect_jq "stats.self_hits" 0 "$ST/snap.json" '.stats.self_hits'
}

test_second_sigint_ends_at_once_and_leaves_no_temporary_file() {
	local dir=$E2E_TMP/twice
	mkdir -p "$dir"
	start_load "$dir/load"
	lt_bg "$dir/out.txt" "$dir/err.txt" -b -i 1 -j "$dir/snap.json"
	wait_snapshot_file "$dir/snap.json" "$dir/err.txt" || { stop_load "$dir/load"; return 1; }
	nap 2
	signal INT "$LT_PID"
	signal INT "$LT_PID"
	wait_exit "$LT_PID" || { stop_load "$dir/load"; fail_because "leaktop did not end"; return 1; }
	stop_load "$dir/load"
	# 130: the second signal ended it; 0: the final write was done before it came.
	expect_match "exit status" '^(0|130)$' "$WAIT_STATUS" || return 1
	[ -z "$(find "$dir" -maxdepth 1 -name '.snap.json.*')" ] ||
		fail_because "temporary files left: $(ls -a "$dir")" || return 1
	expect_jq "the snapshot left in place" '"leaktop.snapshot/1"' "$dir/snap.json" '.schema'
}

test_closed_stdout_ends_a_batch_run_cleanly() {
	local dir=$E2E_TMP/pipe status
	mkdir -p "$dir"
	# head reads the first report line and exits: leaktop's next write gets EPIPE.
	( timeout -k 5 "$EXIT_WAIT_S" "$LEAKTOP" -b -i 0.2 2>"$dir/err.txt"
	  echo $? >"$dir/status" ) | head -n 1 >"$dir/first.txt"
	wait_file "$dir/status" || return 1
	status=$(cat "$dir/status")
	expect_eq "exit status with stdout closed" 0 "$status" || return 1
	expect_eq "stderr" "" "$(own_errors "$dir/err.txt")" || return 1
	expect_match "the line head read" '^leaktop ' "$(cat "$dir/first.txt")"
}

run_tests
