#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# check_layers.sh - the layout's one-way data flow (README "How it works"), checked on every
# #include of the source tree and, at the link level, on the built objects.  Needs no root;
# `make check-layers` builds the objects and runs it, and tests/run.sh runs it first.
#
# The layers and what each may include of the project (quoted includes, named by folder:
# "core/model.h"; a header's own includes are checked where it lives, so a rule holds
# transitively):
#   util  user/util/   util/ only: small helpers that know nothing of leaktop;
#   core  user/core/   util/, core/ and the kernel ABI header bpf/leaktop.h; of the system only
#                      the pure C headers (CORE_SYS below), and its objects call only pure libc
#                      functions (CORE_LIBC below): no I/O, no system call;
#   live  user/live/   util/, core/, live/, the ABI headers bpf/leaktop.h and bpf/watch.h and
#                      the skeleton, and the agent's ABI headers agent/channel.h and
#                      agent/alloc_fns.h: the producers, the only layer that touches the system;
#   view  user/view/   util/, core/, view/, bpf/leaktop.h and the generated pprof protobuf
#                      (proto/profile.pb-c.h): renderers of the model, never the plumbing;
#   tui   tui/         util/, core/, view/, tui/ and bpf/leaktop.h, and curses;
#   cli   user/cli/    util/, core/, live/, view/, cli/, bpf/leaktop.h and tui's public header
#                      tui/tui.h (never tui's internals);
#   main  user/*.c     cli/ and util/;
#   agent user/agent/  agent/ and bpf/leaktop.h only: libleaktop-agent.so, loaded into traced
#                      processes (--agent), built apart and linked with nothing of leaktop's;
#   bpf   bpf/         its own headers (by bare name) and the generated vmlinux.h.
# Everywhere: a project header in angle brackets (<live/loader.h>: -I. and -Iuser resolve it
# to the project) is refused, so is any ".." in an include and an include that is not a
# literal ("#include NAME"); only .c and .h files may sit in the layer folders, in any
# subfolder (an .inc could hide an include).  libbpf, libelf/libdw (elfutils), capstone, perf
# and ptrace headers and "/proc..." paths only in live/ (and libbpf's headers in bpf/); curses
# only in tui/.
# At the link level (objects of BUILD, default build/): every function a core header declares
# is defined by a core object; no object of a layer refers to a symbol defined by a layer it
# may not include (the agent's objects, a library of their own, define none for the others).
# The module graph (a module: one .c with its .h, or a lone header; an edge: an include of
# another module's header) has no cycle, apart from ALLOWED_CYCLES.
#
# Usage: tests/check_layers.sh [ROOT [BUILD]]   (ROOT: a source tree, default this repository)
# Prints one "PASS name" or "FAIL name: why" line per rule, then checks itself: a copy of the
# tree with one planted violation of each kind must fail, naming it.  Exit status 0 when
# everything passed.

set -u
shopt -s nullglob

# Cycles allowed while a move removes them: "MODULE MODULE ..." (sorted, space-separated);
# the check fails on an entry that names no cycle any more.  None now.
ALLOWED_CYCLES=(
)
# "/proc" paths outside live/ allowed while they move, or for good: "FILE LITERAL" (the check
# fails on an entry that matches nothing).  The agent runs inside the traced process and reads
# that process's own maps (the RELRO pages it unprotects), never another's.
ALLOWED_PROC=(
	'user/agent/got.c /proc/self/maps'
)

# Pure C headers core may include (fnmatch.h: glob matching of names; sys/wait.h: the
# status macros, the calls being refused at link level).
CORE_SYS='assert.h ctype.h errno.h float.h fnmatch.h inttypes.h limits.h math.h stdalign.h
	  stdarg.h stdbool.h stddef.h stdint.h stdio.h stdlib.h string.h strings.h sys/wait.h'
