#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# process.sh - process lifecycle in `leaktop -- CMD` mode: fork children are traced as
# their own processes, exec starts a new process entry (same pid), processes that exit
# mid-trace are reported exited once and then dropped while leaktop goes on.
#
# Every run uses JSON Lines (-j -) so that each snapshot can be examined, including those in
# which an exited image appears for the last time.  The test programs wait on files (see
# tests/progs/*.c) so the tests control when they go on.

. "$(dirname "$0")/lib.sh"
require_root
require_built fork_leak exec_leak simple_leak early_exit prefork_leak

# ------------------------------------------------------------ fork

FK=$E2E_TMP/fork
FK_CHILD="" FK_PARENT=""

run_fork() {
	mkdir -p "$FK/dir"
	lt_bg "$FK/out.jsonl" "$FK/err" -b -i "$INTERVAL" -j - -- "$PROGS/fork_leak" "$FK/dir"
	wait_file "$FK/dir/child_ready" || return 1
	FK_CHILD=$(pid_in "$FK/dir/child_ready")
	FK_PARENT=$(awk '/^PPid:/ { print $2 }' "/proc/$FK_CHILD/status")
	wait_two_more "$FK/out.jsonl" || return 1
	touch "$FK/dir/quit"
	wait_exit "$LT_PID" || return 1
	expect_eq "leaktop's exit status" 0 "$WAIT_STATUS" || return 1
	last_line "$FK/out.jsonl" "$FK/final.json"
	last_entry "$FK/out.jsonl" "$FK_CHILD" "$FK/child.json"
}

test_fork_child_leaks_counted_under_child_pid() {
	scenario run_fork || return 1
	expect_site "$FK/child.json" "$FK_CHILD" leak_in_child 3 666 3 0 || return 1
	expect_site_location "$FK/child.json" "$FK_CHILD" leak_in_child fork_leak.c child main \
		fork_leak
}

test_fork_child_has_only_its_own_allocations() {
	scenario run_fork || return 1
	expect_no_site "$FK/child.json" "$FK_CHILD" leak_in_parent || return 1
	expect_jq "child's heap totals [count, bytes, allocs, frees]" '[[3,666,3,0]]' \
		"$FK/child.json" '[procs($pid) | .heap | [.outstanding_count, .outstanding_bytes,
		  .allocs, .frees]]' --argjson pid "$FK_CHILD"
}

test_fork_child_last_reported_as_exited() {
	scenario run_fork || return 1
	expect_jq "child's last entry [comm, exited]" '[["fork_leak",true]]' "$FK/child.json" \
		'[procs($pid) | [.comm, .exited]]' --argjson pid "$FK_CHILD"
}

test_fork_parent_keeps_only_its_own_leaks() {
	scenario run_fork || return 1
	expect_site "$FK/final.json" "$FK_PARENT" leak_in_parent 2 222 2 0 || return 1
	expect_site "$FK/final.json" "$FK_PARENT" leak_after_fork 1 333 1 0 || return 1
	expect_no_site "$FK/final.json" "$FK_PARENT" leak_in_child
}

test_fork_run_has_no_drops() {
	scenario run_fork || return 1
	expect_no_drops "$FK/out.jsonl" jsonl
}

# ------------------------------------------------------------ pre-forking parent

# prefork_leak.c: 40 short-lived children one after another, each leaking once from the same
# stack; a child may allocate from that stack while its dead sibling's records are purged.
PF=$E2E_TMP/prefork
PF_PARENT=""

run_prefork() {
	run_to_done "$PF" prefork_leak || return 1
	PF_PARENT=$DONE_PID
	expect_eq "leaktop's exit status" 0 "$WAIT_STATUS"
}

test_child_leaking_while_sibling_is_purged_keeps_its_stack() {
	scenario run_prefork || return 1
	# Each child's last entry: its one heap site, and the site's innermost function.
	expect_jq "children's last entries as [count, with one site, at leak_in_child]" \
		'[40,40]' "$PF/out.jsonl" '[.[] | .processes[] | select(.pid != $parent)] |
		group_by(.pid) | map(last | [.sites[] | select(.kind == "heap") |
		.stack[0].symbol]) | [length, (map(select(. == ["leak_in_child"])) | length)]' \
		--slurp \
		--argjson parent "$PF_PARENT" || return 1
}

