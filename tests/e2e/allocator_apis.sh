#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# allocator_apis.sh - every entry point of each allocator a process binds, counted once
# and freed by whatever API frees it: glibc, Debian's tcmalloc and mimalloc preloaded,
# jemalloc linked, a static program's own glibc, musl (dynamic and static); C++'s operators
# new and delete of each, and of a static C++ program.
# tests/e2e/allocators.sh checks which allocator is found and its leak sites; this script
# checks the process's whole heap against the program's exact numbers (nothing counted
# twice when an allocator calls itself, every free matched), that the probes are in the
# bound allocator and not in libc, and how `--` finds the allocator from LD_PRELOAD.
#
# The programs (tests/progs/, their numbers mirrored below):
#   alloc_any.c   malloc, calloc, realloc(NULL, n), realloc of a block, posix_memalign,
#                 aligned_alloc leaked from one function each; churn() frees 100 mallocs,
#                 churn_kinds() 5 blocks of each function (five sites).  In all 15 blocks,
#                 14580 bytes outstanding; 142 allocations, 127 frees.
#   alloc_api.c   the same through an allocator's own API (mimalloc's mi_*, tcmalloc's tc_*,
#                 or the C API as a control): malloc, calloc, realloc of a block, aligned
#                 leaked; plain and sized frees.  In all 9 blocks, 6440 bytes outstanding;
#                 51 allocations, 42 frees.
#   cxx_any.cc    new, new[], new(std::nothrow), aligned new (alignas(64)) leaked; churn
#                 through sized delete, delete[] and sized aligned delete.  In all 12
#                 blocks, 1192 bytes outstanding; 92 allocations, 80 frees.
# Both write DIR/ready and wait for DIR/go, so with -p every allocation the program makes
# after main starts is made under the probes (an allocator's own start-up allocations,
# before main, are not): the process's heap totals are exactly the program's.

. "$(dirname "$0")/lib.sh"
require_root
require_built alloc_any alloc_any_je alloc_any_static alloc_any_musl alloc_any_musl_static \
	cxx_any cxx_any_je cxx_any_static alloc_api alloc_api_mi alloc_api_tc

AA=$E2E_TMP/apis
declare -A AA_PID

TCMALLOC=libtcmalloc_minimal.so.4
MIMALLOC=libmimalloc.so.2

# ------------------------------------------------------------ running the programs

# run_pid NAME PROG [VAR=VALUE...]: start PROGS/PROG AA/NAME/dir with those variables in
# its environment; once it waits, trace it with `leaktop -v -p`; let it allocate; two
# snapshots later AA/NAME/alive.json gets the latest and AA/NAME/bytes the bytes at the
# allocators' malloc in its memory (see breakpoint_bytes); then leaktop is stopped (status
# 0 expected) and the program let go.  Its pid goes to AA_PID[NAME].
run_pid() {
	local name=$1 prog=$2 dir=$AA/$1 p
	shift 2
	run_pid_to_done "$dir" "$prog" "$@" || return 1
	p=$DONE_PID
	AA_PID[$name]=$p
	breakpoint_bytes "$p" >"$dir/bytes"
	signal INT "$LT_PID"
	wait_exit "$LT_PID" || return 1
	expect_eq "leaktop's exit status (stderr: $(tail -n 3 "$dir/err"))" 0 "$WAIT_STATUS" ||
		return 1
	touch "$dir/dir/quit"
	wait_exit "$p"
	expect_eq "$prog's exit status" 0 "$WAIT_STATUS"
}

# run_cmd NAME PRELOAD PROG [ARG...]: `LD_PRELOAD=PRELOAD leaktop -v -- PROG... AA/NAME/dir`
# (an empty PRELOAD: none), the program's go given at once; then as run_to_done: alive.json
# two snapshots after it is done, final.json once it and leaktop have ended.
run_cmd() {
	local name=$1 preload=$2 dir=$AA/$1
	shift 2
	mkdir -p "$dir/dir"
	touch "$dir/dir/go"
	start_cmd "$dir" "$preload" "$@" || return 1
	finish_cmd "$name"
}

