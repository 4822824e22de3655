/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * check.h - the unit test harness: each test is a function, each check a macro that
 * records a failure and returns from the test.  A test binary prints one line per test,
 * "PASS name" or "FAIL name: why", which tests/run.sh counts.
 */
#ifndef LEAKTOP_CHECK_H
#define LEAKTOP_CHECK_H

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int check__failed;
static const char *check__running;	/* the test RUN is in, NULL between tests */

static void check__say(const char *s)
{
	size_t len = strlen(s);

	while (len) {
		ssize_t n = write(STDOUT_FILENO, s, len);

		if (n <= 0)
			return;
		s += n;
		len -= (size_t)n;
	}
}

/*
 * A test binary that aborts (a sanitizer report, abort(), a failed assert) names the test
 * it was in as failed before it dies.  Signal context: write(2) only.
 */
static void check__aborted(int sig)
{
	check__say("FAIL ");
	if (check__running) {
		check__say(check__running);
		check__say(": aborted (a sanitizer report or abort(), see above)\n");
	} else {
		check__say(program_invocation_short_name);
		check__say(": aborted after its last test (a sanitizer's leak check? see above)\n");
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * Verdict lines go out as they are printed, so a test that crashes does not take the lines
 * of the tests before it along.
 */
__attribute__((constructor)) static void check__init(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGABRT, check__aborted);
}

#ifdef __SANITIZE_ADDRESS__
/*
 * The unit tests are built with AddressSanitizer and UndefinedBehaviorSanitizer (see the
 * Makefile).  Their defaults for every test binary, so a test run by hand checks as much as
 * under make test (ASAN_OPTIONS and UBSAN_OPTIONS still override them): any report aborts,
 * which check__aborted turns into a FAIL line, and the status is non-zero.
 */
const char *__asan_default_options(void);
const char *__ubsan_default_options(void);

const char *__asan_default_options(void)
{
	return "detect_stack_use_after_return=1:detect_leaks=1:strict_string_checks=1:"
	       "halt_on_error=1:abort_on_error=1";
}

const char *__ubsan_default_options(void)
{
	return "print_stacktrace=1:halt_on_error=1:abort_on_error=1";
}
#endif

#define CHECK(cond)								\
	do {									\
		if (!(cond)) {							\
			printf("FAIL %s: %s:%d: %s\n", __func__, __FILE__,	\
			       __LINE__, #cond);				\
			check__failed = 1;					\
			return;							\
		}								\
	} while (0)

#define CHECK_EQ_INT(a, b)							\
	do {									\
		long long check__a = (long long)(a), check__b = (long long)(b);	\
		if (check__a != check__b) {					\
			printf("FAIL %s: %s:%d: %s == %lld, expected %lld\n",	\
			       __func__, __FILE__, __LINE__, #a, check__a,	\
			       check__b);					\
			check__failed = 1;					\
			return;							\
		}								\
	} while (0)

#define CHECK_EQ_STR(a, b)							\
	do {									\
		const char *check__a = (a), *check__b = (b);			\
		if (!check__a || !check__b || strcmp(check__a, check__b)) {	\
			printf("FAIL %s: %s:%d: %s == \"%s\", expected \"%s\"\n", \
			       __func__, __FILE__, __LINE__, #a,		\
			       check__a ? check__a : "(null)",			\
			       check__b ? check__b : "(null)");			\
			check__failed = 1;					\
			return;							\
		}								\
	} while (0)

/* Runs one test function and prints its verdict line. */
#define RUN(test)								\
	do {									\
		check__failed = 0;						\
		check__running = #test;						\
		test();								\
		check__running = NULL;						\
		if (!check__failed)						\
			printf("PASS %s\n", #test);				\
		else								\
			check__any_failed = 1;					\
	} while (0)

static int check__any_failed;
/*
 * main's return.  After a failure it leaves with _exit: a failed check returns before its
 * test frees what it allocated, and a leak check at exit would report that as one more
 * failure.
 */
#define CHECK_EXIT()								\
	do {									\
		if (check__any_failed) {					\
			fflush(stdout);						\
			_exit(1);						\
		}								\
		return 0;							\
	} while (0)

/* State letter of pid from /proc/PID/stat ('R', 'S', 't', 'Z'...), or 0 when it is gone. */
static inline char check__proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

#endif
