/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * ptrace_stop.h - stopping every thread of a process for a moment and reading it, without
 * ever writing to it: PTRACE_SEIZE + PTRACE_INTERRUPT each thread, registers with
 * PTRACE_GETREGS (and the vector registers), memory with process_vm_readv, PTRACE_DETACH to resume.
 */
#ifndef LEAKTOP_PTRACE_STOP_H
#define LEAKTOP_PTRACE_STOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>

struct ptrace_thread {
	int tid;
	int sig;			/* signal to hand back at detach (0: none) */
	bool stopped;			/* in a ptrace stop: can be detached */
	struct user_regs_struct regs;
	uint64_t vec[64];		/* XMM0-15, then YMM0-15's upper halves (as words) */
	uint32_t n_vec;			/* words of vec read */
};

struct ptrace_stop {
	int pid;
	struct ptrace_thread *threads;	/* seized, stopped */
	size_t n, cap;
	uint64_t start_ns;		/* first thread seized */
	uint64_t deadline_ns;
};

/*
 * Stop every thread of pid (also those created while stopping), waiting at most max_ms.
 * 0 or -errno (-EBUSY already traced, -EPERM not allowed, -ESRCH gone, -ETIME threads did
 * not stop in time); on error every thread is resumed and msg holds the cause.
 */
int ptrace_stop__begin(struct ptrace_stop *s, int pid, unsigned int max_ms, char *msg,
		       size_t msg_len);
/* Bytes copied per process_vm_readv: the deadline is checked between two. */
#define PTRACE_STOP_CHUNK (1u << 20)

/*
 * Copy len bytes at addr of the stopped process; unreadable pages read as zeros.  0, -ESRCH,
 * or -ETIME when the deadline passed before all was copied; *copied: bytes copied.
 */
int ptrace_stop__read(const struct ptrace_stop *s, uint64_t addr, void *buf, size_t len,
		      size_t *copied);
/* Past the deadline given to begin? */
int ptrace_stop__overdue(const struct ptrace_stop *s);
/*
 * Resume every thread (PTRACE_DETACH); returns how long the process was stopped, in ms.
 * Threads not stopped yet are detached by a later ptrace_stop__reap, as soon as they stop.
 */
double ptrace_stop__end(struct ptrace_stop *s);
/*
 * Detach the deferred threads that stopped meanwhile, reap those that died.  How many are
 * still waited for.  Cheap: the run loop calls it every turn.
 */
size_t ptrace_stop__reap(void);
/*
 * A ptrace stop of tid (status from waitpid) that another wait collected (the launcher's,
 * for CMD): detach tid so it runs on.
 */
void ptrace_stop__stopped(int tid, int status);
/* The exit status of pid if one of our waits collected it (false: none seen). */
bool ptrace_stop__exit_status(int pid, int *status);

#endif
