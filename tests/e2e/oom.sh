#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# oom.sh - OOM-kill snapshots: tests/progs/oom_leak leaks 1 MiB blocks from leak_mib() in a
# memory cgroup this script makes (64 MiB; cgroup v2's memory.max where /sys/fs/cgroup is
# cgroup2, else v1's memory.limit_in_bytes, and memory.memsw.limit_in_bytes where it
# exists) until the OOM killer takes it.  Under `--` (a shell that joins the cgroup, then
# execs the program) and under -p, leaktop must write the victim's full snapshot into the
# OOM directory at once (leaktop-oom-PID-TIME.json, private mode, only that process, the
# leaking function in a heap site's stack with outstanding bytes near the limit), say so
# on stderr, flag the process oom_killed in its next snapshot and count it in
# stats.oom_victims.  An --oom-dir that is a symbolic link, not a directory, missing or
# read-only, or writable by everyone without the sticky bit, is refused at start-up with one
# line and exit 1.  The cgroups (and the
# read-only mount) are removed on exit.

. "$(dirname "$0")/lib.sh"
require_root
require_built oom_leak waiter

LIMIT_BYTES=$((64 << 20))
OM=$E2E_TMP/oom
mkdir -p "$OM"
MOUNTS=()

# Remove what this script made besides the temporary directory, then the usual cleanup.
oom_cleanup() {
	local m
	for m in "${MOUNTS[@]}"; do
		umount "$m" 2>/dev/null
	done
	remove_cgroups
	e2e_cleanup
}
trap oom_cleanup EXIT

# The single OOM snapshot in DIR (its path in OOM_FILE); fails when there is none or more.
OOM_FILE=""
one_oom_file() {
	local files=("$1"/leaktop-oom-*.json)
	[ -e "${files[0]}" ] ||
		fail_because "no leaktop-oom-*.json in $1: $(ls -A "$1"); leaktop's stderr: $(cat "$2")" ||
		return 1
	[ "${#files[@]}" = 1 ] || fail_because "more than one OOM snapshot: ${files[*]}" || return 1
	OOM_FILE=${files[0]}
}

# ---------------------------------------------------------------- scenarios

# `leaktop -j - --oom-dir DIR -- sh -c 'join the cgroup; exec oom_leak'`: snapshots in
# $OM/cmd/out.jsonl, OOM snapshots in $OM/cmd/dir.
CMD_PID=""
scenario_command() {
	local d=$OM/cmd
	mkdir -p "$d/dir"
	make_cgroup cmd || return 1
	lt_fg "$d/out.jsonl" "$d/err" -b -i "$INTERVAL" -j - --oom-dir "$d/dir" -- \
		sh -c "echo \$\$ >$CG/cgroup.procs && exec $PROGS/oom_leak"
	expect_eq "exit status (stderr: $(cat "$d/err"))" 0 "$LT_STATUS" || return 1
	one_oom_file "$d/dir" "$d/err" || return 1
	CMD_PID=${OOM_FILE##*/leaktop-oom-}
	CMD_PID=${CMD_PID%%-*}
}

# oom_leak started in its own cgroup, waiting; `leaktop -p PID -j FILE` (no --oom-dir: the
# snapshot goes beside FILE); then the program leaks until it is killed.
P_PID=""
scenario_pid() {
	local d=$OM/pid
	mkdir -p "$d/dir" "$d/json"
	make_cgroup pid || return 1
	sh -c "echo \$\$ >$CG/cgroup.procs && exec $PROGS/oom_leak $d/dir" &
	BG_PIDS+=("$!")
	wait_file "$d/dir/ready" || return 1
	P_PID=$(pid_in "$d/dir/ready")
	lt_bg "$d/out" "$d/err" -b -i "$INTERVAL" -j "$d/json/snap.json" -p "$P_PID"
	wait_snapshot_file "$d/json/snap.json" "$d/err" || return 1
	touch "$d/dir/go"
	wait_exit "$LT_PID" || return 1
	expect_eq "exit status (stderr: $(cat "$d/err"))" 0 "$WAIT_STATUS" || return 1
	one_oom_file "$d/json" "$d/err"
}

# ---------------------------------------------------------------- under --

test_oom_victim_of_a_command_gets_a_snapshot_file_named_with_its_pid_and_utc_time() {
	scenario scenario_command || return 1
	expect_match "OOM snapshot name" '/leaktop-oom-[0-9]+-[0-9]{8}T[0-9]{6}Z\.json$' \
		"$OOM_FILE"
}

test_oom_snapshot_is_a_valid_snapshot_holding_only_the_victim() {
	scenario scenario_command || return 1
	expect_jq "schema" '"leaktop.snapshot/1"' "$OOM_FILE" '.schema' || return 1
	expect_jq "processes as [pid, comm]" "[[$CMD_PID,\"oom_leak\"]]" "$OOM_FILE" \
		'[.processes[] | [.pid, .comm]]'
}

test_oom_snapshot_names_the_leaking_function_with_outstanding_bytes_near_the_limit() {
	local bytes
	scenario scenario_command || return 1
	bytes=$(jqc "$OOM_FILE" '[.processes[0].sites[] | select(.kind == "heap" and
		any(.stack[]; .symbol == "leak_mib")) | .outstanding_bytes] | add // 0')
	[ "$bytes" -ge $((LIMIT_BYTES * 3 / 4)) ] ||
		fail_because "heap sites with leak_mib in their stack hold $bytes bytes, expected" \
			">= 75% of $LIMIT_BYTES; sites as [kind, bytes, functions]: $(jqc "$OOM_FILE" \
			'[.processes[0].sites[] | [.kind, .outstanding_bytes, [.stack[].symbol]]]')"
}

