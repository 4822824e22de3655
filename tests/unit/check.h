/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * check.h - the unit test harness: each test is a function, each check a macro that
 * records a failure and returns from the test.  A test binary prints one line per test,
 * "PASS name" or "FAIL name: why", which tests/run.sh counts.
 */
#ifndef LEAKTOP_CHECK_H
#define LEAKTOP_CHECK_H

#include <stdio.h>
#include <string.h>

static int check__failed;

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
		test();								\
		if (!check__failed)						\
			printf("PASS %s\n", #test);				\
		else								\
			check__any_failed = 1;					\
	} while (0)

static int check__any_failed;
#define CHECK_EXIT() return check__any_failed ? 1 : 0

#endif
