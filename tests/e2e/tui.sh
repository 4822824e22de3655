#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# tui.sh - the curses view, driven for real in tmux (send-keys, capture-pane): the leaking
# process and its flagged site appear, Enter/Esc navigate, / filters, w writes a valid
# snapshot, the layout holds at 80x24 and after a resize, q gives the terminal back; a 15-byte
# comm is shown whole, the command line takes the rest of the row, escaped; the MMAP column
# shows the process's anonymous mappings (its threads' stacks), and `s` sorts by them.
# The footer (at 80 columns) and `?` list every key of the key table, L and t included.
# Only the screen text is checked, never timings.
source "$(dirname "$0")/lib.sh"

require_root
require_built growth_mix steady_grow
require_built hwbp_fires
command -v tmux >/dev/null || { echo "FAIL tui.sh: tmux is not installed"; exit 1; }

SOCK=$E2E_TMP/tmux.sock
TUI=$E2E_TMP/tui
mkdir -p "$TUI"

tm() { tmux -S "$SOCK" "$@"; }
screen() { tm capture-pane -t lt -p; }
# The pattern goes to grep through a file descriptor, not its argv: in whole-system mode a
# grep whose command line holds a PID would match the TUI's own filter for that PID.
screen_has() { screen | grep -qE -f <(printf '%s\n' "$1"); }
# wait_screen REGEX: wait for a line of the screen to match; on timeout the failure shows
# the screen's top lines (blank ones left out), for a look at what was there instead.
wait_screen() {
	wait_until "screen to show /$1/" screen_has "$1" ||
		fail_because "$FAIL_MSG; the screen: $(screen 2>&1 | grep -v '^ *$' | head -n 8)"
}
server_gone() { ! tm list-sessions >/dev/null 2>&1; }
# fresh_server: end the tmux server of the test before (if any) and wait until it is gone: a
# session started while the old server is still exiting goes down with it.
fresh_server() {
	tm kill-server 2>/dev/null
	wait_until "the previous tmux server to end" server_gone
}
keys() { tm send-keys -t lt "$@"; }

start_tui() {
	fresh_server || return 1
	# The pane's command says how leaktop ended, then stays for the checks.
	tm new-session -d -s lt -x 80 -y 24 \
		"cd '$TUI' && '$LEAKTOP' -i 0.5 -- '$PROGS/growth_mix' 120; echo LEAKTOP_EXIT=\$?; sleep 120"
	wait_screen "growth_mix"
}

test_tui_lists_leaking_process_with_flags() {
	start_tui || return 1
	wait_screen "growth_mix .* HF" || return 1
	# The heap's growth carries its unit; the mappings (thread stacks, arenas) are known.
	screen_has "growth_mix .* [+-][0-9.]+ (B|KiB|MiB)/s +[0-9.]+ (KiB|MiB|GiB) HF" ||
		fail_because "no rate with a unit or mmap bytes: $(screen | grep growth_mix)" ||
		return 1
	screen_has "^leaktop .*dropped 0" || fail_because "header: $(screen | head -1)"
}

test_tui_s_sorts_by_mmap() {
	keys s s
	wait_screen "^leaktop .*sort:mmap" || return 1
	wait_screen "^ +PID COMMAND .* MMAP FLAGS" || return 1
	keys '<' '<'
	wait_screen "^leaktop .*sort:leak"
}

test_tui_enter_shows_flagged_site_with_function() {
	keys Enter
	wait_screen "^LEAK heap .* leak_heap_alloc" || return 1
	wait_screen "^LEAK fd .* leak_fd_open" || return 1
	screen_has "^ +heap .* cache_insert" || fail_because "cache site not shown unflagged"
}

test_tui_enter_on_site_shows_stack_with_file_line() {
	keys Enter
	wait_screen "^#0  leak_heap_alloc\+0x[0-9a-f]+ [^ ]*growth_mix\.c:[0-9]+( |$)" || return 1
	wait_screen "^#1  leak_heap\+" || return 1
}

test_tui_escape_goes_back_twice() {
	keys Escape
	wait_screen "^LEAK +KIND +OUTSTAND" || return 1
	keys Escape
	wait_screen "^ +PID COMMAND" || return 1
}

test_tui_filter_hides_and_shows_processes() {
	keys / n o m a t c h Enter
	wait_screen "filter:nomatch" || return 1
	! screen_has "growth_mix +[0-9.]+ " || fail_because "a process still shown: $(screen)" || return 1
	keys / Enter
	wait_screen "growth_mix"
}

