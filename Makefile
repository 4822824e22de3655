# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# leaktop build.  `make` builds ./leaktop; `make test` installs what is missing, builds and
# runs every test; `make run` installs, builds and starts leaktop on the whole system.
# Quiet by default; V=1 prints the full commands.

VERSION   := 0.1.0
PREFIX    ?= /usr/local
DESTDIR   ?=
CC        ?= gcc
CLANG     ?= clang
BPFTOOL   ?= bpftool
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux

OUT       := build
# Where `make install` puts libleaktop-agent.so; leaktop looks beside its executable first.
AGENTDIR  ?= $(PREFIX)/lib/leaktop
ARCH      := x86

CFLAGS    ?= -O2 -g
CFLAGS    += -Wall -Wextra -Wno-unused-parameter -std=gnu11 -fno-omit-frame-pointer \
	     -D_GNU_SOURCE -DLEAKTOP_VERSION='"$(VERSION)"' -DLEAKTOP_AGENTDIR='"$(AGENTDIR)"' \
	     -I$(OUT) -I. -Iuser
LDLIBS    := -lbpf -ldw -lelf -ljansson -lcapstone -lncursesw -lprotobuf-c -lmicrohttpd -lstdc++ \
	     -lz -lm -lpthread
PROTOC_C  ?= protoc-c
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -I$(OUT) -Ibpf -Wall

ifeq ($(V),1)
Q :=
msg :=
SUBMAKE := $(MAKE) --no-print-directory
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
SUBMAKE := $(MAKE) --no-print-directory -s
endif

# leaktop's own allocator: jemalloc, linked into the executable (user/util/self_alloc.c says
# why), with every allocator entry point exported so that each library leaktop loads, and
# libc itself, binds to it instead of libc's probed one.  Only the leaktop executable has it.
ALLOC_FNS := malloc free calloc realloc reallocarray posix_memalign aligned_alloc memalign \
	     valloc pvalloc malloc_usable_size
ALLOC_OBJS := $(OUT)/user/util/self_alloc.o
ALLOC_LDFLAGS := $(foreach f,$(ALLOC_FNS),-Wl,--export-dynamic-symbol=$(f))
ALLOC_LIBS := -l:libjemalloc_pic.a -lm

