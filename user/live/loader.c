// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * loader.c - owns the BPF skeleton: load with the run's settings, attach, detach.
 *
 * The only file that includes the skeleton.  Uprobes for the whole system or one process
 * (-p) are attached as two uprobe_multi links per libc (kernel 6.6 and later: one for every
 * function's entry, the attach cookie naming the function, one for the returns), else
 * through the kernel's uprobe PMU (perf_event_open), one perf event per probe.  Uprobes for a
 * process and everything it forks (--) are tracefs-defined events opened as inherited perf
 * events on it (live/tracefs.c): neither of the others runs BPF in forked children.  Every
 * probe belongs to a file descriptor of this process and stops with it, whatever way
 * leaktop ends (a tracefs definition left by SIGKILL is inert).  Raw tracepoints are
 * attached by name, which needs no tracefs; the fd and mmap programs go on the per-syscall
 * tracepoints of their syscalls (ids from tracefs), else on the raw sys_enter/sys_exit
 * (attach_syscalls).  libbpf's messages are shown only with -v;
 * failures come back as one line naming the cause and the fix.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <poll.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "live/fdsys.h"
#include "live/libcs.h"
#include "live/loader.h"
#include "live/probes.h"
#include "live/procfs.h"
#include "live/tracefs.h"
#include "leaktop.skel.h"
#include "bpf/watch.h"
#include "util/clock.h"
#include "util/msg.h"
#include "util/vec.h"

/* Userspace hands out image generations below this; BPF above it. */
#define BPF_GEN_BASE (1ULL << 40)

/* The allocator probes on one libc, for one process or (pid -1) every process. */
struct attached_libc {
	uint64_t dev, ino;
	int pid;			/* -1: every process */
	bool tree;			/* pid and the processes it forked since */
	int multi_fd[2];		/* uprobe_multi links (entries, returns); -1: none */
	struct bpf_link **links;	/* one perf event per probe, or a tree's program carriers */
	size_t n_links, cap_links;
	int *tree_fds;			/* a tree's inherited perf events (no program) */
	size_t n_tree_fds, cap_tree_fds;
	size_t n_probes;
};

/* Probes of one libc defined in tracefs: the perf events of every tree open these ids. */
struct tree_libc {
	uint64_t dev, ino;
	int ids[1 + PROBE_MAX_FNS];	/* the returns, then each entry */
	uint32_t n_ids;
	uint32_t n_probes;		/* the probes those events hold */
};

/* How far up the parents a process is looked for under a tree's root. */
#define TREE_MAX_DEPTH 64

/* The kernel's link type for uprobe_multi links (UAPI enum bpf_attach_type, Linux 6.6). */
#define LT_TRACE_UPROBE_MULTI		48
#define LT_F_UPROBE_MULTI_RETURN	1U

struct loader {
	struct leaktop_bpf *skel;
	char oom_msg[256];		/* why OOM victims cannot be seen ("": they can) */
	struct ring_buffer *rb;
	struct bpf_link **links;		/* the tracepoints */
	size_t n_links, cap_links;
	bool multi;			/* uprobe_multi links work here (until one fails) */
	bool multi_worked;		/* one was attached */
	struct attached_libc *libcs;
	size_t n_libcs, cap_libcs;
	int stats_fd;			/* BPF_ENABLE_STATS: programs' run time counted; -1 */
	int guard_fd;			/* exec stops: the guard's pipe (closed: it releases) */
	struct lt_map_fds fds;
	struct loader_config cfg;
	loader_event_fn event_fn;
	void *event_ctx;
	uint64_t next_user_gen;
	size_t libcs_refused;		/* libcs not probed: not the file their process maps */
	struct tracefs *tfs;		/* NULL until a tree is attached */
	bool tfs_failed;		/* tracefs cannot be had: trees attach system-wide */
	bool tree_fell_back;		/* a tree was attached system-wide (said once with -v) */
	bool tree_swappable;		/* its inherited events' contexts may swap (tracefs.c) */
	bool tree_swap_said;		/* that said once with -v */
	struct tree_libc *trees;
	size_t n_trees, cap_trees;
	unsigned int n_tree_defs;	/* definition sets made (each name is new) */
	const char *syscall_attach;	/* "syscall", "raw" (the fd and mmap programs); NULL */
	struct bpf_link **sc_links;	/* on the per-syscall tracepoints */
	int *sc_pfds;			/* their perf events (the links close them too) */
	size_t n_sc_links, cap_sc_links;
	char syscall_why[200];		/* why "raw": the per-syscall tracepoints failed */
	uint64_t poll_deadline_ns;	/* this poll delivers no event after it */
	const volatile sig_atomic_t *stop;	/* set: deliver no more events */
	const struct work_budget *drain;	/* loader__drain's bound (NULL: the poll's) */
	bool poll_cut;			/* the last poll stopped with events left */
	loader_watch_fn watch_fn;	/* leaktop lastref: its events (NULL: none) */
	void *watch_ctx;
};

/* loader__drain's bound when its caller sets none. */
#define DRAIN_DEFAULT_NS	(10ULL * 1000000ULL)

static bool verbose_libbpf;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!verbose_libbpf)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/*
 * libbpf consumes the ring for as long as producers keep it non-empty: on a busy machine that
 * is forever.  After each event, past the poll's deadline or once a stop was asked for, end
 * the poll; libbpf has already consumed this record and leaves the rest in the ring.
 */
/* For loader__exec_release_all_now: the stop switch and the held processes' map. */
static volatile uint32_t *exec_switch;
static volatile int exec_stopped_fd = -1;

/* Processes are held (at exec, at _exit): the guard, the release at teardown. */
static bool holds(const struct loader_config *c)
{
	return c->exec_stop || c->exit_stop;
}

/* Release every process in the exec_stopped map (fd): async-signal-safe. */
static void release_held(int fd)
{
	union bpf_attr attr;
	uint32_t next;

	if (fd < 0)
		return;
	/* Each time the first key (none given), until the map is empty. */
	for (int i = 0; i < LT_MAX_EXEC_STOPPED * 2; i++) {
		memset(&attr, 0, sizeof(attr));
		attr.map_fd = fd;
		attr.next_key = (uint64_t)(uintptr_t)&next;
		if (syscall(SYS_bpf, BPF_MAP_GET_NEXT_KEY, &attr, sizeof(attr)))
			break;
		kill((pid_t)next, SIGCONT);
		memset(&attr, 0, sizeof(attr));
		attr.map_fd = fd;
		attr.key = (uint64_t)(uintptr_t)&next;
		syscall(SYS_bpf, BPF_MAP_DELETE_ELEM, &attr, sizeof(attr));
	}
}

/* Release the processes of the exec_stopped map (fd) held since before cutoff_ns. */
static void release_older(int fd, uint64_t cutoff_ns)
{
	static uint32_t keys[LT_MAX_EXEC_STOPPED];
	union bpf_attr attr;
	size_t n = 0;

	/* The keys first: deleting while walking would restart the walk. */
	while (n < LT_MAX_EXEC_STOPPED) {
		memset(&attr, 0, sizeof(attr));
		attr.map_fd = fd;
		attr.key = n ? (uint64_t)(uintptr_t)&keys[n - 1] : 0;
		attr.next_key = (uint64_t)(uintptr_t)&keys[n];
		if (syscall(SYS_bpf, BPF_MAP_GET_NEXT_KEY, &attr, sizeof(attr)))
			break;
		n++;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t since;

		memset(&attr, 0, sizeof(attr));
		attr.map_fd = fd;
		attr.key = (uint64_t)(uintptr_t)&keys[i];
		attr.value = (uint64_t)(uintptr_t)&since;
		if (syscall(SYS_bpf, BPF_MAP_LOOKUP_ELEM, &attr, sizeof(attr)) || since >= cutoff_ns)
			continue;
		kill((pid_t)keys[i], SIGCONT);
		attr.value = 0;
		syscall(SYS_bpf, BPF_MAP_DELETE_ELEM, &attr, sizeof(attr));
	}
}

/*
 * The guard of the exec stops: a child that holds the map of held processes and one end of
 * a pipe.  Every GUARD_TICK_MS it releases a process held longer than EXEC_HOLD_MAX_MS
 * (leaktop stopped, or stalled: the program runs, its first allocations unseen, rather than
 * wait for it); when leaktop's end closes, however leaktop ended (SIGKILL, a crash no
 * handler saw), it releases every process still held, and any the stop holds until leaktop
 * is gone (its probes can outlive that end), then exits.  It keeps no other
 * descriptor (a probe's link it held would outlive leaktop), ignores the terminal's
 * signals, and does nothing that is not async-signal-safe.  The write end, close-on-exec,
 * into *write_fd; 0 or -errno.
 */
#define GUARD_TICK_MS		100
#define EXEC_HOLD_MAX_MS	1000
#define GUARD_SWEEP_MS		5	/* after leaktop's end closed: released this often ... */
#define GUARD_GRACE_SWEEPS	40	/* ... and this many times more once leaktop is gone */

