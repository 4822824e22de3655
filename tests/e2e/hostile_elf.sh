#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# hostile_elf.sh - hostile-user cases about the ELF files leaktop reads (review C1, C3): the
# attacker (nobody) runs tests/progs/hostile_elf from a directory of theirs with a library
# built there, under root leaktop in whole-system mode (hostile_lib.sh).
#
# C1: the program opens /dev/null from f_a() in its library until leaktop names f_a, then
# once from f_b() (a new fd site, frames in the library) and truncates the library to 0
# bytes; a leaktop that maps the library dies of SIGBUS at its next lookup there.
# C3: the library is tests/progs/huge_fde.S, FDEs of 40,000 rows each, whose unwind table
# takes many seconds to read; the program opens /dev/null from inside it every 50 ms, so
# leaktop's stack walks ask for that table.  Building it must never hold the run loop: the
# snapshots keep coming at the interval (no gap between two over HOSTILE_GAP_S, where the
# stall was over 10 s), and the object ends up counted in stats.unwind_too_slow.

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile_lib.sh"
require_root
require_built hostile_elf

# The longest time between two snapshots allowed while the crafted table is being read: the
# interval plus a loaded 2-core machine's slack (a table build holds the loop for 20 ms at
# most per 50 ms slice; the stall it replaced lasted 12 s on the machine it was written on).
HOSTILE_GAP_S=${HOSTILE_GAP_S:-5}

# attacker_copy DIR: the program in the attacker's directory DIR, the attacker's.
attacker_copy() {
	cp "$PROGS/hostile_elf" "$1/hostile_elf" && chown "$HOSTILE_USER:$HOSTILE_GROUP" \
		"$1/hostile_elf"
}

# ---------------------------------------------------------------- C1: truncated library

TR=$E2E_TMP/truncate
TR_PID="" TR_T=""

# fd_sites_at(SYM) for jq: the fd sites whose innermost frame is SYM.
FD_JQ='def fd_sites_at($s): .sites[] | select(.kind == "fd" and .stack[0].symbol == $s);'

f_b_named_or_lt_gone() {
	! kill -0 "$LT_PID" 2>/dev/null ||
		json_true "$TR/snap.json" "$FD_JQ"'[procs($pid) | fd_sites_at("f_b")] | length > 0' \
			--argjson pid "$TR_PID"
}

run_truncate() {
	local d
	attacker_dir truncate-lib || return 1
	d=$ATTACKER_DIR
	attacker_copy "$d" || return 1
	gcc -g -O0 -fno-omit-frame-pointer -fno-inline -shared -fPIC -DHOSTILE_LIB -Wall \
		-o "$d/libx.so" "$PROG_SRC/hostile_elf.c" &&
		chown "$HOSTILE_USER:$HOSTILE_GROUP" "$d/libx.so" ||
		fail_because "could not build the attacker's library" || return 1
	hostile_start "$TR" || return 1
	as_attacker_bg "$d/hostile_elf" truncate "$d" "$d/libx.so"
	wait_file "$d/ready" || return 1
	TR_PID=$(pid_in "$d/pid")
	wait_until "leaktop to name the attacker's f_a site" json_true "$TR/snap.json" \
		"$FD_JQ"'[procs($pid) | fd_sites_at("f_a")] | length > 0' --argjson pid "$TR_PID" ||
		return 1
	cp "$TR/snap.json" "$TR/named.json"
	as_attacker touch "$d/go" || return 1
	wait_file "$d/truncated" || return 1
	TR_T=$(now_s)
	# f_b's site, made just before the truncation: leaktop looked its frames up in the
	# emptied file.  (A whole-system --exact run on a busy machine defers new sites' lookups
	# for a while: a longer bound for this one.)
	WAIT_LIMIT=$((3 * WAIT_S)) wait_until "a snapshot with the f_b site" f_b_named_or_lt_gone ||
		return 1
	kill -0 "$LT_PID" 2>/dev/null ||
		fail_because "leaktop died after the truncation: $(tail -n 3 "$TR/err")" || return 1
	cp "$TR/snap.json" "$TR/after.json"
	touch "$d/quit"
}