# start_cmd DIR PRELOAD PROG [ARG...]: leaktop started on PROG... DIR/dir, with PRELOAD in
# leaktop's own environment (so in the command's) when not empty.
start_cmd() {
	local dir=$1 preload=$2
	shift 2
	if [ -n "$preload" ]; then
		LD_PRELOAD=$preload "$LEAKTOP" -v -b -i "$INTERVAL" -j - -- "$@" "$dir/dir" \
			>"$dir/out.jsonl" 2>"$dir/err" &
	else
		"$LEAKTOP" -v -b -i "$INTERVAL" -j - -- "$@" "$dir/dir" >"$dir/out.jsonl" \
			2>"$dir/err" &
	fi
	LT_PID=$!
	BG_PIDS+=("$LT_PID")
}

# finish_cmd NAME: the rest of run_cmd, once the program has been let go.
finish_cmd() {
	local dir=$AA/$1
	wait_file "$dir/dir/done" || return 1
	AA_PID[$1]=$(pid_in "$dir/dir/done")
	wait_two_more "$dir/out.jsonl" || return 1
	last_line "$dir/out.jsonl" "$dir/alive.json"
	touch "$dir/dir/quit"
	wait_exit "$LT_PID" || return 1
	last_line "$dir/out.jsonl" "$dir/final.json"
	expect_eq "leaktop's exit status (stderr: $(tail -n 3 "$dir/err"))" 0 "$WAIT_STATUS"
}

c_glibc() { scenario run_c_glibc; }
run_c_glibc() { run_pid c_glibc alloc_any; }
c_tcmalloc() { scenario run_c_tcmalloc; }
run_c_tcmalloc() { run_pid c_tcmalloc alloc_any LD_PRELOAD=$TCMALLOC; }
c_mimalloc() { scenario run_c_mimalloc; }
run_c_mimalloc() { run_pid c_mimalloc alloc_any LD_PRELOAD=$MIMALLOC; }
c_jemalloc() { scenario run_c_jemalloc; }
run_c_jemalloc() { run_pid c_jemalloc alloc_any_je; }
c_static() { scenario run_c_static; }
run_c_static() { run_pid c_static alloc_any_static; }
c_two_preloads() { scenario run_c_two_preloads; }
run_c_two_preloads() { run_pid c_two_preloads alloc_any "LD_PRELOAD=$MIMALLOC $TCMALLOC"; }
api_glibc() { scenario run_api_glibc; }
run_api_glibc() { run_pid api_glibc alloc_api; }
api_mimalloc() { scenario run_api_mimalloc; }
run_api_mimalloc() { run_pid api_mimalloc alloc_api_mi; }
api_tcmalloc() { scenario run_api_tcmalloc; }
run_api_tcmalloc() { run_pid api_tcmalloc alloc_api_tc; }
c_musl() { scenario run_c_musl; }
run_c_musl() { run_pid c_musl alloc_any_musl; }
c_musl_static() { scenario run_c_musl_static; }
run_c_musl_static() { run_pid c_musl_static alloc_any_musl_static; }
cxx_glibc() { scenario run_cxx_glibc; }
run_cxx_glibc() { run_pid cxx_glibc cxx_any; }
cxx_tcmalloc() { scenario run_cxx_tcmalloc; }
run_cxx_tcmalloc() { run_pid cxx_tcmalloc cxx_any LD_PRELOAD=$TCMALLOC; }
cxx_mimalloc() { scenario run_cxx_mimalloc; }
run_cxx_mimalloc() { run_pid cxx_mimalloc cxx_any LD_PRELOAD=$MIMALLOC; }
cxx_jemalloc() { scenario run_cxx_jemalloc; }
run_cxx_jemalloc() { run_pid cxx_jemalloc cxx_any_je; }
cxx_static() { scenario run_cxx_static; }
run_cxx_static() { run_pid cxx_static cxx_any_static; }

# ------------------------------------------------------------ what is checked