static int start_guard(int map_fd, int *write_fd)
{
	static const int ignored[] = { SIGINT, SIGQUIT, SIGHUP, SIGTERM, SIGTSTP, SIGTTIN,
				       SIGTTOU, SIGPIPE, SIGUSR1, SIGUSR2 };
	int p[2];
	pid_t pid, leaktop;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (pid > 0) {
		close(p[0]);
		*write_fd = p[1];
		return 0;
	}
	leaktop = getppid();
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		signal(ignored[i], SIG_IGN);
	prctl(PR_SET_NAME, "leaktop-guard", 0, 0, 0);
	/* The map at 3, the read end at 4, nothing else. */
	if (dup2(map_fd, 100) < 0 || dup2(p[0], 101) < 0 || dup2(100, 3) < 0 || dup2(101, 4) < 0)
		_exit(1);
	syscall(SYS_close_range, 5, ~0U, 0);
	for (;;) {
		struct pollfd pfd = { .fd = 4, .events = POLLIN };
		int r = poll(&pfd, 1, GUARD_TICK_MS);

		if (r > 0 || (r < 0 && errno != EINTR))
			break;		/* leaktop's end closed: it is gone, or done */
		release_older(3, monotonic_ns() - EXEC_HOLD_MAX_MS * 1000000ull);
	}
	/*
	 * leaktop's end closed, but its probes may outlive that by seconds: a killed leaktop's
	 * descriptors are closed in order, the pipe's maybe first, and closing each per-syscall
	 * event takes the kernel about 20 ms.  A process the exec stop holds meanwhile is
	 * released too: until leaktop is gone (this child handed to another parent), then for
	 * a grace period (a program still running when its link went).
	 */
	for (int grace = 0; grace < GUARD_GRACE_SWEEPS; ) {
		struct timespec nap = { .tv_nsec = GUARD_SWEEP_MS * 1000000L };

		release_held(3);
		if (getppid() != leaktop)
			grace++;
		nanosleep(&nap, NULL);
	}
	_exit(0);
}

static int handle_event(void *ctx, void *data, size_t size)
{
	struct loader *ld = ctx;

	if (size >= sizeof(struct lt_event) && ld->event_fn)
		ld->event_fn(ld->event_ctx, data);
	if (ld->drain ? work_budget__spent(ld->drain, monotonic_ns()) :
	    (ld->stop && *ld->stop) || monotonic_ns() >= ld->poll_deadline_ns) {
		ld->poll_cut = true;
		return -EAGAIN;
	}
	return 0;
}

/* Append link to links[n] (capacity cap); 0 or -ENOMEM. */
static int push_link_to(struct bpf_link ***links, size_t *n, size_t *cap, struct bpf_link *link)
{
	if (vec__reserve(links, cap, *n + 1, sizeof(**links), 8, false))
		return -ENOMEM;
	(*links)[(*n)++] = link;
	return 0;
}

static int push_link(struct loader *ld, struct bpf_link *link)
{
	return push_link_to(&ld->links, &ld->n_links, &ld->cap_links, link);
}

/* The fix for an attach that failed with err: out of descriptors is no kernel limitation. */
static const char *attach_fix(int err, const char *otherwise)
{
	if (err == -EMFILE || err == -ENFILE)
		return "leaktop ran out of file descriptors; raise the hard open-file limit "
		       "(ulimit -Hn, LimitNOFILE=) or trace fewer processes";
	return otherwise;
}

static void detach_all(struct bpf_link **links, size_t n_links, const int *fds, size_t n_fds);

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Close every descriptor but keep[] (sorted): system calls only (after fork). */
static void close_all_but(const int *keep, size_t n)
{
	unsigned int from = 0;

	for (size_t i = 0; i < n; i++) {
		if ((unsigned int)keep[i] > from)
			syscall(__NR_close_range, from, (unsigned int)keep[i] - 1, 0);
		from = (unsigned int)keep[i] + 1;
	}
	syscall(__NR_close_range, from, ~0U, 0);
}

/* Keep a link on a per-syscall tracepoint and its perf event.  0 or -ENOMEM. */
static int push_sc_link(struct loader *ld, struct bpf_link *l, int pfd)
{
	size_t cap_pfds = ld->cap_sc_links;

	/* Two arrays of one capacity: the second grows to the first's. */
	if (VEC_RESERVE(ld->sc_links, ld->cap_sc_links, ld->n_sc_links + 1, 128))
		return -ENOMEM;
	if (VEC_RESERVE(ld->sc_pfds, cap_pfds, ld->cap_sc_links, 128)) {
		ld->cap_sc_links = cap_pfds;
		return -ENOMEM;
	}
	ld->sc_links[ld->n_sc_links] = l;
	ld->sc_pfds[ld->n_sc_links++] = pfd;
	return 0;
}

/*
 * Attach enter and exit to syscalls:sys_enter_NAME and sys_exit_NAME of every syscall the
 * table classifies for this run (fd_syscalls[], the resources tracked).  The events' ids are
 * read from tracefs (a detached mount of its own: nothing left behind).  A syscall with
 * neither event is one this kernel does not have (said with -v).  0, or -errno with the
 * reason in why and nothing of them left attached.
 */
static int attach_syscall_events(struct loader *ld, struct bpf_program *enter,
				 struct bpf_program *exit, char *why, size_t why_len)
{
	uint8_t table[LT_MAX_SYSCALL];
	int root = tracefs__root(), err = 0;

	if (root < 0) {
		snprintf(why, why_len, "tracefs cannot be had (a detached mount of its own: %s; "
			 "none mounted at /sys/kernel/tracing or /sys/kernel/debug/tracing)",
			 strerror(-root));
		return root;
	}
	if (faccessat(root, "events/syscalls", F_OK, 0)) {
		err = -errno;
		snprintf(why, why_len, "no per-syscall tracepoints in tracefs (events/syscalls: "
			 "%s); the kernel needs CONFIG_FTRACE_SYSCALLS=y", strerror(-err));
		goto out;
	}
	fdsys__fill_class_table(table, ld->cfg.track_fd, ld->cfg.track_mmap);
	for (size_t i = 0; i < n_fd_syscalls && !err; i++) {
		const struct fd_syscall *sc = &fd_syscalls[i];
		int ids[2];
		int e[2];

		if (sc->nr >= LT_MAX_SYSCALL || table[sc->nr] == LT_FDC_NONE)
			continue;
		for (int side = 0; side < 2; side++) {
			char name[64];

			snprintf(name, sizeof(name), "sys_%s_%s", side ? "exit" : "enter", sc->name);
			e[side] = tracefs__event_id(root, "syscalls", name, &ids[side]);
		}
		if (e[0] == -ENOENT && e[1] == -ENOENT) {
			if (ld->cfg.verbose)
				fprintf(stderr, "leaktop: this kernel has no %s syscall (no "
					"syscalls:sys_enter_%s tracepoint): not tracked\n", sc->name,
					sc->name);
			continue;
		}
		for (int side = 0; side < 2 && !err; side++) {
			struct bpf_program *prog = side ? exit : enter;
			struct bpf_link *l;
			int pfd;

			err = e[side];
			if (err) {
				snprintf(why, why_len, "cannot read the id of syscalls:sys_%s_%s: %s",
					 side ? "exit" : "enter", sc->name, strerror(-err));
				break;
			}
			pfd = tracefs__open_system_event(ids[side]);
			if (pfd < 0) {
				err = pfd;
				snprintf(why, why_len, "cannot open syscalls:sys_%s_%s: %s; %s",
					 side ? "exit" : "enter", sc->name, strerror(-err),
					 attach_fix(err, "perf events of tracepoints are needed"));
				break;
			}
			l = bpf_program__attach_perf_event(prog, pfd);
			if (!l) {
				err = -errno;
				close(pfd);
				snprintf(why, why_len, "cannot attach %s to syscalls:sys_%s_%s: %s",
					 bpf_program__name(prog), side ? "exit" : "enter", sc->name,
					 strerror(-err));
				break;
			}
			err = push_sc_link(ld, l, pfd);
			if (err) {
				bpf_link__destroy(l);
				snprintf(why, why_len, "out of memory");
			}
		}
	}
out:
	if (err) {
		detach_all(ld->sc_links, ld->n_sc_links, NULL, 0);
		ld->n_sc_links = 0;
	}
	close(root);
	return err;
}

/*
 * The fd and mmap programs (or the bench's empty ones in their place): on the per-syscall
 * tracepoints where they can be had, else on the raw sys_enter/sys_exit, which run for every
 * syscall of every process; the reason is kept (stats) and said with -v.  0 or -errno with
 * one line in msg.
 */
static int attach_syscalls(struct loader *ld, struct bpf_program *sc_enter,
			   struct bpf_program *sc_exit, struct bpf_program *raw_enter,
			   struct bpf_program *raw_exit, char *msg, size_t msg_len)
{
	struct bpf_program *raw[] = { raw_enter, raw_exit };
	int err;

