#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# snapshots.sh - snapshots as a product: `leaktop report` and `leaktop diff` on saved files,
# and the pprof and folded exports.
#
# Golden tests use the committed, hand-checked pair tests/data/old.json -> new.json (10 s
# apart in one run: pid 100 grows leak_here by 4096 B, gains leak_new, loses old_site, opens
# 3 more sockets; ./server restarted as pid 300 grows by 1024 B; pid 500 is new, pid 400
# vanished).  Real-run tests trace tests/progs/simple_leak (3 x 64 B from leak_simple)
# twice and round-trip the snapshots through report, diff and the exports.  Every bad file
# must give exit 1, one line on stderr and no output.  Short bounded runs of the fuzz targets
# (the snapshot reader, and the symbolizer's loading of hostile ELF files) end the script
# (`make fuzz` runs them long).

. "$(dirname "$0")/lib.sh"
require_root
require_built simple_leak

DATA=$E2E_ROOT/tests/data
PROTO=$E2E_ROOT/proto
FUZZ=${FUZZ:-$E2E_ROOT/build/fuzz/fuzz_snapshot}
FUZZ_ELF=${FUZZ_ELF:-$E2E_ROOT/build/fuzz/fuzz_elf}
FUZZ_SECONDS=${FUZZ_SECONDS:-15}
T=$E2E_TMP

# lt_cmd OUT ERR ARG...: run a leaktop subcommand (no tracing); status in LT_STATUS.
lt_cmd() {
	local out=$1 err=$2
	shift 2
	timeout -k 5 60 "$LEAKTOP" "$@" >"$out" 2>"$err" </dev/null
	LT_STATUS=$?
}

# expect_ok DESC: the last lt_cmd succeeded and said nothing on stderr.
expect_ok() {
	if [ "$LT_STATUS" != 0 ] || [ -s "$T/err" ]; then
		fail_because "$1: exit $LT_STATUS, stderr: $(cat "$T/err")"
	fi
}

# expect_line FILE LINE: FILE has exactly this line.
expect_line() {
	grep -qxF -- "$2" "$1" ||
		fail_because "no line '$2' in $(basename "$1"): $(head -c 3000 "$1")"
}

# pprof_text GZ: the profile decoded by protoc against the project's .proto.
pprof_text() {
	gunzip -c "$1" | protoc --decode=perftools.profiles.Profile -I"$PROTO" \
		"$PROTO/profile.proto"
}

# pprof_values TEXT: each sample's values as "count bytes" (then "mmap_count mmap_bytes" when
# mappings were tracked), sorted.
pprof_values() {
	awk '/^sample \{/ {s = 1; v = ""} s && /^  value:/ {v = v (v ? " " : "") $2}
	     s && /^\}/ {print v; s = 0}' "$1" | sort -k1,1n -k2,2n
}

# pprof_string TEXT I: string_table[I] (unquoted).
pprof_string() {
	sed -n 's/^string_table: "\(.*\)"$/\1/p' "$1" | sed -n "$(($2 + 1))p"
}

# folded_sum FILE: the bytes of every folded line added up.
folded_sum() { awk '{s += $NF} END {print s + 0}' "$1"; }

# heap_sum SNAPSHOT: outstanding heap bytes of every process.
heap_sum() { jq '[.processes[].heap.outstanding_bytes] | add // 0' "$1"; }

# ---------------------------------------------------------------- golden: report

