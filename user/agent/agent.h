/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * agent.h - libleaktop-agent.so, leaktop's in-process allocator tracer: its exported API
 * (what the injector calls after a remote dlopen) and the interfaces between its files.
 *
 *   hooks.c      one hook per allocator entry point of agent/alloc_fns.h, the real functions
 *                (dlsym, with a static arena for the allocations dlsym makes meanwhile)
 *   record.c     the accounting into the channel (agent/channel.h): sites, blocks, stacks
 *   agent.c      start, stop, the preload constructor, fork, leaktop's liveness
 *   got.c        (injection) redirection of the loaded objects' GOT entries to the hooks;
 *   got_stub.c   weak no-op stand-ins for it, so the preload build links without it
 *
 * The agent never allocates through the hooked functions while recording, never blocks and
 * makes no syscall per allocator call; a thread inside a hook (a signal handler's call, an
 * allocator calling itself) goes straight to the real function.
 */
#ifndef LEAKTOP_AGENT_AGENT_H
#define LEAKTOP_AGENT_AGENT_H

#include <stdint.h>

#include "agent/channel.h"
#include "bpf/leaktop.h"

#define AGENT_API	__attribute__((visibility("default")))
#define AGENT_HIDDEN	__attribute__((visibility("hidden")))

/*
 * Start recording into a new channel: 0 <= the channel memfd's descriptor (leaktop takes it
 * with pidfd_getfd), or -errno.  flags: LT_AGENT_INJECTED (then the GOTs are redirected with
 * agent_got_redirect()), the depth in LT_AGENT_FLAGS_DEPTH.  Calling it again while active
 * returns the same descriptor.
 */
AGENT_API int leaktop_agent_start(unsigned int flags);
/* Stop: undo the redirection (agent_got_restore()), record nothing more.  The hooks stay
 * callable (they go straight to the real functions). */
AGENT_API void leaktop_agent_stop(void);

/* One hooked entry point: its symbol, the agent's function, the real one's pointer. */
struct agent_hook {
	const char *name;
	void *hook;
	void **real;			/* set by agent_resolve(); got.c may set it from a GOT */
	unsigned int fn;		/* enum lt_alloc_fn: its shape */
};

AGENT_HIDDEN extern const struct agent_hook agent_hooks[];
AGENT_HIDDEN extern const unsigned int agent_n_hooks;

/* Resolve every real function (once; safe to call from a hook).  0 or -errno. */
AGENT_HIDDEN int agent_resolve(unsigned int flags);

/* got.c (or got_stub.c): redirect every loaded object's GOT entries of the hooked symbols
 * to the hooks, and objects loaded later; undo it.  0 or -errno. */
AGENT_HIDDEN int agent_got_redirect(void);
AGENT_HIDDEN void agent_got_restore(void);

/* record.c: the channel in use (NULL: not recording). */
AGENT_HIDDEN extern struct lt_agent_hdr *volatile agent_channel;
/* Set up a channel in the memory at hdr (total bytes, zeroed) for depth frames. */
/* One walk, so that libunwind sets itself up (its validation pipe) now. */
AGENT_HIDDEN void agent_record_warm(void);
AGENT_HIDDEN void agent_record_init(struct lt_agent_hdr *hdr, uint64_t total, uint32_t depth,
				    uint32_t flags);
/* A block of size bytes at addr was allocated; the caller's return address and frame. */
AGENT_HIDDEN void agent_record_alloc(struct lt_agent_hdr *ch, uint64_t addr, uint64_t size,
				     uint64_t ra, uint64_t fp);
/* Take addr's record out (free, realloc's old block): 1 and its site/size in *site, *size,
 * or 0 when unknown. */
AGENT_HIDDEN int agent_record_take(struct lt_agent_hdr *ch, uint64_t addr, uint32_t *site,
				   uint64_t *size);
/* The taken block was freed: take it off its site. */
AGENT_HIDDEN void agent_record_freed(struct lt_agent_hdr *ch, uint32_t site, uint64_t size);
/* The taken block lives on (realloc failed): put its record back. */
AGENT_HIDDEN void agent_record_put_back(struct lt_agent_hdr *ch, uint64_t addr, uint32_t site,
					uint64_t size);
/* Count one event.  Calls and events are tallied per thread and added to the channel's
 * every so often (agent_flush: at each tick, and when the thread's channel changes). */
AGENT_HIDDEN void agent_count(struct lt_agent_hdr *ch, enum lt_agent_counter c);
AGENT_HIDDEN void agent_flush(void);
/* agent.c: 1 once the preload start was tried with the environment readable (or the agent
 * was started otherwise); before, the first hooks try it (agent_early_start). */
AGENT_HIDDEN extern int agent_started;
AGENT_HIDDEN void agent_early_start(void);
/* Cheap liveness check, every so many calls: leaktop still there?  (agent.c) */
AGENT_HIDDEN void agent_tick(struct lt_agent_hdr *ch);

#endif
