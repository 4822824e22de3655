/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * ustack.h - the frames of a thread leaktop holds stopped (ptrace_stop), unwound in
 * userspace by the same call frame information rows the BPF walker reads (cfi.h), by the
 * frame pointer where an object has none.  `leaktop lastref` asks it which frame owns a
 * stack slot and where that frame returns: a thread stopped inside code that uses %rbp as a
 * general register (glibc's printf, any -fomit-frame-pointer build) has no frame pointer
 * chain, but always has .eh_frame.
 */
#ifndef LEAKTOP_USTACK_H
#define LEAKTOP_USTACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/leaktop.h"
#include "live/procmaps.h"
#include "live/ptrace_stop.h"

/* Objects whose tables one unwinder keeps, and the rows of all of them together. */
#define USTACK_MAX_OBJECTS	256
#define USTACK_MAX_ROWS		(8u << 20)	/* 64 MiB */
#define USTACK_MAX_FRAMES	128

/* One frame: it runs pc, spans [sp, cfa) and returns to ret (stored at cfa - 8; 0: none). */
struct ustack_frame {
	uint64_t pc, sp, cfa, ret;
	bool by_cfi;			/* unwound by its object's CFI (else by the frame pointer) */
};

/* A thread's registers as the walk carries them from frame to frame. */
struct ustack_regs {
	uint64_t pc, sp, bp;
	bool exact;			/* pc is where the thread is, not a return address */
};

/* Reads len bytes at addr of the stopped process: 0 or -errno. */
typedef int (*ustack_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/*
 * One frame up from *r by row (NULL: no usable row, the frame pointer), the memory read
 * through read: fills *f with the frame r is in and moves *r to its caller.  0; -ENOENT:
 * the stack ends here (outermost frame, no return address, a chain that does not go up).
 * Pure: unit-tested on fixed memory.
 */
int ustack__step(const struct lt_unwind_row *row, struct ustack_regs *r, ustack_read_fn read,
		 void *ctx, struct ustack_frame *f);

struct ustack;

/* An unwinder for process pid, with no table yet.  0 or -ENOMEM. */
int ustack__new(struct ustack **out, int pid);
void ustack__free(struct ustack *u);

/*
 * Build the tables of the executable file mappings in maps that have none yet (opened
 * through /proc/PID/map_files, only when it is the regular file the mapping names), in the
 * order of maps, until budget_ns is spent (a later call goes on, a table cut off halfway
 * included: no object takes more than the budget; see cfi.h).  Call it while the process
 * runs: the walk of a stopped thread builds no table, so a stop lasts no longer for it.  How
 * many objects have a table now.  (glibc's table takes about 10 ms, LLVM's 200 ms.)
 */
size_t ustack__prepare(struct ustack *u, const struct proc_maps *maps, uint64_t budget_ns);

/*
 * A return address a uretprobe replaced: the word at slot holds the kernel's trampoline (in
 * the [uprobes] mapping), the caller's address was ra (loader__thread_call).
 */
struct ustack_fixup {
	uint64_t slot, ra;
};

/*
 * Unwind thread t of stopped ps (its mappings: maps) into f[0..max): frame 0 is where the
 * thread is.  fix (NULL: none): a return address to read as its original.  How many frames;
 * the walk ends at the outermost frame, a return address that is not code of an executable
 * mapping (or lies in [uprobes]: a uretprobe's trampoline no fixup replaced), or a frame
 * that does not go up the stack.
 */
size_t ustack__walk(struct ustack *u, const struct proc_maps *maps, const struct ptrace_stop *ps,
		    const struct ptrace_thread *t, const struct ustack_fixup *fix,
		    struct ustack_frame *f, size_t max);

#endif
