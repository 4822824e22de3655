/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * fdsys.h - the syscalls that create and close file descriptors (the table the BPF side
 * dispatches on), and the kinds of descriptors as /proc/PID/fd names them.
 */
#ifndef LEAKTOP_FDSYS_H
#define LEAKTOP_FDSYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/leaktop.h"
#include "core/types.h"

struct fd_syscall {
	const char *name;
	unsigned int nr;
	enum lt_fd_class cls;
};

extern const struct fd_syscall fd_syscalls[];
extern const size_t n_fd_syscalls;

/* Fill the BPF side's table (indexed by syscall number): the fd syscalls if fd, the memory
 * mapping ones if mmap. */
void fdsys__fill_class_table(uint8_t table[LT_MAX_SYSCALL], bool fd, bool mmap);

/* The kind of descriptor whose /proc/PID/fd link reads `target` (pure). */
enum fd_type fdsys__classify(const char *target);

#endif
