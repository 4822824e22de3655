#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# libc_files.sh - the allocator probes go into exactly the libc file a process maps, and
# into nothing a traced process can name instead.
#
# - A "container" (a private mount namespace; unprivileged users can make one with
#   `unshare -Urm`) runs a waiter on its own copy of libc, then covers that copy with a
#   tmpfs holding a symbolic link of the same name: to a host FIFO, or to a host file.  The
#   waiter's maps still name the copy, which the host does not have; through
#   /proc/PID/root the name now leads out of the container.  Whole-system leaktop must
#   neither open the FIFO (nor hang on it) nor put a breakpoint into the host file, and
#   must trace the waiter's leak through the file it really maps.
# - A process whose libc was deleted after it started (a libc update without a restart of
#   the service): `-p PID` and whole-system mode trace its leaks, and whole-system mode
#   probes that deleted file once for every process mapping it.
#
# tests/progs/file_watch.c reports whether a file was opened (inotify) or had a breakpoint
# written into it (a private mapping of the file no longer matches the file).

. "$(dirname "$0")/lib.sh"
require_root
require_built waiter file_watch

LIBC=$(readlink -f "$(ldd "$PROGS/waiter" | awk '/libc\.so/ {print $3}')")

# container DIR TARGET: start a waiter (handshake directory DIR/w) in a private mount
# namespace, on its own copy of libc at DIR/mnt/d/libc.so.6, on a tmpfs only that
# namespace sees; once the waiter runs, cover DIR/mnt/d with another tmpfs holding the
# symbolic link libc.so.6 -> TARGET.  The waiter's pid goes to CT_PID.
CT_PID=""
container() {
	local dir=$1 target=$2 m=$1/mnt
	mkdir -p "$m" "$dir/w"
	# shellcheck disable=SC2016
	unshare -m --propagation private sh -c '
		m=$1 w=$2 libc=$3 waiter=$4 target=$5 i=0
		mount -t tmpfs none "$m" && mkdir "$m/d" && cp "$libc" "$m/d/libc.so.6" || exit 1
		LD_LIBRARY_PATH="$m/d" "$waiter" "$w" go &
		while [ ! -e "$w/ready" ]; do
			i=$((i + 1))
			[ "$i" -lt 600 ] || exit 1
			sleep 0.05
		done
		mount -t tmpfs none "$m/d" && ln -s "$target" "$m/d/libc.so.6" &&
			: >"$w/trapped" || exit 1
		wait' sh "$m" "$dir/w" "$LIBC" "$PROGS/waiter" "$target" &
	BG_PIDS+=("$!")
	wait_file "$dir/w/trapped" || return 1
	CT_PID=$(pid_in "$dir/w/ready")
	grep -q " $m/d/libc\.so\.6\$" "/proc/$CT_PID/maps" ||
		fail_because "the container's waiter does not map $m/d/libc.so.6" || return 1
	[ ! -e "$m/d/libc.so.6" ] ||
		fail_because "$m/d/libc.so.6 is visible outside the container" || return 1
	expect_eq "where the container's libc.so.6 leads" "$target" \
		"$(readlink "/proc/$CT_PID/root$m/d/libc.so.6")"
}

# file_watch MODE DIR FILE: start tests/progs/file_watch and wait until it watches FILE.
file_watch() {
	mkdir -p "$2"
	"$PROGS/file_watch" "$@" &
	BG_PIDS+=("$!")
	wait_file "$2/ready"
}

# verdict DIR: ask a file_watch for its verdict (it then exits); it goes to VERDICT.
VERDICT="" CONTROL_VERDICT=""
verdict() {
	touch "$1/go"
	wait_file "$1/result" || return 1
	VERDICT=$(cat "$1/result")
}

# The first snapshot, or leaktop blocked opening a FIFO (the kernel's wait for a writer).
snapshot_or_fifo_wait() {
	[ -e "$1" ] || ! kill -0 "$LT_PID" 2>/dev/null || lt_waits_on_fifo
}
lt_waits_on_fifo() { [ "$(cat "/proc/$LT_PID/wchan" 2>/dev/null)" = wait_for_partner ]; }

# container_run DIR [FIFO]: whole-system leaktop while the container's waiter leaks;
# DIR/watch (a file_watch) gives its verdict (into VERDICT) once leaktop has attached, and
# so does DIR/control if there is one (into CONTROL_VERDICT).
# leaktop's exit status goes to LT_STATUS.  Whatever happens, the waiter is told to quit
# and has ended on return, so no later whole-system run meets this container.
container_run() {
	local dir=$1 fifo=${2:-} status
	container_trace "$dir" "$fifo"
	status=$?
	touch "$dir/w/quit"
	WAIT_LIMIT=$EXIT_WAIT_S wait_until "the container's waiter to exit" \
		not_running "$CT_PID" || status=1
	return "$status"
}

