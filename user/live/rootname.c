// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * rootname.c - names of retention roots (see rootname.h).  A root word is:
 *   a register: the thread whose registers the word index falls in, and the register;
 *   TLS: within 64 KiB below a thread's fs_base (glibc's static TLS sits under the TCB);
 *   a stack frame: between a thread's stack pointer (less its red zone) and the end of the
 *     mapping holding it; the function is the one the nearest return address below the word
 *     returns into (the call the frame's function made), else the thread's instruction
 *     pointer (the innermost frame);
 *   a global: in a file mapping or the anonymous mapping right after one (its .bss): the
 *     module's symbol covering it (.symtab, else .dynsym) and its section;
 *   else memory (an untracked heap block, an anonymous mapping).
 * Files are the target's: opened only as the mapping's own file (safe_open__mapped), never
 * on FUSE or network file systems, read (not mapped) by libelf, at most ROOTNAME_MODULES per
 * call and ROOTNAME_LOOKUPS_MAX searches of their tables; past them, or when a file fails to
 * open, a root is named by module and offset.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <unistd.h>

#include "live/mounts.h"
#include "live/procmaps.h"
#include "live/ptrace_stop.h"
#include "live/rootname.h"
#include "live/safe_open.h"

#define ROOTNAME_MODULES	16
#define ROOTNAME_ELF_MAX	(1ull << 30)	/* larger files are not read */
#define TLS_SPAN		(64u << 10)
#define RED_ZONE		128
#define FRAME_WORDS_MAX		4096		/* words searched below a stack root */
/* Symbol table searches per call (each reads a whole table): past it, module and offset. */
#define ROOTNAME_LOOKUPS_MAX	1024

static const char *const gp_names[] = {
	"r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8", "rax", "rcx",
	"rdx", "rsi", "rdi", "orig_rax", "rip", "cs", "eflags", "rsp", "ss", "fs_base",
	"gs_base", "ds", "es", "fs", "gs",
};

struct module {
	uint64_t dev, ino;
	Elf *elf;			/* NULL: could not be read */
	int fd;
};

struct namer {
	int pid;
	const struct proc_maps *maps;
	const struct scan_region *regions;
	size_t n_regions;
	const struct ptrace_thread *threads;
	size_t n_threads;
	struct module mods[ROOTNAME_MODULES];
	size_t n_mods;
	unsigned int lookups;
};

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path ? path : "?";
}

static Elf *module_elf(struct namer *nm, const struct proc_map *pm)
{
	struct file_id want = { pm->dev, pm->ino };
	struct module *m;
	struct stat st;
	int fd;

	if (nm->lookups++ >= ROOTNAME_LOOKUPS_MAX)
		return NULL;
	for (size_t i = 0; i < nm->n_mods; i++)
		if (nm->mods[i].dev == pm->dev && nm->mods[i].ino == pm->ino)
			return nm->mods[i].elf;
	if (nm->n_mods == ROOTNAME_MODULES)
		return NULL;
	m = &nm->mods[nm->n_mods++];
	*m = (struct module){ pm->dev, pm->ino, NULL, -1 };
	if (mounts__map_refused(nm->pid, pm) ||
	    safe_open__mapped(nm->pid, pm->start, pm->end, pm->deleted ? NULL : pm->path, &want,
			      &fd))
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > ROOTNAME_ELF_MAX) {
		close(fd);
		return NULL;
	}
	m->fd = fd;
	elf_version(EV_CURRENT);
	/* Read, not mapped: a file truncated under us is an error, not a SIGBUS. */
	m->elf = elf_begin(fd, ELF_C_READ, NULL);
	if (m->elf && elf_kind(m->elf) != ELF_K_ELF) {
		elf_end(m->elf);
		m->elf = NULL;
	}
	return m->elf;
}

/* The link-time address of addr in file mapping pm (its PT_LOAD by file offset). */
static bool link_addr(Elf *elf, const struct proc_map *pm, uint64_t addr, uint64_t *vaddr)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (pm->file_offset < (ph.p_offset & ~4095ull) ||
		    pm->file_offset >= ph.p_offset + ph.p_memsz)
			continue;
		*vaddr = addr - pm->start + pm->file_offset + (ph.p_vaddr - ph.p_offset);
		return true;
	}
	return false;
}

