// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * agent.c - the agent's life: start (a sealed memfd channel, mapped shared), stop (inert),
 * the preload constructor (started by leaktop's environment variable, the channel handed
 * over on the inherited socket), fork (the child sends its own channel, or goes inert),
 * and leaktop's liveness (its end of the socket closed, or its heartbeat stale: inert).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "agent/agent.h"

#define TLS	__attribute__((tls_model("initial-exec")))
#define TICK_CALLS	256		/* calls between looks at the clock (and flushes) */
#define CHECK_NS	1000000000ULL	/* looks at leaktop's liveness, at most */

static int channel_fd = -1;		/* the memfd of agent_channel */
static int sock_fd = -1;		/* preloaded: the hand-over socket */
static pid_t leaktop_pid;
static unsigned int start_flags;
static uint64_t last_check_ns;
static __thread unsigned int ticks TLS;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void go_inert(void)
{
	struct lt_agent_hdr *ch = agent_channel;

	agent_channel = NULL;
	if (ch)
		__atomic_store_n(&ch->state, LT_AGENT_INERT, __ATOMIC_RELEASE);
}

/* A new channel, mapped: its descriptor, or -errno. */
static int channel_new(uint32_t depth, unsigned int flags, struct lt_agent_hdr **out)
{
	uint64_t order_off, sites_off, blocks_off;
	uint64_t total = lt_agent_layout(depth, &order_off, &sites_off, &blocks_off);
	void *p;
	int fd, err;

	fd = memfd_create(LT_AGENT_MEMFD_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)total) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) {
		err = -errno;
		goto fail;
	}
	p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		goto fail;
	}
	agent_record_init(p, total, depth, flags);
	((struct lt_agent_hdr *)p)->pid = (uint32_t)getpid();
	*out = p;
	return fd;
fail:
	close(fd);
	return err;
}

/* Descriptors scanned for the agent's own (libunwind's pipe is opened low, at its first walk). */
#define OWN_FD_SCAN	256