test_report_prints_the_fields_of_a_golden_snapshot() {
	lt_cmd "$T/out" "$T/err" report "$DATA/old.json"
	expect_ok "leaktop report" || return 1
	expect_match "header" '^leaktop [0-9.]+  elapsed 2\.0s  interval 1s  processes 3  probes 17  events 40  dropped 3$' \
		"$(head -n 1 "$T/out")" || return 1
	expect_line "$T/out" "PID 100 leaky [heap_growth]  [./leaky 4]" || return 1
	expect_line "$T/out" "  rss 4.0 MiB  vm 8.0 MiB  fds 6  threads 1" || return 1
	expect_line "$T/out" "  heap: 3.1 KiB outstanding in 7 blocks (allocs 10, frees 3)" || return 1
	expect_line "$T/out" "  fds: 2 outstanding (opens 3, closes 1, untracked 3)" || return 1
	expect_line "$T/out" "  LEAK 1.0 KiB in 4 blocks (allocs 4, frees 0, +410 B/s)  leak_here leaky.c:12" || return 1
	expect_line "$T/out" "      #0  0x55d0c0ffee00 leak_here+0x14 leaky.c:12 [/usr/local/bin/leaky]" || return 1
	expect_line "$T/out" "       2 fds open (opens 3, closes 1, +0.0 fds/s)  open_conn net.c:7  socket:2" || return 1
	expect_line "$T/out" "PID 400 gone (exited)  [./gone]" || return 1
}

test_report_top_keeps_the_largest_sites_and_pid_one_process() {
	lt_cmd "$T/out" "$T/err" report --top 1 --pid 100 "$DATA/old.json"
	expect_ok "leaktop report --top 1 --pid 100" || return 1
	expect_eq "PID lines" "PID 100 leaky [heap_growth]  [./leaky 4]" "$(grep '^PID' "$T/out")" || return 1
	expect_eq "site lines" 1 "$(grep -cE '^(  LEAK|      ) [0-9]' "$T/out")" || return 1
	expect_eq "processes in the header" 1 "$(grep -o 'processes [0-9]*' "$T/out" | cut -d' ' -f2)"
}

test_report_pid_not_in_snapshot_is_an_error() {
	lt_cmd "$T/out" "$T/err" report -p 4242 "$DATA/old.json"
	expect_eq "exit status" 1 "$LT_STATUS" || return 1
	expect_match "message" "^leaktop: no process with PID 4242 in .*; " "$(cat "$T/err")"
}

test_report_json_format_is_the_snapshot_filtered() {
	lt_cmd "$T/out.json" "$T/err" report --format json --pid 100 --top 2 "$DATA/old.json"
	expect_ok "leaktop report --format json" || return 1
	expect_jq "schema, pids, sites" '["leaktop.snapshot/1",[100],[2],"2026-11-21T10:00:00Z"]' \
		"$T/out.json" '[.schema, [.processes[].pid], [.processes[].sites | length], .time]' || return 1
	lt_cmd "$T/out" "$T/err" report "$T/out.json"
	expect_ok "leaktop report of its own json output"
}

# ---------------------------------------------------------------- golden: diff

test_diff_of_golden_pair_gives_hand_checked_process_numbers() {
	lt_cmd "$T/diff.json" "$T/err" diff --json "$DATA/old.json" "$DATA/new.json"
	expect_ok "leaktop diff --json" || return 1
	expect_jq "schema, seconds, summary" '["leaktop.diff/1",10,{"matched":2,"new":1,"vanished":1}]' \
		"$T/diff.json" '[.schema, .seconds, .summary]' || return 1
	expect_jq "processes as [status, matched_by, old_pid, new_pid, heap delta, per_s, fd delta]" \
		'[["matched","pid",100,100,4296,429.6,3],["matched","command",200,300,1024,102.4,0],["new",null,null,500,256,25.6,0],["vanished",null,400,null,-64,-6.4,0]]' \
		"$T/diff.json" '[.processes[] | [.status, .matched_by, .old_pid, .new_pid,
			.heap.outstanding_bytes.delta, .heap.outstanding_bytes.per_s,
			.fd.outstanding_count.delta]]'
}

