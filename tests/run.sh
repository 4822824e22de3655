#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# run.sh - the test runner behind `make test` (which builds everything first).
#
# Runs the layer check (tests/check_layers.sh), every unit test binary build/asan/tests/unit/test_* (built with AddressSanitizer and
# UndefinedBehaviorSanitizer: a sanitizer report ends the binary with a FAIL line and a
# non-zero status), then every end-to-end script tests/e2e/*.sh (lib.sh and *_lib.sh are
# helpers they source, not scripts).  Each prints one line per test, "PASS name" or "FAIL name: why";
# this script passes those lines through, counts them, and ends with exactly one line
# "N passed, M failed".  A unit binary or script that crashes, times out or exits non-zero
# without printing a FAIL line counts as one failure named after it.  Exit status: 0 when
# nothing failed, 1 otherwise.
#
# Must run as root from anywhere (it works from the repository root).

set -u
shopt -s lastpipe nullglob

cd "$(dirname "$0")/.." || exit 1

if [ "$(id -u)" != 0 ]; then
	echo "tests/run.sh: must run as root: the end-to-end tests load BPF programs (try: sudo make test)"
	exit 1
fi

UNIT_TIMEOUT=${UNIT_TIMEOUT:-60}
E2E_TIMEOUT=${E2E_TIMEOUT:-420}
passed=0
failed=0

# run_one NAME TIMEOUT CMD...: run CMD, pass its PASS/FAIL lines through and count them.
run_one() {
	local name=$1 limit=$2 line status fails=0 results=0
	shift 2
	# (-k: a script gets 30 s after SIGTERM to stop the leaktop and programs it started)
	timeout -k 30 "$limit" "$@" 2>&1 </dev/null | while IFS= read -r line; do
		case $line in
		PASS\ *)
			passed=$((passed + 1))
			results=$((results + 1))
			;;
		FAIL\ *)
			failed=$((failed + 1))
			fails=$((fails + 1))
			results=$((results + 1))
			;;
		esac
		printf '%s\n' "$line"
	done
	status=${PIPESTATUS[0]}
	if [ "$status" = 124 ] || [ "$status" = 137 ]; then
		echo "FAIL $name: timed out after ${limit}s (or was killed)"
		failed=$((failed + 1))
	elif [ "$status" != 0 ] && [ "$fails" = 0 ]; then
		echo "FAIL $name: exited with status $status without reporting a failure"
		failed=$((failed + 1))
	elif [ "$results" = 0 ]; then
		echo "FAIL $name: reported no test at all"
		failed=$((failed + 1))
	fi
}

# The layout's layer rules (and a check that the checker catches one planted violation of
# each kind).
run_one tests/check_layers.sh "$UNIT_TIMEOUT" bash tests/check_layers.sh

for bin in build/asan/tests/unit/test_*; do
	case $bin in
	*.*) continue ;;	# .d, .o and the like
	esac
	[ -f "$bin" ] && [ -x "$bin" ] || continue
	run_one "$bin" "$UNIT_TIMEOUT" "$bin"
done

for script in tests/e2e/*.sh; do
	case $(basename "$script") in
	lib.sh | *_lib.sh) continue ;;	# helpers sourced by the scripts, not scripts
	esac
	t0=$SECONDS
	run_one "$script" "$E2E_TIMEOUT" bash "$script"
	# How long each script took, against its limit: one that creeps towards it shows here
	# before it fails on a slower machine.
	echo "# $script took $((SECONDS - t0)) s (limit ${E2E_TIMEOUT} s)"
done

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
