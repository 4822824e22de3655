#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# run.sh - leaktop's benchmark (`make bench`).  Needs root, ./leaktop and build/bench/bench.
#
# 1. Cost per malloc(64)+free pair of a workload (build/bench/bench pairs) run untraced, under
#    empty programs at every allocator function's entry (--probe-floor entry: the price of the
#    traps alone), under empty programs where leaktop puts its own (--probe-floor planned)
#    and under leaktop -p itself.  The configurations are interleaved, each round a fresh
#    workload process whose tracer is attached (first snapshot written) before it starts.
# 2. The collector's time per interval (stats.collect_ms) with 1,000,000 and with 10,000 live
#    blocks, leaktop's RSS and the memory of its BPF maps.
# 3. Cost per open("/dev/null")+close pair of a workload (build/bench/bench openclose) run
#    untraced, under empty programs on the raw tracepoints sys_enter/sys_exit (-r fd
#    --probe-floor entry: the price of the tracepoints alone, paid by every syscall of every
#    process) and under leaktop -r fd -p; interleaved like 1.  leaktop's count of the opens
#    and its drops are checked.
# 4. Growth verdicts on build/tests/progs/growth_mix (a 12800 B/s heap leak and a 10 fd/s fd
#    leak among a bounded cache and malloc/free and open/close churn) under
#    leaktop -i 0.5 -d 20 -- : seconds until each leak is first flagged, sites flagged that
#    are not leaks, the measured growth rates.  Skipped when growth_mix is not built.
# 5. The reachability scan's stop of a process with 100 MiB of heap.
# 6. A build on a busy machine, untraced and under whole-system leaktop.
# 7. What -- and -p cost a process they do not trace: an unrelated malloc+free loop (bench
#    -n pairs) timed untraced, while leaktop -- sleep runs and while leaktop -p runs on a
#    sleeping process; interleaved like 1, ratios to untraced (expected about 1.00: the
#    probes are on the traced processes only).
# 8. The overhead budget: 6's build, repeated, untraced, under default whole-system leaktop
#    and under leaktop --exact, with a steady leaker (steady_grow, 256 B every 20 ms) beside
#    it in each run: the ratios, when leaktop left exact tracing, when the leak was flagged.
# 9. Stack unwinding (issue 14): ns per malloc(64)+free pair under leaktop -p with stacks
#    unwound from .eh_frame (--unwind cfi) beside the frame-pointer walk (--unwind fp), at
#    --stack-depth 8 and 32, and the untraced baseline.  The workload (bench deep) mallocs
#    BENCH_UNWIND_CHAIN (default 40) recursive calls deep, so every stack is deeper than
#    either depth and both methods walk exactly --stack-depth frames: cfi on build/bench/
#    bench_nofp (the same source built -fomit-frame-pointer: only CFI can walk it), fp on
#    build/bench/bench (frame pointers).  The frames leaktop kept at the workload's site are
#    checked to be the depth asked for.  Then the memory the unwind tables take
#    (stats.unwind_table_bytes) while tracing Debian's python3.11 (PYTHON311) with -p: the
#    tables of python3.11, libc and the rest it maps.  Fails, measuring nothing, when leaktop
#    has no --unwind option.
# 11. leaktop lastref (issue 17): the target's cost while its blocks are watched.  lastref_prog
#     bench keeps 4 blocks in globals and times BENCH_LASTREF_PAIRS malloc(64)+free pairs, each
#     followed by a store of the same pointer into one of those globals: untraced, under
#     leaktop -p, and under leaktop lastref --blocks 4 (every store traps in a hardware
#     watchpoint whose BPF program finds the word still points into its block); ns per pair
#     and the ratios.
# 10. Any allocator (issue 15): section 1's workload on glibc and on Debian's jemalloc,
#    tcmalloc and mimalloc (LD_PRELOAD), untraced and under leaktop -p, interleaved: ns per
#    pair and the ratio for each; leaktop's count at the workload's site and the allocator
#    it names (processes[].heap.allocator.kind) are checked.
# 12. Real work (issue 25; BENCH_ONLY=realwork runs only this): whole-system default leaktop
#    (no --exact; leaktop -q -i 1 -j -, a fresh one per run) against nothing, interleaved, on
#    (a) section 6's build with its churn of short processes (ls, python3 -c, sh -c): seconds
#    per build, goal <= 1.10x untraced; (b) redis-benchmark (BENCH_REDIS_ARGS) against a
#    Debian redis-server started for the run on a free port of 127.0.0.1 (--save ''
#    --appendonly no, in a temporary directory, shut down after it): requests/s over its
#    tests, goal <= 1.10x slower; (c) leaktop's own CPU during (a) (fraction of one core over
#    the build, from /proc/PID/stat) and its VmHWM, goals <= 10% of a core and <= 150 MiB.
#    BENCH_REALWORK_ROUNDS rounds (default 3), medians; each run also reports the CPU the rest
#    of the machine used meanwhile (busy time in /proc/stat less the workload's and leaktop's),
#    and the per-round ratios, to show how noisy the figures are.  Hook for comparing leaktop
#    variants on the same work (issue 25: per-syscall against raw syscall tracepoints for fd
#    and mmap tracking): BENCH_REALWORK_EXTRA="name=leaktop options;name=..." adds traced
#    configurations, interleaved with the others; nothing is assumed about leaktop's options.
#    BENCH_REALWORK_PARTS ("build redis" by default) picks the parts.
# 13. Leak gate (issue 28; BENCH_ONLY=check runs only this): a real C test suite, the
#    project's own pure unit tests linked without sanitizers (build/plain/tests/unit:
#    analysis, diff, format, lastref, snapshot_read, options, heapmode, checkgate, model,
#    export, metrics), run
#    one after another by sh, untraced, under `leaktop check --fail-on all` and under
#    `valgrind --leak-check=full --trace-children=yes`, BENCH_CHECK_ROUNDS rounds (default 3)
#    interleaved: median wall seconds, the ratio leaktop/valgrind (goal <= 0.10), and both
#    tools' leak totals side by side (definitely / indirectly / possibly lost bytes and blocks,
#    all processes).
# 14. The in-process agent (issue 27; BENCH_ONLY=agent runs only this): Debian's
#    redis-server (a fresh one per run, on a Unix socket in a temporary directory, nothing
#    saved) driven by redis-benchmark (BENCH_AGENT_REDIS_ARGS, default "-n 100000 -r 100000
#    -c 20 -t set,get,lpush"): untraced, `leaktop -p PID` (uprobes), `leaktop -p PID --agent`
#    (the agent injected) and `heaptrack -p PID` when heaptrack and gdb are installed, each
#    attached to the running server before the benchmark, BENCH_AGENT_ROUNDS rounds
#    (default 3) interleaved, the order turned each round; requests/s over the tests, medians,
#    and how many times slower each is than untraced; goals: --agent <= 1.3x, and no worse
#    than heaptrack's ratio + 0.15.
#
# Uprobes that another tracer puts on libc for every process (leaktop in whole-system or
# `--` mode, say) slow every malloc on the machine and would spoil the comparison: before and
# after each measurement a fresh untraced process times a few pairs; a run that was not quiet
# on both sides is thrown away and done again.  Likewise for 3, programs that another tracer
# has on the syscall tracepoints (any leaktop that tracks fds, whatever its -p) slow every
# syscall: a run with any of them around it (bpftool perf list) is thrown away and done again.
# 12 does both checks around each run (its own leaktop excepted) and throws such runs away.
# The growth runs are not timed per operation: one with other tracers around is only marked.
#
# Timings are reported, never asserted: the exit status is 0 unless something failed to run
# (leaktop or the workload crashed or hung, or leaktop miscounted).
#
# Knobs (environment): BENCH_ROUNDS (processes per configuration, default 5), BENCH_PAIRS
# (pairs per timed loop, default 100000), BENCH_INNER (timed loops per process, median kept,
# default 5), BENCH_LIVE (default 1000000), BENCH_LIVE_SMALL (default 10000),
# BENCH_LIVE_INTERVALS (snapshots with all blocks live, default 5), BENCH_EXTRA (more
# configurations: "name=leaktop options;name=..."), BENCH_OC_PAIRS (open+close pairs per
# timed loop, default 20000), BENCH_GROWTH_RUNS (default 3), BENCH_SECTIONS (which sections
# to run, default every one), BENCH_BUDGET_BUILDS (builds in a row in 8, default 2),
# BENCH_UNWIND_CHAIN (call depth of 9's workload, default 40), BENCH_ONLY (the same as
# BENCH_SECTIONS; a section may be named: "realwork" is 12), BENCH_REALWORK_ROUNDS,
# BENCH_REALWORK_PARTS, BENCH_REALWORK_EXTRA, BENCH_REDIS_ARGS (default "-P 16 -c 50
# -n 1000000 -t set,get,incr,lpush,lpop,sadd,hset"), BENCH_AGENT_ROUNDS,
# BENCH_AGENT_REDIS_ARGS, LEAKTOP, BENCH, BENCH_NOFP, GROWTH_MIX,
# STEADY_GROW, PYTHON311.
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LEAKTOP_SRC=${LEAKTOP:-$ROOT/leaktop}
BENCH=${BENCH:-$ROOT/build/bench/bench}
BENCH_NOFP_SRC=${BENCH_NOFP:-$ROOT/build/bench/bench_nofp}
PYTHON311=${PYTHON311:-/usr/bin/python3.11}
UW_CHAIN=${BENCH_UNWIND_CHAIN:-40}
ROUNDS=${BENCH_ROUNDS:-5}
PAIRS=${BENCH_PAIRS:-100000}
INNER=${BENCH_INNER:-5}
LIVE=${BENCH_LIVE:-1000000}
LIVE_SMALL=${BENCH_LIVE_SMALL:-10000}
LIVE_INTERVALS=${BENCH_LIVE_INTERVALS:-5}
OC_PAIRS=${BENCH_OC_PAIRS:-20000}
GROWTH_MIX_SRC=${GROWTH_MIX:-$ROOT/build/tests/progs/growth_mix}
STEADY_SRC=${STEADY_GROW:-$ROOT/build/tests/progs/steady_grow}
GROWTH_RUNS=${BENCH_GROWTH_RUNS:-3}
SECTIONS=" ${BENCH_ONLY:-${BENCH_SECTIONS:-1 2 3 4 5 6 7 8 9 10 11 12 13 14}} "
BUDGET_BUILDS=${BENCH_BUDGET_BUILDS:-2}
# Sections that have a name besides their number.
declare -A SECTION_NAME=([12]=realwork [13]=check [14]=agent)
# want_section N: is section N (by number or name) among BENCH_ONLY / BENCH_SECTIONS?
want_section() {
	[[ $SECTIONS == *" $1 "* ]] || { [ -n "${SECTION_NAME[$1]:-}" ] &&
		[[ $SECTIONS == *" ${SECTION_NAME[$1]} "* ]]; }
}
GOAL_NS=2500
GOAL_RATIO=0.55
GOAL_COLLECT_MS=10
QUIET_NS=100		# an untraced pair above this: someone's uprobes are on every libc
QUIET_WAIT=30		# seconds to wait for them to go before measuring anyway...
QUIET_BUDGET=90		# ... and in all, so a busy machine cannot stretch the run for ever
ATTEMPTS=3		# tries per measurement when the machine was not quiet around it

TMP=$(mktemp -d /tmp/leaktop-bench.XXXXXX)
FAILED=0
BPID=""
LPID=""
RPID=""
DISCARDED=0
UNQUIET=0
WAITED=0

die() {
	echo "bench: $*" >&2
	exit 1
}

fail() {
	echo "bench: FAILED: $*" >&2
	FAILED=1
}

cleanup() {
	[ -n "$LPID" ] && kill -INT "$LPID" 2>/dev/null && wait "$LPID" 2>/dev/null
	[ -n "$BPID" ] && kill -KILL "$BPID" 2>/dev/null && wait "$BPID" 2>/dev/null
	# Section 12's redis-server (its churn ends with $TMP, see busy_churn).
	[ -n "${RPID:-}" ] && kill -TERM "$RPID" 2>/dev/null && wait "$RPID" 2>/dev/null
	# Section 14's heaptrack (it takes its agent out of the server on its way out).
	[ -n "${HPID:-}" ] && kill -TERM "$HPID" 2>/dev/null && wait "$HPID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" -eq 0 ] || die "needs root (BPF and uprobes); run it with sudo"
[ -x "$LEAKTOP_SRC" ] || die "$LEAKTOP_SRC is missing; run 'make leaktop'"
[ -x "$BENCH" ] || die "$BENCH is missing; run 'make build/bench/bench'"
command -v jq >/dev/null || die "jq is missing; run 'make deps'"
# A private copy, so that a rebuild of ./leaktop during the run changes nothing.
mkdir "$TMP/bin" || die "cannot create $TMP/bin"
cp "$LEAKTOP_SRC" "$TMP/bin/leaktop" || die "cannot copy $LEAKTOP_SRC"
LEAKTOP=$TMP/bin/leaktop
# --agent finds its library beside the executable.
if [ -r "$(dirname "$LEAKTOP_SRC")/libleaktop-agent.so" ]; then
	cp "$(dirname "$LEAKTOP_SRC")/libleaktop-agent.so" "$TMP/bin/" ||
		die "cannot copy libleaktop-agent.so"
fi
"$LEAKTOP" --version >/dev/null 2>&1 || die "$LEAKTOP_SRC does not run (being rebuilt?)"
GROWTH_MIX=""
if [ -x "$GROWTH_MIX_SRC" ] && cp "$GROWTH_MIX_SRC" "$TMP/bin/growth_mix"; then
	GROWTH_MIX=$TMP/bin/growth_mix
fi
STEADY=""
if [ -x "$STEADY_SRC" ] && cp "$STEADY_SRC" "$TMP/bin/steady_grow"; then
	STEADY=$TMP/bin/steady_grow
fi
BENCH_NOFP=""
if [ -x "$BENCH_NOFP_SRC" ] && cp "$BENCH_NOFP_SRC" "$TMP/bin/bench_nofp"; then
	BENCH_NOFP=$TMP/bin/bench_nofp
fi

# --- helpers ----------------------------------------------------------------------------

# wait_gone PID SECONDS: wait for a child to exit; its status in $WAIT_RC (124: timed out).
wait_gone() {
	local pid=$1 deadline=$((SECONDS + $2))

	while kill -0 "$pid" 2>/dev/null; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			WAIT_RC=124
			return 1
		fi
		sleep 0.05
	done
	wait "$pid"
	WAIT_RC=$?
	[ "$WAIT_RC" -eq 0 ]
}

# wait_for SECONDS CMD...: poll until CMD succeeds; fails on timeout or when the workload or
# leaktop (whichever is running) is gone.
wait_for() {
	local deadline=$((SECONDS + $1))

	shift
	until "$@"; do
		[ "$SECONDS" -lt "$deadline" ] || return 1
		[ -z "$BPID" ] || kill -0 "$BPID" 2>/dev/null || return 1
		[ -z "$LPID" ] || kill -0 "$LPID" 2>/dev/null || return 1
		sleep 0.05
	done
}

lines_at_least() {
	[ "$(wc -l <"$1")" -ge "$2" ]
}

# start_bench OUT ARGS...: start the workload, wait until it waits for SIGUSR1.
start_bench() {
	start_bench_bin "$BENCH" "$@"
}

# start_bench_bin BIN OUT ARGS...: the same with another build of the workload.
start_bench_bin() {
	local bin=$1 out=$2

	shift 2
	# Remove it first: the redirection below happens in the child, after `&` returns.
	rm -f "$out"
	"$bin" "$@" >"$out" 2>&1 &
	BPID=$!
	wait_for 10 grep -qs '^ready pid=' "$out" || { fail "bench $* did not start: $(cat "$out")"; return 1; }
}

