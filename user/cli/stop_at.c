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

#include "cli/stop_at.h"
#include "live/fnrange.h"
#include "util/msg.h"

int stop_at__arm(struct loader *ld, const struct options *o, const char *cmd_path, char *msg,
		 size_t len)
{
	struct lt_stop_cfg cfg = { .armed = 1, .seq = o->stop_at_seq,
				   .stack_hash = o->stop_at_hash };
	int found = 0, err;

	if (!o->stop_at_seq)
		return 0;
	if (!cfg.stack_hash) {
		if (o->mode == MODE_COMMAND) {
			found = cmd_path ? fnrange__of_command(cmd_path, o->stop_at_fn, &cfg) :
					   -ENOENT;
		} else {
			for (size_t i = 0; i < o->n_pids && found >= 0; i++) {
				err = fnrange__of_pid(o->pids[i], o->stop_at_fn, &cfg);
				found = err < 0 ? err : found + err;
			}
		}
		if (found == -ENOSPC)
			return msg__set(msg, len, -ENOSPC, "--stop-at: '%s' names more than %d "
					"functions in the traced programs; give a site id (the "
					"JSON's stack_id) instead", o->stop_at_fn, LT_STOP_RANGES);
		if (found <= 0)
			return msg__set(msg, len, -ENOENT, "--stop-at: no function '%s' in the "
					"symbol tables of the traced program or its libraries; "
					"check the name (nm -C), or give a site id (the JSON's "
					"stack_id)", o->stop_at_fn);
	}
	err = loader__arm_stop_at(ld, &cfg);
	if (err)
		return msg__set(msg, len, err, "--stop-at: cannot arm the heap probes: %s",
				strerror(-err));
	return 0;
}

void stop_at__note(struct stop_record *rec, const struct lt_event *ev)
{
	if (ev->type != LT_EV_STOP_AT || rec->fired)
		return;
	*rec = (struct stop_record){
		.fired = true, .pid = ev->tgid, .tid = ev->stop.tid, .gen = ev->stop.gen,
		.addr = ev->stop.addr, .size_bytes = ev->stop.size_bytes, .seq = ev->stop.seq,
		.stack_hash = ev->stop.stack_hash,
	};
}
