// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * loader.c - owns the BPF skeleton: load with the run's settings, attach, detach.
 *
 * The only file that includes the skeleton.  Uprobes are attached through the kernel's
 * uprobe PMU (perf_event_open), never through tracefs, so every probe belongs to a file
 * descriptor of this process and disappears with it, whatever way leaktop ends; raw
 * tracepoints are attached by name, which needs no tracefs either.  libbpf's messages are
 * shown only with -v; failures come back as one line naming the cause and the fix.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "live/fdsys.h"
#include "live/libcs.h"
#include "live/loader.h"
#include "live/probes.h"
#include "leaktop.skel.h"
#include "util/clock.h"
#include "util/msg.h"

/* Userspace hands out image generations below this; BPF above it. */
#define BPF_GEN_BASE (1ULL << 40)

struct attached_libc {
	uint64_t dev, ino;
	int pid;
};

struct loader {
	struct leaktop_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link **links;
	size_t n_links, cap_links;
	struct attached_libc *libcs;
	size_t n_libcs, cap_libcs;
	struct lt_map_fds fds;
	struct loader_config cfg;
	loader_event_fn event_fn;
	void *event_ctx;
	uint64_t next_user_gen;
	size_t n_tracepoints;		/* links that are tracepoints, not uprobes */
	size_t libcs_refused;		/* libcs not probed: not the file their process maps */
	uint64_t poll_deadline_ns;	/* this poll delivers no event after it */
	const volatile sig_atomic_t *stop;	/* set: deliver no more events */
	bool poll_cut;			/* the last poll stopped with events left */
};

static bool verbose_libbpf;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!verbose_libbpf)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * libbpf consumes the ring for as long as producers keep it non-empty: on a busy machine that
 * is forever.  After each event, past the poll's deadline or once a stop was asked for, end
 * the poll; libbpf has already consumed this record and leaves the rest in the ring.
 */
static int handle_event(void *ctx, void *data, size_t size)
{
	struct loader *ld = ctx;

	if (size >= sizeof(struct lt_event) && ld->event_fn)
		ld->event_fn(ld->event_ctx, data);
	if ((ld->stop && *ld->stop) || now_ns() >= ld->poll_deadline_ns) {
		ld->poll_cut = true;
		return -EAGAIN;
	}
	return 0;
}

