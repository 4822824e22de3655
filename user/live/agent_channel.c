// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * agent_channel.c - leaktop's side of the in-process agent: the hand-over socket, the
 * channels the agents send on it (checked: a sealed memfd of a sane size whose header
 * holds), and each interval their sites, stacks and counters into the sample.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "live/agent_channel.h"
#include "live/collector.h"
#include "util/clock.h"
#include "util/vec.h"

#define MAX_CHANNELS		4096
/* Channels of one process at once: its image, and the one it exec'd until the old is gone. */
#define MAX_PER_PID		2
#define MAX_CHANNEL_BYTES	(1ULL << 30)

struct channel {
	uint32_t pid;
	uint64_t gen;
	uint64_t dev, ino;		/* the memfd's: its mapping in the process */
	int fd;				/* the memfd: where its written pages are (SEEK_DATA) */
	void *base;
	struct agent_layout l;
	uint8_t *pushed;		/* per slot: its stack is in the stacks map */
};

struct agent_channels {
	int sock;			/* leaktop's end */
	int child_sock;			/* the agents' end */
	uint32_t depth;
	struct channel *ch;
	size_t n;
	uint64_t retired[LT_AGENT_CNT__COUNT];	/* counters of closed channels */
	uint64_t refused;
	uint64_t *ips;			/* scratch: depth frames */
};

static bool pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

/* [off, off + len) inside [lo, total)?  No overflow. */
static bool inside(uint64_t off, uint64_t len, uint64_t lo, uint64_t total)
{
	return off >= lo && off <= total && len <= total - off;
}

int agent_channel__check(const struct lt_agent_hdr *h, uint64_t file_bytes,
			 struct agent_layout *out)
{
	struct agent_layout l = {
		.total_bytes = h->total_bytes, .order_off = h->order_off,
		.sites_off = h->sites_off, .blocks_off = h->blocks_off,
		.n_sites = h->n_sites, .n_blocks = h->n_blocks, .depth = h->depth,
		.site_bytes = h->site_bytes,
	};
	uint64_t hdr_end = sizeof(*h);

	if (h->magic != LT_AGENT_MAGIC || h->version != LT_AGENT_VERSION ||
	    h->hdr_bytes != sizeof(*h) || l.total_bytes != file_bytes ||
	    file_bytes > MAX_CHANNEL_BYTES)
		return -EINVAL;
	if (!pow2(l.n_sites) || l.n_sites > LT_AGENT_SITES || !pow2(l.n_blocks) ||
	    l.n_blocks > LT_AGENT_BLOCKS || !l.depth || l.depth > LT_AGENT_MAX_DEPTH ||
	    l.site_bytes != LT_AGENT_SITE_BYTES(l.depth))
		return -EINVAL;
	/* The tables in order, each inside the file, none over another or the header. */
	if (!inside(l.order_off, (uint64_t)l.n_sites * 4, hdr_end, file_bytes) ||
	    (l.order_off & 3) ||
	    !inside(l.sites_off, (uint64_t)l.n_sites * l.site_bytes,
		    l.order_off + (uint64_t)l.n_sites * 4, file_bytes) || (l.sites_off & 7) ||
	    !inside(l.blocks_off, (uint64_t)l.n_blocks * sizeof(struct lt_agent_block),
		    l.sites_off + (uint64_t)l.n_sites * l.site_bytes, file_bytes) ||
	    (l.blocks_off & 7))
		return -EINVAL;
	*out = l;
	return 0;
}

uint32_t agent_channel__n_sites(const struct agent_layout *l, const void *base)
{
	uint32_t n = __atomic_load_n(&((const struct lt_agent_hdr *)base)->sites_used,
				     __ATOMIC_ACQUIRE);

	return n < l->n_sites ? n : l->n_sites;
}

int agent_channel__site(const struct agent_layout *l, const void *base, uint32_t k,
			struct agent_site *out, uint64_t *ips)
{
	const uint32_t *order = (const uint32_t *)((const char *)base + l->order_off);
	const struct lt_agent_site *s;
	uint32_t slot, nr;

