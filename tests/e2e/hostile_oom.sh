#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# hostile_oom.sh - OOM snapshots against a local user (review C4).  Root makes a memory
# cgroup limited to LIMIT_BYTES whose cgroup.procs nobody may write; nobody then runs
# tests/progs/oom_leak in it KILLS times in a row, each one OOM-killed, against root leaktop
# on the whole system:
#   - with --oom-max-files 5 --oom-max-bytes 1M --oom-min-gap 0 (every victim written), and
#     the directory already holding three old snapshots of leaktop's and files that are not
#     leaktop's (another name, a link with a snapshot's name, nobody's file with a snapshot's
#     name): the directory keeps the 5 newest snapshots, within both caps; the old ones went
#     first, then the snapshots in the order written; the others are untouched; the snapshot's
#     stats count every removal (written + 3 - 5) and every victim is written, failed or
#     skipped; the cap is said once on stderr, not per victim;
#   - with the default --oom-min-gap (one snapshot per cgroup a minute): one snapshot of the
#     burst, the other victims counted in stats.oom_snapshots_skipped, said once;
#   - leaktop survived both (hostile_survived).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hostile_lib.sh"

require_root
require_built oom_leak

LIMIT_BYTES=$((32 << 20))
KILLS=${KILLS:-12}
T=$E2E_TMP/ho
mkdir -p "$T"

ho_cleanup() {
	remove_cgroups
	e2e_cleanup
}
trap ho_cleanup EXIT

# The program, where nobody may run it.
cp "$PROGS/oom_leak" "$T/oom_leak" && chmod 755 "$T/oom_leak" || exit 1

# attacker_cgroup NAME: make_cgroup NAME, and nobody may move processes into it.
attacker_cgroup() {
	local f
	make_cgroup "hostile-$1" || return 1
	for f in cgroup.procs tasks; do
		[ ! -e "$CG/$f" ] || chown "$HOSTILE_USER" "$CG/$f" || return 1
	done
}

# oom_loop: as nobody, KILLS times: join the cgroup, exec oom_leak (killed at the limit).
oom_loop() {
	as_attacker sh -c 'i=0; while [ $i -lt '"$KILLS"' ]; do
		sh -c "echo \$\$ >'"$CG"'/cgroup.procs && exec '"$T"'/oom_leak" 2>/dev/null
		i=$((i + 1)); done'
}

# The paths of the snapshots leaktop said it wrote, in order (from its stderr $1).
written() { sed -n 's/^.*its snapshot is \(.*leaktop-oom-[^ ]*\.json\).*$/\1/p' "$1"; }

# leaktop's snapshot has counted KILLS OOM victims.
victims_counted() {
	[ "$(jqc "$1" '.stats.oom_victims // 0')" -ge "$KILLS" ] 2>/dev/null
}

# ---------------------------------------------------------------- scenarios

T_CAP=""
cap_run() {
	local d=$T/cap
	mkdir -p "$d/oom"
	attacker_cgroup cap || return 1
	# Already there: three old snapshots of leaktop's, and what is not leaktop's.
	for i in 1 2 3; do
		printf '{"old":%d}\n' "$i" >"$d/oom/leaktop-oom-$i-20200101T00000${i}Z.json"
		touch -d "2020-01-01 00:00:0$i UTC" "$d/oom/leaktop-oom-$i-20200101T00000${i}Z.json"
	done
	printf 'notes\n' >"$d/oom/notes.json"
	touch -d "2019-01-01" "$d/oom/notes.json"
	ln -s notes.json "$d/oom/leaktop-oom-9-20190101T000000Z.json"
	printf 'x\n' >"$d/oom/leaktop-oom-8-20190101T000000Z.json"
	chown "$HOSTILE_USER" "$d/oom/leaktop-oom-8-20190101T000000Z.json"
	touch -h -d "2019-01-01" "$d/oom/leaktop-oom-9-20190101T000000Z.json" \
		"$d/oom/leaktop-oom-8-20190101T000000Z.json"
	hostile_start "$d" --oom-dir "$d/oom" --oom-max-files 5 --oom-max-bytes 1M \
		--oom-min-gap 0 || return 1
	T_CAP=$(now_s)
	oom_loop
	wait_until "$KILLS OOM victims in leaktop's stats" victims_counted "$d/snap.json" ||
		return 1
	hostile_survived "$d" "$T_CAP" || return 1
	cp "$d/snap.json" "$d/last.json"
}