test_diff_of_golden_pair_gives_hand_checked_site_numbers() {
	lt_cmd "$T/diff.json" "$T/err" diff --json "$DATA/old.json" "$DATA/new.json"
	expect_ok "leaktop diff --json" || return 1
	expect_jq "sites of pid 100 as [kind, status, function, old, new, delta, per_s]" \
		'[["heap","grew","leak_here",1024,5120,4096,409.6],["heap","new","leak_new",null,300,300,30],["heap","same","cache_fill",2048,2048,0,0],["heap","vanished","old_site",100,null,-100,-10],["fd","grew","open_conn",2,5,3,0.3]]' \
		"$T/diff.json" '[.processes[0].sites[] | (.outstanding_bytes // .outstanding_count) as $n |
			[.kind, .status, .stack[0].symbol, $n.old, $n.new, $n.delta, $n.per_s]]' || return 1
	expect_jq "blocks of leak_here" '[4,20,16,1.6]' "$T/diff.json" \
		'.processes[0].sites[0].outstanding_count | [.old, .new, .delta, .per_s]'
}

test_diff_text_shows_growth_new_and_vanished() {
	lt_cmd "$T/out" "$T/err" diff "$DATA/old.json" "$DATA/new.json"
	expect_ok "leaktop diff" || return 1
	expect_line "$T/out" "processes: 2 matched, 1 new, 1 vanished" || return 1
	expect_line "$T/out" "  heap: 3.1 KiB -> 7.3 KiB (+4.2 KiB, +430 B/s), blocks 7 -> 25 (+18)" || return 1
	expect_line "$T/out" "    +4.0 KiB, +410 B/s, +16 blocks  (1.0 KiB -> 5.0 KiB)  grew  leak_here leaky.c:12" || return 1
	expect_line "$T/out" "    +300 B, +30 B/s, +3 blocks  (none -> 300 B)  new  leak_new leaky.c:20" || return 1
	expect_line "$T/out" "    -100 B, -10 B/s, -1 blocks  (100 B -> none)  vanished  old_site leaky.c:50" || return 1
	expect_line "$T/out" "PID 200 -> 300 server  [./server --port 8080]  (matched by command)" || return 1
	expect_line "$T/out" "PID 500 fresh  [./fresh]  (new)" || return 1
	expect_line "$T/out" "PID 400 gone  [./gone]  (vanished)"
}

# ---------------------------------------------------------------- golden: exports

test_pprof_of_golden_decodes_with_protoc_and_holds_sample_values() {
	lt_cmd "$T/out" "$T/err" report --format pprof -o "$T/new.pb.gz" "$DATA/new.json"
	expect_ok "leaktop report --format pprof" || return 1
	pprof_text "$T/new.pb.gz" >"$T/new.pb.txt" 2>"$T/protoc.err" ||
		fail_because "protoc --decode failed: $(cat "$T/protoc.err")" || return 1
	expect_eq "sample values (count bytes)" "2 256,2 2048,3 300,6 1536,20 5120" \
		"$(pprof_values "$T/new.pb.txt" | paste -sd,)" || return 1
	expect_eq "sample types" "inuse_objects count inuse_space bytes" "$(
		for i in $(awk '/^sample_type \{/ {s = 1} s && /(type|unit):/ {print $2}
			   s && /^\}/ {s = 0}' "$T/new.pb.txt"); do
			pprof_string "$T/new.pb.txt" "$i"
		done | paste -sd' ')" || return 1
	grep -q '^string_table: "leak_here"$' "$T/new.pb.txt" ||
		fail_because "no leak_here function in the profile"
}

test_folded_of_golden_sums_to_outstanding_heap_bytes() {
	lt_cmd "$T/new.folded" "$T/err" report --format folded "$DATA/new.json"
	expect_ok "leaktop report --format folded" || return 1
	expect_line "$T/new.folded" "main;leak_here 5120" || return 1
	expect_line "$T/new.folded" "0x7fff00001234;[libc.so.6];fresh_alloc 256" || return 1
	expect_eq "sum of folded bytes" "$(heap_sum "$DATA/new.json")" "$(folded_sum "$T/new.folded")"
}

test_pprof_and_folded_options_write_files_beside_the_text_report() {
	rm -f "$T/side.pb.gz" "$T/side.folded"
	lt_cmd "$T/out" "$T/err" report --pprof "$T/side.pb.gz" --folded "$T/side.folded" \
		"$DATA/new.json"
	expect_ok "leaktop report --pprof --folded" || return 1
	expect_match "stdout" '^leaktop [0-9.]+  elapsed 12\.0s' "$(head -n 1 "$T/out")" || return 1
	pprof_text "$T/side.pb.gz" >/dev/null 2>&1 || fail_because "--pprof file does not decode" ||
		return 1
	expect_eq "folded lines" 5 "$(wc -l <"$T/side.folded")"
}

