#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# agent_inject.sh - `leaktop -p PID --agent`: the agent injected into a running process.
#   - the heap is counted from the injection on, exactly (waiter's 5 blocks after go, not
#     the 2 it made before), by the agent (heap.via "agent");
#   - while injected, the program's GOT entry for malloc leads into libleaktop-agent.so;
#     after leaktop ends it holds again what it held before (read from /proc/PID/mem), and
#     the program runs on and exits 0;
#   - kill -9 of leaktop leaves the process running (it allocates and exits 0);
#   - kill -9 of leaktop at 20 moments around the injection (from the instant the process
#     comes under ptrace, 0 to 100 ms later) leaves it running and intact every time: it
#     keeps allocating, its blocks and registers as it left them (self_check checks), and
#     it is traced by nobody soon after;
#   - a process the agent cannot go into (a static program: no dlopen) is refused with one
#     line, and runs on untouched;
#   - redis-server under -p --agent, 50,000 SETs: its heap grows at sites naming redis
#     functions.
# Root only.

# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

require_root
require_built waiter early_leak_static self_check kill_when_traced
AGENT_LIB=$E2E_ROOT/libleaktop-agent.so
[ -r "$AGENT_LIB" ] || { echo "FAIL $(basename "$0"): $AGENT_LIB is not built"; exit 1; }

# start_waiter DIR: waiter DIR go, in the background, once it is ready; its pid in W_PID.
start_waiter() {
	mkdir -p "$1"
	chmod 755 "$1"
	"$PROGS/waiter" "$1" go >/dev/null 2>&1 &
	W_PID=$!
	BG_PIDS+=("$W_PID")
	wait_file "$1/ready"
}