# start_leaktop JSON LOG ARGS...: trace $BPID, wait for the first snapshot (probes are in).
# JSON "-": snapshots as JSON Lines into LOG.
start_leaktop() {
	local json=$1 log=$2

	shift 2
	rm -f "$json" "$log"
	if [ "$json" = - ]; then
		"$LEAKTOP" -b -p "$BPID" -j - "$@" >"$log" 2>"$log.err" &
		LPID=$!
		wait_for 20 test -s "$log" && return 0
	else
		"$LEAKTOP" -b -p "$BPID" -j "$json" "$@" >/dev/null 2>"$log.err" &
		LPID=$!
		wait_for 20 test -s "$json" && return 0
	fi
	fail "leaktop $* wrote no snapshot: $(tail -3 "$log.err")"
	return 1
}

stop_leaktop() {
	local pid=$LPID

	[ -n "$pid" ] || return 0
	kill -INT "$pid" 2>/dev/null
	if ! wait_gone "$pid" 30; then
		[ "$WAIT_RC" -eq 124 ] && kill -KILL "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
		LPID=""
		fail "leaktop exited with status $WAIT_RC"
		return 1
	fi
	LPID=""
}

kill_bench() {
	[ -n "$BPID" ] || return 0
	kill -KILL "$BPID" 2>/dev/null
	wait "$BPID" 2>/dev/null
	BPID=""
}

# Processes other than ours with uprobes on a file named libc*: who to blame for noise.
foreign_uprobes() {
	bpftool perf list -j 2>/dev/null | jq -r --argjson me "${LPID:-0}" '
		[.[] | select((.fd_type == "uprobe" or .fd_type == "uretprobe") and
			      (.filename | test("/libc[.-]")) and .pid != $me) | .pid] | unique |
		map(tostring) | join(" ")' 2>/dev/null
}

# Is a fresh untraced process's malloc+free at full speed (no uprobes on every libc)?
quiet() {
	local ns

	ns=$("$BENCH" -n pairs 5000 3 2>/dev/null | awk '/^median_ns_per_pair/ { print $2 }')
	[ -n "$ns" ] && awk -v n="$ns" -v q="$QUIET_NS" 'BEGIN { exit !(n < q) }'
}

