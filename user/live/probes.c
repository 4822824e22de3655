// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * probes.c - the probe plan for one allocator object (a libc, jemalloc, tcmalloc, mimalloc,
 * an executable with its allocator inside): which allocator entry points it defines (the
 * table below), what kind of allocator it is, the file offset of each entry (what the kernel's uprobe API takes), and for free() a probe point
 * that may sit a few instructions past the entry when that lets the kernel emulate the
 * probed instruction instead of single-stepping it out of line.
 *
 * The ELF side uses libelf only (symbol tables, symbol versions, program headers); the
 * decision is made by decoding the machine code with capstone and never assumes anything
 * about a particular libc build.  Everything here is conservative: whenever an instruction
 * cannot be decoded or a rule cannot be proven, the probe stays at the entry.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <capstone/capstone.h>
#include <gelf.h>
#include <libelf.h>

#include "agent/alloc_fns.h"
#include "live/probes.h"
#include "util/search.h"

/* Largest libc file decoded (glibc's is 2 MiB, with its symbol table a few more). */
#define PROBE_MAX_FILE		(256ll << 20)
/* Code read per function: the branch scan must see all of it, or the probe does not move. */
#define PROBE_MAX_CODE		(64u * 1024)
/* The entry instruction alone, for functions without an st_size (hand-written asm). */
#define PROBE_MIN_CODE		16u
/* Longest x86 instruction. */
#define X86_MAX_INSN		15u
/* How far the entry probe of free() may move: instructions skipped, and bytes. */
#define PROBE_MAX_SKIP_INSNS	4
#define PROBE_MAX_SKIP_BYTES	32u

/* gelf.h of older libelf versions lacks these. */
#ifndef VERSYM_HIDDEN
#define VERSYM_HIDDEN		0x8000
#endif
#ifndef VERSYM_VERSION
#define VERSYM_VERSION		0x7fff
#endif

/*
 * Every allocator entry point leaktop knows (agent/alloc_fns.h, the list the in-process
 * agent hooks too), by symbol, with its argument shape (what its probe reads) and family.
 */
static const struct probe_name {
	const char *name;
	enum lt_alloc_fn fn;
	enum probe_family family;
	bool core;
} probe_names[] = {
#define X(sym, shape, family, core)	{ #sym, LT_FN_##shape, PROBE_FAM_##family, core },
	LT_ALLOC_FNS(X)
#undef X
};

#define N_PROBE_NAMES	(sizeof(probe_names) / sizeof(probe_names[0]))
_Static_assert(N_PROBE_NAMES <= PROBE_MAX_FNS, "PROBE_MAX_FNS is too small for probe_names");

/* Symbols that tell which C library an allocator is (absent from the probe table). */
enum probe_marker {
	MARK_GLIBC,			/* malloc_trim, gnu_get_libc_version: glibc only */
	MARK_LIBC,			/* __libc_start_main: a C library (musl when not glibc) */
	MARK__COUNT,
};

static const struct {
	const char *name;
	enum probe_marker mark;
} marker_names[] = {
	{ "malloc_trim", MARK_GLIBC },
	{ "gnu_get_libc_version", MARK_GLIBC },
	{ "__libc_start_main", MARK_LIBC },
};

/*
 * Mirrors arch/x86/kernel/uprobes.c: branch_setup_xol_ops() and push_setup_xol_ops(), the
 * instructions arch_uprobe_analyze_insn() gives an ->emulate op, so that hitting the probe
 * costs one trap and no out-of-line single-step.  Deliberately narrower than the kernel:
 *  - nops (0x90, multi-byte 0f 1f) and endbr64 are not counted: which of them are emulated
 *    depends on the kernel version, and single-stepping is the fallback;
 *  - the kernel refuses branches with a 0x66 prefix (-ENOTSUPP); it would emulate other
 *    legacy prefixes (segment/branch hints, bnd) and REX on branches, we call those not
 *    emulated;
 *  - push is emulated only as 50+r or 41 50+r and at most 2 bytes long, exactly as in
 *    push_setup_xol_ops() (no 66, no REX.W, no other REX byte).
 */
bool probe_insn_is_emulated(const uint8_t *code, size_t len)
{
	uint8_t op;

	if (!code || !len)
		return false;
	op = code[0];

	/* push %r8..%r15: exactly one REX byte, and it must be 0x41. */
	if (op == 0x41)
		return len >= 2 && code[1] >= 0x50 && code[1] <= 0x57;
	/* push %rax..%rdi */
	if (op >= 0x50 && op <= 0x57)
		return true;
	/* call rel32, jmp rel32 */
	if (op == 0xe8 || op == 0xe9)
		return len >= 5;
	/* jmp rel8, jcc rel8 */
	if (op == 0xeb || (op >= 0x70 && op <= 0x7f))
		return len >= 2;
	/* jcc rel32 */
	if (op == 0x0f)
		return len >= 6 && code[1] >= 0x80 && code[1] <= 0x8f;
	/* Anything else, including any prefixed form of the above. */
	return false;
}

/* The 64-bit register that contains `reg`, or X86_REG_INVALID for the ones we do not track. */
static x86_reg reg_full(uint16_t reg)
{
	switch (reg) {
	case X86_REG_RDI: case X86_REG_EDI: case X86_REG_DI: case X86_REG_DIL:
		return X86_REG_RDI;
	case X86_REG_RSI: case X86_REG_ESI: case X86_REG_SI: case X86_REG_SIL:
		return X86_REG_RSI;
	case X86_REG_RDX: case X86_REG_EDX: case X86_REG_DX: case X86_REG_DL: case X86_REG_DH:
		return X86_REG_RDX;
	case X86_REG_RCX: case X86_REG_ECX: case X86_REG_CX: case X86_REG_CL: case X86_REG_CH:
		return X86_REG_RCX;
	case X86_REG_R8: case X86_REG_R8D: case X86_REG_R8W: case X86_REG_R8B:
		return X86_REG_R8;
	case X86_REG_R9: case X86_REG_R9D: case X86_REG_R9W: case X86_REG_R9B:
		return X86_REG_R9;
	case X86_REG_RSP: case X86_REG_ESP: case X86_REG_SP: case X86_REG_SPL:
		return X86_REG_RSP;
	case X86_REG_RBP: case X86_REG_EBP: case X86_REG_BP: case X86_REG_BPL:
		return X86_REG_RBP;
	default:
		return X86_REG_INVALID;
	}
}

static const x86_reg arg_reg_bits[] = {
	X86_REG_RDI, X86_REG_RSI, X86_REG_RDX, X86_REG_RCX, X86_REG_R8, X86_REG_R9,
};

/*
 * May the probe be placed after `insn`?  It must fall through to the next instruction and
 * leave alone the argument registers the program reads, the stack pointer and the frame
 * pointer (so a user stack walk from the probe sees the caller's frame either way).
 */
static bool insn_is_skippable(csh cs, const cs_insn *insn, unsigned int arg_regs)
{
	static const uint8_t flow_groups[] = {
		CS_GRP_JUMP, CS_GRP_CALL, CS_GRP_RET, CS_GRP_INT, CS_GRP_IRET,
		CS_GRP_BRANCH_RELATIVE,
	};
	cs_regs rd, wr;
	uint8_t n_rd = 0, n_wr = 0;
	size_t i, j;

	if (!insn->detail || insn->id == X86_INS_INVALID)
		return false;
	for (i = 0; i < sizeof(flow_groups); i++)
		if (cs_insn_group(cs, insn, flow_groups[i]))
			return false;
	/* Traps and transactional aborts that capstone puts in no control-flow group. */
	switch (insn->id) {
	case X86_INS_UD0: case X86_INS_UD2: case X86_INS_UD2B: case X86_INS_HLT:
	case X86_INS_INT1: case X86_INS_INT3: case X86_INS_INTO:
	case X86_INS_XBEGIN: case X86_INS_XABORT: case X86_INS_XEND:
		return false;
	default:
		break;
	}

	if (cs_regs_access(cs, insn, rd, &n_rd, wr, &n_wr) != CS_ERR_OK)
		return false;
	for (i = 0; i < n_wr; i++) {
		x86_reg full = reg_full(wr[i]);

		if (full == X86_REG_RSP || full == X86_REG_RBP)
			return false;
		for (j = 0; j < sizeof(arg_reg_bits) / sizeof(arg_reg_bits[0]); j++)
			if ((arg_regs & (1u << j)) && full == arg_reg_bits[j])
				return false;
	}
	return true;
}

/* The target of a direct (immediate-operand) jump or call, if `insn` is one. */
static bool insn_direct_target(csh cs, const cs_insn *insn, uint64_t *target)
{
	const cs_x86 *x86;

	if (!insn->detail)
		return false;
	if (!cs_insn_group(cs, insn, CS_GRP_JUMP) && !cs_insn_group(cs, insn, CS_GRP_CALL))
		return false;
	x86 = &insn->detail->x86;
	if (x86->op_count != 1 || x86->operands[0].type != X86_OP_IMM)
		return false;
	*target = (uint64_t)x86->operands[0].imm;
	return true;
}

/*
 * Does a direct branch anywhere in the code land in (lo, hi]?  The code is decoded linearly
 * from its start; where that hits bytes capstone cannot decode (data, padding), it skips one
 * byte and carries on rather than stopping, so a branch after them is still seen.  Decoding
 * out of step can only report branches that are not there, which keeps the probe at the
 * entry: the safe side.
 */
static bool branch_lands_in(csh cs, cs_insn *insn, const uint8_t *code, size_t len,
			    uint64_t vaddr, uint64_t lo, uint64_t hi)
{
	const uint8_t *p = code;
	uint64_t addr = vaddr, target;
	size_t left = len;

	while (left) {
		if (!cs_disasm_iter(cs, &p, &left, &addr, insn)) {
			p++;
			left--;
			addr++;
			continue;
		}
		if (insn_direct_target(cs, insn, &target) && target > lo && target <= hi)
			return true;
	}
	return false;
}

static void insn_text(const cs_insn *insn, char *buf, size_t buf_len)
{
	if (!buf || !buf_len)
		return;
	if (insn->op_str[0])
		snprintf(buf, buf_len, "%s %s", insn->mnemonic, insn->op_str);
	else
		snprintf(buf, buf_len, "%s", insn->mnemonic);
}

/* The instruction text is capstone's AT&T syntax, like objdump's: "je 0x98fb8". */
int probe_plan__choose_offset(const uint8_t *code, size_t len, uint64_t vaddr, bool may_move,
			      unsigned int arg_regs, size_t *probe_delta, bool *emulated,
			      char *insn, size_t insn_len)
{
	const uint8_t *p;
	uint64_t addr;
	size_t left, off, delta = 0;
	cs_insn *ci = NULL;
	csh cs = 0;
	int n, err = 0;

	if (!code || !len || !probe_delta)
		return -EINVAL;
	*probe_delta = 0;
	if (emulated)
		*emulated = false;
	if (insn && insn_len)
		snprintf(insn, insn_len, "(bad)");

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return -ENOMEM;
	if (cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK ||
	    cs_option(cs, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT) != CS_ERR_OK) {
		err = -EINVAL;
		goto out;
	}
	ci = cs_malloc(cs);
	if (!ci) {
		err = -ENOMEM;
		goto out;
	}

	if (!may_move)
		goto chosen;

	/*
	 * Walk straight-line code from the entry to the first emulated instruction, skipping
	 * at most PROBE_MAX_SKIP_INSNS instructions and PROBE_MAX_SKIP_BYTES bytes; anything
	 * undecodable, control flow or a write to a watched register ends the walk at delta 0.
	 */
	p = code;
	left = len;
	addr = vaddr;
	for (n = 0; ; n++) {
		off = (size_t)(p - code);
		if (off > PROBE_MAX_SKIP_BYTES || !left)
			break;
		if (!cs_disasm_iter(cs, &p, &left, &addr, ci))
			break;
		if (probe_insn_is_emulated(code + off, len - off)) {
			delta = off;
			break;
		}
		if (n == PROBE_MAX_SKIP_INSNS || !insn_is_skippable(cs, ci, arg_regs))
			break;
	}
	if (delta && branch_lands_in(cs, ci, code, len, vaddr, vaddr, vaddr + delta))
		delta = 0;

chosen:
	p = code + delta;
	left = len - delta;
	addr = vaddr + delta;
	if (cs_disasm_iter(cs, &p, &left, &addr, ci))
		insn_text(ci, insn, insn_len);
	*probe_delta = delta;
	if (emulated)
		*emulated = probe_insn_is_emulated(code + delta, len - delta);
out:
	if (ci)
		cs_free(ci, 1);
	cs_close(&cs);
	return err;
}

/* --- ELF side ----------------------------------------------------------------------- */

struct sym_pick {
	bool seen;		/* some definition was picked */
	bool ifunc;		/* ... and it is an IFUNC: no code to probe at st_value */
	bool hidden;		/* ... and its version is hidden (not the default) */
	uint64_t value;
	uint64_t size;
};

/* What one pass over the symbol tables found: a pick per probe table entry, and markers. */
struct sym_scan {
	struct sym_pick pick[N_PROBE_NAMES];
	bool mark[MARK__COUNT];
};

/* probe_names' indexes sorted by name, for a binary search per symbol. */
static uint8_t name_order[N_PROBE_NAMES];
static bool name_order_ready;

static int cmp_order(const void *a, const void *b)
{
	return strcmp(probe_names[*(const uint8_t *)a].name, probe_names[*(const uint8_t *)b].name);
}

/* strcmp of a table name against a symbol name that may carry "@@VERSION" (the default). */
static int cmp_sym(const char *name, size_t name_len, const char *table)
{
	int c = strncmp(name, table, name_len);

	if (c)
		return c;
	return table[name_len] ? -1 : 0;
}

/* Names in the table are plain; a .symtab may also carry "name@@VERSION" (the default). */
static int match_name(const char *name)
{
	const char *at = strstr(name, "@@");
	size_t len = at ? (size_t)(at - name) : strlen(name), lo = 0, hi = N_PROBE_NAMES;

	if (!name_order_ready) {
		for (size_t i = 0; i < N_PROBE_NAMES; i++)
			name_order[i] = (uint8_t)i;
		qsort(name_order, N_PROBE_NAMES, sizeof(name_order[0]), cmp_order);
		name_order_ready = true;
	}
	/* A name with a single '@' (a non-default version) is none of ours. */
	if (!at && strchr(name, '@'))
		return -1;
	lo = SEARCH_FIRST(hi, mid, cmp_sym(name, len, probe_names[name_order[mid]].name) > 0);
	if (lo < hi && !cmp_sym(name, len, probe_names[name_order[lo]].name))
		return name_order[lo];
	return -1;
}

static void match_marker(const char *name, bool *mark)
{
	for (size_t i = 0; i < sizeof(marker_names) / sizeof(marker_names[0]); i++)
		if (!strcmp(name, marker_names[i].name))
			mark[marker_names[i].mark] = true;
}

/*
 * Pick, for each allocator name, its global definition in one symbol table.  With symbol
 * versions, the default version (hidden bit clear) wins over hidden ones; a name defined
 * only as an IFUNC is reported as such (resolved at run time: nothing to probe here).
 */
static int scan_symbols(Elf *elf, Elf_Scn *scn, Elf_Data *versym, struct sym_scan *out)
{
	GElf_Shdr sh;
	Elf_Data *data;
	size_t i, count;

	if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize)
		return -EINVAL;
	data = elf_getdata(scn, NULL);
	if (!data)
		return -EINVAL;
	count = sh.sh_size / sh.sh_entsize;

	for (i = 1; i < count; i++) {
		struct sym_pick *pick;
		GElf_Sym sym;
		GElf_Versym vs = 0;
		const char *name;
		bool hidden;
		int type, bind, fn;

		if (!gelf_getsym(data, (int)i, &sym))
			return -EINVAL;
		type = GELF_ST_TYPE(sym.st_info);
		bind = GELF_ST_BIND(sym.st_info);
		if (sym.st_shndx == SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK) ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC))
			continue;
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (!name)
			continue;
		fn = match_name(name);
		if (fn < 0) {
			match_marker(name, out->mark);
			continue;
		}
		if (versym && !gelf_getversym(versym, (int)i, &vs))
			return -EINVAL;
		if (versym && (vs & VERSYM_VERSION) == VER_NDX_LOCAL)
			continue;
		hidden = vs & VERSYM_HIDDEN;
		pick = &out->pick[fn];
		/* The first default definition stays; a hidden one only fills an empty slot. */
		if (pick->seen && (hidden || !pick->hidden))
			continue;
		pick->seen = true;
		pick->ifunc = type == STT_GNU_IFUNC;
		pick->hidden = hidden;
		pick->value = sym.st_value;
		pick->size = sym.st_size;
	}
	return 0;
}