# Pure libc functions core objects may call (stdio.h for snprintf and memory streams only:
# open_memstream's FILE writes to memory).
CORE_LIBC='abs bsearch calloc ceil floor fabs free labs llabs log log2 malloc memchr memcmp
	   memcpy memmove memset pow qsort realloc reallocarray round snprintf sqrt strchr
	   strcmp strcspn strdup strlen strncasecmp strcasecmp strncmp strndup strnlen strrchr
	   strspn strstr strtod strtok_r strtol strtoll strtoul strtoull vsnprintf fnmatch
	   open_memstream fprintf fputs fputc fclose
	   __assert_fail __stack_chk_fail'

# System headers of the plumbing (live/ only; bpf/ has libbpf's BPF-side headers).
PLUMBING='^(bpf/|elfutils/|libelf\.h$|gelf\.h$|libdw|dwarf\.h$|capstone/|linux/perf_event\.h$|linux/hw_breakpoint\.h$|linux/bpf\.h$|sys/ptrace\.h$|.*\.skel\.h$)'
CURSES='^(n?curses\.h$|ncursesw/|term\.h$|panel\.h$|menu\.h$|form\.h$)'

# layer_of PATH (relative to the root): sets LAYER to the layer's name, "unknown" for another
# folder of user/, or "" outside every layer (no subshell: it runs once per include line).
layer_of() {
	case $1 in
	user/util/*) LAYER=util ;;
	user/core/*) LAYER=core ;;
	user/live/*) LAYER=live ;;
	user/view/*) LAYER=view ;;
	user/cli/*) LAYER=cli ;;
	user/agent/*) LAYER=agent ;;
	user/*/*) LAYER=unknown ;;
	user/*) LAYER=main ;;
	tui/*) LAYER=tui ;;
	bpf/*) LAYER=bpf ;;
	*) LAYER="" ;;
	esac
}

# The agent's headers leaktop shares with it: the channel's layout and the allocator list.
AGENT_ABI='agent/channel.h agent/alloc_fns.h'
# Quoted includes each layer may name (prefixes).
declare -A ALLOWED=(
	[util]='util/'
	[core]='util/ core/ bpf/leaktop.h'
	[live]="util/ core/ live/ bpf/leaktop.h bpf/watch.h leaktop.skel.h $AGENT_ABI"
	[view]='util/ core/ view/ bpf/leaktop.h proto/profile.pb-c.h'
	[tui]='util/ core/ view/ tui/ bpf/leaktop.h'
	[cli]='util/ core/ live/ view/ cli/ bpf/leaktop.h tui/tui.h'
	[main]='cli/ util/'
	[agent]='agent/ bpf/leaktop.h'
)
# Layers whose symbols each layer's objects may refer to (the same rule, at the link level).
declare -A LINKS=(
	[util]='util'
	[core]='util core'
	[live]='util core live'
	[view]='util core view proto'
	[tui]='util core view tui'
	[cli]='util core live view cli tui'
	[main]='util cli'
	[agent]='agent'
)

# source_files ROOT: every file of the layer folders, relative to ROOT, one per line.
source_files() {
	(cd "$1" && find user tui bpf -type f 2>/dev/null | LC_ALL=C sort)
}

# check_includes ROOT: one line "FILE:LINE: what (why)" per violation; status 1 if any.
check_includes() {
	local root=$1 rel layer line no text inc open close why bad=0 prefix ok entry allowed
	local core_sys=" $(echo $CORE_SYS) "
	local -a files=()
	while IFS= read -r rel; do
		case $rel in
		*.c | *.h) ;;
		*)
			echo "$rel: not a .c or .h file in a layer folder (only those are checked)"
			bad=1
			continue
			;;
		esac
		layer_of "$rel"
		if [ "$LAYER" = unknown ]; then
			echo "$rel: in no layer (user/ holds core, live, view, cli, util, agent)"
			bad=1
			continue
		fi
		files+=("$rel")
	done < <(source_files "$root")
	[ "${#files[@]}" -gt 0 ] || return "$bad"
	# One grep for every include line: "FILE:LINE:TEXT".
	while IFS= read -r line; do
		rel=${line%%:*}
		line=${line#*:}
		no=${line%%:*}
		text=${line#*:}
		layer_of "$rel"
		layer=$LAYER
		why=""
		if [[ $text =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*([\"\<])([^\"\>]*)[\"\>] ]]; then
			open=${BASH_REMATCH[1]}
			inc=${BASH_REMATCH[2]}
		else
			echo "$rel:$no: ${text#"${text%%[![:space:]]*}"} (an include must name its file literally)"
			bad=1
			continue
		fi
		close='>'
		[ "$open" = '"' ] && close='"'
		if [[ $inc == *..* ]]; then
			why="no \"..\" in an include: name the header by its folder"
		elif [ "$open" = '<' ]; then
			if [ -e "$root/$inc" ] || [ -e "$root/user/$inc" ] ||
			   [[ $inc =~ (\.skel\.h$|^proto/|^vmlinux\.h$) ]]; then
				why="a project header in angle brackets: quote it"
			elif [[ $inc =~ $PLUMBING ]] && [ "$layer" != live ] &&
			     ! { [ "$layer" = bpf ] && [[ $inc == bpf/* ]]; }; then
				why="only live/ uses libbpf, libelf/libdw, capstone, perf and ptrace"
			elif [[ $inc =~ $CURSES ]] && [ "$layer" != tui ]; then
				why="only tui/ uses curses"
			elif [ "$layer" = core ] && [[ $core_sys != *" $inc "* ]]; then
				why="core includes only the pure C headers:$core_sys"
			fi
		elif [ "$layer" = bpf ]; then
			[ -e "$root/bpf/$inc" ] || [ "$inc" = vmlinux.h ] ||
				why="bpf/ includes only its own headers and vmlinux.h"
		else
			ok=0
			for prefix in ${ALLOWED[$layer]}; do
				case $inc in
				"$prefix"*) ok=1 ;;
				esac
			done
			[ "$ok" = 1 ] || why="$layer may include only ${ALLOWED[$layer]}"
		fi
		if [ -n "$why" ]; then
			echo "$rel:$no: #include $open$inc$close ($why)"
			bad=1
		fi
	done < <(cd "$root" && grep -Hn '^[[:space:]]*#[[:space:]]*include' "${files[@]}")
	# "/proc" paths: string literals that start with one, outside live/ (and bpf/).
	while IFS= read -r line; do
		rel=${line%%:*}
		line=${line#*:}
		no=${line%%:*}
		text=${line#*:}
		layer_of "$rel"
		case $LAYER in
		live | bpf) continue ;;
		esac
		[[ $text =~ \"(/proc[^\"]*)\" ]] || continue
		inc=${BASH_REMATCH[1]}
		allowed=0
		for entry in "${ALLOWED_PROC[@]}"; do
			[ "$entry" = "$rel $inc" ] && allowed=1
		done
		[ "$allowed" = 1 ] && continue
		echo "$rel:$no: \"$inc\" (only live/ reads /proc)"
		bad=1
	done < <(cd "$root" && grep -Hn '"/proc' "${files[@]}")
	# An allowed /proc entry that no longer matches is stale.
	for entry in "${ALLOWED_PROC[@]}"; do
		if ! grep -qF "\"${entry#* }\"" "$root/${entry%% *}" 2>/dev/null; then
			echo "ALLOWED_PROC: \"$entry\" matches nothing any more: remove it from tests/check_layers.sh"
			bad=1
		fi
	done
	return "$bad"
}

# objects BUILD: every object of the layers, "LAYER FILE" per line.
objects() {
	(cd "$1" && find user tui proto -name '*.o' 2>/dev/null) | LC_ALL=C sort | awk -v b="$1" '
		/^user\/[^\/]*\// { split($0, p, "/"); print p[2], b "/" $0; next }
		/^user\// { print "main", b "/" $0; next }
		{ split($0, p, "/"); print p[1], b "/" $0 }'
}

# check_links ROOT BUILD: the link-level rules; one line per violation; status 1 if any.
check_links() {
	local root=$1 build=$2 objs
	objs=$(objects "$build")
	if ! grep -q '^core ' <<<"$objs"; then
		echo "$build/user/core: no objects: build first (make leaktop)"
		return 1
	fi
	{
		# "decl FILE LINE NAME": every function a core header declares (gcc -aux-info of
		# one unit that includes them all).
		(cd "$root" && find user/core -name '*.h' | LC_ALL=C sort |
			sed 's|^user/\(.*\)|#include "\1"|' |
			gcc -std=gnu11 -D_GNU_SOURCE -I"$build" -I. -Iuser -fsyntax-only \
				-aux-info /dev/stdout -x c - 2>/dev/null) |
			awk '$2 ~ /^user\/core\/.*:[NO]C$/ {
				split($2, p, ":"); if (p[1] ":" p[2] in seen) next; seen[p[1] ":" p[2]] = 1; line = $0; sub(/ \(.*/, "", line)
				n = split(line, w, /[ *]+/); print "decl", p[1], p[2], w[n] }'
		# "def LAYER NAME" and "undef LAYER FILE NAME" from one nm of every object.
		awk '{ print "obj", $1, $2 }' <<<"$objs"
		awk '{ print $2 }' <<<"$objs" | xargs nm -A 2>/dev/null | awk '{ print "nm", $0 }'
	} | awk -v build="$build" -v libc="$CORE_LIBC" -v links="$(for l in "${!LINKS[@]}"; do
			printf '%s:%s;' "$l" "${LINKS[$l]}"; done)" '
		BEGIN {
			n = split(libc, a, /[ \t\n]+/); for (i = 1; i <= n; i++) pure[a[i]] = 1
			n = split(links, a, ";")
			for (i = 1; i <= n; i++) if (a[i] != "") {
				split(a[i], b, ":"); m = split(b[2], c, " ")
				for (j = 1; j <= m; j++) may[b[1] " " c[j]] = 1
			}
		}
		$1 == "obj" { olayer[$3] = $2; next }
		$1 == "nm" {
			f = $2; sub(/:.*/, "", f); l = olayer[f]; sub(/^[^:]*:/, "", $2)
			# The agent is a library of its own (it defines malloc & co. for the process it
			# is loaded into), never linked into leaktop: its definitions own no symbol.
			if (NF == 4 && $3 ~ /^[TWDBRCV]$/) {
				if (l != "agent") owner[$4] = l
				if (l == "core") incore[$4] = 1
			}
			else if ($(NF - 1) == "U") { ++nu; ul[nu] = l; uf[nu] = f; us[nu] = $NF }
			sub("^" build "/", "", uf[nu])
			next
		}
		$1 == "decl" { decl[++nd] = $2 ":" $3 ": " $4; dname[nd] = $4; next }
		END {
			bad = 0
			for (i = 1; i <= nd; i++) if (!(dname[i] in incore)) {
				print decl[i] " is declared in core and defined by no core object"; bad = 1 }
			for (i = 1; i <= nu; i++) {
				s = us[i]; l = ul[i]
				if (l == "core" && !(s in owner) && !(s in pure) && !(("core:" s) in said)) {
					said["core:" s] = 1
					print "user/core: its objects call " s ", not a pure libc function (core makes no system call)"
					bad = 1
				}
				if ((s in owner) && !((l " " owner[s]) in may)) {
					print uf[i] ": refers to " s ", defined in " owner[s] "/"
					bad = 1
				}
			}
			exit bad
		}'
}