# Processes other than ours with BPF programs on the syscall tracepoints (raw_syscalls' or
# syscalls' sys_enter*/sys_exit*), which run on every syscall of every process.
foreign_syscall_tracers() {
	bpftool perf list -j 2>/dev/null | jq -r --argjson me "${LPID:-0}" '
		[.[] | select((.fd_type == "raw_tracepoint" or .fd_type == "tracepoint") and
			      ((.tracepoint // "") | test("^sys_(enter|exit)")) and .pid != $me) |
		 .pid] | unique | map(tostring) | join(" ")' 2>/dev/null
}

# Are syscalls at full speed (no one else's programs on the syscall tracepoints)?  A timing
# would not do here: the tracepoints add tens of percent, not the 100 times of a uprobe.
quiet_sys() {
	[ -z "$(foreign_syscall_tracers)" ]
}

# wait_quiet [CHECK BLAME WHAT]: wait (bounded) until CHECK succeeds (default: quiet, no
# uprobes on every libc); BLAME prints the pids to name while waiting for WHAT to go.
wait_quiet() {
	local check=${1:-quiet} blame=${2:-foreign_uprobes} what=${3:-"uprobes on every process's libc"}
	local start=$SECONDS deadline=$((SECONDS + QUIET_WAIT)) said=0 rc=0

	until "$check"; do
		if [ "$SECONDS" -ge "$deadline" ] || [ "$((WAITED + SECONDS - start))" -ge "$QUIET_BUDGET" ]; then
			echo "   (not quiet after $((SECONDS - start))s; measuring anyway)"
			rc=1
			break
		fi
		if [ "$said" -eq 0 ]; then
			echo "   (waiting: $what, from pids: $("$blame"))"
			said=1
		fi
		sleep 1
	done
	WAITED=$((WAITED + SECONDS - start))
	return $rc
}

median() {
	sort -g | awk '{ v[NR] = $1 } END { if (!NR) print "nan"; else if (NR % 2) print v[(NR + 1) / 2];
		else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# interleaved ROUNDS RUNNER CONFIG...: ROUNDS rounds over the configurations ("name|flags"),
# the order turned each round so none always runs first or last; RUNNER NAME FLAGS runs one
# (setting NS, or failing: left out of that round).  A line per round, then a blank one.
interleaved() {
	local rounds=$1 runner=$2 r k n c name line
	shift 2
	local configs=("$@")
	n=${#configs[@]}
	for ((r = 0; r < rounds; r++)); do
		line="   round $((r + 1))/$rounds:"
		for ((k = 0; k < n; k++)); do
			c=${configs[$(((k + r) % n))]}
			name=${c%%|*}
			"$runner" "$name" "${c#*|}" || continue
			line+=" $name $NS"
		done
		echo "$line"
	done
	echo
}

# ratio_table RESULTS MEDIANS DIGITS FLOOR FLOOR_LABEL CONFIG...: per configuration, the median
# of its results (the associative array named RESULTS: "ns ns ..." by name, medians stored in
# the one named MEDIANS), their range, and the ratios to untraced and to FLOOR, DIGITS decimals.
ratio_table() {
	local -n results_=$1 medians_=$2
	local digits=$3 floor=$4 floor_label=$5 c name range
	shift 5
	for c in "$@"; do
		name=${c%%|*}
		medians_[$name]=$(tr ' ' '\n' <<<"${results_[$name]:-}" | grep . | median)
	done
	printf '   %-15s %10s %17s %12s %14s\n' config ns/pair "(min..max)" "x untraced" \
		"x $floor_label"
	for c in "$@"; do
		name=${c%%|*}
		range=$(tr ' ' '\n' <<<"${results_[$name]:-}" | grep . | sort -g |
			awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR) printf "(%.0f..%.0f)", lo, hi }')
		awk -v n="$name" -v m="${medians_[$name]}" -v u="${medians_[untraced]:-}" \
		    -v f="${medians_[$floor]:-}" -v r="$range" -v d="$digits" 'BEGIN {
			printf "   %-15s %10.1f %17s %12s %14s\n", n, m, r,
			       (u > 0 && m == m) ? sprintf("%." d "fx", m / u) : "-",
			       (f > 0 && m == m) ? sprintf("%." d "fx", m / f) : "-" }'
	done
	echo
}

# BPF map memory of a process, from the memlock field of /proc/PID/fdinfo of its map fds (the
# kernel's accounting of each map's memory; for BPF_F_NO_PREALLOC hashes it follows the
# element count).  Prints the total; "map NAME BYTES MAX_ENTRIES" lines go to $TMP/maps.
bpf_map_memory() {
	local pid=$1 fd link info names id mem max

	names=$(bpftool map show -j 2>/dev/null | jq -r '.[] | "\(.id) \(.name // "?")"' 2>/dev/null)
	for fd in /proc/"$pid"/fd/*; do
		link=$(readlink "$fd" 2>/dev/null) || continue
		[ "$link" = "anon_inode:bpf-map" ] || continue
		info=$(awk '/^(map_id|memlock|max_entries):/ { v[$1] = $2 }
			END { print v["map_id:"], v["memlock:"], v["max_entries:"] }' \
			"/proc/$pid/fdinfo/${fd##*/}" 2>/dev/null) || continue
		read -r id mem max <<<"$info"
		[ -n "$mem" ] || continue
		echo "map $(awk -v id="$id" '$1 == id { print $2 }' <<<"$names") $mem $max $id"
	done | sort -u -k5,5n >"$TMP/maps"
	awk '{ t += $3 } END { print t + 0 }' "$TMP/maps"
}

mib() {
	awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'
}

# --- 1. ns per malloc+free pair ---------------------------------------------------------

CONFIGS=("untraced|" "floor-entry|--probe-floor entry" "floor-planned|--probe-floor planned"
	 "leaktop|")
if [ -n "${BENCH_EXTRA:-}" ]; then
	IFS=';' read -ra extra <<<"$BENCH_EXTRA"
	for e in "${extra[@]}"; do
		CONFIGS+=("${e%%=*}|${e#*=}")
	done
fi
declare -A RESULTS EVENTS DROPPED

# pairs_once NAME FLAGS: one fresh workload process under one configuration; sets NS (and
# EV, DR for leaktop's own snapshot).  Returns 2 when the machine was not quiet after it.
pairs_once() {
	local name=$1 flags=$2 out=$TMP/pairs.out json=$TMP/pairs.json

	NS="" EV="" DR=""
	start_bench "$out" pairs "$PAIRS" "$INNER" || { kill_bench; return 1; }
	if [ "$name" != untraced ]; then
		# shellcheck disable=SC2086
		start_leaktop "$json" "$TMP/leaktop" -i 1 $flags || { stop_leaktop; kill_bench; return 1; }
	fi
	kill -USR1 "$BPID"
	if ! wait_gone "$BPID" 300; then
		fail "bench pairs under $name: status $WAIT_RC: $(tail -3 "$out")"
		kill_bench
		stop_leaktop
		return 1
	fi
	BPID=""
	NS=$(awk '/^median_ns_per_pair/ { print $2 }' "$out")
	[ -n "$NS" ] || { fail "bench pairs under $name printed no result"; stop_leaktop; return 1; }
	quiet
	local q=$?
	if [ "$name" != untraced ]; then
		stop_leaktop || return 1
		EV=$(jq -r '.stats.events' "$json" 2>/dev/null)
		DR=$(jq -r '.stats.dropped' "$json" 2>/dev/null)
	fi
	[ "$q" -eq 0 ] || return 2
	return 0
}

# quiet_attempts NAME CMD...: run CMD (a *_once function: 0 measured, 1 failed, 2 the machine
# was not quiet after it) until a run starts and ends quiet, at most ATTEMPTS times while the
# waiting budget lasts; counts discarded runs and configurations never measured quiet (in
# UNQUIET, and in the variable QA_UNQUIET names, if set).  What "quiet" is: wait_quiet's
# arguments in the array QA_QUIET (default: its own); QA_AGAIN, if set, is a function printing
# the line said when a run is done again.  Returns 1 when CMD failed.
QA_QUIET=() QA_AGAIN="" QA_UNQUIET=""
quiet_attempts() {
	local name=$1 try pre rc ok=0
	shift

	for ((try = 1; try <= ATTEMPTS; try++)); do
		wait_quiet "${QA_QUIET[@]}"
		pre=$?
		"$@"
		rc=$?
		[ "$rc" -eq 1 ] && return 1
		if [ "$rc" -eq 0 ] && [ "$pre" -eq 0 ]; then
			ok=1
			break
		fi
		# No point in measuring again once the waiting budget is spent.
		[ "$try" -lt "$ATTEMPTS" ] && [ "$WAITED" -lt "$QUIET_BUDGET" ] || break
		if [ -n "$QA_AGAIN" ]; then
			"$QA_AGAIN" "$name"
		else
			echo "   (other uprobes on every libc around the $name run ($NS ns/pair): again)"
		fi
		DISCARDED=$((DISCARDED + 1))
	done
	if [ "$ok" -ne 1 ]; then
		UNQUIET=$((UNQUIET + 1))
		[ -z "$QA_UNQUIET" ] || printf -v "$QA_UNQUIET" '%d' $((${!QA_UNQUIET} + 1))
	fi
	return 0
}

run_pairs() {
	local name=$1 flags=$2

	quiet_attempts "$name" pairs_once "$name" "$flags" || return 1
	RESULTS[$name]+="$NS "
	if [ "$name" != untraced ]; then
		EVENTS[$name]+="${EV:-?} "
		DROPPED[$name]+="${DR:-?} "
	fi
	return 0
}

echo "leaktop benchmark: $(uname -r), $(nproc) CPUs, $(ldd --version 2>&1 | head -1)"
echo
if want_section 1; then
echo "1. malloc(64)+free pairs: $ROUNDS processes per configuration, interleaved; each times"
echo "   $INNER loops of $PAIRS pairs and keeps the median loop; the table gives the median"
echo "   over processes (min..max in brackets)."
t_start=$SECONDS
interleaved "$ROUNDS" run_pairs "${CONFIGS[@]}"
declare -A MED
ratio_table RESULTS MED 1 floor-entry floor-entry "${CONFIGS[@]}"
if [ -n "${EVENTS[leaktop]:-}" ]; then
	expect=$(((PAIRS * INNER + 2000) * 2))
	for d in ${DROPPED[leaktop]}; do
		[ "$d" = 0 ] || fail "leaktop dropped $d events in a pairs run"
	done
	for e in ${EVENTS[leaktop]}; do
		[ "$e" != "?" ] && [ "$e" -ge "$expect" ] ||
			fail "leaktop counted $e events in a pairs run, expected at least $expect"
	done
	echo "   leaktop's stats.events per process: ${EVENTS[leaktop]}(>= $expect expected); dropped: ${DROPPED[leaktop]}"
fi
awk -v e="${MED[floor-entry]}" -v p="${MED[floor-planned]}" -v l="${MED[leaktop]}" -v u="${MED[untraced]}" 'BEGIN {
	if (!(e > 0 && p > 0 && l > 0)) exit
	printf "   traps alone at the planned points: %.0f ns/pair; at the entries: %.0f ns/pair\n", p - u, e - u
	printf "   moving free'"'"'s probe off its entry (no single-step) saves %.0f ns/pair\n", e - p
	printf "   leaktop'"'"'s BPF programs (leaktop - floor-planned): %.0f ns/pair\n", l - p }'
[ "$DISCARDED" -eq 0 ] || echo "   $DISCARDED run(s) thrown away: other uprobes on every libc appeared during them"
[ "$WAITED" -eq 0 ] || echo "   ${WAITED}s spent waiting for other tracers' uprobes on every libc to go"
[ "$UNQUIET" -eq 0 ] || echo "   WARNING: $UNQUIET measurement(s) ran while other uprobes were on every libc; figures suspect"
goal=$(awk -v l="${MED[leaktop]}" -v f="${MED[floor-entry]}" -v g="$GOAL_NS" -v q="$GOAL_RATIO" \
	'BEGIN { print (l > 0 && f > 0 && l <= g && l / f <= q) ? "MET" : "NOT MET" }')
printf '   goal: leaktop <= %d ns/pair and <= %sx floor-entry: %s (%.0f ns/pair, %.3fx)\n' \
	"$GOAL_NS" "$GOAL_RATIO" "$goal" "${MED[leaktop]}" \
	"$(awk -v l="${MED[leaktop]}" -v f="${MED[floor-entry]}" 'BEGIN { print (f > 0) ? l / f : 0 }')"
echo "   ($((SECONDS - t_start)) s)"
echo

fi
# --- 2. collector time with many live blocks, memory ------------------------------------

# run_live N: leaktop -i 1 on a process holding N live blocks; prints one table row.
run_live() {
	local n=$1 out=$TMP/live.out log=$TMP/live.jsonl seen want rss hwm maps alloc_ns pid

	wait_quiet || UNQUIET=$((UNQUIET + 1))
	start_bench "$out" live "$n" || { kill_bench; return 1; }
	pid=$BPID
	start_leaktop - "$log" -i 1 || { stop_leaktop; kill_bench; return 1; }
	kill -USR1 "$BPID"
	if ! wait_for 120 grep -q '^done' "$out"; then
		fail "bench live $n did not finish allocating: $(tail -3 "$out")"
		stop_leaktop
		kill_bench
		return 1
	fi
	# Snapshots in which every block is live (the one being written at "done" may not be).
	seen=$(wc -l <"$log")
	want=$((seen + 1 + LIVE_INTERVALS))
	wait_for $((LIVE_INTERVALS * 3 + 10)) lines_at_least "$log" "$want" ||
		fail "leaktop wrote $(wc -l <"$log") snapshots, expected $want"
	rss=$(awk '/^VmRSS:/ { print $2 * 1024 }' "/proc/$LPID/status")
	hwm=$(awk '/^VmHWM:/ { print $2 * 1024 }' "/proc/$LPID/status")
	maps=$(bpf_map_memory "$LPID")
	cp "$TMP/maps" "$TMP/maps.$n"
	# leaktop first: killing the workload first would make it purge n records on the way out.
	stop_leaktop
	kill_bench
	alloc_ns=$(awk '/^alloc_ns_per_block/ { print $2 }' "$out")

	# [collect_ms, live blocks of the workload, dropped, events] of each snapshot.
	jq -c --argjson pid "$pid" '
		[.stats.collect_ms, ([.processes[] | select(.pid == $pid) | .heap.outstanding_count] | max // 0),
		 .stats.dropped, .stats.events]' "$log" >"$TMP/live.rows"
	# Steady state: the last LIVE_INTERVALS snapshots (the first ones after the sites appeared
	# also symbolize their stacks: that is the "first" column, the worst interval of the run).
	tail -n "$LIVE_INTERVALS" "$TMP/live.rows" >"$TMP/live.steady"
	read -r LIVE_MED LIVE_MAX LIVE_COUNT LIVE_DROPPED < <(jq -s -r '
		(map(.[0]) | sort) as $ms |
		"\($ms[length / 2 | floor]) \($ms | max) \(map(.[1]) | min) \(map(.[2]) | max)"' \
		"$TMP/live.steady")
	LIVE_FIRST=$(jq -s -r 'map(.[0]) | max' "$TMP/live.rows")
	printf '   %9d %11d %7d %10.2f %8.2f %8.1f %10.0f %10s %10s %10s\n' "$n" "$LIVE_COUNT" \
		"$LIVE_DROPPED" "$LIVE_MED" "$LIVE_MAX" "$LIVE_FIRST" "${alloc_ns:-0}" \
		"$(mib "$rss")" "$(mib "$hwm")" "$(mib "$maps")"
	[ "$LIVE_DROPPED" = 0 ] || echo "   !!! leaktop DROPPED $LIVE_DROPPED events with $n live blocks"
	[ "$LIVE_COUNT" -ge "$n" ] ||
		fail "leaktop's last snapshots show $LIVE_COUNT live blocks of the $n the workload holds"
	COLLECT[$n]=$LIVE_MED
	return 0
}

if want_section 2; then
declare -A COLLECT
echo "2. collector time per interval (stats.collect_ms of leaktop -p PID -i 1) with N live 32-byte"
echo "   blocks from 4 call sites: median and max of the last $LIVE_INTERVALS snapshots (all N live), and"
echo "   the worst interval of the run (\"first\": new sites' stacks symbolized); outstanding and"
echo "   dropped as those snapshots report them; ns/malloc: the workload's traced malloc (no free)"
echo "   while the blocks pile up; leaktop's RSS, peak RSS and BPF map memory at the end."
t_start=$SECONDS
printf '   %9s %11s %7s %10s %8s %8s %10s %10s %10s %10s\n' "live N" outstanding dropped \
	"collect_ms" max first "ns/malloc" RSS "RSS peak" "BPF maps"
run_live "$LIVE"
run_live "$LIVE_SMALL"
for n in "$LIVE" "$LIVE_SMALL"; do
	[ -f "$TMP/maps.$n" ] || continue
	printf '   BPF maps with %d live: %s\n' "$n" "$(sort -k3,3nr "$TMP/maps.$n" | awk '
		NR <= 6 { printf "%s%s %.1f MiB", (NR > 1 ? ", " : ""), $2, $3 / 1048576 }
		NR > 6 { t += $3 } END { printf ", others %.0f KiB", t / 1024 }')"
done
if [ -f "$TMP/maps.$LIVE" ] && [ -f "$TMP/maps.$LIVE_SMALL" ] && [ "$LIVE" -ne "$LIVE_SMALL" ]; then
	awk -v n="$LIVE" -v s="$LIVE_SMALL" '$2 == "allocs" { m[FILENAME] = $3 } END {
		per = (m[ARGV[1]] - m[ARGV[2]]) / (n - s)
		printf "   allocs map: %.0f bytes of kernel memory per live block, plus %.1f MiB when empty\n",
		       per, (m[ARGV[2]] - per * s) / 1048576 }' "$TMP/maps.$LIVE" "$TMP/maps.$LIVE_SMALL"
fi
if [ -n "${COLLECT[$LIVE]:-}" ] && [ -n "${COLLECT[$LIVE_SMALL]:-}" ]; then
	awk -v a="${COLLECT[$LIVE]}" -v b="${COLLECT[$LIVE_SMALL]}" -v g="$GOAL_COLLECT_MS" \
	    -v n="$LIVE" -v s="$LIVE_SMALL" 'BEGIN {
		printf "   goal: collect_ms < %d with %d live, independent of the live count: %s (%.2f ms; %.2f ms with %d)\n",
		       g, n, (a < g && a <= 2 * b + 1) ? "MET" : "NOT MET", a, b, s }'
fi
echo "   ($((SECONDS - t_start)) s)"
echo

fi
# --- 3. ns per open+close pair: fd tracking ---------------------------------------------

OC_CONFIGS=("untraced|" "floor-tp|-r fd --probe-floor entry" "leaktop-fd|-r fd")
OC_EXPECT=$((OC_PAIRS * INNER + 2000))	# the timed loops and the warm-up (bench.c)
OC_DISCARDED=0
declare -A OC_RESULTS OC_OPENS OC_DROPPED

# fd_opens JSON PID: processes[PID].fd.opens in leaktop's snapshot ("" if not there yet).
fd_opens() {
	jq -r --argjson pid "$2" '[.processes[] | select(.pid == $pid) | .fd.opens] | first // empty' \
		"$1" 2>/dev/null
}

opens_at_least() {
	local n

	n=$(fd_opens "$1" "$2")
	[ -n "$n" ] && [ "$n" -ge "$3" ]
}

# openclose_once NAME FLAGS: one fresh workload process under one configuration; sets NS (and
# OPENS, DR from leaktop's snapshot for leaktop-fd).  Returns 2 when, after it, other
# programs were on the syscall tracepoints.
openclose_once() {
	local name=$1 flags=$2 out=$TMP/oc.out json=$TMP/oc.json pid

	NS="" OPENS="" DR=""
	start_bench "$out" openclose "$OC_PAIRS" "$INNER" || { kill_bench; return 1; }
	pid=$BPID
	if [ "$name" != untraced ]; then
		# shellcheck disable=SC2086
		start_leaktop "$json" "$TMP/leaktop" -i 1 $flags || { stop_leaktop; kill_bench; return 1; }
	fi
	kill -USR1 "$BPID"
	# With the handshake, the workload stays alive after its loops ("done") until killed, so
	# the snapshot that follows still has it.
	if ! wait_for 300 grep -q '^done' "$out"; then
		fail "bench openclose under $name did not finish: $(tail -3 "$out")"
		stop_leaktop
		kill_bench
		return 1
	fi
	NS=$(awk '/^median_ns_per_pair/ { print $2 }' "$out")
	if [ "$name" = leaktop-fd ]; then
		# Snapshots come every second: wait for one with all the opens (or give up after 5 s).
		wait_for 5 opens_at_least "$json" "$pid" "$OC_EXPECT"
		OPENS=$(fd_opens "$json" "$pid")
		DR=$(jq -r '.stats.dropped' "$json" 2>/dev/null)
	fi
	stop_leaktop || { kill_bench; return 1; }
	kill_bench
	[ -n "$NS" ] || { fail "bench openclose under $name printed no result"; return 1; }
	quiet_sys || return 2
	return 0
}

run_openclose() {
	local name=$1 flags=$2 try pre rc ok=0

	for ((try = 1; try <= ATTEMPTS; try++)); do
		wait_quiet quiet_sys foreign_syscall_tracers "programs on the syscall tracepoints"
		pre=$?
		openclose_once "$name" "$flags"
		rc=$?
		[ "$rc" -eq 1 ] && return 1
		if [ "$rc" -eq 0 ] && [ "$pre" -eq 0 ]; then
			ok=1
			break
		fi
		[ "$try" -lt "$ATTEMPTS" ] && [ "$WAITED" -lt "$QUIET_BUDGET" ] || break
		echo "   (other programs on the syscall tracepoints around the $name run ($NS ns/pair," \
		     "pids $(foreign_syscall_tracers)): again)"
		OC_DISCARDED=$((OC_DISCARDED + 1))
	done
	[ "$ok" -eq 1 ] || UNQUIET=$((UNQUIET + 1))
	OC_RESULTS[$name]+="$NS "
	if [ "$name" = leaktop-fd ]; then
		OC_OPENS[$name]+="${OPENS:-?} "
		OC_DROPPED[$name]+="${DR:-?} "
	fi
	return 0
}

if want_section 3; then
echo "3. open(\"/dev/null\")+close pairs: $ROUNDS processes per configuration, interleaved; each"
echo "   times $INNER loops of $OC_PAIRS pairs and keeps the median loop; the table gives the"
echo "   median over processes (min..max).  floor-tp: empty programs on raw_tracepoint"
echo "   sys_enter/sys_exit (leaktop -r fd --probe-floor entry), which every syscall of every"
echo "   process pays while they are attached; leaktop-fd: leaktop -r fd -p PID."
t_start=$SECONDS
UNQUIET_BEFORE=$UNQUIET
interleaved "$ROUNDS" run_openclose "${OC_CONFIGS[@]}"
declare -A OC_MED
ratio_table OC_RESULTS OC_MED 2 floor-tp floor-tp "${OC_CONFIGS[@]}"
if [ -n "${OC_OPENS[leaktop-fd]:-}" ]; then
	for d in ${OC_DROPPED[leaktop-fd]}; do
		if [ "$d" != 0 ]; then
			echo "   !!! leaktop -r fd DROPPED events: stats.dropped $d"
			fail "leaktop dropped $d events in an openclose run"
		fi
	done
	for o in ${OC_OPENS[leaktop-fd]}; do
		if [ "$o" = "?" ] || [ "$o" -lt "$OC_EXPECT" ]; then
			echo "   !!! leaktop -r fd counted $o opens of the workload, $OC_EXPECT made"
			fail "leaktop counted $o opens in an openclose run, expected at least $OC_EXPECT"
		fi
	done
	echo "   leaktop's processes[].fd.opens per process: ${OC_OPENS[leaktop-fd]}(>= $OC_EXPECT expected: $INNER x $OC_PAIRS + 2000 warm-up); stats.dropped: ${OC_DROPPED[leaktop-fd]}"
fi
awk -v f="${OC_MED[floor-tp]}" -v l="${OC_MED[leaktop-fd]}" -v u="${OC_MED[untraced]}" 'BEGIN {
	if (!(u > 0 && f > 0 && l > 0)) exit
	printf "   the tracepoints alone (floor-tp - untraced): %.0f ns/pair, %.0f ns per syscall (2 a pair)\n", f - u, (f - u) / 2
	printf "   leaktop'"'"'s fd programs (leaktop-fd - floor-tp): %.0f ns/pair\n", l - f }'
[ "$OC_DISCARDED" -eq 0 ] || echo "   $OC_DISCARDED run(s) thrown away: others' programs on the syscall tracepoints around them"
[ "$UNQUIET" -eq "$UNQUIET_BEFORE" ] ||
	echo "   WARNING: $((UNQUIET - UNQUIET_BEFORE)) measurement(s) ran while others had programs on the syscall tracepoints; figures suspect"
echo "   ($((SECONDS - t_start)) s)"
echo

fi
# --- 4. growth verdicts -----------------------------------------------------------------

# One growth_mix run's JSON Lines -> "t_heap t_fd false_count heap_rate fd_rate dropped snaps
# heap_flagged_at_end fd_flagged_at_end false_sites" (times "never" when never flagged;
# false_sites: kind:symbol*snapshots,... or "-").
# shellcheck disable=SC2016
GROWTH_JQ='
def heap_leak: .kind == "heap" and .stack[0].symbol == "leak_heap_alloc";
def fd_leak: .kind == "fd" and .stack[0].symbol == "leak_fd_open";
def first_flag(f): [.[] | select(any(.processes[].sites[]; f and .flagged)) | .elapsed_s] | first;
def rate(f): [.[] | .processes[] | select(.exited | not) | .sites[] | select(f) | .growth_per_s] | last;
def flagged_at_end(f): [last | .processes[].sites[] | select(f) | .flagged] | any;
[.[] | .processes[].sites[] | select(.flagged and ((heap_leak or fd_leak) | not)) |
 "\(.kind):\(.stack[0].symbol // "?")"] as $false |
[ (first_flag(heap_leak) // "never"), (first_flag(fd_leak) // "never"), ($false | length),
  (rate(heap_leak) // "nan"), (rate(fd_leak) // "nan"), ([.[] | .stats.dropped] | max),
  length, flagged_at_end(heap_leak), flagged_at_end(fd_leak),
  (if ($false | length) == 0 then "-" else
     ($false | group_by(.) | map("\(.[0])*\(length)") | join(",")) end) ] |
map(tostring) | join(" ")'

# growth_once RUN: leaktop -i 0.5 -d 20 -- growth_mix 25; prints the run's table row.
growth_once() {
	local run=$1 log=$TMP/growth.$1.jsonl quiet_mark=yes th tf nf hr fr dr ns he fe fs

	{ quiet && quiet_sys; } || quiet_mark=no
	"$LEAKTOP" -b -i 0.5 -d 20 -j - -- "$GROWTH_MIX" 25 >"$log" 2>"$log.err" &
	LPID=$!
	if ! wait_gone "$LPID" 60; then
		[ "$WAIT_RC" -eq 124 ] && kill -INT "$LPID" 2>/dev/null && sleep 2 && kill -KILL "$LPID" 2>/dev/null
		wait "$LPID" 2>/dev/null
		LPID=""
		fail "leaktop -- growth_mix (run $run) exited with status $WAIT_RC: $(tail -3 "$log.err")"
		return 1
	fi
	LPID=""
	{ quiet && quiet_sys; } || quiet_mark=no
	[ "$quiet_mark" = yes ] || GROWTH_UNQUIET=$((GROWTH_UNQUIET + 1))
	if ! read -r th tf nf hr fr dr ns he fe fs < <(jq -s -r "$GROWTH_JQ" "$log" 2>/dev/null) ||
	   [ "${ns:-0}" -eq 0 ]; then
		fail "leaktop -- growth_mix (run $run) wrote no usable snapshot: $(tail -3 "$log.err")"
		return 1
	fi
	printf '   %6s %12s %12s %12s %11.0f %8s %9.2f %8s %6s %10s\n' "$run" \
		"$([ "$th" = never ] && echo never || printf '%.1f s' "$th")" \
		"$([ "$tf" = never ] && echo never || printf '%.1f s' "$tf")" \
		"$nf" "$hr" "$(awk -v r="$hr" 'BEGIN { if (r == r + 0) printf "%+.1f%%", (r / 12800 - 1) * 100; else print "-" }')" \
		"$fr" "$dr" "$ns" "$quiet_mark"
	[ "$fs" = - ] || echo "          flagged, not leaks (kind:symbol*snapshots): ${fs//,/, }"
	[ "$th" != never ] || echo "          !!! leak_heap_alloc never flagged"
	[ "$tf" != never ] || echo "          !!! leak_fd_open never flagged"
	[ "$th" = never ] || [ "$he" = true ] ||
		echo "          !!! leak_heap_alloc flagged at $th s but not in the last snapshot"
	[ "$tf" = never ] || [ "$fe" = true ] ||
		echo "          !!! leak_fd_open flagged at $tf s but not in the last snapshot"
	[ "$dr" = 0 ] || echo "          !!! leaktop DROPPED $dr events"
	G_TH+="$([ "$th" = never ] && echo 1e9 || echo "$th") "
	G_TF+="$([ "$tf" = never ] && echo 1e9 || echo "$tf") "
	G_NF+="$nf "
	G_HR+="$hr "
	G_FR+="$fr "
}

if want_section 4; then
echo "4. growth verdicts: leaktop -b -i 0.5 -d 20 -j - -- growth_mix 25, $GROWTH_RUNS runs. growth_mix"
echo "   leaks 256 B / 20 ms from leak_heap_alloc (12800 B/s) and one fd / 100 ms from leak_fd_open"
echo "   (10 fd/s) among a bounded cache, malloc/free bursts and open/close churn.  heap, fd:"
echo "   elapsed_s of the first snapshot where the leak is flagged; false: (snapshot, site) pairs"
echo "   flagged that are neither leak; heap B/s, fd/s: growth_per_s of the leaks in the last"
echo "   snapshot (before growth_mix is stopped); quiet: no one else's tracers around the run."
t_start=$SECONDS
if [ -z "$GROWTH_MIX" ]; then
	echo "   skipped: $GROWTH_MIX_SRC is missing; run 'make build/tests/progs/growth_mix'"
else
	GROWTH_UNQUIET=0
	G_TH="" G_TF="" G_NF="" G_HR="" G_FR=""
	printf '   %6s %12s %12s %12s %11s %8s %9s %8s %6s %10s\n' run heap fd false "heap B/s" "vs true" \
		"fd/s" dropped snaps quiet
	for ((g = 1; g <= GROWTH_RUNS; g++)); do
		growth_once "$g"
	done
	if [ -n "$G_NF" ]; then
		mth=$(tr ' ' '\n' <<<"$G_TH" | grep . | median)
		mtf=$(tr ' ' '\n' <<<"$G_TF" | grep . | median)
		mhr=$(tr ' ' '\n' <<<"$G_HR" | grep . | median)
		printf '   %6s %12s %12s %12s %11.0f %8s %9.2f\n' median \
			"$(awk -v t="$mth" 'BEGIN { if (t >= 1e9) print "never"; else printf "%.1f s", t }')" \
			"$(awk -v t="$mtf" 'BEGIN { if (t >= 1e9) print "never"; else printf "%.1f s", t }')" \
			"$(tr ' ' '\n' <<<"$G_NF" | grep . | median)" "$mhr" \
			"$(awk -v r="$mhr" 'BEGIN { if (r == r + 0) printf "%+.1f%%", (r / 12800 - 1) * 100; else print "-" }')" \
			"$(tr ' ' '\n' <<<"$G_FR" | grep . | median)"
	fi
	[ "$GROWTH_UNQUIET" -eq 0 ] ||
		echo "   $GROWTH_UNQUIET run(s) had other tracers (uprobes on every libc or syscall tracepoints) around them"
fi
echo "   ($((SECONDS - t_start)) s)"

fi
if want_section 5; then
echo
echo "5. reachability scan: how long leaktop stops a process with 100 MiB of heap (25,600 live"
echo "   4 KiB blocks allocated while traced): leaktop -b -i 1 -d 6 --scan-every 2 -j - -p PID"
t_start=$SECONDS
SCAN_OUT=$TMP/scan.jsonl
"$BENCH" heap 100 >"$TMP/scan.bench" 2>&1 &
SPID=$!
for _ in $(seq 300); do grep -q "^ready" "$TMP/scan.bench" 2>/dev/null && break; sleep 0.1; done
if grep -q "^ready" "$TMP/scan.bench"; then
	"$LEAKTOP_SRC" -b -i 1 -d 6 --scan-every 2 -j - -p "$SPID" >"$SCAN_OUT" 2>"$TMP/scan.err" &
	SLT=$!
	for _ in $(seq 300); do [ -s "$SCAN_OUT" ] && break; sleep 0.1; done
	kill -USR1 "$SPID"
	wait "$SLT"
	jq -r --argjson p "$SPID" 'select(.processes[]?.pid == $p) | .processes[] |
		select(.pid == $p and .scan.stop_ms != null) |
		"   stop \(.scan.stop_ms | . * 10 | round / 10) ms, \(.scan.blocks) blocks, " +
		"\(.scan.bytes_read / 1048576 | floor) MiB read, \(.scan.threads) thread(s), lost: " +
		"\(.scan.lost.definite.count) definite, \(.scan.lost.reachable.count) reachable"' \
		"$SCAN_OUT" | tail -1
	grep -h "leaktop:" "$TMP/scan.err" | head -3
else
	echo "   the workload did not start"
fi
kill "$SPID" 2>/dev/null
wait "$SPID" 2>/dev/null
echo "   ($((SECONDS - t_start)) s)"

fi
# --- 6. busy machine ----------------------------------------------------------------------
#
# A build (make -B -j2 leaktop in a scratch copy of this tree) with a process churn beside
# it, untraced and then under whole-system leaktop -i 1 -j -; measured, never asserted.

# busy_churn STOP [COUNT]: the churn until the file STOP appears (or its directory goes: the
# bench was interrupted); the loops it made go into the file COUNT.
busy_churn() {
	local loops=0

	while [ ! -e "$1" ] && [ -d "${1%/*}" ]; do
		ls / >/dev/null
		python3 -c 'import json; json.dumps([1])'
		sh -c true
		sleep 0.05
		loops=$((loops + 1))
	done
	[ -z "${2:-}" ] || echo "$loops" >"$2"
}

# busy_build DIR: seconds the build took, with the churn running beside it.
busy_build() {
	local dir=$1 t0 t1
	rm -f "$TMP/busy.stop"
	busy_churn "$TMP/busy.stop" &
	local churn=$!
	t0=$(date +%s.%N)
	make -C "$dir" -B -j2 leaktop >/dev/null 2>&1 || echo "   the scratch build failed" >&2
	t1=$(date +%s.%N)
	touch "$TMP/busy.stop"
	wait "$churn"
	echo "$t1 - $t0" | bc
}

# cpu_s PID: user + system CPU seconds of PID so far.
cpu_s() {
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); print ($12 + $13) / hz }' \
		"/proc/$1/stat" 2>/dev/null
}

if want_section 6; then
t_start=$SECONDS
echo
echo "6. busy machine: make -B -j2 leaktop in a scratch copy of the tree, with a churn of short-"
echo "   lived processes (ls, python3, sh) beside it; untraced, then under whole-system exact"
echo "   leaktop -i 1 -j -; leaktop's CPU over the build, its RSS (stats.self_rss_bytes at the"
echo "   end, VmHWM), the worst interval's collect_ms, and how long it took to end after SIGINT."
BUSY=$TMP/busy-tree
mkdir -p "$BUSY"
(cd "$ROOT" && tar --exclude=./build --exclude=./.git --exclude=./leaktop -cf - .) |
	tar -xf - -C "$BUSY"
mkdir -p "$BUSY/build" && cp "$ROOT/build/vmlinux.h" "$BUSY/build/" 2>/dev/null
busy_untraced=$(busy_build "$BUSY")
"$LEAKTOP_SRC" -i 1 --exact -j - >"$TMP/busy.jsonl" 2>"$TMP/busy.err" &
BLT=$!
for _ in $(seq 600); do [ -s "$TMP/busy.jsonl" ] && break; sleep 0.1; done
cpu0=$(cpu_s "$BLT")
busy_traced=$(busy_build "$BUSY")
cpu1=$(cpu_s "$BLT")
hwm=$(awk '/^VmHWM/ { print $2 * 1024 }' "/proc/$BLT/status" 2>/dev/null)
ts=$(date +%s.%N)
kill -INT "$BLT"
wait "$BLT"
te=$(date +%s.%N)
read -r worst last_rss dropped deferred intervals < <(jq -rs '
	[.[] | .stats] as $s |
	"\([$s[].collect_ms] | max | round) \($s[-1].self_rss_bytes // 0) \($s[-1].dropped)" +
	" \($s[-1].deferred.sites // "null")/\($s[-1].deferred.procs // "null") \($s | length)"' \
	"$TMP/busy.jsonl" 2>/dev/null)
printf '   %-34s %10s\n' "build untraced" "$(printf '%.1f s' "$busy_untraced")"
printf '   %-34s %10s\n' "build under leaktop" "$(printf '%.1f s' "$busy_traced")"
printf '   %-34s %10s\n' "leaktop CPU over the build" \
	"$(echo "$cpu0 $cpu1 $busy_traced" | awk '{ printf "%.0f%%", 100 * ($2 - $1) / $3 }')"
printf '   %-34s %10s\n' "leaktop RSS at the end (VmHWM)" \
	"$(mib "${last_rss:-0}") ($(mib "${hwm:-0}"))"
printf '   %-34s %10s\n' "worst collect_ms ($intervals intervals)" "${worst:-?} ms"
printf '   %-34s %10s\n' "exit after SIGINT" "$(echo "$te - $ts" | bc | awk '{ printf "%.2f s", $1 }')"
printf '   %-34s %10s\n' "dropped; deferred sites/procs" "${dropped:-?}; ${deferred:-?}"
echo "   goals (issue 11): collect_ms < 250, CPU < 10%, RSS < 150 MiB, exit ~1 s"
grep -h "leaktop:" "$TMP/busy.err" | grep -v "skipping" | head -3
echo "   ($((SECONDS - t_start)) s)"

fi
# --- 7. bystanders -------------------------------------------------------------------------

# bystander_once MODE: NS (ns per pair, median loop) of a fresh untraced workload process
# while MODE runs: "untraced" (nothing), "command" (leaktop -- sleep) or "pid" (leaktop -p
# on a sleeping process); HA gets that leaktop's stats.heap_attach.  Returns 2 when the
# machine was not quiet after it.
bystander_once() {
	local mode=$1 json=$TMP/by.json other="" q

	NS="" HA=""
	rm -f "$json"
	case $mode in
	command)
		"$LEAKTOP" -b -i 1 -j "$json" -- sleep 600 >/dev/null 2>"$TMP/by.err" &
		LPID=$!
		;;
	pid)
		sleep 600 &
		other=$!
		"$LEAKTOP" -b -i 1 -j "$json" -p "$other" >/dev/null 2>"$TMP/by.err" &
		LPID=$!
		;;
	esac
	if [ -n "$LPID" ] && ! wait_for 20 test -s "$json"; then
		fail "leaktop ($mode) wrote no snapshot: $(tail -3 "$TMP/by.err")"
		stop_leaktop
		[ -z "$other" ] || { kill "$other"; wait "$other"; } 2>/dev/null
		return 1
	fi
	NS=$("$BENCH" -n pairs "$PAIRS" "$INNER" 2>/dev/null | awk '/^median_ns_per_pair/ { print $2 }')
	[ -z "$LPID" ] || HA=$(jq -r '.stats.heap_attach' "$json" 2>/dev/null)
	quiet
	q=$?
	stop_leaktop || return 1
	[ -z "$other" ] || { kill "$other"; wait "$other"; } 2>/dev/null
	[ -n "$NS" ] || { fail "bench pairs beside leaktop ($mode) printed no result"; return 1; }
	[ "$q" -eq 0 ] || return 2
	return 0
}

if want_section 7; then
echo
echo "7. an unrelated process's malloc(64)+free pairs (bench -n pairs $PAIRS $INNER, median loop)"
echo "   untraced, while leaktop -- sleep runs and while leaktop -p runs on another process;"
echo "   $ROUNDS rounds, interleaved; medians over rounds, ratio to untraced (expected ~1.00)."
t_start=$SECONDS
declare -A BY_NS BY_HA
BY_MODES=(untraced command pid)
for ((r = 0; r < ROUNDS; r++)); do
	for ((k = 0; k < 3; k++)); do
		mode=${BY_MODES[$(((k + r) % 3))]}
		for ((try = 1; try <= ATTEMPTS; try++)); do
			wait_quiet
			pre=$?
			bystander_once "$mode"
			rc=$?
			[ "$rc" -eq 1 ] && break
			[ "$rc" -ne 0 ] || [ "$pre" -ne 0 ] || break
			[ "$try" -lt "$ATTEMPTS" ] && [ "$WAITED" -lt "$QUIET_BUDGET" ] || {
				UNQUIET=$((UNQUIET + 1))
				break
			}
			DISCARDED=$((DISCARDED + 1))
		done
		[ "$rc" -eq 1 ] && continue
		BY_NS[$mode]+="$NS "
		BY_HA[$mode]=$HA
	done
done
by_base=$(tr ' ' '\n' <<<"${BY_NS[untraced]:-}" | grep . | median)
for mode in "${BY_MODES[@]}"; do
	m=$(tr ' ' '\n' <<<"${BY_NS[$mode]:-}" | grep . | median)
	case $mode in
	untraced) label="untraced" ;;
	command) label="beside leaktop -- sleep (${BY_HA[command]:-?})" ;;
	pid) label="beside leaktop -p (${BY_HA[pid]:-?})" ;;
	esac
	printf '   %-40s %8s ns/pair  %s\n' "$label" "$m" \
		"$(awk -v m="$m" -v b="$by_base" 'BEGIN { if (b > 0 && m == m + 0) printf "%.2fx", m / b }')"
