#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# check.sh - `leaktop check -- CMD` (issue 28), the leak gate, on tests/progs/check_prog:
#   - one definite leak: exit 23, the report and the JSON name leak_one at its line;
#   - the same with a suppression (function or module glob), or with a baseline of its first
#     run: CMD's own status, the leak counted as suppressed (listed with -v);
#   - a clean program: its own status, nothing found; --exit-code changes the leak status;
#     also exec'd by a shell (the shell's blocks, left at exec, are not the program's);
#   - a descriptor left open: reported, fails only under --fail-on fd, opened in
#     open_forgotten at its line;
#   - a forked child's leak: under the child's pid (its ppid CMD), the parent clean;
#     --junit: one test case per process, the child's failing;
#   - CMD killed by a signal: said, and leaktop exits 128 + the signal;
#   - output files are private (0600).
source "$(dirname "$0")/lib.sh"

require_root
require_built check_prog

T=$E2E_TMP/check
mkdir -p "$T"
PROG=$PROGS/check_prog

# check_run NAME [CHECK OPTIONS...] -- ARGS OF check_prog: leaktop check in the background,
# -j $T/NAME.json, stderr into $T/NAME.err; its exit status into CHECK_STATUS.
CHECK_STATUS=""
check_run() {
	local name=$1 opts=()
	shift
	while [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	"$LEAKTOP" check -j "$T/$name.json" "${opts[@]}" -- "$PROG" "$@" \
		>"$T/$name.out" 2>"$T/$name.err" &
	wait_exit $! || return 1
	CHECK_STATUS=$WAIT_STATUS
	[ -s "$T/$name.json" ] || fail_because "no JSON written; stderr: $(cat "$T/$name.err")"
}

# marker_line MARKER: the line of check_prog.c that carries /* MARKER */.
marker_line() {
	grep -n "/\* $1 \*/" "$PROG_SRC/check_prog.c" | cut -d: -f1
}

# The findings of KIND of the JSON as [pid is CMD's, objects, bytes, frame 0, its file, line,
# suppressed_by].
findings() {
	jqc "$T/$1.json" '[.command_status.pid as $cmd | .processes[] | (.pid == $cmd) as $is_cmd |
		.findings[] | select(.kind == $kind) | [$is_cmd, .objects, .bytes,
		.frames[0].symbol, (.frames[0].file | base), .frames[0].line, .suppressed_by]]' \
		--arg kind "$2"
}

# ---------------------------------------------------------------- a definite leak

leak_run() { check_run leak -- leak 5; }

test_definite_leak_fails_with_the_leak_status() {
	scenario leak_run || return 1
	expect_eq "exit status (stderr: $(cat "$T/leak.err"))" 23 "$CHECK_STATUS"
}

test_definite_leak_is_named_by_function_and_line() {
	scenario leak_run || return 1
	expect_eq "definite findings" \
		"[[true,1,100,\"leak_one\",\"check_prog.c\",$(marker_line LEAK:one),null]]" \
		"$(findings leak definite)" || return 1
	expect_match "the report" "Direct leak of 100 byte\(s\) in 1 object\(s\) allocated from:[[:space:]]+#0 0x[0-9a-f]+ in leak_one [^ ]*check_prog.c:$(marker_line LEAK:one) \(" \
		"$(cat "$T/leak.err")" || return 1
	expect_jq "command status, failed, status" '[5,null,true,23]' "$T/leak.json" \
		'[.command_status.exit_code, .command_status.signal, .failed, .status]'
}

test_definite_leak_json_is_private() {
	scenario leak_run || return 1
	expect_eq "mode of the JSON" 600 "$(stat -c %a "$T/leak.json")"
}

# ---------------------------------------------------------------- known leaks

test_suppressed_leak_passes_with_the_commands_status() {
	printf '# known\nleak:leak_*\n\nfd:nothing_here\n' >"$T/supp"
	check_run supp --suppressions "$T/supp" -v -- leak 5 || return 1
	expect_eq "exit status (stderr: $(cat "$T/supp.err"))" 5 "$CHECK_STATUS" || return 1
	expect_jq "suppressed, failed, rule uses" '[[1],false,[1,0]]' "$T/supp.json" \
		'[[.processes[].suppressed.definite], .failed, [.suppressions[].used]]' || return 1
	expect_match "-v lists it" "Suppressed \(leak:leak_\*\): Direct leak of 100 byte" \
		"$(cat "$T/supp.err")"
}