# check_cycles ROOT: the module graph from quoted includes; one line per cycle not allowed
# (and per allowed cycle that is gone); status 1 if any.  Allowed cycles are reported on a
# "#" line.
check_cycles() {
	local root=$1 bad=0 cycle entry found
	local -a cycles files
	mapfile -t files < <(source_files "$root" | grep -E '^(user|tui)/.*\.[ch]$')
	mapfile -t cycles < <(
		{
			printf 'node %s\n' "${files[@]}"
			(cd "$root" && grep -Ho '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*"' \
				"${files[@]}")
		} | awk '
		function mod(f) { sub(/\.[ch]$/, "", f); return f }
		function node(m) { if (!(m in id)) { id[m] = ++n; name[n] = m } return id[m] }
		$1 == "node" { node(mod($2)); have[$2] = 1; next }
		{
			split($0, p, ":"); inc = $0; sub(/^[^"]*"/, "", inc); sub(/"$/, "", inc)
			from = node(mod(p[1]))
			if (("user/" inc) in have) to = node(mod("user/" inc))
			else if (inc in have) to = node(mod(inc))
			else next
			if (from != to) r[from "," to] = 1
		}
		END {
			for (k = 1; k <= n; k++) for (i = 1; i <= n; i++) if ((i "," k) in r)
				for (j = 1; j <= n; j++) if ((k "," j) in r) r[i "," j] = 1
			for (i = 1; i <= n; i++) {
				s = ""; c = 0
				for (j = 1; j <= n; j++)
					if (i == j || ((i "," j) in r && (j "," i) in r)) { s = s " " name[j]; c++ }
				if (c > 1 && !(s in seen)) { seen[s] = 1; print substr(s, 2) }
			}
		}' | while IFS= read -r entry; do
			tr ' ' '\n' <<<"$entry" | LC_ALL=C sort | paste -sd ' '
		done | LC_ALL=C sort -u)
	for cycle in "${cycles[@]}"; do
		found=0
		for entry in "${ALLOWED_CYCLES[@]}"; do
			[ "$entry" = "$cycle" ] && found=1
		done
		if [ "$found" = 1 ]; then
			echo "# allowed module cycle (ALLOWED_CYCLES, being removed): ${cycle// / <-> }"
		else
			echo "module cycle: ${cycle// / <-> }"
			bad=1
		fi
	done
	for entry in "${ALLOWED_CYCLES[@]}"; do
		found=0
		for cycle in "${cycles[@]}"; do
			[ "$entry" = "$cycle" ] && found=1
		done
		if [ "$found" = 0 ]; then
			echo "ALLOWED_CYCLES: \"$entry\" is no cycle any more: remove it from tests/check_layers.sh"
			bad=1
		fi
	done
	return "$bad"
}

# check_sizes ROOT: the run loop stays a loop: user/cli/run.c at most RUN_MAX_LINES lines, and
# no function of user/cli/ longer than CLI_FN_MAX_LINES (from the line of its opening brace at
# the start of a line to its closing one).  One line per violation; status 1 if any.
RUN_MAX_LINES=700
CLI_FN_MAX_LINES=100
check_sizes() {
	local root=$1 n out
	n=$(wc -l <"$root/user/cli/run.c")
	[ "$n" -le "$RUN_MAX_LINES" ] ||
		out="user/cli/run.c: $n lines (at most $RUN_MAX_LINES: move a feature out)"
	out+=$(cd "$root" && awk -v max="$CLI_FN_MAX_LINES" '
		FNR == 1 { start = 0 }
		/^[A-Za-z_].*\(/ && !/;[[:space:]]*$/ { head = $0 }
		/^\{/ { start = FNR; name = head }
		/^\}/ && start {
			if (FNR - start > max) {
				sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
				printf "\n%s: %s() is %d lines (at most %d)", FILENAME, name, FNR - start, max
			}
			start = 0
		}' user/cli/*.c)
	out=${out#$'\n'}
	[ -z "$out" ] && return 0
	echo "$out"
	return 1
}

# report NAME OUTPUT STATUS: one PASS or FAIL line ("#" lines of OUTPUT are passed through).
report() {
	grep '^#' <<<"$2"
	if [ "$3" = 0 ]; then
		echo "PASS $1"
	else
		echo "FAIL $1: $(grep -v '^#' <<<"$2" | paste -sd ';' | sed 's/;/; /g')"
	fi
}

# check_all ROOT BUILD: every check; all violations, one per line, on stdout; status 1 if any.
check_all() {
	local bad=0
	check_includes "$1" || bad=1
	check_links "$1" "$2" || bad=1
	check_sizes "$1" || bad=1
	local cycles
	cycles=$(check_cycles "$1") || bad=1
	grep -v '^#' <<<"$cycles" | grep . || true
	return "$bad"
}

cd "$(dirname "$0")/.." || exit 1
ROOT=${1:-.}
BUILD=${2:-$ROOT/build}
status=0

out=$(check_includes "$ROOT"); st=$?
report include_rule_holds "$out" "$st"
[ "$st" = 0 ] || status=1
out=$(check_links "$ROOT" "$BUILD"); st=$?
report layer_links_hold "$out" "$st"
[ "$st" = 0 ] || status=1
out=$(check_cycles "$ROOT"); st=$?
report module_graph_has_no_cycle "$out" "$st"
[ "$st" = 0 ] || status=1
out=$(check_sizes "$ROOT"); st=$?
report cli_stays_small "$out" "$st"
[ "$st" = 0 ] || status=1

# The checker itself: in a copy of the tree (and of its objects),
# one planted violation of each kind is caught and named, and nothing else is.
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
src=$tmp/src
mkdir -p "$src"
(cd "$ROOT" && cp -r user tui bpf "$src"/) || exit 1
mkdir -p "$tmp/build"
(cd "$BUILD" 2>/dev/null && find user tui proto -name '*.o' 2>/dev/null |
	xargs -r cp --parents -t "$tmp/build/")
[ -e "$BUILD/leaktop.skel.h" ] && cp "$BUILD/leaktop.skel.h" "$tmp/build/"
if ! out=$(check_all "$src" "$tmp/build" 2>&1); then
	echo "FAIL include_check_catches_planted_violations: the copied tree fails: $out"
	exit 1
fi

# One violation of each kind planted in the copy: KIND|FILE|TEXT appended|what the check says.
# All are planted at once; the check must name each, and say nothing else.
kinds=0
wants=()
while IFS='|' read -r kind file text want; do
	[ -n "$kind" ] || continue
	kinds=$((kinds + 1))
	mkdir -p "$(dirname "$src/$file")"
	printf '%b' "$text" >>"$src/$file"
	wants+=("$kind|$want")
done <<'EOF'
util includes a project layer|user/util/p7.c|#include "core/model.h"\n|user/util/p7.c:1: #include "core/model.h" (util may include only
core includes live|user/core/p1.c|#include <stdlib.h>\n\n#include "live/collector.h"\n|user/core/p1.c:3: #include "live/collector.h" (core may include only
live includes cli|user/live/p6.c|#include "cli/run.h"\n|user/live/p6.c:1: #include "cli/run.h" (live may include only
view includes live|user/view/p2.c|#include "live/loader.h"\n|user/view/p2.c:1: #include "live/loader.h" (view may include only
tui includes cli|tui/p3.c|#include "cli/options.h"\n|tui/p3.c:1: #include "cli/options.h" (tui may include only
cli includes tui internals|user/cli/p4.c|#include "tui/keys_internal.h"\n|user/cli/p4.c:1: #include "tui/keys_internal.h" (cli may include only
main includes live|user/p5.c|#include "live/loader.h"\n|user/p5.c:1: #include "live/loader.h" (main may include only
bpf includes userspace|bpf/p.bpf.c|#include "../user/core/model.h"\n|bpf/p.bpf.c:1: #include "../user/core/model.h" (no ".."
project header in angle brackets|user/core/p8.c|#include <live/collector.h>\n|user/core/p8.c:1: #include <live/collector.h> (a project header in angle brackets
dot-dot path|user/core/p9.c|#include "core/../live/loader.h"\n|user/core/p9.c:1: #include "core/../live/loader.h" (no ".."
dot-dot path in tui|tui/p9.c|#include "view/../cli/run.h"\n|tui/p9.c:1: #include "view/../cli/run.h" (no ".."
include through a macro|user/view/p10.c|#define H "live/collector.h"\n#include H\n|user/view/p10.c:2: #include H (an include must name its file literally)
subfolder|user/core/sub/p11.c|#include "live/collector.h"\n|user/core/sub/p11.c:1: #include "live/collector.h" (core may include only
not a .c or .h file|user/core/p12.inc|#include "live/collector.h"\n|user/core/p12.inc: not a .c or .h file
libbpf outside live|user/view/p13.h|#include <bpf/libbpf.h>\n|user/view/p13.h:1: #include <bpf/libbpf.h> (only live/
libdw outside live|user/cli/p14.c|#include <elfutils/libdwfl.h>\n|user/cli/p14.c:1: #include <elfutils/libdwfl.h> (only live/
skeleton outside live|tui/p15.c|#include "leaktop.skel.h"\n|tui/p15.c:1: #include "leaktop.skel.h" (tui may include only
curses outside tui|user/view/p16.c|#include <curses.h>\n|user/view/p16.c:1: #include <curses.h> (only tui/ uses curses
/proc outside live|user/core/p17.c|static const char *p = "/proc/self/maps";\n|user/core/p17.c:1: "/proc/self/maps" (only live/ reads /proc)
system I/O header in core|user/core/p18.c|#include <fcntl.h>\n|user/core/p18.c:1: #include <fcntl.h> (core includes only the pure C headers
core prototype defined elsewhere|user/core/types.h|int collector__read_planted(void *c, void *s);\n|collector__read_planted is declared in core and defined by no core object
agent includes live|user/agent/p19.c|#include "live/agent_channel.h"\n|user/agent/p19.c:1: #include "live/agent_channel.h" (agent may include only
live includes the agent's internals|user/live/p20.c|#include "agent/agent.h"\n|user/live/p20.c:1: #include "agent/agent.h" (live may include only
module cycle|user/view/format.h|#include "view/report.h"\n|module cycle: user/view/format <-> user/view/report
EOF


# Link-level kinds: objects planted in the copied build tree, and an allow-list entry.
# cc_obj LAYER SOURCE: compile SOURCE into that layer's objects of the copy.
cc_obj() {
	printf '%s\n' "$2" | gcc -x c -c -o "$tmp/build/user/$1/planted.o" -
}
cc_obj core 'int open(const char *, int, ...); int planted(void) { return open("x", 0); }'
wants+=("core calls a system function|user/core: its objects call open, not a pure libc function")
cc_obj view 'int collector__read(void *, void *); int planted(void) { return collector__read(0, 0); }'
wants+=("view calls live|user/view/planted.o: refers to collector__read, defined in live/")
cc_obj agent 'int collector__read(void *, void *); int planted(void) { return collector__read(0, 0); }'
wants+=("agent calls live|user/agent/planted.o: refers to collector__read, defined in live/")
ALLOWED_CYCLES+=('user/core/model user/core/sample')
wants+=('stale allow-list entry|ALLOWED_CYCLES: "user/core/model user/core/sample" is no cycle any more')
kinds=$((kinds + 4))
# A function of 101 lines in the command-line layer.
{ printf 'int planted_long(void)\n{\n'; for i in $(seq 100); do printf '\t;\n'; done; printf '}\n'; } \
	>"$src/user/cli/p21.c"
wants+=("long cli function|user/cli/p21.c: planted_long() is 101 lines (at most 100)")
kinds=$((kinds + 1))

got=$(check_all "$src" "$tmp/build" 2>&1)
missing=""
for w in "${wants[@]}"; do
	grep -qF -- "${w#*|}" <<<"$got" || missing="$missing [${w%%|*}: \"${w#*|}\"]"
done
if [ -z "$missing" ] && [ "$(grep -c . <<<"$got")" != "$kinds" ]; then
	missing=" nothing, but said more than the $kinds planted: $(paste -sd '|' <<<"$got")"
fi
if [ -n "$missing" ]; then
	echo "FAIL include_check_catches_planted_violations: missed$missing"
	status=1
else
	echo "PASS include_check_catches_planted_violations ($kinds kinds planted)"
fi
exit "$status"