test_exits_seen_as_events_are_not_reconciled() {
	scenario run_prefork || return 1
	# 40 children exited and no event was lost: /proc never had to tell leaktop.
	expect_jq "stats.reconciled" '{"exited":0,"reused":0}' "$PF/out.jsonl" \
		'last | .stats.reconciled' --slurp
}

test_prefork_run_has_no_drops() {
	scenario run_prefork || return 1
	expect_no_drops "$PF/out.jsonl" jsonl
}

# ------------------------------------------------------------ exec

EX=$E2E_TMP/exec
EX_PID=""

run_exec() {
	mkdir -p "$EX/dir"
	lt_bg "$EX/out.jsonl" "$EX/err" -b -i "$INTERVAL" -j - -- "$PROGS/exec_leak" "$EX/dir" \
		"$PROGS/simple_leak" "$EX/dir"
	wait_file "$EX/dir/ready_exec" || return 1
	EX_PID=$(pid_in "$EX/dir/ready_exec")
	wait_two_more "$EX/out.jsonl" || return 1
	touch "$EX/dir/go_exec"
	wait_file "$EX/dir/done" || return 1
	expect_eq "pid after exec" "$EX_PID" "$(pid_in "$EX/dir/done")" || return 1
	wait_two_more "$EX/out.jsonl" || return 1
	touch "$EX/dir/quit"
	wait_exit "$LT_PID" || return 1
	expect_eq "leaktop's exit status" 0 "$WAIT_STATUS" || return 1
	last_line "$EX/out.jsonl" "$EX/final.json"
	last_entry "$EX/out.jsonl" "$EX_PID" "$EX/old.json" leak_before_exec
	last_entry "$EX/out.jsonl" "$EX_PID" "$EX/new.json" leak_simple
}

test_exec_new_image_holds_exec_d_program_leaks() {
	scenario run_exec || return 1
	expect_site "$EX/final.json" "$EX_PID" leak_simple 3 192 3 0 || return 1
	expect_site_location "$EX/final.json" "$EX_PID" leak_simple simple_leak.c simple main \
		simple_leak || return 1
	expect_no_site "$EX/final.json" "$EX_PID" leak_before_exec || return 1
	expect_jq "comm of the new image" '["simple_leak"]' "$EX/final.json" \
		'[procs($pid) | .comm]' --argjson pid "$EX_PID"
}

test_exec_old_image_keeps_only_pre_exec_leaks() {
	scenario run_exec || return 1
	expect_site "$EX/old.json" "$EX_PID" leak_before_exec 4 492 4 0 || return 1
	expect_site_location "$EX/old.json" "$EX_PID" leak_before_exec exec_leak.c before_exec \
		main exec_leak || return 1
	expect_no_site "$EX/old.json" "$EX_PID" leak_simple || return 1
	expect_jq "[comm, exited] of the old image's last entry" '[["exec_leak",true]]' \
		"$EX/old.json" '[procs($pid) | [.comm, .exited]]' --argjson pid "$EX_PID"
}

test_exec_images_never_share_an_entry() {
	local got
	scenario run_exec || return 1
	got=$(jqs "$EX/out.jsonl" '[[.[] | .processes[] | select(.pid == $pid) |
		[any(.sites[]; .stack[0].symbol == "leak_before_exec"),
		 any(.sites[]; .stack[0].symbol == "leak_simple")]] | unique[] |
		select(. != [false, false])]' --argjson pid "$EX_PID")
	# Over every snapshot, each entry of the pid holds the sites of one image only, and
	# both images were seen.
	expect_eq "[has pre-exec site, has exec'd site] of the entries for pid $EX_PID" \
		'[[false,true],[true,false]]' "$got"
}

test_exec_old_image_dropped_after_being_reported() {
	scenario run_exec || return 1
	expect_jq "entries for pid $EX_PID in the final snapshot" 1 "$EX/final.json" \
		'[procs($pid)] | length' --argjson pid "$EX_PID"
}

