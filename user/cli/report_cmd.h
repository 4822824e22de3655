/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * report_cmd.h - the subcommands that work on saved snapshots: `leaktop report` and
 * `leaktop diff`.  Each parses its own command line (argv[0] is the subcommand's name) and
 * returns the exit status: 0 success, 1 unreadable or invalid snapshot or failed write,
 * 2 usage error.
 */
#ifndef LEAKTOP_REPORT_CMD_H
#define LEAKTOP_REPORT_CMD_H

int report_cmd__report(int argc, char **argv);
int report_cmd__diff(int argc, char **argv);

#endif
