// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * retain_table.c - reachable growth for retention paths: a global hash table (g_sessions,
 * allocated by table_new) whose bucket array (dict_expand, doubled by realloc as it fills)
 * gains session_new entries forever, every one still reachable: a map only inserted into.
 * A thread, named "holder", keeps a list of hold_node blocks that grows forever too, its head
 * only in a local variable of its function holder_loop.
 *
 * Usage: retain_table DIR.  Creates DIR/ready (pid) and waits for DIR/go (leaktop traces
 * it), then inserts 20 sessions and one list node every 20 ms until DIR/quit exists.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

struct session {
	struct session *next;
	unsigned long id;
	char data[240];
};

struct table {
	struct session **buckets;
	size_t n_buckets, n_entries;
};

struct hold {
	struct hold *next;
	char data[120];
};

static struct table *g_sessions;
static volatile int quit;

static void nap_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000 * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Create dir/NAME holding our pid (atomically) and/or wait for dir/WAIT. */
static void handshake(const char *dir, const char *name, const char *wait)
{
	char path[4096];
	int fd, i;

	if (name) {
		char tmp[4096], buf[32];
		int n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());

		snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, buf, n) != n || close(fd) || rename(tmp, path))
			_exit(2);
	}
	if (!wait)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, wait);
	for (i = 0; access(path, F_OK); i++) {
		if (i == 18000)
			_exit(3);
		nap_ms(10);
	}
}

NOINLINE struct table *table_new(void)
{
	return calloc(1, sizeof(struct table));
}

NOINLINE struct session **dict_expand(struct session **old, size_t n)
{
	return realloc(old, n * sizeof(*old));
}

NOINLINE struct session *session_new(unsigned long id)
{
	struct session *s = malloc(sizeof(*s));

	if (s) {
		memset(s, 0, sizeof(*s));
		s->id = id;
	}
	return s;
}

static void table_insert(struct table *t, struct session *s)
{
	size_t b;

	if (t->n_entries >= t->n_buckets) {
		size_t n = t->n_buckets ? 2 * t->n_buckets : 64;
		struct session **v = dict_expand(t->buckets, n), *e, *next;

		if (!v)
			_exit(4);
		/* Rehash into the new array. */
		for (size_t i = t->n_buckets; i < n; i++)
			v[i] = NULL;
		for (size_t i = 0; i < t->n_buckets; i++) {
			e = v[i];
			v[i] = NULL;
			for (; e; e = next) {
				next = e->next;
				b = e->id % n;
				e->next = v[b];
				v[b] = e;
			}
		}
		/* An entry moved to a bucket not yet emptied is taken again from there and
		 * lands in the same bucket: every entry stays in the table. */
		t->buckets = v;
		t->n_buckets = n;
	}
	b = s->id % t->n_buckets;
	s->next = t->buckets[b];
	t->buckets[b] = s;
	t->n_entries++;
}

NOINLINE struct hold *hold_node(void)
{
	return calloc(1, sizeof(struct hold));
}

/* Overwrite the dead stack below the caller: no stale copy of a pointer stays there. */
NOINLINE static void scrub_stack(void)
{
	volatile char buf[16384];

	memset((char *)buf, 0, sizeof(buf));
}

NOINLINE static void holder_loop(void)
{
	struct hold *head = NULL;

	while (!quit) {
		struct hold *h = hold_node();

		if (!h)
			_exit(5);
		h->next = head;
		head = h;
		scrub_stack();
		nap_ms(20);
	}
	/* head is still needed after the loop: it stays in this frame. */
	while (head) {
		struct hold *next = head->next;

		free(head);
		head = next;
	}
}

static void *holder(void *arg)
{
	(void)arg;
	holder_loop();
	return NULL;
}

int main(int argc, char **argv)
{
	char quit_path[4096];
	unsigned long id = 0;
	pthread_t th;

	if (argc < 2)
		return 1;
	snprintf(quit_path, sizeof(quit_path), "%s/quit", argv[1]);
	handshake(argv[1], "ready", "go");
	g_sessions = table_new();
	if (!g_sessions || pthread_create(&th, NULL, holder, NULL))
		return 1;
	pthread_setname_np(th, "holder");
	while (access(quit_path, F_OK)) {
		for (int i = 0; i < 20; i++) {
			struct session *s = session_new(id++);

			if (!s)
				return 1;
			table_insert(g_sessions, s);
		}
		scrub_stack();
		nap_ms(20);
	}
	quit = 1;
	pthread_join(th, NULL);
	return 0;
}