test_exec_run_has_no_drops() {
	scenario run_exec || return 1
	expect_no_drops "$EX/out.jsonl" jsonl
}

# ------------------------------------------------------------ exec without address randomization
#
# With ASLR off (setarch -R; gdb does the same) the exec'd program's heap blocks come back
# at the very addresses the old image's blocks had.  The old image's leaks are its own: a
# new image's allocation must not free them.

NR=$E2E_TMP/exec_norandom
NR_PID=""

run_exec_norandom() {
	mkdir -p "$NR/dir"
	lt_bg "$NR/out.jsonl" "$NR/err" -b -i "$INTERVAL" -j - -- setarch "$(uname -m)" -R \
		"$PROGS/exec_leak" "$NR/dir" "$PROGS/simple_leak" "$NR/dir"
	wait_file "$NR/dir/ready_exec" || return 1
	NR_PID=$(pid_in "$NR/dir/ready_exec")
	wait_two_more "$NR/out.jsonl" || return 1
	touch "$NR/dir/go_exec"
	wait_file "$NR/dir/done" || return 1
	wait_two_more "$NR/out.jsonl" || return 1
	touch "$NR/dir/quit"
	wait_exit "$LT_PID" || return 1
	expect_eq "leaktop's exit status" 0 "$WAIT_STATUS" || return 1
	last_entry "$NR/out.jsonl" "$NR_PID" "$NR/old.json" leak_before_exec
	last_entry "$NR/out.jsonl" "$NR_PID" "$NR/new.json" leak_simple
}

test_exec_without_aslr_new_image_does_not_free_old_image_blocks() {
	scenario run_exec_norandom || return 1
	expect_site "$NR/old.json" "$NR_PID" leak_before_exec 4 492 4 0 || return 1
	expect_site "$NR/new.json" "$NR_PID" leak_simple 3 192 3 0
}

# ------------------------------------------------------------ maps read after the next exec
#
# exec_leak (image A) leaks 4 x 123 bytes and at once execs simple_leak (image B), while
# leaktop is stopped; when it resumes, A is gone and /proc shows B.  A's frames must then be
# unresolved (null), never resolved against B's files; and A must not carry B's name.  ASLR
# is off so that A's addresses fall inside B's mappings, which makes a mix-up visible.

LM=$E2E_TMP/late_maps
LM_PID=""

run_late_maps() {
	mkdir -p "$LM/1" "$LM/2" "$LM/3"
	touch "$LM/2/go_exec"	# the second exec_leak goes on at once
	lt_bg "$LM/out.jsonl" "$LM/err" -b -i "$INTERVAL" -j - -- setarch "$(uname -m)" -R \
		"$PROGS/exec_leak" "$LM/1" "$PROGS/exec_leak" "$LM/2" "$PROGS/simple_leak" "$LM/3"
	wait_file "$LM/1/ready_exec" || return 1
	LM_PID=$(pid_in "$LM/1/ready_exec")
	wait_two_more "$LM/out.jsonl" || return 1
	signal STOP "$LT_PID"
	touch "$LM/1/go_exec"
	wait_file "$LM/3/done"
	local ok=$?
	signal CONT "$LT_PID"
	[ "$ok" = 0 ] || return 1
	wait_two_more "$LM/out.jsonl" || return 1
	touch "$LM/3/quit"
	wait_exit "$LT_PID" || return 1
	expect_eq "leaktop's exit status" 0 "$WAIT_STATUS"
}

# jq: over every snapshot, the distinct values of EXPR for the sites (or their processes)
# of the pid whose blocks are 123 bytes (the exec_leak images').
LM_OLD_SITES='[.[] | .processes[] | select(.pid == $pid) | . as $p | .sites[] |
	select(.kind == "heap" and .allocs > 0 and .alloc_bytes == .allocs * 123)'

test_image_gone_before_its_maps_are_read_gets_no_symbols_of_the_next_program() {
	local got
	scenario run_late_maps || return 1
	got=$(jqs "$LM/out.jsonl" "$LM_OLD_SITES | .stack[0].symbol] | unique" \
		--argjson pid "$LM_PID")
	[ "$got" = '["leak_before_exec"]' ] || [ "$got" = '[null,"leak_before_exec"]' ] ||
		fail_because "functions given for exec_leak's 123-byte blocks: $got; expected" \
			"leak_before_exec or null (unknown), never another program's function"
}

