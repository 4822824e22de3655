# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# shellcheck shell=bash
#
# lib.sh - helpers shared by the end-to-end scripts in tests/e2e (sourced, never run).
#
# A script defines functions named test_* for the behaviour they check, then calls
# run_tests: every test_* function of the script runs in the order it is written and prints
# "PASS name" or "FAIL name: why".  Assertions set the reason and return 1, so a test reads
#     expect_eq "exit status" 0 "$status" || return 1
# Several tests often look at one run of leaktop: a scenario function does the run once
# (see `scenario`) and the tests assert on the files it left.
#
# Nothing here sleeps for a fixed time to let something happen: waits poll a condition
# with a generous bound (WAIT_S, 30 s; EXIT_WAIT_S, 60 s, for a process to end, as
# detaching probes can take a while on a loaded machine) and fail, naming what they waited
# for, rather than hang.  No assertion is made on how long anything takes.
#
# E2E_FILTER=REGEX runs only the matching tests; LEAKTOP=PATH tests another binary;
# E2E_KEEP=1 keeps the temporary directory (leaktop's outputs) for a look afterwards.

set -u

E2E_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LEAKTOP=${LEAKTOP:-$E2E_ROOT/leaktop}
PROGS=${PROGS:-$E2E_ROOT/build/tests/progs}
PROG_SRC=$E2E_ROOT/tests/progs
WAIT_S=${WAIT_S:-30}
EXIT_WAIT_S=${EXIT_WAIT_S:-60}
INTERVAL=${INTERVAL:-0.2}

E2E_TMP=$(mktemp -d /tmp/leaktop-e2e.XXXXXX) || exit 1
chmod 755 "$E2E_TMP"

# nap SEC: sleep without starting a process (a `sleep` every poll would be one more short-
# lived process for a whole-system leaktop to trace): a read that times out on a FIFO
# nobody writes to.
mkfifo "$E2E_TMP/.nap" && exec 9<>"$E2E_TMP/.nap" || exit 1
nap() {
	read -r -t "$1" -u 9 _
	return 0
}
BG_PIDS=()
FAIL_MSG=""

