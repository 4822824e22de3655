/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * inject.h - loading leaktop's agent (libleaktop-agent.so) into a running process and
 * starting it, then stopping it again: the one place leaktop writes a traced process's
 * memory and registers, and only for `-p PID --agent`.
 *
 * One thread of the process is stopped (ptrace), at a point where it holds no allocator or
 * loader lock as far as can be told (blocked in, or entering, a system call that is not a
 * memory or lock call), and made to call the process's own dlopen, dlsym and the agent's
 * leaktop_agent_start; its registers (all of them, vector state included) and the syscall
 * it was in are then put back and it runs on.  The other threads run throughout.  Any
 * failure before the agent is started leaves the process as it was.  leaktop itself never
 * runs these: its injector process does (live/injector.h), which a SIGKILL of leaktop
 * does not end.
 */
#ifndef LEAKTOP_INJECT_H
#define LEAKTOP_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* leaktop_agent_start's flags (the agent's ABI). */
#define LT_AGENT_INJECTED	(1u << 0)

struct inject_agent {
	int pid;
	int target_fd;		/* the channel's descriptor in the process */
	int local_fd;		/* the same, duplicated into leaktop (pidfd_getfd); -1: none */
	uint64_t stop_addr;	/* leaktop_agent_stop in the process */
	uint64_t handle;	/* dlopen's handle */
	double stopped_ms;	/* how long the calling thread was held */
};

/* Longest a call into the process may take before it is given up. */
#define INJECT_CALL_MS		5000u
/* Longest wait for a thread to reach a point where it can make the call. */
#define INJECT_SAFE_POINT_MS	3000u

/*
 * Is the file at path (leaktop's own agent, absolute) the same file inside process pid's
 * root, and loadable by it (a regular file others may read, on a file system that allows
 * executable mappings)?  0, or -errno with one line in msg.
 */
int inject__check_path(int pid, const char *path, char *msg, size_t msg_len);
/* Has the one who asked for the injection gone (nobody to hand the agent to)? */
typedef bool (*inject_abandoned_fn)(void *ctx);

/*
 * Load the agent at path into pid and call leaktop_agent_start(LT_AGENT_INJECTED), from
 * this process (live/injector.c runs it in a process of its own).  Between the steps,
 * abandoned(ctx) is asked: once it says yes, what was done is undone (a started agent is
 * stopped again) and -ECANCELED returned.  0, or -errno with one line (cause, then fix) in
 * msg; on failure the process runs on untouched (nothing loaded, or the agent loaded and
 * inert).  local_fd is left -1.
 */
int inject__start_here(int pid, const char *path, struct inject_agent *out,
		       inject_abandoned_fn abandoned, void *ctx, char *msg, size_t msg_len);
/*
 * Call leaktop_agent_stop() in the process, from this process: its allocator calls go
 * straight to the allocator again; the agent stays loaded, inert.  0 or -errno with msg.
 */
int inject__stop_here(const struct inject_agent *a, char *msg, size_t msg_len);

/*
 * The pure parts, for unit tests.  Is a thread stopped in (or entering) system call nr at a
 * point where calling dlopen cannot wait on a lock it holds itself?  (Not in a memory-map
 * call an allocator makes holding its lock, nor a futex, clone, exec or exit.)
 */
int inject__syscall_is_safe(long nr);
/*
 * The stack pointer for a call made from a thread whose stack pointer is sp, below its red
 * zone and `reserve` bytes of data: 16-byte aligned minus 8, as at a function's entry.
 */
uint64_t inject__call_sp(uint64_t sp, size_t reserve, uint64_t *data_at);

#endif