test_hostile_library_truncated_while_mapped_does_not_kill_leaktop() {
	scenario run_truncate || return 1
	hostile_survived "$TR" "$TR_T" 'Bus error|SIGBUS|libx\.so'
}

test_hostile_truncated_library_names_its_sites_before_and_after() {
	scenario run_truncate || return 1
	expect_jq "the f_a site's innermost frame" '["f_a","libx.so"]' "$TR/named.json" \
		"$FD_JQ"'[procs($pid) | fd_sites_at("f_a") | .stack[0] | .symbol, (.module | base)] |
		.[:2]' --argjson pid "$TR_PID" || return 1
	# f_b was looked up after its file was emptied: named from the symbol table read for f_a.
	expect_jq "f_b's site after the truncation (its open descriptors)" '[1]' "$TR/after.json" \
		"$FD_JQ"'[procs($pid) | fd_sites_at("f_b") | .outstanding_count]' \
		--argjson pid "$TR_PID"
}

# ---------------------------------------------------------------- C3: crafted .eh_frame

HF=$E2E_TMP/huge
HF_GAP="" HF_SLOW=""

# too_slow FILE: stats.unwind_too_slow of the snapshot FILE (grep: no jq per poll).
too_slow() {
	grep -o '"unwind_too_slow": *[0-9]*' "$1" 2>/dev/null | grep -o '[0-9]*$'
}

# watch_snapshots FILE: until stats.unwind_too_slow is at least 1 (at most WAIT_S s), note
# the largest time between two consecutive snapshots seen (their mtimes) in HF_GAP.
watch_snapshots() {
	local file=$1 m last="" deadline=$((SECONDS + WAIT_S))
	HF_GAP=0 HF_SLOW=""
	while [ "$SECONDS" -lt "$deadline" ]; do
		m=$(stat -c %.9Y "$file" 2>/dev/null)
		if [ -n "$m" ] && [ "$m" != "$last" ]; then
			[ -n "$last" ] && HF_GAP=$(awk -v a="$last" -v b="$m" -v g="$HF_GAP" \
				'BEGIN { d = b - a; printf "%.3f", (d > g ? d : g) }')
			last=$m
			HF_SLOW=$(too_slow "$file")
			[ "${HF_SLOW:-0}" -ge 1 ] && return 0
		fi
		kill -0 "$LT_PID" 2>/dev/null ||
			fail_because "leaktop died: $(tail -n 3 "$HF/err")" || return 1
		nap 0.05
	done
	fail_because "timed out after ${WAIT_S}s waiting for stats.unwind_too_slow >= 1" \
		"(largest gap between snapshots so far: ${HF_GAP}s)"
}

run_huge_fde() {
	local d
	attacker_dir huge-fde || return 1
	d=$ATTACKER_DIR
	attacker_copy "$d" || return 1
	gcc -shared -o "$d/libhuge.so" "$PROG_SRC/huge_fde.S" &&
		chown "$HOSTILE_USER:$HOSTILE_GROUP" "$d/libhuge.so" ||
		fail_because "could not build the crafted library" || return 1
	hostile_start "$HF" || return 1
	as_attacker_bg "$d/hostile_elf" huge "$d" "$d/libhuge.so"
	wait_file "$d/ready" || return 1
	watch_snapshots "$HF/snap.json" || return 1
	HF_T=$(now_s)
	touch "$d/quit"
}

test_hostile_crafted_eh_frame_is_given_up_and_counted() {
	scenario run_huge_fde || return 1
	expect_eq "stats.unwind_too_slow" 1 "$HF_SLOW"
}

test_hostile_crafted_eh_frame_keeps_snapshots_at_the_interval() {
	scenario run_huge_fde || return 1
	awk -v g="$HF_GAP" -v l="$HOSTILE_GAP_S" 'BEGIN { exit !(g <= l) }' ||
		fail_because "${HF_GAP}s between two snapshots while the crafted table was read" \
			"(interval ${INTERVAL}s; at most ${HOSTILE_GAP_S}s)"
}

test_hostile_crafted_eh_frame_leaves_leaktop_sampling() {
	scenario run_huge_fde || return 1
	hostile_survived "$HF" "$HF_T" 'libhuge|unwind'
}

run_tests
