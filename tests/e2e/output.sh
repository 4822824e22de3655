#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# output.sh - what leaktop writes for people and to files, when the traced program is
# hostile or the files are sensitive:
#   - a program whose comm and command line carry terminal escapes (run through a symbolic
#     link whose name is an OSC title sequence, with an argument that clears the screen):
#     batch mode, `leaktop report` and `leaktop diff` print them escaped (\x1b...), never a
#     raw control byte, stderr too, while the snapshot's JSON keeps the real bytes;
#   - output files are created 0600 by default, --file-mode widens them, the umask always
#     narrows them (snapshots hold other processes' addresses, paths and command lines).
source "$(dirname "$0")/lib.sh"

require_root
require_built simple_leak waiter

T=$E2E_TMP/output
mkdir -p "$T"
EVIL_NAME=$'\e]0;PWNED\a''x'			# comm: an OSC "set title" sequence
EVIL_ARG=$'\e[2J\xc2\x9b31m'			# clear screen, then a C1 CSI
ln -s "$PROGS/simple_leak" "$T/$EVIL_NAME"

# has_control FILE: does FILE hold a C0 control other than newline, DEL or a C1 CSI?
has_control() { LC_ALL=C grep -qP '[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]' "$1"; }

# The program's argument is its handshake directory (simple_leak DIR: DIR/done once it
# leaked, then it waits for DIR/quit), named with the escapes.
EVIL_DIR=$T/$EVIL_ARG
snapshot_names_it() {
	[ "$(jq -r '.processes[0].cmdline // empty' "$T/snap.json" 2>/dev/null)" != "" ]
}

hostile_run() {
	mkdir -p "$EVIL_DIR"
	lt_bg "$T/batch" "$T/batch.err" -b -i 0.2 -j "$T/snap.json" -- "$T/$EVIL_NAME" "$EVIL_DIR"
	wait_file "$EVIL_DIR/done" || return 1
	wait_until "a snapshot with the program's command line" snapshot_names_it || return 1
	touch "$EVIL_DIR/quit"
	wait_exit "$LT_PID" || return 1
	expect_eq "exit status (stderr: $(cat -v "$T/batch.err"))" 0 "$WAIT_STATUS"
}

test_batch_report_escapes_comm_and_cmdline() {
	scenario hostile_run || return 1
	! has_control "$T/batch" || fail_because "raw control bytes: $(cat -v "$T/batch")" ||
		return 1
	grep -qF 'PID ' "$T/batch" || fail_because "no process in: $(cat "$T/batch")" || return 1
	grep -qE '^PID [0-9]+ \\x1b\]0;PWNED\\x07x \(exited\)  \[.*\\x1b\]0;PWNED\\x07x .*\\x1b\[2J\\xc2\\x9b31m\]$' \
		"$T/batch" || fail_because "no escaped PID line in: $(grep '^PID' "$T/batch")"
}

test_stderr_escapes_the_command_name() {
	scenario hostile_run || return 1
	! has_control "$T/batch.err" || fail_because "raw control bytes: $(cat -v "$T/batch.err")" ||
		return 1
	grep -qF '\x1b]0;PWNED\x07x exited with status 0' "$T/batch.err" ||
		fail_because "stderr: $(cat "$T/batch.err")"
}

test_snapshot_json_keeps_the_real_bytes() {
	scenario hostile_run || return 1
	expect_eq "comm" "$EVIL_NAME" "$(jq -r '.processes[0].comm' "$T/snap.json")" || return 1
	expect_eq "cmdline's argument" "$EVIL_DIR" \
		"$(jq -r '.processes[0].cmdline | split(" ") | last' "$T/snap.json")"
}

test_report_and_diff_of_the_snapshot_escape_too() {
	scenario hostile_run || return 1
	"$LEAKTOP" report "$T/snap.json" >"$T/report" 2>"$T/report.err" ||
		fail_because "report failed: $(cat "$T/report.err")" || return 1
	! has_control "$T/report" || fail_because "report: $(cat -v "$T/report")" || return 1
	grep -qE '^PID [0-9]+ \\x1b\]0;PWNED\\x07x' "$T/report" ||
		fail_because "report: $(grep '^PID' "$T/report")" || return 1
	"$LEAKTOP" diff "$T/snap.json" "$T/snap.json" >"$T/diff" 2>"$T/diff.err" ||
		fail_because "diff failed: $(cat "$T/diff.err")" || return 1
	! has_control "$T/diff" || fail_because "diff: $(cat -v "$T/diff")" || return 1
	grep -qE '^PID [0-9]+ \\x1b\]0;PWNED\\x07x  \[.*\\x1b\[2J\\xc2\\x9b31m\]$' "$T/diff" ||
		fail_because "diff: $(grep '^PID' "$T/diff")"
}

