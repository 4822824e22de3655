#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# check_parity.sh - `leaktop check` classifies every block of memcheck's leak scenarios
# (tests/progs/check_parity.cc: interior pointers, cycles, trees, zero-size blocks, C++
# new[], globals, TLS, a blocked thread's stack) as `valgrind --leak-check=full` does on the
# same binary, in the same test: the lost blocks per allocating function (the innermost
# frame named alloc_*, or glibc's allocate_dtv for the thread's TLS vector, which only an
# interior pointer reaches) and kind (definite, indirect, possible), equal.  Pointers held only in registers when _exit is
# called (%r15, %xmm0) are references for leaktop (it reads every thread's general-purpose
# and vector registers at the exit stop); memcheck's final check does not count the exiting
# thread's registers, so there the test asserts leaktop's answer and that valgrind differs.
# The same again with --agent (the heap traced by the in-process agent).
source "$(dirname "$0")/lib.sh"

require_root
require_built check_parity
command -v valgrind >/dev/null || { echo "FAIL $(basename "$0"): valgrind is not installed"; exit 1; }

T=$E2E_TMP/check_parity
mkdir -p "$T"
REG_ONLY='alloc_in_register|alloc_in_xmm0'

# Lines "KIND FUNCTION BLOCKS", sorted, of valgrind's loss records.
valgrind_losses() {
	valgrind --leak-check=full --show-leak-kinds=definite,indirect,possible \
		"$PROGS/check_parity" 2>&1 | awk '
		/are (definitely|indirectly|possibly) lost in loss record/ {
			for (i = 1; i <= NF; i++) if ($i == "blocks") n = $(i - 1)
			k = /definitely/ ? "definite" : /indirectly/ ? "indirect" : "possible"
			pending = 1
			next
		}
		pending && /by 0x[0-9A-F]+: (alloc_|allocate_dtv)/ {
			sub(/.*: /, ""); sub(/ .*/, ""); total[k " " $0] += n; pending = 0
		}
		END { for (x in total) print x, total[x] }' | sort
}

# The same from leaktop check's JSON.
leaktop_losses() {
	jq -r '.processes[].findings[] | select(.kind == "definite" or .kind == "indirect" or
		.kind == "possible") | [.kind, ([.frames[].symbol // "" |
		select(test("^(alloc_|allocate_dtv)"))][0] // "?"), .objects] | @tsv' "$1" |
		tr '\t' ' ' | awk '{ t[$1 " " $2] += $3 } END { for (x in t) print x, t[x] }' | sort
}

# leaktop_check NAME [OPTIONS...]: leaktop check of the program into $T/NAME.json, and its
# losses into $T/NAME.
leaktop_check() {
	local name=$1
	shift
	"$LEAKTOP" check --fail-on all "$@" -j "$T/$name.json" -- "$PROGS/check_parity" \
		>/dev/null 2>"$T/$name.err" &
	wait_exit $! || return 1
	expect_eq "leaktop check's status (stderr: $(cat "$T/$name.err"))" 23 "$WAIT_STATUS" ||
		return 1
	leaktop_losses "$T/$name.json" >"$T/$name"
}

valgrind_run() {
	valgrind_losses >"$T/valgrind" || return 1
	[ -s "$T/valgrind" ] || fail_because "valgrind reported no loss record"
}

parity_run() {
	scenario valgrind_run || return 1
	leaktop_check leaktop
}

# The same with the agent (--agent): its block table is read instead of the BPF map, and its
# channel, which holds every block's address, is no root.
parity_agent_run() {
	scenario valgrind_run || return 1
	leaktop_check agent --agent
}

# expect_parity NAME: leaktop's losses in $T/NAME are valgrind's.
expect_parity() {
	local want got
	want=$(grep -Ev " ($REG_ONLY) " "$T/valgrind")
	got=$(grep -Ev " ($REG_ONLY) " "$T/$1")
	expect_eq "lost blocks as KIND FUNCTION COUNT (valgrind, then leaktop)" "$want" "$got" ||
		return 1
	# The scenarios are all there: a comparison of two empty lists proves nothing.
	expect_eq "kinds seen" "definite indirect possible" \
		"$(awk '{print $1}' "$T/$1" | sort -u | tr '\n' ' ' | sed 's/ $//')"
}

test_every_block_is_classified_as_memcheck_does() {
	scenario parity_run || return 1
	expect_parity leaktop
}

test_every_block_is_classified_as_memcheck_does_with_the_agent() {
	scenario parity_agent_run || return 1
	expect_parity agent || return 1
	expect_jq "the agent traced it: no descriptor of its own is reported" '[true,[]]' \
		"$T/agent.json" '[.processes[0].scanned, [.processes[].findings[] |
		select(.kind == "fd")]]'
}

test_pointers_only_in_registers_at_exit_are_references() {
	scenario parity_run || return 1
	expect_eq "leaktop's findings for blocks held in %r15 and %xmm0" "" \
		"$(grep -E " ($REG_ONLY) " "$T/leaktop")" || return 1
	# What memcheck says of them (its final check skips the exiting thread's registers).
	expect_eq "valgrind's" "definite alloc_in_register 1
definite alloc_in_xmm0 1" "$(grep -E " ($REG_ONLY) " "$T/valgrind")"
}

test_process_was_scanned_with_its_threads() {
	scenario parity_run || return 1
	expect_jq "scanned, no scan error" '[true,null]' "$T/leaktop.json" \
		'[.processes[0].scanned, .processes[0].scan_error]'
}

run_tests
