#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# install.sh - `make install` and `make uninstall`: the binary, README, man page, bash
# completion and systemd unit land where they belong with their modes; the unit passes
# `systemd-analyze verify` (its ExecStart is the binary just installed, under PREFIX); the man
# page renders without a warning and documents every command and every option --help
# prints; the completion completes options and commands; uninstall removes it all.  One
# test runs the unit's command itself, as systemd would, with only the unit's capabilities:
# the whole system traced, a leaking program found on the metrics endpoint.

. "$(dirname "$0")/lib.sh"
require_built

P=$E2E_TMP/prefix	# PREFIX of the install the tests look at (DESTDIR empty)
MAN=$P/share/man/man8/leaktop.8
COMP=$P/share/bash-completion/completions/leaktop
UNIT=$P/lib/systemd/system/leaktop.service

# make_in LOG TARGET VAR=VALUE...: make TARGET in the repository, output to LOG.
make_in() {
	local log=$1
	shift
	make --no-print-directory -C "$E2E_ROOT" "$@" >"$log" 2>&1 ||
		fail_because "make $* failed: $(tail -n 20 "$log")"
}

installed() {
	make_in "$E2E_TMP/install.log" install DESTDIR= PREFIX="$P"
}

# The files an install under PREFIX holds, with their modes: "MODE PATH" per line.
expected_files() {
	local p=$1
	cat <<EOF
755 $p/sbin/leaktop
644 $p/lib/leaktop/libleaktop-agent.so
644 $p/share/doc/leaktop/README.md
644 $p/share/man/man8/leaktop.8
644 $p/share/bash-completion/completions/leaktop
644 $p/lib/systemd/system/leaktop.service
EOF
}

# files_under DIR: "MODE PATH" of every file and symbolic link under DIR.
files_under() {
	find "$1" \( -type f -o -type l \) -printf '%m %p\n' 2>/dev/null | sort
}

# Long options (--name) in a text, one per line, sorted.
long_options() {
	grep -o -e '--[a-z][a-z0-9-]*' | sort -u
}

# The man page as plain ASCII text (no bold, underline or overstriking).
man_text() {
	groff -man -Tascii -P -c -P -b -P -u "$MAN" 2>/dev/null
}

# complete_words WORD...: what the installed completion offers for the last WORD.
complete_words() {
	bash --norc --noprofile -c '
		. "$1" || exit 1
		shift
		COMP_WORDS=("$@")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		_leaktop leaktop "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		printf "%s\n" "${COMPREPLY[@]}"' complete_words "$COMP" "$@" 2>&1
}

test_install_puts_every_file_with_its_mode() {
	scenario installed || return 1
	local want got
	want=$(expected_files "$P" | sort)
	got=$(files_under "$P")
	expect_eq "files installed under PREFIX (mode path)" "$want" "$got"
}

test_unit_runs_the_installed_binary() {
	scenario installed || return 1
	local exec
	exec=$(grep '^ExecStart=' "$UNIT")
	expect_eq "the unit's ExecStart" \
		"ExecStart=$P/sbin/leaktop --quiet --listen 127.0.0.1:9645 --oom-dir /var/lib/leaktop" \
		"$exec" || return 1
	! grep -q '@[A-Z_]*@' "$UNIT" ||
		fail_because "placeholders left in the unit: $(grep '@[A-Z_]*@' "$UNIT")"
}

# systemd-analyze verify checks the syntax, that ExecStart's binary is executable and that
# man:leaktop(8) opens (found through MANPATH here); it needs no running systemd.
test_unit_passes_systemd_analyze_verify() {
	scenario installed || return 1
	command -v systemd-analyze >/dev/null ||
		fail_because "systemd-analyze is not installed" || return 1
	local out status
	out=$(cd "$E2E_TMP" && MANPATH=$P/share/man: SYSTEMD_LOG_COLOR=0 \
		systemd-analyze verify "$UNIT" 2>&1)
	status=$?
	expect_eq "exit status of systemd-analyze verify (output: $out)" 0 "$status" || return 1
	expect_eq "output of systemd-analyze verify" "" "$out"
}