done
echo "   ($((SECONDS - t_start)) s)"
fi

# --- 8. the overhead budget on the build workload -------------------------------------------

# busy_tree: the scratch copy of the tree section 6 builds (made once).
busy_tree() {
	BUSY=$TMP/busy-tree
	[ -d "$BUSY/build" ] && return 0
	mkdir -p "$BUSY"
	(cd "$ROOT" && tar --exclude=./build --exclude=./.git --exclude=./leaktop -cf - .) |
		tar -xf - -C "$BUSY"
	mkdir -p "$BUSY/build" && cp "$ROOT/build/vmlinux.h" "$BUSY/build/" 2>/dev/null
}

# builds N: seconds for N builds of section 6's workload in a row.
builds() {
	local total=0 i
	for i in $(seq "$1"); do
		total=$(echo "$total + $(busy_build "$BUSY")" | bc)
	done
	echo "$total"
}

# steady_start NAME: the issue's steady leaker (256 B every 20 ms from grow_leak()), $SG_PID.
steady_start() {
	SG_DIR=$TMP/steady.$1
	mkdir -p "$SG_DIR"
	"$STEADY" "$SG_DIR" 256 20 >/dev/null 2>&1 &
	SG_PID=$!
}

steady_stop() {
	touch "$SG_DIR/stop" "$SG_DIR/quit"
	wait "$SG_PID" 2>/dev/null
}

if want_section 8 && [ -z "$STEADY" ]; then
	echo
	echo "8. skipped: $STEADY_SRC is missing; run 'make build/tests/progs/steady_grow'"
