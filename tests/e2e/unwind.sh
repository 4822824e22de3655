#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# unwind.sh - stacks through code that keeps no frame pointers, unwound with the binaries'
# call frame information (.eh_frame; issue 14), in `leaktop -- CMD` mode.
#
# Debian builds its own binaries (libc, libstdc++, python3.11) without frame pointers, so a
# frame-pointer walk loses the frames above them: the function that called strdup() or
# `new` is skipped, and a stack through python3.11 ends after one frame.  leaktop unwinds
# with .eh_frame instead (`--unwind cfi`, the default; `--unwind fp` is the frame-pointer
# walk), and reports its work in stats.unwind_* (unwind_cfi_frames, unwind_fp_frames,
# unwind_no_table, unwind_tables, unwind_rows, unwind_table_bytes, unwind_rows_full).
#
# The programs (tests/progs/, their numbers mirrored below):
#   cxx_new.cc       5 x new Node (48 B) from leak_new(), 3 x new char[200] from
#                    leak_new_array(), both called from main (C++ functions are named
#                    demangled, with their parameters: "leak_new()", "operator new(unsigned
#                    long)")
#   strdup_leak.c    4 x strdup("leaktop-cfi") (12 B) from leak_strdup(), called from main
#   unwind_chain.c   built -O2 -fomit-frame-pointer (unwind_chain) and, the same source,
#                    -O2 -fno-omit-frame-pointer (unwind_chain_fp): 5 x malloc(72) four calls
#                    deep (main -> level1 -> level2 -> level3 -> level4), and fd and mmap
#                    sites (open x 3, socket x 2, pipe x 1, dup x 2, mmap 64 KiB x 2) each
#                    from a function called by make_resources(), called from main
#   /usr/bin/python3.11 (Debian's, with python3.11-dbg's symbols; not the `python3` on
#                    PATH, which may be another build) growing a list of bytearrays
#
# Stacks go on past main (__libc_start_call_main, __libc_start_main, _start): the tests
# compare the frames up to and including main, never the tail.

. "$(dirname "$0")/lib.sh"
require_root
require_built cxx_new strdup_leak unwind_chain unwind_chain_fp

PYTHON311=${PYTHON311:-/usr/bin/python3.11}
UW=$E2E_TMP/unwind