# expect_totals NAME COUNT BYTES ALLOCS FREES: the process's heap totals in alive.json,
# and that they are the sums over its heap sites.
expect_totals() {
	local f=$AA/$1/alive.json p=${AA_PID[$1]} sites
	sites=$(jqc "$f" '[procs($pid) | .sites[] | select(.kind == "heap") |
		[.stack[0].symbol, .outstanding_count, .outstanding_bytes, .allocs, .frees]]' \
		--argjson pid "$p")
	expect_jq "heap totals [outstanding_count, outstanding_bytes, allocs, frees] (its heap
		sites as [function, count, bytes, allocs, frees]: $sites)" "[$2,$3,$4,$5]" "$f" \
		'[procs($pid) | .heap | [.outstanding_count, .outstanding_bytes, .allocs, .frees]][0]' \
		--argjson pid "$p" || return 1
	expect_jq "heap totals minus sums over sites" '[0,0,0,0]' "$f" \
		'[procs($pid) | . as $p | [.sites[] | select(.kind == "heap")] |
		  [($p.heap.outstanding_count - (map(.outstanding_count) | add)),
		   ($p.heap.outstanding_bytes - (map(.outstanding_bytes) | add)),
		   ($p.heap.allocs - (map(.allocs) | add)),
		   ($p.heap.frees - (map(.frees) | add))]][0]' --argjson pid "$p"
}

# expect_free_unknown_zero NAME: no free of a block leaktop did not see allocated (a free
# entry point probed twice, say through two names at one address, would make one).
expect_free_unknown_zero() {
	expect_jq "stats.free_unknown" 0 "$AA/$1/alive.json" '.stats.free_unknown'
}

# expect_allocator NAME KIND MODULE_REGEX: processes[].heap.allocator as [kind, module's
# file name].
expect_allocator() {
	local got
	got=$(jqc "$AA/$1/alive.json" '[procs($pid) | .heap.allocator | .kind, (.module | base)]' \
		--argjson pid "${AA_PID[$1]}")
	expect_match "allocator [kind, module]" "^\[\"$2\",\"$3\"\]$" "$got"
}

# expect_c_sites NAME: alloc_any's sites, each at the function that called the allocator.
expect_c_sites() {
	local f=$AA/$1/alive.json p=${AA_PID[$1]}
	expect_site "$f" "$p" leak_malloc 4 4000 4 0 &&
	expect_site "$f" "$p" leak_calloc 3 900 3 0 &&
	expect_site "$f" "$p" leak_realloc_null 2 1400 2 0 &&
	expect_site "$f" "$p" small_block 0 0 2 2 &&
	expect_site "$f" "$p" leak_realloc_grow 2 6000 2 0 &&
	expect_site "$f" "$p" leak_posix_memalign 2 1000 2 0 &&
	expect_site "$f" "$p" leak_aligned_alloc 2 1280 2 0 &&
	expect_site "$f" "$p" churn 0 0 100 100
}

# expect_c_frees NAME: churn_kinds' five sites (one per C function), each block freed.
expect_c_frees() {
	expect_jq "churn_kinds sites as [count, bytes, allocs, frees]" \
		'[[0,0,5,5],[0,0,5,5],[0,0,5,5],[0,0,5,5],[0,0,5,5]]' "$AA/$1/alive.json" \
		'[procs($pid) | sites_at("churn_kinds") | nums]' --argjson pid "${AA_PID[$1]}"
}