USER_SRCS := $(filter-out user/agent/%,$(wildcard user/*.c user/*/*.c))
TUI_SRCS  := $(wildcard tui/*.c)
PROTO_OBJS := $(OUT)/proto/profile.pb-c.o
USER_OBJS := $(filter-out $(ALLOC_OBJS),$(patsubst %.c,$(OUT)/%.o,$(USER_SRCS) $(TUI_SRCS))) \
	     $(PROTO_OBJS)
LIB_OBJS  := $(filter-out $(OUT)/user/main.o,$(USER_OBJS))

# Unit tests run under AddressSanitizer and UndefinedBehaviorSanitizer: the test binaries and
# every object they link are built instrumented in their own tree, $(ASAN_OUT), so ./leaktop
# stays plain.  Any report ends the test binary with a non-zero status (tests/unit/check.h).
ASAN_OUT  := $(OUT)/asan
ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined
ASAN_LIB_OBJS := $(patsubst $(OUT)/%,$(ASAN_OUT)/%,$(LIB_OBJS))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(ASAN_OUT)/tests/unit/%,$(UNIT_SRCS))
# audit_mark.c is a shared object (libaudit_mark.so), not a program: see its rule below;
# so is short_lived_lib.c (libshort_lived.so, which short_lived links).
PROG_SRCS := $(filter-out tests/progs/audit_mark.c tests/progs/short_lived_lib.c,\
		$(wildcard tests/progs/*.c))
PROG_CXX_SRCS := $(wildcard tests/progs/*.cc)
PROG_BINS := $(patsubst tests/progs/%.c,$(OUT)/tests/progs/%,$(PROG_SRCS)) \
	     $(patsubst tests/progs/%.cc,$(OUT)/tests/progs/%,$(PROG_CXX_SRCS)) \
	     $(OUT)/tests/progs/unwind_chain_fp $(OUT)/tests/progs/alloc_any_je \
	     $(OUT)/tests/progs/alloc_any_static $(OUT)/tests/progs/cxx_new_je \
	     $(OUT)/tests/progs/cxx_delete_je \
	     $(OUT)/tests/progs/cxx_any_je $(OUT)/tests/progs/cxx_any_static \
	     $(OUT)/tests/progs/alloc_any_musl $(OUT)/tests/progs/alloc_any_musl_static \
	     $(OUT)/tests/progs/alloc_api_mi $(OUT)/tests/progs/alloc_api_tc \
	     $(OUT)/tests/progs/early_leak_static $(OUT)/tests/progs/libaudit_mark.so \
	     $(OUT)/tests/progs/audit_prog $(OUT)/tests/progs/libshort_lived.so

.SECONDARY:
.PHONY: all deps test run demo bench install uninstall clean unit e2e fuzz check-layers
all: leaktop $(AGENT_LIB)

deps:
	$(Q)scripts/install-deps.sh

$(OUT)/vmlinux.h:
	$(call msg,BTF,$@)
	$(Q)mkdir -p $(OUT)
	$(Q)if [ ! -r $(VMLINUX_BTF) ]; then \
		echo "leaktop: $(VMLINUX_BTF) is missing: this kernel has no BTF; build on a kernel with CONFIG_DEBUG_INFO_BTF=y" >&2; exit 1; fi
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@.tmp && mv $@.tmp $@

# proc.bpf.c defines the shared maps: it goes first so their definitions lead the link.
BPF_SRCS  := bpf/proc.bpf.c $(filter-out bpf/proc.bpf.c,$(wildcard bpf/*.bpf.c))
BPF_OBJS  := $(patsubst bpf/%.bpf.c,$(OUT)/bpf/%.bpf.o,$(BPF_SRCS))

$(OUT)/bpf/%.bpf.o: bpf/%.bpf.c bpf/leaktop.h bpf/common.bpf.h $(OUT)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUT)/bpf/watch.bpf.o $(OUT)/bpf/heap.bpf.o: bpf/watch.h

# One BPF object from one file per concern; maps they share are linked by name.
$(OUT)/leaktop.bpf.o: $(BPF_OBJS)
	$(call msg,BPF-LINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(OUT)/leaktop.skel.h: $(OUT)/leaktop.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name leaktop_bpf > $@.tmp && mv $@.tmp $@

$(OUT)/user/live/loader.o: $(OUT)/leaktop.skel.h

# pprof export: C for perftools.profiles.Profile generated from proto/profile.proto.
$(OUT)/proto/profile.pb-c.c $(OUT)/proto/profile.pb-c.h &: proto/profile.proto
	$(call msg,PROTOC-C,$@)
	$(Q)mkdir -p $(OUT)/proto
	$(Q)$(PROTOC_C) --c_out=$(OUT) $<

$(OUT)/proto/profile.pb-c.o: $(OUT)/proto/profile.pb-c.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(OUT)/user/view/export.o: $(OUT)/proto/profile.pb-c.h

$(OUT)/%.o: %.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

# libleaktop-agent.so (user/agent/, `--agent`): the in-process tracer leaktop preloads or
# injects.  Position-independent, frame pointers (its stack walk starts in its hooks), no
# builtins (it defines malloc & co.), and nothing of leaktop's but its headers.
AGENT_LIB  := libleaktop-agent.so
AGENT_SRCS := $(wildcard user/agent/*.c)
AGENT_OBJS := $(patsubst %.c,$(OUT)/%.o,$(AGENT_SRCS))
AGENT_CFLAGS := -O2 -g -Wall -Wextra -Wno-unused-parameter -std=gnu11 -D_GNU_SOURCE -fPIC \
	-fno-omit-frame-pointer -fno-builtin -fvisibility=hidden -ftls-model=initial-exec \
	-I. -Iuser

$(OUT)/user/agent/%.o: user/agent/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(AGENT_CFLAGS) -MMD -MP -c $< -o $@

$(AGENT_LIB): $(AGENT_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) -shared -Wl,-z,nodelete -Wl,-z,now -o $@ $^ -lunwind -ldl -lpthread

leaktop: $(USER_OBJS) $(ALLOC_OBJS) | $(AGENT_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(ALLOC_LDFLAGS) -o $@ $^ $(ALLOC_LIBS) $(LDLIBS)

# The negative control of tests/e2e/self.sh: the same leaktop on libc's allocator, whose own
# calls do reach the probes (and are counted in stats.self_hits).
$(OUT)/tests/leaktop-libc-malloc: $(USER_OBJS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(ASAN_OUT)/%.o: %.c
	$(call msg,CC-ASAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(ASAN_FLAGS) -MMD -MP -c $< -o $@

$(ASAN_OUT)/proto/profile.pb-c.o: $(OUT)/proto/profile.pb-c.c
	$(call msg,CC-ASAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(ASAN_FLAGS) -MMD -MP -c $< -o $@

$(ASAN_OUT)/user/live/loader.o: $(OUT)/leaktop.skel.h
$(ASAN_OUT)/user/view/export.o: $(OUT)/proto/profile.pb-c.h

# The live process test_scan scans is built plain: an instrumented process maps terabytes of
# writable shadow memory, more than a scan copies.
$(ASAN_OUT)/tests/unit/scan_target: tests/unit/scan_target.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -g -O0 -fno-omit-frame-pointer -Wall -o $@ $<

$(ASAN_OUT)/tests/unit/test_scan: $(ASAN_OUT)/tests/unit/scan_target
$(ASAN_OUT)/tests/unit/test_symbolize: $(OUT)/tests/progs/stripped_leak \
				    $(OUT)/tests/progs/minidebug_leak $(ASAN_OUT)/tests/unit/libhostile_elf.so

# The library test_symbolize truncates under the symbolizer (review C1).
$(ASAN_OUT)/tests/unit/libhostile_elf.so: tests/progs/hostile_elf.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(PROG_FLAGS) -shared -fPIC -DHOSTILE_LIB -Wall -o $@ $<

# The object test_cfi reads the unwind rows of: frame pointers, -O0, so its rows are known.
$(ASAN_OUT)/tests/unit/cfi_target: tests/unit/cfi_target.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -g -O0 -fno-omit-frame-pointer -Wall -o $@ $<

# Objects crafted to be slow to read (review C3): 8 functions of 40,000 rows each, and 1.
$(ASAN_OUT)/tests/unit/huge_fde.so: tests/progs/huge_fde.S
	$(call msg,AS,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -shared -o $@ $<

$(ASAN_OUT)/tests/unit/huge_fde1.so: tests/progs/huge_fde.S
	$(call msg,AS,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -shared -DHUGE_FDES=1 -o $@ $<

# Symbols crafted for test_symindex: overlapping, aliased, without size, absolute.
$(ASAN_OUT)/tests/unit/symindex_target.so: tests/unit/symindex_target.S
	$(call msg,AS,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -shared -nostdlib -o $@ $<

$(ASAN_OUT)/tests/unit/test_symindex: $(ASAN_OUT)/tests/unit/symindex_target.so

$(ASAN_OUT)/tests/unit/test_cfi: $(ASAN_OUT)/tests/unit/cfi_target \
				 $(ASAN_OUT)/tests/unit/huge_fde.so $(ASAN_OUT)/tests/unit/huge_fde1.so

$(ASAN_OUT)/tests/unit/%: tests/unit/%.c $(ASAN_LIB_OBJS)
	$(call msg,CC-ASAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(ASAN_FLAGS) -O0 -MMD -MP -MF $@.d -o $@ $< $(ASAN_LIB_OBJS) $(LDLIBS) \
		$(UNIT_LDLIBS_$*) -ldl

# test_agent_channel builds the agent's record.c in, which unwinds with libunwind.
UNIT_LDLIBS_test_agent_channel := -lunwind

# The unit tests linked against the plain objects, no sanitizer: a real C test suite for
# `make bench`'s check section to run under leaktop check and valgrind (which cannot run
# sanitized code).
PLAIN_OUT := $(OUT)/plain
$(PLAIN_OUT)/tests/unit/%: tests/unit/%.c $(LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -O1 -o $@ $< $(LIB_OBJS) $(LDLIBS) -ldl

# Leaky test programs: built the way users' code usually is for debugging, with frame
# pointers and line info, no inlining so the leaking function keeps its frame (C in *.c,
# C++ in *.cc).  PROG_FLAGS set for one target builds that program otherwise.
PROG_FLAGS := -g -O0 -fno-omit-frame-pointer -fno-inline
# tests/e2e/unwind.sh: unwind_chain.c built optimized without frame pointers anywhere (as
# Debian's own binaries are), and the same source again with them, as unwind_chain_fp.
$(OUT)/tests/progs/unwind_chain: PROG_FLAGS := -g -O2 -fomit-frame-pointer
$(OUT)/tests/progs/unwind_chain_fp: PROG_FLAGS := -g -O2 -fno-omit-frame-pointer
$(OUT)/tests/progs/own_syscall: PROG_FLAGS := -g -O2 -fomit-frame-pointer

$(OUT)/tests/progs/%: tests/progs/%.c $(wildcard tests/progs/*.h)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(PROG_FLAGS) -Wall -o $@ $< -lpthread

$(OUT)/tests/progs/%: tests/progs/%.cc $(wildcard tests/progs/*.h)
	$(call msg,CXX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) $(PROG_FLAGS) -Wall -o $@ $< -lpthread

$(OUT)/tests/progs/unwind_chain_fp: tests/progs/unwind_chain.c $(wildcard tests/progs/*.h)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(PROG_FLAGS) -Wall -o $@ $< -lpthread

# The FUSE file system of tests/e2e/hostile_fuse.sh (libfuse3).
$(OUT)/tests/progs/stall_fs: tests/progs/stall_fs.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(PROG_FLAGS) -Wall $$(pkg-config --cflags fuse3) -o $@ $< \
		$$(pkg-config --libs fuse3)

# tests/e2e/allocators.sh: the same programs linked with Debian's jemalloc, and statically.
$(OUT)/tests/progs/alloc_any_je: tests/progs/alloc_any.c $(wildcard tests/progs/*.h)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(PROG_FLAGS) -Wall -o $@ $< -ljemalloc

$(OUT)/tests/progs/alloc_any_static: tests/progs/alloc_any.c $(wildcard tests/progs/*.h)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(PROG_FLAGS) -static -Wall -o $@ $<

$(OUT)/tests/progs/cxx_new_je $(OUT)/tests/progs/cxx_delete_je \
		$(OUT)/tests/progs/cxx_any_je: $(OUT)/tests/progs/%_je: \
		tests/progs/%.cc $(wildcard tests/progs/*.h)
	$(call msg,CXX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) $(PROG_FLAGS) -Wall -o $@ $< -ljemalloc

# tests/e2e/exec_bind.sh: early_leak linked statically (a script execs it); audit_prog, a
# program naming libaudit_mark.so (by its absolute path) as its DT_AUDIT library.
$(OUT)/tests/progs/early_leak_static: tests/progs/early_leak.c $(wildcard tests/progs/*.h)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(PROG_FLAGS) -static -Wall -o $@ $<

$(OUT)/tests/progs/libaudit_mark.so: tests/progs/audit_mark.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(PROG_FLAGS) -shared -fPIC -Wall -o $@ $<

$(OUT)/tests/progs/audit_prog: tests/progs/early_leak.c $(OUT)/tests/progs/libaudit_mark.so
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(PROG_FLAGS) -Wall -o $@ $< -Wl,--audit=$(abspath $(OUT)/tests/progs/libaudit_mark.so)

# tests/e2e/frames.sh: short_lived, linked with a library of its own, found next to it.
$(OUT)/tests/progs/libshort_lived.so: tests/progs/short_lived_lib.c tests/progs/short_lived.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(PROG_FLAGS) -shared -fPIC -Wall -o $@ $<

$(OUT)/tests/progs/short_lived: tests/progs/short_lived.c $(OUT)/tests/progs/libshort_lived.so
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(PROG_FLAGS) -Wall -o $@ $< -L$(@D) -lshort_lived -Wl,-rpath,'$$ORIGIN'

# jemalloc's own API: only linked with it.
$(OUT)/tests/progs/je_api: tests/progs/je_api.c $(wildcard tests/progs/*.h)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(PROG_FLAGS) -Wall -o $@ $< -ljemalloc

# tests/e2e/allocator_apis.sh: cxx_any linked statically (libstdc++'s operators and glibc's
# malloc both in the executable; cxx_any_je is above); alloc_any on musl (Debian's
# musl-tools), dynamic and static.
MUSL_CC   ?= musl-gcc

$(OUT)/tests/progs/cxx_any_static: tests/progs/cxx_any.cc $(wildcard tests/progs/*.h)
	$(call msg,CXX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) $(PROG_FLAGS) -static -Wall -o $@ $<

$(OUT)/tests/progs/alloc_any_musl: tests/progs/alloc_any.c $(wildcard tests/progs/*.h)
	$(call msg,MUSL-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(MUSL_CC) $(PROG_FLAGS) -Wall -o $@ $<

$(OUT)/tests/progs/alloc_any_musl_static: tests/progs/alloc_any.c $(wildcard tests/progs/*.h)
	$(call msg,MUSL-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(MUSL_CC) $(PROG_FLAGS) -static -Wall -o $@ $<

# alloc_api.c through mimalloc's own API (linked with it) and tcmalloc's (linked with
# Debian's libtcmalloc_minimal, which has no development symlink).
$(OUT)/tests/progs/alloc_api_mi: tests/progs/alloc_api.c $(wildcard tests/progs/*.h)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(PROG_FLAGS) -DUSE_MI -Wall -o $@ $< -lmimalloc

$(OUT)/tests/progs/alloc_api_tc: tests/progs/alloc_api.c $(wildcard tests/progs/*.h)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(PROG_FLAGS) -DUSE_TC -Wall -o $@ $< -l:libtcmalloc_minimal.so.4

# tests/e2e/symbols.sh's programs: one stripped of every symbol table, with no debug file
# anywhere and Debian's jansson in its stacks; one stripped but keeping MiniDebugInfo, made
# the way Fedora makes it (tests/progs/minidebuginfo.sh).
$(OUT)/tests/progs/stripped_leak: tests/progs/stripped_leak.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -g -O0 -fno-omit-frame-pointer -fno-inline -Wall -o $@.full $< -ljansson
	$(Q)objcopy --strip-all $@.full $@

$(OUT)/tests/progs/minidebug_leak: tests/progs/minidebug_leak.c tests/progs/minidebuginfo.sh
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -g -O0 -fno-omit-frame-pointer -fno-inline -Wall -o $@.full $<
	$(Q)tests/progs/minidebuginfo.sh $@.full $@

unit: $(UNIT_BINS)

# The layer rules (tests/check_layers.sh): includes of every layer and, with nm, the objects
# leaktop links.  Needs no root.
check-layers: $(USER_OBJS) $(AGENT_OBJS)
	$(Q)tests/check_layers.sh
e2e: leaktop $(OUT)/tests/leaktop-libc-malloc $(PROG_BINS)

# Fuzzing (libFuzzer, clang's): the snapshot reader (fuzz_snapshot), the symbolizer's
# loading of ELF files a traced program supplies (fuzz_elf), and the unwind table builder on
# such files (fuzz_cfi, each input within FUZZ_CFI_TIMEOUT seconds: a build is bounded).
# The files their bytes reach are built instrumented, the rest is linked as built.  `make
# fuzz` runs each FUZZ_TIME seconds, on corpora in $(OUT)/fuzz/corpus (seeded from
# tests/data), $(OUT)/fuzz/elf-corpus (seeded from tests/fuzz/elf_seed.c, built) and
# $(OUT)/fuzz/cfi-corpus (that seed and a small tests/progs/huge_fde.S); make test runs
# short bounded runs.
FUZZ_TIME ?= 600
FUZZ_CFI_TIMEOUT ?= 10
FUZZ_INST := view/snapshot_read core/model core/series view/diff view/export view/report \
	     live/symbolize live/symindex live/safe_open live/cfi
FUZZ_OBJS := $(patsubst %,$(OUT)/fuzz/%.o,$(FUZZ_INST)) \
	     $(filter-out $(patsubst %,$(OUT)/user/%.o,$(FUZZ_INST)),$(LIB_OBJS))
FUZZ_CFLAGS = $(CFLAGS) -fsanitize=fuzzer-no-link,address

$(OUT)/fuzz/%.o: user/%.c $(OUT)/proto/profile.pb-c.h
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@

$(OUT)/fuzz/fuzz_snapshot: tests/fuzz/fuzz_snapshot.c $(FUZZ_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CLANG) $(CFLAGS) -fsanitize=fuzzer,address -o $@ $^ $(LDLIBS)

$(OUT)/fuzz/fuzz_elf: tests/fuzz/fuzz_elf.c $(FUZZ_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CLANG) $(CFLAGS) -fsanitize=fuzzer,address -o $@ $^ $(LDLIBS)

$(OUT)/fuzz/fuzz_cfi: tests/fuzz/fuzz_cfi.c $(FUZZ_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CLANG) $(CFLAGS) -fsanitize=fuzzer,address -o $@ $^ $(LDLIBS)

# fuzz_cfi's seeds: fuzz_elf's program, and an object of 2 functions of 100 crafted rows.
$(OUT)/fuzz/cfi-corpus/huge_fde: tests/progs/huge_fde.S $(OUT)/fuzz/elf-corpus/seed
	$(call msg,AS,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -shared -DHUGE_FDES=2 -DHUGE_PAIRS=50 -o $@ $<
	$(Q)cp $(OUT)/fuzz/elf-corpus/seed $(@D)/seed

# fuzz_elf's seeds: a small program with line info, its debug file, and its stripped copy
# whose .gnu_debuglink names that.
$(OUT)/fuzz/elf-corpus/seed: tests/fuzz/elf_seed.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -g -O1 -o $@ $<
	$(Q)objcopy --only-keep-debug $@ $(@D)/seed.debug
	$(Q)objcopy --strip-debug --add-gnu-debuglink=$(@D)/seed.debug $@ $(@D)/seed-stripped

fuzz: deps
	$(Q)$(SUBMAKE) $(OUT)/fuzz/fuzz_snapshot $(OUT)/fuzz/fuzz_elf $(OUT)/fuzz/elf-corpus/seed \
		$(OUT)/fuzz/fuzz_cfi $(OUT)/fuzz/cfi-corpus/huge_fde
	$(Q)mkdir -p $(OUT)/fuzz/corpus && cp -n tests/data/*.json $(OUT)/fuzz/corpus/
	$(OUT)/fuzz/fuzz_snapshot -max_total_time=$(FUZZ_TIME) -max_len=16384 \
		-dict=tests/fuzz/snapshot.dict $(OUT)/fuzz/corpus
	$(OUT)/fuzz/fuzz_elf -max_total_time=$(FUZZ_TIME) -max_len=65536 $(OUT)/fuzz/elf-corpus
	$(OUT)/fuzz/fuzz_cfi -max_total_time=$(FUZZ_TIME) -max_len=65536 \
		-timeout=$(FUZZ_CFI_TIMEOUT) $(OUT)/fuzz/cfi-corpus

test: deps
	$(Q)$(SUBMAKE) leaktop $(OUT)/tests/leaktop-libc-malloc $(UNIT_BINS) $(PROG_BINS) \
		$(OUT)/bench/bench $(OUT)/bench/bench_nofp $(OUT)/fuzz/fuzz_snapshot \
		$(OUT)/fuzz/fuzz_elf $(OUT)/fuzz/fuzz_cfi
	$(Q)tests/run.sh

run: deps
	$(Q)$(SUBMAKE) leaktop
	./leaktop

# A program with a heap leak, an fd leak, a cache and churn: watch leaktop tell them apart.
demo: deps
	$(Q)$(SUBMAKE) leaktop $(OUT)/tests/progs/growth_mix
	./leaktop -i 0.5 -d 20 -- $(OUT)/tests/progs/growth_mix 30

$(OUT)/bench/bench: tests/bench/bench.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -fno-omit-frame-pointer -Wall -o $@ $<

# The same workload without frame pointers anywhere: the stack-walk section compares
# unwinding its stacks with .eh_frame against walking bench's frame pointers.
$(OUT)/bench/bench_nofp: tests/bench/bench.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -fomit-frame-pointer -Wall -o $@ $<

# BENCH_ONLY (or BENCH_SECTIONS) picks sections: BENCH_ONLY=realwork make bench runs only
# issue 25's real work (the build with churn and redis-benchmark, whole system).
bench: deps
	$(Q)$(SUBMAKE) leaktop $(OUT)/bench/bench $(OUT)/bench/bench_nofp \
		$(OUT)/tests/progs/growth_mix $(OUT)/tests/progs/steady_grow \
		$(OUT)/tests/progs/lastref_prog
	$(Q)tests/bench/run.sh

# Installed files (dist/): the man page, bash completion and the systemd unit, whose
# ExecStart names the installed binary ($(SBINDIR) without DESTDIR).  $(PREFIX)/lib/systemd/
# system is on systemd's search path for /usr/local and /usr; SYSTEMD_UNITDIR overrides it.
SBINDIR   ?= $(PREFIX)/sbin
MAN8DIR   ?= $(PREFIX)/share/man/man8
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
SYSTEMD_UNITDIR ?= $(PREFIX)/lib/systemd/system
DOCDIR    ?= $(PREFIX)/share/doc/leaktop

install: leaktop $(AGENT_LIB)
	install -D -m 0755 leaktop $(DESTDIR)$(SBINDIR)/leaktop
	install -D -m 0644 $(AGENT_LIB) $(DESTDIR)$(AGENTDIR)/$(AGENT_LIB)
	install -D -m 0644 README.md $(DESTDIR)$(DOCDIR)/README.md
	install -D -m 0644 dist/leaktop.8 $(DESTDIR)$(MAN8DIR)/leaktop.8
	install -D -m 0644 dist/leaktop.bash-completion $(DESTDIR)$(BASHCOMPDIR)/leaktop
	mkdir -p $(OUT)
	sed 's|@SBINDIR@|$(SBINDIR)|g' dist/leaktop.service > $(OUT)/leaktop.service.tmp
	install -D -m 0644 $(OUT)/leaktop.service.tmp $(DESTDIR)$(SYSTEMD_UNITDIR)/leaktop.service
	rm -f $(OUT)/leaktop.service.tmp

uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/leaktop $(DESTDIR)$(AGENTDIR)/$(AGENT_LIB) \
		$(DESTDIR)$(MAN8DIR)/leaktop.8 \
		$(DESTDIR)$(BASHCOMPDIR)/leaktop $(DESTDIR)$(SYSTEMD_UNITDIR)/leaktop.service \
		$(DESTDIR)$(DOCDIR)/README.md
	rmdir $(DESTDIR)$(DOCDIR) $(DESTDIR)$(AGENTDIR) 2>/dev/null || true

clean:
	rm -rf $(OUT) leaktop $(AGENT_LIB)

-include $(AGENT_OBJS:.o=.d) $(USER_OBJS:.o=.d) $(ALLOC_OBJS:.o=.d) $(patsubst %,$(OUT)/fuzz/%.d,$(FUZZ_INST)) \
	 $(ASAN_LIB_OBJS:.o=.d) $(UNIT_BINS:=.d)