test_pprof_to_a_symbolic_link_is_refused() {
	ln -sf /dev/null "$T/link.pb.gz"
	lt_cmd "$T/out" "$T/err" report -f pprof -o "$T/link.pb.gz" "$DATA/new.json"
	expect_eq "exit status" 1 "$LT_STATUS" || return 1
	expect_match "message" '^leaktop: refusing to write .*symbolic link' "$(cat "$T/err")"
}

# ---------------------------------------------------------------- bad files

# expect_bad FILE PHRASE: report, and diff with FILE on either side, exit 1 with one line on
# stderr containing PHRASE, print nothing and write no -o file.
expect_bad() {
	local file=$1 phrase=$2 args
	for args in "report $file" "report -f pprof -o $T/bad.out $file" \
		"diff $file $DATA/new.json" "diff --json $DATA/old.json $file"; do
		rm -f "$T/bad.out"
		# shellcheck disable=SC2086
		lt_cmd "$T/out" "$T/err" $args
		expect_eq "exit status of leaktop $args" 1 "$LT_STATUS" || return 1
		expect_eq "stderr lines of leaktop $args" 1 "$(stderr_lines "$T/err")" || return 1
		expect_match "stderr of leaktop $args" "^leaktop: .*$phrase.*; " "$(cat "$T/err")" ||
			return 1
		[ ! -s "$T/out" ] || fail_because "leaktop $args printed: $(head -c 300 "$T/out")" ||
			return 1
		[ ! -e "$T/bad.out" ] || fail_because "leaktop $args wrote its -o file" || return 1
	done
}

test_missing_file_exits_1_naming_the_path() {
	expect_bad "$T/no-such.json" "cannot open snapshot $T/no-such.json: No such file"
}

test_empty_file_exits_1() {
	: >"$T/empty.json"
	expect_bad "$T/empty.json" "is empty"
}

test_truncated_file_exits_1_saying_truncated() {
	head -c 700 "$DATA/new.json" >"$T/truncated.json"
	expect_bad "$T/truncated.json" "is truncated"
}

test_non_json_file_exits_1_saying_not_json() {
	printf 'PID 100 leaky\n' >"$T/text.json"
	expect_bad "$T/text.json" "is not valid JSON \\(line 1"
}

test_wrong_schema_exits_1_naming_both_schemas() {
	jq '.schema = "leaktop.diff/1"' "$DATA/new.json" >"$T/schema.json"
	expect_bad "$T/schema.json" 'schema "leaktop.diff/1", expected "leaktop.snapshot/1"' || return 1
	# a diff's own output is not a snapshot either
	"$LEAKTOP" diff --json "$DATA/old.json" "$DATA/new.json" >"$T/a-diff.json"
	expect_bad "$T/a-diff.json" "is not a leaktop snapshot"
}

test_missing_field_exits_1_naming_its_path() {
	jq 'del(.processes[1].sites[0].stack[2].addr)' "$DATA/new.json" >"$T/field.json"
	expect_bad "$T/field.json" "processes\\[1\\]\\.sites\\[0\\]\\.stack\\[2\\]\\.addr is missing"
}

test_mistyped_field_exits_1_naming_its_type() {
	jq '.processes[0].heap.allocs = "32"' "$DATA/new.json" >"$T/type.json"
	expect_bad "$T/type.json" "processes\\[0\\]\\.heap\\.allocs is a string, expected an integer"
}

test_deeply_nested_file_exits_1_without_crashing() {
	awk 'BEGIN {for (i = 0; i < 100000; i++) printf "["; for (i = 0; i < 100000; i++) printf "]"}' \
		>"$T/deep.json"
	expect_bad "$T/deep.json" "nests JSON deeper than 2048 levels"
}