elif want_section 8; then
t_start=$SECONDS
echo
echo "8. overhead budget: section 6's build workload, $BUDGET_BUILDS builds in a row (about 30 s"
echo "   untraced), untraced, under whole-system leaktop -i 1 -j - (default: --budget 2) and"
echo "   under leaktop --exact.  A steady leaker started with the builds runs in each: 256 B"
echo "   every 20 ms from grow_leak() (steady_grow).  Under the default: when leaktop left"
echo "   exact tracing, when that site was first flagged (s after the leaker started) and its"
echo "   measured rate (12800 B/s is exact)."
busy_tree
steady_start un
b_un=$(builds "$BUDGET_BUILDS")
steady_stop
"$LEAKTOP" -i 1 -j - >"$TMP/budget.jsonl" 2>"$TMP/budget.err" &
BLT=$!
for _ in $(seq 600); do [ -s "$TMP/budget.jsonl" ] && break; sleep 0.1; done
steady_start def
sg_at=$(tail -n 1 "$TMP/budget.jsonl" | jq -r .elapsed_s 2>/dev/null)
b_def=$(builds "$BUDGET_BUILDS")
# Up to 30 s for the leak to be flagged, if the builds were quicker.
for _ in $(seq 30); do
	tail -n 1 "$TMP/budget.jsonl" | jq -e --argjson p "$SG_PID" '.processes[] |
		select(.pid == $p) | .sites[] | select(.flagged and .stack[0].symbol == "grow_leak")' \
		>/dev/null 2>&1 && break
	sleep 1
done
kill -INT "$BLT"
wait "$BLT"
read -r switched flagged rate mode < <(jq -rs --argjson p "$SG_PID" --argjson at "${sg_at:-0}" '
	([.[] | select(.stats.heap_mode == "suspects")][0].elapsed_s) as $sw |
	([.[] | select(any(.processes[] | select(.pid == $p) | .sites[];
			   .flagged and .stack[0].symbol == "grow_leak"))][0]) as $fl |
	"\(if $sw then ($sw * 10 | round / 10) else "never" end)" +
	" \(if $fl then ($fl.elapsed_s - $at | . * 10 | round / 10) else "never" end)" +
	" \([.[-1].processes[] | select(.pid == $p) | .sites[] |
	    select(.stack[0].symbol == "grow_leak") | .growth_per_s | round][0] // "?")" +
	" \(.[-1].stats.heap_mode)"' "$TMP/budget.jsonl" 2>/dev/null)
steady_stop
steady_start exact
"$LEAKTOP" -i 1 --exact -j "$TMP/exact.json" >/dev/null 2>"$TMP/exact.err" &
BLT=$!
for _ in $(seq 600); do [ -s "$TMP/exact.json" ] && break; sleep 0.1; done
b_ex=$(builds "$BUDGET_BUILDS")
kill -INT "$BLT"
wait "$BLT"
steady_stop
ratio() { echo "$1 $2" | awk '{ printf "%.2fx", $1 / $2 }'; }
printf '   %-40s %10s\n' "untraced" "$(printf '%.1f s' "$b_un")"
printf '   %-40s %10s %8s\n' "leaktop (default budget)" "$(printf '%.1f s' "$b_def")" \
	"$(ratio "$b_def" "$b_un")"
printf '   %-40s %10s %8s\n' "leaktop --exact" "$(printf '%.1f s' "$b_ex")" "$(ratio "$b_ex" "$b_un")"
printf '   %-40s %10s\n' "suspects only from (run time)" "${switched:-?} s"
printf '   %-40s %10s\n' "grow_leak flagged after" "${flagged:-?} s"
printf '   %-40s %10s\n' "grow_leak rate (12800 exact)" "${rate:-?} B/s"
printf '   %-40s %10s\n' "heap mode at the end" "${mode:-?}"
echo "   goals (issue 13): default <= 1.10x untraced; the leak flagged at its rate within 30 s"
grep -h "heap tracing" "$TMP/budget.err" | head -4 | sed 's/^/   /'
echo "   ($((SECONDS - t_start)) s)"
fi
# --- 9. stack unwinding: .eh_frame (CFI) beside the frame-pointer walk -------------------

# NAME|BUILD|leaktop options: BUILD "fp" is build/bench/bench (frame pointers), "nofp"
# build/bench/bench_nofp (none: only .eh_frame unwinds it).  Each traced configuration at one
# depth walks that many frames: the workload's stacks are deeper than both depths.  floor:
# empty programs where leaktop puts its own (the traps alone), so that what leaktop's BPF
# work costs, the walk included, can be told from the traps' cost that dwarfs it.
UW_CONFIGS=("untraced|nofp|" "floor|nofp|--probe-floor planned" "fp-d8|fp|--unwind fp --stack-depth 8"
	    "cfi-d8|nofp|--unwind cfi --stack-depth 8" "fp-d32|fp|--unwind fp --stack-depth 32"
	    "cfi-d32|nofp|--unwind cfi --stack-depth 32")
UW_GOAL=1.5	# issue 14: unwinding adds at most half to the FP walk's per-pair cost
declare -A UW_RESULTS UW_FRAMES UW_BPF

# uw_frames JSONL PID: "FRAMES ALLOCS DROPPED": the frames leaktop kept at the workload's
# busiest heap site (the timed loop's malloc) and its allocs, as the snapshot where it had
# the most allocs shows it (the last, once the workload is done), and stats.dropped of the
# last snapshot.
uw_frames() {
	jq -rs --argjson pid "$2" '
		([.[] | .processes[] | select(.pid == $pid) | .sites[] | select(.kind == "heap")] |
		 max_by(.allocs) // {stack: [], allocs: 0}) as $site |
		"\($site.stack | length) \($site.allocs) \(.[-1].stats.dropped)"' "$1" 2>/dev/null
}

# unwind_once NAME BUILD FLAGS: one fresh `bench deep` process under one configuration; sets
# NS, and FRAMES, DR for the traced ones.  Returns 2 when the machine was not quiet after it.
unwind_once() {
	local name=$1 build=$2 flags=$3 out=$TMP/uw.out log=$TMP/uw.jsonl bin=$BENCH pid q allocs

	NS="" FRAMES="" DR="" BPFNS=""
	[ "$build" = nofp ] && bin=$BENCH_NOFP
	start_bench_bin "$bin" "$out" deep "$UW_CHAIN" "$PAIRS" "$INNER" || { kill_bench; return 1; }
	pid=$BPID
	if [ "$name" != untraced ]; then
		# shellcheck disable=SC2086
		start_leaktop - "$log" -i 1 $flags || { stop_leaktop; kill_bench; return 1; }
	fi
	kill -USR1 "$BPID"
	# The workload stays alive after its loops ("done") until killed, so the snapshots that
	# follow still have it with every allocation.
	if ! wait_for 300 grep -q '^done' "$out"; then
		fail "bench deep under $name did not finish: $(tail -3 "$out")"
		stop_leaktop
		kill_bench
		return 1
	fi
	NS=$(awk '/^median_ns_per_pair/ { print $2 }' "$out")
	if [ "$name" != untraced ] && [ "$name" != floor ]; then
		BPFNS=$(uw_bpf_ns)
		wait_for 10 lines_at_least "$log" $(($(wc -l <"$log") + 2))
		read -r FRAMES allocs DR < <(uw_frames "$log" "$pid")
		# The timed loops, all at one site (the warm-up is another: its call to pairs()
		# is another call in time_rounds).
		[ "${allocs:-0}" -eq $((PAIRS * INNER)) ] ||
			fail "leaktop $flags counted ${allocs:-no} allocations at the workload's site," \
			     "expected $((PAIRS * INNER))"
		[ "${DR:-?}" = 0 ] || fail "leaktop $flags dropped ${DR:-?} events"
	fi
	[ "$name" = untraced ] || stop_leaktop || { kill_bench; return 1; }
	kill_bench
	[ -n "$NS" ] || { fail "bench deep under $name printed no result"; return 1; }
	quiet
	q=$?
	[ "$q" -eq 0 ] || return 2
	return 0
}

# uw_bpf_ns: the heap programs' own run time per malloc+free pair, from the kernel's BPF
# statistics (kernel.bpf_stats_enabled): two entries (malloc's, free's) and one return.
# Unlike ns/pair it leaves the traps out, whose cost on a VM varies more run to run than the
# walk costs in all.
uw_bpf_ns() {
	bpftool prog show -j 2>/dev/null | jq -r '
		def avg(re): [.[] | select((.name // "") | test(re)) |
			      select((.run_cnt // 0) > 0)] |
			     if length == 0 then null
			     else (map(.run_time_ns) | add) / (map(.run_cnt) | add) end;
		(avg("^alloc_enter")) as $e | (avg("^alloc_return")) as $r |
		if $e == null or $r == null then "" else (2 * $e + $r | floor) end'
}

run_unwind() {
	local name=$1 build=$2 flags=$3

	quiet_attempts "$name" unwind_once "$name" "$build" "$flags" || return 1
	UW_RESULTS[$name]+="$NS "
	[ -z "$FRAMES" ] || UW_FRAMES[$name]+="$FRAMES "
	[ -z "${BPFNS:-}" ] || UW_BPF[$name]+="$BPFNS "
	return 0
}

# eh_frame_kib FILE: the size of FILE's .eh_frame and .eh_frame_hdr, in KiB.
eh_frame_kib() {
	local size t=0

	for size in $(readelf -SW "$1" 2>/dev/null |
		      awk '$2 == ".eh_frame" || $2 == ".eh_frame_hdr" { print $6 }'); do
		t=$((t + 16#$size))
	done
	echo $(((t + 512) / 1024))
}

# unwind_tables_python: leaktop -p on python3.11 growing and trimming a list of bytearrays;
# prints the stats.unwind_* of its fourth snapshot.
unwind_tables_python() {
	local log=$TMP/uw-py.jsonl libc stats tb tt tr tf

	"$PYTHON311" -c '
import time
keep = []
while True:
    keep.append(bytearray(4096))
    if len(keep) > 256:
        del keep[:128]
    time.sleep(0.005)
' >/dev/null 2>&1 &
	BPID=$!
	start_leaktop - "$log" -i 0.5 || { stop_leaktop; kill_bench; return 1; }
	wait_for 20 lines_at_least "$log" 4 || fail "leaktop -p python3.11 wrote $(wc -l <"$log") snapshots, expected 4"
	libc=$(awk '$6 ~ /\/libc[.-][^\/]*$/ { print $6; exit }' "/proc/$BPID/maps" 2>/dev/null)
	stop_leaktop
	kill_bench
	stats=$(sed -n 4p "$log" | jq -r '.stats | [.unwind_table_bytes, .unwind_tables,
		.unwind_rows, .unwind_rows_full] | map(. // "null") | join(" ")' 2>/dev/null)
	read -r tb tt tr tf <<<"$stats"
	if ! [[ ${tb:-} =~ ^[0-9]+$ ]]; then
		fail "leaktop -p python3.11: stats.unwind_table_bytes is ${tb:-missing}"
		return 1
	fi
	printf '   %-44s %10s\n' "stats.unwind_table_bytes" "$(awk -v b="$tb" 'BEGIN {
		printf "%.1f KiB", b / 1024 }')"
	printf '   %-44s %10s\n' "stats.unwind_tables (objects)" "$tt"
	printf '   %-44s %10s\n' "stats.unwind_rows; unwind_rows_full" "$tr; $tf"
	printf '   %-44s %10s\n' ".eh_frame(+hdr): python3.11; libc" \
		"$(eh_frame_kib "$PYTHON311") KiB; $(eh_frame_kib "${libc:-/nonexistent}") KiB"
}

if want_section 9; then
t_start=$SECONDS
echo
echo "9. stack unwinding (issue 14): malloc(64)+free pairs $UW_CHAIN recursive calls deep (bench"
echo "   deep), $ROUNDS processes per configuration, interleaved; median loop of $INNER x $PAIRS"
echo "   pairs per process, median over processes.  cfi: leaktop -p --unwind cfi on the"
echo "   workload built -fomit-frame-pointer; fp: leaktop -p --unwind fp on it built with frame"
echo "   pointers; both walk exactly --stack-depth frames (\"frames\": what leaktop kept);"
echo "   floor: empty programs where leaktop puts its own (--probe-floor planned)."
if ! "$LEAKTOP" --unwind fp --version >/dev/null 2>"$TMP/uw.probe" ||
   ! "$LEAKTOP" --unwind cfi --version >/dev/null 2>>"$TMP/uw.probe"; then
	fail "section 9: this leaktop has no --unwind cfi|fp (issue 14's unwinder is not in" \
	     "this build), nothing measured: $(head -1 "$TMP/uw.probe")"
elif [ -z "$BENCH_NOFP" ]; then
	fail "section 9: $BENCH_NOFP_SRC is missing; run 'make build/bench/bench_nofp'"
else
	uw_stats_was=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)
	sysctl -q -w kernel.bpf_stats_enabled=1 2>/dev/null
	for ((r = 0; r < ROUNDS; r++)); do
		n=${#UW_CONFIGS[@]}
		line="   round $((r + 1))/$ROUNDS:"
		for ((k = 0; k < n; k++)); do
			c=${UW_CONFIGS[$(((k + r) % n))]}
			name=${c%%|*}
			rest=${c#*|}
			run_unwind "$name" "${rest%%|*}" "${rest#*|}" || continue
			line+=" $name $NS"
		done
		echo "$line"
	done
	echo
	declare -A UW_MED
	uw_unlike=0
	for c in "${UW_CONFIGS[@]}"; do
		name=${c%%|*}
		UW_MED[$name]=$(tr ' ' '\n' <<<"${UW_RESULTS[$name]:-}" | grep . | median)
	done
	printf '   %-10s %10s %17s %12s %14s %8s\n' config ns/pair "(min..max)" "x untraced" \
		"x fp (depth)" frames
	for c in "${UW_CONFIGS[@]}"; do
		name=${c%%|*}
		range=$(tr ' ' '\n' <<<"${UW_RESULTS[$name]:-}" | grep . | sort -g |
			awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR) printf "(%.0f..%.0f)", lo, hi }')
		fp=${name/cfi-/fp-}
		frames=$(tr ' ' '\n' <<<"${UW_FRAMES[$name]:-}" | grep . | sort -u | tr '\n' ' ')
		awk -v n="$name" -v m="${UW_MED[$name]}" -v u="${UW_MED[untraced]}" \
		    -v f="${UW_MED[$fp]:-}" -v r="$range" -v fr="${frames:--}" 'BEGIN {
			printf "   %-10s %10.1f %17s %12s %14s %8s\n", n, m, r,
			       (u > 0 && m == m) ? sprintf("%.1fx", m / u) : "-",
			       (n ~ /^(fp|cfi)-/ && f > 0 && m == m) ? sprintf("%.2fx", m / f) : "-", fr }'
		# Like for like only if each walk kept exactly the frames asked for.
		case $name in
		*-d8) want=8 ;;
		*-d32) want=32 ;;
		*) continue ;;
		esac
		for f in ${UW_FRAMES[$name]:-}; do
			[ "$f" = "$want" ] && continue
			fail "$name: leaktop kept $f frames at the workload's site, expected $want" \
			     "(the walk stopped early)"
			uw_unlike=1
		done
	done
	awk -v c8="${UW_MED[cfi-d8]}" -v f8="${UW_MED[fp-d8]}" -v c32="${UW_MED[cfi-d32]}" \
	    -v f32="${UW_MED[fp-d32]}" -v fl="${UW_MED[floor]}" -v g="$UW_GOAL" \
	    -v unlike="$uw_unlike" 'BEGIN {
		if (!(c8 > 0 && f8 > 0 && c32 > 0 && f32 > 0)) exit
		printf "   cfi over fp: %+.0f ns/pair at depth 8, %+.0f ns/pair at depth 32\n", c8 - f8,
		       c32 - f32
		printf "   per frame from depth 8 to 32: fp %.1f ns, cfi %.1f ns\n", (f32 - f8) / 24,
		       (c32 - c8) / 24
		v = (c8 <= g * f8 && c32 <= g * f32) ? "MET" : "NOT MET"
		if (unlike)
			v = "NOT JUDGED (a walk kept fewer frames than asked)"
		printf "   goal (issue 14): cfi <= %.1fx fp at both depths: %s (%.2fx at 8, %.2fx at 32)\n",
		       g, v, c8 / f8, c32 / f32
		if (fl > 0 && f8 > fl && f32 > fl)
			printf "   leaktop'"'"'s BPF work above the floor (%.0f ns/pair), depth 8 / 32: fp" \
			       " %.0f / %.0f ns, cfi %.0f / %.0f ns (cfi %.2fx / %.2fx fp)\n", fl,
			       f8 - fl, f32 - fl, c8 - fl, c32 - fl, (c8 - fl) / (f8 - fl),
			       (c32 - fl) / (f32 - fl) }'
	sysctl -q -w kernel.bpf_stats_enabled="$uw_stats_was" 2>/dev/null
	# The walks' own cost, as the kernel measured each program's run time.
	declare -A UW_BPF_MED
	for c in "${UW_CONFIGS[@]}"; do
		name=${c%%|*}
		UW_BPF_MED[$name]=$(tr ' ' '\n' <<<"${UW_BPF[$name]:-}" | grep . | median)
	done
	awk -v c8="${UW_BPF_MED[cfi-d8]:-}" -v f8="${UW_BPF_MED[fp-d8]:-}" \
	    -v c32="${UW_BPF_MED[cfi-d32]:-}" -v f32="${UW_BPF_MED[fp-d32]:-}" -v g="$UW_GOAL" \
	    -v unlike="$uw_unlike" 'BEGIN {
		if (!(c8 > 0 && f8 > 0 && c32 > 0 && f32 > 0)) {
			print "   BPF run time per pair: not measured (kernel.bpf_stats_enabled)"
			exit
		}
		printf "   BPF run time per pair (kernel statistics), depth 8 / 32: fp %.0f / %.0f ns," \
		       " cfi %.0f / %.0f ns (cfi %.2fx / %.2fx fp)\n", f8, f32, c8, c32, c8 / f8,
		       c32 / f32
		v = (c8 <= g * f8 && c32 <= g * f32) ? "MET" : "NOT MET"
		if (unlike)
			v = "NOT JUDGED (a walk kept fewer frames than asked)"
		printf "   goal on the programs alone: cfi <= %.1fx fp at both depths: %s\n", g, v }'
	echo
	echo "   unwind tables while tracing $PYTHON311 with -p (its own, libc's, the rest it maps):"
	if [ -x "$PYTHON311" ]; then
		unwind_tables_python
	else
		fail "section 9: $PYTHON311 is missing; run 'make deps'"
	fi
fi
echo "   ($((SECONDS - t_start)) s)"
fi
# Section 10 (issue 15): the allocator each process really uses.  ALLOC_LIBS: name, and the
# LD_PRELOAD that makes the workload use it (glibc: none).
ALLOC_LIBS=("glibc|" "jemalloc|libjemalloc.so.2" "tcmalloc|libtcmalloc_minimal.so.4"
	    "mimalloc|libmimalloc.so.2")
declare -A AL_RESULTS AL_KIND

# alloc_once ALLOC PRELOAD TRACED: one workload process (bench pairs) on that allocator,
# untraced or under leaktop -p; NS its median ns per pair, checked like section 1 (every
# timed allocation counted at one site, nothing dropped, the allocator leaktop names).
alloc_once() {
	local alloc=$1 preload=$2 traced=$3 out=$TMP/al.out log=$TMP/al.jsonl pid allocs frames
	local -a pre=()

	NS="" DR=""
	[ -n "$preload" ] && pre=(LD_PRELOAD="$preload")
	start_bench_bin env "$out" "${pre[@]}" "$BENCH" pairs "$PAIRS" "$INNER" ||
		{ kill_bench; return 1; }
	pid=$BPID
	if [ "$traced" = 1 ]; then
		start_leaktop - "$log" -i 1 || { stop_leaktop; kill_bench; return 1; }
	fi
	kill -USR1 "$BPID"
	if ! wait_gone "$BPID" 300; then
		fail "bench pairs on $alloc: status $WAIT_RC: $(tail -3 "$out")"
		kill_bench
		stop_leaktop
		return 1
	fi
	BPID=""
	NS=$(awk '/^median_ns_per_pair/ { print $2 }' "$out")
	if [ "$traced" = 1 ]; then
		# leaktop -p ends with its target, after a final snapshot.
		stop_leaktop || return 1
		read -r frames allocs DR < <(uw_frames "$log" "$pid")
		AL_KIND[$alloc]=$(tail -n 1 "$log" | jq -r --argjson p "$pid" \
			'.processes[] | select(.pid == $p) | .heap.allocator.kind // "null"' 2>/dev/null)
		[ "${allocs:-0}" -eq $((PAIRS * INNER)) ] ||
			fail "leaktop on $alloc counted ${allocs:-no} allocations at the workload's" \
			     "site, expected $((PAIRS * INNER))"
		[ "${DR:-?}" = 0 ] || fail "leaktop on $alloc dropped ${DR:-?} events"
		[ "${AL_KIND[$alloc]}" = "$alloc" ] ||
			fail "leaktop named the allocator of the $alloc run ${AL_KIND[$alloc]}"
	fi
	[ -n "$NS" ] || { fail "bench pairs on $alloc printed no result"; return 1; }
	quiet || return 2
	return 0
}

if want_section 10; then
t_start=$SECONDS
echo
echo "10. any allocator (issue 15): malloc(64)+free pairs on glibc and on Debian's jemalloc,"
echo "    tcmalloc and mimalloc (LD_PRELOAD), untraced and under leaktop -p (which finds and"
echo "    probes the allocator the process binds); $ROUNDS processes per configuration,"
echo "    interleaved; median loop of $INNER x $PAIRS pairs per process, median over processes."
for ((r = 0; r < ROUNDS; r++)); do
	line="   round $((r + 1))/$ROUNDS:"
	n=${#ALLOC_LIBS[@]}
	for ((k = 0; k < 2 * n; k++)); do
		j=$(((k + r) % (2 * n)))
		c=${ALLOC_LIBS[$((j / 2))]}
		alloc=${c%%|*}
		traced=$((j % 2))
		quiet_attempts "$alloc" alloc_once "$alloc" "${c#*|}" "$traced" || continue
		AL_RESULTS[$alloc-$traced]+="$NS "
		line+=" $alloc$([ "$traced" = 1 ] && echo +lt) $NS"
	done
	echo "$line"
done
echo
printf '    %-10s %16s %16s %10s %10s\n' allocator "untraced ns" "leaktop -p ns" ratio named
for c in "${ALLOC_LIBS[@]}"; do
	alloc=${c%%|*}
	u=$(tr ' ' '\n' <<<"${AL_RESULTS[$alloc-0]:-}" | grep . | median)
	t=$(tr ' ' '\n' <<<"${AL_RESULTS[$alloc-1]:-}" | grep . | median)
	awk -v a="$alloc" -v u="$u" -v t="$t" -v k="${AL_KIND[$alloc]:--}" 'BEGIN {
		printf "    %-10s %16.1f %16.1f %10s %10s\n", a, u, t,
		       (u > 0 && t == t) ? sprintf("%.1fx", t / u) : "-", k }'
done
echo "   ($((SECONDS - t_start)) s)"
fi
if want_section 11; then
echo
echo "== 11. leaktop lastref: the target's cost while 4 blocks are watched"
t_start=$SECONDS
LR_PROG=$ROOT/build/tests/progs/lastref_prog
LR_PAIRS=${BENCH_LASTREF_PAIRS:-200000}
# lr_once MODE: ns per pair of one run of lastref_prog bench (MODE: untraced, pid, lastref).
lr_once() {
	local d=$TMP/lastref.$1 pid lt="" i
	rm -rf "$d"
	mkdir -p "$d"
	"$LR_PROG" "$d" bench "$LR_PAIRS" &
	pid=$!
	for i in $(seq 300); do [ -e "$d/ready" ] && break; sleep 0.1; done
	case $1 in
	pid) "$LEAKTOP" -q -r heap -p "$pid" 2>"$d/err" & lt=$! ;;
	lastref) "$LEAKTOP" lastref -p "$pid" --site make_it --blocks 4 >/dev/null 2>"$d/err" &
		 lt=$! ;;
	esac
	# Traced once the probes are in (a second is plenty for -p; lastref says it).
	if [ "$1" = lastref ]; then
		for i in $(seq 300); do grep -q "tracing process" "$d/err" && break; sleep 0.1; done
	elif [ -n "$lt" ]; then
		sleep 1
	fi
	touch "$d/alloc"
	for i in $(seq 300); do [ -e "$d/allocated" ] && break; sleep 0.1; done
	if [ "$1" = lastref ]; then
		for i in $(seq 300); do [ "$(grep -c "lastref: watching" "$d/err")" -ge 4 ] && break
					sleep 0.1; done
	fi
	touch "$d/go"
	for i in $(seq 1200); do [ -s "$d/result" ] && break; sleep 0.1; done
	touch "$d/quit"
	wait "$pid" 2>/dev/null
	if [ -n "$lt" ]; then
		kill -INT "$lt" 2>/dev/null
		wait "$lt" 2>/dev/null
	fi
	cat "$d/result" 2>/dev/null || echo nan
}
if [ ! -x "$LR_PROG" ]; then
	fail "$LR_PROG is missing; run 'make build/tests/progs/lastref_prog'"