# mode_of FILE: its permission bits in octal.
mode_of() { stat -c %a "$1"; }

test_output_files_are_private_by_default() {
	scenario hostile_run || return 1
	expect_eq "mode of -j's snapshot" 600 "$(mode_of "$T/snap.json")" || return 1
	"$LEAKTOP" report "$T/snap.json" -f folded -o "$T/default.folded" 2>"$T/err" ||
		fail_because "report -o: $(cat "$T/err")" || return 1
	expect_eq "mode of report -o" 600 "$(mode_of "$T/default.folded")"
}

test_file_mode_widens_and_umask_narrows() {
	scenario hostile_run || return 1
	"$LEAKTOP" report "$T/snap.json" -o "$T/shared.txt" --file-mode 0644 2>"$T/err" ||
		fail_because "--file-mode 0644: $(cat "$T/err")" || return 1
	expect_eq "mode with --file-mode 0644" 644 "$(mode_of "$T/shared.txt")" || return 1
	(umask 077 && "$LEAKTOP" report "$T/snap.json" -o "$T/narrow.txt" --file-mode 0644) \
		2>"$T/err" || fail_because "under umask 077: $(cat "$T/err")" || return 1
	expect_eq "mode with --file-mode 0644 under umask 077" 600 "$(mode_of "$T/narrow.txt")" ||
		return 1
	lt_fg "$T/out" "$T/err" -b -i 0.2 --file-mode 640 -j "$T/group.json" \
		-- "$PROGS/simple_leak"
	expect_eq "exit status (stderr: $(cat "$T/err"))" 0 "$LT_STATUS" || return 1
	expect_eq "mode of -j with --file-mode 640" 640 "$(mode_of "$T/group.json")"
}

test_bad_file_mode_is_a_usage_error() {
	"$LEAKTOP" report "$T/snap.json" --file-mode 0800 >/dev/null 2>"$T/err"
	expect_eq "exit status" 2 "$?" || return 1
	expect_match "message" "^leaktop: invalid --file-mode '0800': expected an octal mode" \
		"$(cat "$T/err")"
}


# ------------------------------------------------------------ a file that cannot be written

stderr_has_failures() { [ "$(grep -c "^leaktop: cannot write $1" "$2")" -ge "$3" ]; }

# Its directory removed, the snapshot cannot be written: one line each interval, and the
# run goes on; once the directory is back, the next interval writes it again.
test_snapshot_file_write_failure_is_reported_and_retried_not_the_end() {
	local d=$T/retry
	mkdir -p "$d/w" "$d/out"
	"$PROGS/waiter" "$d/w" nogo &
	BG_PIDS+=("$!")
	wait_file "$d/w/ready" || return 1
	lt_bg "$d/batch" "$d/err" -b -i 0.2 -j "$d/out/snap.json" -p "$(pid_in "$d/w/ready")"
	wait_snapshot_file "$d/out/snap.json" "$d/err" || return 1
	rm -rf "$d/out"
	wait_until "two failed intervals on stderr" stderr_has_failures "$d/out/snap.json" \
		"$d/err" 2 || return 1
	kill -0 "$LT_PID" 2>/dev/null || fail_because "leaktop ended: $(cat "$d/err")" ||
		return 1
	mkdir -p "$d/out"
	wait_file "$d/out/snap.json" || return 1
	signal INT "$LT_PID"
	wait_exit "$LT_PID" || return 1
	expect_eq "exit status (the last write worked)" 0 "$WAIT_STATUS" || return 1
	expect_eq "stderr lines other than the failed writes" "" \
		"$(grep -v "^leaktop: cannot write $d/out/snap.json" "$d/err")"
}

run_tests
