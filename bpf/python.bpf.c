// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * python.bpf.c - the Python frames of an allocating thread (CPython 3.11), read from the
 * interpreter's own structures: the thread state holding the GIL (the one the allocator runs
 * for), its current _PyInterpreterFrame, and the chain of frames before it.  Each frame is
 * one word of the stack (its code object and instruction offset, bpf/leaktop.h); the code
 * object's names and line table are copied once to py_codes for the symbolizer.
 *
 * Only processes userspace listed in py_procs are walked (user/live/pyproc.c found their
 * interpreter and its layout).  Everything read is the traced process's memory and may be
 * anything: every read is a bounded probe read, a frame whose read fails or whose code
 * object is implausible ends the walk (counted), and the walk takes LT_PY_MAX_FRAMES frames
 * at most, so a process that scribbles on its frames gets fewer or wrong Python frames,
 * never more work.
 *
 * Global functions, linked with the programs that call them: the verifier checks each once.
 */
#include "common.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LT_MAX_PY_PROCS);
	__type(key, __u32);
	__type(value, struct lt_py_proc);
} py_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LT_MAX_PY_CODES);
	__type(key, struct lt_py_code_key);
	__type(value, struct lt_py_code);
} py_codes SEC(".maps");

/* A walk's state, per CPU (as uw_scratch in stack.bpf.c: the verifier does not track it). */
struct py_walk {
	struct lt_py_proc cfg;
	__u64 ips[LT_PY_MAX_FRAMES];
	__u64 frame;			/* the next _PyInterpreterFrame to read */
	__u32 n, max, tgid, pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_walk);
} py_walk_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lt_py_code);
} py_code_scratch SEC(".maps");

static __always_inline void py_count(__u32 idx, __u64 v)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &idx);

	if (c && v)
		*c += v;
}

static __always_inline int read_u64(__u64 *v, __u64 addr)
{
	*v = 0;
	return bpf_probe_read_user(v, sizeof(*v), (void *)addr);
}

/*
 * The characters of the str object at obj into buf (LT_PY_STR_LEN bytes; the last ones when
 * `tail` and longer): bytes copied, 0 when it is no compact string or unreadable.
 */
static __always_inline __u16 py_str(const struct lt_py_proc *c, __u64 obj, char *buf,
				    __u8 *kind_out, __u8 *ascii_out, bool tail)
{
	__u64 len = 0, n, from = 0, data;
	__u32 state = 0, kind;

	*kind_out = 0;
	*ascii_out = 0;
	if (!obj || read_u64(&len, obj + c->str_length) ||
	    bpf_probe_read_user(&state, sizeof(state), (void *)(obj + c->str_state)))
		return 0;
	kind = (state >> 2) & 7;
	if (!((state >> 5) & 1) || (kind != 1 && kind != 2 && kind != 4) || len > (1u << 20))
		return 0;
	data = obj + (((state >> 6) & 1) ? c->str_ascii_data : c->str_compact_data);
	n = len * kind;
	if (n > LT_PY_STR_LEN) {
		if (tail)
			from = n - LT_PY_STR_LEN;
		n = LT_PY_STR_LEN;
	}
	if (bpf_probe_read_user(buf, n, (void *)(data + from)))
		return 0;
	*kind_out = kind;
	*ascii_out = (state >> 6) & 1;
	return n;
}

/*
 * Copy code object `code` of the walking process to py_codes, unless there already (and
 * copied from the same name, file name and line table objects).  Returns 0.
 */
__noinline int lt_py_note_code(__u64 code)
{
	__u32 zero = 0;
	struct py_walk *s = bpf_map_lookup_elem(&py_walk_scratch, &zero);
	struct lt_py_code *v = bpf_map_lookup_elem(&py_code_scratch, &zero);
	struct lt_py_code_key key = { .code = code };
	struct lt_py_code *e;
	struct lt_py_proc *c;
	__u64 q, f, lt, size = 0;
	__s32 first = 0;

	if (!s || !v)
		return 0;
	c = &s->cfg;
	key.tgid = s->tgid;
	if (read_u64(&q, code + c->code_qualname) || read_u64(&f, code + c->code_filename) ||
	    read_u64(&lt, code + c->code_linetable) ||
	    bpf_probe_read_user(&first, sizeof(first), (void *)(code + c->code_firstlineno))) {
		py_count(LT_CNT_PY_CODE_FAILED, 1);
		return 0;
	}
	e = bpf_map_lookup_elem(&py_codes, &key);
	if (e && e->qualname_ptr == q && e->filename_ptr == f && e->linetable_ptr == lt &&
	    e->firstlineno == first)
		return 0;
	v->qualname_ptr = q;
	v->filename_ptr = f;
	v->linetable_ptr = lt;
	v->firstlineno = first;
	v->qualname_len = py_str(c, q, v->qualname, &v->qualname_kind, &v->qualname_ascii, false);
	v->filename_len = py_str(c, f, v->filename, &v->filename_kind, &v->filename_ascii, true);
	v->linetable_len = 0;
	v->linetable_size = 0;
	if (lt && !read_u64(&size, lt + c->bytes_size) && size <= (1u << 24)) {
		__u64 n = size > LT_PY_LINETABLE_LEN ? LT_PY_LINETABLE_LEN : size;

		if (!bpf_probe_read_user(v->linetable, n, (void *)(lt + c->bytes_data))) {
			v->linetable_len = n;
			v->linetable_size = size;
		}
	}
	bpf_map_update_elem(&py_codes, &key, v, BPF_ANY);
	py_count(LT_CNT_PY_CODES, 1);
	return 0;
}

