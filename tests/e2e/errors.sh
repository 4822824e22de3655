#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# errors.sh - error paths: exit status 2 for usage errors, 1 for runtime failures, and
# exactly one line on stderr ("leaktop: ..."), naming the problem.

. "$(dirname "$0")/lib.sh"
require_root
require_built waiter

ER=$E2E_TMP/errors
mkdir -p "$ER"

# lt_err STATUS REGEX ARG...: leaktop ARG... must exit with STATUS and write exactly one
# line to stderr, starting with "leaktop: " and matching REGEX.
lt_err() {
	local want=$1 regex=$2 lines
	shift 2
	lt_fg "$ER/out" "$ER/err" "$@"
	expect_eq "exit status of 'leaktop $*'" "$want" "$LT_STATUS" || {
		FAIL_MSG="$FAIL_MSG; stderr: $(cat "$ER/err")"
		return 1
	}
	lines=$(stderr_lines "$ER/err")
	expect_eq "lines on stderr of 'leaktop $*' ($(cat "$ER/err"))" 1 "$lines" || return 1
	expect_match "stderr of 'leaktop $*'" "^leaktop: .*$regex" "$(cat "$ER/err")"
}

test_nonexistent_pid_exits_1() {
	lt_err 1 "4194303" -b -d 1 -p 4194303
}

test_bad_pid_syntax_exits_2() {
	lt_err 2 "abc" -b -d 1 -p abc || return 1
	lt_err 2 "PID" -b -d 1 -p 0 || return 1
	lt_err 2 "12x" -b -d 1 -p 12x
}

test_missing_command_after_dashes_exits_2() {
	lt_err 2 "command" -b --
}

test_unknown_option_exits_2() {
	lt_err 2 "--bogus" -b --bogus || return 1
	lt_err 2 "-x" -x
}

test_bad_interval_exits_2() {
	lt_err 2 "interval" -b -i 0 -d 1 || return 1
	lt_err 2 "interval" -b -i abc -d 1 || return 1
	lt_err 2 "interval" -b -i -1 -d 1 || return 1
	lt_err 2 "-i" -b -i
}

test_pid_and_command_together_exit_2() {
	lt_err 2 "-p" -b -p $$ -- /bin/true
}

test_command_not_found_exits_1() {
	lt_err 1 "/nonexistent/cmd" -b -- /nonexistent/cmd || return 1
	lt_err 1 "leaktop-no-such-command" -b -- leaktop-no-such-command
}

test_unprivileged_user_refused_exits_1() {
	timeout -k 5 60 setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		--bounding-set=-all "$LEAKTOP" -b -d 1 >"$ER/out" 2>"$ER/err"
	LT_STATUS=$?
	expect_eq "exit status as uid 65534" 1 "$LT_STATUS" || return 1
	expect_eq "lines on stderr ($(cat "$ER/err"))" 1 "$(stderr_lines "$ER/err")" || return 1
	expect_match "stderr as uid 65534" "^leaktop: .*privilege.*(root|CAP_)" "$(cat "$ER/err")"
}

test_root_without_capabilities_refused_exits_1() {
	local capeff
	capeff=$(setpriv --inh-caps=-all --bounding-set=-all awk '/^CapEff:/ { print $2 }' \
		/proc/self/status)
	expect_eq "CapEff of uid 0 after dropping the bounding set" 0000000000000000 "$capeff" ||
		return 1
	timeout -k 5 60 setpriv --inh-caps=-all --bounding-set=-all "$LEAKTOP" -b -d 1 \
		>"$ER/out" 2>"$ER/err"
	LT_STATUS=$?
	expect_eq "exit status as uid 0 without capabilities" 1 "$LT_STATUS" || return 1
	expect_eq "lines on stderr ($(cat "$ER/err"))" 1 "$(stderr_lines "$ER/err")" || return 1
	expect_match "stderr without capabilities" "^leaktop: .*privilege.*(root|CAP_)" \
		"$(cat "$ER/err")"
}

test_json_symlink_refused_and_target_untouched() {
	local before after
	echo "precious" >"$ER/target"
	touch -d '2020-01-01 00:00:00' "$ER/target"
	ln -sfn "$ER/target" "$ER/link.json"
	before=$(stat -c '%s %Y %i' "$ER/target")
	lt_err 1 "symbolic link" -b -i 0.2 -d 1 -j "$ER/link.json" -- /bin/true || return 1
	after=$(stat -c '%s %Y %i' "$ER/target")
	expect_eq "target's size, mtime and inode" "$before" "$after" || return 1
	expect_eq "target's content" precious "$(cat "$ER/target")" || return 1
	[ -L "$ER/link.json" ] || fail_because "$ER/link.json is no longer a symbolic link"
}

test_json_dangling_symlink_refused_and_not_followed() {
	rm -f "$ER/nowhere"
	ln -sfn "$ER/nowhere" "$ER/dangling.json"
	lt_err 1 "symbolic link" -b -i 0.2 -d 1 -j "$ER/dangling.json" -- /bin/true || return 1
	[ ! -e "$ER/nowhere" ] || fail_because "leaktop created the symbolic link's target"
}

test_json_in_missing_directory_refused_before_command_runs() {
	rm -f "$ER/ran"
	lt_err 1 "$ER/missing/x.json" -b -i 0.2 -j "$ER/missing/x.json" -- \
		/bin/sh -c "touch '$ER/ran'" || return 1
	[ ! -e "$ER/ran" ] ||
		fail_because "the command ran although leaktop could never write its snapshot"
}

# Three traced processes take 3 x 17 perf descriptors: more than a soft limit of 40, which
# leaktop raises to the hard limit (and still runs CMD under the user's own limits).
test_low_soft_open_file_limit_is_raised_to_the_hard_one() {
	local d=$ER/nofile pids=() i
	for i in 1 2 3; do
		mkdir -p "$d/$i"
		"$PROGS/waiter" "$d/$i" nogo &
		BG_PIDS+=("$!")
		pids+=("$!")
	done
	for i in 1 2 3; do
		wait_file "$d/$i/ready" || return 1
	done
	( ulimit -S -n 40 && lt_fg "$ER/out" "$ER/err" -b -i 0.2 -d 1 -p "$(IFS=,; echo "${pids[*]}")" &&
		exit "$LT_STATUS" )
	expect_eq "exit status under ulimit -S -n 40 (stderr: $(cat "$ER/err"))" 0 "$?" || return 1
	expect_eq "stderr" "" "$(cat "$ER/err")" || return 1
	expect_eq "soft limit of a command run by leaktop under ulimit -S -n 40" 40 \
		"$(ulimit -S -n 40 && "$LEAKTOP" -b -d 0.2 -- sh -c 'ulimit -S -n' 2>/dev/null |
		   grep -x '[0-9]*')"
}

test_help_exits_0_and_mentions_pid_option() {
	lt_fg "$ER/out" "$ER/err" --help
	expect_eq "exit status of --help" 0 "$LT_STATUS" || return 1
	expect_eq "stderr of --help" "" "$(cat "$ER/err")" || return 1
	grep -q -- '-p, --pid' "$ER/out" || fail_because "--help does not mention -p: $(cat "$ER/out")"
}

test_version_exits_0() {
	lt_fg "$ER/out" "$ER/err" --version
	expect_eq "exit status of --version" 0 "$LT_STATUS" || return 1
	expect_match "output of --version" '^leaktop [0-9]+\.[0-9]+' "$(cat "$ER/out")"
}

run_tests
