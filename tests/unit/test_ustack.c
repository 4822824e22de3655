// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_ustack.c - unwinding a stopped thread in userspace: one step by each kind of CFI row
 * and by the frame pointer on fixed memory, and a real walk of a stopped child waiting below
 * a function that zeroes %rbp, which reaches the caller no frame pointer chain reaches.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/perf_event.h>

#include "check.h"
#include "live/procmaps.h"
#include "live/ptrace_stop.h"
#include "live/ustack.h"
#include "../progs/nofp_call.h"

/* Fixed memory: 64 words from BASE. */
#define BASE	0x7ff000001000ull
static uint64_t mem[64];

static int read_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (addr < BASE || addr + len > BASE + sizeof(mem) || len > sizeof(mem))
		return -EFAULT;
	memcpy(buf, (char *)mem + (addr - BASE), len);
	return 0;
}

static uint64_t at(unsigned int word)
{
	return BASE + 8ull * word;
}

static void test_ustack_rsp_row_takes_the_return_address_below_the_cfa(void)
{
	struct lt_unwind_row row = { .kind = LT_UW_RSP, .cfa = 3, .rbp = 0 };
	struct ustack_regs r = { .pc = 0x401000, .sp = at(4), .bp = 0x1234, .exact = true };
	struct ustack_frame f;

	memset(mem, 0, sizeof(mem));
	mem[6] = 0x402345;		/* CFA = sp + 24 = at(7); return address at(6) */
	CHECK_EQ_INT(ustack__step(&row, &r, read_mem, NULL, &f), 0);
	CHECK_EQ_INT(f.pc, 0x401000);
	CHECK_EQ_INT(f.sp, at(4));
	CHECK_EQ_INT(f.cfa, at(7));
	CHECK_EQ_INT(f.ret, 0x402345);
	CHECK(f.by_cfi);
	CHECK_EQ_INT(r.pc, 0x402345);
	CHECK_EQ_INT(r.sp, at(7));
	CHECK_EQ_INT(r.bp, 0x1234);		/* rbp 0: unchanged */
	CHECK(!r.exact);
}

static void test_ustack_rbp_row_restores_the_saved_rbp(void)
{
	struct lt_unwind_row row = { .kind = LT_UW_RBP, .cfa = 2, .rbp = -2 };
	struct ustack_regs r = { .pc = 0x401000, .sp = at(2), .bp = at(10) };
	struct ustack_frame f;

	memset(mem, 0, sizeof(mem));
	mem[10] = at(20);		/* saved rbp at CFA - 16 */
	mem[11] = 0x405000;		/* return address at CFA - 8 */
	CHECK_EQ_INT(ustack__step(&row, &r, read_mem, NULL, &f), 0);
	CHECK_EQ_INT(f.cfa, at(12));
	CHECK_EQ_INT(f.ret, 0x405000);
	CHECK_EQ_INT(r.bp, at(20));
	CHECK_EQ_INT(r.sp, at(12));
}

static void test_ustack_rbp_row_with_rbp_lost_leaves_no_frame_pointer(void)
{
	struct lt_unwind_row row = { .kind = LT_UW_RSP, .cfa = 1, .rbp = LT_UW_RBP_LOST };
	struct ustack_regs r = { .pc = 0x401000, .sp = at(2), .bp = at(10) };
	struct ustack_frame f;

	memset(mem, 0, sizeof(mem));
	mem[2] = 0x405000;
	CHECK_EQ_INT(ustack__step(&row, &r, read_mem, NULL, &f), 0);
	CHECK_EQ_INT(r.bp, 0);
}

static void test_ustack_without_a_row_follows_the_frame_pointer(void)
{
	struct ustack_regs r = { .pc = 0x401000, .sp = at(1), .bp = at(8) };
	struct ustack_frame f;

	memset(mem, 0, sizeof(mem));
	mem[8] = at(16);
	mem[9] = 0x406000;
	CHECK_EQ_INT(ustack__step(NULL, &r, read_mem, NULL, &f), 0);
	CHECK_EQ_INT(f.cfa, at(10));
	CHECK_EQ_INT(f.ret, 0x406000);
	CHECK(!f.by_cfi);
	CHECK_EQ_INT(r.bp, at(16));
	CHECK_EQ_INT(r.sp, at(10));
}

