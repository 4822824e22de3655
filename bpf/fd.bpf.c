// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * fd.bpf.c - file descriptors (Windows' handles) per creating call site, in the kernel.
 *
 * bpf/syscall.bpf.c's programs hand the exits of the descriptor syscalls here (lt_fd_exit).
 * Created descriptors are recorded in `fds` (tgid, fd) with the site that made them (its
 * stack: bpf/sysstack.bpf.c); close, close_range and dup2/dup3 onto an open fd take them off.
 * Descriptors closed behind our back (exec's close-on-exec, a close we missed) are repaired
 * by the collector against /proc/PID/fd.
 */
#include "common.bpf.h"

#define F_DUPFD			0
#define F_DUPFD_CLOEXEC		1030
#define SOL_SOCKET		1
#define SCM_RIGHTS		1
#define MAX_CMSGS		4
#define MAX_MMSGS		8

extern const volatile __u8 cfg_fd_class[LT_MAX_SYSCALL];	/* bpf/syscall.bpf.c */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, LT_MAX_FDS);
	__type(key, struct lt_fd_key);
	__type(value, struct lt_fd_val);
} fds SEC(".maps");

/*
 * Take (tgid, fd) off its site and out of the process's share.  1 if it was tracked.  A
 * global function: verified once, not at each of its many call sites.
 */
__noinline int lt_fd_release(__u32 tgid, __s32 fd)
{
	struct lt_fd_key k = { .tgid = tgid, .fd = fd };
	struct lt_fd_val *v = bpf_map_lookup_elem(&fds, &k);
	struct lt_fd_val old;

	if (!v)
		return 0;
	old = *v;
	if (bpf_map_delete_elem(&fds, &k))
		return 0;
	share_put(bpf_map_lookup_elem(&procs, &tgid), LT_SHARE_FD);
	site_sub(tgid, old.gen, old.stack_hash, LT_KIND_FD, 0);
	bump(&counters, LT_CNT_FD_EVENTS);
	return 1;
}

/*
 * Record a new descriptor at the site `hash` of image gen, in the process's share
 * (descriptors outlive exec: the share is the process's, not the image's).  A global
 * function, verified once.
 */
__noinline int lt_fd_record(__u32 tgid, __u64 gen, __u64 hash, __s32 fd, __u64 now)
{
	struct lt_fd_key k = { .tgid = tgid, .fd = fd };
	struct lt_fd_val v = { .gen = gen, .stack_hash = hash, .ts_ns = now };
	struct lt_proc *p = bpf_map_lookup_elem(&procs, &tgid);
	struct lt_site_val *s;
	long err;

	if (fd < 0)
		return 0;
	if (!share_take(p, LT_SHARE_FD, tgid))
		return 0;
	s = site_get(tgid, gen, hash, LT_KIND_FD);
	if (!s) {
		share_put(p, LT_SHARE_FD);
		return 0;
	}
	err = bpf_map_update_elem(&fds, &k, &v, BPF_NOEXIST);
	if (err == -EEXIST) {
		struct lt_fd_val *old = bpf_map_lookup_elem(&fds, &k);

		/*
		 * The number is open again without a close we saw.  Within one image, retire
		 * the old record; a record of an image that exec'd away stays charged to it
		 * (its numbers are final) and is just replaced.
		 */
		if (old && old->gen == gen)
			lt_fd_release(tgid, fd);
		else if (old)
			share_put(p, LT_SHARE_FD);	/* replaced: the old record's share */
		err = bpf_map_update_elem(&fds, &k, &v, BPF_ANY);
	}
	if (err) {
		share_put(p, LT_SHARE_FD);
		share_lost(p, LT_SHARE_FD, LT_DROP_FD_MAP_FULL);
		return 0;
	}
	site_add(s, 0, now);
	bump(&counters, LT_CNT_FD_EVENTS);
	return 0;
}

#define RANGE_MAX 32	/* descriptors one close_range() releases here; /proc repairs more */

/* On the stack: bpf_for_each_map_elem wants its context there. */
struct range_buf {
	__s32 fd[RANGE_MAX];
	__u32 n;
	__u32 tgid;
	__u32 first;
	__u32 last;
};

/* bpf_for_each_map_elem callback: collect this process's descriptors in the range. */
static long collect_in_range(struct bpf_map *map, struct lt_fd_key *k, struct lt_fd_val *v,
			     struct range_buf *rb)
{
	__u32 n = rb->n;

	if (k->tgid != rb->tgid || (__u32)k->fd < rb->first || (__u32)k->fd > rb->last)
		return 0;
	if (n >= RANGE_MAX)
		return 1;
	rb->fd[n] = k->fd;
	rb->n = n + 1;
	return 0;
}

