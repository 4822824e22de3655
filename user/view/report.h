/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * report.h - the plain-text report of batch mode (and of `leaktop report` on saved data).
 */
#include <stdbool.h>
#ifndef LEAKTOP_REPORT_H
#define LEAKTOP_REPORT_H

#include <stdio.h>

#include "core/model.h"

struct report_opts {
	unsigned int top_sites;		/* sites per process */
	unsigned int top_procs;		/* processes, 0: all */
	unsigned int max_frames;	/* frames per stack, 0: all */
	bool symbols_once;		/* a module without symbols only in the first report
					 * that has it (live batch mode), not in every one */
};

void report__write(FILE *out, const struct model *m, const struct report_opts *o);
/*
 * --stop-at's allocation, when it fired: who was stopped at which allocation of which site,
 * the block, with_stack its site's frames, and how to debug or resume the process.
 */
void report__write_stop(FILE *out, const struct model *m, bool with_stack);

#endif