test_module_suppression_passes() {
	printf 'leak:check_pro?\n' >"$T/supp_mod"
	check_run supp_mod --suppressions "$T/supp_mod" -- leak 5 || return 1
	expect_eq "exit status (stderr: $(cat "$T/supp_mod.err"))" 5 "$CHECK_STATUS"
}

test_bad_suppression_is_refused_in_one_line() {
	printf 'leak:ok\nbogus\n' >"$T/supp_bad"
	"$LEAKTOP" check --suppressions "$T/supp_bad" -- "$PROG" clean >/dev/null 2>"$T/bad.err"
	expect_eq "exit status" 2 "$?" || return 1
	expect_eq "stderr" "leaktop: suppressions line 2: expected leak:PATTERN, fd:PATTERN or mmap:PATTERN" \
		"$(cat "$T/bad.err")"
}

test_baseline_of_the_first_run_passes_the_second() {
	check_run base1 --write-baseline "$T/baseline.json" -- leak 5 || return 1
	expect_eq "first run's status" 23 "$CHECK_STATUS" || return 1
	check_run base2 --baseline "$T/baseline.json" -- leak 5 || return 1
	expect_eq "second run's status (stderr: $(cat "$T/base2.err"))" 5 "$CHECK_STATUS" ||
		return 1
	expect_eq "its finding" \
		"[[true,1,100,\"leak_one\",\"check_prog.c\",$(marker_line LEAK:one),\"baseline\"]]" \
		"$(findings base2 definite)"
}

# ---------------------------------------------------------------- clean, exit codes

test_clean_program_passes_with_its_status() {
	check_run clean -- clean 3 || return 1
	expect_eq "exit status (stderr: $(cat "$T/clean.err"))" 3 "$CHECK_STATUS" || return 1
	expect_jq "processes, heap findings, failed" '[1,0,false]' "$T/clean.json" \
		'[(.processes | length), ([.processes[].findings[] | select(.kind != "fd")] |
		 length), .failed]'
}

# A shell that execs the program leaves its own blocks in the records of the image it was (its
# allocations are never freed: exec drops them); the program frees all of its own, so the
# newest image with records is the shell's.  Those blocks are not the program's to report.
test_blocks_of_the_image_before_exec_are_not_the_programs() {
	"$LEAKTOP" check -j "$T/exec.json" -- sh -c "exec '$PROG' clean 3" \
		>"$T/exec.out" 2>"$T/exec.err" &
	wait_exit $! || return 1
	expect_eq "exit status (stderr: $(cat "$T/exec.err"))" 3 "$WAIT_STATUS" || return 1
	expect_jq "processes, their comm, heap findings, failed" '[1,"check_prog",0,false]' \
		"$T/exec.json" '[(.processes | length), .processes[0].comm, ([.processes[].findings[] |
		 select(.kind != "fd" and .kind != "mmap")] | length), .failed]'
}

test_exit_code_option_sets_the_leak_status() {
	check_run code --exit-code 7 -- leak || return 1
	expect_eq "exit status" 7 "$CHECK_STATUS"
}

# ---------------------------------------------------------------- descriptors

test_fd_left_open_is_reported_but_passes_by_default() {
	check_run fd_default -- fd || return 1
	expect_eq "exit status (stderr: $(cat "$T/fd_default.err"))" 0 "$CHECK_STATUS" ||
		return 1
	expect_eq "fd findings" \
		"[[true,1,null,\"open_forgotten\",\"check_prog.c\",$(marker_line FD:open),null]]" \
		"$(findings fd_default fd)"
}

test_fd_left_open_fails_under_fail_on_fd_naming_the_open_caller() {
	check_run fd --fail-on definite,fd -- fd || return 1
	expect_eq "exit status (stderr: $(cat "$T/fd.err"))" 23 "$CHECK_STATUS" || return 1
	expect_jq "the finding fails, names /dev/null" '[[true,true]]' "$T/fd.json" \
		'[.processes[].findings[] | select(.kind == "fd") | [.fails,
		  (.what | test("/dev/null"))]]' || return 1
	expect_match "the report" "Open descriptor: 1 descriptor\(s\) left open \(fd [0-9]+ -> /dev/null\), opened at:[[:space:]]+#0 0x[0-9a-f]+ in open_forgotten [^ ]*check_prog.c:$(marker_line FD:open) " \
		"$(cat "$T/fd.err")"
}