/* Is any defined symbol of the table at an address in (lo, hi]?  (Another entry point.) */
static bool symbol_in(Elf_Scn *scn, uint64_t lo, uint64_t hi)
{
	GElf_Shdr sh;
	Elf_Data *data;
	size_t i, count;

	if (!scn || !gelf_getshdr(scn, &sh) || !sh.sh_entsize)
		return false;
	data = elf_getdata(scn, NULL);
	if (!data)
		return false;
	count = sh.sh_size / sh.sh_entsize;
	for (i = 1; i < count; i++) {
		GElf_Sym sym;
		int type;

		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
			continue;
		if (sym.st_value > lo && sym.st_value <= hi)
			return true;
	}
	return false;
}

/* Executable PT_LOAD segment whose file image holds vaddr: offset, and bytes left in it. */
static int vaddr_to_offset(Elf *elf, uint64_t vaddr, uint64_t *offset, uint64_t *avail)
{
	size_t i, n;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr < ph.p_vaddr || vaddr - ph.p_vaddr >= ph.p_filesz)
			continue;
		if (!(ph.p_flags & PF_X))
			return -ENOEXEC;
		*offset = vaddr - ph.p_vaddr + ph.p_offset;
		*avail = ph.p_filesz - (vaddr - ph.p_vaddr);
		return 0;
	}
	return -ENOENT;
}

