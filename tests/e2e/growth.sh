#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# growth.sh - the growth verdicts on a real program: growth_mix runs a steady heap leak
# (256 B every 20 ms), a bounded cache, malloc/free bursts, an fd leak (one every 100 ms)
# and open/close churn in threads.  Within 10 s of tracing the two leaks are flagged and
# nothing else is, and the heap leak's rate is measured right.
source "$(dirname "$0")/lib.sh"

require_root
require_built growth_mix

GR=$E2E_TMP/growth

run_growth() {
	mkdir -p "$GR"
	lt_fg "$GR/out" "$GR/err" -b -i 0.5 -d 10 -j "$GR/snap.json" -- "$PROGS/growth_mix" 20
	expect_eq "leaktop's exit status" 0 "$LT_STATUS" || return 1
	[ -s "$GR/snap.json" ] || fail_because "no snapshot; stderr: $(cat "$GR/err")"
}

flagged_sites() {
	jqc "$GR/snap.json" '[.processes[] | .sites[] | select(.flagged) |
		[.kind, .stack[0].symbol]] | sort'
}

test_growth_flags_exactly_the_two_leaks_within_10s() {
	scenario run_growth || return 1
	expect_eq "flagged sites" '[["fd","leak_fd_open"],["heap","leak_heap_alloc"]]' \
		"$(flagged_sites)"
}

test_growth_rate_of_heap_leak_within_20_percent() {
	local rate
	scenario run_growth || return 1
	rate=$(jqc "$GR/snap.json" '[.processes[] | .sites[] |
		select(.stack[0].symbol == "leak_heap_alloc") | .growth_per_s] | first')
	awk -v r="$rate" 'BEGIN { exit !(r >= 12800 * 0.8 && r <= 12800 * 1.2) }' ||
		fail_because "growth_per_s of leak_heap_alloc is $rate, expected 12800 +- 20%"
}

test_growth_cache_and_churn_sites_traced_but_not_flagged() {
	scenario run_growth || return 1
	# (Their heap's growth by brk inside malloc is an mmap site of theirs too: not counted.)
	expect_eq "[symbol, flagged, traced] of the look-alikes" \
		'[["cache_insert",false,true],["churn_burst",false,true],["fd_churn_once",false,true]]' \
		"$(jqc "$GR/snap.json" '[.processes[] | .sites[] | select(.kind != "mmap") |
			select(.stack[0].symbol | IN("cache_insert", "churn_burst", "fd_churn_once")) |
			[.stack[0].symbol, .flagged, .allocs > 100]] | sort')"
}

test_growth_process_flags_name_heap_and_fd_growth() {
	scenario run_growth || return 1
	expect_eq "heap_growth and fd_growth among the flags, no unexplained rss growth" \
		'[true,true,false]' \
		"$(jqc "$GR/snap.json" '[.processes[0].flags | (index("heap_growth") != null),
			(index("fd_growth") != null), (index("rss_growth_unexplained") != null)]')"
}

test_growth_process_with_a_flagged_site_has_the_flag_of_its_kind() {
	scenario run_growth || return 1
	expect_eq "[pid, site kind] of flagged sites whose process lacks <kind>_growth" '[]' \
		"$(jqc "$GR/snap.json" '[.processes[] | .pid as $p | .flags as $f | .sites[] |
			.kind as $k | select(.flagged and ($f | index($k + "_growth")) == null) |
			[$p, $k]]')"
}

test_growth_flagged_sites_sorted_first() {
	scenario run_growth || return 1
	expect_eq "flags of the first two sites" '[true,true]' \
		"$(jqc "$GR/snap.json" '[.processes[0].sites[0:2][] | .flagged]')"
}

test_growth_run_has_no_drops() {
	scenario run_growth || return 1
	expect_no_drops "$GR/snap.json"
}

run_tests