	if (k >= l->n_sites)
		return 0;
	slot = __atomic_load_n(&order[k], __ATOMIC_ACQUIRE);
	if (!slot || slot > l->n_sites)
		return 0;
	slot--;
	s = (const struct lt_agent_site *)((const char *)base + l->sites_off +
					   (uint64_t)slot * l->site_bytes);
	if (!__atomic_load_n(&s->ready, __ATOMIC_ACQUIRE))
		return 0;
	nr = __atomic_load_n(&s->nr, __ATOMIC_RELAXED);
	if (!nr || nr > l->depth)
		return 0;
	memcpy(ips, s->ips, nr * sizeof(*ips));
	*out = (struct agent_site){
		.stack_hash = __atomic_load_n(&s->stack_hash, __ATOMIC_RELAXED),
		.nr = nr,
		.slot = slot,
		.outstanding_bytes = __atomic_load_n(&s->outstanding_bytes, __ATOMIC_RELAXED),
		.outstanding_count = __atomic_load_n(&s->outstanding_count, __ATOMIC_RELAXED),
		.allocs = __atomic_load_n(&s->allocs, __ATOMIC_RELAXED),
		.frees = __atomic_load_n(&s->frees, __ATOMIC_RELAXED),
		.alloc_bytes = __atomic_load_n(&s->alloc_bytes, __ATOMIC_RELAXED),
		.live_since_ns = __atomic_load_n(&s->live_since_ns, __ATOMIC_RELAXED),
		.last_alloc_ns = __atomic_load_n(&s->last_alloc_ns, __ATOMIC_RELAXED),
	};
	/* The key must be the hash of the frames given: one site, one stack. */
	if (out->stack_hash != lt_agent_stack_hash(ips, nr))
		return 0;
	return 1;
}

int agent_channels__new(struct agent_channels **out, uint32_t depth)
{
	struct agent_channels *set = calloc(1, sizeof(*set));
	int sv[2], one = 1, err;

	if (!set)
		return -ENOMEM;
	set->depth = depth ? depth : LT_AGENT_DEFAULT_DEPTH;
	if (set->depth > LT_AGENT_MAX_DEPTH)
		set->depth = LT_AGENT_MAX_DEPTH;
	set->ips = calloc(LT_AGENT_MAX_DEPTH, sizeof(*set->ips));
	if (!set->ips) {
		free(set);
		return -ENOMEM;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		err = -errno;
		free(set->ips);
		free(set);
		return err;
	}
	set->sock = sv[0];
	set->child_sock = sv[1];
	/* The sender's pid from the kernel, whatever the message says. */
	if (setsockopt(set->sock, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) ||
	    fcntl(set->sock, F_SETFL, O_NONBLOCK)) {
		err = -errno;
		agent_channels__free(set);
		return err;
	}
	*out = set;
	return 0;
}

static void channel_close(struct agent_channels *set, struct channel *c)
{
	const struct lt_agent_hdr *h = c->base;

	for (int i = 0; i < LT_AGENT_CNT__COUNT; i++)
		set->retired[i] += __atomic_load_n(&h->counters[i], __ATOMIC_RELAXED);
	munmap(c->base, c->l.total_bytes);
	free(c->pushed);
	close(c->fd);
}

void agent_channels__free(struct agent_channels *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->n; i++)
		channel_close(set, &set->ch[i]);
	free(set->ch);
	if (set->sock >= 0)
		close(set->sock);
	if (set->child_sock >= 0)
		close(set->child_sock);
	free(set->ips);
	free(set);
}

int agent_channels__child_fd(const struct agent_channels *set)
{
	return set->child_sock;
}

void agent_channels__env(const struct agent_channels *set, char *buf, size_t len)
{
	snprintf(buf, len, "fd=%d,pid=%d,depth=%u", set->child_sock, (int)getpid(), set->depth);
}

static int usable(const char *path)
{
	struct stat st;

	/* LD_PRELOAD splits at spaces and colons: a path with one cannot be given. */
	if (strpbrk(path, " :\t\n") || stat(path, &st) || !S_ISREG(st.st_mode) ||
	    access(path, R_OK))
		return -ENOENT;
	return 0;
}

int agent_channels__lib_path(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			/* Beside it (the build tree), or PREFIX/lib/leaktop of PREFIX/sbin/leaktop. */
			*slash = '\0';
			if ((size_t)snprintf(buf, len, "%s/%s", exe, LT_AGENT_LIB) < len &&
			    !usable(buf))
				return 0;
			if ((size_t)snprintf(buf, len, "%s/../lib/leaktop/%s", exe, LT_AGENT_LIB) <
			    len && !usable(buf))
				return 0;
		}
	}
	if ((size_t)snprintf(buf, len, "%s/%s", LEAKTOP_AGENTDIR, LT_AGENT_LIB) < len &&
	    !usable(buf))
		return 0;
	if (len)
		buf[0] = '\0';
	return -ENOENT;
}