/* bpf_loop callback: one Python frame.  0: go on; 1: the walk is over. */
static long py_step(__u32 idx, void *unused)
{
	__u32 zero = 0, n;
	struct py_walk *s = bpf_map_lookup_elem(&py_walk_scratch, &zero);
	__u64 frame, code, prev, instr, start, lasti = 0;
	__u8 entry = 0;

	if (!s)
		return 1;
	frame = s->frame;
	n = s->n;
	if (!frame || n >= s->max || n >= LT_PY_MAX_FRAMES)
		return 1;
	if ((frame & 7) || read_u64(&code, frame + s->cfg.frame_code) ||
	    read_u64(&prev, frame + s->cfg.frame_previous) ||
	    read_u64(&instr, frame + s->cfg.frame_prev_instr) ||
	    bpf_probe_read_user(&entry, 1, (void *)(frame + s->cfg.frame_is_entry)) ||
	    !code || (code & 7) || code > LT_PY_ADDR_MASK) {
		py_count(LT_CNT_PY_READ_FAILED, 1);
		return 1;
	}
	start = code + s->cfg.code_adaptive;
	if (instr >= start)
		lasti = (instr - start) / 2;
	if (lasti > LT_PY_LASTI_MAX)
		lasti = LT_PY_LASTI_MAX;
	s->ips[n] = LT_PY_FRAME_TAG | (entry ? LT_PY_FRAME_ENTRY : 0) |
		    (lasti << LT_PY_LASTI_SHIFT) | code;
	s->n = n + 1;
	s->frame = prev == frame ? 0 : prev;
	lt_py_note_code(code);
	return 0;
}

__noinline __u32 lt_py_walk(__u32 max)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), tstate = 0, tid = 0, cframe = 0, frame = 0;
	__u32 tgid = pid_tgid >> 32, zero = 0;
	struct py_walk *s = bpf_map_lookup_elem(&py_walk_scratch, &zero);
	struct lt_py_proc *py = bpf_map_lookup_elem(&py_procs, &tgid);
	struct lt_proc *p;

	if (!py || !s)
		return 0;
	s->n = 0;
	p = bpf_map_lookup_elem(&procs, &tgid);
	if (!p || p->gen != py->gen)
		return 0;
	s->cfg = *py;
	/* The thread state holding the GIL: this thread's, or no Python frames are its. */
	if (read_u64(&tstate, py->tstate_addr) || !tstate ||
	    read_u64(&tid, tstate + py->ts_native_tid) || tid != (__u32)pid_tgid) {
		py_count(LT_CNT_PY_NOT_HOLDER, 1);
		return 0;
	}
	if (read_u64(&cframe, tstate + py->ts_cframe) || !cframe ||
	    read_u64(&frame, cframe + py->cframe_frame)) {
		py_count(LT_CNT_PY_READ_FAILED, 1);
		return 0;
	}
	s->frame = frame;
	s->tgid = tgid;
	s->max = max < LT_PY_MAX_FRAMES ? max : LT_PY_MAX_FRAMES;
	bpf_loop(LT_PY_MAX_FRAMES, py_step, NULL, 0);
	py_count(LT_CNT_PY_FRAMES, s->n);
	return s->n;
}

__noinline int lt_py_append(__u32 npy)
{
	__u32 zero = 0, nr, i;
	struct py_walk *s = bpf_map_lookup_elem(&py_walk_scratch, &zero);
	struct lt_stack *st = stack_buf();

	if (!s || !st)
		return 0;
	nr = st->nr;
	if (nr >= LT_MAX_STACK_DEPTH)
		return 0;
	for (i = 0; i < LT_PY_MAX_FRAMES; i++) {
		__u32 j = nr + i;

		if (i >= npy || i >= s->n || j >= LT_MAX_STACK_DEPTH)
			break;
		st->ips[j] = s->ips[i];
	}
	st->nr = nr + i;
	return 0;
}
