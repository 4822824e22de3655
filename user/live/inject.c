// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * inject.c - loads leaktop's agent into a running process (`-p PID --agent`) and stops it
 * again: calls made by one of the process's own threads, under ptrace.
 *
 * The process's dlopen, dlsym and dlerror are found in the C library it maps (opened through
 * live/libcs.c: the very file mapped, checked by device and inode; its .dynsym read with
 * libelf), at the address of the executable mapping of that file holding them.  One thread
 * (the leader, or another if the leader is gone) is seized and interrupted.  A call is only
 * made from a point where the thread holds no lock of the allocator's or the loader's as far
 * as can be told: blocked in a system call, or entering one, that is not one an allocator
 * makes holding its lock (mmap, munmap, mremap, brk, madvise, mprotect), nor a futex, clone,
 * exec or exit.  A thread running user code is let run (PTRACE_SYSCALL) until it enters such
 * a call, within INJECT_SAFE_POINT_MS; else nothing is done.
 *
 * A call: the thread's registers with rip at the function, the arguments in rdi, rsi, and the
 * stack pointer below the thread's red zone, 16-byte aligned at the call, on a return address
 * that is never mapped (RETURN_ADDR, inside the first page, which the kernel keeps unmapped:
 * checked in the maps); the data (the agent's path, the symbol names) just above it.  The
 * call ends in the SIGSEGV of that return, which is caught at its delivery stop and never
 * delivered.  Signals that arrive meanwhile are handed back at detach.  Afterwards every
 * register is put back (the general ones, and the whole XSAVE area: vector registers too);
 * a system call the thread was blocked in is restarted as the kernel would have restarted
 * it (the saved registers carry the restart), one it was entering is entered again (rip back
 * over its two-byte syscall instruction).  No code is written: only the stack below the red
 * zone, which the thread does not use.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <elf.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <dlfcn.h>

#include "live/inject.h"
#include "live/libcs.h"
#include "live/procmaps.h"
#include "live/safe_open.h"
#include "util/clock.h"
#include "util/msg.h"

#ifndef NT_X86_XSTATE
#define NT_X86_XSTATE		0x202
#endif
#ifndef VERSYM_HIDDEN
#define VERSYM_HIDDEN		0x8000
#endif

/* The return address of every call: in the first page, never mapped (checked). */
#define RETURN_ADDR		0x10ull
/* x86-64's red zone, below the stack pointer, which the interrupted code may be using. */
#define RED_ZONE		128u
/* Stack the called functions may use below the call, at least, in the thread's stack. */
#define CALL_STACK_MIN		(64u << 10)
/* The XSAVE area: large enough for every feature (AMX tiles included). */
#define XSTATE_MAX		(32u << 10)
/* An errno the agent returns is small; a pointer or a descriptor is not negative. */
#define MAX_ERRNO		4095

/* The libc functions called, found in its .dynsym. */
enum { FN_DLOPEN, FN_DLSYM, FN_DLERROR, FN__COUNT };
static const char *const libc_fns[FN__COUNT] = { "dlopen", "dlsym", "dlerror" };

/* Syscalls a thread must not be held in for a call (see the file's comment): a table. */
static const long unsafe_syscalls[] = {
	SYS_mmap, SYS_munmap, SYS_mremap, SYS_brk, SYS_madvise, SYS_mprotect, SYS_futex,
	SYS_clone, SYS_clone3, SYS_fork, SYS_vfork, SYS_execve, SYS_execveat, SYS_exit,
	SYS_exit_group, SYS_rt_sigreturn, SYS_munlock, SYS_mlock,
};

int inject__syscall_is_safe(long nr)
{
	if (nr < 0)
		return 0;
	for (size_t i = 0; i < sizeof(unsafe_syscalls) / sizeof(unsafe_syscalls[0]); i++)
		if (unsafe_syscalls[i] == nr)
			return 0;
	return 1;
}

uint64_t inject__call_sp(uint64_t sp, size_t reserve, uint64_t *data_at)
{
	uint64_t data = (sp - RED_ZONE - reserve) & ~15ull;

	*data_at = data;
	/* At a function's entry, rsp + 8 is 16-byte aligned: the return address sits there. */
	return data - 8;
}

/* The thread making the calls, and what it is put back to. */
struct call_thread {
	int pid, tid;
	int sig;				/* a signal to hand back at detach (0: none) */
	bool seized;
	bool running;				/* resumed by us, not stopped */
	bool have_regs;				/* resume holds its registers */
	struct user_regs_struct resume;		/* the registers it runs on with */
	struct user_regs_struct base;		/* the registers calls start from */
	uint8_t *xstate;
	size_t xstate_len;
	uint64_t call_sp, data_at;
	uint64_t seized_ns;
};

/* Wait for tid's next stop (or end) until deadline_ns: 0, -ETIME, -ESRCH (it ended). */
static int wait_stop(int tid, uint64_t deadline_ns, int *status)
{
	struct timespec nap = { 0, 50 * 1000 };

	for (;;) {
		int r = waitpid(tid, status, __WALL | WNOHANG);

		if (r < 0)
			return -errno;
		if (r == tid)
			return WIFSTOPPED(*status) ? 0 : -ESRCH;
		if (monotonic_ns() > deadline_ns)
			return -ETIME;
		nanosleep(&nap, NULL);
		if (nap.tv_nsec < 1000 * 1000)
			nap.tv_nsec *= 2;
	}
}

/* The thread to make the calls: the leader, unless it has exited (a zombie leader). */
static int pick_thread(int pid)
{
	char path[64], buf[512], *p;
	struct dirent *de;
	int tid = -ESRCH;
	FILE *f;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	if (p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X')
		return pid;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -ESRCH;
	while ((de = readdir(d)))
		if (atoi(de->d_name) > 0 && atoi(de->d_name) != pid) {
			tid = atoi(de->d_name);
			break;
		}
	closedir(d);
	return tid;
}

static int read_mem(int pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

static int write_mem(int pid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = { (void *)buf, len }, remote = { (void *)(uintptr_t)addr, len };

	return process_vm_writev(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

/*
 * The runtime addresses of libc_fns in pid, from the C library it maps.  0, or -errno with
 * msg.
 */
static int find_libc_fns(int pid, uint64_t addr[FN__COUNT], char *msg, size_t msg_len)
{
	struct libc_ref refs[4];
	struct proc_maps maps = {};
	uint64_t vaddr[FN__COUNT] = { 0 };
	bool hidden[FN__COUNT] = { false };
	Elf_Scn *scn = NULL, *dynsym = NULL, *versym_scn = NULL;
	Elf_Data *syms, *versym = NULL;
	Elf *elf = NULL;
	GElf_Shdr sh;
	char why[256];
	size_t n = 0, count, nph;
	int fd = -1, err;

	err = libcs__of_pid(pid, refs, 4, &n);
	if (err)
		return msg__set(msg, msg_len, err, "cannot read the maps of process %d: %s", pid,
				strerror(-err));
	if (!n)
		return msg__set(msg, msg_len, -ENOENT, "process %d maps no C library (static "
				"executable?): --agent needs its dlopen; use -p without --agent", pid);
	err = libcs__open(&refs[0], &fd, why, sizeof(why));
	if (err)
		return msg__set(msg, msg_len, err, "%s", why);
	if (elf_version(EV_CURRENT) == EV_NONE) {
		err = msg__set(msg, msg_len, -EINVAL, "libelf is unusable");
		goto out;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64) {
		err = msg__set(msg, msg_len, -ENOEXEC, "the C library of process %d is not a "
			       "64-bit ELF file", pid);
		goto out;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_DYNSYM && !dynsym)
			dynsym = scn;
		else if (sh.sh_type == SHT_GNU_versym && !versym_scn)
			versym_scn = scn;
	}
	if (!dynsym || !gelf_getshdr(dynsym, &sh) || !sh.sh_entsize ||
	    !(syms = elf_getdata(dynsym, NULL))) {
		err = msg__set(msg, msg_len, -ENOENT, "the C library of process %d has no "
			       "dynamic symbols", pid);
		goto out;
	}
	if (versym_scn)
		versym = elf_getdata(versym_scn, NULL);
	count = sh.sh_size / sh.sh_entsize;
	for (size_t i = 1; i < count; i++) {
		GElf_Sym sym;
		GElf_Versym vs = 0;
		const char *name;

		if (!gelf_getsym(syms, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
		    GELF_ST_TYPE(sym.st_info) != STT_FUNC)
			continue;
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (!name)
			continue;
		if (versym && !gelf_getversym(versym, (int)i, &vs))
			continue;
		for (int f = 0; f < FN__COUNT; f++) {
			if (strcmp(name, libc_fns[f]))
				continue;
			/* The default version wins over a hidden (compatibility) one. */
			if (vaddr[f] && (vs & VERSYM_HIDDEN || !hidden[f]))
				continue;
			vaddr[f] = sym.st_value;
			hidden[f] = vs & VERSYM_HIDDEN;
		}
	}
	err = procmaps__read(pid, &maps);
	if (err) {
		msg__set(msg, msg_len, err, "process %d exited", pid);
		goto out;
	}
	if (elf_getphdrnum(elf, &nph))
		nph = 0;
	for (int f = 0; f < FN__COUNT; f++) {
		uint64_t off = UINT64_MAX;

		if (!vaddr[f]) {
			err = msg__set(msg, msg_len, -ENOENT, "the C library of process %d (%s) "
				       "has no %s (glibc before 2.34 keeps it in libdl): --agent "
				       "cannot load into it; use -p without --agent", pid,
				       refs[0].path, libc_fns[f]);
			goto out;
		}
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
			    !(ph.p_flags & PF_X) || vaddr[f] < ph.p_vaddr ||
			    vaddr[f] - ph.p_vaddr >= ph.p_filesz)
				continue;
			off = vaddr[f] - ph.p_vaddr + ph.p_offset;
		}
		addr[f] = 0;
		for (size_t i = 0; off != UINT64_MAX && i < maps.n; i++) {
			const struct proc_map *m = &maps.v[i];

			if (m->dev == refs[0].dev && m->ino == refs[0].ino && m->executable &&
			    off >= m->file_offset && off - m->file_offset < m->end - m->start)
				addr[f] = m->start + (off - m->file_offset);
		}
		if (!addr[f]) {
			err = msg__set(msg, msg_len, -ENOENT, "%s of process %d's C library is "
				       "not mapped where its file says", libc_fns[f], pid);
			goto out;
		}
	}
	/* The return address must fault: nothing mapped there. */
	if (procmaps__find(&maps, RETURN_ADDR)) {
		err = msg__set(msg, msg_len, -EEXIST, "process %d maps its first page "
			       "(vm.mmap_min_addr=0?): --agent cannot call into it", pid);
		goto out;
	}
	err = 0;
out:
	procmaps__free(&maps);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return err;
}

int inject__check_path(int pid, const char *path, char *msg, size_t msg_len)
{
	struct file_id want;
	struct statvfs vfs;
	struct stat st;
	int fd = -1, err;

	if (path[0] != '/' || stat(path, &st))
		return msg__set(msg, msg_len, -ENOENT, "the agent %s is missing: run `make` "
				"(or `make install`) first", path);
	if (!S_ISREG(st.st_mode) || !(st.st_mode & S_IROTH))
		return msg__set(msg, msg_len, -EACCES, "the agent %s is not a regular file "
				"everyone may read: reinstall leaktop", path);
	want.dev = st.st_dev;
	want.ino = st.st_ino;
	err = safe_open__in_root(pid, path, &want, &fd);
	if (err == -ESRCH)
		return msg__set(msg, msg_len, err, "process %d does not exist", pid);
	if (err)
		return msg__set(msg, msg_len, err, "process %d does not see leaktop's agent at "
				"%s (another mount namespace or root, a container?): --agent "
				"cannot load into it; use -p without --agent", pid, path);
	if (!fstatvfs(fd, &vfs) && (vfs.f_flag & ST_NOEXEC))
		err = msg__set(msg, msg_len, -EACCES, "the agent %s is on a noexec mount in "
			       "process %d's namespace: install leaktop elsewhere", path, pid);
	close(fd);
	return err;
}

/* Stop the thread where a call is safe (see the file's comment).  0 or -errno, msg. */
static int seize_at_safe_point(struct call_thread *t, char *msg, size_t msg_len)
{
	uint64_t deadline = monotonic_ns() + INJECT_SAFE_POINT_MS * 1000000ull;
	struct __ptrace_syscall_info info;
	int status, err;

	if (ptrace(PTRACE_SEIZE, t->tid, NULL, (void *)(long)PTRACE_O_TRACESYSGOOD)) {
		err = -errno;
		if (err == -ESRCH)
			return msg__set(msg, msg_len, err, "process %d exited", t->pid);
		return msg__set(msg, msg_len, err, "cannot ptrace process %d: %s (traced by a "
				"debugger already, or kernel.yama.ptrace_scope=3)", t->pid,
				strerror(-err));
	}
	t->seized = true;
	t->seized_ns = monotonic_ns();
	if (ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL))
		return msg__set(msg, msg_len, -errno, "cannot interrupt process %d: %s", t->pid,
				strerror(errno));
	t->running = true;
	for (;;) {
		int sig, event;

		err = wait_stop(t->tid, deadline, &status);
		if (err == -ETIME)
			break;
		t->running = false;
		if (err)
			return msg__set(msg, msg_len, err, "process %d exited", t->pid);
		sig = WSTOPSIG(status);
		event = status >> 16;
		if (event == PTRACE_EVENT_STOP) {
			if (sig != SIGTRAP)	/* a group stop: SIGSTOP, SIGTSTP, ... */
				return msg__set(msg, msg_len, -EAGAIN, "process %d is stopped "
						"(job control): resume it (kill -CONT %d) first",
						t->pid, t->pid);
			if (ptrace(PTRACE_GETREGS, t->tid, NULL, &t->base))
				return msg__set(msg, msg_len, -errno, "cannot read the registers "
						"of process %d", t->pid);
			/* Blocked in a safe call: restarted as the kernel would do it. */
			if ((long)t->base.orig_rax >= 0 &&
			    inject__syscall_is_safe((long)t->base.orig_rax)) {
				t->resume = t->base;
				t->have_regs = true;
				return 0;
			}
			sig = 0;
		} else if (sig == (SIGTRAP | 0x80)) {
			if (ptrace(PTRACE_GET_SYSCALL_INFO, t->tid, (void *)sizeof(info), &info) > 0 &&
			    info.op == PTRACE_SYSCALL_INFO_ENTRY &&
			    inject__syscall_is_safe((long)info.entry.nr)) {
				uint8_t insn[2];

				if (ptrace(PTRACE_GETREGS, t->tid, NULL, &t->base))
					return msg__set(msg, msg_len, -errno, "cannot read the "
							"registers of process %d", t->pid);
				/* Entering it: entered again at the end, from its syscall insn. */
				if (!read_mem(t->pid, t->base.rip - 2, insn, 2) &&
				    insn[0] == 0x0f && insn[1] == 0x05) {
					t->resume = t->base;
					t->resume.rip -= 2;
					t->resume.rax = t->base.orig_rax;
					t->resume.orig_rax = -1;
					t->have_regs = true;
					return 0;
				}
			}
			sig = 0;
		}
		/* Elsewhere: on to the next system call, any signal delivered as it came. */
		if (ptrace(PTRACE_SYSCALL, t->tid, NULL, (void *)(long)sig))
			return msg__set(msg, msg_len, -errno, "process %d exited", t->pid);
		t->running = true;
	}
	return msg__set(msg, msg_len, -ETIME, "process %d never waited in a system call within "
			"%u ms (busy in its own code, or in locks): --agent cannot load into it "
			"now; try again, or use -p without --agent", t->pid, INJECT_SAFE_POINT_MS);
}

/*
 * Put the thread back as it was and let it go (interrupting it first if it runs).  Errors are
 * only ignored: the thread is ours no longer either way.
 */
static void release(struct call_thread *t)
{
	int status;

	if (!t->seized)
		return;
	if (t->running) {
		ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL);
		if (wait_stop(t->tid, monotonic_ns() + 1000000000ull, &status))
			goto detach;
		/* A signal on its way in: handed back at detach. */
		if (!(status >> 16) && WSTOPSIG(status) != (SIGTRAP | 0x80) && !t->sig)
			t->sig = WSTOPSIG(status);
	}
	if (t->have_regs && t->xstate_len) {
		struct iovec io = { t->xstate, t->xstate_len };

		ptrace(PTRACE_SETREGSET, t->tid, (void *)NT_X86_XSTATE, &io);
	}
	if (t->have_regs)
		ptrace(PTRACE_SETREGS, t->tid, NULL, &t->resume);
detach:
	ptrace(PTRACE_DETACH, t->tid, NULL, (void *)(long)t->sig);
	t->seized = false;
}

/* Prepare the calls: the vector state saved, the stack checked, the data written. */
static int prepare_calls(struct call_thread *t, const void *data, size_t len, char *msg,
			 size_t msg_len)
{
	struct proc_maps maps = {};
	const struct proc_map *m;
	struct iovec io;
	uint64_t ret = RETURN_ADDR;
	int err;

	t->xstate = calloc(1, XSTATE_MAX);
	if (!t->xstate)
		return msg__set(msg, msg_len, -ENOMEM, "out of memory");
	io.iov_base = t->xstate;
	io.iov_len = XSTATE_MAX;
	if (ptrace(PTRACE_GETREGSET, t->tid, (void *)NT_X86_XSTATE, &io))
		return msg__set(msg, msg_len, -errno, "cannot read the vector registers of "
				"process %d: %s", t->pid, strerror(errno));
	t->xstate_len = io.iov_len;
	t->call_sp = inject__call_sp(t->base.rsp, len, &t->data_at);
	err = procmaps__read(t->pid, &maps);
	if (err)
		return msg__set(msg, msg_len, err, "process %d exited", t->pid);
	m = procmaps__find(&maps, t->base.rsp - 1);
	/* The main stack grows on demand; any other must hold the call. */
	if (!m || !m->writable || (!(m->path && !strcmp(m->path, "[stack]")) &&
				   t->call_sp - m->start < CALL_STACK_MIN))
		err = msg__set(msg, msg_len, -ENOSPC, "the stack of process %d's thread %d has "
			       "no room for a call (a small coroutine stack?): try again later",
			       t->pid, t->tid);
	procmaps__free(&maps);
	if (err)
		return err;
	if (write_mem(t->pid, t->data_at, data, len) ||
	    write_mem(t->pid, t->call_sp, &ret, sizeof(ret)))
		return msg__set(msg, msg_len, -EFAULT, "cannot write to the stack of process %d",
				t->pid);
	return 0;
}

/*
 * Call fn(a0, a1) in the stopped thread; its return value into *ret.  0, -ETIME (did not
 * return in time: the thread is still in it), -EFAULT (it crashed: *ret is the rip), -ESRCH.
 */
static int remote_call(struct call_thread *t, uint64_t fn, uint64_t a0, uint64_t a1,
		       uint64_t *ret)
{
	uint64_t deadline = monotonic_ns() + INJECT_CALL_MS * 1000000ull;
	struct user_regs_struct regs = t->base;
	int status, err;

	regs.rip = fn;
	regs.rdi = a0;
	regs.rsi = a1;
	regs.rax = 0;
	regs.orig_rax = -1;		/* no syscall restart, no syscall entered */
	regs.rsp = t->call_sp;
	regs.eflags &= ~(0x400ull | 0x100ull);	/* DF clear (the ABI), no single step */
	if (ptrace(PTRACE_SETREGS, t->tid, NULL, &regs) || ptrace(PTRACE_CONT, t->tid, NULL, NULL))
		return errno == ESRCH ? -ESRCH : -EFAULT;
	t->running = true;
	for (;;) {
		int sig;

		err = wait_stop(t->tid, deadline, &status);
		if (err)
			return err;
		t->running = false;
		sig = WSTOPSIG(status);
		if (!(status >> 16) && (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL ||
					sig == SIGFPE || sig == SIGABRT)) {
			if (ptrace(PTRACE_GETREGS, t->tid, NULL, &regs))
				return -ESRCH;
			if (sig == SIGSEGV && regs.rip == RETURN_ADDR) {
				*ret = regs.rax;
				return 0;
			}
			*ret = regs.rip;
			return -EFAULT;
		}
		/* Other signals wait until the thread is back; stops of ours go on. */
		if (!(status >> 16) && sig != (SIGTRAP | 0x80) && !t->sig)
			t->sig = sig;
		if (ptrace(PTRACE_CONT, t->tid, NULL, NULL))
			return -ESRCH;
		t->running = true;
	}
}

/* A failed call's line. */
static int call_failed(struct call_thread *t, const char *what, int err, uint64_t ret,
		       char *msg, size_t msg_len)
{
	if (err == -ETIME)
		return msg__set(msg, msg_len, err, "%s in process %d did not return within %u ms "
				"(a lock held elsewhere?): the thread was put back where it was",
				what, t->pid, INJECT_CALL_MS);
	if (err == -ESRCH)
		return msg__set(msg, msg_len, err, "process %d exited during %s", t->pid, what);
	return msg__set(msg, msg_len, err, "%s crashed in process %d at 0x%" PRIx64 ": the "
			"thread was put back where it was", what, t->pid, ret);
}

/* The string at addr in the process, control characters escaped by the printer. */
static void read_string(int pid, uint64_t addr, char *buf, size_t len)
{
	buf[0] = 0;
	if (!addr)
		return;
	for (size_t i = 0; i + 1 < len; i++) {
		if (read_mem(pid, addr + i, &buf[i], 1) || !buf[i]) {
			buf[i] = 0;
			return;
		}
		buf[i + 1] = 0;
	}
}

/* Data for the calls: path, then the names, each NUL-terminated, at fixed offsets. */
struct call_data {
	char start_name[24];
	char stop_name[24];
	char path[4096];
};

static int begin_calls(int pid, struct call_thread *t, uint64_t fns[FN__COUNT],
		       const struct call_data *d, char *msg, size_t msg_len)
{
	int err;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	err = find_libc_fns(pid, fns, msg, msg_len);
	if (err)
		return err;
	t->tid = pick_thread(pid);
	if (t->tid < 0)
		return msg__set(msg, msg_len, -ESRCH, "process %d does not exist", pid);
	err = seize_at_safe_point(t, msg, msg_len);
	if (!err)
		err = prepare_calls(t, d, sizeof(*d), msg, msg_len);
	return err;
}

static void end_calls(struct call_thread *t)
{
	release(t);
	free(t->xstate);
	t->xstate = NULL;
}

#define DATA_ADDR(t, field)	((t)->data_at + offsetof(struct call_data, field))

int inject__start_here(int pid, const char *path, struct inject_agent *out,
		       inject_abandoned_fn abandoned, void *ctx, char *msg, size_t msg_len)
{
	struct call_thread t;
	struct call_data d = { "leaktop_agent_start", "leaktop_agent_stop", "" };
	uint64_t fns[FN__COUNT], handle = 0, start = 0, stop = 0, ret = 0;
	char dlerr[256];
	int err, fd;

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	out->target_fd = out->local_fd = -1;
	if (strlen(path) >= sizeof(d.path))
		return msg__set(msg, msg_len, -ENAMETOOLONG, "the agent's path is too long");
	err = inject__check_path(pid, path, msg, msg_len);
	if (err)
		return err;
	strcpy(d.path, path);
	err = begin_calls(pid, &t, fns, &d, msg, msg_len);
	if (err)
		goto out;
	/* Nobody to hand the agent to: the thread is put back untouched. */
	if (abandoned(ctx)) {
		err = msg__set(msg, msg_len, -ECANCELED, "leaktop ended before the agent went in");
		goto out;
	}

	err = remote_call(&t, fns[FN_DLOPEN], DATA_ADDR(&t, path), RTLD_NOW | RTLD_LOCAL,
			  &handle);
	if (err) {
		call_failed(&t, "dlopen", err, handle, msg, msg_len);
		goto out;
	}
	if (!handle) {
		if (!remote_call(&t, fns[FN_DLERROR], 0, 0, &ret))
			read_string(pid, ret, dlerr, sizeof(dlerr));
		else
			snprintf(dlerr, sizeof(dlerr), "no reason given");
		err = msg__set(msg, msg_len, -ENOEXEC, "process %d could not load the agent: %s",
			       pid, dlerr);
		goto out;
	}
	err = remote_call(&t, fns[FN_DLSYM], handle, DATA_ADDR(&t, start_name), &start);
	if (!err)
		err = remote_call(&t, fns[FN_DLSYM], handle, DATA_ADDR(&t, stop_name), &stop);
	if (err || !start || !stop) {
		err = err ? call_failed(&t, "dlsym", err, start, msg, msg_len) :
			msg__set(msg, msg_len, -ENOEXEC, "the agent loaded into process %d lacks "
				 "leaktop_agent_start/stop: reinstall leaktop", pid);
		goto out;
	}
	/* The agent loaded stays inert unless started: leaktop gone, it is not started. */
	if (abandoned(ctx)) {
		err = msg__set(msg, msg_len, -ECANCELED, "leaktop ended before the agent started");
		goto out;
	}
	err = remote_call(&t, start, LT_AGENT_INJECTED, 0, &ret);
	if (err) {
		call_failed(&t, "leaktop_agent_start", err, ret, msg, msg_len);
		goto out;
	}
	fd = (int)(int32_t)ret;
	if (fd < 0) {
		err = msg__set(msg, msg_len, fd < -MAX_ERRNO ? -EINVAL : fd, "the agent in "
			       "process %d did not start: %s", pid, strerror(fd < -MAX_ERRNO ?
								      EINVAL : -fd));
		goto out;
	}
	/* Started, and leaktop gone meanwhile: stopped again before the thread goes. */
	if (abandoned(ctx)) {
		remote_call(&t, stop, 0, 0, &ret);
		err = msg__set(msg, msg_len, -ECANCELED, "leaktop ended while the agent started: "
			       "it was stopped again");
		goto out;
	}
	out->target_fd = fd;
	out->stop_addr = stop;
	out->handle = handle;
out:
	out->stopped_ms = t.seized_ns ? (monotonic_ns() - t.seized_ns) / 1e6 : 0;
	end_calls(&t);
	return err;
}

int inject__stop_here(const struct inject_agent *a, char *msg, size_t msg_len)
{
	struct call_thread t;
	struct call_data d = { "", "", "" };
	uint64_t fns[FN__COUNT], ret = 0;
	int err;

	if (!a->stop_addr)
		return 0;
	err = begin_calls(a->pid, &t, fns, &d, msg, msg_len);
	if (!err) {
		err = remote_call(&t, a->stop_addr, 0, 0, &ret);
		if (err)
			call_failed(&t, "leaktop_agent_stop", err, ret, msg, msg_len);
	}
	end_calls(&t);
	return err;
}
