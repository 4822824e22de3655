#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# symbols.sh - symbols a user can act on, in `leaktop -b -j FILE -- CMD` mode.
#
# tests/progs/stripped_leak is stripped of every symbol table and has no debug file; its
# stacks also go through Debian's jansson (no .symtab, its -dbgsym package not installed).
# Each such module is said once in the batch report and listed in the snapshot's
# symbols_missing with its build id, its package (none for the program) and the debug
# package that would name its functions; the unnamed frames stay null.
# tests/progs/minidebug_leak is stripped but keeps MiniDebugInfo (.gnu_debugdata): its
# leaking static function is named from it, and it is not said to miss anything.

. "$(dirname "$0")/lib.sh"
require_root
require_built stripped_leak minidebug_leak

SL=$E2E_TMP/stripped
MD=$E2E_TMP/minidebug
JANSSON=/usr/lib/x86_64-linux-gnu/libjansson.so.4.14.0

build_id() { readelf -n "$1" | awk '/Build ID/ { print $3; exit }'; }

run_stripped() {
	mkdir -p "$SL"
	lt_fg "$SL/out" "$SL/err" -b -i "$INTERVAL" -j "$SL/final.json" -- \
		"$PROGS/stripped_leak" 15
	expect_eq "leaktop's exit status (stderr: $(cat "$SL/err"))" 0 "$LT_STATUS" || return 1
	[ -s "$SL/final.json" ] || fail_because "no snapshot; stderr: $(cat "$SL/err")"
}

run_minidebug() {
	mkdir -p "$MD"
	lt_fg "$MD/out" "$MD/err" -b -i "$INTERVAL" -j "$MD/final.json" -- \
		"$PROGS/minidebug_leak" 15
	expect_eq "leaktop's exit status (stderr: $(cat "$MD/err"))" 0 "$LT_STATUS" || return 1
	[ -s "$MD/final.json" ] || fail_because "no snapshot; stderr: $(cat "$MD/err")"
}

# missing_entry FILE MODULE: that module's symbols_missing entry, compact ("" if none).
missing_entry() {
	jqc "$1" '.symbols_missing[] | select(.module == $m)' --arg m "$2"
}

# expect_said_once FILE TEXT: TEXT is on exactly one line of FILE.
expect_said_once() {
	local n
	n=$(grep -cF -- "$2" "$1")
	expect_eq "lines of the batch report saying '$2'" 1 "$n"
}

test_symbols_hint_says_no_package_owns_stripped_program_once_with_build_id() {
	scenario run_stripped || return 1
	local prog id hint
	prog=$(realpath "$PROGS/stripped_leak")
	id=$(build_id "$prog")
	hint="symbols missing for $prog (build-id $id): no installed package owns it, so no debug package is known; rebuild it unstripped, or install its debug file as /usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
	expect_jq "the program's symbols_missing entry" \
		"$(jq -nc --arg m "$prog" --arg id "$id" --arg h "$hint" \
			'{module: $m, build_id: $id, package_lookup: "not_owned", package: null,
			  source_package: null, debug_package: null, hint: $h}')" \
		"$SL/final.json" '.symbols_missing[] | select(.module == $m)' --arg m "$prog" ||
		return 1
	expect_said_once "$SL/out" "$hint"
}

test_symbols_hint_names_debug_package_once_for_debian_library() {
	scenario run_stripped || return 1
	local id hint
	id=$(build_id "$JANSSON")
	if [ -e "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ]; then
		# Its debug symbols are installed here: nothing to say about it.
		expect_eq "jansson's entry (its debug file is installed)" "" \
			"$(missing_entry "$SL/final.json" "$JANSSON")"
		return
	fi
	hint="symbols missing for $JANSSON (build-id $id): apt install libjansson4-dbgsym (from the debian-debug archive)"
	expect_jq "jansson's symbols_missing entry" \
		"$(jq -nc --arg m "$JANSSON" --arg id "$id" --arg h "$hint" \
			'{module: $m, build_id: $id, package_lookup: "owned",
			  package: "libjansson4:amd64", source_package: "jansson",
			  debug_package: "libjansson4-dbgsym", hint: $h}')" \
		"$SL/final.json" '.symbols_missing[] | select(.module == $m)' --arg m "$JANSSON" ||
		return 1
	expect_said_once "$SL/out" "$hint"
}

test_stripped_program_frames_stay_null() {
	scenario run_stripped || return 1
	local prog
	prog=$(realpath "$PROGS/stripped_leak")
	expect_jq "innermost frames of the program's 48-byte leak as [symbol, module]" \
		"$(jq -nc --arg m "$prog" '[[null, $m]]')" "$SL/final.json" \
		'[.processes[].sites[] | select(.kind == "heap" and .outstanding_bytes == 720) |
		  [.stack[0].symbol, .stack[0].module]]'
}

test_report_of_saved_snapshot_prints_each_symbols_hint_once() {
	scenario run_stripped || return 1
	local hint n
	"$LEAKTOP" report "$SL/final.json" >"$SL/report" 2>"$SL/report.err" ||
		{ fail_because "leaktop report failed: $(cat "$SL/report.err")"; return 1; }
	n=$(jq '.symbols_missing | length' "$SL/final.json")
	expect_eq "symbols missing lines in the report" "$n" \
		"$(grep -c '^symbols missing for ' "$SL/report")" || return 1
	for hint in $(jq -r '.symbols_missing[].hint | @base64' "$SL/final.json"); do
		expect_said_once "$SL/report" "$(printf '%s' "$hint" | base64 -d)" || return 1
	done
}

test_minidebuginfo_names_leaking_function() {
	scenario run_minidebug || return 1
	local pid
	pid=$(jqc "$MD/final.json" '.processes[] | select(.comm == "minidebug_leak") | .pid')
	expect_site "$MD/final.json" "$pid" leak_in_minidebug 15 600 15 0
}

test_minidebuginfo_module_is_not_said_missing() {
	scenario run_minidebug || return 1
	local prog
	prog=$(realpath "$PROGS/minidebug_leak")
	expect_eq "the program's symbols_missing entry" "" \
		"$(missing_entry "$MD/final.json" "$prog")" || return 1
	expect_eq "batch report lines about it" 0 \
		"$(grep -cF "symbols missing for $prog " "$MD/out")"
}

run_tests
