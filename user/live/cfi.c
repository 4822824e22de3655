// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * cfi.c - an object's .eh_frame as unwind rows for the BPF walker (bpf/stack.bpf.c).
 *
 * libdw interprets the CFI: for every pc an FDE covers, dwarf_cfi_addrframe() gives the row
 * in force there and the range it holds for, so the rows of the whole object are found by
 * stepping from each FDE's start (listed, sorted, by .eh_frame_hdr) to the end of the range
 * of the row before.  Each row is reduced to what an x86-64 unwinder needs and BPF can follow
 * cheaply: the CFA as %rsp or %rbp plus an offset, the ABI's PLT expression or glibc's signal
 * trampoline expression; the return address at CFA - 8 (or undefined: the outermost frame);
 * the caller's %rbp unchanged, saved at CFA + offset, or lost.  Any other rule becomes
 * LT_UW_NONE, where the walker tries the frame pointer instead.  Gaps between FDEs are
 * LT_UW_NONE rows too.  A row's pc is the file offset of its first byte (through the
 * PT_LOAD that maps it), which BPF computes from a mapping without knowing the load bias.
 *
 * The file is a traced process's.  One only root can change is mapped; any other is
 * copied into memory first (its owner may truncate it, and a mapping of it would then raise
 * SIGBUS here; and libelf's reading mode leaks on some crafted files), up to
 * CFI_MAX_COPY_BYTES.  libdw re-interprets an FDE from its start
 * for each row (no public call runs it once for all rows), so an FDE of R rows costs R^2:
 * a crafted one of 40,000 rows took seconds.  Hence the bounds: rows per FDE, the clock
 * read every few rows against the caller's deadline (the build goes on at its next step),
 * and the CPU time one object may take in all.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>

#include "live/cfi.h"
#include "util/clock.h"
#include "util/vec.h"

#define REG_RBP		6
#define REG_RSP		7
#define REG_RA		16
#define EH_PE_udata4	0x03
#define EH_PE_sdata4	0x0b
#define EH_PE_datarel	0x30
#define EH_PE_omit	0xff
#define ROWS_PER_CLOCK	16		/* rows between two readings of the clock */

struct seg {
	uint64_t vaddr, memsz, offset;
};

struct build {
	struct cfi_table *t;
	size_t cap;
	struct seg segs[16];
	size_t nsegs;
};

/* A table being built: the object's CFI and where the walk over its FDEs stands. */
struct cfi_build {
	struct build b;
	struct cfi_table t;
	Elf *elf;
	void *copy;			/* the file's bytes elf reads (NULL: mapped) */
	Dwarf_CFI *cfi;
	uint64_t *locs;			/* the FDEs' starts, sorted */
	size_t nlocs, next;		/* locs[next]: the next FDE to walk */
	uint64_t pc;			/* the walk's pc (vaddr) */
	size_t fde_rows;		/* rows of the current FDE so far */
	bool in_fde;			/* pc is inside an FDE's rows */
	bool any;			/* pc is set */
};

static bool fits_s16_8(int64_t off)
{
	return off % 8 == 0 && off / 8 >= INT16_MIN && off / 8 <= INT16_MAX;
}

static bool fits_s8_8(int64_t off)
{
	return off % 8 == 0 && off / 8 > LT_UW_RBP_LOST && off / 8 <= INT8_MAX && off != 0;
}

/* Is the register's rule "saved at CFA + off" ([call_frame_cfa, plus_uconst off])? */
static bool at_cfa(const Dwarf_Op *ops, size_t nops, int64_t *off)
{
	if (nops == 1 && ops[0].atom == DW_OP_call_frame_cfa) {
		*off = 0;
		return true;
	}
	if (nops == 2 && ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return true;
	}
	return false;
}

/* A breg of register reg ("reg + number")?  libdw spells a CFA rule DW_OP_bregx. */
static bool breg(const Dwarf_Op *op, unsigned int reg, int64_t *off)
{
	if (op->atom == DW_OP_bregx && op->number == reg) {
		*off = (int64_t)op->number2;
		return true;
	}
	if (op->atom == DW_OP_breg0 + reg) {
		*off = (int64_t)op->number;
		return true;
	}
	return false;
}

/*
 * The ABI's PLT CFA: rsp + N + ((rip & 15) >= T ? 8 : 0), spelled
 * breg7 N; breg16 0; lit15; and; litT; ge; lit3; shl; plus.  Sets *n, *t.
 */
static bool plt_cfa(const Dwarf_Op *ops, size_t nops, int64_t *n, unsigned int *t)
{
	int64_t rip_off;

	if (nops != 9 || !breg(&ops[0], REG_RSP, n) || !breg(&ops[1], REG_RA, &rip_off) ||
	    rip_off != 0 || ops[2].atom != DW_OP_lit15 || ops[3].atom != DW_OP_and ||
	    ops[4].atom < DW_OP_lit0 || ops[4].atom > DW_OP_lit15 || ops[5].atom != DW_OP_ge ||
	    ops[6].atom != DW_OP_lit3 || ops[7].atom != DW_OP_shl || ops[8].atom != DW_OP_plus)
		return false;
	*t = ops[4].atom - DW_OP_lit0;
	return true;
}

/*
 * Is the register's rule the expression "rsp + off" (saved there)?  libdw hands a
 * DW_CFA_expression over with the CFA pushed first, as DWARF evaluates it.
 */
static bool at_rsp(const Dwarf_Op *ops, size_t nops, int64_t *off)
{
	if (nops == 2 && ops[0].atom == DW_OP_call_frame_cfa)
		ops++, nops--;
	return nops == 1 && breg(&ops[0], REG_RSP, off);
}

/* The row for one libdw frame state. */
static struct lt_unwind_row row_of(Dwarf_Frame *fr)
{
	struct lt_unwind_row r = { .kind = LT_UW_NONE };
	Dwarf_Op mem[3], *ops, *rops;
	size_t nops, rn;
	int64_t cfa_off = 0, off;
	unsigned int t;
	bool signal = false;

	if (dwarf_frame_register(fr, REG_RA, mem, &rops, &rn))
		return r;
	if (rn == 0 && rops == mem) {
		r.kind = LT_UW_OUTERMOST;	/* DW_CFA_undefined rip: no caller */
		return r;
	}
	if (dwarf_frame_cfa(fr, &ops, &nops) || !nops)
		return r;
	if (nops == 1 && breg(&ops[0], REG_RSP, &cfa_off)) {
		r.kind = LT_UW_RSP;
	} else if (nops == 1 && breg(&ops[0], REG_RBP, &cfa_off)) {
		r.kind = LT_UW_RBP;
	} else if (plt_cfa(ops, nops, &cfa_off, &t)) {
		r.kind = LT_UW_PLT;
		r.rbp = (int8_t)t;
	} else if (nops == 2 && breg(&ops[0], REG_RSP, &cfa_off) && ops[1].atom == DW_OP_deref) {
		/* glibc's __restore_rt: the interrupted rsp, saved in the ucontext on the stack. */
		r.kind = LT_UW_SIGNAL;
		signal = true;
	} else {
		return r;
	}
	if (!fits_s16_8(cfa_off))
		goto unusable;
	r.cfa = (int16_t)(cfa_off / 8);
	/* The return address: at CFA - 8, or (signal) right after the saved rsp. */
	if (signal ? !(at_rsp(rops, rn, &off) && off == cfa_off + 8) :
		     !(at_cfa(rops, rn, &off) && off == -8))
		goto unusable;
	if (r.kind == LT_UW_PLT)
		return r;
	if (dwarf_frame_register(fr, REG_RBP, mem, &rops, &rn))
		goto unusable;
	if (signal) {
		if (!(at_rsp(rops, rn, &off) && fits_s8_8(off)))
			goto unusable;
		r.rbp = (int8_t)(off / 8);
	} else if (rn == 0 && !rops) {
		r.rbp = 0;			/* same value */
	} else if (at_cfa(rops, rn, &off) && fits_s8_8(off)) {
		r.rbp = (int8_t)(off / 8);
	} else {
		r.rbp = LT_UW_RBP_LOST;		/* undefined, or a rule BPF does not follow */
	}
	return r;
unusable:
	return (struct lt_unwind_row){ .kind = LT_UW_NONE };
}

/* The file offset of vaddr (in a PT_LOAD), or false. */
static bool offset_of(const struct build *b, uint64_t vaddr, uint64_t *off)
{
	for (size_t i = 0; i < b->nsegs; i++) {
		if (vaddr >= b->segs[i].vaddr && vaddr - b->segs[i].vaddr < b->segs[i].memsz) {
			*off = vaddr - b->segs[i].vaddr + b->segs[i].offset;
			return *off <= UINT32_MAX;
		}
	}
	return false;
}

static bool same_rule(const struct lt_unwind_row *a, const struct lt_unwind_row *b)
{
	return a->kind == b->kind && a->cfa == b->cfa && a->rbp == b->rbp;
}

/* Append r at vaddr pc, merged into the row before when the rule is the same. */
static int emit(struct build *b, uint64_t pc, struct lt_unwind_row r)
{
	struct cfi_table *t = b->t;
	uint64_t off;

	if (!offset_of(b, pc, &off))
		return 0;
	r.pc = (uint32_t)off;
	if (t->n) {
		struct lt_unwind_row *last = &t->rows[t->n - 1];

		if (r.pc < last->pc)
			return 0;		/* out of order: keep the first rows seen */
		if (same_rule(last, &r))
			return 0;
		if (r.pc == last->pc) {
			*last = r;
			return 0;
		}
	} else if (r.kind == LT_UW_NONE) {
		return 0;
	}
	if (t->n == b->cap) {
		if (t->n >= CFI_MAX_ROWS)
			return -E2BIG;
		if (VEC_RESERVE(t->rows, b->cap, t->n + 1, 4096))
			return -ENOMEM;
	}
	t->rows[t->n++] = r;
	return 0;
}

/* Read a 4-byte value of encoding enc (udata4/sdata4, any base) at p. */
static bool read4(const uint8_t *p, const uint8_t *end, unsigned int enc, int64_t *v)
{
	int32_t s;
	uint32_t u;

	if (end - p < 4)
		return false;
	memcpy(&u, p, 4);
	s = (int32_t)u;
	switch (enc & 0x0f) {
	case EH_PE_udata4:
		*v = u;
		return true;
	case EH_PE_sdata4:
		*v = s;
		return true;
	default:
		return false;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The FDEs' initial locations from .eh_frame_hdr (at vaddr hdr_vaddr, bytes [p, end)), sorted:
 * *locs (malloc'd) and *n.
 */
static int fde_starts(const uint8_t *p, const uint8_t *end, uint64_t hdr_vaddr, uint64_t **locs,
		      size_t *n)
{
	const uint8_t *q = p + 4;
	int64_t count, loc;
	uint64_t *out;

	if (end - p < 4 || p[0] != 1)
		return -ENOTSUP;
	if (p[1] == EH_PE_omit || !read4(q, end, p[1], &loc))
		return -ENOTSUP;
	q += 4;
	if (p[2] == EH_PE_omit || !read4(q, end, p[2], &count) || count < 0)
		return -ENOTSUP;
	q += 4;
	if (p[3] != (EH_PE_datarel | EH_PE_sdata4))
		return -ENOTSUP;
	if ((uint64_t)count > (uint64_t)(end - q) / 8)
		return -ENOTSUP;
	out = malloc((count ? count : 1) * sizeof(*out));
	if (!out)
		return -ENOMEM;
	for (int64_t i = 0; i < count; i++) {
		read4(q + 8 * i, end, EH_PE_sdata4, &loc);
		out[i] = hdr_vaddr + loc;
	}
	qsort(out, count, sizeof(*out), cmp_u64);
	*locs = out;
	*n = count;
	return 0;
}

/* This thread's CPU time, ns. */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return monotonic_ns();
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * The row at c->pc, appended; c->pc moves to the end of its range.  false: no FDE covers
 * c->pc (or its range is empty); *err on an error.
 */
static bool next_row(struct cfi_build *c, int *err)
{
	Dwarf_Frame *fr = NULL;
	Dwarf_Addr start, end;
	struct lt_unwind_row r;
	bool signal;

	*err = 0;
	if (dwarf_cfi_addrframe(c->cfi, c->pc, &fr))
		return false;
	if (dwarf_frame_info(fr, &start, &end, &signal) < 0 || end <= c->pc) {
		free(fr);
		return false;
	}
	r = row_of(fr);
	free(fr);
	c->t.unusable += r.kind == LT_UW_NONE;
	*err = emit(&c->b, c->pc, r);
	c->pc = end;
	return !*err;
}

/*
 * Step through the rows from each FDE's start (the rows of FDEs that follow one another
 * without a gap are found in one run), until all are done (0) or deadline_ns (-EINPROGRESS).
 */
static int walk_fdes(struct cfi_build *c, uint64_t deadline_ns)
{
	unsigned int rows = 0;
	int err;

	for (;;) {
		if (!c->in_fde) {
			if (c->next == c->nlocs)
				return 0;
			if (c->any && c->locs[c->next] < c->pc) {
				c->next++;
				continue;
			}
			c->pc = c->locs[c->next++];
			c->any = c->in_fde = true;
			c->fde_rows = 0;
		}
		/* Another FDE begins here: its rows count from 0. */
		while (c->next < c->nlocs && c->locs[c->next] <= c->pc) {
			c->next++;
			c->fde_rows = 0;
		}
		if (++rows % ROWS_PER_CLOCK == 0 && monotonic_ns() >= deadline_ns)
			return -EINPROGRESS;
		err = 0;
		if (c->fde_rows < CFI_MAX_FDE_ROWS && next_row(c, &err)) {
			c->fde_rows++;
			continue;
		}
		if (err)
			return err;
		c->t.cut_fdes += c->fde_rows == CFI_MAX_FDE_ROWS;
		/* No FDE covers pc (or no more rows of it are followed): nothing to unwind by. */
		err = emit(&c->b, c->pc, (struct lt_unwind_row){ .kind = LT_UW_NONE });
		if (err)
			return err;
		c->in_fde = false;
	}
}

void cfi__cancel(struct cfi_build *c)
{
	if (!c)
		return;
	free(c->locs);
	if (c->cfi)
		dwarf_cfi_end(c->cfi);
	if (c->elf)
		elf_end(c->elf);
	free(c->copy);
	cfi__free(&c->t);
	free(c);
}

int cfi__step(struct cfi_build *c, uint64_t deadline_ns, struct cfi_table *out)
{
	uint64_t t0 = cpu_ns(), now = monotonic_ns(), left;
	int err;

	/* The CPU time left to this object passes no sooner than as much wall time does. */
	left = c->t.build_ns < CFI_MAX_BUILD_NS ? CFI_MAX_BUILD_NS - c->t.build_ns : 0;
	if (deadline_ns > now + left)
		deadline_ns = now + left;
	err = walk_fdes(c, deadline_ns);
	c->t.build_ns += cpu_ns() - t0;
	if (err == -EINPROGRESS && c->t.build_ns >= CFI_MAX_BUILD_NS)
		err = -ETIME;
	if (!err && !c->t.n)
		err = -ENODATA;
	if (err == -EINPROGRESS)
		return err;
	if (!err) {
		*out = c->t;
		memset(&c->t, 0, sizeof(c->t));
	}
	cfi__cancel(c);
	return err;
}

/*
 * May the file open at fd be mapped?  Only if nobody but root can change it: owned by root,
 * writable by no group or other user, on a local file system.  (live/symbolize.c decides
 * the same way for libdwfl.)
 */
static bool root_only(int fd, const struct stat *st)
{
	static const long remote[] = { FUSE_SUPER_MAGIC, NFS_SUPER_MAGIC, V9FS_MAGIC,
				       CEPH_SUPER_MAGIC, 0xff534d42 /* CIFS */,
				       0xfe534d42 /* SMB2 */ };
	struct statfs sf;

	if (st->st_uid != 0 || (st->st_mode & (S_IWGRP | S_IWOTH)) || fstatfs(fd, &sf))
		return false;
	for (size_t i = 0; i < sizeof(remote) / sizeof(remote[0]); i++)
		if ((long)sf.f_type == remote[i])
			return false;
	return true;
}

/* The whole file (size bytes) into *copy.  0, -ENOEXEC (it shrank meanwhile) or -ENOMEM. */
static int read_whole(int fd, size_t size, void **copy)
{
	char *buf = malloc(size ? size : 1);
	size_t got = 0;
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	while (got < size && (n = pread(fd, buf + got, size - got, (off_t)got)) > 0)
		got += (size_t)n;
	if (got < size) {
		free(buf);
		return -ENOEXEC;
	}
	*copy = buf;
	return 0;
}

int cfi__start(int fd, struct cfi_build **out)
{
	struct cfi_build *c = calloc(1, sizeof(*c));
	uint64_t t0 = cpu_ns();
	Elf_Data *hdr = NULL;
	GElf_Ehdr eh;
	GElf_Phdr ph, ehph = {};
	size_t nphdr;
	struct stat st;
	int err;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->b.t = &c->t;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		err = -ENOEXEC;
		goto out;
	}
	if ((uint64_t)st.st_size > CFI_MAX_FILE_BYTES) {
		err = -EFBIG;
		goto out;
	}
	elf_version(EV_CURRENT);
	if (root_only(fd, &st)) {
		c->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	} else {
		if ((uint64_t)st.st_size > CFI_MAX_COPY_BYTES) {
			err = -EFBIG;
			goto out;
		}
		err = read_whole(fd, (size_t)st.st_size, &c->copy);
		if (err)
			goto out;
		c->elf = elf_memory(c->copy, (size_t)st.st_size);
	}
	if (!c->elf || elf_kind(c->elf) != ELF_K_ELF || !gelf_getehdr(c->elf, &eh) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64 ||
	    elf_getphdrnum(c->elf, &nphdr)) {
		err = -ENOEXEC;
		goto out;
	}
	for (size_t i = 0; i < nphdr; i++) {
		if (!gelf_getphdr(c->elf, i, &ph))
			continue;
		if (ph.p_type == PT_GNU_EH_FRAME)
			ehph = ph;
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    c->b.nsegs < sizeof(c->b.segs) / sizeof(c->b.segs[0]))
			c->b.segs[c->b.nsegs++] = (struct seg){ ph.p_vaddr, ph.p_memsz, ph.p_offset };
	}
	if (ehph.p_type != PT_GNU_EH_FRAME || !ehph.p_filesz || !c->b.nsegs) {
		err = -ENODATA;
		goto out;
	}
	if (ehph.p_offset > (uint64_t)st.st_size || ehph.p_filesz > (uint64_t)st.st_size - ehph.p_offset) {
		err = -ENOEXEC;
		goto out;
	}
	hdr = elf_getdata_rawchunk(c->elf, ehph.p_offset, ehph.p_filesz, ELF_T_BYTE);
	c->cfi = dwarf_getcfi_elf(c->elf);
	if (!hdr || !c->cfi) {
		err = -ENODATA;
		goto out;
	}
	err = fde_starts(hdr->d_buf, (const uint8_t *)hdr->d_buf + hdr->d_size, ehph.p_vaddr,
			 &c->locs, &c->nlocs);
out:
	c->t.build_ns = cpu_ns() - t0;
	if (err)
		cfi__cancel(c);
	else
		*out = c;
	return err;
}

int cfi__build(int fd, uint64_t budget_ns, struct cfi_table *out)
{
	uint64_t deadline = monotonic_ns() + budget_ns;
	struct cfi_build *c;
	int err;

	memset(out, 0, sizeof(*out));
	err = cfi__start(fd, &c);
	if (err)
		return err;
	do
		err = cfi__step(c, deadline, out);
	while (err == -EINPROGRESS && monotonic_ns() < deadline);
	if (err == -EINPROGRESS) {
		cfi__cancel(c);
		err = -ETIME;
	}
	return err;
}

void cfi__free(struct cfi_table *t)
{
	free(t->rows);
	memset(t, 0, sizeof(*t));
}