static void test_ustack_without_a_row_ends_at_a_zero_or_misaligned_rbp(void)
{
	struct ustack_regs r = { .pc = 0x401000, .sp = at(1), .bp = 0 };
	struct ustack_frame f;

	memset(mem, 0, sizeof(mem));
	CHECK_EQ_INT(ustack__step(NULL, &r, read_mem, NULL, &f), -ENOENT);
	r.bp = at(8) + 3;
	CHECK_EQ_INT(ustack__step(NULL, &r, read_mem, NULL, &f), -ENOENT);
	r.bp = at(0);			/* below the stack pointer */
	CHECK_EQ_INT(ustack__step(NULL, &r, read_mem, NULL, &f), -ENOENT);
}

static void test_ustack_outermost_row_and_zero_return_address_end_the_walk(void)
{
	struct lt_unwind_row outer = { .kind = LT_UW_OUTERMOST };
	struct lt_unwind_row row = { .kind = LT_UW_RSP, .cfa = 1 };
	struct ustack_regs r = { .pc = 0x401000, .sp = at(2) };
	struct ustack_frame f;

	memset(mem, 0, sizeof(mem));
	CHECK_EQ_INT(ustack__step(&outer, &r, read_mem, NULL, &f), -ENOENT);
	CHECK_EQ_INT(ustack__step(&row, &r, read_mem, NULL, &f), -ENOENT);	/* [at(2)] = 0 */
	CHECK_EQ_INT(r.pc, 0x401000);	/* an ended walk leaves the registers alone */
}

static void test_ustack_refuses_a_frame_that_does_not_go_up(void)
{
	struct lt_unwind_row row = { .kind = LT_UW_RBP, .cfa = 2 };
	struct ustack_regs r = { .pc = 0x401000, .sp = at(20), .bp = at(4) };
	struct ustack_frame f;

	memset(mem, 0, sizeof(mem));
	mem[5] = 0x405000;		/* CFA at(6) lies below the stack pointer */
	CHECK_EQ_INT(ustack__step(&row, &r, read_mem, NULL, &f), -ENOENT);
}

static void test_ustack_plt_row_counts_the_push_after_its_offset(void)
{
	struct lt_unwind_row row = { .kind = LT_UW_PLT, .cfa = 1, .rbp = 11 };
	struct ustack_regs r = { .pc = 0x401020 + 12, .sp = at(2), .bp = 0x77 };
	struct ustack_frame f;

	memset(mem, 0, sizeof(mem));
	mem[3] = 0x405000;		/* pc & 15 = 12 >= 11: CFA = sp + 16 */
	CHECK_EQ_INT(ustack__step(&row, &r, read_mem, NULL, &f), 0);
	CHECK_EQ_INT(f.cfa, at(4));
	CHECK_EQ_INT(r.bp, 0x77);
	r = (struct ustack_regs){ .pc = 0x401020 + 4, .sp = at(2), .bp = 0x77 };
	mem[2] = 0x406000;		/* 4 < 11: CFA = sp + 8 */
	CHECK_EQ_INT(ustack__step(&row, &r, read_mem, NULL, &f), 0);
	CHECK_EQ_INT(f.ret, 0x406000);
}

static void test_ustack_signal_frame_takes_the_interrupted_registers(void)
{
	struct lt_unwind_row row = { .kind = LT_UW_SIGNAL, .cfa = 4, .rbp = 2 };
	struct ustack_regs r = { .pc = 0x7f0000001000, .sp = at(0) };
	struct ustack_frame f;

	memset(mem, 0, sizeof(mem));
	mem[4] = at(40);		/* interrupted rsp */
	mem[5] = 0x401234;		/* interrupted rip */
	mem[2] = at(48);		/* interrupted rbp */
	CHECK_EQ_INT(ustack__step(&row, &r, read_mem, NULL, &f), 0);
	CHECK_EQ_INT(r.pc, 0x401234);
	CHECK_EQ_INT(r.sp, at(40));
	CHECK_EQ_INT(r.bp, at(48));
	CHECK(r.exact);			/* the interrupted pc is where it was, not a return */
}

/* ---------------------------------------------------------------- a real stopped thread */

/* Wait (a second at most) until process pid sleeps: the child has reached its pause(). */
static void wait_sleeping(pid_t pid)
{
	for (int i = 0; i < 1000; i++) {
		char path[64], state = 0;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		f = fopen(path, "r");
		if (f && fscanf(f, "%*d (%*[^)]) %c", &state) != 1)
			state = 0;
		if (f)
			fclose(f);
		if (state == 'S')
			return;
		usleep(1000);
	}
}