	if (sc_enter) {
		err = attach_syscall_events(ld, sc_enter, sc_exit, ld->syscall_why,
					    sizeof(ld->syscall_why));
		if (!err) {
			ld->syscall_attach = "syscall";
			return 0;
		}
		if (err == -ENOMEM) {
			msg__set(msg, msg_len, 0, "%s", ld->syscall_why);
			return err;
		}
		if (ld->cfg.verbose)
			fprintf(stderr, "leaktop: %s: descriptors and mappings are tracked from the "
				"raw sys_enter/sys_exit tracepoints, which run for every syscall\n",
				ld->syscall_why);
	}
	for (size_t i = 0; i < 2; i++) {
		struct bpf_link *l = bpf_program__attach(raw[i]);

		if (!l) {
			err = -errno;
			msg__set(msg, msg_len, 0, "cannot attach the %s tracepoint: %s; %s",
				 bpf_program__name(raw[i]), strerror(-err),
				 attach_fix(err, "the kernel needs raw tracepoint support"));
			return err;
		}
		err = push_link(ld, l);
		if (err) {
			bpf_link__destroy(l);
			return err;
		}
	}
	ld->syscall_attach = "raw";
	return 0;
}

static const char *explain_load_error(int err)
{
	switch (-err) {
	case EPERM:
		return "permission denied loading BPF programs; run as root or with CAP_BPF, "
		       "CAP_PERFMON and CAP_SYS_PTRACE";
	case ENOENT:
	case ESRCH:
		return "the kernel lacks what leaktop needs (BTF at /sys/kernel/btf/vmlinux, "
		       "uprobes, raw tracepoints); use a kernel with CONFIG_DEBUG_INFO_BTF and "
		       "CONFIG_UPROBE_EVENTS";
	case ENOMEM:
		return "not enough locked memory for BPF maps; raise RLIMIT_MEMLOCK or free memory";
	default:
		return "the kernel rejected leaktop's BPF programs; rerun with -v for the verifier log";
	}
}

/*
 * Each process's share of the maps every process shares (bpf/leaktop.h, enum lt_share):
 * pct % of each map's capacity (0: 100 / LT_SHARE_DIV %), at least one record.
 */
static void set_shares(struct leaktop_bpf *skel, unsigned int pct)
{
	const struct bpf_map *maps[LT_SHARE__COUNT] = {
		[LT_SHARE_HEAP] = skel->maps.allocs,
		[LT_SHARE_FD] = skel->maps.fds,
		[LT_SHARE_MMAP] = skel->maps.mmaps,
		[LT_SHARE_SITE] = skel->maps.sites,
	};

	for (int i = 0; i < LT_SHARE__COUNT; i++) {
		uint64_t cap = bpf_map__max_entries(maps[i]);
		uint64_t max = pct ? cap * pct / 100 : cap / LT_SHARE_DIV;

		skel->rodata->cfg_share_max[i] = max ? max : 1;
	}
}

int loader__open(struct loader **out, const struct loader_config *cfg, loader_event_fn fn,
		 void *fn_ctx, char *msg, size_t msg_len)
{
	struct loader *ld;
	struct bpf_program *prog;
	uint64_t base = BPF_GEN_BASE;
	uint32_t zero = 0;
	int err;

	*out = NULL;
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		msg__set(msg, msg_len, 0, "this kernel has no BTF (/sys/kernel/btf/vmlinux); use a "
			 "kernel built with CONFIG_DEBUG_INFO_BTF=y");
		return -ENOENT;
	}
	if (access("/sys/bus/event_source/devices/uprobe/type", R_OK)) {
		msg__set(msg, msg_len, 0, "this kernel has no uprobe PMU; use a kernel with "
			 "CONFIG_UPROBE_EVENTS=y");
		return -ENOENT;
	}
	ld = calloc(1, sizeof(*ld));
	if (!ld)
		return -ENOMEM;
	ld->cfg = *cfg;
	ld->event_fn = fn;
	ld->event_ctx = fn_ctx;
	ld->next_user_gen = 1;
	ld->stats_fd = -1;
	ld->guard_fd = -1;
	verbose_libbpf = cfg->verbose;
	libbpf_set_print(libbpf_print);

	ld->skel = leaktop_bpf__open();
	if (!ld->skel) {
		err = -errno;
		msg__set(msg, msg_len, 0, "cannot open the BPF object: %s", strerror(-err));
		goto fail;
	}
	ld->skel->rodata->cfg_filter = cfg->filter;
	ld->skel->rodata->cfg_self_tgid = cfg->self_tgid;
	ld->skel->rodata->cfg_follow_fork = cfg->follow_fork;
	ld->skel->rodata->cfg_stack_depth = cfg->stack_depth;
	ld->skel->rodata->cfg_unwind_cfi = cfg->unwind_cfi;
	ld->skel->rodata->cfg_exec_stop = cfg->exec_stop;
	fdsys__fill_class_table((uint8_t *)ld->skel->rodata->cfg_fd_class, cfg->track_fd,
				cfg->track_mmap);
	set_shares(ld->skel, cfg->map_share_pct);
	err = bpf_map__set_value_size(ld->skel->maps.stacks, 8 + 24 * cfg->stack_depth);
	if (!err)
		err = bpf_map__set_max_entries(ld->skel->maps.unwind_rows,
					       cfg->unwind_cfi && cfg->unwind_rows ? cfg->unwind_rows : 1);
	if (err)
		goto fail_load;
	/* Everything is attached by hand below; nothing autoloads it by section name. */
	bpf_object__for_each_program(prog, ld->skel->obj) {
		bool floor = !strncmp(bpf_program__name(prog), "floor_", 6);

		if ((cfg->probes == PROBES_ACCOUNTING) == floor)
			bpf_program__set_autoload(prog, false);
	}
	/* The bench's floors compare perf-event probes; the real run prefers the links. */
	ld->multi = cfg->probes == PROBES_ACCOUNTING && !cfg->no_uprobe_multi;
	if (ld->multi) {
		bpf_program__set_expected_attach_type(ld->skel->progs.alloc_enter_multi,
						      LT_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(ld->skel->progs.alloc_return_multi,
						      LT_TRACE_UPROBE_MULTI);
	} else {
		bpf_program__set_autoload(ld->skel->progs.alloc_enter_multi, false);
		bpf_program__set_autoload(ld->skel->progs.alloc_return_multi, false);
	}
	if (cfg->probes != PROBES_ACCOUNTING) {
		bpf_program__set_autoload(ld->skel->progs.lt_fork, false);
		bpf_program__set_autoload(ld->skel->progs.lt_exec, false);
		bpf_program__set_autoload(ld->skel->progs.lt_exit, false);
		bpf_program__set_autoload(ld->skel->progs.lt_oom, false);
	}
	if (cfg->probes != PROBES_ACCOUNTING || !(cfg->track_fd || cfg->track_mmap)) {
		bpf_program__set_autoload(ld->skel->progs.lt_sys_enter, false);
		bpf_program__set_autoload(ld->skel->progs.lt_sys_exit, false);
		bpf_program__set_autoload(ld->skel->progs.lt_sc_enter, false);
		bpf_program__set_autoload(ld->skel->progs.lt_sc_exit, false);
	}
	/* The bench's floors: --probe-floor entry on the raw tracepoints, planned where the
	 * real programs go. */
	if (cfg->probes == PROBES_ACCOUNTING || !(cfg->track_fd || cfg->track_mmap)) {
		bpf_program__set_autoload(ld->skel->progs.floor_sys_enter, false);
		bpf_program__set_autoload(ld->skel->progs.floor_sys_exit, false);
	}
	if (cfg->probes != PROBES_FLOOR_PLANNED || !(cfg->track_fd || cfg->track_mmap)) {
		bpf_program__set_autoload(ld->skel->progs.floor_sc_enter, false);
		bpf_program__set_autoload(ld->skel->progs.floor_sc_exit, false);
	}
	err = leaktop_bpf__load(ld->skel);
	if (err)
		goto fail_load;

	ld->fds.procs = bpf_map__fd(ld->skel->maps.procs);
	ld->fds.share_purges = bpf_map__fd(ld->skel->maps.share_purges);
	ld->fds.sites = bpf_map__fd(ld->skel->maps.sites);
	ld->fds.allocs = bpf_map__fd(ld->skel->maps.allocs);
	ld->fds.stacks = bpf_map__fd(ld->skel->maps.stacks);
	ld->fds.drops = bpf_map__fd(ld->skel->maps.drops);
	ld->fds.counters = bpf_map__fd(ld->skel->maps.counters);
	ld->fds.fds = bpf_map__fd(ld->skel->maps.fds);
	ld->fds.mmaps = bpf_map__fd(ld->skel->maps.mmaps);
	ld->fds.unwind_rows = bpf_map__fd(ld->skel->maps.unwind_rows);
	ld->fds.unwind_objects = bpf_map__fd(ld->skel->maps.unwind_objects);
	ld->fds.unwind_wanted = bpf_map__fd(ld->skel->maps.unwind_wanted);
	ld->fds.file_paths = bpf_map__fd(ld->skel->maps.file_paths);
	ld->fds.py_procs = bpf_map__fd(ld->skel->maps.py_procs);
	ld->fds.py_codes = bpf_map__fd(ld->skel->maps.py_codes);
	bpf_object__for_each_program(prog, ld->skel->obj) {
		if (bpf_program__fd(prog) >= 0 && ld->fds.n_progs < LT_MAX_PROGS)
			ld->fds.progs[ld->fds.n_progs++] = bpf_program__fd(prog);
	}
	err = bpf_map_update_elem(bpf_map__fd(ld->skel->maps.gen_counter), &zero, &base, BPF_ANY);
	if (err)
		goto fail_load;

	if (cfg->probes != PROBES_ACCOUNTING && (cfg->track_fd || cfg->track_mmap)) {
		/* The bench's floor: empty programs on the syscall tracepoints. */
		bool planned = cfg->probes == PROBES_FLOOR_PLANNED;

		err = attach_syscalls(ld, planned ? ld->skel->progs.floor_sc_enter : NULL,
				      planned ? ld->skel->progs.floor_sc_exit : NULL,
				      ld->skel->progs.floor_sys_enter,
				      ld->skel->progs.floor_sys_exit, msg, msg_len);
		if (err)
			goto fail;
	}
	if (cfg->probes == PROBES_ACCOUNTING) {
		struct bpf_program *tps[] = { ld->skel->progs.lt_fork, ld->skel->progs.lt_exec,
					      ld->skel->progs.lt_exit };

		for (size_t i = 0; i < sizeof(tps) / sizeof(tps[0]); i++) {
			struct bpf_link *l = bpf_program__attach(tps[i]);

			if (!l) {
				err = -errno;
				msg__set(msg, msg_len, 0, "cannot attach the %s tracepoint: %s; %s",
					 bpf_program__name(tps[i]), strerror(-err),
					 attach_fix(err, "the kernel needs raw tracepoint support"));
				goto fail;
			}
			err = push_link(ld, l);
			if (err)
				goto fail;
		}
		if (cfg->track_fd || cfg->track_mmap) {
			err = attach_syscalls(ld, ld->skel->progs.lt_sc_enter,
					      ld->skel->progs.lt_sc_exit,
					      ld->skel->progs.lt_sys_enter,
					      ld->skel->progs.lt_sys_exit, msg, msg_len);
			if (err)
				goto fail;
		}
		/*
		 * OOM-killer victims: without them leaktop still works (no OOM snapshots), so a
		 * kernel that refuses the tracepoint is only said.
		 */
		{
			struct bpf_link *l = bpf_program__attach(ld->skel->progs.lt_oom);

			if (!l)
				msg__set(ld->oom_msg, sizeof(ld->oom_msg), 0, "OOM-killer "
					 "victims cannot be seen: cannot attach the mark_victim "
					 "tracepoint: %s; the kernel needs raw tracepoint support",
					 strerror(errno));
			else if ((err = push_link(ld, l)))
				goto fail;
		}
		ld->rb = ring_buffer__new(bpf_map__fd(ld->skel->maps.events), handle_event, ld,
					  NULL);
		if (!ld->rb) {
			err = -errno;
			msg__set(msg, msg_len, 0, "cannot set up the event ring buffer: %s",
				 strerror(-err));
			goto fail;
		}
		/* Held processes are heard of from here on, and guarded: the stops may begin. */
		if (holds(cfg)) {
			err = start_guard(bpf_map__fd(ld->skel->maps.exec_stopped), &ld->guard_fd);
			if (err) {
				msg__set(msg, msg_len, 0, "cannot start the exec-stop guard: %s",
					 strerror(-err));
				goto fail;
			}
			exec_stopped_fd = bpf_map__fd(ld->skel->maps.exec_stopped);
			exec_switch = &ld->skel->bss->exec_stop_on;
			ld->skel->bss->exec_stop_on = 1;
		}
	}
	*out = ld;
	return 0;

fail_load:
	msg__set(msg, msg_len, 0, "%s (%s)", explain_load_error(err), strerror(-err));
fail:
	loader__destroy(ld);
	return err;
}

