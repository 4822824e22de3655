#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# minidebuginfo.sh FULL OUT - strip the program FULL into OUT the way Fedora's
# find-debuginfo does, keeping MiniDebugInfo: the function symbols that .dynsym lacks go
# into a symtab-only ELF, xz-compressed into OUT's .gnu_debugdata section.  OUT then has no
# .symtab and no DWARF, and no debug file is installed anywhere.
set -eu

full=$1
out=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

nm -D "$full" --format=posix --defined-only | awk '{ print $1 }' | sort > "$tmp/dynsyms"
nm "$full" --format=posix --defined-only |
	awk '{ if ($2 == "T" || $2 == "t") print $1 }' | sort > "$tmp/funcsyms"
comm -13 "$tmp/dynsyms" "$tmp/funcsyms" > "$tmp/keep"
objcopy --only-keep-debug "$full" "$tmp/debug"
objcopy -S --remove-section .gdb_index --remove-section .comment \
	--keep-symbols="$tmp/keep" "$tmp/debug" "$tmp/mini"
xz -f "$tmp/mini"
objcopy --strip-all --remove-section .comment "$full" "$tmp/out"
objcopy --add-section .gnu_debugdata="$tmp/mini.xz" "$tmp/out"
mv "$tmp/out" "$out"
