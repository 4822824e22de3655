/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * scan_cmd.h - `leaktop scan -p PID`: trace a process as `leaktop -p` does and, every
 * interval, scan it for blocks no pointer reaches any more.  The run loop calls
 * scan_cmd__scan_targets; the snapshot and the text report show the latest result.
 */
#ifndef LEAKTOP_SCAN_CMD_H
#define LEAKTOP_SCAN_CMD_H

#include <stdio.h>

#include "live/collector.h"
#include "core/model.h"
#include "core/scan.h"

/* Fills *blocks (malloc'd) with the live blocks, called while the process is stopped. */
typedef int (*scan_fetch_fn)(void *ctx, struct scan_block **blocks, size_t *n);

/* scan__process with the blocks read while the process is stopped. */
int scan__process_live(int pid, scan_fetch_fn fetch, void *ctx, struct scan_result *out,
		       char *msg, size_t msg_len);

/* Scan every live -p target of m; results go to the model.  Count scanned. */
int scan_cmd__scan_targets(struct collector *c, struct model *m);
/* Scan one traced process now (the TUI's key); a one-line summary or error in msg. */
int scan_cmd__scan_one(struct collector *c, struct model *m, uint32_t pid, char *msg,
		       size_t len);

/* `leaktop scan ...`: exit status. */
int scan_cmd__main(int argc, char **argv);

#endif
