#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# python.sh - Python frames in heap stacks: Debian's python3.11 runs tests/progs/py_leak.py,
# whose grow_cache leaks a bytes object every 20 ms and whose churn frees what it makes.
# Started by leaktop (--) and attached to when already running (-p), the flagged site's
# stack holds grow_cache with the script's file and the exact line of the leak, as a Python
# frame among the interpreter's native ones, the site is named after it, and the churn's
# site (its list comprehension, inside churn) is traced and not flagged.  A threaded program
# (tests/progs/py_threads.py) gets each thread's frames in its own sites, and the child it
# forks and execs its own.
source "$(dirname "$0")/lib.sh"

require_root

PY=/usr/bin/python3.11
PY_SRC=$PROG_SRC/py_leak.py
PY_THREADS=$PROG_SRC/py_threads.py
PYD=$E2E_TMP/python

[ -x "$PY" ] || { echo "SKIP python.sh: $PY missing (scripts/install-deps.sh installs it)"; exit 0; }

# py_line MARKER [SRC]: the line of SRC (py_leak.py) that carries "# LEAK:MARKER".
py_line() {
	grep -n "# LEAK:$1\$" "${2:-$PY_SRC}" | cut -d: -f1
}

# The heap sites of the snapshot whose stack has a Python frame named $fn, as
# [flagged, [symbol, file's base name, line, module] of that frame, site has an allocation].
py_sites() {
	jqc "$1" '[.processes[] | .sites[] | select(.kind == "heap") | . as $s |
		.stack[] | select(.lang == "python" and .symbol == $fn) |
		[$s.flagged, [.symbol, (.file | base), .line, .module], $s.allocs > 0]] | unique' \
		--arg fn "$2"
}

run_cmd() {
	mkdir -p "$PYD/cmd"
	lt_fg "$PYD/cmd/out" "$PYD/cmd/err" -b -i 0.5 -d 12 -j "$PYD/cmd/snap.json" -- \
		"$PY" "$PY_SRC"
	[ -s "$PYD/cmd/snap.json" ] ||
		fail_because "no snapshot; stderr: $(cat "$PYD/cmd/err")"
}

run_pid() {
	local pid
	mkdir -p "$PYD/pid"
	"$PY" "$PY_SRC" "$PYD/pid/ready" &
	BG_PIDS+=("$!")
	wait_file "$PYD/pid/ready" || return 1
	pid=$(pid_in "$PYD/pid/ready")
	lt_fg "$PYD/pid/out" "$PYD/pid/err" -b -i 0.5 -d 12 -j "$PYD/pid/snap.json" -p "$pid"
	signal TERM "$pid"
	[ -s "$PYD/pid/snap.json" ] ||
		fail_because "no snapshot; stderr: $(cat "$PYD/pid/err")"
}

# expect_leak_flagged SNAP: a flagged site holds grow_cache at py_leak.py's leak line.
expect_leak_flagged() {
	local want got
	want="[true,[\"grow_cache\",\"py_leak.py\",$(py_line grow),null],true]"
	got=$(py_sites "$1" grow_cache)
	jq -e --argjson w "$want" 'any(. == $w)' <<<"$got" >/dev/null ||
		fail_because "sites with grow_cache as [flagged, frame, allocated]: got $got," \
			"expected $want among them"
}

test_python_cmd_flags_leak_at_its_function_file_and_line() {
	scenario run_cmd || return 1
	expect_leak_flagged "$PYD/cmd/snap.json"
}

test_python_cmd_churn_site_traced_not_flagged() {
	scenario run_cmd || return 1
	expect_eq "sites with churn's list comprehension" \
		"[[false,[\"churn.<locals>.<listcomp>\",\"py_leak.py\",$(py_line churn),null],true]]" \
		"$(py_sites "$PYD/cmd/snap.json" 'churn.<locals>.<listcomp>')"
}

test_python_frames_sit_inside_their_evaluation_in_call_order() {
	scenario run_cmd || return 1
	# From the allocation outwards: grow_cache, then main and <module>, all run by one
	# evaluation of _PyEval_EvalFrameDefault (3.11 runs Python calls in one C frame).
	expect_eq "frames around grow_cache of the flagged site" \
		'["python:grow_cache","python:main","python:<module>","native:_PyEval_EvalFrameDefault"]' \
		"$(jqc "$PYD/cmd/snap.json" '[.processes[] | .sites[] | select(.flagged) | .stack |
			map((.lang // "native") + ":" + .symbol) | . as $f | (index("python:grow_cache")) as $i |
			select($i != null) | $f[$i:$i + 4]] | first')"
}

test_python_site_is_named_after_the_python_frame_in_report() {
	scenario run_cmd || return 1
	# The last report's leak line: "  LEAK 50.0 KiB in ... grow_cache /path/py_leak.py:15".
	expect_match "text report" "grow_cache [^ ]*/py_leak.py:$(py_line grow)" \
		"$(grep "^  LEAK .* blocks " "$PYD/cmd/out" | tail -n 1)"
}

test_python_pid_flags_leak_at_its_function_file_and_line() {
	scenario run_pid || return 1
	expect_leak_flagged "$PYD/pid/snap.json"
}

test_python_run_counts_its_python_frames() {
	scenario run_cmd || return 1
	expect_eq "python frames taken, walks failed" "[true,0]" \
		"$(jqc "$PYD/cmd/snap.json" '[.stats.python_frames > 0,
			.stats.python_walks_read_failed]')"
}

run_threads() {
	mkdir -p "$PYD/threads"
	lt_fg "$PYD/threads/out" "$PYD/threads/err" -b -i 0.5 -d 12 \
		-j "$PYD/threads/snap.json" -- "$PY" "$PY_THREADS"
	[ -s "$PYD/threads/snap.json" ] ||
		fail_because "no snapshot; stderr: $(cat "$PYD/threads/err")"
}

# The flagged heap sites' Python frames of the process whose command line ends with $end,
# as the [symbol, line] of their frames that leak (*_grow), each site's sorted.
grow_frames() {
	jqc "$PYD/threads/snap.json" '[.processes[] | select(.cmdline | endswith($tail)) |
		.sites[] | select(.flagged and .kind == "heap") | [.stack[] |
		select(.lang == "python" and (.symbol | endswith("_grow"))) | [.symbol, .line]] |
		select(length > 0) | sort] | unique' --arg tail "$1"
}

test_python_threads_frames_belong_to_the_allocating_thread() {
	scenario run_threads || return 1
	# The main thread's and the second thread's leaks are two sites, neither holding the
	# other's function.
	expect_eq "leaking Python frames of the parent's flagged sites" \
		"[[[\"main_grow\",$(py_line main "$PY_THREADS")]],[[\"thread_grow\",$(
		py_line thread "$PY_THREADS")]]]" "$(grow_frames py_threads.py)"
}

test_python_forked_and_execed_child_has_its_own_frames() {
	scenario run_threads || return 1
	expect_eq "leaking Python frames of the exec'd child's flagged sites" \
		"[[[\"child_grow\",$(py_line child "$PY_THREADS")]]]" "$(grow_frames "py_threads.py child")"
}

run_tests
