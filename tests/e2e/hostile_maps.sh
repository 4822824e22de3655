#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# hostile_maps.sh - one process cannot fill the maps every process shares (review C8).
#
# As nobody, one hog process keeps 18,000 descriptors open and another makes 18,000
# one-page anonymous mappings: more than a process's share of the `fds` and `mmaps` maps
# (a quarter of 65,536 each).  Beside them a victim run by root leaks 5 descriptors and
# 4 mappings (tests/progs/map_hog.c).  Root whole-system leaktop (-r fd,mmap: the snapshots
# of a busy machine stay small enough to poll) must still report the victim's exact counts,
# hold each hog at its share exactly, count what it refused against the hog
# (processes[].drops and stats.drops) and nothing against the victim, and survive
# (hostile_survived).

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile_lib.sh"
require_root
require_built map_hog

HOG_N=18000
SHARE=16384		# 65,536 / LT_SHARE_DIV

# The victim's sites of its leaking functions, as [kind, count, bytes].
victim_sites() {
	jqc "$1" '[procs($pid) | .sites[] |
		select(.stack[0].symbol == "leak_fds" or .stack[0].symbol == "leak_mmaps") |
		[.kind, .outstanding_count, .outstanding_bytes]] | sort' --argjson pid "$2"
}
VICTIM_WANT='[["fd",5,0],["mmap",4,16384]]'

hog_pid() { pid_in "$ATTACKER_DIR/$1/done"; }

# A snapshot that has every hog and the victim: the victim's leaks all there.
victim_complete() {
	[ "$(victim_sites "$1" "$VICTIM_PID")" = "$VICTIM_WANT" ]
}
snap_complete() {
	cp "$LT_DIR/snap.json" "$LT_DIR/seen.json" 2>/dev/null &&
		victim_complete "$LT_DIR/seen.json"
}

VICTIM_PID="" LT_DIR="" T_ATTACK=""
attack() {
	LT_DIR=$E2E_TMP/lt
	hostile_start "$LT_DIR" -r fd,mmap || return 1
	attacker_dir hog || return 1
	mkdir -p "$ATTACKER_DIR/fd" "$ATTACKER_DIR/mmap" &&
		chown "$HOSTILE_USER:$HOSTILE_GROUP" "$ATTACKER_DIR/fd" "$ATTACKER_DIR/mmap" ||
		return 1
	as_attacker_bg "$PROGS/map_hog" "$ATTACKER_DIR/fd" fd "$HOG_N"
	as_attacker_bg "$PROGS/map_hog" "$ATTACKER_DIR/mmap" mmap "$HOG_N"
	wait_until "the hogs holding their records" eval \
		'[ -e "$ATTACKER_DIR/fd/done" ] && [ -e "$ATTACKER_DIR/mmap/done" ] ||
		 [ -e "$ATTACKER_DIR/fd/failed" ] || [ -e "$ATTACKER_DIR/mmap/failed" ]' || return 1
	[ -e "$ATTACKER_DIR/fd/done" ] && [ -e "$ATTACKER_DIR/mmap/done" ] ||
		fail_because "a hog could not make its $HOG_N records (got" \
			"$(cat "$ATTACKER_DIR"/*/failed))" || return 1
	T_ATTACK=$(now_s)
	mkdir -p "$E2E_TMP/victim"
	"$PROGS/map_hog" "$E2E_TMP/victim" victim &
	BG_PIDS+=("$!")
	wait_file "$E2E_TMP/victim/done" || return 1
	VICTIM_PID=$(pid_in "$E2E_TMP/victim/done")
	wait_until "the victim's leaks in a snapshot" snap_complete || return 1
	# The hogs' records are all in by now: they were made before the victim started.
	wait_until "the hogs in a snapshot" json_true "$LT_DIR/snap.json" \
		'[.processes[] | select(.pid == $a or .pid == $b)] | length == 2' \
		--argjson a "$(hog_pid fd)" --argjson b "$(hog_pid mmap)" || return 1
	cp "$LT_DIR/snap.json" "$LT_DIR/final.json"
}

test_victim_leaks_exact_beside_map_hogs() {
	scenario attack || return 1
	victim_complete "$LT_DIR/final.json" ||
		fail_because "the victim's sites as [kind, function, count, bytes]: $(jqc \
			"$LT_DIR/final.json" '[procs($pid) | .sites[] | [.kind, .stack[0].symbol,
			.outstanding_count, .outstanding_bytes]]' --argjson pid "$VICTIM_PID")"
}

test_victim_lost_nothing() {
	scenario attack || return 1
	expect_jq "the victim's drops" '{"fd":0,"heap":0,"mmap":0,"sites":0}' \
		"$LT_DIR/final.json" '[procs($pid) | .drops][0]' -S --argjson pid "$VICTIM_PID"
}

test_fd_hog_held_at_its_share_and_charged() {
	local pid
	scenario attack || return 1
	pid=$(hog_pid fd)
	expect_jq "the fd hog's open descriptors leaktop holds" "$SHARE" "$LT_DIR/final.json" \
		'[procs($pid) | .fd.outstanding_count][0]' --argjson pid "$pid" || return 1
	expect_jq "the fd hog's refused descriptors, at least $HOG_N - $SHARE" true \
		"$LT_DIR/final.json" '[procs($pid) | .drops.fd >= $n][0]' --argjson pid "$pid" \
		--argjson n $((HOG_N - SHARE)) || return 1
	expect_jq "stats.drops.fd_share covers the fd hog's" true "$LT_DIR/final.json" \
		'.stats.drops.fd_share >= ([procs($pid) | .drops.fd][0])' --argjson pid "$pid"
}

test_mmap_hog_held_at_its_share_and_charged() {
	local pid
	scenario attack || return 1
	pid=$(hog_pid mmap)
	expect_jq "the mmap hog's mappings leaktop holds" "$SHARE" "$LT_DIR/final.json" \
		'[procs($pid) | .mmap.outstanding_count][0]' --argjson pid "$pid" || return 1
	expect_jq "the mmap hog's refused mappings, at least $HOG_N - $SHARE" true \
		"$LT_DIR/final.json" '[procs($pid) | .drops.mmap >= $n][0]' --argjson pid "$pid" \
		--argjson n $((HOG_N - SHARE)) || return 1
	expect_jq "stats.drops.mmap_share covers the mmap hog's" true "$LT_DIR/final.json" \
		'.stats.drops.mmap_share >= ([procs($pid) | .drops.mmap][0])' --argjson pid "$pid"
}

test_leaktop_survives_map_hogs() {
	scenario attack || return 1
	hostile_survived "$LT_DIR" "$T_ATTACK" 'map_hog|fds|mmaps'
}

run_tests
