#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# exec_bind.sh - a program a traced process execs is probed before its first instruction:
# its allocator (an LD_PRELOAD of tcmalloc, mimalloc or jemalloc through env, a static
# program a script execs, a C++ program under a preloaded jemalloc) is known from the new
# image's files and environment while the kernel holds it at exec, so its first allocations
# are counted exactly, under -- and under -p.  A process held at exec is never left stopped
# when leaktop ends (SIGTERM, SIGINT) in the middle of it.  What a program names as its
# DT_AUDIT library is never run by leaktop (review C11).
#
# tests/progs/early_leak.c leaks 1000 blocks of 48 bytes in leak_at_start(), the first
# thing its main does (cxx_early.cc: 1000 objects of 48 bytes with new, in
# leak_news_at_start()), writes DIR/done and waits for DIR/quit.

. "$(dirname "$0")/lib.sh"
require_root
require_built early_leak early_leak_static cxx_early exec_leak audit_prog libaudit_mark.so

EB=$E2E_TMP/exec_bind
LIBDIR=/usr/lib/x86_64-linux-gnu
declare -A EB_PID

# run_exec NAME CMD...: `leaktop -v -b -i INTERVAL -j - -- CMD EB/NAME/dir` until the
# program writes done; EB/NAME/alive.json is a snapshot taken after it, final.json the last.
run_exec() {
	local name=$1 dir=$EB/$1
	shift
	mkdir -p "$dir/dir"
	lt_bg "$dir/out.jsonl" "$dir/err" -v -b -i "$INTERVAL" -j - -- "$@" "$dir/dir"
	wait_file "$dir/dir/done" || return 1
	EB_PID[$name]=$(pid_in "$dir/dir/done")
	wait_two_more "$dir/out.jsonl" || return 1
	last_line "$dir/out.jsonl" "$dir/alive.json"
	touch "$dir/dir/quit"
	wait_exit "$LT_PID" || return 1
	last_line "$dir/out.jsonl" "$dir/final.json"
}

tcmalloc() { scenario run_tcmalloc; }
run_tcmalloc() {
	run_exec tcmalloc env LD_PRELOAD=$LIBDIR/libtcmalloc_minimal.so.4 "$PROGS/early_leak"
}
mimalloc() { scenario run_mimalloc; }
run_mimalloc() { run_exec mimalloc env LD_PRELOAD=$LIBDIR/libmimalloc.so.2 "$PROGS/early_leak"; }
jemalloc() { scenario run_jemalloc; }
run_jemalloc() { run_exec jemalloc env LD_PRELOAD=$LIBDIR/libjemalloc.so.2 "$PROGS/early_leak"; }
cxx_jemalloc() { scenario run_cxx_jemalloc; }
run_cxx_jemalloc() {
	run_exec cxx_jemalloc env LD_PRELOAD=libjemalloc.so.2 "$PROGS/cxx_early"
}
# A shell script (its interpreter dynamic, glibc) that execs a static program.
script_static() { scenario run_script_static; }
run_script_static() {
	mkdir -p "$EB/script_static"
	printf '#!/bin/sh\nexec "%s" "$1"\n' "$PROGS/early_leak_static" >"$EB/script_static/run.sh"
	chmod 755 "$EB/script_static/run.sh"
	run_exec script_static "$EB/script_static/run.sh"
}

# expect_early NAME FUNCTION: the 1000 blocks of 48 bytes at FUNCTION, from the first.
expect_early() {
	expect_site "$EB/$1/alive.json" "${EB_PID[$1]}" "$2" 1000 48000 1000 0
}

# expect_allocator NAME KIND MODULE_REGEX: processes[].heap.allocator of the program.
expect_allocator() {
	local got
	got=$(jqc "$EB/$1/alive.json" '[procs($pid) | .heap.allocator | .kind, (.module | base)]' \
		--argjson pid "${EB_PID[$1]}")
	expect_match "allocator [kind, module]" "^\[\"$2\",\"$3\"\]$" "$got"
}

# ------------------------------------------------------------ -- CMD that execs

test_env_preload_tcmalloc_first_allocations_counted() {
	tcmalloc || return 1
	expect_early tcmalloc leak_at_start
}

test_env_preload_tcmalloc_is_the_allocator() {
	tcmalloc || return 1
	expect_allocator tcmalloc tcmalloc 'libtcmalloc_minimal\.so\.4[.0-9]*'
}

test_env_preload_mimalloc_first_allocations_counted() {
	mimalloc || return 1
	expect_early mimalloc leak_at_start
}

test_env_preload_mimalloc_is_the_allocator() {
	mimalloc || return 1
	expect_allocator mimalloc mimalloc 'libmimalloc\.so\.2[.0-9]*'
}

test_env_preload_jemalloc_first_allocations_counted() {
	jemalloc || return 1
	expect_early jemalloc leak_at_start
}

