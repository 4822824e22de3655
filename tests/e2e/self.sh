#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# self.sh - leaktop's own allocations never reach the allocator it probes.
#
# In whole-system mode the allocator probes sit in every process's libc, leaktop's too.
# leaktop links its own allocator (jemalloc) into its executable and exports it, so neither
# its code nor the libraries it loads (libbpf, libdw, jansson, protobuf-c, zlib, libc's own
# strdup/fopen/qsort) call libc's.  The BPF programs count every probe hit of leaktop's
# process before ignoring it (stats.self_hits); a busy run, where leaktop traces allocator
# churn, symbolizes new processes and writes JSON, pprof and folded stacks every interval,
# must end with 0.  The negative control is the same leaktop linked on libc's allocator
# (build/tests/leaktop-libc-malloc): a whole-system run of it must count its traps.

. "$(dirname "$0")/lib.sh"
require_root
require_built busy_leak simple_leak

CONTROL=${LEAKTOP_CONTROL:-$E2E_ROOT/build/tests/leaktop-libc-malloc}
[ -x "$CONTROL" ] || { echo "FAIL $(basename "$0"): $CONTROL is not built"; exit 1; }

SF=$E2E_TMP/self
SF_THREADS=2
SF_SHORT=6
ALLOC_FNS="malloc free calloc realloc reallocarray posix_memalign aligned_alloc memalign
	   valloc pvalloc malloc_usable_size"

test_executable_defines_and_exports_every_allocator_function() {
	local fn missing="" syms
	syms=$(nm -D --defined-only "$LEAKTOP" 2>&1) || fail_because "nm -D: $syms" || return 1
	for fn in $ALLOC_FNS; do
		grep -Eq "^[0-9a-f]+ [TW] $fn\$" <<<"$syms" || missing="$missing $fn"
	done
	[ -z "$missing" ] || fail_because "not defined and exported by $LEAKTOP:$missing"
}

# busy_run NAME BINARY: whole-system BINARY while busy_leak's threads call every allocator
# function in a loop and short-lived programs come and go; then busy_leak leaks 5 blocks per
# thread, and leaktop is stopped with SIGINT after a snapshot that saw them.  Leaves
# $SF/NAME/final.json, $SF/NAME/short.json (a snapshot with the short-lived programs' leaks),
# the busy program's pid in $SF/NAME/busy_pid, leaktop's /proc/PID/smaps before the SIGINT in
# $SF/NAME/smaps, leaktop's in $SF/NAME/lt_pid and the
# short-lived programs' in $SF/NAME/short_pids.
busy_run() {
	local name=$1 bin=$2 dir=$SF/$1 bz i
	mkdir -p "$dir/busy"
	"$PROGS/busy_leak" "$dir/busy" "$SF_THREADS" &
	bz=$!
	BG_PIDS+=("$bz")
	echo "$bz" >"$dir/busy_pid"
	wait_file "$dir/busy/ready" || return 1
	LEAKTOP=$bin lt_bg "$dir/out" "$dir/err" -b -i "$INTERVAL" --exact -j "$dir/snap.json" \
		--pprof "$dir/profile.pb.gz" --folded "$dir/folded.txt"
	echo "$LT_PID" >"$dir/lt_pid"
	wait_snapshot_file "$dir/snap.json" "$dir/err" || return 1
	# New processes while the churn goes on: leaktop reads their maps and symbolizes them.
	: >"$dir/short_pids"
	for i in $(seq "$SF_SHORT"); do
		mkdir -p "$dir/short$i"
		"$PROGS/simple_leak" "$dir/short$i" &
		echo $! >>"$dir/short_pids"
		BG_PIDS+=("$!")
	done
	for i in $(seq "$SF_SHORT"); do
		wait_file "$dir/short$i/done" || return 1
	done
	# Two snapshots later, the second was certainly collected after their leaks.
	wait_snapshot_after "$dir/snap.json" "$(elapsed_of "$dir/snap.json")" || return 1
	wait_snapshot_after "$dir/snap.json" "$SNAP_T" || return 1
	cp "$dir/snap.json" "$dir/short.json"
	for i in $(seq "$SF_SHORT"); do
		touch "$dir/short$i/quit"
	done
	touch "$dir/busy/go"
	wait_file "$dir/busy/done" || return 1
	wait_until "busy_leak's leaks in $dir/snap.json" json_true "$dir/snap.json" \
		'[procs($pid) | sites_at("leak_after_go") | .outstanding_count] == [$n]' \
		--argjson pid "$bz" --argjson n $((SF_THREADS * 5)) || return 1
	cp "/proc/$LT_PID/smaps" "$dir/smaps" 2>/dev/null
	signal INT "$LT_PID"
	wait_exit "$LT_PID" || return 1
	expect_eq "leaktop's exit status after SIGINT" 0 "$WAIT_STATUS" || return 1
	cp "$dir/snap.json" "$dir/final.json"
	touch "$dir/busy/quit"
	wait_exit "$bz"
}

elapsed_of() { jq '.elapsed_s' "$1" 2>/dev/null || echo -1; }

# wait_snapshot_after FILE T: wait for a snapshot of FILE taken after elapsed_s T; its
# elapsed_s goes to SNAP_T.
SNAP_T=""
wait_snapshot_after() {
	wait_until "a snapshot in $1 after elapsed_s $2" json_true "$1" '.elapsed_s > $t' \
		--argjson t "$2" || return 1
	SNAP_T=$(elapsed_of "$1")
}