/* The symbol of elf covering vaddr (of one of the types wanted), its section's name. */
static const char *symbol_at(Elf *elf, uint64_t vaddr, bool code, const char **section)
{
	const char *best = NULL;
	int want = SHT_SYMTAB;
	size_t shstr;

	*section = NULL;
	if (elf_getshdrstrndx(elf, &shstr))
		return NULL;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_ALLOC) && sh.sh_addr <= vaddr &&
		    vaddr - sh.sh_addr < sh.sh_size)
			*section = elf_strptr(elf, shstr, sh.sh_name);
	}
	for (int pass = 0; pass < 2 && !best; pass++, want = SHT_DYNSYM) {
		for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn)) && !best;) {
			Elf_Data *d;
			GElf_Shdr sh;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != (unsigned int)want ||
			    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
				continue;
			for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym s;
				int type;

				if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF ||
				    !s.st_size || vaddr < s.st_value ||
				    vaddr - s.st_value >= s.st_size)
					continue;
				type = GELF_ST_TYPE(s.st_info);
				if (code ? type != STT_FUNC : type != STT_OBJECT)
					continue;
				best = elf_strptr(elf, sh.sh_link, s.st_name);
				if (best)
					break;
			}
		}
	}
	return best;
}

/* The file mapping addr lies in, or whose .bss (the anonymous mapping after it) holds it. */
static const struct proc_map *file_map_of(const struct proc_maps *maps, uint64_t addr)
{
	const struct proc_map *pm = procmaps__find(maps, addr);

	if (!pm)
		return NULL;
	if (pm->ino)
		return pm;
	if (pm->path || pm == maps->v || pm[-1].end != pm->start || !pm[-1].ino ||
	    !pm[-1].writable)
		return NULL;
	return pm - 1;
}

static bool code_function(struct namer *nm, uint64_t pc, char *buf, size_t len)
{
	const struct proc_map *pm = procmaps__find(nm->maps, pc);
	const char *sec, *sym;
	uint64_t v;
	Elf *elf;

	if (!pm || !pm->executable || !pm->ino || !(elf = module_elf(nm, pm)) ||
	    !link_addr(elf, pm, pc, &v) || !(sym = symbol_at(elf, v, true, &sec)))
		return false;
	snprintf(buf, len, "%s", sym);
	return true;
}