test_image_gone_before_its_maps_are_read_gets_no_name_of_the_next_program() {
	local got
	scenario run_late_maps || return 1
	got=$(jqs "$LM/out.jsonl" "$LM_OLD_SITES | \$p.comm] | unique" --argjson pid "$LM_PID")
	[ "$got" = '["exec_leak"]' ] || [ "$got" = '[null,"exec_leak"]' ] ||
		fail_because "comm of the images holding exec_leak's 123-byte blocks: $got;" \
			"expected exec_leak or null"
}

# ------------------------------------------------------------ a child exiting mid-trace

EE=$E2E_TMP/early
EE_CHILD="" EE_PARENT=""
EE_ALIVE_AFTER=""

# Has the child been reported, and is there a snapshot after its last appearance?
child_reported_then_dropped() {
	[ "$(jqs "$EE/out.jsonl" '(map(any(.processes[]; .pid == $c)) | rindex(true)) as $i |
		$i != null and $i < length - 1' --argjson c "$EE_CHILD")" = true ]
}

run_early_exit() {
	mkdir -p "$EE/dir"
	lt_bg "$EE/out.jsonl" "$EE/err" -b -i "$INTERVAL" -j - -- "$PROGS/early_exit" "$EE/dir"
	wait_file "$EE/dir/child_pid" || return 1
	EE_CHILD=$(pid_in "$EE/dir/child_pid")
	wait_until "the exited child $EE_CHILD to be reported, then left out" \
		child_reported_then_dropped || return 1
	# leaktop goes on: still running, still writing snapshots.
	kill -0 "$LT_PID" 2>/dev/null && EE_ALIVE_AFTER=yes
	wait_two_more "$EE/out.jsonl" || return 1
	kill -0 "$LT_PID" 2>/dev/null || EE_ALIVE_AFTER=""
	touch "$EE/dir/quit"
	wait_exit "$LT_PID" || return 1
	EE_STATUS=$WAIT_STATUS
	last_line "$EE/out.jsonl" "$EE/final.json"
	EE_PARENT=$(jqc "$EE/final.json" '[.processes[] | select(any(.sites[];
		.stack[0].symbol == "leak_in_parent_end")) | .pid][0]')
	last_entry "$EE/out.jsonl" "$EE_CHILD" "$EE/child.json"
}

test_child_exiting_mid_trace_reported_exited_then_dropped() {
	scenario run_early_exit || return 1
	expect_jq "[exited, number of heap sites] of the child's last entry" '[[true,1]]' \
		"$EE/child.json" '[procs($pid) | [.exited, ([.sites[] | select(.kind == "heap")] |
		 length)]]' \
		--argjson pid "$EE_CHILD" || return 1
	expect_jq "entries for the child in the final snapshot" 0 "$EE/final.json" \
		'[procs($pid)] | length' --argjson pid "$EE_CHILD"
}

test_leaktop_keeps_running_after_traced_child_exits() {
	scenario run_early_exit || return 1
	expect_eq "leaktop alive and writing snapshots after the child's exit" yes \
		"$EE_ALIVE_AFTER" || return 1
	expect_eq "leaktop's exit status" 0 "$EE_STATUS" || return 1
	expect_eq "leaktop's stderr" "leaktop: $PROGS/early_exit exited with status 0" \
		"$(cat "$EE/err")"
}

test_parent_leak_after_child_exit_counted() {
	scenario run_early_exit || return 1
	[ "$EE_PARENT" != null ] || fail_because "no process with a leak_in_parent_end site" ||
		return 1
	expect_site "$EE/final.json" "$EE_PARENT" leak_in_parent_end 1 10 1 0 || return 1
	expect_no_site "$EE/final.json" "$EE_PARENT" leak_in_short_child
}

test_mid_trace_exit_run_has_no_drops() {
	scenario run_early_exit || return 1
	expect_no_drops "$EE/out.jsonl" jsonl
}