# C++: where the operators are the allocator's own (jemalloc, tcmalloc, mimalloc define
# them), the probe is on operator new itself and the site's first frame is the function
# that said `new`.  libstdc++'s operators are not an allocator (they call malloc, which is
# probed): there the stack begins with them (new[] may tail-call new), and the function is
# the first frame after them.
CXX_DEFS='
def own_frame: first(.stack[] | (.symbol // "?") | select(startswith("operator new") | not));
def sites_above_new($sym): .sites[] | select(.kind == "heap" and own_frame == $sym);
'

# expect_cxx_site NAME SYMBOL COUNT BYTES ALLOCS FREES [above_new]: one heap site of the
# program allocating in SYMBOL (its first frame, or with above_new the first frame after
# libstdc++'s operator new frames), with those numbers.
expect_cxx_site() {
	local name=$1 sym=$2 want="[[$3,$4,$5,$6]]" sel=sites_at got
	[ "${7:-}" = above_new ] && sel=sites_above_new
	got=$(jqc "$AA/$name/alive.json" "$CXX_DEFS [procs(\$pid) | $sel(\$sym) | nums]" \
		--argjson pid "${AA_PID[$name]}" --arg sym "$sym")
	[ "$got" == "$want" ] ||
		fail_because "sites of the program allocating in $sym as [[count, bytes, allocs," \
			"frees]]: got $got, expected $want; its heap sites as [first frames, count," \
			"bytes, allocs, frees]: $(jqc "$AA/$name/alive.json" '[procs($pid) |
			.sites[] | select(.kind == "heap") | [[.stack[0:3][].symbol],
			.outstanding_count, .outstanding_bytes, .allocs, .frees]]' \
			--argjson pid "${AA_PID[$name]}")"
}

# expect_cxx_sites NAME [above_new]: cxx_any's sites.
expect_cxx_sites() {
	expect_cxx_site "$1" "leak_new()" 5 240 5 0 "${2:-}" &&
	expect_cxx_site "$1" "leak_new_array()" 3 600 3 0 "${2:-}" &&
	expect_cxx_site "$1" "leak_new_nothrow()" 2 96 2 0 "${2:-}" &&
	expect_cxx_site "$1" "leak_new_aligned()" 2 256 2 0 "${2:-}"
}

# expect_cxx_frees NAME [above_new]: every block of cxx_any's churn freed by its delete.
expect_cxx_frees() {
	expect_cxx_site "$1" "churn_delete()" 0 0 40 40 "${2:-}" &&
	expect_cxx_site "$1" "churn_delete_array()" 0 0 30 30 "${2:-}" &&
	expect_cxx_site "$1" "churn_aligned()" 0 0 10 10 "${2:-}"
}

# ------------------------------------------------------------ breakpoints

# sym_offset FILE SYMBOL: the file offset (hex) of SYMBOL's definition in FILE's .dynsym,
# or in .symtab when FILE has no .dynsym entry for it; empty if none.
sym_offset() {
	python3 - "$1" "$2" <<'PY' 2>/dev/null
import struct, sys
path, want = sys.argv[1], sys.argv[2].encode()
d = open(path, "rb").read()
if d[:4] != b"\x7fELF" or d[4] != 2:
    sys.exit(0)
shoff, = struct.unpack_from("<Q", d, 0x28)
shentsize, shnum = struct.unpack_from("<HH", d, 0x3a)
phoff, = struct.unpack_from("<Q", d, 0x20)
phentsize, phnum = struct.unpack_from("<HH", d, 0x36)
secs = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize) for i in range(shnum)]
def lookup(kind):
    for s in secs:
        if s[1] != kind:
            continue
        strtab = secs[s[6]]
        for off in range(s[4], s[4] + s[5], 24):
            name, info, other, shndx, value, size = struct.unpack_from("<IBBHQQ", d, off)
            if shndx == 0 or info & 0xf != 2:
                continue
            start = strtab[4] + name
            if d[start:d.index(b"\0", start)] == want:
                return value
    return None
value = lookup(11)
if value is None:
    value = lookup(2)
if value is None:
    sys.exit(0)
for i in range(phnum):
    ptype, flags, off, vaddr, paddr, filesz, memsz, align = struct.unpack_from(
        "<IIQQQQQQ", d, phoff + i * phentsize)
    if ptype == 1 and vaddr <= value < vaddr + filesz:
        print("%x" % (value - vaddr + off))
        break
PY
}

# mapped_path PID REGEX: the first file PID maps whose path matches REGEX (extended).
mapped_path() {
	awk -v re="$2" '$6 ~ re { print $6; exit }' "/proc/$1/maps"
}

# breakpoint_bytes PID: lines "FILE BYTE", the byte at malloc's entry in PID's memory for
# the C library, the process's executable and each preloadable allocator it maps ("cc":
# a breakpoint).
breakpoint_bytes() {
	local pid=$1 f off
	for f in $(mapped_path "$pid" '/libc\.so(\.6)?$') "$(readlink "/proc/$pid/exe")" \
		$(mapped_path "$pid" '/libtcmalloc_minimal\.so') \
		$(mapped_path "$pid" '/libmimalloc\.so') $(mapped_path "$pid" '/libjemalloc\.so'); do
		off=$(sym_offset "$f" malloc)
		[ -n "$off" ] || continue
		echo "$(basename "$f") $(text_byte "$pid" "$f" "$off")"
	done
}