# jq definitions of this script, used with the helpers of lib.sh (jqc, expect_jq).
UNWIND_DEFS='
def frames: [.stack[] | .symbol // .addr];
def upto_main: frames | index("main") as $i | if $i == null then . else .[0:$i + 1] end;
def counts: if .kind == "fd" then [.outstanding_count, .allocs, .frees] else nums end;
def site_list: [.sites[] | [.kind, counts, upto_main]];
def new_frame: type == "string" and startswith("operator new");
'

# uj FILE FILTER [JQ ARGS...]: jqc with this script's definitions too.
uj() {
	local file=$1 filter=$2
	shift 2
	jqc "$file" "$UNWIND_DEFS $filter" "$@"
}

# site_list SNAP PID: every site of PID as [kind, counts, frames up to main], for failure
# messages.
site_list() {
	uj "$1" '[procs($pid) | site_list][0]' --argjson pid "$2"
}

# expect_stack SNAP PID KIND SYMBOL COUNTS FRAMES
# Exactly one KIND site of PID begins at SYMBOL (stack[0]); its counts ([outstanding_count,
# outstanding_bytes, allocs, frees], or for fd sites [outstanding_count, allocs, frees]) are
# COUNTS and its frames up to main are FRAMES (JSON arrays).
expect_stack() {
	local file=$1 pid=$2 kind=$3 sym=$4 want="[[$5,$6]]" got
	got=$(uj "$file" '[procs($pid) | .sites[] |
		select(.kind == $kind and .stack[0].symbol == $sym) | [counts, upto_main]]' \
		--argjson pid "$pid" --arg kind "$kind" --arg sym "$sym")
	[ "$got" == "$want" ] ||
		fail_because "$kind sites of pid $pid beginning at $sym as [[counts, frames up to" \
			"main]]: got $got, expected $want; the process's sites as [kind, counts," \
			"frames up to main]: $(site_list "$file" "$pid")"
}

# expect_frame_at SNAP PID KIND SYMBOL N FUNCTION SRC MARKER MODULE
# Frame N of the KIND site beginning at SYMBOL is FUNCTION at SRC:line-of-MARKER in a
# module named MODULE (the call's own line: the frame is on the call, not after it).
expect_frame_at() {
	local file=$1 pid=$2 kind=$3 sym=$4 n=$5 fn=$6 src=$7 marker=$8 module=$9 line want got
	line=$(leak_line "$src" "$marker")
	[ -n "$line" ] || fail_because "no LEAK:$marker marker in $src" || return 1
	want="[{\"symbol\":\"$fn\",\"file\":\"$src\",\"line\":$line,\"module\":\"$module\"}]"
	got=$(uj "$file" '[procs($pid) | .sites[] |
		select(.kind == $kind and .stack[0].symbol == $sym) | .stack[$n] |
		{symbol, file: (.file | base), line, module: (.module | base)}]' \
		--argjson pid "$pid" --arg kind "$kind" --arg sym "$sym" --argjson n "$n")
	[ "$got" == "$want" ] ||
		fail_because "frame $n of the $kind site beginning at $sym: got $got, expected" \
			"$want; the process's sites as [kind, counts, frames up to main]:" \
			"$(site_list "$file" "$pid")"
}

# run_prog NAME PROG [LEAKTOP OPTIONS...]: run_to_done into $UW/NAME, except that a leaktop
# that ends before PROG is done (an option it refuses) fails at once, quoting its stderr.
# The program's pid goes to RUN_PID.
RUN_PID=""
run_prog() {
	local d=$UW/$1 prog=$2
	shift 2
	mkdir -p "$d/dir"
	lt_bg "$d/out.jsonl" "$d/err" -b -i "$INTERVAL" "$@" -j - -- "$PROGS/$prog" "$d/dir"
	wait_until "$prog to leak (or leaktop to end)" done_or_lt_gone "$d/dir/done" || return 1
	if [ ! -e "$d/dir/done" ]; then
		wait "$LT_PID" 2>/dev/null
		fail_because "leaktop $* ended (status $?) before $prog was done; its stderr:" \
			"$(cat "$d/err")"
		return 1
	fi
	RUN_PID=$(pid_in "$d/dir/done")
	wait_two_more "$d/out.jsonl" || return 1
	last_line "$d/out.jsonl" "$d/alive.json"
	touch "$d/dir/quit"
	wait_exit "$LT_PID" || return 1
	expect_eq "leaktop's exit status (stderr: $(cat "$d/err"))" 0 "$WAIT_STATUS" || return 1
	[ -s "$d/alive.json" ] || fail_because "leaktop wrote no snapshot; stderr: $(cat "$d/err")"
}
done_or_lt_gone() { [ -e "$1" ] || ! kill -0 "$LT_PID" 2>/dev/null; }

# ------------------------------------------------------------ C++: operator new

CXX_PID=""
run_cxx() {
	run_prog cxx cxx_new -r heap || return 1
	CXX_PID=$RUN_PID
}
cxx() { scenario run_cxx; }

# cxx_sites FILTER: FILTER applied to the array of the program's heap sites that begin at
# operator new or new[], each as {counts, lead: the leading operator new/new[] frames,
# rest: the frames after them up to main, frame: the first frame after them as {symbol,
# file, line, module}}.
cxx_sites() {
	uj "$UW/cxx/alive.json" '[procs($pid) | .sites[] |
		select(.kind == "heap" and (.stack[0].symbol | new_frame)) | . as $s | upto_main |
		(map(new_frame) | index(false) // length) as $i |
		{counts: ($s | counts), lead: .[0:$i], rest: .[$i:],
		 frame: ($s.stack[$i] // {} | {symbol, file: (.file | base), line,
					      module: (.module | base)})}] | '"$1" \
		--argjson pid "$CXX_PID"
}

