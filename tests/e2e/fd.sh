#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# fd.sh - file descriptors per creating call site, in `leaktop -- CMD` mode.
#
# tests/progs/fd_kinds.c leaks descriptors of every common kind (files, a directory,
# sockets, pipes, dup/fcntl copies, eventfd, timerfd, epoll, memfd, signalfd, inotify,
# pidfd), each from its own function, and closes others again (open/close churn,
# close_range, dup2/dup3 over an open descriptor).  fd_net.c accepts TCP connections on
# 127.0.0.1 and passes descriptors with SCM_RIGHTS (recvmsg, recvmmsg); fd_repair.c closes
# more descriptors with one close_range() than leaktop takes off directly, so the rest are
# repaired from /proc/PID/fd; fd_exec.c opens close-on-exec descriptors and execs; fd_churn.c
# reopens one number from two sites while the census reads /proc/PID/fd.  The
# numbers below mirror those programs.
#
# Each program creates DIR/done and then waits (opening and closing nothing) until the test
# has counted /proc/PID/fd and stopped leaktop with SIGINT: leaktop's last snapshot is then
# collected while the program is alive, with the descriptor kinds and targets (fd_types,
# fd_samples) of its last reconciliation with /proc/PID/fd.

. "$(dirname "$0")/lib.sh"
require_root
require_built fd_kinds fd_net fd_exec fd_repair fd_churn

# jq definitions for fd sites, used with the helpers of lib.sh (jqc, expect_jq).
FD_DEFS='
def fd_sites_at($sym): .sites[] | select(.kind == "fd" and .stack[0].symbol == $sym);
def fdnums: [.outstanding_count, .allocs, .frees];
def fd_summary: [.sites[] | select(.kind == "fd") | [.stack[0].symbol, .stack[0].line,
	.stack[1].symbol, .outstanding_count, .allocs, .frees]];
'

# fd_site_list SNAP PID: the fd sites of PID as [function, line, caller, count, allocs,
# frees], for failure messages.
fd_site_list() {
	jqc "$1" "$FD_DEFS [procs(\$pid) | fd_summary][0]" --argjson pid "$2"
}

# expect_fd_site SNAP PID SYMBOL COUNT ALLOCS FREES
# Exactly one fd site of process PID opens from SYMBOL (stack[0]), with those outstanding
# count, allocs (opens) and frees (closes, repairs included).
expect_fd_site() {
	local file=$1 pid=$2 sym=$3 want="[[$4,$5,$6]]" got
	got=$(jqc "$file" "$FD_DEFS [procs(\$pid) | fd_sites_at(\$sym) | fdnums]" \
		--argjson pid "$pid" --arg sym "$sym")
	[ "$got" == "$want" ] ||
		fail_because "fd sites of pid $pid opening in $sym as [[count, allocs, frees]]:" \
			"got $got, expected $want; the process's fd sites as [function, line," \
			"caller, count, allocs, frees]: $(fd_site_list "$file" "$pid")"
}

# expect_fd_field SNAP PID SYMBOL FIELD WANT: FIELD (fd_types, fd_samples, repaired) of the
# one fd site of PID opening in SYMBOL, as compact JSON with sorted keys.
expect_fd_field() {
	local file=$1 pid=$2 sym=$3 field=$4 want=$5 got
	got=$(jqc "$file" "$FD_DEFS [procs(\$pid) | fd_sites_at(\$sym) | .$field]" -S \
		--argjson pid "$pid" --arg sym "$sym")
	[ "$got" == "[$want]" ] ||
		fail_because "$field of the fd site(s) of pid $pid opening in $sym: got $got," \
			"expected [$want]"
}

