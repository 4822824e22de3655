/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * preflight.h - the live run's checks before anything loads: privileges, output paths, the
 * OOM directory, the -p processes, the command.  Each failure is one line on stderr.
 */
#ifndef LEAKTOP_PREFLIGHT_H
#define LEAKTOP_PREFLIGHT_H

#include <stddef.h>

#include "cli/options.h"

/*
 * 0 to go on, or the exit status (1, 2 for leaktop's own pid).  Sets the file mode of the
 * outputs, and the OOM directory into oom_dir (--oom-dir, or beside the -j file).
 */
int preflight__check(const struct options *o, char *oom_dir, size_t oom_len);

#endif