# ---------------------------------------------------------------- a forked child

fork_run() { check_run fork --junit "$T/fork.xml" -- fork; }

test_forked_childs_leak_is_reported_under_the_childs_pid() {
	scenario fork_run || return 1
	expect_eq "exit status (stderr: $(cat "$T/fork.err"))" 23 "$CHECK_STATUS" || return 1
	expect_eq "definite findings" \
		"[[false,1,200,\"child_leak\",\"check_prog.c\",$(marker_line LEAK:child),null]]" \
		"$(findings fork definite)" || return 1
	expect_jq "the child's parent is CMD; processes failed as [CMD, child]" '[true,[false,true]]' \
		"$T/fork.json" '[.command_status.pid as $cmd | ([.processes[] | select(.pid != $cmd)
		 | .ppid] == [$cmd]), ([.processes[] | select(.pid == $cmd)] + [.processes[] |
		 select(.pid != $cmd)] | map(.failed))]'
}

test_junit_has_one_case_per_process_the_leaking_one_failing() {
	scenario fork_run || return 1
	local x
	x=$(cat "$T/fork.xml")
	expect_match "testsuite" '<testsuite name="leaktop check" tests="2" failures="1">' "$x" ||
		return 1
	expect_eq "test cases" 2 "$(grep -c '<testcase ' "$T/fork.xml")" || return 1
	expect_match "the failure names child_leak" '<failure message="1 leak finding\(s\) at exit">[^<]*child_leak' \
		"$x" || return 1
	expect_eq "mode of the JUnit file" 600 "$(stat -c %a "$T/fork.xml")"
}

# ---------------------------------------------------------------- a signal

test_command_killed_by_a_signal_is_reported() {
	check_run sig -- signal || return 1
	expect_eq "exit status (stderr: $(cat "$T/sig.err"))" 143 "$CHECK_STATUS" || return 1
	expect_jq "command status" '[null,15,143]' "$T/sig.json" \
		'[.command_status.exit_code, .command_status.signal, .status]' || return 1
	expect_match "the report" "killed by signal 15 \(Terminated\) \(before its exit: its memory was not checked\); leaktop exits 143" \
		"$(cat "$T/sig.err")"
}

# ---------------------------------------------------------------- mappings

test_mapping_left_fails_under_fail_on_mmap_naming_the_mmap_caller() {
	check_run mmap --fail-on definite,mmap -- mmap || return 1
	expect_eq "exit status (stderr: $(cat "$T/mmap.err"))" 23 "$CHECK_STATUS" || return 1
	expect_jq "the program's mapping findings as [fails, bytes, frame 1, its line]" \
		"[[true,65536,\"map_forgotten\",$(marker_line MMAP:map)]]" "$T/mmap.json" \
		'[.command_status.pid as $cmd | .processes[] | select(.pid == $cmd) | .findings[] |
		 select(.kind == "mmap" and any(.frames[]; .symbol == "map_forgotten")) |
		 [.fails, .bytes, ([.frames[] | select(.symbol == "map_forgotten")][0] |
		  .symbol, .line)]]' || return 1
	expect_match "the report" "Anonymous mapping: 65536 byte\\(s\\) in 1 mapping\\(s\\) left mapped, mapped at:" \
		"$(cat "$T/mmap.err")" || return 1
	expect_match "the report" "#[0-9]+ 0x[0-9a-f]+ in map_forgotten [^ ]*check_prog.c:$(marker_line MMAP:map) " \
		"$(cat "$T/mmap.err")"
}

test_mapping_left_passes_without_fail_on_mmap() {
	check_run mmap_default -- mmap 4 || return 1
	expect_eq "exit status (stderr: $(cat "$T/mmap_default.err"))" 4 "$CHECK_STATUS" ||
		return 1
	expect_jq "failed" false "$T/mmap_default.json" '.failed'
}

# ---------------------------------------------------------------- every way out

