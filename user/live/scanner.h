/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * scanner.h - the reachability scan engine: stops a traced process briefly, copies its
 * registers and writable memory, resumes it, and classifies its tracked live blocks
 * (core/scan.c).  Its results go into the sample; the model keeps them, the views render them.
 */
#ifndef LEAKTOP_SCANNER_H
#define LEAKTOP_SCANNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/sample.h"
#include "core/scan.h"

struct collector;
struct scanner;

/*
 * Stop every thread of pid for at most max_ms, copy its registers and writable memory,
 * resume it, then classify blocks.  Never writes to the target.  0 or -errno: -EBUSY already
 * traced, -EPERM ptrace not allowed (Yama, capabilities), -ESRCH gone, -ETIME stopped too
 * long (out->partial says how far the copy got), -E2BIG too much memory; msg gets one line
 * of cause.
 */
int scan__process(int pid, unsigned int max_ms, const struct scan_block *blocks, size_t n,
		  struct scan_result *out, char *msg, size_t msg_len);

/* Fills *blocks (malloc'd) with the live blocks, called while the process is stopped. */
typedef int (*scan_fetch_fn)(void *ctx, struct scan_block **blocks, size_t *n);

/*
 * Stop every thread of pid for at most max_ms, copy its registers and writable memory,
 * resume it, then classify blocks.  Never writes to the target.  0 or -errno: -EBUSY already
 * traced, -EPERM ptrace not allowed (Yama, capabilities), -ESRCH gone, -ETIME stopped too
 * long (out->partial says how far the copy got), -E2BIG too much memory; msg gets one line
 * of cause.
 */
int scan__process(int pid, unsigned int max_ms, const struct scan_block *blocks, size_t n,
		  struct scan_result *out, char *msg, size_t msg_len);

/* scan__process with the blocks read while the process is stopped. */
int scan__process_live(int pid, unsigned int max_ms, scan_fetch_fn fetch, void *ctx,
		       struct scan_result *out, char *msg, size_t msg_len);

/* A file whose mappings a scan leaves out (the agent's channel: leaktop's, not the program's). */
struct scan_file {
	uint64_t dev, ino;		/* makedev(major, minor) and inode, as in /proc/PID/maps */
};

/* scan__process_live, the mappings of the files skip[0..n_skip) left out. */
int scan__process_live_skip(int pid, unsigned int max_ms, scan_fetch_fn fetch, void *ctx,
			    const struct scan_file *skip, size_t n_skip, struct scan_result *out,
			    char *msg, size_t msg_len);

/* Scans stop a process at most max_ms (0: SCAN_MAX_STOP_MS). */
int scanner__new(struct scanner **out, struct collector *c, unsigned int max_ms);
void scanner__free(struct scanner *sc);

/*
 * Scan image (pid, gen) now (the TUI's key): a one-line summary or error in msg; the result
 * goes into the next sample.  0 or -errno.
 */
int scanner__scan_now(struct scanner *sc, uint32_t pid, uint64_t gen, char *msg, size_t len);

/*
 * This interval's scans into s: those made on demand since the last sample and, when `due`,
 * one of every live target among s->procs (a failure is one line on stderr, once per
 * cause, and an error in the sample).  Sets timing.scan_ms.  Count scanned or -ENOMEM.
 */
int scanner__fill(struct scanner *sc, struct sample *s, bool due);

#endif