static bool has_dynamic(Elf *elf)
{
	size_t i, n;

	if (elf_getphdrnum(elf, &n))
		return false;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_DYNAMIC)
			return true;
	}
	return false;
}

/* Where the entry of one found function is; with decode, where its probe goes. */
static int plan_one(Elf *elf, const uint8_t *image, size_t image_size, Elf_Scn *symtabs[2],
		    const struct sym_pick *pick, bool decode, struct probe_fn_plan *out)
{
	uint64_t offset, avail, len;
	size_t delta = 0;
	bool may_move = out->fn == LT_FN_FREE;
	int err, i;

	if (!pick->seen || pick->ifunc)
		return 0;
	err = vaddr_to_offset(elf, pick->value, &offset, &avail);
	if (err == -ENOENT || err == -ENOEXEC)
		return 0;	/* not in the file's code: nothing we can probe */
	if (err)
		return err;
	if (!decode)
		goto found;

	/* The whole function, or the probe does not move (the branch scan would be partial). */
	len = pick->size;
	if (!len || len > PROBE_MAX_CODE) {
		len = pick->size ? PROBE_MAX_CODE : PROBE_MIN_CODE;
		may_move = false;
	}
	if (len > avail)
		len = avail;
	if (offset >= image_size || !len)
		return -EINVAL;
	if (len > image_size - offset)
		len = image_size - offset;

	/* Free-shaped functions: entry probe only, and its program reads rdi only. */
	err = probe_plan__choose_offset(image + offset, len, pick->value, may_move,
					may_move ? 1u << 0 : 0, &delta, &out->entry_emulated,
					out->insn, sizeof(out->insn));
	if (err)
		return err;

	/* Another symbol inside the skipped bytes is another way in: stay at the entry. */
	for (i = 0; delta && i < 2; i++) {
		if (!symbol_in(symtabs[i], pick->value, pick->value + delta))
			continue;
		err = probe_plan__choose_offset(image + offset, len, pick->value, false, 0,
						&delta, &out->entry_emulated, out->insn,
						sizeof(out->insn));
		if (err)
			return err;
	}
found:
	out->found = true;
	out->sym_vaddr = pick->value;
	out->entry_offset = offset;
	out->probe_offset = offset + delta;
	return 0;
}

