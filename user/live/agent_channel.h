/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * agent_channel.h - leaktop's side of the in-process agent (`--agent`): the socket the
 * preloaded agents hand their channels over (agent/channel.h), the channels received, and
 * each interval the facts they hold (sites, their stacks, counters) put into the sample as
 * the BPF maps' are, so the model and everything after it work unchanged.
 *
 * Everything in a channel is written by the traced process: the header is copied once and
 * checked against the memfd's size and seals, every index, count and frame number is
 * bounds-checked, and a channel that fails a check is dropped (counted).
 */
#ifndef LEAKTOP_LIVE_AGENT_CHANNEL_H
#define LEAKTOP_LIVE_AGENT_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/channel.h"
#include "core/sample.h"
#include "core/scan.h"
#include "core/types.h"

struct collector;
struct agent_channels;

/* A channel's header as checked: what the reader uses (never the shared copy). */
struct agent_layout {
	uint64_t total_bytes;
	uint64_t order_off, sites_off, blocks_off;
	uint32_t n_sites, n_blocks, depth, site_bytes;
};

/* One site as read: its stack (ips: depth entries of the caller's buffer) and counters. */
struct agent_site {
	uint64_t stack_hash;
	uint32_t nr;
	uint32_t slot;
	int64_t outstanding_bytes, outstanding_count;
	uint64_t allocs, frees, alloc_bytes, live_since_ns, last_alloc_ns;
};

/*
 * Check the header at base of a channel file_bytes long (a private copy of it, taken once):
 * magic, version, sizes, capacities (powers of two, at most the agent's), depth, and every
 * table inside the file without overlap.  0 and *out, or -EINVAL.
 */
int agent_channel__check(const struct lt_agent_hdr *hdr, uint64_t file_bytes,
			 struct agent_layout *out);
/* Sites made so far (the header's count, bounded by the capacity). */
uint32_t agent_channel__n_sites(const struct agent_layout *l, const void *base);
/*
 * The k-th site made (k < agent_channel__n_sites): 1 and *out, ips[0..out->nr) (ips holds
 * l->depth entries); 0 when its entry is not written yet, names no slot, or the slot is not
 * ready or not consistent (hash 0, or one its frames do not give).
 */
int agent_channel__site(const struct agent_layout *l, const void *base, uint32_t k,
			struct agent_site *out, uint64_t *ips);

/* A set for one run: the socket pair (leaktop's end non-blocking), depth for the agents. */
int agent_channels__new(struct agent_channels **out, uint32_t depth);
void agent_channels__free(struct agent_channels *set);
/* The agents' end of the socket (kept open across CMD's exec) and the environment value of
 * LT_AGENT_ENV that names it. */
int agent_channels__child_fd(const struct agent_channels *set);
void agent_channels__env(const struct agent_channels *set, char *buf, size_t len);
/*
 * The path of libleaktop-agent.so: beside leaktop's executable, else in ../lib/leaktop from
 * it, else the install directory.  0, or -ENOENT (none readable) with nothing in buf.
 */
int agent_channels__lib_path(char *buf, size_t len);
/*
 * Take the channels handed over since the last call and read every channel into s: its
 * sites (kind heap, the image's gen), their stacks (into the kernel's stacks map, as the BPF
 * walk's), counters and drops added to the kernel's, and an entry of s->calls (via_agent).
 * Call it after collector__read.  0 or -ENOMEM.
 */
int agent_channels__read(struct agent_channels *set, struct collector *c, struct sample *s);
/*
 * Add the channel memfd fd (leaktop's descriptor of it: received, or taken from an injected
 * process with pidfd_getfd) of process pid, for the image the kernel's procs map has now.
 * fd is closed whatever happens.  0, or -errno (-EINVAL: not a sealed channel whose header
 * holds; counted as refused).
 */
int agent_channels__add(struct agent_channels *set, struct collector *c, int fd, uint32_t pid);
/* The images gone: their channels are closed (their counters kept). */
void agent_channels__forget(struct agent_channels *set, const struct dead_image *dead, size_t n);
/*
 * The live blocks of process pid's current channel, as the scan takes them (seq 0: the agent
 * does not number allocations), read while the process is stopped (`leaktop check` at its
 * exit): hand-overs waiting are taken first, and the stacks of the sites the blocks name go
 * into the stacks map (collector__stack then gives them).  A block whose site slot is not a
 * made, consistent site, or whose size is absurd, is left out and counted in *bad.  0 and
 * *out (free it), -ENOENT (no channel: the agent never started there), or -ENOMEM.
 */
int agent_channels__blocks(struct agent_channels *set, struct collector *col, uint32_t pid,
			   struct scan_block **out, size_t *n, uint64_t *bad);
/*
 * The descriptors process pid's agent names as its own (its channel, libunwind's pipe): at
 * most max into fds, each a plausible descriptor number; the count (0: no channel).
 */
size_t agent_channels__own_fds(struct agent_channels *set, uint32_t pid, int *fds, size_t max);
/* The device and inode of process pid's channel (its mapping there; hand-overs waiting are
 * taken first): 0, or -ENOENT. */
int agent_channels__file(struct agent_channels *set, struct collector *col, uint32_t pid,
			 uint64_t *dev, uint64_t *ino);
/* Channels refused (a failed check, the set full) so far. */
uint64_t agent_channels__refused(const struct agent_channels *set);

#endif