test_tui_w_writes_a_valid_snapshot_and_names_it() {
	local file
	keys w
	wait_screen "^wrote leaktop-[0-9-]+\.json" || return 1
	file=$(screen | grep -oE "leaktop-[0-9-]+\.json" | head -1)
	[ -s "$TUI/$file" ] || fail_because "$TUI/$file missing" || return 1
	expect_eq "schema of $file" '"leaktop.snapshot/1"' "$(jq .schema "$TUI/$file")" || return 1
	# The message gives way to the key hints again.
	wait_until "the footer's key hints" sh -c \
		"tmux -S '$SOCK' capture-pane -t lt -p | tail -1 | grep -q q:quit"
}

test_tui_layout_fits_80x24() {
	local s lines longest
	s=$(screen)
	lines=$(printf '%s\n' "$s" | wc -l)
	expect_eq "lines on screen" 24 "$lines" || return 1
	# Display columns, not bytes: the sparklines are UTF-8.
	longest=$(printf '%s\n' "$s" | LC_ALL=C.UTF-8 wc -L)
	[ "$longest" -le 80 ] || fail_because "a line is $longest columns wide" || return 1
	printf '%s\n' "$s" | head -1 | grep -q "^leaktop" || fail_because "no header" || return 1
	printf '%s\n' "$s" | tail -1 | grep -q "q:quit" || fail_because "no footer: $(printf '%s\n' "$s" | tail -1)"
}

# The footer and `?` are written from the TUI's one key table: every key is in both (the
# footer at 80 columns drops words, never keys), L and t included.
TUI_KEYS=(Enter Esc s / p w S L t '?' q)

test_tui_footer_lists_every_key_at_80_columns() {
	local footer k
	wait_until "the footer's key hints" sh -c \
		"tmux -S '$SOCK' capture-pane -t lt -p | tail -1 | grep -q q:quit" || return 1
	footer=$(screen | tail -1)
	for k in "${TUI_KEYS[@]}"; do
		printf ' %s \n' "$footer" | grep -qF " $k " ||
			printf ' %s \n' "$footer" | grep -qF " $k:" ||
			fail_because "the footer has no $k: '$footer'" || return 1
	done
	printf '%s\n' "$footer" | grep -qF "L:lastref t:heap" ||
		fail_because "no L:lastref t:heap in the footer: '$footer'"
}

test_tui_redraws_after_resize() {
	tm resize-window -t lt -x 100 -y 30
	wait_until "a 30-line screen with the footer last" \
		sh -c "tmux -S '$SOCK' capture-pane -t lt -p | tail -1 | grep -q q:quit && \
		       [ \$(tmux -S '$SOCK' capture-pane -t lt -p | wc -l) = 30 ]" || return 1
	screen_has "^leaktop .*sort:leak" || fail_because "header after resize: $(screen | head -1)"
}

test_tui_help_screen_lists_keys() {
	local k
	keys '?'
	wait_screen "^  /          filter processes" || return 1
	for k in "${TUI_KEYS[@]}"; do
		[ "$k" = Esc ] && k=Esc/Bksp
		[ "$k" = s ] && k='s, >, <'
		screen | cut -c1-13 | grep -qxF -- "$(printf '  %-10s ' "$k")" ||
			fail_because "the help has no $k: $(screen | grep -v '^ *$' | head -n 20)" ||
			return 1
	done
	screen_has "^  L +where the last pointer" || fail_because "no L in the help" || return 1
	screen_has "^  t +trace / untrace" || fail_because "no t in the help" || return 1
	keys x
	wait_screen "^ +PID COMMAND"
}

test_tui_scan_key_finds_definitely_lost_blocks() {
	keys S
	wait_screen "^scan of [0-9]+: [1-9][0-9]* definitely lost \([0-9]+ B\)" || return 1
	wait_until "the footer's key hints" sh -c \
		"tmux -S '$SOCK' capture-pane -t lt -p | tail -1 | grep -q q:quit"
}

test_tui_q_quits_and_restores_terminal() {
	keys q
	wait_screen "^LEAKTOP_EXIT=0" || return 1
	expect_eq "alternate screen after quit" 0 "$(tm display -p -t lt '#{alternate_on}')" || return 1
	! screen_has "PID COMMAND" || fail_because "curses content left on the screen: $(screen)"
}