container_trace() {
	local dir=$1 fifo=$2 fd
	lt_bg "$dir/out" "$dir/err" -b -i "$INTERVAL" --exact -j "$dir/snap.json"
	wait_until "leaktop's first snapshot in $dir/snap.json" \
		snapshot_or_fifo_wait "$dir/snap.json" || return 1
	if lt_waits_on_fifo; then
		# Let it go (opening for reading and writing at once never blocks), and end it.
		[ -z "$fifo" ] || { exec {fd}<>"$fifo"; exec {fd}>&-; }
		signal KILL "$LT_PID"
		fail_because "leaktop blocks opening a FIFO (wchan wait_for_partner)"
		return 1
	fi
	[ -e "$dir/snap.json" ] ||
		fail_because "leaktop ended before its first snapshot; its stderr: $(cat "$dir/err")" ||
		return 1
	# The probes are in place before the first snapshot.
	if [ -d "$dir/control" ]; then
		verdict "$dir/control" || return 1
		CONTROL_VERDICT=$VERDICT
	fi
	verdict "$dir/watch" || return 1
	touch "$dir/w/go"
	wait_file "$dir/w/done" || return 1
	# Not seeing them is for the tests on the snapshot to tell, with the numbers.
	wait_until "the container's leaks in $dir/snap.json" json_true "$dir/snap.json" \
		'[procs($p) | sites_at("leak_after_go") | .outstanding_count] == [5]' \
		--argjson p "$CT_PID"
	signal INT "$LT_PID"
	wait_exit "$LT_PID" || return 1
	LT_STATUS=$WAIT_STATUS
}

# ------------------------------------------------------------ a container's link to a FIFO

CF=$E2E_TMP/container_fifo
CF_PID="" CF_STATUS="" CF_VERDICT=""

run_container_fifo() {
	mkdir -p "$CF"
	mkfifo "$CF/trap" || return 1
	file_watch opens "$CF/watch" "$CF/trap" || return 1
	container "$CF" "$CF/trap" || return 1
	CF_PID=$CT_PID
	container_run "$CF" "$CF/trap" || return 1
	CF_STATUS=$LT_STATUS
	CF_VERDICT=$VERDICT
}

test_system_mode_stays_responsive_when_a_container_links_its_libc_to_a_fifo() {
	scenario run_container_fifo || return 1
	expect_eq "leaktop's exit status after SIGINT" 0 "$CF_STATUS"
}

test_system_mode_never_opens_a_fifo_a_container_links_its_libc_to() {
	scenario run_container_fifo || return 1
	expect_eq "opens of the FIFO while leaktop ran" "not opened" "$CF_VERDICT"
}

test_system_mode_traces_a_container_through_the_libc_it_maps() {
	scenario run_container_fifo || return 1
	expect_site "$CF/snap.json" "$CF_PID" leak_after_go 5 1605 5 0 || return 1
	# The mapped file was reached: nothing to refuse.
	expect_jq "stats.libcs_refused" 0 "$CF/snap.json" '.stats.libcs_refused' || return 1
	expect_no_drops "$CF/snap.json"
}

# ------------------------------------------------------------ a container's link to a host file

CH=$E2E_TMP/container_host
CH_PID="" CH_STATUS="" CH_VERDICT="" CH_CONTROL=""

run_container_host() {
	mkdir -p "$CH"
	# A host file no process maps as its libc, though it has a malloc() to find: the
	# container's link must not get it probed.
	cp "$LIBC" "$CH/libhost.so" || return 1
	file_watch patches "$CH/watch" "$CH/libhost.so" || return 1
	# Control: the host's libc, which whole-system leaktop does probe.
	file_watch patches "$CH/control" "$LIBC" || return 1
	container "$CH" "$CH/libhost.so" || return 1
	CH_PID=$CT_PID
	container_run "$CH" || return 1
	CH_STATUS=$LT_STATUS
	CH_VERDICT=$VERDICT
	CH_CONTROL=$CONTROL_VERDICT
}

test_system_mode_never_probes_a_host_file_a_container_links_its_libc_to() {
	scenario run_container_host || return 1
	expect_match "breakpoints in the host's libc (control)" '^patched at ' "$CH_CONTROL" ||
		return 1
	expect_eq "breakpoints in the host file the container links to" unpatched "$CH_VERDICT"
}

test_system_mode_traces_a_container_whose_libc_name_leads_to_a_host_file() {
	scenario run_container_host || return 1
	expect_eq "leaktop's exit status after SIGINT" 0 "$CH_STATUS" || return 1
	expect_site "$CH/snap.json" "$CH_PID" leak_after_go 5 1605 5 0 || return 1
	expect_no_drops "$CH/snap.json"
}

# ------------------------------------------------------------ a deleted libc