#define DETACH_THREADS 16

struct detach_share {
	struct bpf_link **links;
	size_t n_links;
	const int *fds;
	size_t n_fds, stride, first;
};

static void *detach_some(void *arg)
{
	const struct detach_share *d = arg;

	for (size_t i = d->first; i < d->n_links; i += d->stride)
		bpf_link__destroy(d->links[i]);
	for (size_t i = d->first; i < d->n_fds; i += d->stride)
		close(d->fds[i]);
	return NULL;
}

/*
 * Detach every link and close every perf event without one.  Closing a uprobe's perf event
 * waits for an RCU grace period (about 70 ms here), one after another that made Ctrl-C take
 * over a second with 17 probes: they are closed from several threads at once, so the waits
 * overlap.  Where a thread cannot be started, its share is closed here.
 */
static void detach_all(struct bpf_link **links, size_t n_links, const int *fds, size_t n_fds)
{
	struct detach_share share[DETACH_THREADS];
	pthread_t tid[DETACH_THREADS];
	bool started[DETACH_THREADS] = { false };
	size_t most = n_links > n_fds ? n_links : n_fds;
	size_t n = most < DETACH_THREADS ? most : DETACH_THREADS;

	for (size_t k = 0; k < n; k++) {
		share[k] = (struct detach_share){ links, n_links, fds, n_fds, n, k };
		started[k] = k > 0 && !pthread_create(&tid[k], NULL, detach_some, &share[k]);
	}
	for (size_t k = 0; k < n; k++)
		if (!started[k])
			detach_some(&share[k]);
	for (size_t k = 0; k < n; k++)
		if (started[k])
			pthread_join(tid[k], NULL);
}

/* Close an attachment's links and descriptors (their waits overlap); free them. */
static void detach_one(struct attached_libc *a)
{
	for (int k = 0; k < 2; k++)
		if (a->multi_fd[k] >= 0)
			close(a->multi_fd[k]);
	a->multi_fd[0] = a->multi_fd[1] = -1;
	detach_all(a->links, a->n_links, a->tree_fds, a->n_tree_fds);
	free(a->links);
	free(a->tree_fds);
	a->links = NULL;
	a->tree_fds = NULL;
	a->n_links = a->n_tree_fds = a->cap_links = a->cap_tree_fds = 0;
}

/*
 * Detach the attachments of libcs[] that `which` picks (with `pid`) and drop them from the
 * array.  Their uprobe_multi links and perf events are closed all together (detach_all: the
 * kernel's waits overlap; closing a uprobe_multi link waits for its own grace periods, some
 * 40 ms each on a loaded machine, so the 16 links of 8 suspects closed one after another
 * took 0.3-0.4 s of leaktop's exit), or, without memory to gather them, one attachment after
 * another.
 */
static void detach_libcs(struct loader *ld, bool (*which)(const struct attached_libc *, int),
			 int pid)
{
	struct attached_libc all = { .multi_fd = { -1, -1 } };
	size_t kept = 0, n_links = 0, n_fds = 0;

	for (size_t i = 0; i < ld->n_libcs; i++) {
		if (which(&ld->libcs[i], pid)) {
			n_links += ld->libcs[i].n_links;
			n_fds += ld->libcs[i].n_tree_fds + 2;
		}
	}
	all.links = malloc((n_links + 1) * sizeof(*all.links));
	all.tree_fds = malloc((n_fds + 1) * sizeof(*all.tree_fds));
	for (size_t i = 0; i < ld->n_libcs; i++) {
		struct attached_libc *a = &ld->libcs[i];

		if (!which(a, pid)) {
			ld->libcs[kept++] = *a;
			continue;
		}
		if (!all.links || !all.tree_fds) {
			detach_one(a);
			continue;
		}
		for (int k = 0; k < 2; k++)
			if (a->multi_fd[k] >= 0)
				all.tree_fds[all.n_tree_fds++] = a->multi_fd[k];
		memcpy(all.links + all.n_links, a->links, a->n_links * sizeof(*a->links));
		all.n_links += a->n_links;
		memcpy(all.tree_fds + all.n_tree_fds, a->tree_fds,
		       a->n_tree_fds * sizeof(*a->tree_fds));
		all.n_tree_fds += a->n_tree_fds;
		free(a->links);
		free(a->tree_fds);
	}
	ld->n_libcs = kept;
	detach_one(&all);
}

static bool any_libc(const struct attached_libc *a, int pid)
{
	(void)a;
	(void)pid;
	return true;
}

static bool libc_of_pid(const struct attached_libc *a, int pid)
{
	return a->pid == pid;
}

void loader__detach_pid(struct loader *ld, int pid)
{
	detach_libcs(ld, libc_of_pid, pid);
}

