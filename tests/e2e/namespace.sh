#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# namespace.sh - whole-system mode reaches a C library that only another mount namespace
# maps: a waiter runs in a private mount namespace where a copy of libc (another inode) is
# bind-mounted over the real one, so leaktop must find that libc through /proc/PID/root and
# probe it separately from its own.
source "$(dirname "$0")/lib.sh"

require_root
require_built waiter

NS=$E2E_TMP/namespace
NS_PID=""

run_namespace() {
	local real copy
	mkdir -p "$NS/dir"
	real=$(readlink -f "$(ldd "$PROGS/waiter" | awk '/libc\.so/ {print $3}')")
	[ -f "$real" ] || fail_because "cannot find the libc of waiter" || return 1
	copy=$NS/libc-copy.so
	cp "$real" "$copy"
	unshare -m --propagation private sh -c \
		"mount --bind '$copy' '$real' && exec '$PROGS/waiter' '$NS/dir' go" &
	BG_PIDS+=("$!")
	wait_file "$NS/dir/ready" || return 1
	NS_PID=$(pid_in "$NS/dir/ready")
	[ "$(stat -L -c %i "/proc/$NS_PID/root$real")" != "$(stat -L -c %i "$real")" ] ||
		fail_because "the namespace's libc is not another file" || return 1
	lt_bg "$NS/out" "$NS/err" -b -i "$INTERVAL" --exact -j "$NS/snap.json"
	wait_snapshot_file "$NS/snap.json" "$NS/err" || return 1
	touch "$NS/dir/go"
	wait_file "$NS/dir/done" || return 1
	wait_until "the namespaced waiter's leaks in $NS/snap.json" json_true "$NS/snap.json" \
		'[procs($p) | sites_at("leak_after_go") | .outstanding_count] == [5]' \
		--argjson p "$NS_PID" || return 1
	kill -INT "$LT_PID"
	wait_exit "$LT_PID" || return 1
	touch "$NS/dir/quit"
}

test_system_mode_probes_libc_of_another_mount_namespace() {
	scenario run_namespace || return 1
	expect_site "$NS/snap.json" "$NS_PID" leak_after_go 5 1605 5 0 || return 1
	expect_site_location "$NS/snap.json" "$NS_PID" leak_after_go waiter.c after_go main waiter
}

test_system_mode_namespace_run_has_no_drops() {
	scenario run_namespace || return 1
	expect_no_drops "$NS/snap.json"
}

run_tests
