#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# alloc_slack.sh - allocator slack told apart from leaks: the scan's walk of glibc's heap
# (scan.allocator) and the process flag allocator_retention.
#
# tests/progs/alloc_slack.c allocates SLACK_MIB MiB of 16 KiB blocks while traced, frees
# every other one and waits: glibc keeps half the heap resident in free chunks no other
# chunk can merge with.  `leaktop scan -p` then says how much glibc holds free and how much
# malloc_trim(0) would give back; the program then calls malloc_trim(0) itself and the test
# measures what its RSS lost.  SLACK_MIB is 96 by default, not 200: a scan copies the whole
# heap while the process is stopped, and on a loaded 2-core machine 200 MiB can outlast the
# scan's 2 s stop limit (the scan is then partial, nothing is measured).

. "$(dirname "$0")/lib.sh"
require_root
require_built alloc_slack

AS=$E2E_TMP/alloc_slack
AS_PID=""
SLACK_MIB=${SLACK_MIB:-96}
SLACK_BLOCK=16384
AS_RELEASED=""

# A snapshot of the program's scan after it freed: only the kept half is live.
scanned_after_free() {
	last_line "$AS/out.jsonl" "$AS/alive.json"
	[ "$(jqc "$AS/alive.json" '[procs($pid) | .scan.blocks] | first' \
		--argjson pid "$AS_PID")" == "$(((SLACK_MIB << 20) / SLACK_BLOCK / 2))" ]
}

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

run_alloc_slack() {
	local before after
	mkdir -p "$AS/dir"
	"$PROGS/alloc_slack" "$AS/dir" "$SLACK_BLOCK" "$SLACK_MIB" &
	BG_PIDS+=("$!")
	wait_file "$AS/dir/ready" || return 1
	AS_PID=$(pid_in "$AS/dir/ready")
	lt_bg "$AS/out.jsonl" "$AS/err" scan -p "$AS_PID" -i "$INTERVAL" -j -
	wait_file "$AS/out.jsonl" || return 1
	wait_lines "$AS/out.jsonl" 1 || return 1
	touch "$AS/dir/go"
	wait_file "$AS/dir/done" || return 1
	wait_until "a scan of $AS_PID after its frees" scanned_after_free || {
		fail_because "no scan after the frees; stderr: $(cat "$AS/err")"
		return 1
	}
	# leaktop's scans stop the program: end it before measuring what the trim gives back.
	signal INT "$LT_PID"
	wait_exit "$LT_PID" || return 1
	before=$(rss_kib "$AS_PID")
	touch "$AS/dir/trim"
	wait_file "$AS/dir/trimmed" || return 1
	after=$(rss_kib "$AS_PID")
	AS_RELEASED=$(((before - after) * 1024))
	touch "$AS/dir/quit"
}

as() { scenario run_alloc_slack; }

allocator() {
	jqc "$AS/alive.json" "[procs(\$pid) | .scan.allocator | $1] | first" \
		--argjson pid "$AS_PID"
}

flags() {
	jqc "$AS/alive.json" '[procs($pid) | .flags[]] | join(",")' --argjson pid "$AS_PID" | tr -d '"'
}

# within_pct GOT WANT PCT: |GOT - WANT| <= PCT% of WANT.
within_pct() {
	local got=$1 want=$2 pct=$3 d
	d=$((got - want))
	[ "${d#-}" -le $((want * pct / 100)) ]
}

test_trimmable_bytes_are_within_10_percent_of_what_malloc_trim_gives_back() {
	as || return 1
	local trim
	trim=$(allocator .trimmable_bytes)
	[ "$AS_RELEASED" -gt $(((SLACK_MIB << 20) / 4)) ] ||
		fail_because "malloc_trim(0) gave back only $AS_RELEASED bytes: the heap's" \
			"shape is not what the test needs" || return 1
	within_pct "$trim" "$AS_RELEASED" 10 ||
		fail_because "trimmable_bytes $trim, but malloc_trim(0) gave back $AS_RELEASED" \
			"bytes of RSS; allocator: $(allocator .)"
}

test_free_bytes_are_the_freed_half_of_the_heap() {
	as || return 1
	local free want
	free=$(allocator .free_bytes)
	# Each freed block is a free chunk of its size plus its 16-byte header; the top adds
	# less than a page or two.
	want=$(((SLACK_MIB << 20) / SLACK_BLOCK / 2 * (SLACK_BLOCK + 16)))
	within_pct "$free" "$want" 2 ||
		fail_because "free_bytes $free, expected about $want; allocator: $(allocator .)"
	expect_eq "free chunks" "$(((SLACK_MIB << 20) / SLACK_BLOCK / 2))" \
		"$(allocator .free_chunks)"
}

test_live_bytes_are_the_kept_half() {
	as || return 1
	expect_eq "live bytes in the heap" "$(((SLACK_MIB << 20) / 2))" "$(allocator .live_bytes)"
}

test_held_heap_is_allocator_retention_not_heap_growth_nor_unexplained_rss() {
	as || return 1
	local f
	f=$(flags)
	[[ ,$f, == *,allocator_retention,* ]] ||
		fail_because "flags [$f] lack allocator_retention; allocator: $(allocator .)" ||
		return 1
	[[ ,$f, != *,heap_growth,* && ,$f, != *,rss_growth_unexplained,* ]] ||
		fail_because "flags [$f]: the allocator's slack taken for growth"
}

run_tests
