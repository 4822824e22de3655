# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# shellcheck shell=bash
#
# hostile_lib.sh - what the hostile-user suite (tests/e2e/hostile_*.sh) shares; sourced after
# lib.sh, never run.
#
# Each case is an attack by an unprivileged local user (nobody, no capabilities, no
# supplementary groups) against root leaktop in whole-system mode, the way the systemd
# service runs it.  Every case ends with the same three checks (hostile_survived):
#   1. leaktop is still sampling: a snapshot written after the attack (the -j file is
#      replaced atomically each interval, so its mtime is the time of the newest snapshot);
#   2. one SIGINT ends it with status 0 within HOSTILE_EXIT_S (1 s; the probes of every
#      suspect are detached together, their grace periods overlapping: 0.1-0.5 s under
#      load);
#   3. nothing of the attacker's is reported as leaktop's own failure (the case names what
#      must not appear on leaktop's stderr).

HOSTILE_USER=${HOSTILE_USER:-nobody}
HOSTILE_GROUP=${HOSTILE_GROUP:-nogroup}
HOSTILE_EXIT_S=${HOSTILE_EXIT_S:-1}

# as_attacker CMD [ARG...]: run CMD as the unprivileged attacker, in the foreground.
as_attacker() {
	setpriv --reuid="$HOSTILE_USER" --regid="$HOSTILE_GROUP" --clear-groups \
		--inh-caps=-all --bounding-set=-all -- "$@"
}

# as_attacker_bg CMD [ARG...]: the same in the background; its pid goes to ATTACKER_PID (and
# BG_PIDS, so the script's cleanup ends it).
ATTACKER_PID=""
as_attacker_bg() {
	as_attacker "$@" &
	ATTACKER_PID=$!
	BG_PIDS+=("$ATTACKER_PID")
}

# attacker_dir NAME: a directory the attacker owns, under the script's temporary directory;
# its path goes to ATTACKER_DIR.
ATTACKER_DIR=""
attacker_dir() {
	ATTACKER_DIR=$E2E_TMP/$1
	mkdir -p "$ATTACKER_DIR" && chown "$HOSTILE_USER:$HOSTILE_GROUP" "$ATTACKER_DIR" &&
		chmod 755 "$ATTACKER_DIR"
}

# hostile_start DIR [LEAKTOP OPTIONS...]: root leaktop on the whole system, as the service
# runs it (-q, a snapshot file each interval: DIR/snap.json), stdout DIR/out, stderr DIR/err;
# returns once the first snapshot is there.  Its pid is LT_PID.
hostile_start() {
	local dir=$1
	shift
	mkdir -p "$dir"
	lt_bg "$dir/out" "$dir/err" -q -i "$INTERVAL" -j "$dir/snap.json" "$@"
	wait_snapshot_file "$dir/snap.json" "$dir/err"
}

# now_s: the wall clock, in seconds with a fraction (no process started).
now_s() { printf '%s\n' "$EPOCHREALTIME"; }

# snapshot_after FILE T: was FILE written after T (seconds since the epoch, fractions ok)?
snapshot_after() {
	local m
	m=$(stat -c %.9Y "$1" 2>/dev/null) || return 1
	awk -v m="$m" -v t="$2" 'BEGIN { exit !(m > t) }'
}

# hostile_survived DIR T_ATTACK [STDERR_REGEX]: the three checks above for the leaktop that
# hostile_start started in DIR; T_ATTACK is when the attack took effect (now_s).  Two
# snapshots after T_ATTACK must appear (the second was surely collected after it).  A
# STDERR_REGEX names what of the attacker's must not appear on leaktop's stderr.  The exit
# status goes to HOSTILE_STATUS and the time from SIGINT to exit to HOSTILE_EXIT_TOOK.
HOSTILE_STATUS="" HOSTILE_EXIT_TOOK=""
hostile_survived() {
	local dir=$1 t=$2 re=${3:-} t1 t_int t_end
	wait_until "a snapshot in $dir/snap.json written after the attack" \
		snapshot_after "$dir/snap.json" "$t" || return 1
	t1=$(stat -c %.9Y "$dir/snap.json")
	wait_until "a second snapshot after the attack" snapshot_after "$dir/snap.json" "$t1" ||
		return 1
	kill -0 "$LT_PID" 2>/dev/null ||
		fail_because "leaktop died during the attack: $(tail -n 3 "$dir/err")" || return 1
	t_int=$(now_s)
	signal INT "$LT_PID"
	wait_exit "$LT_PID" || fail_because "leaktop did not exit after one SIGINT" || return 1
	t_end=$(now_s)
	HOSTILE_STATUS=$WAIT_STATUS
	HOSTILE_EXIT_TOOK=$(awk -v a="$t_int" -v b="$t_end" 'BEGIN { printf "%.3f", b - a }')
	# HOSTILE_EXIT_LOG=FILE collects the times (to compare builds or loads).
	[ -z "${HOSTILE_EXIT_LOG:-}" ] ||
		echo "$(basename "$0") $HOSTILE_EXIT_TOOK" >>"$HOSTILE_EXIT_LOG"
	expect_eq "leaktop's exit status after one SIGINT (stderr: $(tail -n 3 "$dir/err"))" 0 \
		"$HOSTILE_STATUS" || return 1
	awk -v d="$HOSTILE_EXIT_TOOK" -v l="$HOSTILE_EXIT_S" 'BEGIN { exit !(d <= l) }' ||
		fail_because "leaktop took ${HOSTILE_EXIT_TOOK}s to exit after SIGINT" \
			"(at most ${HOSTILE_EXIT_S}s)" || return 1
	if [ -n "$re" ] && grep -E -q -- "$re" "$dir/err"; then
		fail_because "leaktop's stderr reports the attacker's doing as its own failure:" \
			"$(grep -E -- "$re" "$dir/err" | head -n 3)"
		return 1
	fi
	return 0
}
