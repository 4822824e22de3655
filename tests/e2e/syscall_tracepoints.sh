#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# syscall_tracepoints.sh - the fd and mmap programs sit on the per-syscall tracepoints of
# the syscalls they track (syscalls:sys_enter_openat...), so a process making other syscalls
# runs none of them; where tracefs cannot be had they fall back to the raw
# sys_enter/sys_exit, which run for every syscall, and say why.
#
# tests/progs/sys_untracked.c keeps 7 descriptors open from leak_fds(), then, between two
# file handshakes, makes N getppid() syscalls and nothing else.  leaktop -r fd,mmap runs it
# (--) in a private mount namespace where tracefs is not mounted (as on a fresh machine);
# the programs' run counts (kernel.bpf_stats_enabled, restored afterwards) are read before
# and after the getppid loop.  Per-syscall: they grow by far less than N (other processes'
# descriptor syscalls only).  Fallback (the same, with CAP_SYS_ADMIN dropped, so leaktop
# cannot mount tracefs either): by 2 N at least, one entry and one exit per syscall.  Both
# count the 7 descriptors exactly, and nothing stays mounted after leaktop, in its
# namespace or on the host.

. "$(dirname "$0")/lib.sh"
require_root
require_built sys_untracked
command -v bpftool >/dev/null || { echo "FAIL $(basename "$0"): bpftool is not installed"; exit 1; }

N_SYSCALLS=1000000
STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)
restore_stats() { sysctl -q -w kernel.bpf_stats_enabled="$STATS_WAS" 2>/dev/null; }
trap 'restore_stats; e2e_cleanup' EXIT

# tracefs_mounts FILE: the tracefs mounts in a mountinfo file.
tracefs_mounts() { awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "tracefs") n++; break } } END { print n + 0 }' "$1"; }

# prog_ids PID: the ids of the BPF programs PID holds (its descriptors' fdinfo), as JSON.
prog_ids() {
	cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '$1 == "prog_id:" { print $2 }' | sort -nu |
		jq -s -c .
}

# run_counts IDS: the summed run_cnt of the syscall programs (per-syscall and raw) among the
# program ids IDS (JSON).
run_counts() {
	bpftool prog show -j 2>/dev/null | jq --argjson ids "$1" '[.[] |
		select((.name | test("^lt_s(c|ys)_(enter|exit)$")) and (.id as $i | $ids | index($i))) |
		.run_cnt // 0] | add // 0'
}

# run_case DIR [SETPRIV...]: leaktop -r fd,mmap -- sys_untracked in a mount namespace of
# its own without tracefs, through SETPRIV when given.  Leaves DIR/snap.json, DIR/err,
# DIR/delta (run counts over the getppid loop), DIR/ns_tracefs (tracefs mounts left in the
# namespace after leaktop), DIR/host_before and DIR/host_after.
run_case() {
	local dir=$1 lt ids before after
	shift
	mkdir -p "$dir/prog"
	sysctl -q -w kernel.bpf_stats_enabled=1 || fail_because "cannot set kernel.bpf_stats_enabled" ||
		return 1
	tracefs_mounts /proc/self/mountinfo >"$dir/host_before"
	# shellcheck disable=SC2016
	unshare -m --propagation private sh -c '
		dir=$1; shift
		for m in /sys/kernel/debug/tracing /sys/kernel/tracing; do
			while grep -q " $m " /proc/self/mountinfo; do umount -l "$m" || exit 9; done
		done
		"$@" &
		echo $! >"$dir/lt_pid"
		wait $!
		rc=$?
		awk "{ for (i = 7; i <= NF; i++) if (\$i == \"-\") { if (\$(i + 1) == \"tracefs\") n++; break } } END { print n + 0 }" \
			/proc/self/mountinfo >"$dir/ns_tracefs"
		exit $rc' sh "$dir" "$@" "$LEAKTOP" -v -q -i "$INTERVAL" -r fd,mmap -j "$dir/snap.json" \
		-- "$PROGS/sys_untracked" "$dir/prog" "$N_SYSCALLS" >"$dir/out" 2>"$dir/err" &
	BG_PIDS+=("$!")
	local sh_pid=$!
	wait_file "$dir/prog/ready" || return 1
	wait_file "$dir/lt_pid" || return 1
	lt=$(pid_in "$dir/lt_pid")
	LT_PID=$lt
	wait_snapshot_file "$dir/snap.json" "$dir/err" || return 1
	ids=$(prog_ids "$lt")
	[ "$(jq length <<<"$ids")" -gt 0 ] ||
		fail_because "no BPF program among leaktop's ($lt) descriptors" || return 1
	before=$(run_counts "$ids")
	touch "$dir/prog/go"
	wait_file "$dir/prog/done" || return 1
	after=$(run_counts "$ids")
	echo $((after - before)) >"$dir/delta"
	touch "$dir/prog/quit"
	wait_exit "$sh_pid" || return 1
	expect_eq "leaktop's exit status (stderr: $(grep -v '^libbpf' "$dir/err" | tail -3))" 0 \
		"$WAIT_STATUS" || return 1
	tracefs_mounts /proc/self/mountinfo >"$dir/host_after"
	restore_stats
}