# expect_fd_site_location SNAP PID SYMBOL SRC MARKER CALLER MODULE
# The fd site's innermost frame is SYMBOL at SRC:line-of-MARKER in a module named MODULE,
# and the next frame is CALLER.
expect_fd_site_location() {
	local file=$1 pid=$2 sym=$3 src=$4 marker=$5 caller=$6 module=$7 line want got
	line=$(leak_line "$src" "$marker")
	[ -n "$line" ] || fail_because "no LEAK:$marker marker in $src" || return 1
	want="[{\"symbol\":\"$sym\",\"file\":\"$src\",\"line\":$line,"
	want+="\"module\":\"$module\",\"caller\":\"$caller\"}]"
	got=$(jqc "$file" "$FD_DEFS [procs(\$pid) | fd_sites_at(\$sym) | .stack |
		{symbol: .[0].symbol, file: (.[0].file | base), line: .[0].line,
		 module: (.[0].module | base), caller: .[1].symbol}]" \
		--argjson pid "$pid" --arg sym "$sym")
	[ "$got" == "$want" ] ||
		fail_because "location of the $sym fd site: got $got, expected $want; the" \
			"process's fd sites as [function, line, caller, count, allocs, frees]:" \
			"$(fd_site_list "$file" "$pid")"
}

# run_alive DIR PROG [LEAKTOP ARG...]: run `leaktop ARGS -- PROG DIR/dir`; once PROG has
# created DIR/dir/done (its pid goes to RUN_PID) and leaktop has written two more snapshots,
# count /proc/PID/fd into DIR/fd_entries (and the link targets into DIR/fd_links), stop
# leaktop with SIGINT and keep its last snapshot, taken with PROG alive, as DIR/final.json.
# (run_kinds and the like set their own PID variable from RUN_PID.)
RUN_PID=""
run_alive() {
	local d=$1 prog=$2
	shift 2
	mkdir -p "$d/dir"
	lt_bg "$d/out.jsonl" "$d/err" -b -i "$INTERVAL" -j - "$@" -- "$PROGS/$prog" "$d/dir"
	wait_file "$d/dir/done" || return 1
	RUN_PID=$(pid_in "$d/dir/done")
	wait_two_more "$d/out.jsonl" || return 1
	count_fds "$RUN_PID" "$d" || return 1
	kill -INT "$LT_PID"
	wait_exit "$LT_PID" || return 1
	touch "$d/dir/quit"
	expect_eq "leaktop's exit status (stderr: $(cat "$d/err"))" 0 "$WAIT_STATUS" || return 1
	last_line "$d/out.jsonl" "$d/final.json"
	[ -s "$d/final.json" ] || fail_because "leaktop wrote no snapshot; stderr: $(cat "$d/err")" ||
		return 1
	expect_jq "[exited, comm] of pid $RUN_PID in leaktop's last snapshot" "[[false,\"$prog\"]]" \
		"$d/final.json" '[procs($pid) | [.exited, .comm]]' --argjson pid "$RUN_PID"
}

# count_fds PID DIR: entries of /proc/PID/fd into DIR/fd_entries, their targets (one a
# line, "FD TARGET") into DIR/fd_links.
count_fds() {
	local pid=$1 d=$2 link
	[ -d "/proc/$pid/fd" ] || fail_because "process $pid ended before its fds were counted" ||
		return 1
	: >"$d/fd_links"
	for link in "/proc/$pid/fd"/*; do
		echo "${link##*/} $(readlink "$link")" >>"$d/fd_links"
	done
	wc -l <"$d/fd_links" | tr -d ' ' >"$d/fd_entries"
}

# The process's fd totals against /proc/PID/fd: fd_count is the number of entries, every
# entry is either outstanding at a site or untracked, and the totals are sums over sites.
expect_fd_totals_consistent() {
	local file=$1 pid=$2 entries=$3
	expect_jq "[fd_count, fd.outstanding_count + fd.untracked] (/proc/$pid/fd had $entries)" \
		"[$entries,$entries]" "$file" \
		'[procs($pid) | [.counters.fd_count, .fd.outstanding_count + .fd.untracked]][0]' \
		--argjson pid "$pid" || return 1
	expect_jq "fd totals [outstanding_count, opens, closes, repaired] minus sums over sites" \
		'[0,0,0,0]' "$file" \
		'[procs($pid) | . as $p | [.sites[] | select(.kind == "fd")] |
		  [($p.fd.outstanding_count - (map(.outstanding_count) | add)),
		   ($p.fd.opens - (map(.allocs) | add)),
		   ($p.fd.closes - (map(.frees) | add)),
		   ($p.fd.repaired - (map(.repaired) | add))]][0]' --argjson pid "$pid"
}

