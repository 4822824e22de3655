// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * ldlist.c - what a program will load, from the system's dynamic linker in list mode.
 *
 * The program is opened once, read-only and only as a regular file, to learn its PT_INTERP;
 * only when that is the system's own dynamic linker is it run, as "ld.so --list PROG" (it
 * maps and lists, and never runs PROG's code), with no input, its errors discarded, and its
 * output read under a deadline.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <gelf.h>
#include <libelf.h>

#include "live/ldlist.h"
#include "live/safe_open.h"
#include "util/clock.h"

#define LIST_MAX_BYTES		(64u * 1024)
#define LIST_TIMEOUT_MS		5000
#define LIST_MAX_PATHS		512

extern char **environ;

/* The program's PT_INTERP into buf (empty: none). */
static int interpreter_of(const char *path, char *buf, size_t len)
{
	GElf_Phdr ph;
	size_t n;
	Elf *elf;
	int fd, err = 0;

	buf[0] = '\0';
	err = safe_open(AT_FDCWD, path, SAFE_FOLLOW, NULL, &fd);
	if (err)
		return err;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &n)) {
		err = -ENOEXEC;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_INTERP || ph.p_filesz >= len ||
		    !ph.p_filesz)
			continue;
		if (pread(fd, buf, ph.p_filesz, ph.p_offset) != (ssize_t)ph.p_filesz) {
			buf[0] = '\0';
			continue;
		}
		buf[ph.p_filesz - 1] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

/* Read the child's output into buf (NUL-terminated) until EOF, a full buffer or the timeout. */
static void read_list(int fd, char *buf, size_t len)
{
	uint64_t deadline = monotonic_ns() + LIST_TIMEOUT_MS * 1000000ull;
	size_t n = 0;

	while (n + 1 < len) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t now = monotonic_ns();
		ssize_t got;

		if (now >= deadline || poll(&p, 1, (int)((deadline - now) / 1000000) + 1) <= 0)
			break;
		got = read(fd, buf + n, len - 1 - n);
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	buf[n] = '\0';
}

/* The path in one line of the list: "name => /path (0x...)" or "/path (0x...)". */
static const char *list_path(char *line)
{
	char *p = strstr(line, "=> "), *end;

	p = p ? p + 3 : line + strspn(line, " \t");
	if (*p != '/')
		return NULL;
	end = strstr(p, " (0x");
	if (end)
		*end = '\0';
	return p;
}

int ldlist__read(const char *path, struct ld_list *out)
{
	static const char *const known_interps[] = {
		"/lib64/ld-linux-x86-64.so.2", "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
	};
	char interp[256], *line, *save = NULL;
	posix_spawn_file_actions_t fa;
	int pipefd[2], status, err;
	bool trusted = false;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	err = interpreter_of(path, interp, sizeof(interp));
	if (err)
		return err;
	if (!interp[0])
		return 0;			/* static: nothing more to load */
	for (size_t i = 0; i < sizeof(known_interps) / sizeof(known_interps[0]); i++)
		trusted |= !strcmp(interp, known_interps[i]);
	if (!trusted)
		return 0;
	out->text = malloc(LIST_MAX_BYTES);
	out->paths = calloc(LIST_MAX_PATHS, sizeof(*out->paths));
	if (!out->text || !out->paths) {
		ldlist__free(out);
		return -ENOMEM;
	}
	if (pipe2(pipefd, O_CLOEXEC)) {
		err = -errno;
		ldlist__free(out);
		return err;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	{
		char *argv[] = { interp, "--list", (char *)path, NULL };

		err = posix_spawn(&pid, interp, &fa, NULL, argv, environ);
	}
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	if (err) {
		close(pipefd[0]);
		ldlist__free(out);
		return -err;
	}
	read_list(pipefd[0], out->text, LIST_MAX_BYTES);
	close(pipefd[0]);
	kill(pid, SIGKILL);			/* done or late: it has said all it will */
	waitpid(pid, &status, 0);
	for (line = strtok_r(out->text, "\n", &save); line && out->n < LIST_MAX_PATHS;
	     line = strtok_r(NULL, "\n", &save)) {
		const char *lib = list_path(line);

		if (lib)
			out->paths[out->n++] = lib;
	}
	return 0;
}

void ldlist__free(struct ld_list *l)
{
	free(l->text);
	free(l->paths);
	memset(l, 0, sizeof(*l));
}
