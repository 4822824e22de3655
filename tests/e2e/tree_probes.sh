#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# tree_probes.sh - `leaktop -- CMD`'s probes stay in every process of the tree: a descendant
# of CMD (not CMD itself) that runs short-lived programs (fork+exec, posix_spawn) keeps its
# breakpoints after those children exit, and its later calls are counted.
#
# The kernel may swap the perf contexts of a parent and its child when it switches straight
# from one to the other (their inherited events are clones); the child's exit then closed the
# parent's events, and the kernel's uprobe filter, finding no event of the parent's memory
# left, took the breakpoints out of it.  spawn_exit's worker and its children share one CPU
# and the worker waits for each child, so such a switch happens on nearly every run.

. "$(dirname "$0")/lib.sh"
require_root
require_built spawn_exit

SP=$E2E_TMP/spawn
SP_WORKER=""

run_spawn() {
	mkdir -p "$SP/dir"
	lt_bg "$SP/out.jsonl" "$SP/err" -v -b -i "$INTERVAL" -j - -- "$PROGS/spawn_exit" "$SP/dir"
	wait_file "$SP/dir/done" || return 1
	SP_WORKER=$(pid_in "$SP/dir/done")
	wait_two_more "$SP/out.jsonl" || return 1
	last_line "$SP/out.jsonl" "$SP/alive.json"
	set -- $(probed_at "$SP/err" malloc)
	SP_MALLOC_BYTE=$(text_byte "$SP_WORKER" "$1" "$2")
	touch "$SP/dir/quit"
	wait_exit "$LT_PID" || return 1
	expect_eq "leaktop's exit status" 0 "$WAIT_STATUS" || return 1
	last_entry "$SP/out.jsonl" "$SP_WORKER" "$SP/worker.json"
}

test_descendant_keeps_its_breakpoints_after_its_children_exit() {
	scenario run_spawn || return 1
	expect_eq "first byte of malloc in the worker after its children exited" cc \
		"$SP_MALLOC_BYTE"
}

test_descendant_calls_after_its_children_exit_are_counted() {
	scenario run_spawn || return 1
	expect_site "$SP/worker.json" "$SP_WORKER" leak_after_spawns 5 3885 5 0 || return 1
	expect_site_location "$SP/worker.json" "$SP_WORKER" leak_after_spawns spawn_exit.c \
		spawns worker spawn_exit
}

test_descendant_frees_after_its_children_exit_are_counted() {
	scenario run_spawn || return 1
	expect_site "$SP/worker.json" "$SP_WORKER" churn_after_spawns 0 0 100 100
}

test_tree_probes_run_has_no_drops() {
	scenario run_spawn || return 1
	expect_no_drops "$SP/out.jsonl" jsonl
}

run_tests