/* Does some family other than C++'s have its malloc and its free (the core pair) here? */
static bool plan_is_allocator(const struct probe_plan *plan)
{
	bool has_alloc[PROBE_FAM__COUNT] = { false }, has_free[PROBE_FAM__COUNT] = { false };

	for (unsigned int i = 0; i < plan->n_fn; i++) {
		const struct probe_fn_plan *f = &plan->fn[i];

		if (!f->found || !probe_names[i].core)
			continue;
		if (f->fn == LT_FN_FREE)
			has_free[f->family] = true;
		else
			has_alloc[f->family] = true;
	}
	for (int fam = 0; fam < PROBE_FAM__COUNT; fam++)
		if (fam != PROBE_FAM_CXX && has_alloc[fam] && has_free[fam])
			return true;
	return false;
}

static const char *plan_kind(const struct probe_plan *plan, const bool *mark)
{
	static const struct {
		enum probe_family family;
		const char *kind;
	} by_family[] = {
		{ PROBE_FAM_JE, "jemalloc" },
		{ PROBE_FAM_TC, "tcmalloc" },
		{ PROBE_FAM_MI, "mimalloc" },
	};

	for (size_t k = 0; k < sizeof(by_family) / sizeof(by_family[0]); k++)
		for (unsigned int i = 0; i < plan->n_fn; i++)
			if (plan->fn[i].found && plan->fn[i].family == by_family[k].family)
				return by_family[k].kind;
	if (mark[MARK_GLIBC])
		return "glibc";
	if (mark[MARK_LIBC])
		return "musl";
	return "other";
}