# expect_cxx DESC WANT FILTER: cxx_sites FILTER gives WANT.  (In DESC, "rest" is the frames
# after the leading operator new/new[] ones, up to main.)
expect_cxx() {
	local got
	got=$(cxx_sites "$3")
	[ "$got" == "$2" ] ||
		fail_because "$1: got $got, expected $2; the process's sites as [kind, counts," \
			"frames up to main]: $(site_list "$UW/cxx/alive.json" "$CXX_PID")"
}

test_unwind_cxx_new_names_the_function_above_operator_new() {
	cxx || return 1
	expect_cxx "heap sites at operator new then leak_new as [[counts, leading new frames, rest]]" \
		'[[[5,240,5,0],["operator new(unsigned long)"],["leak_new()","main"]]]' \
		'[.[] | select(.rest[0] == "leak_new()") | [.counts, .lead, .rest]]'
}

test_unwind_cxx_new_array_names_the_function_above_operator_new_array() {
	cxx || return 1
	# libstdc++'s operator new[] may tail-call operator new (GCC 12's jumps to it): the
	# stack begins with operator new[], operator new or both, then leak_new_array.
	expect_cxx "other sites at new as [[counts, leading frames all new/new[], rest]]" \
		'[[[3,600,3,0],true,["leak_new_array()","main"]]]' \
		'[.[] | select(.rest[0] != "leak_new()") | [.counts, (.lead | length > 0 and
		  all(IN("operator new(unsigned long)", "operator new[](unsigned long)"))), .rest]]'
}

test_unwind_cxx_caller_frames_are_on_the_new_expression_lines() {
	local want
	cxx || return 1
	want="[{\"symbol\":\"leak_new()\",\"file\":\"cxx_new.cc\",\"line\":$(leak_line cxx_new.cc new),"
	want+="\"module\":\"cxx_new\"},{\"symbol\":\"leak_new_array()\",\"file\":\"cxx_new.cc\","
	want+="\"line\":$(leak_line cxx_new.cc new_array),\"module\":\"cxx_new\"}]"
	expect_cxx "the first frame after operator new/new[] of each site" "$want" \
		'[.[] | .frame | select(.symbol | IN("leak_new()", "leak_new_array()"))] |
		 sort_by(.symbol)'
}

# ------------------------------------------------------------ strdup in libc

SD_PID=""
run_strdup() {
	run_prog strdup strdup_leak -r heap || return 1
	SD_PID=$RUN_PID
}
sd() { scenario run_strdup; }

test_unwind_strdup_names_the_function_above_strdup() {
	sd || return 1
	# glibc 2.36 names it __strdup (strdup is a weak alias at the same address).
	expect_stack "$UW/strdup/alive.json" "$SD_PID" heap __strdup '[4,48,4,0]' \
		'["__strdup","leak_strdup","main"]'
}

test_unwind_strdup_caller_frame_is_on_the_strdup_line() {
	sd || return 1
	expect_frame_at "$UW/strdup/alive.json" "$SD_PID" heap __strdup 1 leak_strdup \
		strdup_leak.c strdup strdup_leak
}

# ------------------------------------------------------------ no frame pointers at all

# The program's own sites, as the tests below expect them in both builds.
CHAIN_HEAP='["level4","level3","level2","level1","main"]'
CHAIN_OWN='["heap:level4", "fd:open_files", "fd:open_sockets", "fd:make_pipe", "fd:dup_fds",
	   "mmap:map_anon"]'

NOFP_PID=""
run_nofp() {
	run_prog nofp unwind_chain || return 1
	NOFP_PID=$RUN_PID
}
nofp() { scenario run_nofp; }

FP_PID=""
run_fp() {
	run_prog fp unwind_chain_fp || return 1
	FP_PID=$RUN_PID
}
fp() { scenario run_fp; }