# A 15-byte comm (Linux's longest) is shown whole at 80x24, the command line fills the rest
# of the row, and what the program put in its command line is escaped.
test_tui_shows_whole_comm_and_escaped_command_line() {
	local row
	ln -sf "$PROGS/growth_mix" "$TUI/growth_mix_long"
	fresh_server || return 1
	tm new-session -d -s lt -x 80 -y 24 \
		"cd '$TUI' && '$LEAKTOP' -i 0.5 -- ./growth_mix_long 120 \"\$(printf '\\033[2J')\"; sleep 120"
	wait_screen "^ +[0-9]+ growth_mix_long +[0-9.]+ (B|KiB|MiB) " || return 1
	row=$(screen | grep -m1 " growth_mix_long ")
	[ "$(printf '%s' "$row" | LC_ALL=C.UTF-8 wc -L)" = 80 ] ||
		fail_because "the row does not reach the edge: '$row'" || return 1
	# At 80 columns the numbers leave the command line two.
	expect_match "the command line after the flags" " [HFRU]* +\./$" "$row" || return 1
	tm resize-window -t lt -x 200 -y 30
	wait_screen "growth_mix_long 120 \\\\x1b\[2J$" || return 1
	keys q
}

# Whole system over a tiny budget: suspects only.  The quiet process is watched; `t` traces
# its heap on the user's word (picked), `t` again stops it.
sys_mode_of() {
	# The PID goes through the environment so that jq's command line does not match the filter.
	[ "$(LT_PID=$1 jq -r '.processes[] | select(.pid == ($ENV.LT_PID | tonumber)) |
		"\(.heap.mode) \(.heap.picked)"' "$TUI/sys.json" 2>/dev/null)" = "$2" ]
}

test_tui_t_key_traces_and_untraces_the_selected_process_heap() {
	local q
	mkdir -p "$TUI/quiet"
	"$PROGS/steady_grow" "$TUI/quiet" 0 200 &
	q=$!
	BG_PIDS+=("$q")
	wait_file "$TUI/quiet/ready" || return 1
	fresh_server || return 1
	tm new-session -d -s lt -x 120 -y 24 \
		"cd '$TUI' && '$LEAKTOP' -i 0.25 --budget 0.00001 -j sys.json; sleep 120"
	wait_screen "^leaktop .* heap suspects" || return 1
	keys / $(echo "$q" | sed 's/./& /g') Enter
	wait_screen "^ +$q steady_grow" || return 1
	wait_until "the quiet process watched" sys_mode_of "$q" "watch false" || return 1
	keys t
	wait_screen "^heap tracing of $q \(steady_grow\) started" || return 1
	wait_until "the quiet process traced, picked" sys_mode_of "$q" "suspect true" || return 1
	keys t
	wait_screen "^heap tracing of $q \(steady_grow\) stopped" || return 1
	wait_until "the quiet process released, what it counted kept" sys_mode_of "$q" "released false" || return 1
	keys q
	touch "$TUI/quiet/quit"
	wait_exit "$q"
}

# L on a heap site: lastref_prog keeps the only pointer to its block from make_it() in a
# global, which forget_it() overwrites once told (its "lastref: overwrite" line); the verdict
# shows on the message line.
test_tui_L_key_says_where_the_last_pointer_of_the_selected_site_was_lost() {
	local d=$TUI/lastref pid line
	mkdir -p "$d"
	"$PROGS/lastref_prog" "$d" global &
	pid=$!
	BG_PIDS+=("$pid")
	wait_file "$d/ready" || return 1
	line=$(grep -n "lastref: overwrite \*/" "$PROG_SRC/lastref_prog.c" | cut -d: -f1)
	fresh_server || return 1
	tm new-session -d -s lt -x 160 -y 30 \
		"cd '$TUI' && '$LEAKTOP' -i 0.25 -r heap -p $pid; sleep 120"
	wait_screen "^ +$pid lastref_prog" || return 1
	touch "$d/alloc"
	wait_file "$d/allocated" || return 1
	keys Enter
	wait_screen "make_it" || return 1
	keys L
	wait_screen "lastref: watching 0x" || return 1
	if ! watchpoints_fire; then
		# Where hardware watchpoints do not fire the message line says so, and the write
		# is seen by a scan: no function.
		wait_screen "lastref: watching 0x[0-9a-f]+ \(64 bytes\): 1 reference \(memory 0x[0-9a-f]+\); by scans only: hardware watchpoints do not fire here" ||
			return 1
		touch "$d/go"
		wait_screen "overwritten while not watched, between [0-9]+\.[0-9]{3} s and [0-9]+\.[0-9]{3} s" ||
			return 1
		keys q
		touch "$d/quit"
		wait_exit "$pid"
		return
	fi
	touch "$d/go"
	wait_screen "overwritten at forget_it lastref_prog\.c:$line" || return 1
	keys q
	touch "$d/quit"
	wait_exit "$pid"
}

test_tui_cleanup() {
	tm kill-server 2>/dev/null
	return 0
}

run_tests