static int push_link(struct loader *ld, struct bpf_link *link)
{
	if (ld->n_links == ld->cap_links) {
		size_t cap = ld->cap_links ? ld->cap_links * 2 : 32;
		struct bpf_link **v = realloc(ld->links, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		ld->links = v;
		ld->cap_links = cap;
	}
	ld->links[ld->n_links++] = link;
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
	fdsys__fill_class_table((uint8_t *)ld->skel->rodata->cfg_fd_class, cfg->track_fd,
				cfg->track_mmap);
	err = bpf_map__set_value_size(ld->skel->maps.stacks, 8 + 8 * cfg->stack_depth);
	if (err)
		goto fail_load;
	/* Everything is attached by hand below; nothing autoloads it by section name. */
	bpf_object__for_each_program(prog, ld->skel->obj) {
		bool floor = !strncmp(bpf_program__name(prog), "floor_", 6);

		if ((cfg->probes == PROBES_ACCOUNTING) == floor)
			bpf_program__set_autoload(prog, false);
	}
	if (cfg->probes != PROBES_ACCOUNTING) {
		bpf_program__set_autoload(ld->skel->progs.lt_fork, false);
		bpf_program__set_autoload(ld->skel->progs.lt_exec, false);
		bpf_program__set_autoload(ld->skel->progs.lt_exit, false);
	}
	if (cfg->probes != PROBES_ACCOUNTING || !(cfg->track_fd || cfg->track_mmap)) {
		bpf_program__set_autoload(ld->skel->progs.lt_sys_enter, false);
		bpf_program__set_autoload(ld->skel->progs.lt_sys_exit, false);
	}
	if (cfg->probes == PROBES_ACCOUNTING || !(cfg->track_fd || cfg->track_mmap)) {
		bpf_program__set_autoload(ld->skel->progs.floor_sys_enter, false);
		bpf_program__set_autoload(ld->skel->progs.floor_sys_exit, false);
	}
	err = leaktop_bpf__load(ld->skel);
	if (err)
		goto fail_load;

	ld->fds.procs = bpf_map__fd(ld->skel->maps.procs);
	ld->fds.sites = bpf_map__fd(ld->skel->maps.sites);
	ld->fds.allocs = bpf_map__fd(ld->skel->maps.allocs);
	ld->fds.stacks = bpf_map__fd(ld->skel->maps.stacks);
	ld->fds.drops = bpf_map__fd(ld->skel->maps.drops);
	ld->fds.counters = bpf_map__fd(ld->skel->maps.counters);
	ld->fds.fds = bpf_map__fd(ld->skel->maps.fds);
	ld->fds.mmaps = bpf_map__fd(ld->skel->maps.mmaps);
	bpf_object__for_each_program(prog, ld->skel->obj) {
		if (bpf_program__fd(prog) >= 0 && ld->fds.n_progs < LT_MAX_PROGS)
			ld->fds.progs[ld->fds.n_progs++] = bpf_program__fd(prog);
	}
	err = bpf_map_update_elem(bpf_map__fd(ld->skel->maps.gen_counter), &zero, &base, BPF_ANY);
	if (err)
		goto fail_load;

	if (cfg->probes != PROBES_ACCOUNTING && (cfg->track_fd || cfg->track_mmap)) {
		/* The bench's floor: empty programs on the syscall tracepoints. */
		struct bpf_program *floors[] = { ld->skel->progs.floor_sys_enter,
						 ld->skel->progs.floor_sys_exit };

		for (size_t i = 0; i < 2; i++) {
			struct bpf_link *l = bpf_program__attach(floors[i]);

			if (!l) {
				err = -errno;
				msg__set(msg, msg_len, 0, "cannot attach %s: %s",
					 bpf_program__name(floors[i]), strerror(-err));
				goto fail;
			}
			err = push_link(ld, l);
			if (err)
				goto fail;
			ld->n_tracepoints++;
		}
	}
	if (cfg->probes == PROBES_ACCOUNTING) {
		struct bpf_program *tps[] = { ld->skel->progs.lt_fork, ld->skel->progs.lt_exec,
					      ld->skel->progs.lt_exit, ld->skel->progs.lt_sys_enter,
					      ld->skel->progs.lt_sys_exit };
		size_t n_tps = cfg->track_fd || cfg->track_mmap ? 5 : 3;

		for (size_t i = 0; i < n_tps; i++) {
			struct bpf_link *l = bpf_program__attach(tps[i]);

			if (!l) {
				err = -errno;
				msg__set(msg, msg_len, 0, "cannot attach the %s tracepoint: %s; "
					 "the kernel needs raw tracepoint support",
					 bpf_program__name(tps[i]), strerror(-err));
				goto fail;
			}
			err = push_link(ld, l);
			if (err)
				goto fail;
		}
		ld->n_tracepoints = n_tps;
		ld->rb = ring_buffer__new(bpf_map__fd(ld->skel->maps.events), handle_event, ld,
					  NULL);
		if (!ld->rb) {
			err = -errno;
			msg__set(msg, msg_len, 0, "cannot set up the event ring buffer: %s",
				 strerror(-err));
			goto fail;
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
	size_t n_links, stride, first;
};

static void *detach_some(void *arg)
{
	const struct detach_share *d = arg;

	for (size_t i = d->first; i < d->n_links; i += d->stride)
		bpf_link__destroy(d->links[i]);
	return NULL;
}

/*
 * Detach every link.  Closing a uprobe's perf event waits for an RCU grace period (about
 * 70 ms here), one after another that made Ctrl-C take over a second with 17 probes: the
 * links are closed from several threads at once, so the waits overlap.  Where a thread
 * cannot be started, its share is closed here.
 */
static void detach_all(struct bpf_link **links, size_t n_links)
{
	struct detach_share share[DETACH_THREADS];
	pthread_t tid[DETACH_THREADS];
	bool started[DETACH_THREADS] = { false };
	size_t n = n_links < DETACH_THREADS ? n_links : DETACH_THREADS;

	for (size_t k = 0; k < n; k++) {
		share[k] = (struct detach_share){ links, n_links, n, k };
		started[k] = k > 0 && !pthread_create(&tid[k], NULL, detach_some, &share[k]);
	}
	for (size_t k = 0; k < n; k++)
		if (!started[k])
			detach_some(&share[k]);
	for (size_t k = 0; k < n; k++)
		if (started[k])
			pthread_join(tid[k], NULL);
}

void loader__destroy(struct loader *ld)
{
	if (!ld)
		return;
	ring_buffer__free(ld->rb);
	detach_all(ld->links, ld->n_links);
	free(ld->links);
	free(ld->libcs);
	leaktop_bpf__destroy(ld->skel);
	free(ld);
}

bool loader__has_libc(struct loader *ld, uint64_t dev, uint64_t ino, int pid)
{
	for (size_t i = 0; i < ld->n_libcs; i++) {
		const struct attached_libc *a = &ld->libcs[i];

		if (a->dev == dev && a->ino == ino && (a->pid == -1 || a->pid == pid))
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

static int attach_one(struct loader *ld, struct bpf_program *prog, bool retprobe, int pid,
		      const char *path, uint64_t offset)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = retprobe);
	struct bpf_link *l = bpf_program__attach_uprobe_opts(prog, pid, path, offset, &opts);
	int err;

	if (!l)
		return -errno;
	err = push_link(ld, l);
	if (err)
		bpf_link__destroy(l);
	return err;
}

int loader__attach_libc(struct loader *ld, const struct libc_ref *ref, int pid, char *msg,
			size_t msg_len)
{
	char name[PATH_MAX + 16], path[32];
	struct probe_plan plan;
	size_t first_link = ld->n_links;
	int err, fd = -1;

	if (loader__has_libc(ld, ref->dev, ref->ino, pid))
		return 0;
	libcs__name(ref, name, sizeof(name));
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
	for (int fn = 0; fn < LT_FN__COUNT; fn++) {
		const struct probe_fn_plan *p = &plan.fn[fn];
		bool entry_only = fn == LT_FN_FREE;
		uint64_t at = p->probe_offset;

		if (!p->found || p->alias_of >= 0)
			continue;
		if (ld->cfg.probes == PROBES_FLOOR_ENTRY)
			at = p->entry_offset;
		if (ld->cfg.verbose)
			fprintf(stderr, "leaktop: %s: %s at +0x%llx (entry +0x%llx)%s%s%s\n", name,
				p->name, (unsigned long long)at,
				(unsigned long long)p->entry_offset,
				at == p->probe_offset && p->entry_emulated ? " emulated" : "",
				at == p->probe_offset ? ": " : "",
				at == p->probe_offset ? p->insn : "");
		/*
		 * Return probe first: a call whose entry program ran then always has its return
		 * hijacked too, so no thread is left "inside" a call that never returns.
		 */
		err = 0;
		if (!entry_only)
			err = attach_one(ld, ld->cfg.probes == PROBES_ACCOUNTING ?
					 ld->skel->progs.alloc_return : ld->skel->progs.floor_return,
					 true, pid, path, p->entry_offset);
		if (!err)
			err = attach_one(ld, entry_prog(ld, fn), false, pid, path, at);
		if (err) {
			msg__set(msg, msg_len, 0, "cannot attach a uprobe to %s in %s: %s", p->name,
				name, strerror(-err));
			goto out;
		}
	}
	if (ld->n_libcs == ld->cap_libcs) {
		size_t cap = ld->cap_libcs ? ld->cap_libcs * 2 : 8;
		struct attached_libc *v = realloc(ld->libcs, cap * sizeof(*v));

		if (!v) {
			err = -ENOMEM;
			msg__set(msg, msg_len, 0, "out of memory attaching to %s", name);
			goto out;
		}
		ld->libcs = v;
		ld->cap_libcs = cap;
	}
	ld->libcs[ld->n_libcs++] = (struct attached_libc){
		.dev = ref->dev, .ino = ref->ino, .pid = pid };
out:
	while (err && ld->n_links > first_link)
		bpf_link__destroy(ld->links[--ld->n_links]);
	if (fd >= 0)
		close(fd);
	return err;
}

size_t loader__libcs_refused(const struct loader *ld)
{
	return ld->libcs_refused;
}

size_t loader__probe_count(const struct loader *ld)
{
	return ld->n_links - ld->n_tracepoints;
}

uint64_t loader__seed_proc(struct loader *ld, int tgid)
{
	struct lt_proc p = { .gen = ld->next_user_gen++, .start_ns = monotonic_ns() };
	uint32_t key = tgid;

	if (bpf_map_update_elem(ld->fds.procs, &key, &p, BPF_ANY))
		return 0;
	return p.gen;
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
	ld->poll_deadline_ns = now_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 1) * 1000000;
	ld->poll_cut = false;
	ret = ring_buffer__poll(ld->rb, timeout_ms);
	if (ret == -EAGAIN && ld->poll_cut)
		return 1;
	return ret;
}

bool loader__events_pending(const struct loader *ld)
{
	return ld->poll_cut;
}

const struct lt_map_fds *loader__maps(const struct loader *ld)
{
	return &ld->fds;
}

unsigned int loader__stack_depth(const struct loader *ld)
{
	return ld->cfg.stack_depth;
}
