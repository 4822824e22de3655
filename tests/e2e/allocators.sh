#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# allocators.sh - leaktop finds and traces the allocator each process really uses, with no
# flag: Debian's tcmalloc and mimalloc preloaded, jemalloc linked, a static program's own
# glibc, C++ operators jemalloc defines, and Debian's redis-server (jemalloc) under load.
#
# tests/progs/alloc_any.c leaks known blocks through the C API, each function its own site;
# the numbers below mirror it.  -p runs start the program first (it waits for DIR/go, so
# every allocation of interest is made under the probes); -- runs predict the allocator
# from the command's files before it runs.

. "$(dirname "$0")/lib.sh"
require_root
require_built alloc_any alloc_any_je alloc_any_static cxx_new_je cxx_delete_je je_api

AL=$E2E_TMP/allocators
declare -A AL_PID

# run_pid_under NAME PROG [VAR=VALUE...]: start PROG AL/NAME/dir with the variables in its
# environment, trace it with -p once it waits, let it leak; snapshots in AL/NAME: alive.json
# (the last one while it lived) and final.json.  Its pid goes to AL_PID[NAME].
run_pid_under() {
	local name=$1 prog=$2 dir=$AL/$1
	shift 2
	run_pid_to_done "$dir" "$prog" "$@" || return 1
	AL_PID[$name]=$DONE_PID
	touch "$dir/dir/quit"
	wait_exit "$DONE_PID"
	wait_exit "$LT_PID" || return 1
	last_line "$dir/out.jsonl" "$dir/final.json"
}

# run_cmd_under NAME PROG: `leaktop -- PROGS/PROG` through run_to_done, go given at once.
run_cmd_under() {
	local name=$1 prog=$2 dir=$AL/$1
	mkdir -p "$dir/dir"
	touch "$dir/dir/go"
	run_to_done "$dir" "$prog" -v || return 1
	AL_PID[$name]=$DONE_PID
}

tcmalloc() { scenario run_tcmalloc; }
run_tcmalloc() { run_pid_under tcmalloc alloc_any LD_PRELOAD=libtcmalloc_minimal.so.4; }
mimalloc() { scenario run_mimalloc; }
run_mimalloc() { run_pid_under mimalloc alloc_any LD_PRELOAD=libmimalloc.so.2; }
jemalloc_pid() { scenario run_jemalloc_pid; }
run_jemalloc_pid() { run_pid_under jemalloc_pid alloc_any_je; }
jemalloc_cmd() { scenario run_jemalloc_cmd; }
run_jemalloc_cmd() { run_cmd_under jemalloc_cmd alloc_any_je; }
static_cmd() { scenario run_static_cmd; }
run_static_cmd() { run_cmd_under static_cmd alloc_any_static; }
glibc_pid() { scenario run_glibc_pid; }
run_glibc_pid() { run_pid_under glibc_pid alloc_any; }

# expect_alloc_any NAME: alloc_any's sites in AL/NAME/alive.json, exactly.
expect_alloc_any() {
	local f=$AL/$1/alive.json p=${AL_PID[$1]}
	expect_site "$f" "$p" leak_malloc 4 4000 4 0 &&
	expect_site "$f" "$p" leak_calloc 3 900 3 0 &&
	expect_site "$f" "$p" leak_realloc_null 2 1400 2 0 &&
	expect_site "$f" "$p" small_block 0 0 2 2 &&
	expect_site "$f" "$p" leak_realloc_grow 2 6000 2 0 &&
	expect_site "$f" "$p" leak_posix_memalign 2 1000 2 0 &&
	expect_site "$f" "$p" leak_aligned_alloc 2 1280 2 0 &&
	expect_site "$f" "$p" churn 0 0 100 100
}

# expect_allocator NAME KIND MODULE_REGEX: processes[].heap.allocator of the program.
expect_allocator() {
	local got
	got=$(jqc "$AL/$1/alive.json" '[procs($pid) | .heap.allocator | .kind, (.module | base)]' \
		--argjson pid "${AL_PID[$1]}")
	expect_match "allocator [kind, module]" "^\[\"$2\",\"$3\"\]$" "$got"
}

# ------------------------------------------------------------ preloaded allocators (-p)

test_tcmalloc_preload_leaks_counted_at_leaking_functions() {
	tcmalloc || return 1
	expect_alloc_any tcmalloc
}

test_tcmalloc_preload_is_the_process_allocator() {
	tcmalloc || return 1
	expect_allocator tcmalloc tcmalloc 'libtcmalloc_minimal\.so\.4[.0-9]*'
}