# ------------------------------------------------------------ every kind (fd_kinds)

FK=$E2E_TMP/kinds
FK_PID=""

run_kinds() {
	run_alive "$FK" fd_kinds || return 1
	FK_PID=$RUN_PID
}

fk() { scenario run_kinds; }

test_open_leaks_counted_at_leaking_function() {
	fk || return 1
	expect_fd_site "$FK/final.json" "$FK_PID" leak_open 3 3 0 || return 1
	expect_fd_site "$FK/final.json" "$FK_PID" leak_openat 2 2 0
}

test_file_site_has_file_type_and_path_sample() {
	fk || return 1
	expect_fd_field "$FK/final.json" "$FK_PID" leak_open fd_types '{"file":3}' || return 1
	expect_fd_field "$FK/final.json" "$FK_PID" leak_open fd_samples \
		"[\"$FK/dir/file_a\"]" || return 1
	expect_fd_field "$FK/final.json" "$FK_PID" leak_openat fd_types '{"file":2}' || return 1
	expect_fd_field "$FK/final.json" "$FK_PID" leak_openat fd_samples "[\"$FK/dir/file_b\"]"
}

test_directory_counted_with_dir_type() {
	fk || return 1
	expect_fd_site "$FK/final.json" "$FK_PID" leak_dir 1 1 0 || return 1
	expect_fd_field "$FK/final.json" "$FK_PID" leak_dir fd_types '{"dir":1}' || return 1
	expect_fd_field "$FK/final.json" "$FK_PID" leak_dir fd_samples "[\"$FK/dir\"]"
}

test_socket_leaks_counted_with_family_and_type() {
	fk || return 1
	expect_fd_site "$FK/final.json" "$FK_PID" leak_socket 3 3 0 || return 1
	expect_fd_field "$FK/final.json" "$FK_PID" leak_socket fd_types '{"socket":3}' || return 1
	# Samples in descriptor order, without repeats: two inet stream sockets, then one unix.
	expect_fd_field "$FK/final.json" "$FK_PID" leak_socket fd_samples \
		'["inet stream","unix dgram"]'
}