# got_slot PID SYMBOL: the address of the GOT entry (JUMP_SLOT or GLOB_DAT) for SYMBOL of
# process PID's executable, in decimal.
got_slot() {
	local exe off base
	exe=$(readlink "/proc/$1/exe")
	off=$(readelf -rW "$exe" | awk -v s="$2" '($3 ~ /JUMP_SLO|GLOB_DAT/) && ($5 == s || index($5, s "@") == 1) { print $1; exit }')
	base=$(awk -v e="$exe" '$6 == e && $3 == "00000000" { split($1, r, "-"); print r[1]; exit }' \
		"/proc/$1/maps")
	[ -n "$off" ] && [ -n "$base" ] && echo $((16#$base + 16#$off))
}

# mem_word PID ADDR: the 8 bytes at ADDR of PID, as hex.
mem_word() {
	dd if="/proc/$1/mem" bs=8 count=1 skip=$(($2 / 8)) 2>/dev/null | od -An -tx8 | tr -d ' '
}

# in_agent PID HEXVALUE: is the address inside a mapping of libleaktop-agent.so in PID?
in_agent() {
	local range _ v=$((16#$2))
	while read -r range _; do
		[ "$v" -ge "$((16#${range%-*}))" ] && [ "$v" -lt "$((16#${range#*-}))" ] && return 0
	done < <(grep -F libleaktop-agent.so "/proc/$1/maps")
	return 1
}

agent_got_hooked() { in_agent "$W_PID" "$(mem_word "$W_PID" "$SLOT")"; }

# One run: waiter leaks 2 blocks, leaktop -p --agent goes in, then waiter frees one of
# those and leaks 5 more; leaktop ends with SIGINT.
injected_run() {
	local d=$E2E_TMP/inj
	start_waiter "$d" || return 1
	SLOT=$(got_slot "$W_PID" malloc)
	[ -n "$SLOT" ] || fail_because "no GOT entry for malloc in waiter" || return 1
	GOT_BEFORE=$(mem_word "$W_PID" "$SLOT")
	lt_bg "$d/out" "$d/err" -q -i 0.3 -j "$d/snap.json" -p "$W_PID" --agent
	wait_snapshot_file "$d/snap.json" "$d/err" || return 1
	wait_until "waiter's GOT entry for malloc to lead into the agent" agent_got_hooked ||
		return 1
	GOT_DURING=$(mem_word "$W_PID" "$SLOT")
	touch "$d/go"
	wait_file "$d/done" || return 1
	wait_until "a snapshot with waiter's 5 blocks" json_true "$d/snap.json" \
		'[procs($pid) | .heap.outstanding_count] == [5]' --argjson pid "$W_PID" || return 1
	cp "$d/snap.json" "$d/final.json"
	kill -INT "$LT_PID"
	wait_exit "$LT_PID" || fail_because "leaktop did not exit" || return 1
	LT_EXIT=$WAIT_STATUS
	GOT_AFTER=$(mem_word "$W_PID" "$SLOT")
	touch "$d/quit"
	wait_exit "$W_PID" || fail_because "waiter did not exit after quit" || return 1
	W_EXIT=$WAIT_STATUS
}

test_agent_counts_heap_from_injection_on() {
	scenario injected_run || return 1
	expect_eq "leaktop's exit status" 0 "$LT_EXIT" || return 1
	expect_jq "waiter's heap [via, count, bytes, allocs]" '[["agent",5,1605,5]]' \
		"$E2E_TMP/inj/final.json" '[procs($pid) | .heap | [.via, .outstanding_count,
		.outstanding_bytes, .allocs]]' --argjson pid "$W_PID"
}

test_agent_detach_restores_got_and_process_runs_on() {
	scenario injected_run || return 1
	[ "$GOT_DURING" != "$GOT_BEFORE" ] ||
		fail_because "the GOT entry for malloc was not redirected ($GOT_BEFORE)" || return 1
	expect_eq "waiter's GOT entry for malloc after leaktop ended" "$GOT_BEFORE" "$GOT_AFTER" ||
		return 1
	expect_eq "waiter's exit status" 0 "$W_EXIT"
}

test_agent_kill9_of_leaktop_leaves_process_running() {
	local d=$E2E_TMP/k9
	start_waiter "$d" || return 1
	lt_bg "$d/out" "$d/err" -q -i 0.3 -j "$d/snap.json" -p "$W_PID" --agent
	wait_snapshot_file "$d/snap.json" "$d/err" || return 1
	kill -KILL "$LT_PID"
	wait_exit "$LT_PID"
	touch "$d/go"
	wait_file "$d/done" || return 1
	touch "$d/quit"
	wait_exit "$W_PID" || fail_because "waiter did not exit" || return 1
	expect_eq "waiter's exit status after leaktop's kill -9" 0 "$WAIT_STATUS"
}

# checker_steps: the steps self_check has counted so far (0 before its first count).
checker_steps() { local n=0; { read -r n <"$CHECK_DIR/count"; } 2>/dev/null; echo "${n:-0}"; }
checker_untraced() { awk '/^TracerPid/ { exit $2 != 0 }' "/proc/$CHECK_PID/status" 2>/dev/null; }
checker_alive() { kill -0 "$CHECK_PID" 2>/dev/null && ! is_zombie "$CHECK_PID"; }
checker_moved_on() { [ "$(checker_steps)" -gt "$1" ]; }

# One kill: leaktop -p --agent on self_check, SIGKILLed DELAY_US after self_check comes
# under ptrace (or once leaktop ends, if it never does).
kill_during_injection() {
	local delay_us=$1 d=$CHECK_DIR/run$1 seen
	mkdir -p "$d"
	lt_bg "$d/out" "$d/err" -q -i 0.3 -j "$d/snap.json" -p "$CHECK_PID" --agent
	seen=$("$PROGS/kill_when_traced" "$CHECK_PID" "$LT_PID" "$delay_us")
	# Not waited for: the kernel's teardown of a killed leaktop's probes takes seconds.
	KILLED+=("$LT_PID")
	if [ "$seen" = traced ]; then TRACED_SEEN=$((TRACED_SEEN + 1)); fi
}

test_agent_kill9_at_any_moment_of_injection_leaves_process_intact() {
	local i delay_us steps
	CHECK_DIR=$E2E_TMP/k9any
	TRACED_SEEN=0
	KILLED=()
	mkdir -p "$CHECK_DIR"
	chmod 755 "$CHECK_DIR"
	"$PROGS/self_check" "$CHECK_DIR" >/dev/null 2>&1 &
	CHECK_PID=$!
	BG_PIDS+=("$CHECK_PID")
	wait_until "self_check's first steps" checker_moved_on 0 || return 1
	for i in $(seq 0 19); do
		delay_us=$((i * i * i * 15))
		steps=$(checker_steps)
		kill_during_injection "$delay_us" || return 1
		checker_alive ||
			fail_because "self_check died after leaktop's kill -9 ${delay_us} us into" \
				"the injection: $(cat "$CHECK_DIR/corrupt" 2>/dev/null)" || return 1
		wait_until "self_check traced by nobody after kill ${delay_us} us" checker_untraced ||
			return 1
		wait_until "self_check's steps past $steps after kill ${delay_us} us" \
			checker_moved_on "$steps" || return 1
		[ ! -e "$CHECK_DIR/corrupt" ] || fail_because "self_check found" \
			"$(cat "$CHECK_DIR/corrupt") after kill ${delay_us} us" || return 1
	done
	# Most kills came while it was under ptrace (the test would prove little otherwise).
	[ "$TRACED_SEEN" -ge 15 ] || fail_because "only $TRACED_SEEN of 20 kills came after" \
		"self_check was traced" || return 1
	for i in "${KILLED[@]}"; do
		wait_exit "$i" || fail_because "leaktop $i outlived SIGKILL" || return 1
	done
	touch "$CHECK_DIR/quit"
	wait_exit "$CHECK_PID" || fail_because "self_check did not exit" || return 1
	expect_eq "self_check's exit status" 0 "$WAIT_STATUS"
}

test_agent_refuses_static_program_and_leaves_it_alone() {
	local d=$E2E_TMP/static pid
	mkdir -p "$d"
	"$PROGS/early_leak_static" "$d" >/dev/null 2>&1 &
	pid=$!
	BG_PIDS+=("$pid")
	wait_file "$d/done" || return 1
	lt_fg "$d/out" "$d/err" -q -i 0.3 -d 1 -p "$pid" --agent
	[ "$LT_STATUS" -ne 0 ] || fail_because "leaktop -p --agent on a static program exited 0" ||
		return 1
	expect_eq "stderr lines" 1 "$(stderr_lines "$d/err")" || return 1
	expect_match "the reason" "maps no C library" "$(cat "$d/err")" || return 1
	kill -0 "$pid" 2>/dev/null || fail_because "the static program is gone" || return 1
	[ -z "$(awk '$2 != "0" && /^TracerPid/' "/proc/$pid/status")" ] ||
		fail_because "the static program is still traced"
}

redis_up() { [ "$(redis-cli -s "$E2E_TMP/redis/sock" PING 2>/dev/null)" = PONG ]; }

test_agent_redis_heap_grows_at_redis_sites() {
	local d=$E2E_TMP/redis rpid
	command -v redis-server >/dev/null || { echo "(no redis-server: make deps)"; return 0; }
	mkdir -p "$d"
	redis-server --port 0 --unixsocket "$d/sock" --unixsocketperm 700 --save '' \
		--appendonly no --dir "$d" --daemonize no --logfile "$d/log" >/dev/null 2>&1 &
	rpid=$!
	BG_PIDS+=("$rpid")
	wait_until "redis-server to answer" redis_up || return 1
	lt_bg "$d/out" "$d/err" -q -i 0.5 -j "$d/snap.json" -p "$rpid" --agent
	wait_snapshot_file "$d/snap.json" "$d/err" || return 1
	redis-benchmark -s "$d/sock" -t set -n 50000 -r 100000000 -q >/dev/null 2>&1 ||
		fail_because "redis-benchmark failed" || return 1
	# 50,000 SETs of mostly new keys: tens of thousands of blocks live at sites whose
	# stacks name redis's own functions.
	wait_until "redis's heap grown by 40,000 blocks at redis sites" json_true "$d/snap.json" '
		[procs($pid) | .sites[] | select(.kind == "heap" and
			any(.stack[]; (.symbol // "") | test("^(zmalloc|ztrymalloc_usable|_?sdsnewlen|createStringObject|createObject|dictAddRaw|dbAdd|setKey|setGenericCommand)")))
		 | .outstanding_count] | add // 0 | . >= 40000' --argjson pid "$rpid" || return 1
	expect_jq "redis's heap via" '["agent"]' "$d/snap.json" '[procs($pid) | .heap.via]' \
		--argjson pid "$rpid" || return 1
	kill -INT "$LT_PID"
	wait_exit "$LT_PID" || return 1
	expect_eq "leaktop's exit status" 0 "$WAIT_STATUS" || return 1
	redis_up || fail_because "redis-server stopped answering after leaktop ended"
}

run_tests
