// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * exitcheck.c - one traced process held at its exit, as `leaktop check` reports it: the
 * reachability scan of its tracked blocks (live/scanner.c, the same as --scan-every), the
 * descriptors of /proc/PID/fd that BPF saw it create (the `fds` map: inherited ones and
 * 0, 1, 2 have no record there), the anonymous mappings of the `mmaps` map, grouped by
 * allocation site and symbolized while the process is still there to be read.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "bpf/leaktop.h"
#include "live/agent_channel.h"
#include "live/collector.h"
#include "live/exitcheck.h"
#include "live/procfs.h"
#include "live/pystack.h"
#include "live/scanner.h"
#include "live/symbolize.h"
#include "util/escape.h"

struct fetch_ctx {
	struct collector *col;
	struct agent_channels *agent;	/* --agent: the channel's blocks */
	uint64_t agent_bad;		/* its blocks left out (an inconsistent slot) */
	int pid;
	uint64_t gen;			/* the held image's (0: unknown, then the newest record's) */
};

/*
 * The blocks of the image held at its exit, read while it is stopped.  Its generation comes
 * from `procs`: the records of an image that exec'd away stay in `allocs` (purged later),
 * and when the held image has freed every block, the newest record's generation would be
 * the previous image's, whose blocks would all be scanned as lost.
 */
static int fetch_blocks(void *ctx, struct scan_block **blocks, size_t *n)
{
	struct fetch_ctx *f = ctx;
	struct raw_alloc *raw = NULL;
	struct scan_block *b;
	size_t nr = 0, k = 0;
	bool known = f->gen;
	int err;

	/* A block record the agent's table does not hold together: the table is not trusted. */
	if (f->agent) {
		err = agent_channels__blocks(f->agent, f->col, (uint32_t)f->pid, blocks, n,
					     &f->agent_bad);
		if (!err && f->agent_bad) {
			free(*blocks);
			*blocks = NULL;
			err = -EBADMSG;
		}
		return err;
	}
	err = collector__read_allocs(f->col, f->pid, 0, &raw, &nr);
	if (err)
		return err;
	for (size_t i = 0; !known && i < nr; i++)
		if (raw[i].val.gen > f->gen)
			f->gen = raw[i].val.gen;
	b = malloc((nr + 1) * sizeof(*b));
	if (!b) {
		free(raw);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nr; i++)
		if (raw[i].val.gen == f->gen)
			b[k++] = (struct scan_block){ raw[i].key.addr, raw[i].val.size_bytes,
						      raw[i].val.stack_hash, raw[i].val.seq };
	free(raw);
	*blocks = b;
	*n = k;
	return 0;
}

/* The finding of (kind, stack_hash) in p, added if new; NULL: out of memory. */
static struct check_finding *finding_of(struct check_proc *p, enum check_kind kind,
					uint64_t hash)
{
	struct check_finding *v;

	for (size_t i = 0; i < p->n_findings; i++)
		if (p->findings[i].kind == kind && p->findings[i].stack_hash == hash)
			return &p->findings[i];
	v = realloc(p->findings, (p->n_findings + 1) * sizeof(*v));
	if (!v)
		return NULL;
	p->findings = v;
	memset(&v[p->n_findings], 0, sizeof(v[p->n_findings]));
	v[p->n_findings].kind = kind;
	v[p->n_findings].stack_hash = hash;
	return &v[p->n_findings++];
}

static int add_heap(struct check_proc *p, const struct scan_result *res)
{
	static const struct {
		enum scan_class cls;
		enum check_kind kind;
	} kinds[] = {
		{ SCAN_DEFINITE, CHECK_DEFINITE },
		{ SCAN_INDIRECT, CHECK_INDIRECT },
		{ SCAN_POSSIBLE, CHECK_POSSIBLE },
	};

	for (size_t i = 0; i < res->n_sites; i++) {
		const struct scan_site *s = &res->sites[i];

		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
			struct check_finding *f;

			if (!s->count[kinds[k].cls])
				continue;
			f = finding_of(p, kinds[k].kind, s->stack_hash);
			if (!f)
				return -ENOMEM;
			f->objects += s->count[kinds[k].cls];
			f->bytes += s->bytes[kinds[k].cls];
		}
	}
	return 0;
}

static bool own_fd(const int *own, size_t n, long fd)
{
	for (size_t i = 0; i < n; i++)
		if (own[i] == fd)
			return true;
	return false;
}

/* Descriptors open now that BPF saw this image create (not the agent's own). */
static int add_fds(const struct exitcheck_env *env, struct check_proc *p, uint64_t *gen)
{
	char dir_path[64], link[96], target[256], shown[160];
	int own[LT_AGENT_OWN_FDS], err = 0;
	size_t n_own = env->agent ? agent_channels__own_fds(env->agent, (uint32_t)p->pid, own,
							    LT_AGENT_OWN_FDS) : 0;
	struct dirent *de;
	DIR *d;

	snprintf(dir_path, sizeof(dir_path), "/proc/%d/fd", p->pid);
	d = opendir(dir_path);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		struct lt_fd_key key = { .tgid = p->pid };
		struct lt_fd_val val;
		struct check_finding *f;
		char *end;
		long fd = strtol(de->d_name, &end, 10);
		ssize_t n;

		if (*end || end == de->d_name || fd <= 2 || own_fd(own, n_own, fd))
			continue;
		key.fd = (int32_t)fd;
		if (bpf_map_lookup_elem(env->fds_map, &key, &val))
			continue;
		if (*gen && val.gen != *gen)
			continue;
		*gen = val.gen;
		f = finding_of(p, CHECK_FD, val.stack_hash);
		if (!f) {
			err = -ENOMEM;
			break;
		}
		f->objects++;
		if (f->what[0])
			continue;
		snprintf(link, sizeof(link), "%s/%ld", dir_path, fd);
		n = readlink(link, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
		snprintf(f->what, sizeof(f->what), "fd %ld -> %s", fd,
			 escape__str(shown, sizeof(shown), target));
	}
	closedir(d);
	return err;
}

