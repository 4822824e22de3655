#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# hostile_python.sh - a Python process that rewrites its own interpreter frames cannot hurt
# the Python frame walk (bpf/python.bpf.c).
#
# As nobody, four Debian python3.11 processes break their frame chain through ctypes (what a
# C extension could do; tests/progs/py_scribble.py) and allocate for ever in the broken
# frame: a frame whose `previous` is itself, a chain that goes round between two frames, a
# `previous` into unmapped memory, and a caller whose code object is made up (a name of 2^40
# characters, an unmapped file name, a line table claiming 16 MiB).  Root whole-system
# leaktop must keep each stack's Python frames within LT_PY_MAX_FRAMES (32), keep the real
# frame the allocation runs in (`victim`, at its line), count the unreadable frame among the
# failed walks, and survive (hostile_survived).

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile_lib.sh"
require_root

PY=/usr/bin/python3.11
MODES="cycle loop2 wild fake"
[ -x "$PY" ] || { echo "SKIP hostile_python.sh: $PY missing"; exit 0; }

# The attacker's stacks of process $pid as [most Python frames in one stack, has a stack
# with `victim` at the allocation's line].
py_shape() {
	jqc "$1" '[procs($pid) | .sites[] | select(.kind == "heap") | .stack |
		map(select(.lang == "python"))] |
		[(map(length) | max), any(.[]; any(.[]; .symbol == "victim" and .line == $line))]' \
		--argjson pid "$2" --argjson line "$VICTIM_LINE"
}

all_walked() {
	local m
	cp "$LT_DIR/snap.json" "$LT_DIR/seen.json" 2>/dev/null || return 1
	for m in $MODES; do
		[ "$(py_shape "$LT_DIR/seen.json" "${PIDS[$m]}" | jq -c '.[1]')" = true ] || return 1
	done
}

declare -A PIDS=()
LT_DIR="" T_ATTACK="" VICTIM_LINE=""
attack() {
	local m
	LT_DIR=$E2E_TMP/lt
	hostile_start "$LT_DIR" -r heap || return 1
	attacker_dir py || return 1
	install -m 644 "$PROG_SRC/py_scribble.py" "$ATTACKER_DIR/py_scribble.py" || return 1
	VICTIM_LINE=$(grep -n "junk.append(bytes(1000))" "$PROG_SRC/py_scribble.py" | cut -d: -f1)
	for m in $MODES; do
		# setpriv started here, not through as_attacker_bg's subshell: it execs python,
		# so the pid the cleanup ends is the attacker's own.
		setpriv --reuid="$HOSTILE_USER" --regid="$HOSTILE_GROUP" --clear-groups \
			--inh-caps=-all --bounding-set=-all -- \
			"$PY" "$ATTACKER_DIR/py_scribble.py" "$m" "$ATTACKER_DIR/$m.ready" &
		BG_PIDS+=("$!")
	done
	for m in $MODES; do
		wait_file "$ATTACKER_DIR/$m.ready" || return 1
		PIDS[$m]=$(pid_in "$ATTACKER_DIR/$m.ready")
	done
	T_ATTACK=$(now_s)
	wait_until "the broken processes' Python frames in a snapshot" all_walked || {
		fail_because "$FAIL_MSG; as [most frames, victim seen] per mode: $(for m in $MODES; do
			echo "$m $(py_shape "$LT_DIR/seen.json" "${PIDS[$m]}")"; done)"
		return 1
	}
	cp "$LT_DIR/seen.json" "$LT_DIR/final.json"
}

test_hostile_python_frames_stay_bounded_and_keep_the_real_frame() {
	local m
	scenario attack || return 1
	for m in $MODES; do
		expect_eq "$m: [most Python frames in a stack <= 32, victim at line $VICTIM_LINE]" \
			"[true,true]" "$(py_shape "$LT_DIR/final.json" "${PIDS[$m]}" |
			jq -c '[.[0] <= 32, .[1]]')" || return 1
	done
}

test_hostile_python_unreadable_frames_are_counted() {
	scenario attack || return 1
	expect_eq "python_walks_read_failed > 0" true \
		"$(jqc "$LT_DIR/final.json" '.stats.python_walks_read_failed > 0')"
}

test_hostile_python_leaktop_survives() {
	scenario attack || return 1
	hostile_survived "$LT_DIR" "$T_ATTACK" "py_scribble|[Pp]ython frame|fault|BPF"
}

run_tests