# expect_breakpoints NAME REGEX: AA/NAME/bytes as "FILE:BYTE ..." (sorted by file), with
# only the breakpoint (cc) or not (--) of each, matches REGEX (anchored at both ends).
expect_breakpoints() {
	local got
	got=$(awk '{ b = "--"; if ($2 == "cc" || $2 == "none" || $2 == "unreadable") b = $2
		print $1 ":" b }' "$AA/$1/bytes" | sort | tr '\n' ' ')
	expect_match "malloc's first byte in each object as FILE:cc (a breakpoint) or FILE:--" \
		"^$2\$" "${got% }"
}

# ------------------------------------------------------------ glibc (the control)

test_glibc_counts_every_allocation_once_and_every_free() {
	c_glibc || return 1
	expect_c_sites c_glibc && expect_c_frees c_glibc && expect_totals c_glibc 15 14580 142 127
}

test_glibc_process_has_libc_allocator_probed_and_no_unknown_frees() {
	c_glibc || return 1
	expect_allocator c_glibc glibc 'libc\.so\.6' && expect_free_unknown_zero c_glibc &&
		expect_breakpoints c_glibc 'libc\.so\.6:cc'
}

# ------------------------------------------------------------ tcmalloc preloaded (-p)

test_tcmalloc_preload_leaks_counted_at_leaking_functions() {
	c_tcmalloc || return 1
	expect_c_sites c_tcmalloc
}

test_tcmalloc_preload_frees_of_every_c_function_matched() {
	c_tcmalloc || return 1
	expect_c_frees c_tcmalloc && expect_free_unknown_zero c_tcmalloc
}

test_tcmalloc_preload_heap_totals_exactly_the_programs() {
	c_tcmalloc || return 1
	expect_totals c_tcmalloc 15 14580 142 127
}

test_tcmalloc_preload_breakpoint_in_tcmalloc_not_in_libc() {
	c_tcmalloc || return 1
	expect_allocator c_tcmalloc tcmalloc 'libtcmalloc_minimal\.so\.4[.0-9]*' || return 1
	expect_breakpoints c_tcmalloc 'libc\.so\.6:-- libtcmalloc_minimal\.so\.4[.0-9]*:cc'
}

# ------------------------------------------------------------ mimalloc preloaded (-p)

test_mimalloc_preload_leaks_counted_at_leaking_functions() {
	c_mimalloc || return 1
	expect_c_sites c_mimalloc
}

test_mimalloc_preload_frees_of_every_c_function_matched() {
	c_mimalloc || return 1
	expect_c_frees c_mimalloc && expect_free_unknown_zero c_mimalloc
}

test_mimalloc_preload_heap_totals_exactly_the_programs() {
	# mimalloc's realloc, calloc and aligned functions call its own mi_* functions, which
	# are probed too: each call must still count once.
	c_mimalloc || return 1
	expect_totals c_mimalloc 15 14580 142 127
}

test_mimalloc_preload_breakpoint_in_mimalloc_not_in_libc() {
	c_mimalloc || return 1
	expect_allocator c_mimalloc mimalloc 'libmimalloc\.so\.2[.0-9]*' || return 1
	expect_breakpoints c_mimalloc 'libc\.so\.6:-- libmimalloc\.so\.2[.0-9]*:cc'
}

# ------------------------------------------------------------ jemalloc linked (-p)

test_jemalloc_linked_frees_of_every_c_function_matched() {
	c_jemalloc || return 1
	expect_c_sites c_jemalloc && expect_c_frees c_jemalloc && expect_free_unknown_zero c_jemalloc
}

test_jemalloc_linked_heap_totals_exactly_the_programs() {
	c_jemalloc || return 1
	expect_totals c_jemalloc 15 14580 142 127
}