/*
 * Once child pid sleeps in its pause(): its maps (read then, with [uprobes] if it has one)
 * into *maps, an unwinder with its tables into *u, and the child stopped in *ps.  0 or -errno.
 */
static int stop_sleeping(pid_t pid, struct proc_maps *maps, struct ustack **u,
			 struct ptrace_stop *ps)
{
	char msg[256];
	int err;

	wait_sleeping(pid);
	err = procmaps__read(pid, maps);
	if (!err)
		err = ustack__new(u, pid);
	if (!err && !ustack__prepare(*u, maps, 10ull * 1000000000ull))
		err = -ENODATA;
	if (!err)
		err = ptrace_stop__begin(ps, pid, 2000, msg, sizeof(msg));
	return err;
}

static int ready_pipe[2];

static __attribute__((noinline)) void wait_forever(void)
{
	char c = 1;

	if (write(ready_pipe[1], &c, 1) != 1)
		_exit(1);
	for (;;)
		pause();
}

static __attribute__((noinline)) void holder(void)
{
	uint64_t ret = (uint64_t)__builtin_return_address(0);

	if (write(ready_pipe[1], &ret, sizeof(ret)) != sizeof(ret))
		_exit(1);
	nofp_call(wait_forever);
	__asm__ volatile("");
}

/*
 * The child waits in pause() below nofp_call: the walk must reach holder's frame and the
 * address it returns to (which holder told through the pipe).
 */
static void test_ustack_walk_reaches_frames_above_code_without_frame_pointer(void)
{
	struct ustack_frame frames[USTACK_MAX_FRAMES];
	struct proc_maps maps = {};
	struct ustack *u = NULL;
	struct ptrace_stop ps;
	uint64_t holder_ret = 0;
	size_t n = 0, found = 0;
	char c;
	pid_t pid;
	int err;

	CHECK_EQ_INT(pipe(ready_pipe), 0);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		holder();
		_exit(0);
	}
	close(ready_pipe[1]);
	err = read(ready_pipe[0], &holder_ret, sizeof(holder_ret)) == sizeof(holder_ret) &&
	      read(ready_pipe[0], &c, 1) == 1 ? 0 : -EIO;
	close(ready_pipe[0]);
	/* pause() is entered right after the byte. */
	if (!err)
		err = stop_sleeping(pid, &maps, &u, &ps);
	if (!err) {
		n = ustack__walk(u, &maps, &ps, &ps.threads[0], NULL, frames,
				 USTACK_MAX_FRAMES);
		for (size_t k = 0; k < n; k++)
			found += frames[k].ret == holder_ret;
		ptrace_stop__end(&ps);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	ustack__free(u);
	procmaps__free(&maps);
	CHECK_EQ_INT(err, 0);
	CHECK(n >= 4);			/* pause, wait_forever, nofp_call, holder, main, ... */
	CHECK_EQ_INT(found, 1);
	for (size_t k = 1; k < n; k++)
		CHECK(frames[k].sp == frames[k - 1].cfa);
}

/* ---------------------------------------------------------------- below a uretprobe */

static int to_parent[2], to_child[2];

static void say_word(uint64_t v)
{
	if (write(to_parent[1], &v, sizeof(v)) != sizeof(v))
		_exit(1);
}

/* Probed by a uretprobe from the second call on: then its return address is the trampoline. */
static __attribute__((noinline)) void probed_wait(int round)
{
	if (!round) {
		say_word((uint64_t)__builtin_return_address(0));	/* still the real one */
		return;
	}
	say_word((uint64_t)__builtin_frame_address(0) + 8);	/* where it is kept */
	for (;;)
		pause();
}

static __attribute__((noinline)) void probed_holder(void)
{
	char c;

	say_word((uint64_t)__builtin_return_address(0));
	for (int round = 0; round < 2; round++) {
		probed_wait(round);
		if (!round && read(to_child[0], &c, 1) != 1)
			_exit(1);
	}
}