test_huge_file_exits_1_before_reading_it() {
	truncate -s 300M "$T/huge.json"
	expect_bad "$T/huge.json" "is 300.0 MiB, more than the 256 MiB a snapshot may be"
}

test_json_lines_file_exits_1_with_a_hint() {
	{ jq -c . "$DATA/old.json"; jq -c . "$DATA/new.json"; } >"$T/lines.jsonl"
	expect_bad "$T/lines.jsonl" "more than one JSON value" || return 1
	grep -q 'take one line: tail -n 1 FILE' "$T/err" || fail_because "no hint: $(cat "$T/err")"
}

test_usage_errors_exit_2() {
	local args
	for args in "report" "report a.json b.json" "report -f svg $DATA/old.json" \
		"report --top 0 $DATA/old.json" "report --bogus $DATA/old.json" "diff $DATA/old.json" \
		"diff -n x $DATA/old.json $DATA/new.json"; do
		# shellcheck disable=SC2086
		lt_cmd "$T/out" "$T/err" $args
		expect_eq "exit status of leaktop $args" 2 "$LT_STATUS" || return 1
		expect_eq "stderr lines of leaktop $args" 1 "$(stderr_lines "$T/err")" || return 1
		expect_match "stderr of leaktop $args" '^leaktop: ' "$(cat "$T/err")" || return 1
	done
}

# ---------------------------------------------------------------- real runs

# run_simple N: trace simple_leak (its leaks done, waiting) into $T/runN; keeps the
# snapshot taken while it was alive (alive.json) and the final one (final.json).
run_simple() {
	local dir=$T/run$1 n
	mkdir -p "$dir/prog"
	lt_bg "$dir/stdout" "$dir/err" -b -i "$INTERVAL" -j "$dir/final.json" \
		--pprof "$dir/live.pb.gz" -- "$PROGS/simple_leak" "$dir/prog"
	wait_file "$dir/prog/done" || return 1
	# Two more reports from now were certainly collected after the program's leaks.
	n=$(grep -c '^leaktop ' "$dir/stdout")
	WAIT_LIMIT=$WAIT_S wait_until "two more reports" reports_at_least "$dir/stdout" $((n + 2)) ||
		return 1
	cp "$dir/final.json" "$dir/alive.json"
	touch "$dir/prog/quit"
	wait_exit "$LT_PID" || return 1
	[ "$WAIT_STATUS" = 0 ] || fail_because "leaktop exited $WAIT_STATUS: $(cat "$dir/err")" ||
		return 1
	RUN_PID[$1]=$(pid_in "$dir/prog/done")
}
reports_at_least() { [ "$(grep -c '^leaktop ' "$1")" -ge "$2" ]; }
declare -A RUN_PID=()
run1() { run_simple 1; }
run2() { run_simple 2; }

test_real_snapshot_reports_exactly_the_last_batch_report() {
	scenario run1 || return 1
	awk '/^leaktop [0-9.]+  elapsed/ {buf = ""} {buf = buf $0 "\n"} END {printf "%s", buf}' \
		"$T/run1/stdout" >"$T/run1/last_report"
	lt_cmd "$T/run1/report" "$T/err" report "$T/run1/final.json"
	expect_ok "leaktop report" || return 1
	grep -q 'leak_simple tests/progs/simple_leak.c' "$T/run1/report" ||
		fail_because "no leak_simple site in the report: $(cat "$T/run1/report")" || return 1
	diff -u "$T/run1/last_report" "$T/run1/report" >"$T/run1/report.diff" ||
		fail_because "report differs from the last batch report: $(cat "$T/run1/report.diff")"
}