test_jemalloc_linked_breakpoint_in_jemalloc_not_in_libc() {
	c_jemalloc || return 1
	expect_allocator c_jemalloc jemalloc 'libjemalloc\.so\.2' || return 1
	expect_breakpoints c_jemalloc 'libc\.so\.6:-- libjemalloc\.so\.2:cc'
}

# ------------------------------------------------------------ static (-p)

test_static_program_pid_mode_traced_in_its_executable() {
	c_static || return 1
	expect_allocator c_static glibc 'alloc_any_static' || return 1
	expect_c_sites c_static && expect_c_frees c_static && expect_free_unknown_zero c_static
}

test_static_program_heap_totals_exactly_the_programs() {
	c_static || return 1
	expect_totals c_static 15 14580 142 127 || return 1
	expect_breakpoints c_static 'alloc_any_static:cc'
}

# ------------------------------------------------------------ two preloaded (-p)

# LD_PRELOAD="mimalloc tcmalloc": the first binds malloc and everything else; tcmalloc,
# mapped but bound by no one, must not be probed (its malloc has a name the process finds
# in mimalloc first).

test_first_of_two_preloads_is_the_allocator() {
	c_two_preloads || return 1
	expect_allocator c_two_preloads mimalloc 'libmimalloc\.so\.2[.0-9]*' || return 1
	expect_breakpoints c_two_preloads \
		'libc\.so\.6:-- libmimalloc\.so\.2[.0-9]*:cc libtcmalloc_minimal\.so\.4[.0-9]*:--'
}

test_first_of_two_preloads_counts_exactly_the_programs() {
	c_two_preloads || return 1
	expect_c_sites c_two_preloads && expect_c_frees c_two_preloads &&
		expect_totals c_two_preloads 15 14580 142 127
}

# ------------------------------------------------------------ allocators' own APIs (-p)

# expect_api_sites NAME: alloc_api's sites, each at the function that called the API.
expect_api_sites() {
	local f=$AA/$1/alive.json p=${AA_PID[$1]}
	expect_site "$f" "$p" leak_api_malloc 3 1200 3 0 &&
	expect_site "$f" "$p" leak_api_calloc 2 600 2 0 &&
	expect_site "$f" "$p" api_block 0 0 2 2 &&
	expect_site "$f" "$p" leak_api_realloc 2 4000 2 0 &&
	expect_site "$f" "$p" leak_api_aligned 2 640 2 0 &&
	expect_site "$f" "$p" churn_api_free 0 0 20 20 &&
	expect_site "$f" "$p" churn_api_free_sized 0 0 20 20
}

test_c_api_control_counts_exactly() {
	api_glibc || return 1
	expect_api_sites api_glibc && expect_totals api_glibc 9 6440 51 42 &&
		expect_free_unknown_zero api_glibc
}

test_mimalloc_own_api_counted_at_calling_functions() {
	# mi_malloc, mi_calloc, mi_realloc, mi_malloc_aligned, mi_free, mi_free_size called by
	# name, in a program linked with mimalloc (so its allocator too).
	api_mimalloc || return 1
	expect_allocator api_mimalloc mimalloc 'libmimalloc\.so\.2[.0-9]*' || return 1
	expect_api_sites api_mimalloc && expect_totals api_mimalloc 9 6440 51 42
}

test_mimalloc_own_sized_free_counts_one_free() {
	# mi_free_size jumps to mi_free: 20 calls, 20 frees, none of an unknown block.
	api_mimalloc || return 1
	expect_free_unknown_zero api_mimalloc
}

test_tcmalloc_own_api_counted_at_calling_functions() {
	# tc_malloc, tc_calloc, tc_realloc, tc_memalign, tc_free, tc_free_sized by name, in a
	# program linked with tcmalloc.
	api_tcmalloc || return 1
	expect_allocator api_tcmalloc tcmalloc 'libtcmalloc_minimal\.so\.4[.0-9]*' || return 1
	expect_api_sites api_tcmalloc && expect_totals api_tcmalloc 9 6440 51 42
}

test_tcmalloc_own_sized_free_counts_one_free() {
	api_tcmalloc || return 1
	expect_free_unknown_zero api_tcmalloc
}

# ------------------------------------------------------------ musl (-p)