# ------------------------------------------------------------ images gone before leaktop looks
#
# leaktop learns about forks and execs from a ring buffer and reads the new image's memory
# map from /proc afterwards.  A process that exits before leaktop gets there (it exits in
# a millisecond, or leaktop is not scheduled for a while) must still be reported with
# resolved stacks: the allocations were recorded by BPF.  The tests make "leaktop is late"
# deterministic by stopping leaktop (SIGSTOP) while the short-lived image runs and exits.

SF=$E2E_TMP/stopped_fork
SF_CHILD=""

run_stopped_fork() {
	mkdir -p "$SF/dir"
	lt_bg "$SF/out.jsonl" "$SF/err" -b -i "$INTERVAL" -j - -- "$PROGS/early_exit" "$SF/dir" go
	wait_file "$SF/dir/ready" || return 1
	wait_two_more "$SF/out.jsonl" || return 1
	signal STOP "$LT_PID"
	touch "$SF/dir/go"
	# The parent writes child_pid after reaping the child: the child is gone.
	wait_file "$SF/dir/child_pid"
	local ok=$?
	signal CONT "$LT_PID"
	[ "$ok" = 0 ] || return 1
	SF_CHILD=$(pid_in "$SF/dir/child_pid")
	wait_two_more "$SF/out.jsonl" || return 1
	touch "$SF/dir/quit"
	wait_exit "$LT_PID" || return 1
	expect_eq "leaktop's exit status" 0 "$WAIT_STATUS" || return 1
	last_entry "$SF/out.jsonl" "$SF_CHILD" "$SF/child.json"
}

test_fork_child_gone_before_leaktop_looks_is_still_symbolized() {
	scenario run_stopped_fork || return 1
	expect_site "$SF/child.json" "$SF_CHILD" leak_in_short_child 2 198 2 0 || return 1
	expect_site_location "$SF/child.json" "$SF_CHILD" leak_in_short_child early_exit.c \
		short_child main early_exit
}

test_comm_of_child_gone_before_leaktop_looks_is_name_or_null() {
	scenario run_stopped_fork || return 1
	# The child is a fork of early_exit; if leaktop cannot know its name it says null.
	local got
	got=$(jqc "$SF/child.json" '[procs($pid) | .comm]' --argjson pid "$SF_CHILD")
	[ "$got" = '["early_exit"]' ] || [ "$got" = '[null]' ] ||
		fail_because "comm of the child: got $got, expected [\"early_exit\"] or [null]"
}

SE=$E2E_TMP/stopped_exec
SE_PID=""

run_stopped_exec() {
	mkdir -p "$SE/dir"
	# simple_leak without a directory leaks and exits at once.
	lt_bg "$SE/out.jsonl" "$SE/err" -b -i "$INTERVAL" -j - -- "$PROGS/exec_leak" "$SE/dir" \
		"$PROGS/simple_leak"
	wait_file "$SE/dir/ready_exec" || return 1
	SE_PID=$(pid_in "$SE/dir/ready_exec")
	wait_two_more "$SE/out.jsonl" || return 1
	signal STOP "$LT_PID"
	touch "$SE/dir/go_exec"
	wait_until "pid $SE_PID to exec and exit" is_zombie "$SE_PID"
	local ok=$?
	signal CONT "$LT_PID"
	[ "$ok" = 0 ] || return 1
	wait_exit "$LT_PID" || return 1
	expect_eq "leaktop's exit status" 0 "$WAIT_STATUS" || return 1
	last_line "$SE/out.jsonl" "$SE/final.json"
}

test_exec_image_gone_before_leaktop_looks_is_still_symbolized() {
	scenario run_stopped_exec || return 1
	expect_site "$SE/final.json" "$SE_PID" leak_simple 3 192 3 0 || return 1
	expect_site_location "$SE/final.json" "$SE_PID" leak_simple simple_leak.c simple main \
		simple_leak
}

# ------------------------------------------------------------ every run

# Runs after every other test of this script: no run above lost an event.
test_every_run_of_this_script_dropped_nothing() {
	expect_no_drops_anywhere
}

run_tests