test_oom_snapshot_keeps_every_site_and_the_whole_stack() {
	local sites frames
	scenario scenario_command || return 1
	# Not trimmed to the text report's top N: every site of the victim, each with frames
	# up to main.
	sites=$(jqc "$OOM_FILE" '.processes[0].sites | length')
	[ "$sites" -ge 2 ] || fail_because "the snapshot holds $sites site(s)" || return 1
	frames=$(jqc "$OOM_FILE" '[.processes[0].sites[] | select(.kind == "heap" and
		.stack[0].symbol == "leak_mib") | [.stack[].symbol]] | first')
	expect_match "leak_mib site's stack" '^\["leak_mib","main",' "$frames"
}

test_oom_snapshot_file_is_private() {
	scenario scenario_command || return 1
	expect_eq "mode of $OOM_FILE" 600 "$(stat -c %a "$OOM_FILE")"
}

test_oom_snapshot_is_named_on_stderr() {
	scenario scenario_command || return 1
	grep -qF "its snapshot is $OOM_FILE" "$OM/cmd/err" ||
		fail_because "stderr does not name $OOM_FILE: $(cat "$OM/cmd/err")"
}

test_oom_victim_is_flagged_oom_killed_in_the_next_snapshot() {
	local got
	scenario scenario_command || return 1
	# The first snapshot that shows the victim killed, and every one after it.
	got=$(jqs "$OM/cmd/out.jsonl" '[.[] | [.processes[] | select(.pid == $pid) |
		(.flags | index("oom_killed") != null)] | any] | .[index(true):] | unique' \
		--argjson pid "$CMD_PID")
	expect_eq "oom_killed in the snapshots from the first that has it" "[true]" "$got" ||
		return 1
	expect_jq "the last snapshot's victim as [exited, flags has oom_killed]" '[[true,true]]' \
		<(tail -n 1 "$OM/cmd/out.jsonl") \
		'[procs($pid) | [.exited, (.flags | index("oom_killed") != null)]]' \
		--argjson pid "$CMD_PID"
}

test_oom_victims_are_counted_in_stats() {
	scenario scenario_command || return 1
	expect_jq "stats as [oom_victims, oom_snapshots_failed]" '[1,0]' \
		<(tail -n 1 "$OM/cmd/out.jsonl") '[.stats.oom_victims, .stats.oom_snapshots_failed]'
}

test_oom_victim_is_flagged_in_the_text_report() {
	local d=$OM/cmd
	scenario scenario_command || return 1
	tail -n 1 "$d/out.jsonl" >"$d/last.json"
	lt_fg "$d/report" "$d/report.err" report "$d/last.json"
	expect_eq "leaktop report status ($(cat "$d/report.err"))" 0 "$LT_STATUS" || return 1
	grep -qE "^PID $CMD_PID oom_leak \(exited\).*\[oom_killed\]" "$d/report" ||
		fail_because "no 'PID $CMD_PID oom_leak (exited) ... [oom_killed]' line in the" \
			"report: $(head -c 2000 "$d/report")"
}

# ---------------------------------------------------------------- under -p

test_oom_snapshot_under_pid_goes_beside_the_json_file() {
	scenario scenario_pid || return 1
	expect_match "OOM snapshot" "/json/leaktop-oom-$P_PID-[0-9T]+Z\\.json\$" "$OOM_FILE" ||
		return 1
	expect_jq "processes as [pid, comm]" "[[$P_PID,\"oom_leak\"]]" "$OOM_FILE" \
		'[.processes[] | [.pid, .comm]]' || return 1
	json_true "$OOM_FILE" '[.processes[0].sites[] | select(.kind == "heap") |
		select(.stack[0].symbol == "leak_mib") | .outstanding_bytes] | add >= $min' \
		--argjson min $((LIMIT_BYTES * 3 / 4)) ||
		fail_because "no leak_mib heap site with >= 75% of the limit: $(jqc "$OOM_FILE" \
			'[.processes[0].sites[] | [.kind, .outstanding_bytes, .stack[0].symbol]]')"
}