static bool libc_of_one_pid(const struct attached_libc *a, int pid)
{
	(void)pid;
	return a->pid != -1;
}

void loader__detach_pid_filtered(struct loader *ld)
{
	detach_libcs(ld, libc_of_one_pid, 0);
}

void loader__heap_switch_begin(struct loader *ld, bool to_pid)
{
	ld->skel->bss->heap_kinds_gone = 0;
	ld->skel->bss->heap_kinds_off = to_pid ? LT_HEAP_KIND_PID : LT_HEAP_KIND_SYSTEM;
}

void loader__heap_switch_end(struct loader *ld, bool to_pid)
{
	uint32_t old = to_pid ? LT_HEAP_KIND_SYSTEM : LT_HEAP_KIND_PID;

	/* One store: each call from here on is seen by the new kind only. */
	__atomic_store_n(&ld->skel->bss->heap_kinds_off, old, __ATOMIC_SEQ_CST);
	if (to_pid)
		detach_libcs(ld, libc_of_pid, -1);
	else
		detach_libcs(ld, libc_of_one_pid, 0);
	/* Its return probes run no more: calls it took the entry of return to the new kind. */
	__atomic_store_n(&ld->skel->bss->heap_kinds_gone, old, __ATOMIC_SEQ_CST);
}

void loader__exec_release(struct loader *ld, int tgid)
{
	uint32_t key = tgid;

	if (!holds(&ld->cfg) || tgid <= 0)
		return;
	bpf_map_delete_elem(bpf_map__fd(ld->skel->maps.exec_stopped), &key);
	kill(tgid, SIGCONT);
}

int loader__attach_exit_stop(struct loader *ld, const char *path, char *msg, size_t msg_len)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = "_exit");
	struct bpf_link *l;
	int err;

	if (!ld->cfg.exit_stop)
		return msg__set(msg, msg_len, -EINVAL, "internal: exit stops not configured");
	/* Every process that maps the file traps here; BPF holds only the traced ones. */
	l = bpf_program__attach_uprobe_opts(ld->skel->progs.lt_exit_stop, -1, path, 0, &opts);
	if (!l)
		return msg__set(msg, msg_len, -errno, "cannot probe _exit in %s: %s", path,
				strerror(errno));
	err = push_link(ld, l);
	if (err) {
		bpf_link__destroy(l);
		return msg__set(msg, msg_len, err, "out of memory");
	}
	ld->skel->bss->exit_stop_on = 1;
	return 0;
}

size_t loader__exit_stopped(struct loader *ld, uint32_t *tgids, size_t max)
{
	int fd = bpf_map__fd(ld->skel->maps.exit_stopped);
	uint32_t key, next;
	size_t n = 0;
	void *prev = NULL;

	while (n < max && !bpf_map_get_next_key(fd, prev, &next)) {
		tgids[n++] = next;
		key = next;
		prev = &key;
	}
	return n;
}

void loader__exit_release(struct loader *ld, uint32_t tgid)
{
	bpf_map_delete_elem(bpf_map__fd(ld->skel->maps.exit_stopped), &tgid);
	loader__exec_release(ld, (int)tgid);
}

void loader__exec_plain(struct loader *ld, uint32_t dev, uint64_t ino)
{
	struct lt_exec_key key = { .dev = dev, .ino = ino };
	uint8_t one = 1;

	if (ld->cfg.exec_stop)
		bpf_map_update_elem(bpf_map__fd(ld->skel->maps.exec_plain), &key, &one, BPF_ANY);
}

void loader__exec_release_all(struct loader *ld)
{
	if (!ld || !holds(&ld->cfg))
		return;
	ld->skel->bss->exec_stop_on = 0;
	ld->skel->bss->exit_stop_on = 0;
	release_held(bpf_map__fd(ld->skel->maps.exec_stopped));
}

void loader__exec_release_all_now(void)
{
	if (exec_switch)
		*exec_switch = 0;
	release_held(exec_stopped_fd);
}

/*
 * Close the perf events of the per-syscall tracepoints without making leaktop's exit wait
 * for them.  Closing one that runs a BPF program waits for RCU grace periods under the
 * kernel's tracing mutexes, one event after another whatever the threads (about 20 ms each
 * here: 2 s for the 88 events of -r fd,mmap).  So the programs are switched off (sc_off: from
 * now on they return at once) and a grandchild takes the descriptors over: it closes
 * everything else it inherited (the parent goes on only once it has), waits until the parent
 * has let go of its own references (the `release` pipe's end closed), then closes them and
 * exits.  Where no process can be made, they are closed here.
 */
static void close_sc_links(struct loader *ld)
{
	int done[2] = { -1, -1 }, release[2] = { -1, -1 }, *keep = NULL;
	size_t n_keep = 0;
	pid_t pid = -1;
	char c;

	if (!ld->n_sc_links)
		goto here;
	ld->skel->bss->sc_off = 1;
	keep = malloc((2 * ld->n_sc_links + 1) * sizeof(*keep));
	if (!keep || pipe2(done, O_CLOEXEC))
		goto here;
	if (pipe2(release, O_CLOEXEC)) {
		close(done[0]);
		close(done[1]);
		goto here;
	}
	keep[n_keep++] = release[0];
	for (size_t i = 0; i < ld->n_sc_links; i++) {
		keep[n_keep++] = bpf_link__fd(ld->sc_links[i]);
		if (ld->sc_pfds[i] != keep[n_keep - 1])
			keep[n_keep++] = ld->sc_pfds[i];
	}
	qsort(keep, n_keep, sizeof(*keep), cmp_int);
	pid = fork();
	if (pid == 0) {
		/* Only system calls from here on: another thread may hold any lock. */
		if (fork() != 0)
			_exit(0);
		prctl(PR_SET_NAME, "leaktop-detach");
		for (int sig = 1; sig < NSIG; sig++)
			signal(sig, SIG_DFL);
		close_all_but(keep, n_keep);	/* done[1] too: the parent goes on */
		while (read(release[0], &c, 1) < 0 && errno == EINTR)
			;
		for (size_t i = 0; i < n_keep; i++)
			close(keep[i]);
		_exit(0);
	}
	close(done[1]);
	close(release[0]);
	if (pid > 0) {
		waitpid(pid, NULL, 0);
		/* EOF once the grandchild holds nothing else of ours (or is gone). */
		while (read(done[0], &c, 1) < 0 && errno == EINTR)
			;
	}
	close(done[0]);
here:
	/* With the grandchild holding them, these closes only drop our references. */
	detach_all(ld->sc_links, ld->n_sc_links, NULL, 0);
	if (release[1] >= 0)
		close(release[1]);
	free(keep);
	free(ld->sc_links);
	free(ld->sc_pfds);
	ld->sc_links = NULL;
	ld->sc_pfds = NULL;
	ld->n_sc_links = ld->cap_sc_links = 0;
}

void loader__destroy(struct loader *ld)
{
	uint64_t t0, t1, t2, t3;
	size_t n_libcs;

	if (!ld)
		return;
	loader__exec_release_all(ld);
	if (holds(&ld->cfg)) {
		exec_switch = NULL;
		exec_stopped_fd = -1;
	}
	if (ld->guard_fd >= 0)
		close(ld->guard_fd);
	t0 = monotonic_ns();
	n_libcs = ld->n_libcs;
	/* Probes first: nothing may reserve an event in a ring buffer that is gone. */
	close_sc_links(ld);
	detach_libcs(ld, any_libc, 0);
	t1 = monotonic_ns();
	detach_all(ld->links, ld->n_links, NULL, 0);
	t2 = monotonic_ns();
	ring_buffer__free(ld->rb);
	free(ld->links);
	/* Their perf events are closed: the definitions can go. */
	tracefs__close(ld->tfs);
	free(ld->trees);
	free(ld->libcs);
	if (ld->stats_fd >= 0)
		close(ld->stats_fd);
	t3 = monotonic_ns();
	leaktop_bpf__destroy(ld->skel);
	if (ld->cfg.verbose)
		err_line("detach: allocator probes (%zu attachments) %.0f ms, tracepoints (%zu) "
			 "%.0f ms, ring buffer and tracefs %.0f ms, programs and maps %.0f ms",
			 n_libcs, (t1 - t0) / 1e6, ld->n_links, (t2 - t1) / 1e6, (t3 - t2) / 1e6,
			 (monotonic_ns() - t3) / 1e6);
	free(ld);
}

/* Is pid root or a process root forked (its parents lead to root)? */
static bool in_tree(int pid, int root)
{
	for (int depth = 0; depth < TREE_MAX_DEPTH && pid > 1; depth++) {
		if (pid == root)
			return true;
		if (procfs__ppid(pid, &pid))
			return false;
	}
	return false;
}

bool loader__has_libc(struct loader *ld, uint64_t dev, uint64_t ino, int pid)
{
	for (size_t i = 0; i < ld->n_libcs; i++) {
		const struct attached_libc *a = &ld->libcs[i];

		if (a->dev != dev || a->ino != ino)
			continue;
		if (a->pid == -1 || a->pid == pid || (a->tree && pid > 0 && in_tree(pid, a->pid)))
			return true;
	}
	return false;
}

