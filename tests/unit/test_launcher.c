// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_launcher.c - unit tests of user/cli/launcher.c, `leaktop -- CMD`'s child, when a
 * reachability scan makes leaktop CMD's tracer as well as its parent: a ptrace stop of CMD
 * is not its end, and the stopped CMD runs on.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "check.h"
#include "cli/launcher.h"

#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * CMD in a ptrace stop that a scan gave up waiting for: the poll's wait returns the stop,
 * which is neither taken for CMD's exit nor left stopped.
 */
static void test_ptrace_stop_of_cmd_is_not_its_exit_and_cmd_runs_on(void)
{
	char *argv[] = { "sleep", "30", NULL };
	struct launcher l;
	bool ended;
	char state = 0, how[128];
	int i;

	CHECK_EQ_INT(launcher__start(&l, argv, false), 0);
	CHECK_EQ_INT(launcher__release(&l), 0);
	CHECK_EQ_INT(ptrace(PTRACE_SEIZE, l.pid, NULL, NULL), 0);
	CHECK_EQ_INT(ptrace(PTRACE_INTERRUPT, l.pid, NULL, NULL), 0);
	for (i = 0; i < 2000 && check__proc_state(l.pid) != 't'; i++)
		nap_ms(1);
	ended = launcher__poll(&l, false);
	for (i = 0; i < 2000 && (state = check__proc_state(l.pid)) == 't'; i++)
		nap_ms(1);
	launcher__describe(&l, how, sizeof(how));
	kill(l.pid, SIGKILL);
	launcher__poll(&l, true);
	CHECK(!ended);
	CHECK_EQ_STR(how, "is still running");
	CHECK(state == 'S' || state == 'R');
	launcher__describe(&l, how, sizeof(how));
	CHECK_EQ_STR(how, "was killed by signal 9 (Killed)");
}

/* The blocking wait at the end goes past a ptrace stop too, to CMD's real exit status. */
static void test_blocking_poll_waits_past_a_ptrace_stop_for_the_exit(void)
{
	char *argv[] = { "sh", "-c", "sleep 0.3; exit 7", NULL };
	struct launcher l;
	char how[128];
	int i;

	CHECK_EQ_INT(launcher__start(&l, argv, false), 0);
	CHECK_EQ_INT(launcher__release(&l), 0);
	CHECK_EQ_INT(ptrace(PTRACE_SEIZE, l.pid, NULL, NULL), 0);
	CHECK_EQ_INT(ptrace(PTRACE_INTERRUPT, l.pid, NULL, NULL), 0);
	for (i = 0; i < 2000 && check__proc_state(l.pid) != 't'; i++)
		nap_ms(1);
	CHECK(launcher__poll(&l, true));
	launcher__describe(&l, how, sizeof(how));
	CHECK_EQ_STR(how, "exited with status 7");
}

int main(void)
{
	RUN(test_ptrace_stop_of_cmd_is_not_its_exit_and_cmd_runs_on);
	RUN(test_blocking_poll_waits_past_a_ptrace_stop_for_the_exit);
	CHECK_EXIT();
}
