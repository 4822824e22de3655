#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# check_includes.sh - the layout's one-way data flow, checked on every #include:
#   user/core/  includes only core/, util/ and the kernel ABI header bpf/leaktop.h: nothing
#               from live/, view/, cli/ or tui/, no libbpf, libdw/elfutils, skeleton, curses;
#   user/view/  includes only core/, view/, util/, bpf/leaktop.h and the generated pprof
#               protobuf (proto/profile.pb-c.h): no live/ or cli/ header, no libbpf, no
#               skeleton, no libdw/elfutils, no curses;
#   tui/        the same as view/, plus tui/ itself and curses.
# Project headers are named by their folder ("core/model.h"), so a header's own includes
# are checked where it lives and the rule holds transitively.
#
# Usage: tests/check_includes.sh [ROOT]   (ROOT: a source tree, default this repository)
# Prints "PASS include_rule_holds" or one FAIL line naming each offending include, then
# checks itself: a copy of the tree with a planted violation must fail, naming it.
# Exit status 0 when everything passed.

set -u
shopt -s nullglob

# check_tree ROOT: one line "FILE:LINE: #include X (why)" per violation on stdout; status 1
# if there was any.
check_tree() {
	local root=$1 dir file line no inc bad=0
	local -A allowed=(
		[user/core]='core/ util/ bpf/leaktop.h'
		[user/view]='core/ view/ util/ bpf/leaktop.h proto/profile.pb-c.h'
		[tui]='core/ view/ util/ tui/ bpf/leaktop.h'
	)
	# System headers of the plumbing: libbpf, the skeleton, libdw/libelf, capstone, curses.
	local plumbing='^(bpf/|elfutils/|libelf\.h|gelf\.h|libdw\.h|libdwfl\.h|dwarf\.h|capstone/|.*\.skel\.h)'
	local curses='^(n?curses\.h|ncursesw/|term\.h)'

	for dir in user/core user/view tui; do
		local files=("$root/$dir"/*.[ch])
		[ "${#files[@]}" -gt 0 ] || continue
		# Only the include lines, from one grep: "FILE:LINE:TEXT".
		while IFS= read -r line; do
			file=${line%%:*}
			line=${line#*:}
			no=${line%%:*}
			line=${line#*:}
			[[ $line =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*([\"\<])([^\"\>]+)[\"\>] ]] ||
				continue
			local open=${BASH_REMATCH[1]} close='>' why=""
			inc=${BASH_REMATCH[2]}
			[ "$open" = '"' ] && close='"'
			if [ "$open" = '"' ]; then
				local ok=0 prefix
				for prefix in ${allowed[$dir]}; do
					case $inc in
					"$prefix"*) ok=1 ;;
					esac
				done
				[ "$ok" = 1 ] || why="$dir may include only ${allowed[$dir]}"
			elif [[ $inc =~ $plumbing ]]; then
				why="$dir never sees libbpf, the skeleton, libdw/libelf or capstone"
			elif [ "$dir" != tui ] && [[ $inc =~ $curses ]]; then
				why="only tui/ uses curses"
			fi
			if [ -n "$why" ]; then
				echo "${file#"$root"/}:$no: #include $open$inc$close ($why)"
				bad=1
			fi
		done < <(grep -Hn '^[[:space:]]*#[[:space:]]*include' "${files[@]}")
	done
	return "$bad"
}

cd "$(dirname "$0")/.." || exit 1
ROOT=${1:-.}
status=0

if out=$(check_tree "$ROOT"); then
	echo "PASS include_rule_holds"
else
	echo "FAIL include_rule_holds: $(printf '%s\n' "$out" | paste -sd ';' | sed 's/;/; /g')"
	status=1
fi

# The checker itself: a planted violation in each folder is caught and named.
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/user/core" "$tmp/user/view" "$tmp/tui"
printf '#include "core/model.h"\n#include <stdio.h>\n' >"$tmp/user/core/ok.c"
printf '#include "view/format.h"\n#include <jansson.h>\n' >"$tmp/user/view/ok.c"
printf '#include "tui/tui.h"\n#include <curses.h>\n' >"$tmp/tui/ok.c"
if ! out=$(check_tree "$tmp"); then
	echo "FAIL include_check_catches_planted_violations: a clean tree fails: $out"
	status=1
else
	printf '#include <stdlib.h>\n\n#include "live/collector.h"\n' >"$tmp/user/core/bad.c"
	printf '#include <bpf/libbpf.h>\n' >"$tmp/user/view/bad.h"
	printf '#include "leaktop.skel.h"\n' >"$tmp/tui/bad.c"
	printf '#include <curses.h>\n' >"$tmp/user/view/bad2.c"
	out=$(check_tree "$tmp")
	want=("user/core/bad.c:3: #include \"live/collector.h\""
	      "user/view/bad.h:1: #include <bpf/libbpf.h>"
	      "tui/bad.c:1: #include \"leaktop.skel.h\""
	      "user/view/bad2.c:1: #include <curses.h>")
	missing=""
	for w in "${want[@]}"; do
		grep -qF -- "$w" <<<"$out" || missing="$missing [$w]"
	done
	if [ -n "$missing" ] || [ "$(wc -l <<<"$out")" != 4 ]; then
		echo "FAIL include_check_catches_planted_violations: missed$missing; said: $out"
		status=1
	else
		echo "PASS include_check_catches_planted_violations"
	fi
fi
exit "$status"
