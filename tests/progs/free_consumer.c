// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * free_consumer.c - a consumer thread that only frees what a producer thread allocates,
 * and frees the same address twice in a row: the producer got it back in between
 * (review C15).  Every block is freed: nothing is outstanding at the end.
 *
 * The consumer first frees 7 blocks of 32 bytes (its tcache bin for the size is then full),
 * so each block it frees after that goes back to the arena, where the producer's next
 * malloc(32) finds it.  Then 10 rounds: produce() allocates a block, the consumer frees it,
 * produce() allocates again (the same address), the consumer frees it again.  The threads
 * take turns through two pipes; the consumer never allocates.
 * produce() allocates 7 + 2 * 10 = 27 blocks, all freed.  Exits 5 if the allocator never
 * handed an address back (the case is not made).
 *
 * Usage: free_consumer DIR
 * Creates DIR/done holding its pid, then waits for DIR/quit (at most 60 s).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "fd_common.h"

#define ROUNDS 10

static int to_consumer[2], to_producer[2];

static void send_ptr(int fd, void *p)
{
	if (write(fd, &p, sizeof(p)) != sizeof(p))
		_exit(2);
}

static void *recv_ptr(int fd)
{
	void *p;

	if (read(fd, &p, sizeof(p)) != sizeof(p))
		_exit(2);
	return p;
}

static void *consumer(void *arg)
{
	void *p;

	(void)arg;
	while ((p = recv_ptr(to_consumer[0])) != NULL) {
		free(p);
		send_ptr(to_producer[1], NULL);		/* done */
	}
	return NULL;
}

static NOINLINE void *produce(void)
{
	void *p = malloc(32);

	if (!p)
		_exit(2);
	return p;
}

/* Hand p to the consumer and wait until it freed it. */
static void consume(void *p)
{
	send_ptr(to_consumer[1], p);
	recv_ptr(to_producer[0]);
}

int main(int argc, char **argv)
{
	void *fill[7], *a, *b;
	int again = 0;
	pthread_t t;

	if (argc != 2)
		return 1;
	must(pipe(to_consumer));
	must(pipe(to_producer));
	if (pthread_create(&t, NULL, consumer, NULL))
		return 1;
	for (int i = 0; i < 7; i++)
		fill[i] = produce();
	for (int i = 0; i < 7; i++)
		consume(fill[i]);
	for (int i = 0; i < ROUNDS; i++) {
		a = produce();
		consume(a);
		b = produce();
		again += (uintptr_t)a == (uintptr_t)b;
		consume(b);
	}
	send_ptr(to_consumer[1], NULL);
	pthread_join(t, NULL);
	if (!again)
		return 5;
	handshake(argv[1], "done", "quit");
	return 0;
}