test_pipe_counts_two_descriptors_per_call() {
	fk || return 1
	expect_fd_site "$FK/final.json" "$FK_PID" leak_pipe 4 4 0 || return 1
	expect_fd_site "$FK/final.json" "$FK_PID" leak_pipe2 2 2 0 || return 1
	expect_fd_field "$FK/final.json" "$FK_PID" leak_pipe fd_types '{"pipe":4}' || return 1
	# Both ends of one pipe share its inode: two pipes, two distinct samples.
	expect_jq "fd_samples of leak_pipe: [count, all pipe:[inode], distinct]" '[[2,true,2]]' \
		"$FK/final.json" "$FD_DEFS [procs(\$pid) | fd_sites_at(\"leak_pipe\") |
		  .fd_samples | [length, all(test(\"^pipe:\\\\[[0-9]+\\\\]\$\")),
		  (unique | length)]]" --argjson pid "$FK_PID"
}

test_dup_copies_counted_at_dup_call() {
	fk || return 1
	expect_fd_site "$FK/final.json" "$FK_PID" leak_dup 2 2 0 || return 1
	expect_fd_field "$FK/final.json" "$FK_PID" leak_dup fd_types '{"file":2}' || return 1
	expect_fd_field "$FK/final.json" "$FK_PID" leak_dup fd_samples "[\"$FK/dir/file_a\"]"
}

test_fcntl_dupfd_counted_at_calling_function() {
	fk || return 1
	# fcntl(F_DUPFD_CLOEXEC) from leak_fcntl_dupfd(), which must be the site's first frame.
	expect_fd_site "$FK/final.json" "$FK_PID" leak_fcntl_dupfd 1 1 0 || return 1
	expect_fd_site_location "$FK/final.json" "$FK_PID" leak_fcntl_dupfd fd_kinds.c fcntl \
		main fd_kinds
}

test_anon_inode_kinds_counted_with_their_types() {
	local spec sym count type
	fk || return 1
	for spec in leak_eventfd:2:eventfd leak_timerfd:2:timerfd leak_epoll:1:epoll \
		leak_memfd:2:memfd leak_signalfd:1:signalfd leak_inotify:1:inotify \
		leak_pidfd:1:pidfd; do
		IFS=: read -r sym count type <<<"$spec"
		expect_fd_site "$FK/final.json" "$FK_PID" "$sym" "$count" "$count" 0 || return 1
		expect_fd_field "$FK/final.json" "$FK_PID" "$sym" fd_types \
			"{\"$type\":$count}" || return 1
	done
	expect_fd_field "$FK/final.json" "$FK_PID" leak_memfd fd_samples \
		'["/memfd:lt_memfd (deleted)"]' || return 1
	expect_fd_field "$FK/final.json" "$FK_PID" leak_eventfd fd_samples \
		'["anon_inode:[eventfd]"]'
}

test_leak_sites_point_at_source_line_and_caller() {
	local m
	fk || return 1
	for m in open openat socket pipe pipe2 dup eventfd timerfd epoll memfd signalfd \
		inotify pidfd; do
		expect_fd_site_location "$FK/final.json" "$FK_PID" "leak_$m" fd_kinds.c "$m" main \
			fd_kinds || return 1
	done
	expect_fd_site_location "$FK/final.json" "$FK_PID" dup2_over fd_kinds.c dup2 main \
		fd_kinds || return 1
	expect_fd_site_location "$FK/final.json" "$FK_PID" churn_open fd_kinds.c churn main \
		fd_kinds
}

test_open_of_path_on_the_stack_keeps_the_caller() {
	local want
	fk || return 1
	# open(path) with path in a local buffer (leak_local_path) or in argv (leak_dir): the
	# frame above the call site must still be its caller.  open's libc wrapper keeps the
	# path in %rbp, which then points into the stack like a frame pointer.
	want="[[\"main\",$(leak_line fd_kinds.c local_path)],"
	want+="[\"main\",$(leak_line fd_kinds.c dir)]]"
	expect_jq "[caller, line] of the leak_local_path and leak_dir fd sites" "$want" \
		"$FK/final.json" "$FD_DEFS [procs(\$pid) | (fd_sites_at(\"leak_local_path\"),
		  fd_sites_at(\"leak_dir\")) | [.stack[1].symbol, .stack[0].line]]" \
		--argjson pid "$FK_PID"
}

test_stale_return_address_on_stack_does_not_decide_site() {
	fk || return 1
	# stale_prepare() left a return address into itself in the slots open()'s frame covers
	# (without writing them) when stale_victim() calls it.
	expect_fd_site "$FK/final.json" "$FK_PID" stale_victim 2 2 0 || return 1
	expect_fd_site_location "$FK/final.json" "$FK_PID" stale_victim fd_kinds.c stale main \
		fd_kinds || return 1
	expect_jq "fd sites charged to stale_prepare (which opens nothing)" '[]' \
		"$FK/final.json" "$FD_DEFS [procs(\$pid) | fd_sites_at(\"stale_prepare\") |
		  fdnums]" --argjson pid "$FK_PID"
}

test_open_close_churn_traced_with_nothing_outstanding() {
	fk || return 1
	expect_fd_site "$FK/final.json" "$FK_PID" churn_open 0 20 20 || return 1
	expect_fd_field "$FK/final.json" "$FK_PID" churn_open fd_types '{}' || return 1
	expect_fd_field "$FK/final.json" "$FK_PID" churn_open fd_samples '[]'
}

test_close_range_releases_the_range() {
	fk || return 1
	expect_fd_site "$FK/final.json" "$FK_PID" range_open 0 5 5 || return 1
	# Taken off when close_range() returned, not repaired from /proc afterwards (that could
	# only happen if the collector read /proc/PID/fd in the microseconds between the
	# kernel closing them and close_range() returning).
	expect_fd_field "$FK/final.json" "$FK_PID" range_open repaired 0
}

test_close_range_cloexec_only_marks_descriptors() {
	fk || return 1
	expect_fd_site "$FK/final.json" "$FK_PID" cloexec_range_open 2 2 0 || return 1
	expect_fd_field "$FK/final.json" "$FK_PID" cloexec_range_open fd_types '{"file":2}'
}

test_dup2_over_open_descriptor_moves_it_to_dup2_site() {
	fk || return 1
	expect_fd_site "$FK/final.json" "$FK_PID" victim_open 0 1 1 || return 1
	expect_fd_field "$FK/final.json" "$FK_PID" victim_open repaired 0 || return 1
	expect_fd_site "$FK/final.json" "$FK_PID" dup2_over 1 1 0 || return 1
	expect_fd_field "$FK/final.json" "$FK_PID" dup2_over fd_samples "[\"$FK/dir/file_a\"]"
}

test_dup3_over_open_descriptor_moves_it_to_dup3_site() {
	fk || return 1
	expect_fd_site "$FK/final.json" "$FK_PID" victim3_open 0 1 1 || return 1
	expect_fd_site "$FK/final.json" "$FK_PID" dup3_over 1 1 0 || return 1
	expect_fd_site_location "$FK/final.json" "$FK_PID" dup3_over fd_kinds.c dup3 main fd_kinds
}

test_fd_count_is_number_of_proc_fd_entries() {
	fk || return 1
	expect_fd_totals_consistent "$FK/final.json" "$FK_PID" "$(cat "$FK/fd_entries")"
}

test_process_fd_totals_count_every_leak() {
	fk || return 1
	# 3 open + 2 openat + 1 dir + 1 local path + 3 socket + 4 pipe + 2 pipe2 + 2 dup +
	# 1 fcntl + 2 eventfd + 2 timerfd + 1 epoll + 2 memfd + 1 signalfd + 1 inotify + 1 pidfd
	# + 1 dup2 + 1 dup3 + 2 marked close-on-exec + 2 stale_victim; nothing repaired.
	expect_jq "[fd.outstanding_count, fd.repaired]" '[35,0]' "$FK/final.json" \
		'[procs($pid) | .fd | .outstanding_count, .repaired]' --argjson pid "$FK_PID"
}

test_fd_sites_only_in_fd_kind() {
	fk || return 1
	# fd_kinds allocates nothing on the heap itself: no heap site names a leak_* function.
	expect_jq "heap sites at fd_kinds functions" '[]' "$FK/final.json" \
		'[procs($pid) | .sites[] | select(.kind == "heap" and
		  (.stack[0].symbol // "" | test("^(leak_|churn_|range_|victim)")))]' \
		--argjson pid "$FK_PID"
}

test_kinds_run_has_no_drops() {
	fk || return 1
	expect_no_drops "$FK/out.jsonl" jsonl
}

# ------------------------------------------------------------ accept, SCM_RIGHTS (fd_net)

FN=$E2E_TMP/net
FN_PID=""

run_net() {
	run_alive "$FN" fd_net -r fd || return 1
	FN_PID=$RUN_PID
}

fn() { scenario run_net; }

test_accepted_connections_counted_at_accepting_function() {
	fn || return 1
	expect_fd_site "$FN/final.json" "$FN_PID" accept_conns 2 2 0 || return 1
	expect_fd_site "$FN/final.json" "$FN_PID" accept4_conn 1 1 0 || return 1
	expect_fd_field "$FN/final.json" "$FN_PID" accept_conns fd_types '{"socket":2}' ||
		return 1
	expect_fd_field "$FN/final.json" "$FN_PID" accept_conns fd_samples '["inet stream"]' ||
		return 1
	expect_fd_site_location "$FN/final.json" "$FN_PID" accept_conns fd_net.c accept main \
		fd_net || return 1
	expect_fd_site_location "$FN/final.json" "$FN_PID" accept4_conn fd_net.c accept4 main \
		fd_net
}

test_listener_and_client_sockets_counted() {
	fn || return 1
	expect_fd_site "$FN/final.json" "$FN_PID" listen_on_loopback 1 1 0 || return 1
	expect_fd_site "$FN/final.json" "$FN_PID" connect_clients 3 3 0 || return 1
	expect_fd_field "$FN/final.json" "$FN_PID" connect_clients fd_types '{"socket":3}' ||
		return 1
	expect_fd_field "$FN/final.json" "$FN_PID" connect_clients fd_samples \
		'["inet stream"]' || return 1
	expect_fd_site_location "$FN/final.json" "$FN_PID" connect_clients fd_net.c client main \
		fd_net
}

test_socketpair_counts_two_unix_sockets() {
	fn || return 1
	expect_fd_site "$FN/final.json" "$FN_PID" make_stream_pair 2 2 0 || return 1
	expect_fd_field "$FN/final.json" "$FN_PID" make_stream_pair fd_samples \
		'["unix stream"]' || return 1
	expect_fd_site "$FN/final.json" "$FN_PID" make_dgram_pair 2 2 0 || return 1
	expect_fd_field "$FN/final.json" "$FN_PID" make_dgram_pair fd_samples '["unix dgram"]'
}

test_scm_rights_received_fds_counted_at_receiving_function() {
	fn || return 1
	expect_fd_site "$FN/final.json" "$FN_PID" receive_fds 3 3 0 || return 1
	expect_fd_field "$FN/final.json" "$FN_PID" receive_fds fd_types '{"file":3}' || return 1
	expect_fd_field "$FN/final.json" "$FN_PID" receive_fds fd_samples \
		"[\"$FN/dir/passed\"]" || return 1
	expect_fd_site_location "$FN/final.json" "$FN_PID" receive_fds fd_net.c recvmsg main \
		fd_net || return 1
	# The sender's copies were closed after sending.
	expect_fd_site "$FN/final.json" "$FN_PID" open_to_pass 0 3 3
}

test_recvmmsg_fds_of_every_message_counted() {
	fn || return 1
	expect_fd_site "$FN/final.json" "$FN_PID" receive_batch 2 2 0 || return 1
	expect_fd_field "$FN/final.json" "$FN_PID" receive_batch fd_types '{"file":2}' ||
		return 1
	expect_fd_field "$FN/final.json" "$FN_PID" receive_batch fd_samples \
		"[\"$FN/dir/passed_batch\"]" || return 1
	expect_fd_site "$FN/final.json" "$FN_PID" open_to_pass_batch 0 2 2
}

test_net_fd_count_is_number_of_proc_fd_entries() {
	fn || return 1
	expect_fd_totals_consistent "$FN/final.json" "$FN_PID" "$(cat "$FN/fd_entries")" ||
		return 1
	# 1 listener + 3 clients + 2 accepted + 1 accept4 + 2 + 2 socketpair ends + 3 + 2
	# received.
	expect_jq "fd.outstanding_count" 16 "$FN/final.json" \
		'[procs($pid) | .fd.outstanding_count][0]' --argjson pid "$FN_PID"
}

test_resources_fd_tracks_no_heap() {
	fn || return 1
	expect_jq "[heap allocs, heap sites] with -r fd" '[0,0]' "$FN/final.json" \
		'[procs($pid) | .heap.allocs, ([.sites[] | select(.kind == "heap")] | length)]' \
		--argjson pid "$FN_PID"
}

test_net_run_has_no_drops() {
	fn || return 1
	expect_no_drops "$FN/out.jsonl" jsonl
}

# ------------------------------------------------------------ repair (fd_repair)

FR=$E2E_TMP/repair
FR_PID=""

run_repair() {
	run_alive "$FR" fd_repair || return 1
	FR_PID=$RUN_PID
}

test_close_range_beyond_direct_release_repaired_from_proc() {
	local got
	scenario run_repair || return 1
	# 40 descriptors closed by one close_range(first, ~0U): at most 32 taken off directly,
	# at least 8 repaired; in all, nothing outstanding and 40 closes.
	expect_fd_site "$FR/final.json" "$FR_PID" repair_open 0 40 40 || return 1
	got=$(jqc "$FR/final.json" "$FD_DEFS [procs(\$pid) | fd_sites_at(\"repair_open\") |
		.repaired]" --argjson pid "$FR_PID")
	[[ $got =~ ^\[([0-9]+)\]$ ]] && [ "${BASH_REMATCH[1]}" -ge 8 ] &&
		[ "${BASH_REMATCH[1]}" -le 40 ] ||
		fail_because "repaired of the repair_open site: got $got, expected [N], 8 <= N <= 40" ||
		return 1
	expect_jq "process fd.repaired minus the site's" '[0]' "$FR/final.json" \
		"$FD_DEFS [procs(\$pid) | .fd.repaired -
		  ([fd_sites_at(\"repair_open\")][0].repaired)]" --argjson pid "$FR_PID"
}

test_close_range_leaves_descriptors_below_it() {
	scenario run_repair || return 1
	expect_fd_site "$FR/final.json" "$FR_PID" leak_below 2 2 0 || return 1
	expect_fd_field "$FR/final.json" "$FR_PID" leak_below repaired 0 || return 1
	expect_fd_totals_consistent "$FR/final.json" "$FR_PID" "$(cat "$FR/fd_entries")"
}

test_repair_run_has_no_drops() {
	scenario run_repair || return 1
	expect_no_drops "$FR/out.jsonl" jsonl
}

# ------------------------------------------------------------ census race (fd_churn)

# fd_churn.c reopens one number from two sites at full speed while the census runs (every
# 0.05 s): a number the census found closed is often open again, from the other site, by the
# time it would delete the record; that record is the new descriptor's and must stay, or one
# site climbs for good and the other goes negative.  (A census may still repair a close
# whose syscall had removed the descriptor but not yet returned: the counts stay right.)
FC=$E2E_TMP/churn
FC_PID=""

run_churn() {
	run_alive "$FC" fd_churn -i 0.05 || return 1
	FC_PID=$RUN_PID
}

test_census_keeps_descriptor_reopened_at_another_site() {
	local sym
	scenario run_churn || return 1
	for sym in churn_open churn_socket; do
		expect_jq "[count, opens - closes] of the $sym site(s)" '[0,0]' "$FC/final.json" \
			"$FD_DEFS [procs(\$pid) | fd_sites_at(\"$sym\")] |
			[(map(.outstanding_count) | add), (map(.allocs - .frees) | add)]" \
			--argjson pid "$FC_PID" || return 1
	done
	expect_fd_totals_consistent "$FC/final.json" "$FC_PID" "$(cat "$FC/fd_entries")"
}

test_churn_run_has_no_drops() {
	scenario run_churn || return 1
	expect_no_drops "$FC/out.jsonl" jsonl
}

# ------------------------------------------------------------ exec (fd_exec)

FE=$E2E_TMP/exec
FE_PID=""

run_exec() {
	mkdir -p "$FE/dir"
	lt_bg "$FE/out.jsonl" "$FE/err" -b -i "$INTERVAL" -j - -- "$PROGS/fd_exec" "$FE/dir"
	wait_file "$FE/dir/ready_exec" || return 1
	FE_PID=$(pid_in "$FE/dir/ready_exec")
	wait_two_more "$FE/out.jsonl" || return 1
	last_line "$FE/out.jsonl" "$FE/before.json"
	touch "$FE/dir/go_exec"
	wait_file "$FE/dir/done" || return 1
	expect_eq "pid after exec" "$FE_PID" "$(pid_in "$FE/dir/done")" || return 1
	wait_two_more "$FE/out.jsonl" || return 1
	count_fds "$FE_PID" "$FE" || return 1
	kill -INT "$LT_PID"
	wait_exit "$LT_PID" || return 1
	touch "$FE/dir/quit"
	expect_eq "leaktop's exit status (stderr: $(cat "$FE/err"))" 0 "$WAIT_STATUS" || return 1
	last_line "$FE/out.jsonl" "$FE/final.json"
	last_entry "$FE/out.jsonl" "$FE_PID" "$FE/old.json" cloexec_open
}

fe() { scenario run_exec; }

test_exec_descriptors_counted_before_exec() {
	fe || return 1
	expect_fd_site "$FE/before.json" "$FE_PID" cloexec_open 3 3 0 || return 1
	expect_fd_site "$FE/before.json" "$FE_PID" cloexec_pipe 2 2 0 || return 1
	expect_fd_site "$FE/before.json" "$FE_PID" keep_open 1 1 0 || return 1
	expect_fd_site_location "$FE/before.json" "$FE_PID" cloexec_open fd_exec.c cloexec main \
		fd_exec
}

test_exec_pre_exec_image_reported_exited() {
	fe || return 1
	expect_jq "[exited, comm] of the pre-exec image's last entry" '[[true,"fd_exec"]]' \
		"$FE/old.json" '[procs($pid) | [.exited, .comm]]' --argjson pid "$FE_PID"
}

test_exec_pre_exec_image_keeps_its_own_numbers() {
	fe || return 1
	# The pre-exec image closed nothing: the exec'd program reusing a descriptor number
	# must not count as a close at the pre-exec image's sites.
	expect_fd_site "$FE/old.json" "$FE_PID" cloexec_open 3 3 0 || return 1
	expect_fd_site "$FE/old.json" "$FE_PID" cloexec_pipe 2 2 0 || return 1
	expect_fd_site "$FE/old.json" "$FE_PID" keep_open 1 1 0
}

test_exec_new_image_tracks_none_of_the_old_descriptors() {
	fe || return 1
	expect_jq "[exited, pre-exec fd sites] of the pid's entries in the last snapshot" \
		'[[false,[]]]' "$FE/final.json" '[procs($pid) | [.exited, [.sites[] |
		  select(.kind == "fd" and (.stack[0].symbol | IN("cloexec_open", "cloexec_pipe",
		  "keep_open")))]]]' --argjson pid "$FE_PID" || return 1
	expect_jq "fd.outstanding_count of the exec'd image" '[0]' "$FE/final.json" \
		'[procs($pid) | .fd.outstanding_count]' --argjson pid "$FE_PID"
}

test_exec_closes_cloexec_and_kept_fd_survives_untracked() {
	local above
	fe || return 1
	# fd_exec closed what it inherited above stderr: above 2, only DIR/kept may be left.
	above=$(awk '$1 > 2 { print $2 }' "$FE/fd_links" | tr '\n' ' ')
	expect_eq "targets of the descriptors above 2 after exec" "$FE/dir/kept " "$above" ||
		return 1
	# Everything open in the exec'd image was opened before it: all untracked.
	expect_jq "[fd_count, fd.untracked] of the exec'd image" \
		"[[$(cat "$FE/fd_entries"),$(cat "$FE/fd_entries")]]" "$FE/final.json" \
		'[procs($pid) | [.counters.fd_count, .fd.untracked]]' --argjson pid "$FE_PID"
}

test_exec_run_has_no_drops() {
	fe || return 1
	expect_no_drops "$FE/out.jsonl" jsonl
}

# ------------------------------------------------------------ every run

# Runs after every other test of this script: no run above lost an event.
test_every_run_of_this_script_dropped_nothing() {
	expect_no_drops_anywhere
}

run_tests
