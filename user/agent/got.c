// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * got.c - the agent's way into a process it was injected into (`leaktop -p PID --agent`):
 * the allocator entry points every loaded object calls through its GOT are pointed at the
 * agent's own definitions, and put back on stop.
 *
 * A preloaded agent needs none of this (the dynamic linker binds every object to its
 * definitions); an injected one comes after every binding is made.  agent_got_redirect()
 * walks each loaded object (dl_iterate_phdr) but the agent itself: its dynamic section gives
 * the relocations (DT_JMPREL and DT_RELA) and the symbols they name; a relocation of type
 * R_X86_64_JUMP_SLOT, R_X86_64_GLOB_DAT or R_X86_64_64 (a function pointer in data, with no
 * addend) naming a function the agent defines (the same name: malloc, _Znwm, mallocx, ...;
 * which ones, from the agent's own exports) gets the agent's address, by compare-and-swap
 * from the value it holds (so a slot the program itself rewrote meanwhile is left alone).  A
 * slot inside the object's RELRO (read-only after relocation) is written between two
 * mprotect calls, read-write then read-only again.  Every slot written is remembered, with
 * its old value, in a fixed table (no allocation: the agent must not call the allocator it
 * hooks); slots beyond it are not redirected, and counted.
 *
 * Objects loaded later: dlopen and dlmopen are redirected the same way, to wrappers.  The
 * dynamic linker finds a library for dlopen through the caller's RPATH/RUNPATH and $ORIGIN,
 * from the return address, so the wrapper only makes the call itself (then redirects what
 * it loaded) when that changes nothing: a name without '$' from a caller without
 * DT_RPATH/DT_RUNPATH, or with a '/'.  Otherwise (and for dlmopen, whose namespaces the walk
 * does not know) it jumps to the real function, the caller's address untouched, and the new
 * objects are redirected at the next dlopen the wrapper makes or agent_got_rescan().
 *
 * agent_got_restore() swaps each remembered slot back, newest first, when it still holds the
 * agent's address and its object is still loaded at the same place; afterwards every call
 * goes straight to the allocator.  A function pointer the program copied from a slot while
 * redirected stays the agent's (the agent is inert after stop, and passes calls on).
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "agent/agent.h"

/* Slots remembered at most (an object calls a handful of allocator names). */
#define GOT_MAX_SLOTS	8192
/* The hooks, and dlopen and dlmopen. */
#define GOT_MAX_NAMES	128

/* How many slots are redirected now, and how many were left out (the table was full). */
AGENT_HIDDEN unsigned long agent_got_slots(void);
AGENT_HIDDEN unsigned long agent_got_dropped(void);
/* Slot i: its address, old value and the agent's; 0, or -ENOENT past the last. */
AGENT_HIDDEN int agent_got_slot(unsigned long i, uintptr_t *addr, uintptr_t *old,
				uintptr_t *to);
/* Redirect objects loaded since the last pass (when got_rescan_pending says some may be). */
AGENT_HIDDEN void agent_got_rescan(void);

/* A name, where calls to it go instead, and what the default scope binds it to. */
struct target {
	const char *name;
	uintptr_t to, bound;
};

struct slot {
	uintptr_t *addr;
	uintptr_t old, to;
	uintptr_t base;			/* its object's load address, to find it again */
	bool relro;
};

static pthread_mutex_t got_lock = PTHREAD_MUTEX_INITIALIZER;
static struct target targets[GOT_MAX_NAMES];
static unsigned int n_targets;
static struct slot slots[GOT_MAX_SLOTS];
static unsigned long n_slots, n_dropped;
static bool active;
static uintptr_t self_base;
#define HIDDEN AGENT_HIDDEN
/* Set when objects may have been loaded that no pass has seen yet. */
HIDDEN volatile bool got_rescan_pending;
/* The loader's functions, as the process's default scope binds them. */
HIDDEN void *got_real_dlopen, *got_real_dlmopen;

HIDDEN void *got_dlopen_entry(const char *file, int mode);
HIDDEN void *got_dlmopen_entry(Lmid_t lmid, const char *file, int mode);
HIDDEN int got_dlopen_direct(const char *file, const void *caller);
HIDDEN void *got_dlopen_call(const char *file, int mode);

/*
 * The wrappers: dlopen asks got_dlopen_direct whether it may make the call itself (then
 * got_dlopen_call does); otherwise both jump to the real function with the caller's return
 * address in place, the rescan left pending.
 */
__asm__(
	".text\n"
	".globl got_dlopen_entry\n"
	".hidden got_dlopen_entry\n"
	".type got_dlopen_entry, @function\n"
	"got_dlopen_entry:\n"
	"	push %rdi\n"
	"	push %rsi\n"
	"	sub $8, %rsp\n"
	"	mov 24(%rsp), %rsi\n"
	"	call got_dlopen_direct\n"
	"	add $8, %rsp\n"
	"	pop %rsi\n"
	"	pop %rdi\n"
	"	test %eax, %eax\n"
	"	jz 1f\n"
	"	jmp got_dlopen_call\n"
	"1:	movb $1, got_rescan_pending(%rip)\n"
	"	jmp *got_real_dlopen(%rip)\n"
	".size got_dlopen_entry, .-got_dlopen_entry\n"
	".globl got_dlmopen_entry\n"
	".hidden got_dlmopen_entry\n"
	".type got_dlmopen_entry, @function\n"
	"got_dlmopen_entry:\n"
	"	movb $1, got_rescan_pending(%rip)\n"
	"	jmp *got_real_dlmopen(%rip)\n"
	".size got_dlmopen_entry, .-got_dlmopen_entry\n");

/* Does the object holding caller have DT_RPATH or DT_RUNPATH (its dlopen looks there)? */
static bool caller_has_paths(const void *caller)
{
	struct link_map *lm = NULL;
	Dl_info info;

	if (!dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm || !lm->l_ld)
		return true;
	for (const ElfW(Dyn) *d = lm->l_ld; d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_RPATH || d->d_tag == DT_RUNPATH)
			return true;
	return false;
}

int got_dlopen_direct(const char *file, const void *caller)
{
	if (!file)
		return 1;
	if (strchr(file, '$'))
		return 0;
	return strchr(file, '/') || !caller_has_paths(caller);
}

void *got_dlopen_call(const char *file, int mode)
{
	void *h = ((void *(*)(const char *, int))got_real_dlopen)(file, mode);

	if (h)
		agent_got_rescan();
	return h;
}

/* A d_ptr of the dynamic section: glibc relocates them in place, other loaders do not. */
static uintptr_t dyn_ptr(uintptr_t base, uintptr_t p)
{
	return p && p < base ? p + base : p;
}

static const struct target *target_of(const char *name)
{
	for (unsigned int i = 0; i < n_targets; i++)
		if (!strcmp(targets[i].name, name))
			return &targets[i];
	return NULL;
}

static bool remembered(const uintptr_t *addr)
{
	for (unsigned long i = 0; i < n_slots; i++)
		if (slots[i].addr == addr)
			return true;
	return false;
}

/* /proc/self/maps, read in pieces into a fixed buffer (no allocation). */
static char maps_buf[16384];

static uintptr_t parse_hex(const char **p, const char *end)
{
	uintptr_t v = 0;

	for (; *p < end; (*p)++) {
		char c = **p;

		if (c >= '0' && c <= '9')
			v = v * 16 + (uintptr_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (uintptr_t)(c - 'a' + 10);
		else
			break;
	}
	return v;
}

/*
 * The protection of the mapping holding addr, from /proc/self/maps: PROT_* bits, or -1
 * (unreadable, or not mapped).  An object still being relocated by another thread's dlopen
 * has its RELRO writable yet: such a page is written as it is, never protected by us.
 */
static int page_prot(uintptr_t addr)
{
	size_t have = 0;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC), prot = -1;

	if (fd < 0)
		return -1;
	for (;;) {
		ssize_t n = read(fd, maps_buf + have, sizeof(maps_buf) - have);
		const char *p = maps_buf, *end, *nl;

		if (n <= 0)
			break;
		end = maps_buf + have + n;
		while ((nl = memchr(p, '\n', (size_t)(end - p)))) {
			const char *q = p;
			uintptr_t lo = parse_hex(&q, nl), hi;

			if (q < nl && *q == '-') {
				q++;
				hi = parse_hex(&q, nl);
				if (addr >= lo && addr < hi && nl - q > 4) {
					q++;
					prot = (q[0] == 'r' ? PROT_READ : 0) |
					       (q[1] == 'w' ? PROT_WRITE : 0) |
					       (q[2] == 'x' ? PROT_EXEC : 0);
					goto out;
				}
			}
			p = nl + 1;
		}
		have = (size_t)(end - p);
		if (have == sizeof(maps_buf))
			break;		/* a line longer than the buffer: give up */
		memmove(maps_buf, p, have);
	}
out:
	close(fd);
	return prot;
}

/* Swap *addr from `from` to `to`, making its page writable for it when it is not. */
static bool swap_slot(uintptr_t *addr, uintptr_t from, uintptr_t to, bool relro)
{
	long page = sysconf(_SC_PAGESIZE);
	void *pg = (void *)((uintptr_t)addr & ~(uintptr_t)(page - 1));
	int prot = relro ? page_prot((uintptr_t)addr) : PROT_READ | PROT_WRITE;
	bool ok;

	if (prot < 0 || !(prot & PROT_READ))
		return false;
	if (!(prot & PROT_WRITE) && mprotect(pg, page, prot | PROT_WRITE))
		return false;
	ok = __atomic_compare_exchange_n(addr, &from, to, false, __ATOMIC_SEQ_CST,
					 __ATOMIC_SEQ_CST);
	if (!(prot & PROT_WRITE))
		mprotect(pg, page, prot);
	return ok;
}

struct object {
	uintptr_t base;
	const ElfW(Sym) *symtab;
	const char *strtab;
	size_t strsz;
	uintptr_t relro_lo, relro_hi;
	uintptr_t lo, hi;		/* extent of its PT_LOAD segments */
};

static void redirect_rela(const struct object *o, const ElfW(Rela) *rel, size_t bytes,
			  bool pointers_too)
{
	for (size_t i = 0; i < bytes / sizeof(*rel); i++) {
		unsigned long type = ELF64_R_TYPE(rel[i].r_info), sym = ELF64_R_SYM(rel[i].r_info);
		const struct target *t;
		uintptr_t *addr, old;
		bool relro;

		if (!sym || (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT &&
			     !(pointers_too && type == R_X86_64_64 && !rel[i].r_addend)))
			continue;
		if (o->symtab[sym].st_name >= o->strsz)
			continue;
		t = target_of(o->strtab + o->symtab[sym].st_name);
		addr = (uintptr_t *)(o->base + rel[i].r_offset);
		if (!t || (uintptr_t)addr < o->lo || (uintptr_t)addr + sizeof(*addr) > o->hi ||
		    remembered(addr))
			continue;
		old = __atomic_load_n(addr, __ATOMIC_RELAXED);
		/*
		 * A function pointer in data: only while it still holds what it was bound to.
		 * (No dladdr here: it takes the loader lock, which a dlopen holds while it
		 * waits for the lock this walk holds.)
		 */
		if (type == R_X86_64_64 && old != t->bound)
			continue;
		if (old == t->to)
			continue;
		if (n_slots == GOT_MAX_SLOTS) {
			n_dropped++;
			continue;
		}
		relro = (uintptr_t)addr >= o->relro_lo && (uintptr_t)addr < o->relro_hi;
		if (!swap_slot(addr, old, t->to, relro))
			continue;
		slots[n_slots++] = (struct slot){ addr, old, t->to, o->base, relro };
	}
}

static int redirect_object(struct dl_phdr_info *info, size_t size, void *data)
{
	const ElfW(Dyn) *dyn = NULL;
	uintptr_t rela = 0, jmprel = 0;
	size_t relasz = 0, pltrelsz = 0;
	struct object o = { .base = info->dlpi_addr, .lo = UINTPTR_MAX };

	if (info->dlpi_addr == self_base)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(o.base + ph->p_vaddr);
		else if (ph->p_type == PT_GNU_RELRO) {
			o.relro_lo = o.base + ph->p_vaddr;
			o.relro_hi = o.relro_lo + ph->p_memsz;
		} else if (ph->p_type == PT_LOAD) {
			if (o.base + ph->p_vaddr < o.lo)
				o.lo = o.base + ph->p_vaddr;
			if (o.base + ph->p_vaddr + ph->p_memsz > o.hi)
				o.hi = o.base + ph->p_vaddr + ph->p_memsz;
		}
	}
	if (!dyn)
		return 0;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB:
			o.symtab = (const ElfW(Sym) *)dyn_ptr(o.base, dyn->d_un.d_ptr);
			break;
		case DT_STRTAB:
			o.strtab = (const char *)dyn_ptr(o.base, dyn->d_un.d_ptr);
			break;
		case DT_STRSZ:
			o.strsz = dyn->d_un.d_val;
			break;
		case DT_RELA:
			rela = dyn_ptr(o.base, dyn->d_un.d_ptr);
			break;
		case DT_RELASZ:
			relasz = dyn->d_un.d_val;
			break;
		case DT_JMPREL:
			jmprel = dyn_ptr(o.base, dyn->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			pltrelsz = dyn->d_un.d_val;
			break;
		}
	}
	if (!o.symtab || !o.strtab)
		return 0;
	if (jmprel)
		redirect_rela(&o, (const ElfW(Rela) *)jmprel, pltrelsz, false);
	if (rela)
		redirect_rela(&o, (const ElfW(Rela) *)rela, relasz, true);
	return 0;
}