test_oom_victim_under_pid_is_flagged_in_the_final_snapshot() {
	scenario scenario_pid || return 1
	expect_jq "[flags, oom_victims]" '[["oom_killed"],1]' "$OM/pid/json/snap.json" \
		'[[procs($pid) | .flags[] | select(. == "oom_killed")], .stats.oom_victims]' \
		--argjson pid "$P_PID"
}

# ---------------------------------------------------------------- metrics

# oom_leak (in its own cgroup) and a waiter under `leaktop -q --listen PORT -p BOTH` (the
# waiter keeps leaktop running after the kill): the endpoint's page once the victim is
# flagged, in $OM/metrics/page.
M_PID=""
M_PORT=""
metrics_flagged() {
	metrics_flag "$M_PORT" "$M_PID" oom_killed "$OM/metrics/page"
}
scenario_metrics() {
	local d=$OM/metrics w
	mkdir -p "$d/dir" "$d/w"
	command -v curl >/dev/null || fail_because "curl is missing; run make deps" || return 1
	M_PORT=$((20000 + RANDOM % 30000))
	make_cgroup metrics || return 1
	# (in a shell of its own, so that this one does not report the kill)
	sh -c "sh -c 'echo \$\$ >$CG/cgroup.procs && exec $PROGS/oom_leak $d/dir'; true" 2>/dev/null &
	BG_PIDS+=("$!")
	"$PROGS/waiter" "$d/w" nogo &
	BG_PIDS+=("$!")
	wait_file "$d/dir/ready" || return 1
	wait_file "$d/w/ready" || return 1
	M_PID=$(pid_in "$d/dir/ready")
	w=$(pid_in "$d/w/ready")
	lt_bg "$d/out" "$d/err" -q -i "$INTERVAL" --listen "127.0.0.1:$M_PORT" \
		--oom-dir "$d/dir" -p "$M_PID,$w"
	touch "$d/dir/go"
	wait_until "oom_killed on /metrics for pid $M_PID (stderr: $(cat "$d/err"))" \
		metrics_flagged || return 1
	touch "$d/w/quit"
	wait_exit "$LT_PID"
}

test_oom_victim_is_flagged_and_counted_on_the_metrics_endpoint() {
	scenario scenario_metrics || return 1
	grep -q '^leaktop_oom_victims_total 1$' "$OM/metrics/page" ||
		fail_because "no 'leaktop_oom_victims_total 1' in: $(grep oom "$OM/metrics/page")"
}

# ---------------------------------------------------------------- refused directories

# lt_refused REGEX ARG...: leaktop exits 1 with one line on stderr matching REGEX.
lt_refused() {
	local regex=$1
	shift
	lt_fg "$OM/out" "$OM/err" "$@"
	expect_eq "exit status of 'leaktop $*' (stderr: $(cat "$OM/err"))" 1 "$LT_STATUS" ||
		return 1
	expect_eq "lines on stderr ($(cat "$OM/err"))" 1 "$(stderr_lines "$OM/err")" || return 1
	expect_match "stderr" "^leaktop: .*$regex" "$(cat "$OM/err")"
}

test_oom_dir_that_is_a_symbolic_link_is_refused() {
	mkdir -p "$OM/real"
	ln -sfn "$OM/real" "$OM/link"
	lt_refused "symbolic link" -b -d 1 --oom-dir "$OM/link" -- true
}

test_oom_dir_that_is_missing_or_not_a_directory_is_refused() {
	: >"$OM/file"
	lt_refused "not a directory" -b -d 1 --oom-dir "$OM/file" -- true || return 1
	lt_refused "No such file" -b -d 1 --oom-dir "$OM/missing" -- true
}

test_oom_dir_on_a_read_only_file_system_is_refused() {
	mkdir -p "$OM/ro"
	mount -t tmpfs -o ro,size=64k leaktop-e2e "$OM/ro" ||
		fail_because "cannot mount a read-only tmpfs on $OM/ro" || return 1
	MOUNTS+=("$OM/ro")
	lt_refused "Read-only file system" -b -d 1 --oom-dir "$OM/ro" -- true
}

test_oom_dir_everyone_may_write_to_without_sticky_bit_is_refused() {
	mkdir -p "$OM/open"
	chmod 0777 "$OM/open"
	lt_refused "not sticky" -b -d 1 --oom-dir "$OM/open" -- true
}

test_oom_bound_options_refuse_bad_values_as_usage_errors() {
	lt_fg "$OM/out" "$OM/err" -b -d 1 --oom-max-bytes 12Q -- true
	expect_eq "exit status (stderr: $(cat "$OM/err"))" 2 "$LT_STATUS" || return 1
	expect_match "stderr" "invalid --oom-max-bytes '12Q'" "$(cat "$OM/err")"
}

run_tests