# exit() from a thread other than main, and the last thread's exit after main's pthread_exit
# (the C library's exit(0) in that thread), both reach the C library's _exit: the process is
# held there and scanned like one returning from main.
test_exit_from_a_thread_is_scanned() {
	check_run thread_exit -- thread_exit 5 || return 1
	expect_eq "exit status (stderr: $(cat "$T/thread_exit.err"))" 23 "$CHECK_STATUS" ||
		return 1
	expect_eq "definite findings" \
		"[[true,1,100,\"leak_one\",\"check_prog.c\",$(marker_line LEAK:one),null]]" \
		"$(findings thread_exit definite)" || return 1
	expect_jq "command status" '[5,null]' "$T/thread_exit.json" \
		'[.command_status.exit_code, .command_status.signal]'
}

test_last_thread_after_mains_pthread_exit_is_scanned() {
	check_run pthread_exit -- pthread_exit || return 1
	expect_eq "exit status (stderr: $(cat "$T/pthread_exit.err"))" 23 "$CHECK_STATUS" ||
		return 1
	expect_eq "definite findings" \
		"[[true,1,100,\"leak_one\",\"check_prog.c\",$(marker_line LEAK:one),null]]" \
		"$(findings pthread_exit definite)"
}

# A fatal signal ends the process in the kernel, never through _exit: nothing holds it, its
# memory cannot be read any more.  The report says which signal killed it and that its memory
# was not checked; leaktop exits with the shell's 128 + N.
expect_killed_unscanned() {
	local name=$1 sig=$2 text=$3
	check_run "$name" -- "$name" || return 1
	expect_eq "exit status (stderr: $(cat "$T/$name.err"))" $((128 + sig)) "$CHECK_STATUS" ||
		return 1
	expect_jq "command status, heap findings" "[null,$sig,$((128 + sig)),0]" "$T/$name.json" \
		'[.command_status.exit_code, .command_status.signal, .status, ([.processes[].findings[]
		 | select(.kind == "definite")] | length)]' || return 1
	expect_match "the report" "killed by signal $sig \\($text\\) \\(before its exit: its memory was not checked\\); leaktop exits $((128 + sig))" \
		"$(cat "$T/$name.err")"
}

test_sigsegv_is_reported_with_its_signal_unscanned() {
	expect_killed_unscanned segv 11 "Segmentation fault"
}

test_sigabrt_is_reported_with_its_signal_unscanned() {
	expect_killed_unscanned abort 6 Aborted
}

test_sigkill_is_reported_with_its_signal_unscanned() {
	expect_killed_unscanned kill 9 Killed
}

# ---------------------------------------------------------------- the agent (--agent)

# The heap traced inside the processes (libleaktop-agent.so preloaded): the same findings,
# from the agent's block table; its own descriptors (its channel, libunwind's pipe) are not
# the program's.

test_agent_definite_leak_is_named_by_function_and_line() {
	check_run agent_leak --agent -- leak 5 || return 1
	expect_eq "exit status (stderr: $(cat "$T/agent_leak.err"))" 23 "$CHECK_STATUS" || return 1
	expect_eq "definite findings" \
		"[[true,1,100,\"leak_one\",\"check_prog.c\",$(marker_line LEAK:one),null]]" \
		"$(findings agent_leak definite)"
}

test_agent_forked_childs_leak_is_reported_under_the_childs_pid() {
	check_run agent_fork --agent -- fork || return 1
	expect_eq "exit status (stderr: $(cat "$T/agent_fork.err"))" 23 "$CHECK_STATUS" || return 1
	expect_eq "definite findings" \
		"[[false,1,200,\"child_leak\",\"check_prog.c\",$(marker_line LEAK:child),null]]" \
		"$(findings agent_fork definite)"
}

test_agent_clean_program_passes_and_the_agents_descriptors_are_not_reported() {
	check_run agent_clean --agent --fail-on definite,fd -- clean 3 || return 1
	expect_eq "exit status (stderr: $(cat "$T/agent_clean.err"))" 3 "$CHECK_STATUS" || return 1
	expect_jq "processes, scanned, findings, failed" '[1,true,[],false]' "$T/agent_clean.json" \
		'[(.processes | length), .processes[0].scanned, [.processes[].findings[] |
		 select(.kind != "mmap")], .failed]'
}

run_tests