/* The hooks (agent_hooks[]: the names the agent defines), then the loader's two. */
static int find_targets(void)
{
	void *program = NULL;
	Dl_info di;
	int err = -ENOENT;

	if (!dladdr((void *)agent_got_redirect, &di))
		return -ENOENT;
	self_base = (uintptr_t)di.dli_fbase;
	/* The program's own scope (it and what it loaded globally): never the agent's. */
	program = dlopen(NULL, RTLD_NOW);
	if (!program)
		goto out;
	n_targets = 0;
	for (unsigned int i = 0; i < agent_n_hooks && n_targets < GOT_MAX_NAMES; i++) {
		const struct agent_hook *h = &agent_hooks[i];
		uintptr_t to = (uintptr_t)h->hook;
		void *bound = dlsym(program, h->name), *none = NULL;

		if (!to || (uintptr_t)bound == to)
			continue;
		/* A name nothing else defines is called by nobody: nothing to redirect. */
		if (!bound)
			continue;
		/*
		 * The hook's real function, when it has none yet (from a dlopen'ed agent
		 * RTLD_NEXT finds nothing): what the program's GOTs hold.
		 */
		__atomic_compare_exchange_n(h->real, &none, bound, false, __ATOMIC_ACQ_REL,
					    __ATOMIC_ACQUIRE);
		targets[n_targets++] = (struct target){ h->name, to, (uintptr_t)bound };
	}
	got_real_dlopen = dlsym(program, "dlopen");
	got_real_dlmopen = dlsym(program, "dlmopen");
	if (got_real_dlopen && n_targets < GOT_MAX_NAMES)
		targets[n_targets++] = (struct target){ "dlopen", (uintptr_t)got_dlopen_entry,
			(uintptr_t)got_real_dlopen };
	if (got_real_dlmopen && n_targets < GOT_MAX_NAMES)
		targets[n_targets++] = (struct target){ "dlmopen", (uintptr_t)got_dlmopen_entry,
			(uintptr_t)got_real_dlmopen };
	err = n_targets ? 0 : -ENOENT;
out:
	if (program)
		dlclose(program);
	return err;
}