SC=$E2E_TMP/per_syscall
run_per_syscall() { run_case "$SC"; }

RAW=$E2E_TMP/raw
run_raw() { run_case "$RAW" setpriv --bounding-set -sys_admin --inh-caps -sys_admin; }

# fd_leaks DIR: outstanding descriptors of sys_untracked's site in leak_fds().
fd_leaks() {
	jq --argjson pid "$(pid_in "$1/prog/ready")" '[.processes[] | select(.pid == $pid) |
		.sites[] | select(.kind == "fd" and .stack[0].symbol == "leak_fds") |
		.outstanding_count]' -c "$1/snap.json"
}

test_per_syscall_tracepoints_attached_without_a_mounted_tracefs() {
	scenario run_per_syscall || return 1
	expect_eq "stats.syscall_attach" syscall "$(jq -r .stats.syscall_attach "$SC/snap.json")" ||
		return 1
	expect_eq "stats.syscall_attach_why" null \
		"$(jq -r .stats.syscall_attach_why "$SC/snap.json")"
}

test_untracked_syscalls_run_no_leaktop_program() {
	local delta
	scenario run_per_syscall || return 1
	delta=$(cat "$SC/delta")
	[ "$delta" -lt $((N_SYSCALLS / 2)) ] ||
		fail_because "leaktop's syscall programs ran $delta times while the process made" \
			"$N_SYSCALLS getppid() calls (and others' descriptor syscalls made the rest)"
}

test_per_syscall_tracepoints_count_descriptors_exactly() {
	scenario run_per_syscall || return 1
	expect_eq "descriptors outstanding at leak_fds" "[7]" "$(fd_leaks "$SC")"
}

test_per_syscall_tracepoints_leave_no_mount() {
	scenario run_per_syscall || return 1
	expect_eq "tracefs mounts in leaktop's namespace after it" 0 "$(cat "$SC/ns_tracefs")" ||
		return 1
	expect_eq "tracefs mounts of the host after the run" "$(cat "$SC/host_before")" \
		"$(cat "$SC/host_after")"
}

test_without_tracefs_falls_back_to_raw_tracepoints_and_says_why() {
	scenario run_raw || return 1
	expect_eq "stats.syscall_attach" raw "$(jq -r .stats.syscall_attach "$RAW/snap.json")" ||
		return 1
	expect_match "stats.syscall_attach_why" '^tracefs cannot be had .*Operation not permitted' \
		"$(jq -r .stats.syscall_attach_why "$RAW/snap.json")" || return 1
	grep -q "tracked from the raw sys_enter/sys_exit tracepoints, which run for every syscall" \
		"$RAW/err" || fail_because "no -v line on the fallback in stderr:" \
			"$(grep -v '^libbpf' "$RAW/err" | head -5)"
}

test_raw_fallback_runs_for_every_syscall() {
	local delta
	scenario run_raw || return 1
	delta=$(cat "$RAW/delta")
	[ "$delta" -ge $((2 * N_SYSCALLS)) ] ||
		fail_because "the raw programs ran $delta times over $N_SYSCALLS getppid() calls," \
			"expected at least $((2 * N_SYSCALLS))"
}

test_raw_fallback_counts_descriptors_exactly() {
	scenario run_raw || return 1
	expect_eq "descriptors outstanding at leak_fds" "[7]" "$(fd_leaks "$RAW")" || return 1
	expect_eq "tracefs mounts of the host after the run" "$(cat "$RAW/host_before")" \
		"$(cat "$RAW/host_after")"
}

run_tests
