#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# teardown.sh - leaktop's probes are file descriptors of its own process (uprobe_multi BPF
# links, or uprobe PMU perf events where those are missing or LEAKTOP_NO_UPROBE_MULTI is
# set; under --, perf events on tracefs uprobe events), so even SIGKILL leaves nothing
# attached.  What SIGKILL leaves under -- is the tracefs definitions, inert: the next
# leaktop removes them.
#
# While leaktop runs (-p on a waiting program), the test records what belongs to it: the
# probes its uprobe_multi links hold (their fdinfo), the uprobes `bpftool perf` lists for its
# pid, and the ids of its BPF links, programs and maps.  After SIGKILL none of those may
# remain anywhere.  Other
# leaktop instances may run on the machine at the same time: only ids recorded from this one
# are looked for.

. "$(dirname "$0")/lib.sh"
require_root
require_built waiter
command -v bpftool >/dev/null || { echo "FAIL $(basename "$0"): bpftool is not installed"; exit 1; }

KL=$E2E_TMP/sigkill
KL_LT="" KL_W=""
KL_MULTI_PROBES=0 KL_UPROBES="" KL_PROBES_STAT="" KL_LINKS="" KL_PROGS="" KL_MAPS=""
KL_STATUS="" KL_W_STATUS=""

# ids_in_fdinfo PID KEY: sorted ids (e.g. link_id, map_id) from the fdinfo of PID's files.
ids_in_fdinfo() {
	cat /proc/"$1"/fdinfo/* 2>/dev/null | awk -v k="$2:" '$1 == k { print $2 }' | sort -nu |
		paste -sd, -
}

# multi_probes PID: the probes PID's uprobe_multi and uretprobe_multi links hold.
multi_probes() {
	cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '
		$1 == "link_type:" { multi = ($2 == "uprobe_multi" || $2 == "uretprobe_multi") }
		$1 == "uprobe_cnt:" && multi { n += $2 }
		END { print n + 0 }'
}

# perf_uprobes PID: the uprobes `bpftool perf` lists for PID.
perf_uprobes() {
	bpftool perf -j | jq --argjson p "$1" \
		'[.[] | select(.pid == $p and (.fd_type == "uprobe" or .fd_type == "uretprobe"))] |
		 length'
}

# Ids (comma-separated) still listed by `bpftool OBJ -j` among those in LIST.
still_listed() {
	local obj=$1 list=$2
	bpftool "$obj" -j 2>/dev/null | jq -r --arg l "$list" \
		'($l | split(",") | map(tonumber)) as $ids | [.[] | .id | select(. as $i |
		 $ids | index($i))] | map(tostring) | join(",")'
}
none_listed() { [ -z "$(still_listed "$1" "$2")" ]; }

run_sigkill() {
	mkdir -p "$KL/dir"
	"$PROGS/waiter" "$KL/dir" go &
	KL_W=$!
	BG_PIDS+=("$KL_W")
	wait_file "$KL/dir/ready" || return 1
	lt_bg "$KL/out" "$KL/err" -b -i "$INTERVAL" -j "$KL/snap.json" -p "$KL_W"
	KL_LT=$LT_PID
	wait_snapshot_file "$KL/snap.json" "$KL/err" || return 1

	KL_MULTI_PROBES=$(multi_probes "$KL_LT")
	KL_UPROBES=$(perf_uprobes "$KL_LT")
	KL_PROBES_STAT=$(jq .stats.probes "$KL/snap.json")
	KL_PROGS=$(bpftool perf -j | jq -r --argjson p "$KL_LT" \
		'[.[] | select(.pid == $p) | .prog_id] | unique | map(tostring) | join(",")')
	KL_LINKS=$(ids_in_fdinfo "$KL_LT" link_id)
	KL_MAPS=$(ids_in_fdinfo "$KL_LT" map_id)

	# (stderr: no "Killed" job notice from bash)
	{
		signal KILL "$KL_LT"
		wait_exit "$KL_LT"
	} 2>/dev/null || return 1
	KL_STATUS=$WAIT_STATUS

	# The traced program goes on normally.
	touch "$KL/dir/go"
	wait_file "$KL/dir/done" || return 1
	touch "$KL/dir/quit"
	wait_exit "$KL_W" || return 1
	KL_W_STATUS=$WAIT_STATUS
}

test_probes_are_uprobe_multi_links_of_leaktop() {
	scenario run_sigkill || return 1
	[ "$KL_MULTI_PROBES" -gt 0 ] ||
		fail_because "leaktop held no uprobe_multi link while running" || return 1
	expect_eq "perf-event uprobes of leaktop" 0 "$KL_UPROBES" || return 1
	expect_eq "probes its links hold vs stats.probes" "$KL_PROBES_STAT" "$KL_MULTI_PROBES"
}

# The older path, one perf event per probe (kernels before 6.6), forced.
PE=$E2E_TMP/perf_path
run_perf_path() {
	mkdir -p "$PE/dir"
	"$PROGS/waiter" "$PE/dir" go &
	PE_W=$!
	BG_PIDS+=("$PE_W")
	wait_file "$PE/dir/ready" || return 1
	LEAKTOP_NO_UPROBE_MULTI=1 lt_bg "$PE/out" "$PE/err" -b -i "$INTERVAL" -j "$PE/snap.json" \
		-p "$PE_W"
	wait_snapshot_file "$PE/snap.json" "$PE/err" || return 1
	PE_UPROBES=$(perf_uprobes "$LT_PID")
	PE_MULTI=$(multi_probes "$LT_PID")
	touch "$PE/dir/go"
	wait_file "$PE/dir/done" || return 1
	wait_until "the waiter's 5 blocks in $PE/snap.json" json_true "$PE/snap.json" \
		'[.processes[].sites[] | select(.stack[0].symbol == "leak_after_go") |
		  .outstanding_count] == [5]' || return 1
	PE_PROBES_STAT=$(jq .stats.probes "$PE/snap.json")
	signal INT "$LT_PID"
	wait_exit "$LT_PID" || return 1
	PE_STATUS=$WAIT_STATUS
	touch "$PE/dir/quit"
	wait_exit "$PE_W"
}

test_perf_event_path_attaches_every_probe_and_counts() {
	scenario run_perf_path || return 1
	expect_eq "leaktop's exit status" 0 "$PE_STATUS" || return 1
	expect_eq "uprobe_multi probes with LEAKTOP_NO_UPROBE_MULTI" 0 "$PE_MULTI" || return 1
	expect_eq "perf-event uprobes vs stats.probes" "$PE_PROBES_STAT" "$PE_UPROBES"
}

test_sigkill_leaves_no_uprobe_attached() {
	scenario run_sigkill || return 1
	expect_eq "leaktop's exit status" 137 "$KL_STATUS" || return 1
	expect_eq "bpftool perf entries of the dead pid $KL_LT" 0 \
		"$(bpftool perf -j | jq --argjson p "$KL_LT" '[.[] | select(.pid == $p)] | length')" ||
		return 1
	# No perf event of any process runs the dead leaktop's programs.
	expect_eq "bpftool perf entries running its programs ($KL_PROGS)" "" \
		"$(bpftool perf -j | jq -r --arg l "$KL_PROGS" '($l | split(",") | map(tonumber)) as
		   $ids | [.[] | select(.prog_id as $i | $ids | index($i)) | .pid] | unique |
		   map(tostring) | join(",")')"
}

test_sigkill_releases_bpf_links_programs_and_maps() {
	scenario run_sigkill || return 1
	[ -n "$KL_LINKS" ] && [ -n "$KL_PROGS" ] && [ -n "$KL_MAPS" ] ||
		fail_because "recorded no link, program or map ids (links '$KL_LINKS'," \
			"programs '$KL_PROGS', maps '$KL_MAPS')" || return 1
	# The kernel frees them as the last reference goes; that may lag the exit a little.
	wait_until "links $KL_LINKS to be gone" none_listed link "$KL_LINKS" || {
		FAIL_MSG="$FAIL_MSG; still listed: $(still_listed link "$KL_LINKS")"
		return 1
	}
	wait_until "programs $KL_PROGS to be gone" none_listed prog "$KL_PROGS" || {
		FAIL_MSG="$FAIL_MSG; still listed: $(still_listed prog "$KL_PROGS")"
		return 1
	}
	wait_until "maps $KL_MAPS to be gone" none_listed map "$KL_MAPS" || {
		FAIL_MSG="$FAIL_MSG; still listed: $(still_listed map "$KL_MAPS")"
		return 1
	}
}

test_traced_program_unaffected_by_sigkill_of_leaktop() {
	scenario run_sigkill || return 1
	expect_eq "exit status of the program leaktop traced" 0 "$KL_W_STATUS"
}

# ------------------------------------------------------------ -- and SIGKILL
#
# Under --, the probes are tracefs uprobe events of the group leaktop_<pid>.  SIGKILL closes
# the perf events (the command's breakpoints go) and leaves the definitions behind; the
# next leaktop removes the groups of pids that no longer run.  The test reads tracefs
# through a mount in a mount namespace of its own (the system's mounts stay as they are).

TK=$E2E_TMP/tree_sigkill
TK_LT="" TK_W="" TK_STATUS=""
TK_BYTE_RUNNING="" TK_BYTE_KILLED="" TK_GROUPS_RUNNING="" TK_GROUPS_KILLED="" TK_GROUPS_NEXT=""

# uprobe_groups: the leaktop_<pid> groups defined in tracefs, one a line.
uprobe_groups() {
	mkdir -p "$TK/tracefs"
	unshare -m sh -c 'mount -t tracefs none "$1" && cat "$1/uprobe_events"' sh "$TK/tracefs" |
		grep -o 'leaktop_[0-9]*' | sort -u
}

run_tree_sigkill() {
	local where
	mkdir -p "$TK/dir"
	lt_bg "$TK/out" "$TK/err" -v -b -i "$INTERVAL" -j "$TK/snap.json" -- \
		"$PROGS/waiter" "$TK/dir" go
	TK_LT=$LT_PID
	wait_file "$TK/dir/ready" || return 1
	TK_W=$(pid_in "$TK/dir/ready")
	wait_snapshot_file "$TK/snap.json" "$TK/err" || return 1
	where=$(probed_at "$TK/err" malloc)
	[ -n "$where" ] || fail_because "leaktop -v named no malloc offset: $(cat "$TK/err")" ||
		return 1
	TK_BYTE_RUNNING=$(text_byte "$TK_W" $where)
	TK_GROUPS_RUNNING=$(uprobe_groups)
	{
		signal KILL "$TK_LT"
		wait_exit "$TK_LT"
	} 2>/dev/null || return 1
	TK_STATUS=$WAIT_STATUS
	TK_BYTE_KILLED=$(text_byte "$TK_W" $where)
	TK_GROUPS_KILLED=$(uprobe_groups)
	# The command goes on normally, on its own.
	touch "$TK/dir/go"
	wait_file "$TK/dir/done" || return 1
	touch "$TK/dir/quit"
	wait_until "the orphaned command $TK_W to end" not_running "$TK_W" || return 1
	# The next leaktop (any mode that attaches a tree) removes the leftover.
	lt_fg "$TK/next.out" "$TK/next.err" -b -i "$INTERVAL" -- true
	[ "$LT_STATUS" = 0 ] || fail_because "the next leaktop ended with $LT_STATUS:" \
		"$(cat "$TK/next.err")" || return 1
	TK_GROUPS_NEXT=$(uprobe_groups)
}

test_sigkill_of_command_mode_leaves_no_breakpoint_in_the_command() {
	scenario run_tree_sigkill || return 1
	expect_eq "leaktop's exit status" 137 "$TK_STATUS" || return 1
	expect_eq "the byte at malloc in the command while leaktop ran" cc "$TK_BYTE_RUNNING" ||
		return 1
	[ "$TK_BYTE_KILLED" != cc ] && [ "$TK_BYTE_KILLED" != none ] &&
		[ "$TK_BYTE_KILLED" != unreadable ] ||
		fail_because "the byte at malloc in the command after SIGKILL: got" \
			"'$TK_BYTE_KILLED', expected the instruction, not a breakpoint"
}

test_next_leaktop_removes_the_definitions_a_killed_one_left() {
	scenario run_tree_sigkill || return 1
	grep -qx "leaktop_$TK_LT" <<<"$TK_GROUPS_RUNNING" ||
		fail_because "no group leaktop_$TK_LT in tracefs while it ran" || return 1
	grep -qx "leaktop_$TK_LT" <<<"$TK_GROUPS_KILLED" ||
		fail_because "group leaktop_$TK_LT gone right after SIGKILL: the test shows" \
			"nothing" || return 1
	! grep -qx "leaktop_$TK_LT" <<<"$TK_GROUPS_NEXT" ||
		fail_because "group leaktop_$TK_LT still defined after the next leaktop ran"
}

test_clean_exit_of_command_mode_removes_its_definitions() {
	scenario run_tree_sigkill || return 1
	# Groups after the next leaktop ended that were not there before it: its own.
	expect_eq "groups the next leaktop left" "" \
		"$(comm -13 <(echo "$TK_GROUPS_KILLED") <(echo "$TK_GROUPS_NEXT") | paste -sd' ')"
}

# ------------------------------------------------------------ every run

# Runs after every other test of this script: no run above lost an event.
test_every_run_of_this_script_dropped_nothing() {
	expect_no_drops_anywhere
}

run_tests