int agent_channels__add(struct agent_channels *set, struct collector *col, int fd, uint32_t pid)
{
	struct lt_agent_hdr hdr;
	struct channel c = { .pid = pid, .fd = -1 };
	struct stat st;
	int seals, err = -EINVAL;
	uint64_t image_ns;
	size_t same = 0;
	void *base;

	for (size_t i = 0; i < set->n; i++)
		same += set->ch[i].pid == pid;
	if (set->n >= MAX_CHANNELS || same >= MAX_PER_PID)
		goto out;
	/* A memfd that can neither shrink (a read past its end would fault) nor grow. */
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) != (F_SEAL_SHRINK | F_SEAL_GROW) ||
	    fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(hdr) ||
	    (uint64_t)st.st_size > MAX_CHANNEL_BYTES)
		goto out;
	if (pread(fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr) ||
	    agent_channel__check(&hdr, (uint64_t)st.st_size, &c.l))
		goto out;
	base = mmap(NULL, c.l.total_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		err = -errno;
		goto out;
	}
	c.base = base;
	c.dev = st.st_dev;
	c.ino = st.st_ino;
	c.pushed = calloc(c.l.n_sites, 1);
	/*
	 * The channel must be the current image's: one an image made before it exec'd (handed
	 * over, then read after the exec) started before the new image was traced.
	 */
	if (!c.pushed || collector__proc_gen(col, pid, &c.gen, &image_ns) ||
	    hdr.start_ns < image_ns) {
		munmap(base, c.l.total_bytes);
		free(c.pushed);
		goto out;
	}
	{
		struct channel *ch = realloc(set->ch, (set->n + 1) * sizeof(*ch));

		if (!ch) {
			munmap(base, c.l.total_bytes);
			free(c.pushed);
			err = -ENOMEM;
			goto out;
		}
		set->ch = ch;
		c.fd = fd;
		set->ch[set->n++] = c;
	}
	return 0;
out:
	set->refused++;
	close(fd);
	return err;
}

/* Take every hand-over waiting on the socket. */
static void receive(struct agent_channels *set, struct collector *col)
{
	for (;;) {
		struct lt_agent_hello hello;
		union {
			char buf[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(4 * sizeof(int))];
			struct cmsghdr align;
		} u;
		struct iovec iov = { .iov_base = &hello, .iov_len = sizeof(hello) };
		struct msghdr msg = {
			.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			.msg_controllen = sizeof(u.buf) };
		int fds[4], n_fds = 0;
		uint32_t pid = 0;
		ssize_t n = recvmsg(set->sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			if (cm->cmsg_level != SOL_SOCKET)
				continue;
			if (cm->cmsg_type == SCM_CREDENTIALS &&
			    cm->cmsg_len == CMSG_LEN(sizeof(struct ucred))) {
				struct ucred cr;

				memcpy(&cr, CMSG_DATA(cm), sizeof(cr));
				pid = (uint32_t)cr.pid;
			} else if (cm->cmsg_type == SCM_RIGHTS) {
				size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

				for (size_t j = 0; j < k && n_fds < 4; j++)
					memcpy(&fds[n_fds++], CMSG_DATA(cm) + j * sizeof(int),
					       sizeof(int));
			}
		}
		/* One memfd with a well-formed hello from a known sender, else nothing. */
		if (n != (ssize_t)sizeof(hello) || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
		    hello.magic != LT_AGENT_MAGIC || hello.version != LT_AGENT_VERSION ||
		    !pid || n_fds != 1) {
			for (int j = 0; j < n_fds; j++)
				close(fds[j]);
			set->refused++;
			continue;
		}
		agent_channels__add(set, col, fds[0], pid);
	}
}

