#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# hostile_fuse.sh - review C2: a local user's FUSE file system whose daemon stops answering
# must not hold root leaktop.  The attacker (nobody) mounts tests/progs/stall_fs through the
# setuid fusermount3, runs a program from it (waiter), and from a program of its own
# (map_hold) keeps a file of it open and mapped private and writable, never touched; then
# the daemon is stopped (SIGSTOP).  Every stat, open, read or page fault on those files now
# waits for the daemon, killably only.  leaktop must go on sampling while the program on
# FUSE makes new call sites (their module is on FUSE) and the census looks at the open
# descriptor; `-p` and `scan -p` of map_hold must end on their own; one SIGINT ends it.
#
# As on a stock Debian (udev's rule), /dev/fuse is made 0666 for the test, and
# user_allow_other is put in /etc/fuse.conf so the attacker may let root see the files
# (without allow_other root gets EACCES from FUSE at once: only the scan's page faults
# would reach the daemon).  Both are put back, and the file system unmounted, at the end.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hostile_lib.sh"
require_root
require_built stall_fs waiter map_hold simple_leak

FU=$E2E_TMP/fuse
MNT="" FS_PID="" HOLD_PID="" WAITER_PID="" DEV_MODE="" CONF_SAVED=""

fuse_cleanup() {
	[ -n "$FS_PID" ] && signal CONT "$FS_PID"
	for pid in $WAITER_PID $HOLD_PID; do
		signal KILL "$pid"
	done
	if [ -n "$MNT" ] && grep -q " $MNT " /proc/self/mountinfo; then
		fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null
	fi
	[ -n "$FS_PID" ] && signal TERM "$FS_PID"
	[ -n "$CONF_SAVED" ] && cp "$CONF_SAVED" /etc/fuse.conf
	[ -n "$DEV_MODE" ] && chmod "$DEV_MODE" /dev/fuse
}
trap 'fuse_cleanup; e2e_cleanup' EXIT

# The mount as an ordinary user does it: as_attacker's empty bounding set would leave the
# setuid fusermount3 without the capability to mount, which no real user lacks.
fuse_daemon_bg() {
	setpriv --reuid="$HOSTILE_USER" --regid="$HOSTILE_GROUP" --clear-groups \
		--inh-caps=-all -- "$@" &
	FS_PID=$!
	BG_PIDS+=("$FS_PID")
}

mounted() { grep -q " $MNT .* - fuse.stall_fs " /proc/self/mountinfo; }

# The attacker's file system with a program (waiter) and a data file (a copy of a library).
fuse_mount() {
	attacker_dir fuse && MNT=$ATTACKER_DIR/mnt || return 1
	mkdir -p "$MNT" "$ATTACKER_DIR/w" "$ATTACKER_DIR/h" &&
		chown "$HOSTILE_USER:$HOSTILE_GROUP" "$MNT" "$ATTACKER_DIR/w" "$ATTACKER_DIR/h" &&
		cp "$PROGS/stall_fs" "$PROGS/map_hold" "$ATTACKER_DIR/" || return 1
	DEV_MODE=$(stat -c %a /dev/fuse) && chmod 0666 /dev/fuse || return 1
	if ! grep -q '^user_allow_other' /etc/fuse.conf 2>/dev/null; then
		CONF_SAVED=$E2E_TMP/fuse.conf.saved
		cp /etc/fuse.conf "$CONF_SAVED" && echo user_allow_other >>/etc/fuse.conf ||
			return 1
	fi
	fuse_daemon_bg "$ATTACKER_DIR/stall_fs" "$MNT" "prog=$PROGS/waiter" \
		"data=$PROGS/simple_leak" -o allow_other
	wait_until "the attacker's FUSE mount at $MNT" mounted
}

# The whole run: leaktop on the whole system, the attack, the stall, new work after it.
run_fuse_attack() {
	fuse_mount || return 1
	hostile_start "$FU" || return 1
	as_attacker_bg "$MNT/prog" "$ATTACKER_DIR/w" go
	WAITER_PID=$ATTACKER_PID
	wait_file "$ATTACKER_DIR/w/ready" || return 1
	as_attacker_bg "$ATTACKER_DIR/map_hold" "$MNT/data" "$ATTACKER_DIR/h"
	HOLD_PID=$ATTACKER_PID
	wait_file "$ATTACKER_DIR/h/ready" || return 1
	signal STOP "$FS_PID"
	T_ATTACK=$(now_s)
	# New call sites in the program on FUSE, after the stall: their module must be looked at.
	as_attacker touch "$ATTACKER_DIR/w/go"
	wait_file "$ATTACKER_DIR/w/done"
}
fa() { scenario run_fuse_attack; }

test_fuse_stall_whole_system_keeps_sampling_and_one_sigint_ends_it() {
	fa || return 1
	hostile_survived "$FU" "$T_ATTACK" 'stall_fs|fuse|mnt/'
}

# What was left unread is counted, not hidden: the waiter's program lives on the FUSE mount.
test_fuse_files_left_unread_are_counted_in_stats() {
	fa || return 1
	wait_until "stats.files_refused_fs > 0 in $FU/snap.json" json_true "$FU/snap.json" \
		'.stats.files_refused_fs > 0' ||
		fail_because "stats.files_refused_fs: $(jqc "$FU/snap.json" .stats.files_refused_fs)"
}

test_fuse_stall_does_not_hold_pid_mode() {
	fa || return 1
	lt_fg "$FU/p.out" "$FU/p.err" -p "$HOLD_PID" -q -i "$INTERVAL" -d 1 -j "$FU/p.json"
	expect_eq "leaktop -p exit status (stderr: $(tail -n 2 "$FU/p.err"))" 0 "$LT_STATUS"
}

test_fuse_stall_scan_skips_untouched_fuse_mapping() {
	fa || return 1
	lt_fg "$FU/s.out" "$FU/s.err" scan -p "$HOLD_PID" -i "$INTERVAL" -d 1 -j "$FU/s.json"
	expect_eq "leaktop scan -p exit status (stderr: $(tail -n 2 "$FU/s.err"))" 0 "$LT_STATUS"
}

test_fuse_unmounted_cleanly() {
	fa || return 1
	signal CONT "$FS_PID"
	signal KILL "$WAITER_PID"
	signal KILL "$HOLD_PID"
	wait "$WAITER_PID" "$HOLD_PID" 2>/dev/null
	fusermount3 -u "$MNT" || umount -l "$MNT"
	! mounted || fail_because "$MNT is still mounted"
}

run_tests