test_env_preload_jemalloc_is_the_allocator() {
	jemalloc || return 1
	expect_allocator jemalloc jemalloc 'libjemalloc\.so\.2'
}

test_cxx_under_preloaded_jemalloc_first_news_counted() {
	cxx_jemalloc || return 1
	expect_early cxx_jemalloc "leak_news_at_start()" || return 1
	expect_allocator cxx_jemalloc jemalloc 'libjemalloc\.so\.2'
}

test_script_execing_static_program_first_allocations_counted() {
	script_static || return 1
	expect_early script_static leak_at_start || return 1
	expect_allocator script_static glibc 'early_leak_static'
}

# ------------------------------------------------------------ -p of a process that execs

# exec_leak (glibc) waits for go_exec, then execs env, which execs early_leak under
# tcmalloc: both execs happen under -p.
run_pid_exec() {
	local dir=$EB/pid_exec p
	mkdir -p "$dir/dir"
	"$PROGS/exec_leak" "$dir/dir" /usr/bin/env LD_PRELOAD=$LIBDIR/libtcmalloc_minimal.so.4 \
		"$PROGS/early_leak" "$dir/dir" &
	p=$!
	BG_PIDS+=("$p")
	wait_file "$dir/dir/ready_exec" || return 1
	lt_bg "$dir/out.jsonl" "$dir/err" -v -b -i "$INTERVAL" -j - -p "$p"
	wait_lines "$dir/out.jsonl" 1 || return 1
	touch "$dir/dir/go_exec"
	wait_file "$dir/dir/done" || return 1
	EB_PID[pid_exec]=$(pid_in "$dir/dir/done")
	wait_two_more "$dir/out.jsonl" || return 1
	last_line "$dir/out.jsonl" "$dir/alive.json"
	touch "$dir/dir/quit"
	wait_exit "$p"
	wait_exit "$LT_PID"
}

test_pid_exec_into_preloaded_tcmalloc_first_allocations_counted() {
	scenario run_pid_exec || return 1
	expect_early pid_exec leak_at_start || return 1
	expect_allocator pid_exec tcmalloc 'libtcmalloc_minimal\.so\.4[.0-9]*'
}

# ------------------------------------------------------------ never left stopped

# stop_loop SIG: leaktop -- a shell (deaf to SIGTERM and SIGINT, as leaktop passes its end
# on) that execs a preloaded program in a loop, each exec held for probes; leaktop gets SIG
# in the middle of it (SIGKILL too).  Once leaktop is gone, the loop must run on to its end: a child left
# stopped would hold it for good.
stop_loop() {
	local sig=$1 dir=$EB/stop_$1 sh_pid
	mkdir -p "$dir"
	lt_bg "$dir/out.jsonl" "$dir/err" -b -i "$INTERVAL" -j - -- /bin/sh -c '
		trap "" TERM INT
		echo $$ >"$1/sh"
		n=0
		while [ ! -e "$1/quit" ]; do
			env LD_PRELOAD="$2" /bin/true
			n=$((n + 1))
			[ $n = 20 ] && : >"$1/looping"
		done
		: >"$1/ended"' sh "$dir" "$LIBDIR/libtcmalloc_minimal.so.4"
	wait_file "$dir/looping" || return 1
	sh_pid=$(pid_in "$dir/sh")
	kill "-$sig" "$LT_PID"
	wait_exit "$LT_PID" || return 1
	touch "$dir/quit"
	WAIT_LIMIT=10 wait_until "the exec loop to end after leaktop (a child left stopped: $(
		ps -o pid=,stat=,args= --ppid "$sh_pid" 2>/dev/null))" test -e "$dir/ended"
}

test_sigterm_during_execs_leaves_no_process_stopped() {
	stop_loop TERM
}

test_sigint_during_execs_leaves_no_process_stopped() {
	stop_loop INT
}

# No handler runs: leaktop's guard (a child waiting on a pipe) releases what is held.
test_sigkill_during_execs_leaves_no_process_stopped() {
	stop_loop KILL
}

# ------------------------------------------------------------ C11: DT_AUDIT never run

test_audit_library_of_command_never_run_by_leaktop() {
	local dir=$EB/audit
	mkdir -p "$dir/dir"
	AUDIT_MARK=$dir/mark run_exec audit "$PROGS/audit_prog" || return 1
	expect_early audit leak_at_start || return 1
	[ ! -e "$dir/mark" ] ||
		fail_because "ld.so ran audit_prog's DT_AUDIT library as $(cat "$dir/mark")"
}

test_audit_library_of_execd_program_never_run_by_leaktop() {
	local dir=$EB/audit_exec
	mkdir -p "$dir/dir"
	AUDIT_MARK=$dir/mark run_exec audit_exec env "$PROGS/audit_prog" || return 1
	expect_early audit_exec leak_at_start || return 1
	[ ! -e "$dir/mark" ] ||
		fail_because "ld.so ran audit_prog's DT_AUDIT library as $(cat "$dir/mark")"
}

run_tests