static int add_site(struct sample *s, size_t *cap, const struct channel *c,
		    const struct agent_site *as)
{
	if (s->n_sites + 1 > *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct sample_site *n = realloc(s->sites, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->sites = n;
		*cap = ncap;
	}
	s->sites[s->n_sites++] = (struct sample_site){
		.pid = c->pid, .kind = LT_KIND_HEAP, .gen = c->gen,
		.stack_hash = as->stack_hash,
		.outstanding_bytes = as->outstanding_bytes,
		.outstanding_count = as->outstanding_count,
		.allocs = as->allocs, .frees = as->frees, .alloc_bytes = as->alloc_bytes,
		.live_since_ns = as->live_since_ns, .last_alloc_ns = as->last_alloc_ns,
	};
	return 0;
}

static int add_calls(struct sample *s, const struct channel *c, uint64_t calls)
{
	struct sample_calls *n;

	for (size_t i = 0; i < s->n_calls; i++)
		if (s->calls[i].pid == c->pid && s->calls[i].gen == c->gen) {
			s->calls[i].heap_calls = calls;
			s->calls[i].via_agent = true;
			return 0;
		}
	n = realloc(s->calls, (s->n_calls + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	s->calls = n;
	s->calls[s->n_calls++] = (struct sample_calls){
		.pid = c->pid, .gen = c->gen, .heap_calls = calls, .via_agent = true };
	return 0;
}

int agent_channels__read(struct agent_channels *set, struct collector *col, struct sample *s)
{
	uint64_t cnt[LT_AGENT_CNT__COUNT], now = monotonic_ns();
	size_t cap = s->n_sites;
	struct agent_site as;
	int err = 0;

	receive(set, col);
	memcpy(cnt, set->retired, sizeof(cnt));
	for (size_t i = 0; i < set->n && !err; i++) {
		struct channel *c = &set->ch[i];
		struct lt_agent_hdr *h = c->base;
		uint32_t n = agent_channel__n_sites(&c->l, c->base);

		__atomic_store_n(&h->heartbeat_ns, now, __ATOMIC_RELAXED);
		for (uint32_t k = 0; k < n && !err; k++) {
			if (!agent_channel__site(&c->l, c->base, k, &as, set->ips))
				continue;
			if (!c->pushed[as.slot] &&
			    !collector__put_stack(col, as.stack_hash, set->ips, NULL, as.nr))
				c->pushed[as.slot] = 1;
			err = add_site(s, &cap, c, &as);
		}
		for (int j = 0; j < LT_AGENT_CNT__COUNT; j++)
			cnt[j] += __atomic_load_n(&h->counters[j], __ATOMIC_RELAXED);
		if (!err)
			err = add_calls(s, c,
					__atomic_load_n(&h->counters[LT_AGENT_CNT_CALLS],
							__ATOMIC_RELAXED));
	}
	qsort(s->sites, s->n_sites, sizeof(*s->sites), sample_site__cmp);
	s->counters[LT_CNT_EVENTS] += cnt[LT_AGENT_CNT_EVENTS];
	s->counters[LT_CNT_FREE_UNKNOWN] += cnt[LT_AGENT_CNT_FREE_UNKNOWN];
	s->counters[LT_CNT_NESTED] += cnt[LT_AGENT_CNT_NESTED];
	s->counters[LT_CNT_FAILED_ALLOCS] += cnt[LT_AGENT_CNT_FAILED];
	s->drops[LT_DROP_ALLOC_MAP_FULL] += cnt[LT_AGENT_CNT_DROP_BLOCK_FULL];
	s->drops[LT_DROP_SITE_MAP_FULL] += cnt[LT_AGENT_CNT_DROP_SITE_FULL];
	return err;
}

/* The newest channel of pid (the current image's: a newer one replaces an exec'd image's). */
static struct channel *channel_of(struct agent_channels *set, uint32_t pid)
{
	struct channel *best = NULL;

	for (size_t i = 0; i < set->n; i++)
		if (set->ch[i].pid == pid && (!best || set->ch[i].gen > best->gen))
			best = &set->ch[i];
	return best;
}

/* The stack hash of site slot `slot` of c, its stack pushed into the stacks map; 0: none. */
static uint64_t slot_hash(struct agent_channels *set, struct collector *col, struct channel *c,
			  uint32_t slot, uint64_t *slot_hashes)
{
	const struct lt_agent_site *s;
	uint32_t nr;
	uint64_t h;

	if (slot >= c->l.n_sites)
		return 0;
	if (slot_hashes[slot])
		return slot_hashes[slot] == UINT64_MAX ? 0 : slot_hashes[slot];
	s = (const struct lt_agent_site *)((const char *)c->base + c->l.sites_off +
					   (uint64_t)slot * c->l.site_bytes);
	slot_hashes[slot] = UINT64_MAX;
	if (!__atomic_load_n(&s->ready, __ATOMIC_ACQUIRE))
		return 0;
	nr = __atomic_load_n(&s->nr, __ATOMIC_RELAXED);
	if (!nr || nr > c->l.depth)
		return 0;
	memcpy(set->ips, s->ips, nr * sizeof(*set->ips));
	h = __atomic_load_n(&s->stack_hash, __ATOMIC_RELAXED);
	if (!h || h == UINT64_MAX || h != lt_agent_stack_hash(set->ips, nr))
		return 0;
	if (!c->pushed[slot] && !collector__put_stack(col, h, set->ips, NULL, nr))
		c->pushed[slot] = 1;
	slot_hashes[slot] = h;
	return h;
}

#define SLOTS_PER_PAGE	(4096 / sizeof(struct lt_agent_block))

/*
 * The first block slot at or after slot i (page-aligned) in a page the agent wrote: the
 * memfd's data past its holes (shmem counts a swapped page as data).  n_blocks when none.
 */
static uint32_t next_written(const struct channel *c, uint32_t i)
{
	off_t at = (off_t)(c->l.blocks_off + (uint64_t)i * sizeof(struct lt_agent_block));
	off_t d = lseek(c->fd, at, SEEK_DATA);
	uint64_t slot;

	if (d < 0)
		return errno == ENXIO ? c->l.n_blocks : i;
	slot = ((uint64_t)d - c->l.blocks_off) / sizeof(struct lt_agent_block);
	slot -= slot % SLOTS_PER_PAGE;
	return slot < c->l.n_blocks ? (uint32_t)slot : c->l.n_blocks;
}

int agent_channels__blocks(struct agent_channels *set, struct collector *col, uint32_t pid,
			   struct scan_block **out, size_t *n, uint64_t *bad)
{
	const struct lt_agent_block *tab;
	struct scan_block *v = NULL;
	uint64_t *slot_hashes = NULL;
	size_t k = 0, cap = 0;
	struct channel *c;
	int err = 0;

	*out = NULL;
	*n = 0;
	*bad = 0;
	receive(set, col);
	c = channel_of(set, pid);
	if (!c)
		return -ENOENT;
	slot_hashes = calloc(c->l.n_sites, sizeof(*slot_hashes));
	if (!slot_hashes)
		return -ENOMEM;
	tab = (const struct lt_agent_block *)((const char *)c->base + c->l.blocks_off);
	for (uint32_t i = 0; i < c->l.n_blocks; i++) {
		uint64_t addr;

		/* Pages the agent never wrote hold no block: skipped, never faulted in. */
		if (!(i % SLOTS_PER_PAGE)) {
			uint32_t next = next_written(c, i);

			if (next != i) {
				i = next - 1;
				continue;
			}
		}
		addr = __atomic_load_n(&tab[i].addr, __ATOMIC_ACQUIRE);
		uint64_t size = __atomic_load_n(&tab[i].size_bytes, __ATOMIC_RELAXED);
		uint64_t h;

		if (addr == LT_AGENT_BLOCK_EMPTY || addr == LT_AGENT_BLOCK_GONE)
			continue;
		h = slot_hash(set, col, c, __atomic_load_n(&tab[i].site, __ATOMIC_RELAXED),
			      slot_hashes);
		/* A block past the end of the address space is no block. */
		if (!h || size > (1ULL << 47) || addr + size < addr) {
			(*bad)++;
			continue;
		}
		if (VEC_RESERVE(v, cap, k + 1, 1024)) {
			err = -ENOMEM;
			break;
		}
		v[k++] = (struct scan_block){ .addr = addr, .size = size, .stack_hash = h };
	}
	free(slot_hashes);
	if (err) {
		free(v);
		return err;
	}
	*out = v;
	*n = k;
	return 0;
}

size_t agent_channels__own_fds(struct agent_channels *set, uint32_t pid, int *fds, size_t max)
{
	const struct channel *c = channel_of(set, pid);
	const struct lt_agent_hdr *h;
	uint32_t n;
	size_t k = 0;

	if (!c)
		return 0;
	h = c->base;
	n = __atomic_load_n(&h->n_own_fds, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n && i < LT_AGENT_OWN_FDS && k < max; i++) {
		int32_t fd = __atomic_load_n(&h->own_fds[i], __ATOMIC_RELAXED);

		if (fd >= 0)
			fds[k++] = fd;
	}
	return k;
}

int agent_channels__file(struct agent_channels *set, struct collector *col, uint32_t pid,
			 uint64_t *dev, uint64_t *ino)
{
	const struct channel *c;

	receive(set, col);
	c = channel_of(set, pid);

	if (!c)
		return -ENOENT;
	*dev = c->dev;
	*ino = c->ino;
	return 0;
}

void agent_channels__forget(struct agent_channels *set, const struct dead_image *dead, size_t n)
{
	size_t w = 0;

	for (size_t i = 0; i < set->n; i++) {
		bool gone = false;

		for (size_t j = 0; j < n && !gone; j++)
			gone = dead[j].tgid == set->ch[i].pid && dead[j].gen == set->ch[i].gen;
		if (gone)
			channel_close(set, &set->ch[i]);
		else
			set->ch[w++] = set->ch[i];
	}
	set->n = w;
}

uint64_t agent_channels__refused(const struct agent_channels *set)
{
	return set->refused;
}