# deleted_waiters DIR N: start N waiters (handshake directories DIR/w1..N) on one copy of
# libc in DIR/lib, then delete the copy; their pids go to DW_PIDS.
DW_PIDS=()
deleted_waiters() {
	local dir=$1 n=$2 i pid
	DW_PIDS=()
	mkdir -p "$dir/lib"
	cp "$LIBC" "$dir/lib/libc.so.6" || return 1
	for i in $(seq "$n"); do
		mkdir -p "$dir/w$i"
		LD_LIBRARY_PATH="$dir/lib" "$PROGS/waiter" "$dir/w$i" go &
		BG_PIDS+=("$!")
		DW_PIDS+=("$!")
	done
	for i in $(seq "$n"); do
		wait_file "$dir/w$i/ready" || return 1
	done
	rm "$dir/lib/libc.so.6"
	for pid in "${DW_PIDS[@]}"; do
		grep -q " $dir/lib/libc\.so\.6 (deleted)\$" "/proc/$pid/maps" ||
			fail_because "waiter $pid does not map the deleted $dir/lib/libc.so.6" ||
			return 1
	done
}

# deleted_run DIR N pid|system: N waiters on a deleted libc, and leaktop while they leak:
# with -p and their pids, or whole-system with -v.  LT_STATUS, and DIR/final.json.  The
# waiters are told to quit, and leaktop to stop, whatever happens.
deleted_run() {
	local dir=$1 n=$2 status i
	deleted_trace "$@"
	status=$?
	signal TERM "$LT_PID"
	for i in $(seq "$n"); do
		touch "$dir/w$i/quit"
	done
	return "$status"
}

deleted_trace() {
	local dir=$1 n=$2 mode=$3 i args=(-v --exact)
	deleted_waiters "$dir" "$n" || return 1
	[ "$mode" = system ] || args=(-p "$(IFS=,; echo "${DW_PIDS[*]}")")
	lt_bg "$dir/out" "$dir/err" -b -i "$INTERVAL" -j "$dir/snap.json" "${args[@]}"
	wait_snapshot_file "$dir/snap.json" "$dir/err" || return 1
	for i in $(seq "$n"); do
		touch "$dir/w$i/go"
	done
	for i in $(seq "$n"); do
		wait_file "$dir/w$i/done" || return 1
	done
	wait_until "the waiters' leaks in $dir/snap.json" json_true "$dir/snap.json" \
		'[procs($p[]) | sites_at("leak_after_go") | .outstanding_count] == [$p[] | 5]' \
		--argjson p "$(printf '%s\n' "${DW_PIDS[@]}" | jq -s -c .)" || return 1
	signal INT "$LT_PID"
	wait_exit "$LT_PID" || return 1
	LT_STATUS=$WAIT_STATUS
	cp "$dir/snap.json" "$dir/final.json"
}

DP=$E2E_TMP/deleted_pid
DP_PID="" DP_STATUS=""

run_deleted_pid() {
	deleted_run "$DP" 1 pid || return 1
	DP_PID=${DW_PIDS[0]}
	DP_STATUS=$LT_STATUS
}

test_pid_mode_traces_a_process_whose_libc_was_deleted() {
	scenario run_deleted_pid || return 1
	expect_eq "leaktop's exit status after SIGINT" 0 "$DP_STATUS" || return 1
	expect_eq "leaktop's stderr" "" "$(cat "$DP/err")" || return 1
	expect_site "$DP/final.json" "$DP_PID" leak_after_go 5 1605 5 0 || return 1
	expect_jq "[heap.allocs, heap.frees]" '[5,0]' "$DP/final.json" \
		'[procs($p) | .heap.allocs, .heap.frees]' --argjson p "$DP_PID" || return 1
	expect_no_drops "$DP/final.json"
}

DS=$E2E_TMP/deleted_system
DS_STATUS="" DS_PIDS=()

run_deleted_system() {
	deleted_run "$DS" 2 system || return 1
	DS_PIDS=("${DW_PIDS[@]}")
	DS_STATUS=$LT_STATUS
}

test_system_mode_traces_processes_whose_libc_was_deleted() {
	local pid
	scenario run_deleted_system || return 1
	expect_eq "leaktop's exit status after SIGINT" 0 "$DS_STATUS" || return 1
	for pid in "${DS_PIDS[@]}"; do
		expect_site "$DS/final.json" "$pid" leak_after_go 5 1605 5 0 || return 1
	done
	expect_no_drops "$DS/final.json"
}

test_system_mode_probes_a_deleted_libc_once_for_all_its_processes() {
	scenario run_deleted_system || return 1
	# -v prints one line per probe: "leaktop: PATH: malloc at +0x... (entry +0x...) ...".
	expect_eq "malloc probes placed in $DS/lib/libc.so.6 (deleted)" 1 \
		"$(grep -cF "$DS/lib/libc.so.6 (deleted): malloc at " "$DS/err")"
}

run_tests