T_GAP=""
gap_run() {
	local d=$T/gap
	mkdir -p "$d/oom"
	attacker_cgroup gap || return 1
	hostile_start "$d" --oom-dir "$d/oom" || return 1
	T_GAP=$(now_s)
	oom_loop
	wait_until "$KILLS OOM victims in leaktop's stats" victims_counted "$d/snap.json" ||
		return 1
	hostile_survived "$d" "$T_GAP" || return 1
	cp "$d/snap.json" "$d/last.json"
}

# ---------------------------------------------------------------- caps

test_hostile_oom_files_and_bytes_stay_within_the_caps() {
	scenario cap_run || return 1
	local d=$T/cap/oom n bytes
	n=$(find "$d" -maxdepth 1 -type f -user root -name 'leaktop-oom-*.json' | wc -l)
	bytes=$(find "$d" -maxdepth 1 -type f -user root -name 'leaktop-oom-*.json' \
		-printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
	expect_eq "leaktop's snapshots in the directory ($(ls "$d"))" 5 "$n" || return 1
	[ "$bytes" -le $((1 << 20)) ] || fail_because "$bytes bytes of snapshots (cap 1 MiB)"
}

test_hostile_oom_the_oldest_snapshots_are_removed_first() {
	scenario cap_run || return 1
	local d=$T/cap/oom want got
	# The three old ones, then the snapshots in the order written: the last 5 stay.
	want=$( (for i in 1 2 3; do echo "leaktop-oom-$i-20200101T00000${i}Z.json"; done
		written "$T/cap/err" | xargs -n 1 basename) | tail -n 5 | sort)
	got=$(find "$d" -maxdepth 1 -type f -user root -name 'leaktop-oom-*.json' -printf '%f\n' |
		sort)
	expect_eq "snapshots kept" "$want" "$got" || return 1
	[ "$(written "$T/cap/err" | wc -l)" -ge 3 ] ||
		fail_because "leaktop wrote only $(written "$T/cap/err" | wc -l) snapshots:" \
			"$(head -n 5 "$T/cap/err")"
}

test_hostile_oom_files_not_leaktops_own_are_left_alone() {
	scenario cap_run || return 1
	local d=$T/cap/oom
	[ -f "$d/notes.json" ] && [ -L "$d/leaktop-oom-9-20190101T000000Z.json" ] &&
		[ -f "$d/leaktop-oom-8-20190101T000000Z.json" ] ||
		fail_because "a file not leaktop's was removed: $(ls -l "$d")"
}

test_hostile_oom_removals_and_every_victim_are_counted_in_stats() {
	scenario cap_run || return 1
	local w removed failed skipped victims
	w=$(written "$T/cap/err" | wc -l)
	removed=$(jqc "$T/cap/last.json" '.stats.oom_snapshots_removed')
	failed=$(jqc "$T/cap/last.json" '.stats.oom_snapshots_failed')
	skipped=$(jqc "$T/cap/last.json" '.stats.oom_snapshots_skipped')
	victims=$(jqc "$T/cap/last.json" '.stats.oom_victims')
	expect_eq "stats.oom_snapshots_removed (written $w, 3 there before, 5 kept)" \
		$((w + 3 - 5)) "$removed" || return 1
	expect_eq "stats.oom_snapshots_skipped (no --oom-min-gap)" 0 "$skipped" || return 1
	expect_eq "victims written + failed + skipped" "$victims" $((w + failed + skipped))
}

test_hostile_oom_the_caps_are_said_once_not_per_victim() {
	scenario cap_run || return 1
	expect_eq "lines about removed snapshots ($(grep -c . "$T/cap/err") lines on stderr)" 1 \
		"$(grep -c 'older OOM snapshots removed' "$T/cap/err")"
}

# ---------------------------------------------------------------- rate limit

test_hostile_oom_a_burst_in_one_cgroup_is_one_snapshot_the_others_counted() {
	scenario gap_run || return 1
	local n skipped victims failed
	n=$(find "$T/gap/oom" -maxdepth 1 -type f -name 'leaktop-oom-*.json' | wc -l)
	skipped=$(jqc "$T/gap/last.json" '.stats.oom_snapshots_skipped')
	failed=$(jqc "$T/gap/last.json" '.stats.oom_snapshots_failed')
	victims=$(jqc "$T/gap/last.json" '.stats.oom_victims')
	expect_eq "snapshots of the burst ($(ls "$T/gap/oom"))" 1 "$n" || return 1
	expect_eq "victims skipped (victims $victims, failed $failed)" $((victims - 1 - failed)) \
		"$skipped" || return 1
	expect_eq "lines about skipped victims" 1 \
		"$(grep -c 'oom-min-gap' "$T/gap/err")"
}

run_tests