FPW_PID=""
run_fp_walk() {
	run_prog fp_walk unwind_chain_fp --unwind fp || return 1
	FPW_PID=$RUN_PID
}
fpw() { scenario run_fp_walk; }

# own_sites SNAP PID: the program's own sites (KIND:first frame in CHAIN_OWN) as [kind, first
# frame, counts, frames up to main], sorted.
own_sites() {
	uj "$1" '[procs($pid) | .sites[] | select("\(.kind):\(.stack[0].symbol)" | IN($own[])) |
		[.kind, .stack[0].symbol, counts, upto_main]] | sort' \
		--argjson pid "$2" --argjson own "$CHAIN_OWN"
}

test_unwind_nofp_heap_leak_four_calls_deep_reaches_main() {
	nofp || return 1
	expect_stack "$UW/nofp/alive.json" "$NOFP_PID" heap level4 '[5,360,5,0]' "$CHAIN_HEAP" ||
		return 1
	expect_frame_at "$UW/nofp/alive.json" "$NOFP_PID" heap level4 0 level4 \
		unwind_chain.c level4 unwind_chain
}

test_unwind_nofp_fd_sites_reach_the_function_above_the_wrapper_and_main() {
	local f
	nofp || return 1
	expect_stack "$UW/nofp/alive.json" "$NOFP_PID" fd open_files '[3,3,0]' \
		'["open_files","make_resources","main"]' || return 1
	expect_stack "$UW/nofp/alive.json" "$NOFP_PID" fd open_sockets '[2,2,0]' \
		'["open_sockets","make_resources","main"]' || return 1
	expect_stack "$UW/nofp/alive.json" "$NOFP_PID" fd make_pipe '[2,2,0]' \
		'["make_pipe","make_resources","main"]' || return 1
	expect_stack "$UW/nofp/alive.json" "$NOFP_PID" fd dup_fds '[2,2,0]' \
		'["dup_fds","make_resources","main"]' || return 1
	for f in open_files:open open_sockets:socket make_pipe:pipe dup_fds:dup; do
		expect_frame_at "$UW/nofp/alive.json" "$NOFP_PID" fd "${f%:*}" 0 "${f%:*}" \
			unwind_chain.c "${f#*:}" unwind_chain || return 1
	done
}

test_unwind_nofp_mmap_site_reaches_its_caller_and_main() {
	nofp || return 1
	expect_stack "$UW/nofp/alive.json" "$NOFP_PID" mmap map_anon '[2,131072,2,0]' \
		'["map_anon","make_resources","main"]' || return 1
	expect_frame_at "$UW/nofp/alive.json" "$NOFP_PID" mmap map_anon 0 map_anon \
		unwind_chain.c mmap unwind_chain
}

# brk_sites SNAP PID: the mmap sites of PID that grew the heap inside malloc (sysmalloc or
# level4 in their stack) as [mappings, frames from level4 up to main (all of them when
# level4 is missing)].
brk_sites() {
	uj "$1" '[procs($pid) | .sites[] | select(.kind == "mmap" and
		((frames | index("sysmalloc")) != null or (frames | index("level4")) != null)) |
		upto_main as $f | [.outstanding_count, ($f | index("level4")) as $i |
		if $i == null then $f else $f[$i:] end]]' --argjson pid "$2"
}

test_unwind_brk_growth_inside_malloc_reaches_the_caller_of_malloc() {
	local got
	nofp || return 1
	fp || return 1
	# level4's first malloc grows the heap with brk from inside libc's malloc (sysmalloc),
	# while malloc's return address on the stack is the kernel's uretprobe trampoline (the
	# return probe leaktop put on malloc): the walk must go on from there to malloc's
	# caller, in both builds.  Frames from level4 up to main; what libc calls its
	# internals, and whether they are kept, is not checked.
	got=$(brk_sites "$UW/nofp/alive.json" "$NOFP_PID")
	[ "$got" == "[[1,$CHAIN_HEAP]]" ] ||
		fail_because "the no-FP build's mmap sites growing the heap in malloc as" \
			"[[mappings, frames from level4 up to main]]: got $got, expected" \
			"[[1,$CHAIN_HEAP]]" || return 1
	got=$(brk_sites "$UW/fp/alive.json" "$FP_PID")
	[ "$got" == "[[1,$CHAIN_HEAP]]" ] ||
		fail_because "the FP build's mmap sites growing the heap in malloc as" \
			"[[mappings, frames from level4 up to main]]: got $got, expected" \
			"[[1,$CHAIN_HEAP]]"
}

