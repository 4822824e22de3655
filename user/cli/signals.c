// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * signals.c - the live run's signal handlers.  The first stop signal sets a flag every
 * stretch of work looks at (event delivery, the collect budget, the poll slices), so the loop
 * ends within about a slice and writes the final report.  A second one ends leaktop at once:
 * only async-signal-safe calls from there; the probes are file descriptors the kernel
 * removes, a snapshot being written is discarded (the previous one stays), processes held at
 * exec are released.  A crash releases them too, then takes the default action.
 */
#include <unistd.h>

#include "cli/signals.h"
#include "live/session.h"
#include "util/atomic_file.h"
#include "util/clock.h"

volatile sig_atomic_t signals__stop;
static volatile sig_atomic_t tui_active;
/* When the first stop signal came (monotonic_ns: clock_gettime is async-signal-safe). */
static volatile uint64_t stop_ns;

static void on_signal(int sig)
{
	static const char restore[] = "\033[?1049l\033[?25h\r\n";

	if (!signals__stop) {
		stop_ns = monotonic_ns();
		signals__stop = sig;
		return;
	}
	atomic_file__discard_in_progress();
	session__release_held_now();
	if (tui_active && write(STDOUT_FILENO, restore, sizeof(restore) - 1) < 0)
		sig = SIGINT;
	_exit(128 + sig);
}

static void on_crash(int sig)
{
	session__release_held_now();
	raise(sig);
}

void signals__install(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct sigaction crash = { .sa_handler = on_crash, .sa_flags = SA_RESETHAND | SA_NODEFER };
	static const int stop_sigs[] = { SIGINT, SIGTERM, SIGHUP };
	static const int crash_sigs[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(stop_sigs) / sizeof(stop_sigs[0]); i++)
		sigaction(stop_sigs[i], &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&crash.sa_mask);
	for (size_t i = 0; i < sizeof(crash_sigs) / sizeof(crash_sigs[0]); i++)
		sigaction(crash_sigs[i], &crash, NULL);
}

uint64_t signals__stop_ns(void)
{
	return stop_ns;
}

void signals__tui_active(bool active)
{
	tui_active = active;
}
