// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * stop_at.c - --stop-at SITE:N (see stop_at.h).
 *
 * The stop itself happens in BPF (bpf/heap.bpf.c): each heap site numbers its allocations,
 * and the return probe of the Nth allocation of the site sends SIGSTOP to its process, so the
 * process stops right there, with the block just returned.  A site is SITE's when its stack
 * id is SITE, or when one of its frames lies in a function named SITE: decided in BPF on
 * the site's first allocation, from the file offsets resolved here (the program and its
 * libraries; a library loaded later with dlopen is not searched).  The first allocation
 * that matches stops its process; later ones do not.
 */
#include <errno.h>
#include <string.h>

#include "live/fnrange.h"
#include "live/loader.h"
#include "live/stop_at.h"
#include "util/msg.h"

int stop_at__arm(struct loader *ld, const struct stop_at_config *c, char *msg, size_t len)
{
	struct lt_stop_cfg cfg = { .armed = 1, .seq = c->seq, .stack_hash = c->stack_hash };
	int found = 0, err;

	if (!c->seq)
		return 0;
	if (!cfg.stack_hash) {
		if (c->command) {
			found = c->cmd_path ? fnrange__of_command(c->cmd_path, c->fn, &cfg) : -ENOENT;
		} else {
			for (size_t i = 0; i < c->n_pids && found >= 0; i++) {
				err = fnrange__of_pid(c->pids[i], c->fn, &cfg);
				found = err < 0 ? err : found + err;
			}
		}
		if (found == -ENOSPC)
			return msg__set(msg, len, -ENOSPC, "--stop-at: '%s' names more than %d "
					"functions in the traced programs; give a site id (the "
					"JSON's stack_id) instead", c->fn, LT_STOP_RANGES);
		if (found <= 0)
			return msg__set(msg, len, -ENOENT, "--stop-at: no function '%s' in the "
					"symbol tables of the traced program or its libraries; "
					"check the name (nm -C), or give a site id (the JSON's "
					"stack_id)", c->fn);
	}
	err = loader__arm_stop_at(ld, &cfg);
	if (err)
		return msg__set(msg, len, err, "--stop-at: cannot arm the heap probes: %s",
				strerror(-err));
	return 0;
}