/* A uretprobe on this executable's probed_wait, for process pid: a perf event fd, or -errno. */
static int uretprobe_on(pid_t pid, void (*fn)(int))
{
	struct perf_event_attr attr = { .size = sizeof(attr) };
	const struct proc_map *m;
	struct proc_maps maps = {};
	char exe[4096];
	ssize_t len;
	FILE *f;
	int type = -1, fd;

	f = fopen("/sys/bus/event_source/devices/uprobe/type", "r");
	if (!f || fscanf(f, "%d", &type) != 1)
		type = -1;
	if (f)
		fclose(f);
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (type < 0 || len <= 0 || procmaps__read(getpid(), &maps))
		return -ENOENT;
	exe[len] = '\0';
	m = procmaps__find(&maps, (uint64_t)fn);
	attr.type = type;
	attr.config = 1;			/* format/retprobe: config:0 */
	attr.uprobe_path = (uint64_t)exe;
	attr.probe_offset = m ? (uint64_t)fn - m->start + m->file_offset : 0;
	fd = m ? (int)syscall(SYS_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC) : -1;
	procmaps__free(&maps);
	return fd >= 0 ? fd : -errno;
}

/*
 * The child waits inside probed_wait, whose return address a uretprobe replaced with the
 * kernel's trampoline: without a fixup the walk ends there (it never follows [uprobes]);
 * with the original address at its slot it reaches probed_holder's frame and return.
 */
static void test_ustack_walk_through_a_uretprobe_needs_the_original_return_address(void)
{
	struct ustack_frame frames[USTACK_MAX_FRAMES];
	struct ustack_fixup fix = {};
	struct proc_maps maps = {};
	struct ustack *u = NULL;
	struct ptrace_stop ps;
	uint64_t holder_ret = 0;
	size_t n_plain = 0, n_fixed = 0, found_plain = 0, found_fixed = 0;
	int err = 0, probe = -1;
	pid_t pid;

	CHECK_EQ_INT(pipe(to_parent), 0);
	CHECK_EQ_INT(pipe(to_child), 0);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		probed_holder();
		_exit(0);
	}
	close(to_parent[1]);
	close(to_child[0]);
	if (read(to_parent[0], &holder_ret, 8) != 8 || read(to_parent[0], &fix.ra, 8) != 8)
		err = -EIO;
	if (!err) {
		probe = uretprobe_on(pid, probed_wait);
		err = probe < 0 ? probe : 0;
	}
	if (!err)
		err = write(to_child[1], "g", 1) == 1 && read(to_parent[0], &fix.slot, 8) == 8 ?
		      0 : -EIO;
	if (!err)
		err = stop_sleeping(pid, &maps, &u, &ps);
	if (!err) {
		const struct ptrace_thread *t = &ps.threads[0];

		n_plain = ustack__walk(u, &maps, &ps, t, NULL, frames, USTACK_MAX_FRAMES);
		for (size_t k = 0; k < n_plain; k++)
			found_plain += frames[k].ret == holder_ret;
		n_fixed = ustack__walk(u, &maps, &ps, t, &fix, frames, USTACK_MAX_FRAMES);
		for (size_t k = 0; k < n_fixed; k++)
			found_fixed += frames[k].ret == holder_ret;
		ptrace_stop__end(&ps);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	if (probe >= 0)
		close(probe);
	close(to_parent[0]);
	close(to_child[1]);
	ustack__free(u);
	procmaps__free(&maps);
	CHECK_EQ_INT(err, 0);
	CHECK(fix.ra && fix.slot);
	CHECK_EQ_INT(found_plain, 0);
	CHECK(n_plain >= 1);		/* pause; probed_wait returns to the trampoline */
	CHECK_EQ_INT(found_fixed, 1);
	CHECK(n_fixed > n_plain);
}

int main(void)
{
	RUN(test_ustack_rsp_row_takes_the_return_address_below_the_cfa);
	RUN(test_ustack_rbp_row_restores_the_saved_rbp);
	RUN(test_ustack_rbp_row_with_rbp_lost_leaves_no_frame_pointer);
	RUN(test_ustack_without_a_row_follows_the_frame_pointer);
	RUN(test_ustack_without_a_row_ends_at_a_zero_or_misaligned_rbp);
	RUN(test_ustack_outermost_row_and_zero_return_address_end_the_walk);
	RUN(test_ustack_refuses_a_frame_that_does_not_go_up);
	RUN(test_ustack_plt_row_counts_the_push_after_its_offset);
	RUN(test_ustack_signal_frame_takes_the_interrupted_registers);
	RUN(test_ustack_walk_reaches_frames_above_code_without_frame_pointer);
	RUN(test_ustack_walk_through_a_uretprobe_needs_the_original_return_address);
	CHECK_EXIT();
}