static void thread_comm(int pid, int tid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return;
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

static const struct scan_region *region_holding(const struct namer *nm, uint64_t a)
{
	for (size_t i = 0; i < nm->n_regions; i++)
		if (a >= nm->regions[i].addr && a - nm->regions[i].addr < nm->regions[i].len)
			return &nm->regions[i];
	return NULL;
}

/* The function whose frame holds the stack word at a, of thread t. */
static void frame_function(struct namer *nm, const struct ptrace_thread *t, uint64_t a,
			   char *buf, size_t len)
{
	uint64_t lo = t->regs.rsp >= RED_ZONE ? t->regs.rsp - RED_ZONE : 0;
	const struct scan_region *r = region_holding(nm, a);

	for (uint64_t w = (a & ~7ull), n = 0; r && w >= lo + 8 && w - 8 >= r->addr &&
	     n < FRAME_WORDS_MAX; n++) {
		uint64_t v;
		const struct proc_map *pm;

		w -= 8;
		memcpy(&v, (const uint8_t *)r->data + (w - r->addr), sizeof(v));
		pm = procmaps__find(nm->maps, v);
		if (pm && pm->executable && code_function(nm, v - 1, buf, len))
			return;
	}
	if (!code_function(nm, t->regs.rip, buf, len))
		snprintf(buf, len, "?");
}

static void name_register(struct namer *nm, struct scan_retainer *rt)
{
	const size_t per_thread = sizeof(struct user_regs_struct) / sizeof(uint64_t);
	size_t at = 0;

	for (size_t t = 0; t < nm->n_threads; t++) {
		const struct ptrace_thread *th = &nm->threads[t];
		char comm[32];

		if (rt->root_reg >= at + per_thread + th->n_vec) {
			at += per_thread + th->n_vec;
			continue;
		}
		thread_comm(nm->pid, th->tid, comm, sizeof(comm));
		rt->root_kind = SCAN_ROOT_REGISTER;
		rt->root_tid = (uint32_t)th->tid;
		if (rt->root_reg - at < per_thread && rt->root_reg - at <
		    sizeof(gp_names) / sizeof(gp_names[0]))
			snprintf(rt->root_name, sizeof(rt->root_name), "register %s of thread %d "
				 "(%s)", gp_names[rt->root_reg - at], th->tid, comm);
		else
			snprintf(rt->root_name, sizeof(rt->root_name), "vector register word %zu "
				 "of thread %d (%s)", rt->root_reg - at - per_thread, th->tid, comm);
		return;
	}
	rt->root_kind = SCAN_ROOT_REGISTER;
	snprintf(rt->root_name, sizeof(rt->root_name), "a register");
}

static bool name_thread_memory(struct namer *nm, struct scan_retainer *rt)
{
	uint64_t a = rt->root_addr;
	char comm[32], fn[96];

	/* Live stacks first: a thread's TLS lies just above its stack, or another's. */
	for (size_t t = 0; t < nm->n_threads; t++) {
		const struct ptrace_thread *th = &nm->threads[t];
		const struct proc_map *stack = procmaps__find(nm->maps, th->regs.rsp);

		if (!stack || a < stack->start || a >= stack->end || a + RED_ZONE < th->regs.rsp ||
		    (th->regs.fs_base > th->regs.rsp && a >= th->regs.fs_base))
			continue;
		thread_comm(nm->pid, th->tid, comm, sizeof(comm));
		frame_function(nm, th, a, fn, sizeof(fn));
		rt->root_kind = SCAN_ROOT_STACK;
		rt->root_tid = (uint32_t)th->tid;
		snprintf(rt->root_name, sizeof(rt->root_name), "frame of %s, thread %d (%s)", fn,
			 th->tid, comm);
		return true;
	}
	for (size_t t = 0; t < nm->n_threads; t++) {
		const struct ptrace_thread *th = &nm->threads[t];
		const struct proc_map *tls = procmaps__find(nm->maps, th->regs.fs_base);

		if (!tls || a < tls->start || a >= th->regs.fs_base ||
		    th->regs.fs_base - a > TLS_SPAN)
			continue;
		thread_comm(nm->pid, th->tid, comm, sizeof(comm));
		rt->root_kind = SCAN_ROOT_TLS;
		rt->root_tid = (uint32_t)th->tid;
		snprintf(rt->root_name, sizeof(rt->root_name), "TLS of thread %d (%s)", th->tid,
			 comm);
		return true;
	}
	return false;
}

static void name_memory(struct namer *nm, struct scan_retainer *rt)
{
	const struct proc_map *pm = file_map_of(nm->maps, rt->root_addr), *at;
	const char *sym = NULL, *sec = NULL;
	uint64_t v = 0;
	Elf *elf;

	if (name_thread_memory(nm, rt))
		return;
	if (pm) {
		elf = module_elf(nm, pm);
		if (elf && link_addr(elf, pm, rt->root_addr, &v))
			sym = symbol_at(elf, v, false, &sec);
		rt->root_kind = SCAN_ROOT_GLOBAL;
		if (sym)
			snprintf(rt->root_name, sizeof(rt->root_name), "%s (%s, %s)", sym,
				 base_name(pm->path), sec ? sec : "?");
		else
			snprintf(rt->root_name, sizeof(rt->root_name), "%s %s+0x%" PRIx64,
				 base_name(pm->path), sec ? sec : "data", rt->root_addr - pm->start);
		return;
	}
	at = procmaps__find(nm->maps, rt->root_addr);
	rt->root_kind = SCAN_ROOT_MEMORY;
	if (at && at->path && !strcmp(at->path, "[heap]"))
		snprintf(rt->root_name, sizeof(rt->root_name), "untracked blocks in [heap]");
	else if (at && at->start == rt->root_addr)
		snprintf(rt->root_name, sizeof(rt->root_name), "untracked memory in the anonymous "
			 "mapping at 0x%" PRIx64, at->start);
	else
		snprintf(rt->root_name, sizeof(rt->root_name), "memory at 0x%" PRIx64,
			 rt->root_addr);
}

uint64_t rootname__key(void *ctx, uint64_t addr)
{
	const struct rootname_keys *k = ctx;
	const struct proc_map *pm = procmaps__find(k->maps, addr);

	if (!pm || file_map_of(k->maps, addr) || (pm->path && strcmp(pm->path, "[heap]")))
		return addr;
	for (size_t t = 0; t < k->n_threads; t++) {
		uint64_t sp = k->threads[t].regs.rsp, fs = k->threads[t].regs.fs_base;

		if ((sp >= pm->start && sp < pm->end) || (fs >= pm->start && fs < pm->end))
			return addr;
	}
	return pm->start;
}

void rootname__name(int pid, const struct proc_maps *maps, const struct scan_region *regions,
		    size_t n_regions, const struct ptrace_thread *threads, size_t n_threads,
		    struct scan_result *r)
{
	struct namer nm = { pid, maps, regions, n_regions, threads, n_threads, {}, 0, 0 };

	for (size_t s = 0; s < r->n_sites; s++) {
		for (uint32_t i = 0; i < r->sites[s].n_retainers; i++) {
			struct scan_retainer *rt = &r->sites[s].retainers[i];

			if (rt->root_reg != SCAN_ROOT_REG_NONE)
				name_register(&nm, rt);
			else
				name_memory(&nm, rt);
		}
	}
	for (size_t i = 0; i < nm.n_mods; i++) {
		if (nm.mods[i].elf)
			elf_end(nm.mods[i].elf);
		if (nm.mods[i].fd >= 0)
			close(nm.mods[i].fd);
	}
}