/* Which descriptors below OWN_FD_SCAN are open now: a bit each. */
static void open_fds(uint64_t bits[OWN_FD_SCAN / 64])
{
	for (int fd = 0; fd < OWN_FD_SCAN; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			bits[fd / 64] |= 1ULL << (fd % 64);
}

/* Name the descriptors the agent opened (those in now, not in before, and the channel's). */
static void note_own_fds(struct lt_agent_hdr *ch, const uint64_t *before, const uint64_t *now,
			 int channel)
{
	uint32_t n = 0;

	for (int fd = 0; fd < OWN_FD_SCAN && n < LT_AGENT_OWN_FDS - 1; fd++)
		if ((now[fd / 64] & ~before[fd / 64]) & (1ULL << (fd % 64)))
			ch->own_fds[n++] = fd;
	ch->own_fds[n++] = channel;
	__atomic_store_n(&ch->n_own_fds, n, __ATOMIC_RELEASE);
}

int leaktop_agent_start(unsigned int flags)
{
	uint64_t fds_before[OWN_FD_SCAN / 64] = { 0 }, fds_now[OWN_FD_SCAN / 64] = { 0 };
	uint32_t depth = LT_AGENT_FLAGS_DEPTH(flags);
	struct lt_agent_hdr *ch = NULL;
	int fd, err;

	if (agent_channel)
		return channel_fd;
	if (!depth)
		depth = LT_AGENT_DEFAULT_DEPTH;
	if (depth > LT_AGENT_MAX_DEPTH)
		depth = LT_AGENT_MAX_DEPTH;
	err = agent_resolve(flags);
	if (err)
		return err;
	open_fds(fds_before);
	agent_record_warm();
	open_fds(fds_now);
	fd = channel_new(depth, flags, &ch);
	if (fd < 0)
		return fd;
	note_own_fds(ch, fds_before, fds_now, fd);
	__atomic_store_n(&agent_started, 1, __ATOMIC_RELEASE);
	start_flags = flags;
	channel_fd = fd;
	last_check_ns = ch->start_ns;
	__atomic_store_n(&agent_channel, ch, __ATOMIC_RELEASE);
	if (flags & LT_AGENT_INJECTED) {
		err = agent_got_redirect();
		if (err) {
			go_inert();
			return err;
		}
	}
	return fd;
}

void leaktop_agent_stop(void)
{
	go_inert();
	if (start_flags & LT_AGENT_INJECTED)
		agent_got_restore();
}

/* Hand the channel to leaktop on the inherited socket: 0 or -errno. */
static int send_channel(int fd)
{
	struct lt_agent_hello hello = {
		.magic = LT_AGENT_MAGIC, .version = LT_AGENT_VERSION, .pid = (uint32_t)getpid() };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = &hello, .iov_len = sizeof(hello) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
		.msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm;
	struct ucred cred;
	socklen_t len = sizeof(cred);

	/* The descriptor must still be leaktop's socket (a program may reuse the number). */
	if (getsockopt(sock_fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) || len != sizeof(cred) ||
	    cred.pid != leaktop_pid)
		return -ENOTCONN;
	memset(u.buf, 0, sizeof(u.buf));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	if (sendmsg(sock_fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)sizeof(hello))
		return -errno;
	return 0;
}

/* Start preloaded, when leaktop's variable names its socket: a channel, handed over. */
static void start_preloaded(uint32_t depth)
{
	int fd = leaktop_agent_start(depth << LT_AGENT_DEPTH_SHIFT);

	if (fd < 0)
		return;
	if (send_channel(fd)) {
		go_inert();
		return;
	}
	/* leaktop holds the channel now: ours is not needed open. */
}

static void after_fork_child(void)
{
	struct lt_agent_hdr *was = agent_channel;

	/* The parent's channel is the parent's: never written from here. */
	agent_channel = NULL;
	if (!was)
		return;
	channel_fd = -1;
	if (sock_fd >= 0 && !(start_flags & LT_AGENT_INJECTED))
		start_preloaded(was->depth);
}

/* "fd=N,pid=P,depth=D": 0 when every field parsed. */
static int parse_env(const char *s, int *fd, pid_t *pid, uint32_t *depth)
{
	const char *keys[] = { "fd=", "pid=", "depth=" };
	unsigned long v[3];

	for (int i = 0; i < 3; i++) {
		size_t kl = strlen(keys[i]);

		if (strncmp(s, keys[i], kl))
			return -EINVAL;
		s += kl;
		v[i] = 0;
		if (*s < '0' || *s > '9')
			return -EINVAL;
		while (*s >= '0' && *s <= '9') {
			v[i] = v[i] * 10 + (unsigned long)(*s++ - '0');
			if (v[i] > 0x7fffffff)
				return -EINVAL;
		}
		if (*s != (i == 2 ? '\0' : ','))
			return -EINVAL;
		s++;
	}
	*fd = (int)v[0];
	*pid = (pid_t)v[1];
	*depth = (uint32_t)v[2];
	return 0;
}

int agent_started;

/*
 * Start as leaktop's variable says, once.  From the constructor, or from the first hooked
 * call if that comes first (another library's initializer); there the environment may not
 * be readable yet (libc not initialized): then nothing happens and a later call tries again.
 */
static void preload_start(bool from_constructor)
{
	const char *env;
	uint32_t depth;
	int expect = 0;

	if (__atomic_load_n(&agent_started, __ATOMIC_ACQUIRE))
		return;
	env = getenv(LT_AGENT_ENV);
	if (!env && !from_constructor && !environ)
		return;
	if (!__atomic_compare_exchange_n(&agent_started, &expect, 1, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return;
	if (!env || parse_env(env, &sock_fd, &leaktop_pid, &depth) || leaktop_pid <= 0) {
		sock_fd = -1;
		return;
	}
	pthread_atfork(NULL, NULL, after_fork_child);
	start_preloaded(depth);
}

void agent_early_start(void)
{
	preload_start(false);
}

__attribute__((constructor)) static void agent_preload_init(void)
{
	preload_start(true);
}

void agent_tick(struct lt_agent_hdr *ch)
{
	uint64_t now, last;

	if (++ticks % TICK_CALLS)
		return;
	agent_flush();
	now = now_ns();
	last = __atomic_load_n(&last_check_ns, __ATOMIC_RELAXED);
	if (now - last < CHECK_NS ||
	    !__atomic_compare_exchange_n(&last_check_ns, &last, now, 0, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED))
		return;
	if (sock_fd >= 0) {
		struct pollfd p = { .fd = sock_fd, .events = 0 };

		/* leaktop's end closed: it is gone. */
		if (poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR | POLLNVAL))) {
			go_inert();
			return;
		}
	}
	if (now - __atomic_load_n(&ch->heartbeat_ns, __ATOMIC_RELAXED) > LT_AGENT_STALE_NS)
		go_inert();
}

/* The exiting thread's tallies (the others' were added at their last tick). */
__attribute__((destructor)) static void agent_exit_flush(void)
{
	agent_flush();
}