run_self() { busy_run self "$LEAKTOP"; }

# The control: whole-system leaktop on libc's allocator, doing the same kind of work (attach,
# collect, symbolize, write JSON, pprof and folded stacks) for one second (-d 1; its final
# snapshot counts everything up to its last collection).  Not the whole busy run, and a
# longer wait for its end: its own traps make it slow on a busy machine, which is the point.
run_control() {
	local dir=$SF/control
	mkdir -p "$dir"
	LEAKTOP=$CONTROL lt_bg "$dir/out" "$dir/err" -b -i "$INTERVAL" -d 1 --exact -j "$dir/snap.json" \
		--pprof "$dir/profile.pb.gz" --folded "$dir/folded.txt"
	echo "$LT_PID" >"$dir/lt_pid"
	EXIT_WAIT_S=600 wait_exit "$LT_PID" || return 1
	expect_eq "control leaktop's exit status (its stderr: $(cat "$dir/err"))" 0 \
		"$WAIT_STATUS" || return 1
	cp "$dir/snap.json" "$dir/final.json"
}

test_busy_whole_system_run_takes_no_probe_hit_in_leaktop() {
	scenario run_self || return 1
	expect_jq "stats.self_hits" 0 "$SF/self/final.json" '.stats.self_hits'
}

# The run above is only evidence if leaktop really traced, symbolized and wrote: the busy
# program's leak is counted exactly, each short-lived program's leak is resolved to its
# function, and the exports were written.
test_busy_whole_system_run_counted_and_resolved_what_it_traced() {
	local short
	scenario run_self || return 1
	expect_site "$SF/self/final.json" "$(cat "$SF/self/busy_pid")" leak_after_go \
		$((SF_THREADS * 5)) $((SF_THREADS * 5 * 321)) $((SF_THREADS * 5)) 0 || return 1
	for short in $(cat "$SF/self/short_pids"); do
		expect_site "$SF/self/short.json" "$short" leak_simple 3 192 3 0 || return 1
	done
	[ -s "$SF/self/profile.pb.gz" ] && [ -s "$SF/self/folded.txt" ] ||
		fail_because "the pprof or folded export is missing or empty"
}

# leaktop's own descriptor syscalls (reading /proc each interval) reach the syscall
# tracepoints, which run for every process: counted apart, never traced as a process.
test_own_descriptor_syscalls_are_counted_and_never_traced() {
	local lt
	scenario run_self || return 1
	lt=$(cat "$SF/self/lt_pid")
	expect_jq "stats.self_syscalls > 0" true "$SF/self/final.json" '.stats.self_syscalls > 0' ||
		return 1
	expect_jq "entries of leaktop's own pid" 0 "$SF/self/final.json" \
		'[procs($pid)] | length' --argjson pid "$lt"
}

# The control: leaktop on libc's allocator.  Its own calls hit the probes, and the kernel
# counts them; so 0 above means no trap, not a counter that never counts.
test_libc_malloc_control_counts_its_own_probe_hits() {
	scenario run_control || return 1
	expect_jq "control run: stats.self_hits > 0" true "$SF/control/final.json" \
		'.stats.self_hits > 0' || {
		FAIL_MSG="$FAIL_MSG (stats.self_hits $(jqc "$SF/control/final.json" '.stats.self_hits'))"
		return 1
	}
	expect_jq "control run: entries of leaktop's own pid" 0 "$SF/control/final.json" \
		'[procs($pid)] | length' --argjson pid "$(cat "$SF/control/lt_pid")"
}

# leaktop's own memory (issue 25): the unwind rows map (stats.unwind_rows_capacity rows of 8
# bytes, 16 MiB by default) is the kernel's; leaktop maps only the pages it is writing, so its
# resident memory never holds the map's pages (mapped whole, all of them were counted).  Its
# ring buffers stay mapped: all BPF map mappings together stay under half the rows map.
test_resident_memory_holds_no_unwind_rows_map() {
	local rows_kib bpf_kib
	scenario run_self || return 1
	rows_kib=$(jq '.stats.unwind_rows_capacity * 8 / 1024' "$SF/self/final.json") || return 1
	bpf_kib=$(awk '/^[0-9a-f]+-[0-9a-f]+ / { bpf = ($6 == "anon_inode:bpf-map") }
		bpf && /^Rss:/ { s += $2 } END { print s + 0 }' "$SF/self/smaps")
	[ -s "$SF/self/smaps" ] || fail_because "leaktop's smaps were not read" || return 1
	[ "$bpf_kib" -lt $((rows_kib / 2)) ] ||
		fail_because "BPF maps resident in leaktop: $bpf_kib KiB (the rows map: $rows_kib KiB)"
}

# leaktop's allocator gives freed pages back to the kernel within a second (jemalloc's default
# kept them for 10 s: a third of leaktop's peak memory under a build with process churn).
test_allocator_returns_freed_pages_within_a_second() {
	local conf
	conf=$(MALLOC_CONF=stats_print:true "$LEAKTOP" --version 2>&1 >/dev/null)
	grep -q "opt.dirty_decay_ms: 1000 " <<<"$conf" && grep -q "opt.muzzy_decay_ms: 0 " <<<"$conf" ||
		fail_because "jemalloc's options: $(grep -E 'decay_ms' <<<"$conf" | tr -s ' ' | head -2)"
}

run_tests