# Is PID a live child of this script's shell?  (A pid of ours that ended may have been
# reused by someone else's process: that one is never signalled.)
our_child() {
	local stat
	{ read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
	stat=${stat##*) }
	set -- $stat
	[ "$2" = "$$" ] && [ "$1" != Z ]
}

# signal SIG PID: send SIG to PID if it is still a child of ours.
signal() {
	our_child "$2" && kill "-$1" "$2" 2>/dev/null
}

# Stop what this script started (by pid, leaktop first so it passes SIGTERM to its
# command), then remove the temporary directory.
e2e_cleanup() {
	local pid i alive
	for pid in "${BG_PIDS[@]}"; do
		signal CONT "$pid"
		signal TERM "$pid"
	done
	for i in $(seq 50); do
		alive=0
		for pid in "${BG_PIDS[@]}"; do
			our_child "$pid" && alive=1
		done
		[ "$alive" = 0 ] && break
		nap 0.1
	done
	for pid in "${BG_PIDS[@]}"; do
		signal KILL "$pid"
	done
	wait 2>/dev/null
	if [ -n "${E2E_KEEP:-}" ]; then
		echo "e2e: kept $E2E_TMP" >&2
	else
		rm -rf "$E2E_TMP"
	fi
}
trap e2e_cleanup EXIT
# Killed (the runner's timeout, Ctrl-C): still stop what was started, through the EXIT trap.
trap 'exit 143' TERM
trap 'exit 130' INT

# ---------------------------------------------------------------- verdicts and assertions

pass() { echo "PASS $1"; }
# fail NAME WHY...: one line, whatever WHY contains.
fail() {
	local name=$1
	shift
	echo "FAIL $name: $(printf '%s' "$*" | tr '\n' ' ' | cut -c1-1500)"
}

# Record why the current test fails; always returns 1.
fail_because() {
	FAIL_MSG="$*"
	return 1
}

# Run every test_* function of the calling script, in the order they are defined there
# (only those matching the extended regex in E2E_FILTER, when it is set).
run_tests() {
	local script=${BASH_SOURCE[1]} name
	for name in $(grep -o '^test_[A-Za-z0-9_]*()' "$script" | tr -d '()'); do
		[[ -z ${E2E_FILTER:-} || $name =~ $E2E_FILTER ]] || continue
		run_test "$name"
	done
}

run_test() {
	local name=$1
	FAIL_MSG=""
	if "$name"; then
		pass "$name"
	else
		fail "$name" "${FAIL_MSG:-the test returned non-zero}"
	fi
}

# Run a scenario function once per script; later callers get its cached verdict.
declare -A SCENARIO_DONE=() SCENARIO_MSG=()
scenario() {
	local fn=$1
	if [ -z "${SCENARIO_DONE[$fn]:-}" ]; then
		FAIL_MSG=""
		if "$fn"; then
			SCENARIO_DONE[$fn]=ok
		else
			SCENARIO_DONE[$fn]=failed
			SCENARIO_MSG[$fn]="scenario $fn failed: ${FAIL_MSG:-returned non-zero}"
		fi
	fi
	if [ "${SCENARIO_DONE[$fn]}" != ok ]; then
		FAIL_MSG=${SCENARIO_MSG[$fn]}
		return 1
	fi
	FAIL_MSG=""
	return 0
}

expect_eq() {
	local what=$1 want=$2 got=$3
	[ "$got" == "$want" ] || fail_because "$what: got '$got', expected '$want'"
}

expect_match() {
	local what=$1 regex=$2 got=$3
	[[ $got =~ $regex ]] || fail_because "$what: '$got' does not match /$regex/"
}

# ---------------------------------------------------------------- waiting

# wait_until DESC CMD [ARG...]: poll CMD until it succeeds, at most WAIT_S seconds.  The
# polls start quick and slow down to 0.4 s, so that checking a big whole-system snapshot
# with jq does not itself load the machine.
wait_until() {
	local desc=$1 limit=${WAIT_LIMIT:-$WAIT_S} deadline polls=0
	deadline=$((SECONDS + limit))
	shift
	while ! "$@"; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			fail_because "timed out after ${limit}s waiting for $desc"
			return 1
		fi
		polls=$((polls + 1))
		if [ "$polls" -le 10 ]; then
			nap 0.05
		elif [ "$polls" -le 30 ]; then
			nap 0.1
		else
			nap 0.4
		fi
	done
	return 0
}

wait_file() {
	wait_until "file $1 to exist" test -e "$1"
}

# wait_exit PID: wait (bounded) for a background job of this shell to end; its exit
# status goes to WAIT_STATUS.  On timeout it is killed and the wait fails.
WAIT_STATUS=""
wait_exit() {
	local pid=$1
	WAIT_STATUS=""
	if ! WAIT_LIMIT=$EXIT_WAIT_S wait_until "process $pid to exit" not_running "$pid"; then
		signal KILL "$pid"
		wait "$pid" 2>/dev/null
		return 1
	fi
	wait "$pid" 2>/dev/null
	WAIT_STATUS=$?
	return 0
}

not_running() { ! kill -0 "$1" 2>/dev/null; }

# Is PID a zombie (exited, not yet reaped)?
is_zombie() {
	local stat
	{ read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
	stat=${stat##*) }
	[ "${stat%% *}" = Z ]
}

# pid_in FILE: the pid a test program wrote to FILE.
pid_in() { tr -dc 0-9 <"$1"; }

# ---------------------------------------------------------------- running leaktop

# lt_bg OUT ERR ARG...: start leaktop in the background, stdout to OUT, stderr to ERR; its
# pid goes to LT_PID.
LT_PID=""
lt_bg() {
	local out=$1 err=$2
	shift 2
	"$LEAKTOP" "$@" >"$out" 2>"$err" &
	LT_PID=$!
	BG_PIDS+=("$LT_PID")
}

# wait_snapshot_file FILE ERR: wait for the first snapshot of the leaktop started by lt_bg
# (whose stderr is ERR); fail at once, quoting ERR, if leaktop ends first.
wait_snapshot_file() {
	local file=$1 err=$2
	wait_until "leaktop's first snapshot in $file" file_or_lt_gone "$file" || return 1
	[ -e "$file" ] ||
		fail_because "leaktop ended before writing $file; its stderr: $(cat "$err")"
}
file_or_lt_gone() { [ -e "$1" ] || ! kill -0 "$LT_PID" 2>/dev/null; }

# lt_fg OUT ERR ARG...: run leaktop to completion (at most 120 s); status in LT_STATUS.
LT_STATUS=""
lt_fg() {
	local out=$1 err=$2
	shift 2
	timeout -k 5 120 "$LEAKTOP" "$@" >"$out" 2>"$err" </dev/null
	LT_STATUS=$?
}

# ---------------------------------------------------------------- snapshots

# JSON Lines output (-j -): only complete lines count, leaktop may be writing the next.
complete_lines() {
	local n
	n=$(wc -l <"$1" 2>/dev/null) || n=0
	[ "$n" -gt 0 ] && head -n "$n" "$1"
	return 0
}

line_count() { complete_lines "$1" | wc -l; }

# last_line JSONL OUT: the last complete snapshot of a JSON Lines file, into OUT.
last_line() { complete_lines "$1" | tail -n 1 >"$2"; }

# wait_lines JSONL N: wait until the file holds at least N complete snapshots.
wait_lines() {
	wait_until "$2 snapshot(s) in $1" lines_at_least "$1" "$2"
}
lines_at_least() { [ "$(line_count "$1")" -ge "$2" ]; }

# wait_two_more JSONL: wait for two snapshots after those already there; the second was
# certainly collected after anything that happened before this call.
wait_two_more() {
	wait_lines "$1" $(($(line_count "$1") + 2))
}

# run_to_done DIR PROG [LEAKTOP OPTIONS...]: `leaktop -b -i INTERVAL OPTIONS -j - --
# PROGS/PROG DIR/dir` (snapshots in DIR/out.jsonl, stderr in DIR/err) until the program
# creates DIR/dir/done (its pid goes to DONE_PID).  Two snapshots later (the second surely
# collected after the program's last call) DIR/alive.json gets the latest; DIR/dir/quit then
# ends the program, leaktop ends with it (its exit status in WAIT_STATUS) and DIR/final.json
# gets its final snapshot.
DONE_PID=""
run_to_done() {
	local dir=$1 prog=$2
	shift 2
	mkdir -p "$dir/dir"
	lt_bg "$dir/out.jsonl" "$dir/err" -b -i "$INTERVAL" "$@" -j - -- "$PROGS/$prog" "$dir/dir"
	wait_file "$dir/dir/done" || return 1
	DONE_PID=$(pid_in "$dir/dir/done")
	wait_two_more "$dir/out.jsonl" || return 1
	last_line "$dir/out.jsonl" "$dir/alive.json"
	touch "$dir/dir/quit"
	wait_exit "$LT_PID" || return 1
	last_line "$dir/out.jsonl" "$dir/final.json"
	[ -s "$dir/final.json" ] || fail_because "leaktop wrote no snapshot; stderr: $(cat "$dir/err")"
}

# run_pid_to_done DIR PROG [VAR=VALUE...]: start PROGS/PROG DIR/dir with the variables in
# its environment (it writes DIR/dir/ready, waits for DIR/dir/go, then DIR/dir/done and
# waits for DIR/dir/quit), trace it with `leaktop -v -b -i INTERVAL -j - -p` (snapshots in
# DIR/out.jsonl, stderr in DIR/err) once it waits, give it go; two snapshots after it is
# done DIR/alive.json gets the latest.  Both stay running: the caller ends them.  The
# program's pid goes to DONE_PID (and BG_PIDS), leaktop's to LT_PID.
run_pid_to_done() {
	local dir=$1 prog=$2
	shift 2
	mkdir -p "$dir/dir"
	env "$@" "$PROGS/$prog" "$dir/dir" &
	DONE_PID=$!
	BG_PIDS+=("$DONE_PID")
	wait_file "$dir/dir/ready" || return 1
	lt_bg "$dir/out.jsonl" "$dir/err" -v -b -i "$INTERVAL" -j - -p "$DONE_PID"
	# The probes are in before the first snapshot.
	wait_lines "$dir/out.jsonl" 1 || return 1
	touch "$dir/dir/go"
	wait_file "$dir/dir/done" || return 1
	wait_two_more "$dir/out.jsonl" || return 1
	last_line "$dir/out.jsonl" "$dir/alive.json"
}

# metrics_flag PORT PID FLAG OUT: leaktop's metrics page (--listen 127.0.0.1:PORT) into OUT;
# does it set FLAG (heap_growth, oom_killed, ...) for process PID?
metrics_flag() {
	curl -s "http://127.0.0.1:$1/metrics" >"$4" 2>/dev/null &&
		grep -q "^leaktop_process_flag{pid=\"$2\",.*flag=\"$3\"} 1\$" "$4"
}

# jq definitions shared by every filter below.
JQ_DEFS='
def procs($pid): .processes[] | select(.pid == $pid);
def sites_at($sym): .sites[] | select(.kind == "heap" and .stack[0].symbol == $sym);
def nums: [.outstanding_count, .outstanding_bytes, .allocs, .frees];
def base: if type == "string" then split("/") | last else . end;
'

# jqc FILE FILTER [JQ ARGS...]: compact result of FILTER (with JQ_DEFS) on FILE.
jqc() {
	local file=$1 filter=$2
	shift 2
	jq -c "$@" "$JQ_DEFS $filter" "$file" 2>&1
}

# jqs FILE FILTER [JQ ARGS...]: FILTER applied to the array of every complete snapshot of
# a JSON Lines file.
jqs() {
	local file=$1 filter=$2
	shift 2
	complete_lines "$file" | jq -c -s "$@" "$JQ_DEFS $filter" 2>&1
}

# expect_jq DESC WANT FILE FILTER [JQ ARGS...]
expect_jq() {
	local desc=$1 want=$2 file=$3 filter=$4 got
	shift 4
	got=$(jqc "$file" "$filter" "$@")
	[ "$got" == "$want" ] || fail_because "$desc: got $got, expected $want"
}

# json_true FILE FILTER [JQ ARGS...]: does FILTER (on a snapshot file) give true?
json_true() {
	local file=$1 filter=$2
	shift 2
	[ -s "$file" ] && [ "$(jq "$@" "$JQ_DEFS $filter" "$file" 2>/dev/null)" = true ]
}

# last_line_true JSONL FILTER [JQ ARGS...]: the same on the last complete snapshot.
last_line_true() {
	local file=$1 filter=$2 got
	shift 2
	got=$(complete_lines "$file" | tail -n 1 | jq "$@" "$JQ_DEFS $filter" 2>/dev/null)
	[ "$got" = true ]
}

# expect_site SNAP PID SYMBOL COUNT BYTES ALLOCS FREES
# Exactly one heap site of process PID allocates from SYMBOL (stack[0]), with those
# outstanding count and bytes, allocs and frees.
expect_site() {
	local file=$1 pid=$2 sym=$3 want="[[$4,$5,$6,$7]]" got
	got=$(jqc "$file" '[procs($pid) | sites_at($sym) | nums]' --argjson pid "$pid" \
		--arg sym "$sym")
	[ "$got" == "$want" ] ||
		fail_because "sites of pid $pid allocating in $sym as [[count, bytes, allocs," \
			"frees]]: got $got, expected $want; the process's sites as [kind, function," \
			"count, bytes]: $(jqc "$file" '[procs($pid) | .sites[] |
				[.kind, .stack[0].symbol, .outstanding_count, .outstanding_bytes]]' \
				--argjson pid "$pid")"
}

# expect_no_site SNAP PID SYMBOL: no site of PID allocates from SYMBOL.
expect_no_site() {
	local file=$1 pid=$2 sym=$3 got
	got=$(jqc "$file" '[procs($pid) | sites_at($sym) | nums]' --argjson pid "$pid" \
		--arg sym "$sym")
	[ "$got" == "[]" ] ||
		fail_because "pid $pid should have no site allocating in $sym, got $got"
}

# leak_line SRC MARKER: the line of tests/progs/SRC that carries /* LEAK:MARKER */.
leak_line() {
	grep -n "LEAK:$2 \*/" "$PROG_SRC/$1" | cut -d: -f1
}

# expect_site_location SNAP PID SYMBOL SRC MARKER CALLER MODULE
# The site's innermost frame is SYMBOL at SRC:line-of-MARKER in a module named MODULE, and
# the next frame is CALLER.
expect_site_location() {
	local file=$1 pid=$2 sym=$3 src=$4 marker=$5 caller=$6 module=$7 line want got
	line=$(leak_line "$src" "$marker")
	[ -n "$line" ] || fail_because "no LEAK:$marker marker in $src" || return 1
	want="[{\"symbol\":\"$sym\",\"file\":\"$src\",\"line\":$line,\"module\":\"$module\",\"caller\":\"$caller\"}]"
	got=$(jqc "$file" '[procs($pid) | sites_at($sym) | .stack |
		{symbol: .[0].symbol, file: (.[0].file | base), line: .[0].line,
		 module: (.[0].module | base), caller: .[1].symbol}]' \
		--argjson pid "$pid" --arg sym "$sym")
	[ "$got" == "$want" ] || fail_because "location of the $sym site: got $got, expected $want"
}

# expect_no_drops FILE [jsonl]: nothing was lost for everyone in the snapshot (or every
# snapshot): stats.dropped is 0 but for records refused to a process over its share of a map
# (stats.drops.*_share).  Those land on the process that holds too much, and in a
# whole-system run that can be any process of the host, the test's own jq parsing a big
# snapshot among them (half a million live blocks); a test asserts its own processes' exact
# counts (or their processes[].drops) for that.
JQ_SHARED_DROPS='.stats.dropped - ([.stats.drops | to_entries[] |
	select(.key | endswith("_share")) | .value] | add // 0)'
expect_no_drops() {
	local file=$1 got
	if [ "${2:-}" = jsonl ]; then
		got=$(jqs "$file" "[.[] | $JQ_SHARED_DROPS] | unique")
		[ "$got" == "[0]" ] || fail_because "stats.dropped (less share drops) over all" \
			"snapshots: $got, expected only 0; drops: $(jqs "$file" '.[-1].stats.drops')"
	else
		got=$(jqc "$file" "$JQ_SHARED_DROPS")
		[ "$got" == 0 ] || fail_because "stats.dropped (less share drops) is $got," \
			"expected 0; drops: $(jqc "$file" '.stats.drops')"
	fi
}

# ---------------------------------------------------------------- ports

# free_port: a TCP port nothing listens on.
free_port() {
	local p
	for _ in $(seq 100); do
		p=$((20000 + RANDOM % 30000))
		[ -z "$(ss -Htln "sport = :$p")" ] && { echo "$p"; return 0; }
	done
	return 1
}

# prom_and_leaktop_ports: two different free ports, into PROM_PORT and LT_PORT.
PROM_PORT="" LT_PORT=""
prom_and_leaktop_ports() {
	PROM_PORT=$(free_port) || return 1
	LT_PORT=$(free_port) || return 1
	while [ "$LT_PORT" = "$PROM_PORT" ]; do LT_PORT=$(free_port) || return 1; done
}

# ---------------------------------------------------------------- memory cgroups

# make_cgroup NAME: a memory cgroup limited to LIMIT_BYTES, without swap (v2, else v1); its
# path in CG, remembered in CGROUPS for remove_cgroups.
CG=""
CGROUPS=()
make_cgroup() {
	local name=leaktop-e2e-$1-$$
	if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
		grep -qw memory /sys/fs/cgroup/cgroup.subtree_control ||
			echo +memory >/sys/fs/cgroup/cgroup.subtree_control || return 1
		CG=/sys/fs/cgroup/$name
		mkdir "$CG" || return 1
		CGROUPS+=("$CG")
		echo "$LIMIT_BYTES" >"$CG/memory.max" || return 1
		[ ! -e "$CG/memory.swap.max" ] || echo 0 >"$CG/memory.swap.max" || return 1
	else
		[ -d /sys/fs/cgroup/memory ] ||
			fail_because "no memory cgroup controller (v2 or v1) is mounted" || return 1
		CG=/sys/fs/cgroup/memory/$name
		mkdir "$CG" || return 1
		CGROUPS+=("$CG")
		echo "$LIMIT_BYTES" >"$CG/memory.limit_in_bytes" || return 1
		[ ! -e "$CG/memory.memsw.limit_in_bytes" ] ||
			echo "$LIMIT_BYTES" >"$CG/memory.memsw.limit_in_bytes" || return 1
	fi
}

# remove_cgroups: remove every cgroup make_cgroup made; a process still inside (a failed
# run) is killed first, since rmdir needs it empty.
remove_cgroups() {
	local cg
	for cg in "${CGROUPS[@]}"; do
		if [ -r "$cg/cgroup.procs" ]; then
			xargs -r kill -KILL <"$cg/cgroup.procs" 2>/dev/null
		fi
		for _ in $(seq 50); do
			rmdir "$cg" 2>/dev/null && break
			nap 0.1
		done
	done
}

# ---------------------------------------------------------------- breakpoints
#
# Whether a process traps on a probe does not have to be taken from leaktop's counters: a
# uprobe is a breakpoint instruction (int3, 0xcc) the kernel writes into the probed text of
# each process it applies to.  The tests read it there (reading /proc/PID/mem; nothing is
# written).

# probed_at ERR FN: "PATH OFFSET" of the first library where leaktop -v (stderr in ERR)
# said it probes FN ("leaktop: PATH: FN at +0xOFFSET ..."); empty if it said nothing.
probed_at() {
	sed -n "s/^leaktop: \(.*\): $2 at +0x\([0-9a-f]*\) .*/\1 \2/p" "$1" | head -n 1
}

# text_byte PID PATH OFFSET: the byte (two hex digits) at file offset OFFSET (hex) of PATH
# in the memory of PID, "cc" where a breakpoint is; "none" if PID does not map PATH there.
text_byte() {
	python3 - "$@" <<'PY' 2>/dev/null || echo "unreadable"
import sys
pid, path, off = sys.argv[1], sys.argv[2], int(sys.argv[3], 16)
for line in open(f"/proc/{pid}/maps"):
    f = line.split(None, 5)
    if len(f) < 6 or f[5].rstrip("\n") != path:
        continue
    lo, hi = (int(x, 16) for x in f[0].split("-"))
    start = int(f[2], 16)
    if start <= off < start + hi - lo:
        with open(f"/proc/{pid}/mem", "rb") as mem:
            mem.seek(lo + off - start)
            print("%02x" % mem.read(1)[0])
        break
else:
    print("none")
PY
}

# stderr_lines FILE: number of lines leaktop wrote to stderr.
stderr_lines() { wc -l <"$1"; }

# require_root: the suite loads BPF programs.
require_root() {
	if [ "$(id -u)" != 0 ]; then
		echo "FAIL $(basename "$0"): must run as root (it loads BPF programs)"
		exit 1
	fi
}

# require_built: leaktop and the test programs must exist (make test builds them).
# watchpoints_fire: do hardware watchpoints fire on this machine (many virtual machines
# open them and never count)?  build/tests/progs/hwbp_fires runs leaktop's self-test; the
# answer is kept for the script.
watchpoints_fire() {
	if [ -z "${WATCHPOINTS_FIRE:-}" ]; then
		WATCHPOINTS_FIRE=$("$PROGS/hwbp_fires") || WATCHPOINTS_FIRE=error
	fi
	[ "$WATCHPOINTS_FIRE" = yes ]
}

require_built() {
	local p
	[ -x "$LEAKTOP" ] || { echo "FAIL $(basename "$0"): $LEAKTOP is not built"; exit 1; }
	for p in "$@"; do
		[ -x "$PROGS/$p" ] ||
			{ echo "FAIL $(basename "$0"): $PROGS/$p is not built"; exit 1; }
	done
}

# last_entry JSONL PID OUT [SYMBOL]: the last appearance, over every snapshot of a JSON
# Lines file, of process PID (of its image with a site allocating in SYMBOL, if given),
# written to OUT as a one-process snapshot ({"processes": [entry]}; [] if none), so the
# site helpers above apply to it.  Exited images are reported once and then dropped, so
# the final snapshot may no longer hold them.
last_entry() {
	local file=$1 pid=$2 out=$3 sym=${4:-}
	jqs "$file" '{processes: [[.[] | .processes[] | select(.pid == $pid and
		($sym == "" or any(.sites[]; .stack[0].symbol == $sym)))] | last // empty]}' \
		--argjson pid "$pid" --arg sym "$sym" >"$out"
}

# expect_no_drops_anywhere: every snapshot this script's runs wrote (*.json, *.jsonl under
# E2E_TMP) has stats.dropped == 0; the failure lists the files and their worst value.
expect_no_drops_anywhere() {
	local f got bad="" n=0
	while IFS= read -r f; do
		got=$(complete_lines "$f" | jq -s "[.[] | select(.stats.dropped? != null) |
			$JQ_SHARED_DROPS] | max // 0" \
			2>/dev/null) || continue
		n=$((n + 1))
		[ "${got:-0}" = 0 ] || bad="$bad ${f#"$E2E_TMP"/}: $got;"
	done < <(find "$E2E_TMP" -type f \( -name '*.json' -o -name '*.jsonl' \) \
		-not -path '*/system_busy/*' | sort)	# see modes.sh: lost returns under load
	[ "$n" -gt 0 ] || fail_because "no snapshot found under $E2E_TMP" || return 1
	[ -z "$bad" ] || fail_because "snapshots with stats.dropped > 0:$bad"
}