else
	declare -A LR=()
	for r in $(seq "$ROUNDS"); do
		line="   round $r:"
		for m in untraced pid lastref; do
			v=$(lr_once "$m")
			LR[$m]+="$v "
			line+=" $m $v"
		done
		echo "$line"
	done
	u=$(tr ' ' '\n' <<<"${LR[untraced]}" | grep . | median)
	p=$(tr ' ' '\n' <<<"${LR[pid]}" | grep . | median)
	l=$(tr ' ' '\n' <<<"${LR[lastref]}" | grep . | median)
	awk -v u="$u" -v p="$p" -v l="$l" 'BEGIN {
		printf "    ns per pair (+ a store into a watched word): untraced %.1f, -p %.1f (%.1fx), lastref %.1f (%.1fx untraced, %.1fx -p)\n",
		       u, p, p / u, l, l / u, l / p }'
fi
echo "   ($((SECONDS - t_start)) s)"
fi
# --- 12. real work: the build with churn and redis-benchmark, whole system (issue 25) --------

RW_ROUNDS=${BENCH_REALWORK_ROUNDS:-3}
RW_PARTS=" ${BENCH_REALWORK_PARTS:-build redis} "
REDIS_ARGS=${BENCH_REDIS_ARGS:--P 16 -c 50 -n 1000000 -t set,get,incr,lpush,lpop,sadd,hset}
RW_GOAL_RATIO=1.10
RW_GOAL_CPU_PCT=10
RW_GOAL_HWM_MIB=150
HZ=$(getconf CLK_TCK)
# NAME|options of a whole-system leaktop -q -i 1 -j - ("untraced": no leaktop).
RW_CONFIGS=("untraced|" "default|")
# The hook for leaktop variants on the same work, such as per-syscall against raw syscall
# tracepoints for fd and mmap tracking (issue 25): BENCH_REALWORK_EXTRA="name=options;...",
# with whatever options the leaktop under test has for them.
if [ -n "${BENCH_REALWORK_EXTRA:-}" ]; then
	IFS=';' read -ra rw_extra <<<"$BENCH_REALWORK_EXTRA"
	for e in "${rw_extra[@]}"; do
		RW_CONFIGS+=("${e%%=*}|${e#*=}")
	done
fi
RW_DISCARDED=0
RW_UNQUIET=0
declare -A RW_VAL RW_CPU RW_OTH RW_RND RW_LTCPU RW_HWM RW_COLLECT RW_MODE RW_SWITCH RW_DROP

# rw_foreign: pids of other tracers on every process's libc or on the syscall tracepoints.
rw_foreign() {
	echo "$(foreign_uprobes) $(foreign_syscall_tracers)" | tr ' ' '\n' | grep . | sort -un |
		tr '\n' ' '
}

rw_quiet() { [ -z "$(rw_foreign)" ]; }

# busy_s: CPU seconds the whole machine has been busy (/proc/stat: all but idle and iowait).
busy_s() {
	awk -v hz="$HZ" '$1 == "cpu" { print ($2 + $3 + $4 + $7 + $8 + $9) / hz; exit }' /proc/stat
}

# time_s FILE: user + system seconds from the last line of a `time` with TIMEFORMAT '%U %S'.
time_s() {
	tail -n 1 "$1" 2>/dev/null | awk 'NF >= 2 { print $(NF - 1) + $NF; exit } END { if (!NR) print 0 }'
}

# rw_leaktop_start NAME FLAGS: whole-system leaktop for a traced configuration, once it has
# written its first snapshot.
rw_leaktop_start() {
	LPID=""
	[ "$1" = untraced ] && return 0
	rm -f "$TMP/rw.jsonl"
	# shellcheck disable=SC2086
	"$LEAKTOP" -q -i 1 -j - $2 >"$TMP/rw.jsonl" 2>"$TMP/rw.err" &
	LPID=$!
	wait_for 60 test -s "$TMP/rw.jsonl" && return 0
	fail "whole-system leaktop $2 wrote no snapshot: $(tail -3 "$TMP/rw.err")"
	stop_leaktop
	return 1
}

