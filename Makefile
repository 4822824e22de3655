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
ARCH      := x86

CFLAGS    ?= -O2 -g
CFLAGS    += -Wall -Wextra -Wno-unused-parameter -std=gnu11 -fno-omit-frame-pointer \
	     -D_GNU_SOURCE -DLEAKTOP_VERSION='"$(VERSION)"' -I$(OUT) -Ibpf -Iuser
LDLIBS    := -lbpf -ldw -lelf -ljansson -lcapstone -lncursesw -lstdc++ -lz -lm
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -I$(OUT) -Ibpf -Wall

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

USER_SRCS := $(wildcard user/*.c)
TUI_SRCS  := $(wildcard tui/*.c)
USER_OBJS := $(patsubst %.c,$(OUT)/%.o,$(USER_SRCS) $(TUI_SRCS))
LIB_OBJS  := $(filter-out $(OUT)/user/main.o,$(USER_OBJS))

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUT)/tests/unit/%,$(UNIT_SRCS))
PROG_SRCS := $(wildcard tests/progs/*.c)
PROG_BINS := $(patsubst tests/progs/%.c,$(OUT)/tests/progs/%,$(PROG_SRCS))

.SECONDARY:
.PHONY: all deps test run demo bench install uninstall clean unit e2e
all: leaktop

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

# One BPF object from one file per concern; maps they share are linked by name.
$(OUT)/leaktop.bpf.o: $(BPF_OBJS)
	$(call msg,BPF-LINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(OUT)/leaktop.skel.h: $(OUT)/leaktop.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name leaktop_bpf > $@.tmp && mv $@.tmp $@

$(OUT)/user/loader.o: $(OUT)/leaktop.skel.h

$(OUT)/%.o: %.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

leaktop: $(USER_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(OUT)/tests/unit/%: tests/unit/%.c $(LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -O0 -o $@ $< $(LIB_OBJS) $(LDLIBS) -ldl

# Leaky test programs: built the way users' code usually is for debugging, with frame
# pointers and line info, no inlining so the leaking function keeps its frame.
$(OUT)/tests/progs/%: tests/progs/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -g -O0 -fno-omit-frame-pointer -fno-inline -Wall -o $@ $< -lpthread

unit: $(UNIT_BINS)
e2e: leaktop $(PROG_BINS)

test: deps
	$(Q)$(MAKE) --no-print-directory leaktop $(UNIT_BINS) $(PROG_BINS) $(OUT)/bench/bench
	$(Q)tests/run.sh

run: deps
	$(Q)$(MAKE) --no-print-directory leaktop
	./leaktop

demo: deps
	$(Q)$(MAKE) --no-print-directory leaktop $(OUT)/tests/progs/leaky
	./leaktop -d 6 -- $(OUT)/tests/progs/leaky 5

$(OUT)/bench/bench: tests/bench/bench.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -fno-omit-frame-pointer -Wall -o $@ $<

bench: deps
	$(Q)$(MAKE) --no-print-directory leaktop $(OUT)/bench/bench
	$(Q)tests/bench/run.sh

install: leaktop
	install -D -m 0755 leaktop $(DESTDIR)$(PREFIX)/sbin/leaktop
	install -D -m 0644 README.md $(DESTDIR)$(PREFIX)/share/doc/leaktop/README.md

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/sbin/leaktop
	rm -rf $(DESTDIR)$(PREFIX)/share/doc/leaktop

clean:
	rm -rf $(OUT) leaktop

-include $(USER_OBJS:.o=.d)
