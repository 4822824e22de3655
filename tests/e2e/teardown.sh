#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# teardown.sh - leaktop's probes are file descriptors of its own process (uprobe_multi BPF
# links, or uprobe PMU perf events where those are missing or LEAKTOP_NO_UPROBE_MULTI is
# set), never tracefs entries, so even SIGKILL leaves nothing attached.
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

# ------------------------------------------------------------ every run

# Runs after every other test of this script: no run above lost an event.
test_every_run_of_this_script_dropped_nothing() {
	expect_no_drops_anywhere
}

run_tests