test_unwind_fp_build_gives_the_expected_frames_by_default() {
	fp || return 1
	expect_stack "$UW/fp/alive.json" "$FP_PID" heap level4 '[5,360,5,0]' "$CHAIN_HEAP" ||
		return 1
	expect_stack "$UW/fp/alive.json" "$FP_PID" fd dup_fds '[2,2,0]' \
		'["dup_fds","make_resources","main"]' || return 1
	expect_stack "$UW/fp/alive.json" "$FP_PID" mmap map_anon '[2,131072,2,0]' \
		'["map_anon","make_resources","main"]'
}

test_unwind_nofp_and_fp_builds_give_identical_frames_up_to_main() {
	local a b
	nofp || return 1
	fp || return 1
	a=$(own_sites "$UW/nofp/alive.json" "$NOFP_PID")
	b=$(own_sites "$UW/fp/alive.json" "$FP_PID")
	[ "$(jq length <<<"$b" 2>&1)" == 6 ] ||
		fail_because "the FP build has not the 6 own sites expected (level4, open_files," \
			"open_sockets, make_pipe, dup_fds, map_anon): $b" || return 1
	[ "$a" == "$b" ] ||
		fail_because "own sites as [kind, first frame, counts, frames up to main]: the" \
			"no-FP build's $a, the FP build's $b"
}

test_unwind_fp_option_on_fp_build_gives_the_same_frames_as_default() {
	local a b
	fp || return 1
	fpw || return 1
	a=$(own_sites "$UW/fp_walk/alive.json" "$FPW_PID")
	b=$(own_sites "$UW/fp/alive.json" "$FP_PID")
	[ "$a" == "$b" ] ||
		fail_because "the FP build's own sites as [kind, first frame, counts, frames up to" \
			"main]: under --unwind fp $a, by default $b"
}

# The stats.unwind_* and walk_lock_* counters: present, numbers, and saying which method did the work.
UNWIND_STATS='["unwind_cfi_frames", "unwind_fp_frames", "unwind_no_table", "unwind_tables",
	      "unwind_rows", "unwind_table_bytes", "unwind_rows_full", "walk_lock_busy",
	      "walk_lock_unknown"]'

test_unwind_default_run_counts_cfi_frames_and_loaded_tables() {
	nofp || return 1
	expect_jq "the stats.unwind_* counters that are not numbers" '[]' "$UW/nofp/alive.json" \
		'[$names[] as $n | select(.stats[$n] | type != "number") | $n]' \
		--argjson names "$UNWIND_STATS" || return 1
	# The program's frames came from its own table and libc's: at least two tables, rows,
	# and the memory they take.
	expect_jq "[unwind_cfi_frames > 0, unwind_tables >= 2, unwind_rows > 0, unwind_table_bytes > 0]" \
		'[true,true,true,true]' "$UW/nofp/alive.json" \
		'.stats | [.unwind_cfi_frames > 0, .unwind_tables >= 2, .unwind_rows > 0,
		  .unwind_table_bytes > 0]'
}

test_unwind_fp_option_walks_frame_pointers_only() {
	fpw || return 1
	expect_jq "[unwind_cfi_frames, unwind_fp_frames > 0] under --unwind fp" '[0,true]' \
		"$UW/fp_walk/alive.json" '.stats | [.unwind_cfi_frames, .unwind_fp_frames > 0]'
}