test_musl_program_traced_in_musl_libc() {
	c_musl || return 1
	expect_allocator c_musl musl 'libc\.so' || return 1
	expect_c_sites c_musl && expect_c_frees c_musl && expect_free_unknown_zero c_musl
}

test_musl_heap_totals_exactly_the_programs() {
	# musl's calloc, realloc(NULL, n) and aligned functions call its malloc inside.
	c_musl || return 1
	expect_totals c_musl 15 14580 142 127 || return 1
	expect_breakpoints c_musl 'libc\.so:cc'
}

test_musl_static_program_traced_in_its_executable() {
	c_musl_static || return 1
	expect_allocator c_musl_static musl 'alloc_any_musl_static' || return 1
	expect_c_sites c_musl_static && expect_c_frees c_musl_static &&
		expect_free_unknown_zero c_musl_static
}

test_musl_static_heap_totals_exactly_the_programs() {
	c_musl_static || return 1
	expect_totals c_musl_static 15 14580 142 127 || return 1
	expect_breakpoints c_musl_static 'alloc_any_musl_static:cc'
}

# ------------------------------------------------------------ `--`: the allocator predicted

# LD_PRELOAD in leaktop's environment is the command's: leaktop must probe tcmalloc before
# the command runs (its go is given at once).
c_tcmalloc_cmd() { scenario run_c_tcmalloc_cmd; }
run_c_tcmalloc_cmd() { run_cmd c_tcmalloc_cmd "$TCMALLOC" "$PROGS/alloc_any"; }

test_command_mode_predicts_tcmalloc_from_ld_preload() {
	c_tcmalloc_cmd || return 1
	expect_allocator c_tcmalloc_cmd tcmalloc 'libtcmalloc_minimal\.so\.4[.0-9]*' || return 1
	expect_c_sites c_tcmalloc_cmd && expect_c_frees c_tcmalloc_cmd
}

# A command that execs a program binding another allocator: env, on glibc, setting
# LD_PRELOAD for the program it execs, or execing a program linked with jemalloc.  The
# program's allocator is found once its image is looked at, and traced from then on (the
# program waits for its go until the snapshots name it).
exec_preload() { scenario run_exec_preload; }
run_exec_preload() { run_exec exec_preload mimalloc env "LD_PRELOAD=$MIMALLOC" "$PROGS/alloc_any"; }
exec_linked() { scenario run_exec_linked; }
run_exec_linked() { run_exec exec_linked jemalloc env "$PROGS/alloc_any_je"; }

# run_exec NAME KIND CMD...: `leaktop -- CMD... AA/NAME/dir`; once the program is ready and
# leaktop's snapshots say its allocator is KIND, it is let go; then as run_cmd.
run_exec() {
	local name=$1 kind=$2 dir=$AA/$1 p
	shift 2
	mkdir -p "$dir/dir"
	start_cmd "$dir" "" "$@" || return 1
	wait_file "$dir/dir/ready" || return 1
	p=$(pid_in "$dir/dir/ready")
	wait_until "the exec'd program's allocator ($kind) in a snapshot" \
		last_line_true "$dir/out.jsonl" \
		'[procs($pid) | .heap.allocator.kind] == [$kind]' --argjson pid "$p" \
		--arg kind "$kind" ||
		fail_because "$FAIL_MSG; its allocator in the last snapshot:" \
			"$(complete_lines "$dir/out.jsonl" | tail -n 1 | jq -c --argjson pid "$p" \
			"$JQ_DEFS [procs(\$pid) | .heap.allocator]")" || return 1
	touch "$dir/dir/go"
	finish_cmd "$name"
}

test_preload_set_at_exec_found_and_traced() {
	exec_preload || return 1
	expect_allocator exec_preload mimalloc 'libmimalloc\.so\.2[.0-9]*' || return 1
	expect_c_sites exec_preload && expect_c_frees exec_preload
}

test_exec_of_jemalloc_linked_program_found_and_traced() {
	exec_linked || return 1
	expect_allocator exec_linked jemalloc 'libjemalloc\.so\.2' || return 1
	expect_c_sites exec_linked && expect_c_frees exec_linked
}