/* The attach cookie's kind bit of a's probes (heap.bpf.c's heap_kind()). */
static uint64_t kind_cookie(const struct attached_libc *a)
{
	return a->pid == -1 ? 0 : LT_COOKIE_PID;
}

/* Has pid probes of its own on the file (pid -1: the system-wide ones)? */
static bool has_own_libc(const struct loader *ld, uint64_t dev, uint64_t ino, int pid)
{
	for (size_t i = 0; i < ld->n_libcs; i++) {
		const struct attached_libc *a = &ld->libcs[i];

		if (a->dev == dev && a->ino == ino &&
		    (a->pid == pid || (pid > 0 && a->tree && in_tree(pid, a->pid))))
			return true;
	}
	return false;
}

/* Entry programs, indexed by enum lt_alloc_fn. */
static struct bpf_program *entry_prog(struct loader *ld, int fn)
{
	struct leaktop_bpf *s = ld->skel;
	struct bpf_program *progs[LT_FN__COUNT] = {
		[LT_FN_MALLOC] = s->progs.malloc_enter,
		[LT_FN_CALLOC] = s->progs.calloc_enter,
		[LT_FN_REALLOC] = s->progs.realloc_enter,
		[LT_FN_REALLOCARRAY] = s->progs.reallocarray_enter,
		[LT_FN_FREE] = s->progs.free_enter,
		[LT_FN_POSIX_MEMALIGN] = s->progs.posix_memalign_enter,
		[LT_FN_ALIGNED_ALLOC] = s->progs.aligned_alloc_enter,
		[LT_FN_MEMALIGN] = s->progs.memalign_enter,
		[LT_FN_VALLOC] = s->progs.valloc_enter,
		[LT_FN_PVALLOC] = s->progs.pvalloc_enter,
	};

	if (ld->cfg.probes != PROBES_ACCOUNTING)
		return s->progs.floor_enter;
	return progs[fn];
}

static int attach_one(struct attached_libc *a, struct bpf_program *prog, bool retprobe,
		      const char *path, uint64_t offset)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = retprobe, .bpf_cookie = kind_cookie(a));
	struct bpf_link *l = bpf_program__attach_uprobe_opts(prog, a->pid, path, offset, &opts);
	int err;

	if (!l)
		return -errno;
	err = push_link_to(&a->links, &a->n_links, &a->cap_links, l);
	if (err)
		bpf_link__destroy(l);
	else
		a->n_probes++;
	return err;
}

/*
 * BPF_LINK_CREATE of a uprobe_multi link as the kernel lays out union bpf_attr (Linux 6.6):
 * the installed UAPI header may predate it.
 */
struct uprobe_multi_attr {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, multi_flags, pid, pad;
};

/* One uprobe_multi link of prog on path at offsets (cookies beside them); its fd or -errno. */
static int link_multi(struct bpf_program *prog, const char *path, const uint64_t *offsets,
		      const uint64_t *cookies, uint32_t cnt, bool ret_probe, int pid)
{
	struct uprobe_multi_attr a = {
		.prog_fd = bpf_program__fd(prog),
		.attach_type = LT_TRACE_UPROBE_MULTI,
		.path = (uint64_t)(uintptr_t)path,
		.offsets = (uint64_t)(uintptr_t)offsets,
		.cookies = (uint64_t)(uintptr_t)cookies,
		.cnt = cnt,
		.multi_flags = ret_probe ? LT_F_UPROBE_MULTI_RETURN : 0,
		.pid = pid > 0 ? pid : 0,
	};
	long fd = syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));

	return fd < 0 ? -errno : (int)fd;
}

/* Where each probe of an allocator object goes, and which function it is. */
struct probe_set {
	uint64_t entry_at[PROBE_MAX_FNS], entry_fn[PROBE_MAX_FNS];	/* offset, its shape */
	uint64_t return_at[PROBE_MAX_FNS];
	int entry_of[PROBE_MAX_FNS];		/* probe index -> the plan's fn[] index */
	uint32_t n_entry, n_return;
};

/*
 * The libc's probes as two links: the returns first, so that a call whose entry program ran
 * always has its return hijacked too and no thread is left "inside" a call that never
 * returns.  0 or -errno; nothing stays attached on failure.
 */
static int attach_multi(struct loader *ld, struct attached_libc *a, const struct probe_set *ps,
			const char *path)
{
	uint64_t entry_cookie[PROBE_MAX_FNS], return_cookie[PROBE_MAX_FNS];
	int ret_fd = -1, entry_fd;

	for (uint32_t i = 0; i < PROBE_MAX_FNS; i++) {
		entry_cookie[i] = (i < ps->n_entry ? ps->entry_fn[i] : 0) | kind_cookie(a);
		return_cookie[i] = kind_cookie(a);
	}
	if (ps->n_return) {
		ret_fd = link_multi(ld->skel->progs.alloc_return_multi, path, ps->return_at,
				    return_cookie, ps->n_return, true, a->pid);
		if (ret_fd < 0)
			return ret_fd;
	}
	entry_fd = link_multi(ld->skel->progs.alloc_enter_multi, path, ps->entry_at,
			      entry_cookie, ps->n_entry, false, a->pid);
	if (entry_fd < 0) {
		if (ret_fd >= 0)
			close(ret_fd);
		return entry_fd;
	}
	a->multi_fd[0] = entry_fd;
	a->multi_fd[1] = ret_fd;
	a->n_probes += ps->n_entry + ps->n_return;
	return 0;
}

/* The same probes as one perf event each (kernels before uprobe_multi; the bench's floors). */
static int attach_each(struct loader *ld, struct attached_libc *a, const struct probe_set *ps,
		       const struct probe_plan *plan, const char *path, const char *name, char *msg,
		       size_t msg_len)
{
	uint32_t r = 0;
	int err;

	for (uint32_t i = 0; i < ps->n_entry; i++) {
		const struct probe_fn_plan *f = &plan->fn[ps->entry_of[i]];

		err = 0;
		if (f->fn != LT_FN_FREE)
			err = attach_one(a, ld->cfg.probes == PROBES_ACCOUNTING ?
					 ld->skel->progs.alloc_return : ld->skel->progs.floor_return,
					 true, path, ps->return_at[r++]);
		if (!err)
			err = attach_one(a, entry_prog(ld, f->fn), false, path, ps->entry_at[i]);
		if (err) {
			msg__set(msg, msg_len, 0, "cannot attach a uprobe to %s in %s: %s%s%s",
				 f->name, name, strerror(-err),
				 err == -EMFILE || err == -ENFILE ? "; " : "", attach_fix(err, ""));
			return err;
		}
	}
	return 0;
}

/* Append fd to a's tree descriptors; 0 or -ENOMEM. */
static int push_tree_fd(struct attached_libc *a, int fd)
{
	if (VEC_RESERVE(a->tree_fds, a->cap_tree_fds, a->n_tree_fds + 1, 8))
		return -ENOMEM;
	a->tree_fds[a->n_tree_fds++] = fd;
	return 0;
}

static struct tree_libc *find_tree(struct loader *ld, uint64_t dev, uint64_t ino)
{
	for (size_t i = 0; i < ld->n_trees; i++)
		if (ld->trees[i].dev == dev && ld->trees[i].ino == ino)
			return &ld->trees[i];
	return NULL;
}

/* tracefs, reached once; a leaktop killed before us may have left definitions: removed. */
static int tree_tracefs(struct loader *ld)
{
	int err, removed;

	if (ld->tfs)
		return 0;
	if (ld->tfs_failed || ld->cfg.no_tracefs)
		return -ENOENT;
	err = tracefs__open(&ld->tfs);
	if (err) {
		ld->tfs_failed = true;
		return err;
	}
	removed = tracefs__remove_stale(ld->tfs);
	if (removed && ld->cfg.verbose)
		fprintf(stderr, "leaktop: removed %d uprobe event group(s) a killed leaktop left "
			"in tracefs\n", removed);
	return 0;
}

/*
 * Define the libc's probes in tracefs, with the programs attach_each() uses: the returns as
 * one event of several probes (they share a program, and the kernel waits for one grace
 * period per event when the last perf event on it closes: exit stays fast), attached first,
 * then one event per entry.  tl gets the event ids, progs the program of each.
 */
