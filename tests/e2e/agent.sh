#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# agent.sh - `leaktop --agent -- CMD`: the heap traced inside the process by the preloaded
# libleaktop-agent.so gives what the uprobes give.
#
# Each heap test program with exact expectations runs twice, under `leaktop -- CMD` (the
# uprobes) and under `leaktop --agent -- CMD`; the heap sites of every process it made (each
# process's last entry in the snapshots) must be the same: every frame's function,
# outstanding count and bytes, allocs and frees.  (Stack ids are of addresses: the agent's
# own mapping moves the libraries of its run, and its own TLS block grows the one each
# thread's start allocates, allocate_dtv's, which is left out.)  The agent's run must trap
# no allocator call.

. "$(dirname "$0")/lib.sh"
require_root
require_built heap_kinds realloc_race thread_leak cxx_new fork_leak exec_leak simple_leak \
	alloc_any_je cxx_any
[ -e "$(dirname "$LEAKTOP")/libleaktop-agent.so" ] ||
	{ echo "FAIL agent_library_built: no libleaktop-agent.so beside $LEAKTOP (make)"; exit 1; }

AG=$E2E_TMP/agent

# run_under DIR WAITFILE PROG [ARG...] -- [LEAKTOP OPTIONS...]: `leaktop OPTIONS -b -i
# INTERVAL -j - -- PROGS/PROG DIR/dir ARG...` (@DIR@ in an ARG: DIR/dir; DIR/dir/go and
# go_exec made first), until
# DIR/dir/WAITFILE exists and two more snapshots; then quit, leaktop's end, and in
# DIR/sites.json the heap sites of every process, each as its last snapshot had it.
run_under() {
	local dir=$1 wait=$2 prog=$3 args=() opts=()
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("${1//@DIR@/$dir/dir}"); shift; done
	[ $# -gt 0 ] && shift
	opts=("$@")
	mkdir -p "$dir/dir"
	touch "$dir/dir/go" "$dir/dir/go_exec"
	lt_bg "$dir/out.jsonl" "$dir/err" "${opts[@]}" -b -i "$INTERVAL" -j - -- "$PROGS/$prog" \
		"$dir/dir" "${args[@]}"
	wait_file "$dir/dir/$wait" || return 1
	wait_two_more "$dir/out.jsonl" || return 1
	touch "$dir/dir/quit"
	wait_exit "$LT_PID" || return 1
	expect_eq "leaktop's exit status" 0 "$WAIT_STATUS" || return 1
	complete_lines "$dir/out.jsonl" | jq -s -c '
		[.[] | .processes[]] | group_by(.pid) | map(last) |
		[.[] | .sites[] | select(.kind == "heap") |
		 select(.stack[0].symbol != "allocate_dtv") |
		 [(.stack | map(.symbol)), .outstanding_count, .outstanding_bytes, .allocs, .frees]] |
		sort' >"$dir/sites.json"
	complete_lines "$dir/out.jsonl" | tail -n 1 >"$dir/final.json"
}

# parity NAME WAITFILE PROG [ARG...]: PROG under the uprobes and under --agent, same sites.
parity() {
	local name=$1 wait=$2 prog=$3
	shift 3
	run_under "$AG/$name/uprobes" "$wait" "$prog" "$@" -- || return 1
	run_under "$AG/$name/agent" "$wait" "$prog" "$@" -- --agent || return 1
	local u a
	u=$(cat "$AG/$name/uprobes/sites.json")
	a=$(cat "$AG/$name/agent/sites.json")
	[ "$u" != "[]" ] || fail_because "$prog: no heap site under the uprobes" || return 1
	[ "$a" == "$u" ] ||
		fail_because "$prog: heap sites as [frames, count, bytes, allocs, frees]" \
			"under --agent: $a; under the uprobes: $u"
}

# One scenario per program (scenario takes a function name alone).
p_heap_kinds() { parity heap_kinds done heap_kinds; }
p_realloc_race() { parity realloc_race done realloc_race; }
p_threads() { parity threads done thread_leak; }
p_cxx_new() { parity cxx_new done cxx_new; }
p_cxx_any() { parity cxx_any done cxx_any; }
p_jemalloc() { parity jemalloc done alloc_any_je; }
p_fork() { parity fork child_ready fork_leak; }
p_exec() { parity exec done exec_leak "$PROGS/simple_leak" @DIR@; }

# The agent's run: its processes say "agent", and no allocator call trapped.
expect_agent_run() {
	local f=$AG/$1/agent/final.json
	expect_jq "processes with heap sites traced by the uprobes" 0 "$f" \
		'[.processes[] | select((.sites | map(select(.kind == "heap")) | length) > 0 and
			.heap.via != "agent")] | length' || return 1
	expect_jq "allocator probe hits (stats.heap_calls)" 0 "$f" '.stats.heap_calls'
}

test_malloc_family_same_under_agent_as_uprobes() {
	scenario p_heap_kinds || return 1
	expect_agent_run heap_kinds
}

test_realloc_races_same_under_agent_as_uprobes() {
	scenario p_realloc_race
}

test_threads_same_under_agent_as_uprobes() {
	scenario p_threads
}

test_cxx_new_same_under_agent_as_uprobes() {
	scenario p_cxx_new || return 1
	expect_agent_run cxx_new
}

test_cxx_every_operator_same_under_agent_as_uprobes() {
	scenario p_cxx_any
}

test_jemalloc_same_under_agent_as_uprobes() {
	scenario p_jemalloc
}

test_fork_child_gets_its_own_channel() {
	scenario p_fork || return 1
	expect_jq "leak_in_child's site in the agent's run" 1 "$AG/fork/agent/sites.json" \
		'map(select(.[0][0] == "leak_in_child")) | length'
}

test_exec_image_starts_its_own_agent() {
	scenario p_exec || return 1
	expect_jq "the exec'd image's site in the agent's run" 1 "$AG/exec/agent/sites.json" \
		'map(select(.[0][0] == "leak_simple")) | length'
}

run_tests
