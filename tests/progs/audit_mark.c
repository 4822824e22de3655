// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * audit_mark.c - an rtld-audit library (libaudit_mark.so) whose constructor leaves a mark
 * when the dynamic linker runs it in list mode ("ld.so --list PROG", the process's
 * executable is ld.so itself), for tests/e2e/exec_bind.sh: audit_prog names it in
 * DT_AUDIT, and leaktop must learn what audit_prog loads without running any of its code
 * (review C11).  The mark is a file named by AUDIT_MARK in the environment, holding the uid
 * it ran as.  Built as a shared object, not a program (see the Makefile).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

unsigned int la_version(unsigned int version)
{
	return version;
}

__attribute__((constructor)) static void mark(void)
{
	const char *path = getenv("AUDIT_MARK");
	char exe[4096], buf[32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int fd, len;

	if (!path || n <= 0)
		return;
	exe[n] = '\0';
	/* The program's own run loads its audit library too: only ld.so as the program counts. */
	if (!strstr(exe, "/ld-linux"))
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return;
	len = snprintf(buf, sizeof(buf), "uid %d\n", (int)getuid());
	if (write(fd, buf, len) != len)
		_exit(2);
	close(fd);
}
