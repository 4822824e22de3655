#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# selfcost.sh - what whole-system leaktop costs itself under load (issue 25): for DURATION
# seconds, `make -j2 leaktop` of a scratch copy of this tree (cleaned and built again in a loop)
# beside a churn of short processes (ls, python3 -c, sh -c true, a few a second) while
# whole-system default-mode `leaktop -q -i 1 -j -` runs.  Per round it prints leaktop's CPU
# over the DURATION seconds (utime+stime from /proc/PID/stat, as a fraction of one core), its
# VmHWM (/proc/PID/status, just before SIGINT) and the worst stats.collect_ms of its snapshots (one a second);
# then the median of each over the rounds.  Needs root, ./leaktop, make, jq, python3.  It traces
# the whole system: run it alone (under the e2e lock).  Measured, never asserted: the exit
# status is 0 unless leaktop failed to run or wrote no snapshot.
#
# Usage: selfcost.sh [ROUNDS [DURATION_S]]  (defaults 3 and 25; also SELFCOST_ROUNDS,
# SELFCOST_DURATION_S).  LEAKTOP names the binary (default ./leaktop of this tree);
# LEAKTOP_ARGS adds options (e.g. "--exact").  SELFCOST_PERF=FILE records `perf record -g` (or SELFCOST_PERF_ARGS) of
# leaktop during the last round into FILE; SELFCOST_KEEP=PREFIX keeps each round's snapshots
# as PREFIX.N.jsonl (its stderr as PREFIX.N.err, its /proc/PID/smaps at the end as
# PREFIX.N.smaps).  Output, besides the human lines, one line per
# round and one summary line that scripts can parse:
#   selfcost round=N cpu_frac=F vmhwm_mib=M worst_collect_ms=C snapshots=S rss_anon_mib=A rss_file_mib=B
# (A and B: leaktop's anonymous and file-backed resident memory at the end, from RssAnon and
# RssFile: what its VmHWM is made of)
#   selfcost median cpu_frac=F vmhwm_mib=M worst_collect_ms=C rounds=N
set -u

# The build loop runs as its own process group (setsid), so the round's end stops its make and
# the compilers it started, by that group's id.
if [ "${1:-}" = --build-loop ]; then
	tree=$2 stop=$3
	while [ ! -e "$stop" ]; do
		make -C "$tree" -j2 leaktop >/dev/null 2>&1
		[ -e "$stop" ] && break
		rm -rf "$tree/build/user" "$tree/build/tui" "$tree/leaktop" "$tree/build/"*.o \
			"$tree/build/"*.skel.h 2>/dev/null
	done
	exit 0
fi

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LEAKTOP=${LEAKTOP:-$ROOT/leaktop}
ROUNDS=${1:-${SELFCOST_ROUNDS:-3}}
DURATION=${2:-${SELFCOST_DURATION_S:-25}}
HZ=$(getconf CLK_TCK)

TMP=$(mktemp -d /tmp/leaktop-selfcost.XXXXXX)
LT_PID=
CHURN_PID=
BUILD_PID=
cleanup() {
	touch "$TMP/stop" 2>/dev/null
	[ -n "$LT_PID" ] && kill -INT "$LT_PID" 2>/dev/null && wait "$LT_PID" 2>/dev/null
	[ -n "$BUILD_PID" ] && kill -- -"$BUILD_PID" 2>/dev/null && wait "$BUILD_PID" 2>/dev/null
	[ -n "$CHURN_PID" ] && wait "$CHURN_PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" = 0 ] || { echo "selfcost.sh: needs root (leaktop traces the whole system); run it with sudo" >&2; exit 1; }
[ -x "$LEAKTOP" ] || { echo "selfcost.sh: no $LEAKTOP; build it first (make leaktop)" >&2; exit 1; }

# The scratch tree: this one's sources, no build products (vmlinux.h copied: bpftool need not run).
TREE=$TMP/tree
mkdir -p "$TREE"
(cd "$ROOT" && tar --exclude=./build --exclude=./.git --exclude=./leaktop -cf - .) | tar -xf - -C "$TREE"
mkdir -p "$TREE/build" && cp "$ROOT/build/vmlinux.h" "$TREE/build/" 2>/dev/null

churn() {
	while [ ! -e "$TMP/stop" ]; do
		ls / >/dev/null
		python3 -c pass
		sh -c true
		sleep 0.2
	done
}


cpu_ticks() {
	awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null
}