test_tcmalloc_preload_probes_tcmalloc_not_libc() {
	tcmalloc || return 1
	grep -q "libtcmalloc_minimal.so.4.*: a tcmalloc allocator" "$AL/tcmalloc/err" ||
		fail_because "no tcmalloc probes in -v: $(grep allocator "$AL/tcmalloc/err")" || return 1
	! grep -q "libc.so.6: malloc at" "$AL/tcmalloc/err" ||
		fail_because "libc, which nothing binds, was probed too"
}

test_mimalloc_preload_leaks_counted_at_leaking_functions() {
	mimalloc || return 1
	expect_alloc_any mimalloc
}

test_mimalloc_preload_is_the_process_allocator() {
	mimalloc || return 1
	expect_allocator mimalloc mimalloc 'libmimalloc\.so\.2[.0-9]*'
}

# ------------------------------------------------------------ whole system

# alloc_any under tcmalloc, whole-system leaktop (--exact: every process traced) started
# while it waits: the probes on every distinct allocator object reach it.
run_system() {
	local dir=$AL/system p
	mkdir -p "$dir/dir"
	env LD_PRELOAD=libtcmalloc_minimal.so.4 "$PROGS/alloc_any" "$dir/dir" &
	p=$!
	BG_PIDS+=("$p")
	AL_PID[system]=$p
	wait_file "$dir/dir/ready" || return 1
	# One snapshot file, replaced each interval: a whole-system snapshot is tens of MB on a
	# busy machine, JSON Lines of them (-j -) grew to hundreds of MB.
	lt_bg "$dir/out" "$dir/err" -v -b --exact -i "$INTERVAL" -j "$dir/snap.json"
	wait_snapshot_file "$dir/snap.json" "$dir/err" || return 1
	touch "$dir/dir/go"
	wait_file "$dir/dir/done" || return 1
	# Two snapshots collected after it was done, then leaktop's final one (whole system,
	# the symbolizer has more to do: stacks may come a snapshot later), taken while it
	# still lives.  No JSON is parsed while leaktop runs: it traces every process's
	# allocator calls, at several microseconds each, and jq makes 600,000 of them to read a
	# 15 MB snapshot.
	# (Bounded as a process's exit is: a whole-system snapshot of a busy machine can take
	# tens of seconds to write.)
	SYS_ELAPSED=()
	WAIT_LIMIT=$EXIT_WAIT_S wait_until "two snapshots after alloc_any was done" \
		snapshots_since "$dir/snap.json" 3 || return 1
	# Its stacks symbolized (grep, not jq: see above), before the final snapshot, whose
	# symbol budget goes to other processes' stacks too.
	WAIT_LIMIT=$EXIT_WAIT_S wait_until "alloc_any's functions named in a snapshot" \
		names_all "$dir/snap.json" leak_malloc leak_calloc leak_realloc_null small_block \
		leak_realloc_grow leak_posix_memalign leak_aligned_alloc churn || return 1
	signal INT "$LT_PID"
	wait_exit "$LT_PID" || return 1
	cp "$dir/snap.json" "$dir/alive.json"
	touch "$dir/dir/quit"
	wait_exit "$p"
}
system_mode() { scenario run_system; }
# names_all FILE SYMBOL...: one copy of FILE names every SYMBOL as a frame's symbol.
names_all() {
	local file=$1 copy=$AL/system/names.json sym
	shift
	cp "$file" "$copy" 2>/dev/null || return 1
	for sym in "$@"; do
		grep -q "\"symbol\": *\"$sym\"" "$copy" || return 1
	done
}
# snapshots_since FILE N: FILE (a snapshot replaced each interval) has held N distinct
# snapshots (by elapsed_s, read from its head) over the calls since SYS_ELAPSED was emptied.
SYS_ELAPSED=()
snapshots_since() {
	local e
	e=$(head -c 4096 "$1" 2>/dev/null | grep -o '"elapsed_s": *[0-9.e+-]*' | head -n 1)
	[ -n "$e" ] || return 1
	[ "${#SYS_ELAPSED[@]}" -gt 0 ] && [ "${SYS_ELAPSED[-1]}" = "$e" ] || SYS_ELAPSED+=("$e")
	[ "${#SYS_ELAPSED[@]}" -ge "$2" ]
}

test_system_mode_probes_preloaded_tcmalloc_and_counts_exactly() {
	system_mode || return 1
	grep -q "libtcmalloc_minimal.so.4.*: a tcmalloc allocator" "$AL/system/err" ||
		fail_because "whole-system leaktop did not probe tcmalloc:" \
			"$(grep 'allocator' "$AL/system/err" | head -5)" || return 1
	expect_alloc_any system || return 1
	expect_allocator system tcmalloc 'libtcmalloc_minimal\.so\.4[.0-9]*'
}