test_unit_grants_only_the_capabilities_it_needs() {
	scenario installed || return 1
	local caps="CAP_BPF CAP_PERFMON CAP_SYS_PTRACE CAP_DAC_READ_SEARCH CAP_CHECKPOINT_RESTORE"
	expect_eq "CapabilityBoundingSet" "$caps" \
		"$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT")" || return 1
	expect_eq "AmbientCapabilities" "$caps" \
		"$(sed -n 's/^AmbientCapabilities=//p' "$UNIT")" || return 1
	expect_eq "NoNewPrivileges" yes "$(sed -n 's/^NoNewPrivileges=//p' "$UNIT")" || return 1
	expect_eq "ProtectSystem" strict "$(sed -n 's/^ProtectSystem=//p' "$UNIT")" || return 1
	! grep -Eq '^(ProtectProc=invisible|ProcSubset=pid)' "$UNIT" ||
		fail_because "the unit hides other processes' /proc entries"
}

# The unit's ExecStart (the endpoint moved to a free port, the state directory to a temporary
# one, -d added) run as root with only the capabilities the unit grants, beside steady_grow
# leaking 4 KiB every 20 ms: leaktop must find it (whole-system mode, the overhead budget
# making it a suspect) and serve it on /metrics, then end with status 0.
SVC_PORT=""
SVC_PID=""
svc_page_has_leak() {
	metrics_flag "$SVC_PORT" "$SVC_PID" heap_growth "$E2E_TMP/svc.page"
}
service_run() {
	scenario installed || return 1
	local caps cmd state=$E2E_TMP/state d=$E2E_TMP/svc
	require_root
	command -v setpriv >/dev/null || fail_because "setpriv is missing (util-linux)" || return 1
	caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT" | tr 'A-Z ' 'a-z,' |
		sed 's/cap_/+/g')
	SVC_PORT=$((20000 + RANDOM % 30000))
	mkdir -p -m 0700 "$state" "$d"
	cmd=$(sed -n 's/^ExecStart=//p' "$UNIT" |
		sed "s|127.0.0.1:9645|127.0.0.1:$SVC_PORT|; s|/var/lib/leaktop|$state|")
	"$PROGS/steady_grow" "$d" 4096 20 &
	BG_PIDS+=("$!")
	wait_file "$d/ready" || return 1
	SVC_PID=$!
	# shellcheck disable=SC2086
	setpriv --bounding-set="-all,$caps" --inh-caps="-all,$caps" --ambient-caps="-all,$caps" \
		--no-new-privs -- $cmd -d 60 >"$E2E_TMP/svc.out" 2>"$E2E_TMP/svc.err" &
	LT_PID=$!
	BG_PIDS+=("$LT_PID")
	WAIT_LIMIT=60 wait_until "steady_grow (pid $SVC_PID) flagged on the service's /metrics" \
		svc_page_has_leak || return 1
	kill -TERM "$LT_PID"
	wait_exit "$LT_PID" || return 1
	touch "$d/stop" "$d/quit"
	expect_eq "exit status (stderr: $(cat "$E2E_TMP/svc.err"))" 0 "$WAIT_STATUS"
}

test_unit_command_with_only_the_units_capabilities_finds_a_leak_and_serves_it() {
	scenario service_run || return 1
	expect_eq "what it printed on stdout (--quiet)" "" "$(cat "$E2E_TMP/svc.out")" || return 1
	grep -Eq "^leaktop_heap_outstanding_bytes\{pid=\"$SVC_PID\",comm=\"steady_grow\".*\} [1-9]" \
		"$E2E_TMP/svc.page" ||
		fail_because "no heap bytes for pid $SVC_PID: $(grep "pid=\"$SVC_PID\"" \
			"$E2E_TMP/svc.page" | head -n 5)"
}

test_man_page_renders_without_warnings() {
	scenario installed || return 1
	local out
	out=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z \
		"$MAN" 2>&1 >/dev/null)
	expect_eq "warnings of man --warnings" "" "$out" || return 1
	out=$(groff -man -ww -z "$MAN" 2>&1)
	expect_eq "warnings of groff -man -ww -z" "" "$out" || return 1
	if command -v mandoc >/dev/null; then
		out=$(mandoc -Tlint "$MAN" 2>&1)
		expect_eq "mandoc -Tlint" "" "$out" || return 1
	fi
}

