/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * run.h - `leaktop [OPTIONS]`: the live run (set-up, interval loop, teardown).
 */
#ifndef LEAKTOP_RUN_H
#define LEAKTOP_RUN_H

#include "cli/options.h"

/* Returns the process exit status: 0, 1 (runtime failure) or 2 (usage). */
int run__main(const struct options *o);
/* `leaktop scan ...`: exit status. */
int run__scan_main(int argc, char **argv);
/* Privileges the live run needs: 0, or -EPERM with nothing printed. */
int run__check_privileges(void);

#endif