static int define_tree(struct loader *ld, const struct probe_set *ps, const struct probe_plan *plan,
		       const char *path, struct tree_libc *tl, struct bpf_program **progs)
{
	unsigned int set = ld->n_tree_defs++;
	char ev[64];
	int err;

	tl->n_ids = 0;
	tl->n_probes = ps->n_return + ps->n_entry;
	snprintf(ev, sizeof(ev), "r%u", set);
	for (uint32_t i = 0; i < ps->n_return; i++) {
		err = tracefs__define(ld->tfs, ev, true, path, ps->return_at[i], &tl->ids[0]);
		if (err)
			return err;
	}
	if (ps->n_return)
		progs[tl->n_ids++] = ld->cfg.probes == PROBES_ACCOUNTING ?
				     ld->skel->progs.alloc_return : ld->skel->progs.floor_return;
	for (uint32_t i = 0; i < ps->n_entry; i++) {
		const struct probe_fn_plan *f = &plan->fn[ps->entry_of[i]];

		/* Event names: letters, digits and '_' (mangled C++ names are). */
		snprintf(ev, sizeof(ev), "e%u_%.40s", set, f->name);
		err = tracefs__define(ld->tfs, ev, false, path, ps->entry_at[i], &tl->ids[tl->n_ids]);
		if (err)
			return err;
		progs[tl->n_ids++] = entry_prog(ld, f->fn);
	}
	return 0;
}

/*
 * The libc's probes on pid and every process it forks from now on: one inherited perf
 * event per probe, with no program.  The kernel runs the programs attached to an event for
 * hits through any perf event opened on it, so they are attached once per libc, through a
 * perf event of their own that is not inherited: a forked task's copy of an event that
 * carries a program takes that program off the event when the task exits (and with it the
 * only copy: nothing would run any more).  The first tree of a libc defines its events and
 * opens those carriers on its root; a further tree (a descendant that exec'd into this libc
 * elsewhere) only opens its inherited events, so nothing runs twice.  0 or -errno; on
 * failure the caller closes what this call opened (links and fds past its marks).
 */
static int attach_tree(struct loader *ld, struct attached_libc *a, const struct libc_ref *ref,
		       const struct probe_set *ps, const struct probe_plan *plan, int pid,
		       const char *path)
{
	struct bpf_program *progs[1 + PROBE_MAX_FNS];
	struct tree_libc *tl = find_tree(ld, ref->dev, ref->ino), fresh = { .dev = ref->dev };
	const struct tree_libc *use = tl ? tl : &fresh;
	int err;

	err = tree_tracefs(ld);
	if (err)
		return err;
	if (!tl) {
		fresh.ino = ref->ino;
		err = define_tree(ld, ps, plan, path, &fresh, progs);
		if (err)
			return err;
	}
	for (uint32_t i = 0; i < use->n_ids; i++) {
		struct bpf_link *l;
		int pfd;

		if (!tl) {
			pfd = tracefs__open_event(use->ids[i], pid, false, NULL);
			if (pfd < 0)
				return pfd;
			LIBBPF_OPTS(bpf_perf_event_opts, po, .bpf_cookie = LT_COOKIE_PID);

			/* SET_BPF and ENABLE; the link owns pfd from here. */
			l = bpf_program__attach_perf_event_opts(progs[i], pfd, &po);
			if (!l) {
				err = -errno;
				close(pfd);
				return err;
			}
			err = push_link_to(&a->links, &a->n_links, &a->cap_links, l);
			if (err) {
				bpf_link__destroy(l);
				return err;
			}
		}
		pfd = tracefs__open_event(use->ids[i], pid, true, &ld->tree_swappable);
		if (pfd < 0)
			return pfd;
		if (ld->tree_swappable && !ld->tree_swap_said && ld->cfg.verbose) {
			ld->tree_swap_said = true;
			fprintf(stderr, "leaktop: this kernel (before Linux 6.12) may swap the perf "
				"contexts of a traced process and its child: a descendant of the "
				"command may lose its probes when a child of its exits\n");
		}
		err = ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0) ? -errno : push_tree_fd(a, pfd);
		if (err) {
			close(pfd);
			return err;
		}
	}
	if (!tl) {
		if (VEC_RESERVE(ld->trees, ld->cap_trees, ld->n_trees + 1, 4))
			return -ENOMEM;
		ld->trees[ld->n_trees++] = fresh;
	}
	a->n_probes += use->n_probes;
	return 0;
}

static int attach_libc(struct loader *ld, const struct libc_ref *ref, int pid, bool tree,
		       char *msg, size_t msg_len)
{
	char name[PATH_MAX + 16], path[32];
	struct probe_plan plan;
	struct probe_set ps = { .n_entry = 0 };
	struct attached_libc a = { .dev = ref->dev, .ino = ref->ino, .pid = pid, .tree = tree,
				   .multi_fd = { -1, -1 } };
	int err, fd = -1;

	/*
	 * Already probed for pid (or every process: pid -1).  A process's own probes go on
	 * while the system-wide ones are still there when heap tracing switches (see
	 * loader__heap_switch_begin): only its own count here.
	 */
	if (has_own_libc(ld, ref->dev, ref->ino, pid))
		return 0;
	libcs__name(ref, name, sizeof(name));
	/* Room for the record first: nothing to undo once the probes are on. */
	if (VEC_RESERVE(ld->libcs, ld->cap_libcs, ld->n_libcs + 1, 8)) {
		msg__set(msg, msg_len, 0, "out of memory attaching to %s", name);
		return -ENOMEM;
	}
	/*
	 * One descriptor of the very file the process maps: decoded, and attached by the
	 * kernel resolving /proc/self/fd/N to that inode (the uprobes then hold it).
	 */
	err = libcs__open(ref, &fd, msg, msg_len);
	if (err) {
		ld->libcs_refused += err == -ESTALE;
		goto out;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	err = probe_plan__build(fd, &plan);
	if (err) {
		msg__set(msg, msg_len, 0, "cannot find the allocator in %s: %s", name, strerror(-err));
		goto out;
	}
	if (ld->cfg.verbose)
		fprintf(stderr, "leaktop: %s: a %s allocator\n", name, plan.kind);
	for (unsigned int i = 0; i < plan.n_fn; i++) {
		const struct probe_fn_plan *p = &plan.fn[i];
		uint64_t at = p->probe_offset;

		if (!p->found || p->alias_of >= 0)
			continue;
		if (ld->cfg.probes == PROBES_FLOOR_ENTRY)
			at = p->entry_offset;
		if (ld->cfg.verbose)
			fprintf(stderr, "leaktop: %s: %s at +0x%llx (entry +0x%llx)%s%s%s\n",
				name, p->name, (unsigned long long)at,
				(unsigned long long)p->entry_offset,
				at == p->probe_offset && p->entry_emulated ? " emulated" : "",
				at == p->probe_offset ? ": " : "",
				at == p->probe_offset ? p->insn : "");
		ps.entry_of[ps.n_entry] = (int)i;
		ps.entry_fn[ps.n_entry] = p->fn;
		ps.entry_at[ps.n_entry++] = at;
		if (p->fn != LT_FN_FREE)
			ps.return_at[ps.n_return++] = p->entry_offset;
	}
	if (tree) {
		err = attach_tree(ld, &a, ref, &ps, &plan, pid, path);
		if (!err)
			goto attached;
		detach_one(&a);
		a.n_probes = 0;
		if (err == -ENOMEM) {
			msg__set(msg, msg_len, 0, "out of memory attaching to %s", name);
			goto out;
		}
		/* A process gone before its probes went on needs none, least of all everyone's. */
		if (err == -ESRCH) {
			msg__set(msg, msg_len, 0, "process %d ended before its probes went on", pid);
			goto out;
		}
		if (ld->cfg.verbose && !ld->tree_fell_back)
			fprintf(stderr, "leaktop: cannot attach the probes to the command's "
				"processes only (tracefs uprobe events: %s): attaching them to "
				"every process that maps %s\n", strerror(-err), name);
		ld->tree_fell_back = true;
		a.tree = tree = false;
		a.pid = pid = -1;
		if (loader__has_libc(ld, ref->dev, ref->ino, -1)) {
			err = 0;
			goto out;
		}
	}
	err = -EOPNOTSUPP;
	if (ld->multi) {
		err = attach_multi(ld, &a, &ps, path);
		/* A kernel before uprobe_multi (or without it): perf events from now on. */
		if (err == -EINVAL || err == -EOPNOTSUPP || err == -ENOSYS) {
			if (ld->cfg.verbose)
				fprintf(stderr, "leaktop: no uprobe_multi links here (%s): one perf "
					"event per probe\n", strerror(-err));
			if (!ld->multi_worked)
				ld->multi = false;
		}
	}
	if (err)
		err = attach_each(ld, &a, &ps, &plan, path, name, msg, msg_len);
	if (err)
		goto out;
	ld->multi_worked |= a.multi_fd[0] >= 0;
attached:
	ld->libcs[ld->n_libcs++] = a;
out:
	if (err) {
		detach_one(&a);
	}
	if (fd >= 0)
		close(fd);
	return err;
}

int loader__attach_libc(struct loader *ld, const struct libc_ref *ref, int pid, char *msg,
			size_t msg_len)
{
	return attach_libc(ld, ref, pid, false, msg, msg_len);
}

int loader__attach_libc_tree(struct loader *ld, const struct libc_ref *ref, int pid, char *msg,
			     size_t msg_len)
{
	return attach_libc(ld, ref, pid, true, msg, msg_len);
}

const char *loader__heap_attach(const struct loader *ld)
{
	bool pid = false, tree = false;

	for (size_t i = 0; i < ld->n_libcs; i++) {
		if (ld->libcs[i].pid == -1)
			return "system";
		tree |= ld->libcs[i].tree;
		pid |= !ld->libcs[i].tree;
	}
	return tree ? "tree" : pid ? "pid" : NULL;
}

const char *loader__syscall_attach(const struct loader *ld, const char **why)
{
	if (why)
		*why = ld->syscall_attach && !strcmp(ld->syscall_attach, "raw") &&
		       ld->syscall_why[0] ? ld->syscall_why : NULL;
	return ld->syscall_attach;
}

size_t loader__libcs_refused(const struct loader *ld)
{
	return ld->libcs_refused;
}

size_t loader__probe_count(const struct loader *ld)
{
	size_t n = 0;

	for (size_t i = 0; i < ld->n_libcs; i++)
		n += ld->libcs[i].n_probes;
	return n;
}

bool loader__probes_follow_thread_group(const struct loader *ld)
{
	for (size_t i = 0; i < ld->n_libcs; i++)
		if (ld->libcs[i].n_links)
			return false;
	return true;
}

uint64_t loader__seed_proc(struct loader *ld, int tgid)
{
	struct lt_proc p = { .gen = ld->next_user_gen++, .start_ns = monotonic_ns() };
	uint32_t key = tgid;

	if (bpf_map_update_elem(ld->fds.procs, &key, &p, BPF_ANY))
		return 0;
	return p.gen;
}

int loader__arm_stop_at(struct loader *ld, const struct lt_stop_cfg *cfg)
{
	uint32_t zero = 0;

	return bpf_map_update_elem(bpf_map__fd(ld->skel->maps.stop_cfg), &zero, cfg, BPF_ANY) ?
	       -errno : 0;
}

void loader__disarm_stop_at(struct loader *ld)
{
	if (!ld || !ld->skel || !ld->skel->bss)
		return;
	__atomic_store_n(&ld->skel->bss->stop_disarmed, 1, __ATOMIC_SEQ_CST);
}

bool loader__stop_fired(struct loader *ld, struct lt_event *ev)
{
	struct lt_stop_cfg cfg;
	uint32_t zero = 0;

	if (!ld || !ld->skel || !ld->skel->bss ||
	    bpf_map_lookup_elem(bpf_map__fd(ld->skel->maps.stop_cfg), &zero, &cfg) || !cfg.fired)
		return false;
	/* BPF sets fired first, then where, then sends the signal: a reader racing it sees
	 * tgid 0 and asks again next turn (after the probes are detached, never). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	memset(ev, 0, sizeof(*ev));
	ev->type = LT_EV_STOP_AT;
	ev->tgid = ld->skel->bss->stop_tgid;
	ev->stop = ld->skel->bss->stop_info;
	return ev->tgid != 0;
}

void loader__detach_allocators(struct loader *ld)
{
	if (ld)
		detach_libcs(ld, any_libc, 0);
}

void loader__set_stop_flag(struct loader *ld, const volatile sig_atomic_t *stop)
{
	ld->stop = stop;
}

int loader__poll(struct loader *ld, int timeout_ms)
{
	int ret;

	if (!ld->rb) {
		if (timeout_ms > 0)
			usleep(timeout_ms * 1000);
		return 0;
	}
	/* Delivering events is bounded like waiting for them (at least 1 ms of work). */
	ld->poll_deadline_ns = monotonic_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 1) * 1000000;
	ld->poll_cut = false;
	ret = ring_buffer__poll(ld->rb, timeout_ms);
	if (ret == -EAGAIN && ld->poll_cut)
		return 1;
	return ret;
}