# Every option the usage texts print is in the man page (which may document more: options
# on their way in), and so is every command of user/main.c's table.
test_man_page_documents_every_option_and_command() {
	scenario installed || return 1
	local text help missing="" o c
	text=$(man_text)
	[ -n "$text" ] || fail_because "the man page renders to nothing" || return 1
	help=$("$LEAKTOP" --help; "$LEAKTOP" report --help; "$LEAKTOP" diff --help)
	[ "$(long_options <<<"$help" | wc -l)" -gt 20 ] ||
		fail_because "too few long options in --help: $help" || return 1
	for o in $(long_options <<<"$help"); do
		grep -qe "$o\\b" <<<"$text" || missing="$missing $o"
	done
	for o in $(grep -Eo '^ +-[A-Za-z],' <<<"$help" | tr -d ' ,' | sort -u); do
		grep -qe "$o\\b" <<<"$text" || missing="$missing $o"
	done
	for c in $(sed -n 's/^\t{ "\([a-z]*\)", .*/\1/p' "$E2E_ROOT/user/main.c"); do
		grep -Eq "^ {7}$c\\b" <<<"$text" || missing="$missing command:$c"
	done
	expect_eq "options and commands the man page lacks" "" "${missing# }"
}

test_completion_completes_commands_and_options() {
	scenario installed || return 1
	local got o missing=""
	got=$(bash --norc --noprofile -c '. "$1" && complete -p leaktop' x "$COMP" 2>&1)
	expect_eq "complete -p leaktop" "complete -F _leaktop leaktop" "$got" || return 1
	expect_eq "completion of 'leaktop --oom-d'" "--oom-dir" "$(complete_words leaktop --oom-d)" ||
		return 1
	expect_eq "completion of 'leaktop rep'" "report" "$(complete_words leaktop rep)" ||
		return 1
	expect_eq "completion of 'leaktop -r heap,f'" "heap,fd" \
		"$(complete_words leaktop -r heap,f)" || return 1
	expect_eq "completion of 'leaktop -p $$'" "$$" "$(complete_words leaktop -p $$ |
		grep -x "$$")" || return 1
	# The options --help lists (after its usage lines, which name other commands' options).
	got=$(complete_words leaktop --)
	for o in $("$LEAKTOP" --help | sed -n '/^Options:/,$p' | long_options); do
		grep -qx -e "$o" <<<"$got" || missing="$missing $o"
	done
	expect_eq "options of --help the completion does not offer" "" "${missing# }" || return 1
	# ... and lastref's, after its command word.
	got=$(complete_words leaktop lastref --)
	missing=""
	for o in $("$LEAKTOP" lastref --help | long_options); do
		grep -qx -e "$o" <<<"$got" || missing="$missing $o"
	done
	expect_eq "options of lastref --help the completion does not offer" "" "${missing# }"
}

test_install_replaces_symlinks_without_following_them() {
	local d=$E2E_TMP/destdir victim=$E2E_TMP/victim got
	echo "not to be touched" >"$victim"
	mkdir -p "$d/usr/local/share/man/man8"
	ln -s "$victim" "$d/usr/local/share/man/man8/leaktop.8"
	make_in "$E2E_TMP/destdir.log" install DESTDIR="$d" PREFIX=/usr/local || return 1
	expect_eq "the file a symlink at the destination pointed to" "not to be touched" \
		"$(cat "$victim")" || return 1
	[ -f "$d/usr/local/share/man/man8/leaktop.8" ] &&
		[ ! -L "$d/usr/local/share/man/man8/leaktop.8" ] ||
		fail_because "the man page was not installed as a regular file" || return 1
	# With DESTDIR the unit names the final place, not the staging one.
	expect_eq "ExecStart under DESTDIR" \
		"ExecStart=/usr/local/sbin/leaktop --quiet --listen 127.0.0.1:9645 --oom-dir /var/lib/leaktop" \
		"$(grep '^ExecStart=' "$d/usr/local/lib/systemd/system/leaktop.service")" || return 1
	expect_eq "files installed under DESTDIR" "$(expected_files "$d/usr/local" | sort)" \
		"$(files_under "$d")" || return 1
	make_in "$E2E_TMP/destdir.log" uninstall DESTDIR="$d" PREFIX=/usr/local || return 1
	got=$(files_under "$d")
	expect_eq "files left under DESTDIR after make uninstall" "" "$got"
}

# Last: removes what the tests above looked at.
test_uninstall_removes_everything() {
	scenario installed || return 1
	make_in "$E2E_TMP/uninstall.log" uninstall DESTDIR= PREFIX="$P" || return 1
	expect_eq "files left under PREFIX after make uninstall" "" "$(files_under "$P")" ||
		return 1
	[ ! -e "$P/share/doc/leaktop" ] ||
		fail_because "make uninstall left $P/share/doc/leaktop"
}

run_tests