# ------------------------------------------------------------ linked jemalloc

test_jemalloc_linked_pid_mode_leaks_counted_at_leaking_functions() {
	jemalloc_pid || return 1
	expect_alloc_any jemalloc_pid
}

test_jemalloc_linked_pid_mode_is_the_process_allocator() {
	jemalloc_pid || return 1
	expect_allocator jemalloc_pid jemalloc 'libjemalloc\.so\.2'
}

test_jemalloc_linked_command_mode_predicted_before_it_runs() {
	jemalloc_cmd || return 1
	expect_alloc_any jemalloc_cmd || return 1
	expect_allocator jemalloc_cmd jemalloc 'libjemalloc\.so\.2'
}

# ------------------------------------------------------------ static, glibc control

test_static_program_traced_in_its_own_executable() {
	static_cmd || return 1
	expect_alloc_any static_cmd || return 1
	expect_allocator static_cmd glibc 'alloc_any_static'
}

test_glibc_program_pid_mode_same_numbers_as_other_allocators() {
	glibc_pid || return 1
	expect_alloc_any glibc_pid || return 1
	expect_allocator glibc_pid glibc 'libc\.so\.6'
}

# ------------------------------------------------------------ C++ operators in jemalloc

cxx_je() { scenario run_cxx_je; }
run_cxx_je() {
	run_to_done "$AL/cxx_je" cxx_new_je -v || return 1
	AL_PID[cxx_je]=$DONE_PID
}

test_cxx_new_in_jemalloc_counted_once_at_leaking_function() {
	cxx_je || return 1
	# jemalloc defines operator new: the probe is on it, the caller is the first frame.
	expect_site "$AL/cxx_je/final.json" "${AL_PID[cxx_je]}" "leak_new()" 5 240 5 0
}

test_cxx_new_array_in_jemalloc_counted_once_at_leaking_function() {
	cxx_je || return 1
	expect_site "$AL/cxx_je/final.json" "${AL_PID[cxx_je]}" "leak_new_array()" 3 600 3 0
}

test_cxx_jemalloc_probes_operator_new() {
	cxx_je || return 1
	grep -q "libjemalloc.so.2: _Znwm at" "$AL/cxx_je/err" ||
		fail_because "operator new of jemalloc not probed: $(grep -c ' at +0x' "$AL/cxx_je/err") probes"
}

cxx_delete() { scenario run_cxx_delete; }
run_cxx_delete() {
	run_to_done "$AL/cxx_delete" cxx_delete_je || return 1
	AL_PID[cxx_delete]=$DONE_PID
}

test_cxx_delete_forms_in_jemalloc_free_their_blocks() {
	local f=$AL/cxx_delete/final.json
	cxx_delete || return 1
	# (sized) delete, delete[], aligned new and delete, nothrow new: each freed where it was.
	expect_site "$f" "${AL_PID[cxx_delete]}" "churn_delete()" 1 48 10 9 &&
	expect_site "$f" "${AL_PID[cxx_delete]}" "churn_delete_array()" 0 0 6 6 &&
	expect_site "$f" "${AL_PID[cxx_delete]}" "churn_aligned()" 0 0 4 4 &&
	expect_site "$f" "${AL_PID[cxx_delete]}" "churn_nothrow()" 0 0 5 5
}

# ------------------------------------------------------------ jemalloc's own API

je_api() { scenario run_je_api; }
run_je_api() {
	run_to_done "$AL/je_api" je_api || return 1
	AL_PID[je_api]=$DONE_PID
}

test_jemalloc_mallocx_and_rallocx_leaks_counted() {
	local f=$AL/je_api/final.json
	je_api || return 1
	expect_site "$f" "${AL_PID[je_api]}" leak_mallocx 3 1500 3 0 &&
	expect_site "$f" "${AL_PID[je_api]}" first_block 0 0 2 2 &&
	expect_site "$f" "${AL_PID[je_api]}" leak_rallocx 2 10000 2 0
}

test_jemalloc_sdallocx_and_dallocx_free_their_blocks() {
	local f=$AL/je_api/final.json
	je_api || return 1
	expect_site "$f" "${AL_PID[je_api]}" churn_sdallocx 0 0 8 8 &&
	expect_site "$f" "${AL_PID[je_api]}" churn_dallocx 0 0 4 4
}

# ------------------------------------------------------------ redis-server (jemalloc)