# ------------------------------------------------------------ C++ operators (-p)

test_cxx_libstdcxx_new_counted_once_above_operator_new() {
	cxx_glibc || return 1
	expect_allocator cxx_glibc glibc 'libc\.so\.6' || return 1
	expect_cxx_sites cxx_glibc above_new
}

test_cxx_libstdcxx_every_delete_frees_its_block() {
	cxx_glibc || return 1
	expect_cxx_frees cxx_glibc above_new && expect_totals cxx_glibc 12 1192 92 80
}

test_cxx_libstdcxx_delete_nested_in_allocator_counts_one_free() {
	cxx_glibc || return 1
	expect_free_unknown_zero cxx_glibc
}

test_cxx_jemalloc_new_counted_at_the_function_calling_new() {
	cxx_jemalloc || return 1
	expect_allocator cxx_jemalloc jemalloc 'libjemalloc\.so\.2' || return 1
	expect_cxx_sites cxx_jemalloc
}

test_cxx_jemalloc_every_delete_frees_its_block() {
	cxx_jemalloc || return 1
	expect_cxx_frees cxx_jemalloc && expect_totals cxx_jemalloc 12 1192 92 80
}

test_cxx_jemalloc_delete_nested_in_allocator_counts_one_free() {
	# jemalloc's delete[] jumps to its free, its sized aligned delete to sdallocx (both
	# probed too): each call still frees one block, once.
	cxx_jemalloc || return 1
	expect_free_unknown_zero cxx_jemalloc
}

test_cxx_tcmalloc_new_counted_at_the_function_calling_new() {
	cxx_tcmalloc || return 1
	expect_allocator cxx_tcmalloc tcmalloc 'libtcmalloc_minimal\.so\.4[.0-9]*' || return 1
	expect_cxx_sites cxx_tcmalloc
}

test_cxx_tcmalloc_every_delete_frees_its_block() {
	cxx_tcmalloc || return 1
	expect_cxx_frees cxx_tcmalloc && expect_totals cxx_tcmalloc 12 1192 92 80
}

test_cxx_tcmalloc_delete_nested_in_allocator_counts_one_free() {
	cxx_tcmalloc || return 1
	expect_free_unknown_zero cxx_tcmalloc
}

test_cxx_mimalloc_new_counted_at_the_function_calling_new() {
	cxx_mimalloc || return 1
	expect_allocator cxx_mimalloc mimalloc 'libmimalloc\.so\.2[.0-9]*' || return 1
	expect_cxx_sites cxx_mimalloc
}

test_cxx_mimalloc_every_delete_frees_its_block() {
	# mimalloc's operator delete and delete[] are one function (two names, one address),
	# and so are new and new[]: one probe each, or every block would be freed twice.
	cxx_mimalloc || return 1
	expect_cxx_frees cxx_mimalloc && expect_totals cxx_mimalloc 12 1192 92 80
}

test_cxx_mimalloc_delete_nested_in_allocator_counts_one_free() {
	# mimalloc's sized delete jumps to mi_free (also named free, delete and delete[]), its
	# sized aligned delete through mi_free_size_aligned and mi_free_size (sized delete) to
	# it: each call still frees one block, once.
	cxx_mimalloc || return 1
	expect_free_unknown_zero cxx_mimalloc
}

test_cxx_static_new_counted_once_at_the_function_calling_new() {
	# The executable defines malloc and libstdc++'s operators: it is the allocator, and
	# whether its operator new is probed or only the malloc it calls, each new is one
	# allocation of the function that said it.
	cxx_static || return 1
	expect_allocator cxx_static glibc 'cxx_any_static' || return 1
	expect_cxx_sites cxx_static above_new
}

test_cxx_static_every_delete_frees_its_block() {
	cxx_static || return 1
	expect_cxx_frees cxx_static above_new && expect_totals cxx_static 12 1192 92 80
}

test_cxx_static_delete_nested_in_allocator_counts_one_free() {
	cxx_static || return 1
	expect_free_unknown_zero cxx_static
}

# ------------------------------------------------------------ every run

test_every_run_of_this_script_dropped_nothing() {
	expect_no_drops_anywhere
}

run_tests