# rw_leaktop_stop: RW_LT_HWM (VmHWM, bytes) read before SIGINT, then from its snapshots:
# RW_LT_COLLECT (worst collect_ms), RW_LT_MODE (heap_mode at the end), RW_LT_SWITCH (elapsed_s
# of the first snapshot in suspects mode, or "never"), RW_LT_DROP (stats.dropped at the end).
rw_leaktop_stop() {
	[ -n "$LPID" ] || return 0
	RW_LT_HWM=$(awk '/^VmHWM:/ { print $2 * 1024 }' "/proc/$LPID/status" 2>/dev/null)
	stop_leaktop || return 1
	read -r RW_LT_COLLECT RW_LT_MODE RW_LT_SWITCH RW_LT_DROP < <(
		jq -c '[.stats.collect_ms, .stats.heap_mode, .elapsed_s, .stats.dropped]' \
			"$TMP/rw.jsonl" 2>/dev/null | jq -rs '
		"\(map(.[0] // 0) | max | round) \(.[-1][1])" +
		" \([.[] | select(.[1] == "suspects")][0][2] // null | if . then . * 10 | round / 10 else "never" end)" +
		" \(.[-1][3])"' 2>/dev/null)
	grep -h "leaktop:" "$TMP/rw.err" 2>/dev/null | grep -v skipping | head -2 | sed 's/^/   /'
	rm -f "$TMP/rw.jsonl"
}

# rw_measure_start / rw_measure_end: the machine's busy CPU and leaktop's CPU around a run;
# rw_measure_end WALL OURS (CPU seconds of the workload) sets RW_OTHERS (cores the rest of the
# machine used meanwhile) and RW_LT_CPU_PCT (leaktop's share of one core, "-" untraced).
rw_measure_start() {
	RW_B0=$(busy_s)
	RW_C0=0
	[ -z "$LPID" ] || RW_C0=$(cpu_s "$LPID")
}

rw_measure_end() {
	local b1 c1=0

	b1=$(busy_s)
	[ -z "$LPID" ] || c1=$(cpu_s "$LPID")
	RW_LT_CPU_PCT=-
	[ -z "$LPID" ] || RW_LT_CPU_PCT=$(awk -v a="$RW_C0" -v b="$c1" -v w="$1" \
		'BEGIN { printf "%.1f", 100 * (b - a) / w }')
	RW_OTHERS=$(awk -v a="$RW_B0" -v b="$b1" -v o="$2" -v c0="$RW_C0" -v c1="$c1" \
		-v w="$1" 'BEGIN { x = (b - a - o - (c1 - c0)) / w; printf "%.2f", x < 0 ? 0 : x }')
}

# rw_build_once NAME FLAGS: one build with the churn beside it; RW_V (seconds), RW_W (CPU
# seconds of the build and the churn), RW_LOOPS (churn loops).  Returns 2 when other tracers
# were around it.
rw_build_once() {
	local name=$1 flags=$2 churn rc q

	busy_tree
	rw_leaktop_start "$name" "$flags" || return 1
	rm -f "$TMP/busy.stop" "$TMP/rw.loops"
	rw_measure_start
	(TIMEFORMAT='%U %S'; time busy_churn "$TMP/busy.stop" "$TMP/rw.loops") 2>"$TMP/rw.churn" &
	churn=$!
	{
		TIMEFORMAT='%R %U %S'
		time make -C "$BUSY" -B -j2 leaktop >/dev/null 2>&1
	} 2>"$TMP/rw.build"
	rc=$(tail -n 1 "$TMP/rw.build" | awk 'NF == 3 { print 0; exit } { print 1 }')
	touch "$TMP/busy.stop"
	wait "$churn"
	RW_V=$(tail -n 1 "$TMP/rw.build" | awk '{ print $1 }')
	RW_W=$(awk -v a="$(time_s "$TMP/rw.build")" -v b="$(time_s "$TMP/rw.churn")" \
		'BEGIN { print a + b }')
	RW_LOOPS=$(cat "$TMP/rw.loops" 2>/dev/null)
	rw_measure_end "$RW_V" "$RW_W"
	rw_quiet
	q=$?
	rw_leaktop_stop || return 1
	[ "$rc" -eq 0 ] || { fail "the scratch build under $name failed"; return 1; }
	[ "$q" -eq 0 ] || return 2
	return 0
}

redis_up() { [ "$(redis-cli -h 127.0.0.1 -p "$RPORT" PING 2>/dev/null)" = PONG ]; }

# rw_redis_start: a redis-server of our own on a free port of 127.0.0.1, nothing saved to disk,
# in a temporary directory; its pid in RPID, its port in RPORT.
rw_redis_start() {
	local rdir=$TMP/redis try

	rm -rf "$rdir"
	mkdir -p "$rdir"
	for try in 1 2 3; do
		RPORT=$(free_port) || break
		redis-server --bind 127.0.0.1 --port "$RPORT" --save '' --appendonly no \
			--dir "$rdir" --daemonize no --logfile "$rdir/log" >/dev/null 2>&1 &
		RPID=$!
		wait_for 10 redis_up && return 0
		rw_redis_stop
	done
	fail "redis-server did not start: $(tail -n 2 "$rdir/log" 2>/dev/null)"
	return 1
}

rw_redis_stop() {
	[ -n "${RPID:-}" ] || return 0
	redis-cli -h 127.0.0.1 -p "$RPORT" SHUTDOWN NOSAVE >/dev/null 2>&1
	wait_gone "$RPID" 10 || { kill -KILL "$RPID" 2>/dev/null; wait "$RPID" 2>/dev/null; }
	RPID=""
}

# free_port: a TCP port nothing listens on.
free_port() {
	local p

	for _ in $(seq 100); do
		p=$((20000 + RANDOM % 30000))
		[ -z "$(ss -Htln "sport = :$p")" ] && { echo "$p"; return 0; }
	done
	return 1
}

# rw_redis_once NAME FLAGS: redis-benchmark against a fresh redis-server (started before
# leaktop, as a service would be); RW_V (requests/s over all its tests: their count over the
# sum of 1/rps, as each makes the same number of requests), RW_W (CPU seconds of
# redis-server and redis-benchmark).  Returns 2 when other tracers were around it.
rw_redis_once() {
	local name=$1 flags=$2 r0 r1 q wall

	rw_redis_start || return 1
	rw_leaktop_start "$name" "$flags" || { rw_redis_stop; return 1; }
	r0=$(cpu_s "$RPID")
	rw_measure_start
	{
		TIMEFORMAT='%R %U %S'
		# shellcheck disable=SC2086
		time redis-benchmark -h 127.0.0.1 -p "$RPORT" --csv $REDIS_ARGS \
			>"$TMP/rw.csv" 2>"$TMP/rw.rb.err"
	} 2>"$TMP/rw.rbtime"
	r1=$(cpu_s "$RPID")
	wall=$(tail -n 1 "$TMP/rw.rbtime" | awk '{ print $1 }')
	RW_W=$(awk -v a="$(time_s "$TMP/rw.rbtime")" -v r0="$r0" -v r1="$r1" \
		'BEGIN { print a + r1 - r0 }')
	rw_measure_end "$wall" "$RW_W"
	rw_quiet
	q=$?
	rw_leaktop_stop || { rw_redis_stop; return 1; }
	rw_redis_stop
	RW_V=$(awk -F'"' 'NR > 1 && $4 > 0 { n++; inv += 1 / $4 } END { if (n) printf "%.0f", n / inv }' \
		"$TMP/rw.csv")
	RW_LOOPS=""
	[ -n "$RW_V" ] || { fail "redis-benchmark under $name gave no result: $(tail -n 2 "$TMP/rw.rb.err")"
			    return 1; }
	[ "$q" -eq 0 ] || return 2
	return 0
}

# The line said when a real-work run is done again (RW_PART: which part).
rw_again() {
	echo "   (other tracers (pids $(rw_foreign)) around the $RW_PART run under $1: again)"
	RW_DISCARDED=$((RW_DISCARDED + 1))
}

# rw_run PART NAME FLAGS ROUND: one measurement, again (up to ATTEMPTS times while the waiting
# budget lasts) when other tracers were around it; the results kept under PART/NAME.
rw_run() {
	local part=$1 name=$2 flags=$3 round=$4 k=$1/$2
	local QA_QUIET=(rw_quiet rw_foreign "other tracers on every libc or on the syscall tracepoints")
	local QA_AGAIN=rw_again QA_UNQUIET=RW_UNQUIET RW_PART=$part

	quiet_attempts "$name" "rw_${part}_once" "$name" "$flags" || return 1
	RW_VAL[$k]+="$RW_V "
	RW_CPU[$k]+="$RW_W "
	RW_OTH[$k]+="$RW_OTHERS "
	RW_RND[$k/$round]=$RW_V
	if [ "$name" != untraced ]; then
		RW_LTCPU[$k]+="$RW_LT_CPU_PCT "
		RW_HWM[$k]+="${RW_LT_HWM:-0} "
		RW_COLLECT[$k]+="${RW_LT_COLLECT:-?} "
		RW_MODE[$k]+="${RW_LT_MODE:-?} "
		RW_SWITCH[$k]+="${RW_LT_SWITCH:-?} "
		RW_DROP[$k]+="${RW_LT_DROP:-?} "
	fi
	return 0
}

# rw_stat LIST: "median min max" of a list of numbers.
rw_stat() {
	tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{ v[NR] = $1 } END {
		if (!NR) { print "nan nan nan"; exit }
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		print m, v[1], v[NR] }'
}

# rw_list LIST: the words of LIST joined by commas, "?" when none.
rw_list() {
	local w IFS=,

	IFS=" " read -ra w <<<"$1"
	if [ "${#w[@]}" -gt 0 ]; then echo "${w[*]}"; else echo "?"; fi
}

# rw_mibs LIST: byte counts in MiB, one decimal.
rw_mibs() {
	local b

	for b in $1; do
		awk -v b="$b" 'BEGIN { printf "%.1f ", b / 1048576 }'
	done
}

# rw_slower PART A B: how many times slower A is than B (seconds: A/B; requests/s: B/A).
rw_slower() {
	awk -v p="$1" -v a="$2" -v b="$3" 'BEGIN {
		if (!(a > 0 && b > 0)) { print "nan"; exit }
		printf "%.2f", p == "build" ? a / b : b / a }'
}

# rw_verdict VALUE GOAL: PASS when VALUE <= GOAL, OVER above it, "?" when unknown.
rw_verdict() {
	awk -v v="$1" -v g="$2" 'BEGIN { print (v == v + 0) ? (v <= g ? "PASS" : "OVER") : "?" }'
}