RD=$AL/redis
redis_cli() { redis-cli -s "$RD/sock" "$@"; }
redis_up() { [ "$(redis_cli PING 2>/dev/null)" = PONG ]; }
# redis_heap: outstanding heap bytes of redis in the latest snapshot (RD_FILE: another).
redis_heap_of() {
	jqc "${RD_FILE:-$RD/last.json}" '[procs($pid) | .heap.outstanding_bytes] | .[0] // 0' \
		--argjson pid "$RD_PID"
}
redis_heap() { redis_heap_of; }
redis_latest() { last_line "$RD/out.jsonl" "$RD/last.json"; }
redis_heap_above() { redis_latest && [ "$(redis_heap)" -ge "$1" ]; }
redis_heap_below() { redis_latest && [ "$(redis_heap)" -le "$1" ]; }

RD_PID=""
run_redis() {
	mkdir -p "$RD"
	redis-server --port 0 --unixsocket "$RD/sock" --unixsocketperm 700 --save '' \
		--appendonly no --daemonize no --dir "$RD" >"$RD/redis.log" 2>&1 &
	RD_PID=$!
	BG_PIDS+=("$RD_PID")
	wait_until "redis-server to answer" redis_up || return 1
	lt_bg "$RD/out.jsonl" "$RD/err" -b -i 0.5 -j - -p "$RD_PID"
	wait_lines "$RD/out.jsonl" 2 || return 1
	redis_latest
	RD_BASE=$(redis_heap)
	# 50,000 keys with 40-byte values: at least 4 MB held in keys, values and the dict.
	seq 50000 | awk '{ printf "SET key:%d value-%034d\n", $1, $1 }' |
		redis_cli --pipe >"$RD/pipe.out" 2>&1 ||
		fail_because "redis-cli --pipe failed: $(cat "$RD/pipe.out")" || return 1
	[ "$(redis_cli DBSIZE)" = 50000 ] ||
		fail_because "redis holds $(redis_cli DBSIZE) keys, expected 50000" || return 1
	wait_until "redis's heap to grow by 4 MB" redis_heap_above $((RD_BASE + 4000000)) ||
		return 1
	cp "$RD/last.json" "$RD/full.json"
	redis_cli FLUSHALL SYNC >/dev/null
	wait_until "redis's heap to fall back after FLUSHALL" \
		redis_heap_below $((RD_BASE + 1000000)) || return 1
	cp "$RD/last.json" "$RD/flushed.json"
	signal INT "$LT_PID"
	wait_exit "$LT_PID" || return 1
	redis_cli SHUTDOWN NOSAVE >/dev/null 2>&1
	wait_exit "$RD_PID"
	return 0
}
redis() { scenario run_redis; }

test_redis_is_traced_in_its_jemalloc() {
	redis || return 1
	expect_eq "redis-server's allocator" '["jemalloc","libjemalloc.so.2"]' \
		"$(jqc "$RD/full.json" '[procs($pid) | .heap.allocator | .kind, (.module | base)]' \
			--argjson pid "$RD_PID")"
}

test_redis_heap_grows_at_sites_naming_redis_functions() {
	local got
	redis || return 1
	# The sites holding the most bytes: their stacks go through redis's own functions.
	got=$(jqc "$RD/full.json" '[procs($pid) | .sites | map(select(.kind == "heap")) |
		sort_by(-.outstanding_bytes) | .[0:3][] | [.stack[].symbol] |
		any(. == "dictAddRaw" or . == "createStringObject" or
		    . == "createEmbeddedStringObject" or . == "sdsnewlen" or
		    . == "_sdsnewlen" or . == "dbAdd" or . == "setKey")] | all' \
		--argjson pid "$RD_PID")
	expect_eq "top three heap sites of redis name its functions" true "$got" ||
		fail_because "$FAIL_MSG; the sites: $(jqc "$RD/full.json" '[procs($pid) |
			.sites | map(select(.kind == "heap")) | sort_by(-.outstanding_bytes) |
			.[0:3][] | [.outstanding_bytes, [.stack[0:4][].symbol]]]' \
			--argjson pid "$RD_PID")"
}

test_redis_heap_falls_back_after_flushall() {
	local full flushed
	redis || return 1
	full=$(RD_FILE=$RD/full.json redis_heap_of)
	flushed=$(RD_FILE=$RD/flushed.json redis_heap_of)
	[ "$full" -ge $((RD_BASE + 4000000)) ] && [ "$flushed" -le $((RD_BASE + 1000000)) ] ||
		fail_because "outstanding heap: $RD_BASE at the start, $full with 50,000 keys," \
			"$flushed after FLUSHALL"
}

run_tests