# (leak_simple's first malloc grows the heap: an mmap site that begins there too.)
test_real_snapshots_of_one_run_diff_by_pid_with_nothing_grown() {
	scenario run1 || return 1
	lt_cmd "$T/run1/diff.json" "$T/err" diff --json "$T/run1/alive.json" "$T/run1/final.json"
	expect_ok "leaktop diff" || return 1
	expect_jq "the leak_simple site as [status, matched_by, site status, old bytes, delta]" \
		'[["matched","pid","same",192,0]]' "$T/run1/diff.json" \
		'[.processes[] | . as $p | .sites[] | select(.kind == "heap" and .stack[0].symbol == "leak_simple") |
		  [$p.status, $p.matched_by, .status, .outstanding_bytes.old,
		   .outstanding_bytes.delta]]' || return 1
	jq -e '.seconds > 0' "$T/run1/diff.json" >/dev/null ||
		fail_because "seconds between snapshots: $(jq .seconds "$T/run1/diff.json")"
}

test_real_snapshots_of_two_runs_match_by_command_and_symbolized_stack() {
	scenario run1 && scenario run2 || return 1
	local ids
	ids=$(jq -rs '[.[] | .processes[].sites[] | select(.kind == "heap" and .stack[0].symbol == "leak_simple") |
		.stack_id] | unique | length' "$T/run1/final.json" "$T/run2/final.json")
	[ "${RUN_PID[1]}" != "${RUN_PID[2]}" ] || fail_because "both runs had pid ${RUN_PID[1]}" ||
		return 1
	lt_cmd "$T/runs.json" "$T/err" diff --json "$T/run1/final.json" "$T/run2/final.json"
	expect_ok "leaktop diff" || return 1
	expect_jq "the leak_simple site as [matched_by, old_pid, new_pid, site status, old, new]" \
		"[[\"command\",${RUN_PID[1]},${RUN_PID[2]},\"same\",192,192]]" "$T/runs.json" \
		'[.processes[] | . as $p | .sites[] | select(.kind == "heap" and .stack[0].symbol == "leak_simple") |
		  [$p.matched_by, $p.old_pid, $p.new_pid, .status, .outstanding_bytes.old,
		   .outstanding_bytes.new]]' || return 1
	# with address randomization the stack ids differ; the match did not rely on them
	[ "$ids" = 2 ] || [ "$(cat /proc/sys/kernel/randomize_va_space)" = 0 ] ||
		fail_because "stack ids of leak_simple in the two runs: $ids distinct, expected 2"
}

# Build ids come from the files the live run symbolized (verified by device and inode); a
# saved snapshot only names paths, which are never opened to find one.
test_pprof_of_real_snapshot_has_leak_site_and_only_the_live_run_has_build_ids() {
	scenario run1 || return 1
	local bid
	lt_cmd "$T/out" "$T/err" report -f pprof -o "$T/run1/p.pb.gz" "$T/run1/final.json"
	expect_ok "leaktop report -f pprof" || return 1
	pprof_text "$T/run1/p.pb.gz" >"$T/run1/p.txt" 2>"$T/protoc.err" ||
		fail_because "protoc --decode failed: $(cat "$T/protoc.err")" || return 1
	# A heap site is 0 in the mmap sample types, which a live run has (-r mmap by default).
	pprof_values "$T/run1/p.txt" | grep -qx '3 192 0 0' ||
		fail_because "no sample '3 192 0 0': $(pprof_values "$T/run1/p.txt" | paste -sd,)" ||
		return 1
	expect_eq "sample types" "inuse_objects inuse_space mmap_objects mmap_space" "$(
		for i in $(awk '/^sample_type \{/ {s = 1} s && /type:/ {print $2}
			   s && /^\}/ {s = 0}' "$T/run1/p.txt"); do
			pprof_string "$T/run1/p.txt" "$i"
		done | paste -sd' ')" || return 1
	# The program's anonymous mappings (the loader's, malloc's brk growth) while it lived.
	lt_cmd "$T/out" "$T/err" report -f pprof -o "$T/run1/alive.pb.gz" "$T/run1/alive.json"
	expect_ok "leaktop report -f pprof of the live snapshot" || return 1
	pprof_text "$T/run1/alive.pb.gz" >"$T/run1/alive.txt" 2>"$T/protoc.err" ||
		fail_because "protoc --decode failed: $(cat "$T/protoc.err")" || return 1
	pprof_values "$T/run1/alive.txt" | grep -qE '^0 0 [1-9][0-9]* [1-9][0-9]*$' ||
		fail_because "no mmap sample: $(pprof_values "$T/run1/alive.txt" | paste -sd,)" ||
		return 1
	grep -q '^string_table: "leak_simple"$' "$T/run1/p.txt" ||
		fail_because "no leak_simple function" || return 1
	bid=$(readelf -n "$PROGS/simple_leak" | sed -n 's/.*Build ID: //p')
	[ -n "$bid" ] || fail_because "simple_leak has no build id" || return 1
	! grep -q "^string_table: \"$bid\"$" "$T/run1/p.txt" ||
		fail_because "the saved snapshot's profile has a build id read from a file here" ||
		return 1
	pprof_text "$T/run1/live.pb.gz" >"$T/run1/live.txt" 2>"$T/protoc.err" ||
		fail_because "protoc --decode of --pprof failed: $(cat "$T/protoc.err")" || return 1
	grep -q "^string_table: \"$bid\"$" "$T/run1/live.txt" ||
		fail_because "build id $bid of simple_leak not in the live run's profile"
}