static int plan_build(int fd, struct probe_plan *plan, bool decode)
{
	struct sym_scan *found = NULL, *more = NULL;
	Elf_Scn *scn = NULL, *dynsym = NULL, *symtab = NULL, *versym_scn = NULL;
	Elf_Scn *symtabs[2];
	Elf_Data *versym = NULL;
	const uint8_t *image = NULL;
	size_t image_size = 0;
	struct stat st;
	GElf_Ehdr eh;
	Elf *elf = NULL;
	unsigned int i, j;
	int err = 0;

	memset(plan, 0, sizeof(*plan));
	plan->n_fn = N_PROBE_NAMES;
	for (i = 0; i < N_PROBE_NAMES; i++) {
		plan->fn[i].name = probe_names[i].name;
		plan->fn[i].fn = probe_names[i].fn;
		plan->fn[i].family = probe_names[i].family;
		plan->fn[i].alias_of = -1;
	}

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	/* Only a regular file: a FIFO or a device would block or have effects when read. */
	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	/* The whole file is read into memory (below): bounded. */
	if (st.st_size > PROBE_MAX_FILE)
		return -EFBIG;
	found = calloc(2, sizeof(*found));
	if (!found)
		return -ENOMEM;
	more = found + 1;

	/*
	 * Read, never mmap: a private mapping of a file that another tracer (or an earlier
	 * attach of ours) has uprobes on gets their int3 bytes patched in by the kernel, and
	 * the decoding below would see those instead of the code.
	 */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf) {
		err = -EINVAL;
		goto out;
	}
	if (elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64 ||
	    !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64) {
		err = -ENOEXEC;
		goto out;
	}
	/*
	 * To decode code, the whole file, read before any section (libelf leaks the section
	 * buffers it read first); to scan the symbols, only the sections it needs.
	 */
	image = decode ? (const uint8_t *)elf_rawfile(elf, &image_size) : NULL;
	if (decode && !image) {
		err = -EINVAL;
		goto out;
	}
	plan->is_dynamic = has_dynamic(elf);

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_DYNSYM && !dynsym)
			dynsym = scn;
		else if (sh.sh_type == SHT_SYMTAB && !symtab)
			symtab = scn;
		else if (sh.sh_type == SHT_GNU_versym && !versym_scn)
			versym_scn = scn;
	}
	/* .gnu.version runs parallel to .dynsym only. */
	if (versym_scn && dynsym) {
		versym = elf_getdata(versym_scn, NULL);
		if (!versym) {
			err = -EINVAL;
			goto out;
		}
	}

	if (dynsym) {
		err = scan_symbols(elf, dynsym, versym, found);
		if (err)
			goto out;
		for (i = 0; i < N_PROBE_NAMES; i++)
			plan->fn[i].exported = found->pick[i].seen;
	}
	if (symtab) {
		/* Fallback for names .dynsym does not define (or no .dynsym at all). */
		err = scan_symbols(elf, symtab, NULL, more);
		if (err)
			goto out;
		for (i = 0; i < N_PROBE_NAMES; i++)
			if (!found->pick[i].seen)
				found->pick[i] = more->pick[i];
		for (i = 0; i < MARK__COUNT; i++)
			found->mark[i] |= more->mark[i];
	}

	symtabs[0] = dynsym;
	symtabs[1] = symtab;
	/* Which functions are here first (cheap); the code is decoded for allocators only. */
	for (i = 0; i < N_PROBE_NAMES; i++) {
		err = plan_one(elf, image, image_size, symtabs, &found->pick[i], false,
			       &plan->fn[i]);
		if (err)
			goto out;
	}
	if (!plan_is_allocator(plan)) {
		err = -ENOENT;
		goto out;
	}
	for (i = 0; decode && i < N_PROBE_NAMES; i++) {
		if (!plan->fn[i].found)
			continue;
		plan->fn[i].found = false;
		err = plan_one(elf, image, image_size, symtabs, &found->pick[i], true,
			       &plan->fn[i]);
		if (err)
			goto out;
	}
	plan->kind = plan_kind(plan, found->mark);
	/* probe_names[0] is plain malloc. */
	plan->defines_malloc = plan->fn[0].found;
	plan->exports_malloc = plan->fn[0].found && plan->fn[0].exported;

	for (i = 0; i < N_PROBE_NAMES; i++) {
		for (j = 0; j < i && plan->fn[i].found; j++) {
			if (plan->fn[j].found && plan->fn[j].sym_vaddr == plan->fn[i].sym_vaddr) {
				plan->fn[i].alias_of = (int)j;
				break;
			}
		}
	}
out:
	if (elf)
		elf_end(elf);
	free(found);
	return err;
}

int probe_plan__build(int fd, struct probe_plan *plan)
{
	return plan_build(fd, plan, true);
}

int probe_plan__scan(int fd, struct probe_plan *plan)
{
	return plan_build(fd, plan, false);
}

const struct probe_fn_plan *probe_plan__find(const struct probe_plan *plan, const char *name)
{
	for (unsigned int i = 0; i < plan->n_fn; i++)
		if (!strcmp(plan->fn[i].name, name))
			return &plan->fn[i];
	return NULL;
}