/* Anonymous mappings (and brk growth) of this image that BPF recorded and are still there. */
static int add_mmaps(const struct exitcheck_env *env, struct check_proc *p, uint64_t *gen)
{
	struct lt_mmap_key key, next;
	struct lt_mmap_val val;
	void *prev = NULL;
	unsigned int guard = 0;

	while (guard++ < 2 * LT_MAX_MMAPS && !bpf_map_get_next_key(env->mmaps_map, prev, &next)) {
		struct check_finding *f;

		key = next;
		prev = &key;
		if (next.tgid != (uint32_t)p->pid || bpf_map_lookup_elem(env->mmaps_map, &next, &val))
			continue;
		if (*gen && val.gen != *gen)
			continue;
		f = finding_of(p, CHECK_MMAP, val.stack_hash);
		if (!f)
			return -ENOMEM;
		f->objects++;
		f->bytes += val.len;
		if (!f->what[0])
			snprintf(f->what, sizeof(f->what), "0x%" PRIx64 "-0x%" PRIx64, (uint64_t)next.start,
				 (uint64_t)(next.start + val.len));
	}
	return 0;
}

static int symbolize(const struct exitcheck_env *env, struct check_proc *p, uint64_t gen)
{
	uint64_t ips[LT_MAX_STACK_DEPTH];
	uint32_t n_native;

	if (gen)
		symbolizer__add_image(env->sym, gen, p->pid);
	for (size_t i = 0; i < p->n_findings; i++) {
		struct check_finding *f = &p->findings[i];
		uint32_t n = collector__stack(env->col, f->stack_hash, ips, NULL,
					      LT_MAX_STACK_DEPTH);

		if (!n)
			continue;
		n_native = pystack__n_native(ips, n);
		f->frames = calloc(n, sizeof(*f->frames));
		if (!f->frames)
			return -ENOMEM;
		f->n_frames = n_native;
		for (uint32_t k = 0; k < n_native; k++)
			symbolizer__resolve(env->sym, gen, ips[k], true, &f->frames[k]);
		if (n_native < n && pystack__merge(env->col, p->pid, ips, n_native, n, &f->frames))
			return -ENOMEM;
		f->n_frames = n;
	}
	return 0;
}

int exitcheck__process(const struct exitcheck_env *env, int pid, struct check_proc *out)
{
	struct fetch_ctx fc = { .col = env->col, .pid = pid, .agent = env->agent };
	struct scan_file chan = { 0 };
	size_t n_skip = 0;
	struct lt_proc proc;
	struct scan_result res;
	char comm[64];
	uint64_t gen;
	int err;

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	if (!procfs__comm(pid, comm, sizeof(comm)))
		escape__str(out->comm, sizeof(out->comm), comm);
	procfs__ppid(pid, &out->ppid);
	if (env->procs_map >= 0 && !bpf_map_lookup_elem(env->procs_map, &(uint32_t){ (uint32_t)pid },
							&proc))
		fc.gen = proc.gen;
	/* The agent's channel holds the address of every block: never a root. */
	if (env->agent && !agent_channels__file(env->agent, env->col, (uint32_t)pid, &chan.dev,
							 &chan.ino))
		n_skip = 1;
	err = scan__process_live_skip(pid, env->max_stop_ms, fetch_blocks, &fc, &chan, n_skip, &res,
				      out->scan_msg, sizeof(out->scan_msg));
	if (!err) {
		out->scanned = true;
		out->stop_ms = res.stop_ms;
		err = add_heap(out, &res);
		scan_result__free(&res);
		if (err)
			return err;
	} else if (fc.agent && err == -ENOENT) {
		snprintf(out->scan_msg, sizeof(out->scan_msg), "the agent did not start in it (a "
			 "static or setuid program?): run leaktop check without --agent");
	} else if (fc.agent && err == -EBADMSG) {
		snprintf(out->scan_msg, sizeof(out->scan_msg), "%" PRIu64 " of the agent's block "
			 "records do not hold together (the process wrote over them)", fc.agent_bad);
	} else if (!out->scan_msg[0]) {
		snprintf(out->scan_msg, sizeof(out->scan_msg), "%s", strerror(-err));
	}
	gen = fc.gen;
	if (env->fds_map >= 0 && (err = add_fds(env, out, &gen)))
		return err;
	if (env->mmaps_map >= 0 && (err = add_mmaps(env, out, &gen)))
		return err;
	return symbolize(env, out, gen);
}