median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "null";
		else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

: >"$TMP/results"
status=0
for round in $(seq "$ROUNDS"); do
	rm -f "$TMP/stop" "$TMP/snap.jsonl"
	# shellcheck disable=SC2086
	"$LEAKTOP" -q -i 1 ${LEAKTOP_ARGS:-} -j - >"$TMP/snap.jsonl" 2>"$TMP/err" &
	LT_PID=$!
	for _ in $(seq 600); do [ -s "$TMP/snap.jsonl" ] && break; sleep 0.1; done
	if ! kill -0 "$LT_PID" 2>/dev/null || [ ! -s "$TMP/snap.jsonl" ]; then
		echo "selfcost.sh: leaktop did not start: $(head -c 300 "$TMP/err")" >&2
		exit 1
	fi
	setsid bash "$0" --build-loop "$TREE" "$TMP/stop" & BUILD_PID=$!
	churn & CHURN_PID=$!
	t0=$(date +%s.%N)
	c0=$(cpu_ticks "$LT_PID")
	perf_pid=
	if [ -n "${SELFCOST_PERF:-}" ] && [ "$round" = "$ROUNDS" ]; then
		perf record ${SELFCOST_PERF_ARGS:--g} -o "$SELFCOST_PERF" -p "$LT_PID" -- sleep "$DURATION" \
			>/dev/null 2>"$TMP/perf.err" &
		perf_pid=$!
	fi
	sleep "$DURATION"
	c1=$(cpu_ticks "$LT_PID")
	t1=$(date +%s.%N)
	read -r hwm_kib anon_kib file_kib < <(awk '/^VmHWM/ { h = $2 } /^RssAnon/ { a = $2 }
		/^RssFile/ { f = $2 } END { print h, a, f }' "/proc/$LT_PID/status" 2>/dev/null)
	[ -n "${SELFCOST_KEEP:-}" ] && cp "/proc/$LT_PID/smaps" "$SELFCOST_KEEP.$round.smaps" 2>/dev/null
	[ -n "$perf_pid" ] && wait "$perf_pid"
	touch "$TMP/stop"
	kill -INT "$LT_PID"
	wait "$LT_PID"; rc=$?
	LT_PID=
	kill -- -"$BUILD_PID" 2>/dev/null; wait "$BUILD_PID" 2>/dev/null; BUILD_PID=
	wait "$CHURN_PID" 2>/dev/null; CHURN_PID=
	[ "$rc" = 0 ] || { echo "selfcost.sh: leaktop exited $rc: $(head -c 300 "$TMP/err")" >&2; status=1; }
	read -r worst snaps < <(jq -rs '[.[] | .stats.collect_ms // empty] |
		"\(max // "null") \(length)"' "$TMP/snap.jsonl" 2>/dev/null)
	cpu=$(awk -v a="$c0" -v b="$c1" -v t0="$t0" -v t1="$t1" -v hz="$HZ" \
		'BEGIN { printf "%.3f", (b - a) / hz / (t1 - t0) }')
	hwm=$(awk -v k="${hwm_kib:-0}" 'BEGIN { printf "%.1f", k / 1024 }')
	echo "selfcost round=$round cpu_frac=$cpu vmhwm_mib=$hwm worst_collect_ms=${worst:-null}" \
		"snapshots=${snaps:-0} rss_anon_mib=$((${anon_kib:-0} / 1024))" \
		"rss_file_mib=$((${file_kib:-0} / 1024))"
	echo "$cpu $hwm ${worst:-null}" >>"$TMP/results"
	[ -n "${SELFCOST_KEEP:-}" ] && cp "$TMP/snap.jsonl" "$SELFCOST_KEEP.$round.jsonl" &&
		cp "$TMP/err" "$SELFCOST_KEEP.$round.err"
	grep -h "leaktop:" "$TMP/err" | grep -v skipping | head -3 | sed 's/^/  stderr: /'
done
echo "selfcost median cpu_frac=$(cut -d' ' -f1 "$TMP/results" | median)" \
	"vmhwm_mib=$(cut -d' ' -f2 "$TMP/results" | median)" \
	"worst_collect_ms=$(cut -d' ' -f3 "$TMP/results" | grep -v null | median)" \
	"rounds=$ROUNDS"
echo "goals (issue 25): cpu_frac <= 0.10, vmhwm_mib <= 150, worst_collect_ms <= 250"
exit "$status"