int agent_got_redirect(void)
{
	int err = 0;

	pthread_mutex_lock(&got_lock);
	if (!active) {
		err = find_targets();
		if (!err) {
			active = true;
			got_rescan_pending = false;
			dl_iterate_phdr(redirect_object, NULL);
		}
	}
	pthread_mutex_unlock(&got_lock);
	return err;
}

void agent_got_rescan(void)
{
	pthread_mutex_lock(&got_lock);
	if (active) {
		got_rescan_pending = false;
		dl_iterate_phdr(redirect_object, NULL);
	}
	pthread_mutex_unlock(&got_lock);
}

/* Put one slot back, from inside the walk: its object cannot be unloaded meanwhile. */
static int restore_in(struct dl_phdr_info *info, size_t size, void *data)
{
	struct slot *s = data;
	uintptr_t addr = (uintptr_t)s->addr;

	if (info->dlpi_addr != s->base)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || addr < s->base + ph->p_vaddr ||
		    addr + sizeof(uintptr_t) > s->base + ph->p_vaddr + ph->p_memsz)
			continue;
		if (__atomic_load_n(s->addr, __ATOMIC_RELAXED) == s->to)
			swap_slot(s->addr, s->to, s->old, s->relro);
		return 1;
	}
	return 0;
}

void agent_got_restore(void)
{
	pthread_mutex_lock(&got_lock);
	if (active) {
		active = false;
		/* Newest first: a slot seen twice (its object reloaded) ends with its first value. */
		while (n_slots) {
			n_slots--;
			dl_iterate_phdr(restore_in, &slots[n_slots]);
		}
	}
	pthread_mutex_unlock(&got_lock);
}

unsigned long agent_got_slots(void)
{
	return __atomic_load_n(&n_slots, __ATOMIC_RELAXED);
}

unsigned long agent_got_dropped(void)
{
	return __atomic_load_n(&n_dropped, __ATOMIC_RELAXED);
}

int agent_got_slot(unsigned long i, uintptr_t *addr, uintptr_t *old, uintptr_t *to)
{
	int err = -ENOENT;

	pthread_mutex_lock(&got_lock);
	if (i < n_slots) {
		*addr = (uintptr_t)slots[i].addr;
		*old = slots[i].old;
		*to = slots[i].to;
		err = 0;
	}
	pthread_mutex_unlock(&got_lock);
	return err;
}