test_folded_of_real_snapshot_sums_to_outstanding_heap_bytes() {
	scenario run1 || return 1
	lt_cmd "$T/run1/f.folded" "$T/err" report -f folded "$T/run1/final.json"
	expect_ok "leaktop report -f folded" || return 1
	grep -q ';leak_simple 192$' "$T/run1/f.folded" ||
		fail_because "no '...;leak_simple 192' line: $(cat "$T/run1/f.folded")" || return 1
	expect_eq "sum of folded bytes" "$(heap_sum "$T/run1/final.json")" \
		"$(folded_sum "$T/run1/f.folded")"
}

# ---------------------------------------------------------------- fuzzing

test_fuzzing_the_reader_briefly_finds_no_crash() {
	[ -x "$FUZZ" ] || fail_because "$FUZZ is not built (make build/fuzz/fuzz_snapshot)" ||
		return 1
	mkdir -p "$T/corpus"
	cp "$DATA"/*.json "$T/corpus/"
	(cd "$T" && timeout -k 5 $((FUZZ_SECONDS + 60)) "$FUZZ" -max_total_time="$FUZZ_SECONDS" \
		-max_len=16384 -rss_limit_mb=2048 -timeout=10 \
		-dict="$E2E_ROOT/tests/fuzz/snapshot.dict" "$T/corpus" >"$T/fuzz.log" 2>&1) ||
		fail_because "the fuzz target failed: $(grep -m1 -A8 'ERROR\|==ERROR\|deadly' \
			"$T/fuzz.log" | head -c 1200)"
}

test_fuzzing_the_elf_loader_briefly_finds_no_crash() {
	[ -x "$FUZZ_ELF" ] || fail_because "$FUZZ_ELF is not built (make build/fuzz/fuzz_elf)" ||
		return 1
	mkdir -p "$T/elf-corpus"
	gcc -g -O1 -o "$T/elf-corpus/seed" "$E2E_ROOT/tests/fuzz/elf_seed.c" &&
		objcopy --only-keep-debug "$T/elf-corpus/seed" "$T/elf-corpus/seed.debug" &&
		objcopy --strip-debug --add-gnu-debuglink="$T/elf-corpus/seed.debug" \
			"$T/elf-corpus/seed" "$T/elf-corpus/seed-stripped" ||
		fail_because "could not build the seeds from tests/fuzz/elf_seed.c" || return 1
	(cd "$T" && timeout -k 5 $((FUZZ_SECONDS + 60)) "$FUZZ_ELF" -max_total_time="$FUZZ_SECONDS" \
		-max_len=65536 -rss_limit_mb=2048 -timeout=10 "$T/elf-corpus" >"$T/fuzz-elf.log" 2>&1) ||
		fail_because "the ELF fuzz target failed: $(grep -m1 -A8 'ERROR\|==ERROR\|deadly' \
			"$T/fuzz-elf.log" | head -c 1200)"
}

run_tests