/* close_range(first, last): release the tracked descriptors in [first, last]. */
static __always_inline void release_range(__u32 tgid, __u32 first, __u32 last)
{
	struct range_buf rb = { .tgid = tgid, .first = first, .last = last };

	bpf_for_each_map_elem(&fds, collect_in_range, &rb, 0);
	for (__u32 i = 0; i < RANGE_MAX; i++) {
		if (i >= rb.n)
			break;
		lt_fd_release(tgid, rb.fd[i]);
	}
}

/* Descriptors passed with SCM_RIGHTS in the msghdr at user address msg. */
static __always_inline void record_scm_rights(__u32 tgid, __u64 gen, __u64 hash, __u64 msg,
					      __u64 now)
{
	struct user_msghdr mh;
	__u64 at, end;

	if (bpf_probe_read_user(&mh, sizeof(mh), (void *)msg) || !mh.msg_control)
		return;
	at = (__u64)mh.msg_control;
	end = at + mh.msg_controllen;
	for (int c = 0; c < MAX_CMSGS; c++) {
		struct cmsghdr ch;
		__u32 n;

		if (at + sizeof(ch) > end)
			break;
		if (bpf_probe_read_user(&ch, sizeof(ch), (void *)at) || ch.cmsg_len < sizeof(ch))
			break;
		if (ch.cmsg_level == SOL_SOCKET && ch.cmsg_type == SCM_RIGHTS) {
			n = (ch.cmsg_len - sizeof(ch)) / sizeof(int);
			for (__u32 i = 0; i < LT_MAX_SCM_FDS; i++) {
				int fd;

				if (i >= n)
					break;
				if (bpf_probe_read_user(&fd, sizeof(fd),
							(void *)(at + sizeof(ch) + i * sizeof(int))))
					break;
				lt_fd_record(tgid, gen, hash, fd, now);
			}
		}
		at += (ch.cmsg_len + 7) & ~7ULL;
	}
}

/*
 * The exit of a descriptor syscall (a: its arguments, ret >= 0, regs: its user registers):
 * the descriptors it created recorded at its site, those it closed released.  A global
 * function (called by bpf/syscall.bpf.c).
 */
__noinline int lt_fd_exit(const struct lt_sysargs *a, long ret, const struct lt_uregs *regs)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u64 now, hash;
	__u8 cls;
	int pair[2];

	if (!a || !regs || ret < 0 || a->nr >= LT_MAX_SYSCALL)
		return 0;
	cls = cfg_fd_class[a->nr];
	now = bpf_ktime_get_ns();

	switch (cls) {
	case LT_FDC_CLOSE:
		if (ret == 0)
			lt_fd_release(tgid, (__s32)a->args[0]);
		return 0;
	case LT_FDC_CLOSE_RANGE:
		/* CLOSE_RANGE_CLOEXEC only marks them: exec will close them (a new image). */
		if (ret == 0 && !(a->args[2] & 4))
			release_range(tgid, a->args[0], a->args[1]);
		return 0;
	case LT_FDC_FCNTL:
		if (a->args[1] != F_DUPFD && a->args[1] != F_DUPFD_CLOEXEC)
			return 0;
		break;
	case LT_FDC_SIGNALFD:
		if ((int)a->args[0] != -1)
			return 0;
		break;
	case LT_FDC_DUP2:
		if (a->args[0] == a->args[1])
			return 0;
		/* dup2 onto an open descriptor closes it first. */
		lt_fd_release(tgid, (__s32)a->args[1]);
		break;
	case LT_FDC_RECVMMSG:
	case LT_FDC_RECVMSG:
		if (ret == 0 && cls == LT_FDC_RECVMMSG)
			return 0;
		break;
	default:
		break;
	}

	hash = lt_syscall_stack(regs, LT_FD_SALT);
	switch (cls) {
	case LT_FDC_PAIR_ARG0:
	case LT_FDC_PAIR_ARG3:
		if (bpf_probe_read_user(pair, sizeof(pair),
					(void *)a->args[cls == LT_FDC_PAIR_ARG0 ? 0 : 3]))
			return 0;
		lt_fd_record(tgid, a->gen, hash, pair[0], now);
		lt_fd_record(tgid, a->gen, hash, pair[1], now);
		break;
	case LT_FDC_RECVMSG:
		record_scm_rights(tgid, a->gen, hash, a->args[1], now);
		break;
	case LT_FDC_RECVMMSG:
		for (int i = 0; i < MAX_MMSGS; i++) {
			if (i >= ret)
				break;
			/* struct mmsghdr: a user_msghdr then an unsigned int, padded to 64 bytes. */
			record_scm_rights(tgid, a->gen, hash,
					  a->args[1] + i * (sizeof(struct user_msghdr) + 8), now);
		}
		break;
	default:
		lt_fd_record(tgid, a->gen, hash, (__s32)ret, now);
		break;
	}
	return 0;
}