if want_section 12; then
t_start=$SECONDS
echo
echo "12. real work (issue 25): whole-system default leaktop (leaktop -q -i 1 -j -, no --exact,"
echo "   a fresh one per run) against nothing, $RW_ROUNDS round(s), interleaved, the order turned"
echo "   each round: (a) section 6's build (make -B -j2 leaktop in a scratch copy) with its churn"
echo "   of short processes (ls, python3 -c, sh -c); (b) redis-benchmark --csv $REDIS_ARGS"
echo "   against Debian's redis-server started for each run (127.0.0.1, free port, --save ''"
echo "   --appendonly no), requests/s over its tests; (c) leaktop's own CPU (share of one core"
echo "   over the build, /proc/PID/stat) and VmHWM during (a).  'others': cores the rest of"
echo "   the machine used meanwhile (busy time in /proc/stat less the workload's and leaktop's)."
if [ "${#RW_CONFIGS[@]}" -gt 2 ]; then
	line="   configurations:"
	for c in "${RW_CONFIGS[@]}"; do
		opts=${c#*|}
		line+=" ${c%%|*}${opts:+ (leaktop $opts)};"
	done
	echo "${line%;}"
fi
if [[ $RW_PARTS == *" redis "* ]] && ! command -v redis-server >/dev/null; then
	fail "redis-server is missing; run 'make deps' (Debian's redis-server and redis-tools)"
	RW_PARTS=${RW_PARTS/ redis / }
fi
for ((r = 0; r < RW_ROUNDS; r++)); do
	n=${#RW_CONFIGS[@]}
	for part in build redis; do
		[[ $RW_PARTS == *" $part "* ]] || continue
		line="   round $((r + 1))/$RW_ROUNDS $part:"
		for ((k = 0; k < n; k++)); do
			c=${RW_CONFIGS[$(((k + r) % n))]}
			name=${c%%|*}
			rw_run "$part" "$name" "${c#*|}" "$r" || continue
			if [ "$part" = build ]; then
				line+=" | $name $(printf '%.1f s' "$RW_V") (cpu $(printf '%.0f' "$RW_W") s, $RW_LOOPS churn loops"
			else
				line+=" | $name $RW_V req/s (cpu $(printf '%.1f' "$RW_W") s"
			fi
			[ "$name" = untraced ] ||
				line+=", leaktop $RW_LT_CPU_PCT% of a core, VmHWM $(mib "${RW_LT_HWM:-0}"), $RW_LT_MODE"
			line+=", others $RW_OTHERS)"
		done
		echo "$line"
	done
done
echo
printf '   %-6s %-14s %28s %8s %22s %12s\n' part config "median (min..max)" "slower" "per round" "others"
for part in build redis; do
	[[ $RW_PARTS == *" $part "* ]] || continue
	read -r um _ _ < <(rw_stat "${RW_VAL[$part/untraced]:-}")
	for c in "${RW_CONFIGS[@]}"; do
		name=${c%%|*}
		k=$part/$name
		read -r m lo hi < <(rw_stat "${RW_VAL[$k]:-}")
		read -r om olo ohi < <(rw_stat "${RW_OTH[$k]:-}")
		if [ "$part" = build ]; then
			val=$(printf '%.1f s (%.1f..%.1f)' "$m" "$lo" "$hi")
		else
			val=$(printf '%.0f/s (%.0f..%.0f)' "$m" "$lo" "$hi")
		fi
		slower=- rounds=-
		if [ "$name" != untraced ]; then
			slower=$(rw_slower "$part" "$m" "$um")x
			rounds=""
			for ((r = 0; r < RW_ROUNDS; r++)); do
				rounds+="$(rw_slower "$part" "${RW_RND[$k/$r]:-}" "${RW_RND[$part/untraced/$r]:-}") "
			done
		fi
		printf '   %-6s %-14s %28s %8s %22s %12s\n' "$part" "$name" "$val" "$slower" "$rounds" \
			"$(printf '%.2f (%.2f..%.2f)' "$om" "$olo" "$ohi")"
	done
done
echo
for c in "${RW_CONFIGS[@]}"; do
	name=${c%%|*}
	[ "$name" != untraced ] || continue
	if [[ $RW_PARTS == *" build "* ]]; then
		read -r um _ _ < <(rw_stat "${RW_VAL[build/untraced]:-}")
		read -r m _ _ < <(rw_stat "${RW_VAL[build/$name]:-}")
		x=$(rw_slower build "$m" "$um")
		printf '   (a) build+churn, %s: %sx untraced (goal <= %sx): %s\n' "$name" "$x" \
			"$RW_GOAL_RATIO" "$(rw_verdict "$x" "$RW_GOAL_RATIO")"
		read -r cm _ _ < <(rw_stat "${RW_CPU[build/$name]:-}")
		read -r cu _ _ < <(rw_stat "${RW_CPU[build/untraced]:-}")
		printf '       CPU seconds of the build and churn: %.0f s, %.2fx untraced (%.0f s)\n' \
			"$cm" "$(awk -v a="$cm" -v b="$cu" 'BEGIN { print (b > 0) ? a / b : 0 }')" "$cu"
		read -r lm llo lhi < <(rw_stat "${RW_LTCPU[build/$name]:-}")
		printf '   (c) leaktop'"'"'s CPU during (a), %s: %.1f%% of a core (%.1f..%.1f; goal <= %d%%): %s\n' \
			"$name" "$lm" "$llo" "$lhi" "$RW_GOAL_CPU_PCT" "$(rw_verdict "$lm" "$RW_GOAL_CPU_PCT")"
		read -r _ hlo hhi < <(rw_stat "${RW_HWM[build/$name]:-}")
		hmib=$(awk -v b="$hhi" 'BEGIN { printf "%.1f", b / 1048576 }')
		printf '   (c) leaktop'"'"'s VmHWM during (a), %s: %s MiB at most (%s..%s; goal <= %d MiB): %s\n' \
			"$name" "$hmib" "$(mib "$hlo" | cut -d' ' -f1)" "$(mib "$hhi" | cut -d' ' -f1)" \
			"$RW_GOAL_HWM_MIB" "$(rw_verdict "$hmib" "$RW_GOAL_HWM_MIB")"
		echo "       worst collect_ms per run: $(rw_list "${RW_COLLECT[build/$name]:-}"); heap" \
		     "mode at the end: $(rw_list "${RW_MODE[build/$name]:-}"); suspects only from" \
		     "(s): $(rw_list "${RW_SWITCH[build/$name]:-}"); dropped:" \
		     "$(rw_list "${RW_DROP[build/$name]:-}")"
	fi
	if [[ $RW_PARTS == *" redis "* ]]; then
		read -r um _ _ < <(rw_stat "${RW_VAL[redis/untraced]:-}")
		read -r m _ _ < <(rw_stat "${RW_VAL[redis/$name]:-}")
		x=$(rw_slower redis "$m" "$um")
		printf '   (b) redis-benchmark, %s: %sx slower than untraced (goal <= %sx): %s\n' "$name" \
			"$x" "$RW_GOAL_RATIO" "$(rw_verdict "$x" "$RW_GOAL_RATIO")"
		echo "       leaktop's CPU per run: $(rw_list "${RW_LTCPU[redis/$name]:-}") (% of a" \
		     "core); VmHWM: $(rw_list "$(rw_mibs "${RW_HWM[redis/$name]:-}")") MiB; heap mode" \
		     "at the end: $(rw_list "${RW_MODE[redis/$name]:-}"); suspects only from (s):" \
		     "$(rw_list "${RW_SWITCH[redis/$name]:-}"); dropped: $(rw_list "${RW_DROP[redis/$name]:-}")"
	fi
done
[ "$RW_DISCARDED" -eq 0 ] || echo "   $RW_DISCARDED run(s) thrown away: other tracers appeared around them"
[ "$RW_UNQUIET" -eq 0 ] ||
	echo "   WARNING: $RW_UNQUIET run(s) measured while other tracers were around; figures suspect"
echo "   ($((SECONDS - t_start)) s)"
fi
if want_section 13; then
t_start=$SECONDS
CHECK_ROUNDS=${BENCH_CHECK_ROUNDS:-3}
CHECK_TESTS="analysis diff format lastref snapshot_read options heapmode checkgate model export metrics"
echo
echo "13. leak gate (issue 28): leaktop's pure unit tests (no sanitizer) run by sh, untraced,"
echo "   under leaktop check --fail-on all (uprobes, and --agent) and under valgrind"
echo "   --leak-check=full --trace-children=yes; $CHECK_ROUNDS round(s), interleaved; median wall"
echo "   seconds; 'extra' is the time over the untraced run, each tool's own cost"
suite=$TMP/check_suite.sh
{
	echo "cd '$ROOT' || exit 1"
	for t in $CHECK_TESTS; do
		echo "'$ROOT/build/plain/tests/unit/test_$t' >/dev/null || exit 1"
	done
} >"$suite"
targets=()
for t in $CHECK_TESTS; do targets+=("build/plain/tests/unit/test_$t"); done
if ! make -C "$ROOT" -s "${targets[@]}" >/dev/null 2>"$TMP/check_make.err"; then
	fail "cannot build the plain unit tests: $(head -c 400 "$TMP/check_make.err")"
elif ! command -v valgrind >/dev/null; then
	fail "valgrind is missing; run 'make deps'"
else
	declare -a CK_UN=() CK_LT=() CK_AG=() CK_VG=()
	# check_timed ARRAY JSON [OPTIONS]: one leaktop check of the suite, its seconds into ARRAY.
	check_timed() {
		local -n into=$1
		local json=$2 a b st
		shift 2
		a=$(date +%s.%N)
		"$LEAKTOP" check --fail-on all "$@" -j "$json" -- sh "$suite" \
			>/dev/null 2>"$TMP/check.err"
		st=$?
		b=$(date +%s.%N)
		[ "$st" = 0 ] || [ "$st" = 23 ] ||
			fail "leaktop check $* exited $st: $(tail -c 300 "$TMP/check.err")"
		into+=("$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b - a }')")
	}
	for ((r = 0; r < CHECK_ROUNDS; r++)); do
		t0=$(date +%s.%N)
		sh "$suite" >/dev/null 2>&1 || fail "the suite failed untraced"
		t1=$(date +%s.%N)
		check_timed CK_LT "$TMP/check.json"
		check_timed CK_AG "$TMP/check_agent.json" --agent
		t2=$(date +%s.%N)
		valgrind --leak-check=full --trace-children=yes sh "$suite" \
			>/dev/null 2>"$TMP/check_vg.err" || fail "the suite failed under valgrind"
		t3=$(date +%s.%N)
		CK_UN+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')")
		CK_VG+=("$(awk -v a="$t2" -v b="$t3" 'BEGIN { printf "%.2f", b - a }')")
		echo "   round $((r + 1))/$CHECK_ROUNDS: untraced ${CK_UN[-1]} s, leaktop check" \
		     "${CK_LT[-1]} s, with --agent ${CK_AG[-1]} s, valgrind ${CK_VG[-1]} s"
	done
	m_un=$(printf '%s\n' "${CK_UN[@]}" | median)
	m_lt=$(printf '%s\n' "${CK_LT[@]}" | median)
	m_ag=$(printf '%s\n' "${CK_AG[@]}" | median)
	m_vg=$(printf '%s\n' "${CK_VG[@]}" | median)
	printf '   median: untraced %s s, leaktop check %s s, with --agent %s s, valgrind %s s\n' \
		"$m_un" "$m_lt" "$m_ag" "$m_vg"
	for pair in "leaktop check:$m_lt" "leaktop check --agent:$m_ag"; do
		t=${pair##*:}
		ratio=$(awk -v a="$t" -v b="$m_vg" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')
		extra=$(awk -v a="$t" -v b="$m_vg" -v u="$m_un" \
			'BEGIN { printf "%.3f", (b - u > 0 ? (a - u) / (b - u) : 0) }')
		verdict=MET
		awk -v x="$ratio" 'BEGIN { exit !(x <= 0.10) }' || verdict=MISSED
		echo "   ${pair%:*}/valgrind: wall $ratio (goal <= 0.10: $verdict), extra $extra"
	done
	# check_totals JSON: definite, indirect, possible (bytes, objects) and processes.
	check_totals() {
		jq -r '[.processes[].totals] | [(map(.definite.bytes) | add // 0),
			(map(.definite.objects) | add // 0), (map(.indirect.bytes) | add // 0),
			(map(.indirect.objects) | add // 0), (map(.possible.bytes) | add // 0),
			(map(.possible.objects) | add // 0), length] | @tsv' "$1"
	}
	lt_tot=$(check_totals "$TMP/check.json")
	vg_tot=$(awk '/definitely lost:|indirectly lost:|possibly lost:/ {
			gsub(",", ""); k = $2; for (i = 1; i <= NF; i++) if ($i == "bytes") b[k] += $(i - 1);
			for (i = 1; i <= NF; i++) if ($i == "blocks") n[k] += $(i - 1) }
		/ERROR SUMMARY/ { p++ }
		END { printf "%d\t%d\t%d\t%d\t%d\t%d\t%d", b["definitely"], n["definitely"],
			b["indirectly"], n["indirectly"], b["possibly"], n["possibly"], p }' \
		"$TMP/check_vg.err")
	read -r a1 a2 a3 a4 a5 a6 a7 <<<"$lt_tot"
	read -r b1 b2 b3 b4 b5 b6 b7 <<<"$vg_tot"
	read -r c1 c2 c3 c4 c5 c6 c7 <<<"$(check_totals "$TMP/check_agent.json")"
	printf '   leak totals (last round)   %-24s %-24s %s\n' "leaktop check" "with --agent" \
		"valgrind"
	printf '     definitely lost          %-24s %-24s %s\n' "$a1 B in $a2 blocks" \
		"$c1 B in $c2 blocks" "$b1 B in $b2 blocks"
	printf '     indirectly lost          %-24s %-24s %s\n' "$a3 B in $a4 blocks" \
		"$c3 B in $c4 blocks" "$b3 B in $b4 blocks"
	printf '     possibly lost            %-24s %-24s %s\n' "$a5 B in $a6 blocks" \
		"$c5 B in $c6 blocks" "$b5 B in $b6 blocks"
	printf '     processes checked        %-24s %-24s %s\n' "$a7" "$c7" "$b7"
fi
echo "   ($((SECONDS - t_start)) s)"
fi

# --- 14. the in-process agent against uprobes and heaptrack, on redis (issue 27) ------------

AG_ROUNDS=${BENCH_AGENT_ROUNDS:-3}
AG_ARGS=${BENCH_AGENT_REDIS_ARGS:--n 100000 -r 100000 -c 20 -t set,get,lpush}
AG_GOAL_RATIO=1.3
AG_GOAL_OVER_HEAPTRACK=0.15
HPID=""
# NAME|how the running server is traced ("" untraced; "heaptrack"; else leaktop's options).
AG_CONFIGS=("untraced|" "uprobes|-p" "agent|--agent -p")
if command -v heaptrack >/dev/null && command -v gdb >/dev/null; then
	AG_CONFIGS+=("heaptrack|heaptrack")
fi
declare -A AG_VAL AG_RND

ag_redis_up() { [ "$(redis-cli -s "$TMP/ag/sock" PING 2>/dev/null)" = PONG ]; }

# ag_redis_start: a fresh redis-server on a Unix socket in $TMP/ag; its pid in RPID.
ag_redis_start() {
	rm -rf "$TMP/ag"
	mkdir -p "$TMP/ag"
	redis-server --port 0 --unixsocket "$TMP/ag/sock" --unixsocketperm 700 --save '' \
		--appendonly no --dir "$TMP/ag" --daemonize no --logfile "$TMP/ag/log" \
		>/dev/null 2>&1 &
	RPID=$!
	wait_for 10 ag_redis_up && return 0
	fail "redis-server did not start: $(tail -n 2 "$TMP/ag/log" 2>/dev/null)"
	ag_redis_stop
	return 1
}

ag_redis_stop() {
	[ -n "${RPID:-}" ] || return 0
	redis-cli -s "$TMP/ag/sock" SHUTDOWN NOSAVE >/dev/null 2>&1
	wait_gone "$RPID" 10 || { kill -KILL "$RPID" 2>/dev/null; wait "$RPID" 2>/dev/null; }
	RPID=""
}

# ag_trace_start NAME HOW: trace the running server ($RPID) as configured, until stopped.
ag_trace_start() {
	local name=$1 how=$2

	LPID="" HPID=""
	case $how in
	"") return 0 ;;
	heaptrack)
		(cd "$TMP/ag" && exec heaptrack -o "$TMP/ag/ht" -p "$RPID") >"$TMP/ag/ht.log" 2>&1 &
		HPID=$!
		wait_for 60 grep -qs "injection finished" "$TMP/ag/ht.log" && return 0
		fail "heaptrack -p did not attach: $(tail -n 3 "$TMP/ag/ht.log")"
		;;
	*)
		# shellcheck disable=SC2086
		"$LEAKTOP" -q -i 1 -j - $how "$RPID" >"$TMP/ag/lt.jsonl" 2>"$TMP/ag/lt.err" &
		LPID=$!
		wait_for 60 test -s "$TMP/ag/lt.jsonl" && return 0
		fail "leaktop $how wrote no snapshot: $(tail -n 3 "$TMP/ag/lt.err")"
		;;
	esac
	ag_trace_stop
	return 1
}

ag_trace_stop() {
	local rc=0

	if [ -n "$HPID" ]; then
		# TERM: a script started in the background ignores SIGINT; its EXIT trap detaches.
		kill -TERM "$HPID" 2>/dev/null
		wait_gone "$HPID" 60 || { kill -KILL "$HPID" 2>/dev/null; wait "$HPID" 2>/dev/null; }
		HPID=""
	fi
	if [ -n "$LPID" ]; then
		grep -h "leaktop:" "$TMP/ag/lt.err" 2>/dev/null | head -2 | sed 's/^/   /'
		stop_leaktop || rc=1
	fi
	return $rc
}

# ag_once NAME HOW: redis-benchmark against a fresh server traced as configured; AG_V
# (requests/s over its tests: their count over the sum of 1/rps).
ag_once() {
	local name=$1 how=$2

	ag_redis_start || return 1
	ag_trace_start "$name" "$how" || { ag_redis_stop; return 1; }
	# shellcheck disable=SC2086
	redis-benchmark -s "$TMP/ag/sock" --csv $AG_ARGS >"$TMP/ag/rb.csv" 2>"$TMP/ag/rb.err"
	ag_redis_up || fail "redis-server under $name no longer answers"
	ag_trace_stop || { ag_redis_stop; return 1; }
	ag_redis_up || fail "redis-server no longer answers after $name detached"
	ag_redis_stop
	AG_V=$(awk -F'"' 'NR > 1 && $4 > 0 { n++; inv += 1 / $4 } END { if (n) printf "%.0f", n / inv }' \
		"$TMP/ag/rb.csv")
	[ -n "$AG_V" ] && return 0
	fail "redis-benchmark under $name gave no result: $(tail -n 2 "$TMP/ag/rb.err")"
	return 1
}

if want_section 14; then
t_start=$SECONDS
echo
echo "14. the in-process agent (issue 27): redis-benchmark --csv $AG_ARGS over a Unix socket"
echo "   against Debian's redis-server (a fresh one per run), traced once it runs: untraced,"
echo "   leaktop -p (uprobes), leaktop -p --agent (injected), heaptrack -p (if installed);"
echo "   $AG_ROUNDS round(s), interleaved, the order turned each round; requests/s over the tests"
if ! command -v redis-server >/dev/null || ! command -v redis-benchmark >/dev/null; then
	fail "redis-server is missing; run 'make deps' (Debian's redis-server and redis-tools)"
else
	[ "${#AG_CONFIGS[@]}" -gt 3 ] || echo "   (heaptrack or gdb is not installed: no heaptrack runs)"
	for ((r = 0; r < AG_ROUNDS; r++)); do
		n=${#AG_CONFIGS[@]}
		line="   round $((r + 1))/$AG_ROUNDS:"
		for ((k = 0; k < n; k++)); do
			c=${AG_CONFIGS[$(((k + r) % n))]}
			name=${c%%|*}
			ag_once "$name" "${c#*|}" || continue
			AG_VAL[$name]+="$AG_V "
			AG_RND[$name/$r]=$AG_V
			line+=" | $name $AG_V req/s"
		done
		echo "$line"
	done
	echo
	printf '   %-10s %28s %8s %22s\n' config "median (min..max)" slower "per round"
	read -r um _ _ < <(rw_stat "${AG_VAL[untraced]:-}")
	declare -A AG_X
	for c in "${AG_CONFIGS[@]}"; do
		name=${c%%|*}
		read -r m lo hi < <(rw_stat "${AG_VAL[$name]:-}")
		slower=- rounds=-
		if [ "$name" != untraced ]; then
			AG_X[$name]=$(rw_slower redis "$m" "$um")
			slower=${AG_X[$name]}x
			rounds=""
			for ((r = 0; r < AG_ROUNDS; r++)); do
				rounds+="$(rw_slower redis "${AG_RND[$name/$r]:-}" "${AG_RND[untraced/$r]:-}") "
			done
		fi
		printf '   %-10s %28s %8s %22s\n' "$name" "$(printf '%.0f/s (%.0f..%.0f)' "$m" "$lo" "$hi")" \
			"$slower" "$rounds"
	done
	echo
	printf '   leaktop -p --agent: %sx untraced (goal <= %sx): %s\n' "${AG_X[agent]:-nan}" \
		"$AG_GOAL_RATIO" "$(rw_verdict "${AG_X[agent]:-nan}" "$AG_GOAL_RATIO")"
	if [ -n "${AG_X[heaptrack]:-}" ]; then
		goal=$(awk -v h="${AG_X[heaptrack]}" -v d="$AG_GOAL_OVER_HEAPTRACK" \
			'BEGIN { printf "%.2f", h + d }')
		printf '   against heaptrack -p (%sx): goal <= %sx: %s\n' "${AG_X[heaptrack]}" "$goal" \
			"$(rw_verdict "${AG_X[agent]:-nan}" "$goal")"
	fi
	printf '   leaktop -p (uprobes): %sx untraced\n' "${AG_X[uprobes]:-nan}"
fi
echo "   ($((SECONDS - t_start)) s)"
fi
[ "$UNQUIET" -eq 0 ] ||
	echo "WARNING: $UNQUIET measurement(s) ran while other tracers had uprobes on every libc or programs on the syscall tracepoints"

if [ "$FAILED" -ne 0 ]; then
	echo "bench: something failed to run; see the messages above" >&2
	exit 1
fi
exit 0