int loader__drain(struct loader *ld, const struct work_budget *b)
{
	struct work_budget brief = { .deadline_ns = monotonic_ns() + DRAIN_DEFAULT_NS };
	int ret;

	ld->poll_cut = false;
	if (!ld->rb)
		return 0;
	/* A producer that never pauses must not hold the caller: some bound always applies. */
	if (b && (b->deadline_ns || b->stop))
		brief = *b;
	ld->drain = &brief;
	ret = ring_buffer__consume(ld->rb);
	ld->drain = NULL;
	if (ret == -EAGAIN && ld->poll_cut)
		return 1;
	return ret;
}

bool loader__events_pending(const struct loader *ld)
{
	return ld->poll_cut;
}

const char *loader__oom_problem(const struct loader *ld)
{
	return ld->oom_msg[0] ? ld->oom_msg : NULL;
}

#ifndef PIDFD_THREAD
#define PIDFD_THREAD	O_EXCL		/* Linux 6.9: a pidfd of the thread, not its process */
#endif

int loader__thread_call(const struct loader *ld, int tid, uint64_t *entry_sp, uint64_t *entry_ra)
{
	struct lt_inflight in;
	int fd, err = 0;

	fd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
	if (fd < 0)
		return -errno;
	if (bpf_map_lookup_elem(bpf_map__fd(ld->skel->maps.inflight), &fd, &in))
		err = -errno;
	else if (!in.active || !in.entry_sp)
		err = -ENOENT;
	close(fd);
	if (err)
		return err;
	*entry_sp = in.entry_sp;
	*entry_ra = in.entry_ra;
	return 0;
}

const struct lt_map_fds *loader__maps(const struct loader *ld)
{
	return &ld->fds;
}

unsigned int loader__stack_depth(const struct loader *ld)
{
	return ld->cfg.stack_depth;
}

void loader__set_calibration_tgid(struct loader *ld, int tgid)
{
	ld->skel->bss->calib_tgid = tgid > 0 ? tgid : 0;
}

int loader__count_run_time(struct loader *ld)
{
	int fd;

	if (ld->stats_fd >= 0)
		return 0;
	/* Counted while this descriptor is open: nothing stays switched on after leaktop. */
	fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (fd < 0)
		return -errno;
	ld->stats_fd = fd;
	return 0;
}

int loader__heap_run_time(struct loader *ld, uint64_t *run_ns, uint64_t *run_cnt)
{
	struct leaktop_bpf *s = ld->skel;
	struct bpf_program *progs[] = {
		s->progs.malloc_enter, s->progs.calloc_enter, s->progs.realloc_enter,
		s->progs.reallocarray_enter, s->progs.posix_memalign_enter,
		s->progs.aligned_alloc_enter, s->progs.memalign_enter, s->progs.valloc_enter,
		s->progs.pvalloc_enter, s->progs.alloc_return, s->progs.free_enter,
		s->progs.alloc_enter_multi, s->progs.alloc_return_multi,
	};

	*run_ns = *run_cnt = 0;
	if (ld->stats_fd < 0)
		return -ENODATA;
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct bpf_prog_info info = {};
		uint32_t len = sizeof(info);
		int fd = bpf_program__fd(progs[i]);

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		*run_ns += info.run_time_ns;
		*run_cnt += info.run_cnt;
	}
	return 0;
}

/* ---------------------------------------------------------------- leaktop lastref */

static int handle_watch_event(void *ctx, void *data, size_t size)
{
	struct loader *ld = ctx;

	if (size >= sizeof(struct lt_watch_event) && ld->watch_fn)
		ld->watch_fn(ld->watch_ctx, data);
	return 0;
}

int loader__watch_begin(struct loader *ld, int tgid, loader_watch_fn fn, void *ctx)
{
	int err;

	if (!ld->rb)
		return -EOPNOTSUPP;
	ld->watch_fn = fn;
	ld->watch_ctx = ctx;
	err = ring_buffer__add(ld->rb, bpf_map__fd(ld->skel->maps.watch_events),
			       handle_watch_event, ld);
	if (err)
		return err;
	ld->skel->bss->watch_tgid = tgid;
	return 0;
}

uint64_t loader__watch_lost(const struct loader *ld)
{
	return __atomic_load_n(&ld->skel->bss->watch_lost, __ATOMIC_RELAXED);
}

int loader__watch_prog_fd(const struct loader *ld)
{
	return bpf_program__fd(ld->skel->progs.lt_watch);
}

int loader__watch_slot(struct loader *ld, uint64_t addr, const struct lt_watch_slot *slot)
{
	int fd = bpf_map__fd(ld->skel->maps.watch_slots);

	if (!slot)
		return bpf_map_delete_elem(fd, &addr) && errno != ENOENT ? -errno : 0;
	return bpf_map_update_elem(fd, &addr, slot, BPF_ANY) ? -errno : 0;
}

int loader__watch_free(struct loader *ld, uint64_t addr, bool on)
{
	int fd = bpf_map__fd(ld->skel->maps.watch_frees);
	uint32_t one = 1;

	if (!on)
		return bpf_map_delete_elem(fd, &addr) && errno != ENOENT ? -errno : 0;
	return bpf_map_update_elem(fd, &addr, &one, BPF_ANY) ? -errno : 0;
}