test_unwind_option_rejects_an_unknown_method_naming_the_choices() {
	local d=$UW/bad_method
	mkdir -p "$d"
	lt_fg "$d/out" "$d/err" --unwind dwarf -- true
	expect_eq "leaktop --unwind dwarf's exit status (stderr: $(cat "$d/err"))" 2 \
		"$LT_STATUS" || return 1
	expect_eq "lines on stderr" 1 "$(stderr_lines "$d/err")" || return 1
	# One line naming the option's value and the methods there are (not "unknown option").
	expect_match "stderr" "dwarf.*cfi.*fp|cfi.*fp.*dwarf" "$(cat "$d/err")"
}

# ------------------------------------------------------------ Debian's python3.11

# A list of bytearrays growing steadily: bytearray(4096) every 10 ms (400 KiB/s, its
# buffer a malloc from the interpreter's eval loop), for longer than leaktop runs.
PY_SCRIPT='
import time
keep = []
end = time.monotonic() + 60
while time.monotonic() < end:
    keep.append(bytearray(4096))
    time.sleep(0.01)
'
PY_PID=""

run_python() {
	local d=$UW/python
	mkdir -p "$d"
	[ -x "$PYTHON311" ] ||
		fail_because "$PYTHON311 is missing; install python3.11 and python3.11-dbg (make deps)" ||
		return 1
	lt_fg "$d/out" "$d/err" -b -i 0.5 -d 10 -j "$d/snap.json" -- "$PYTHON311" -c "$PY_SCRIPT"
	expect_eq "leaktop's exit status (stderr: $(cat "$d/err"))" 0 "$LT_STATUS" || return 1
	[ -s "$d/snap.json" ] || fail_because "no snapshot; stderr: $(cat "$d/err")" || return 1
	PY_PID=$(jqc "$d/snap.json" '[.processes[] | select(.comm == "python3.11") | .pid][0]')
	[[ $PY_PID =~ ^[0-9]+$ ]] ||
		fail_because "no python3.11 process in the snapshot: $(jqc "$d/snap.json" \
			'[.processes[] | [.pid, .comm]]')"
}

test_unwind_python_growing_heap_site_is_flagged_with_a_deep_symbolized_stack() {
	local file=$UW/python/snap.json got
	scenario run_python || return 1
	# Flagged heap sites whose stack has at least 8 frames with a symbol, among them the
	# eval loop and the interpreter's entry (Py_BytesMain, or main).
	got=$(uj "$file" '[procs($pid) | .sites[] | select(.kind == "heap" and .flagged) |
		[.stack[] | .symbol | select(. != null)] |
		select(length >= 8 and index("_PyEval_EvalFrameDefault") != null and
		       (index("Py_BytesMain") != null or index("main") != null))] | length > 0' \
		--argjson pid "$PY_PID")
	[ "$got" == true ] ||
		fail_because "no flagged heap site of python3.11 (pid $PY_PID) with >= 8 symbolized" \
			"frames including _PyEval_EvalFrameDefault and Py_BytesMain or main; its flagged" \
			"sites as [kind, outstanding_bytes, frames]: $(uj "$file" '[procs($pid) |
			.sites[] | select(.flagged) | [.kind, .outstanding_bytes, frames]]' \
			--argjson pid "$PY_PID")"
}

# ------------------------------------------------------------ the runs themselves

# ------------------------------------------------------------ a syscall of the program's own

OWN_PID=""
run_own() {
	run_prog own own_syscall -r fd || return 1
	OWN_PID=$RUN_PID
}
own() { scenario run_own; }

test_unwind_own_syscall_wrapper_with_a_big_frame_reaches_its_callers() {
	own || return 1
	# own_dup makes the syscall itself under 4 KiB of locals, in code without frame
	# pointers: no libc wrapper to know, no return address near the stack pointer.  Its
	# frames stay (the syscall's "library" is the program), and CFI finds its callers.
	expect_stack "$UW/own/alive.json" "$OWN_PID" fd own_dup '[3,3,0]' \
		'["own_dup","dup_through_own_wrapper","main"]'
}

test_unwind_runs_have_no_drops() {
	expect_no_drops_anywhere
}

run_tests
