// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_snapshot_stacks.c - unit tests of the stacks and frames user/view/snapshot.c keeps as
 * JSON from one snapshot to the next: a snapshot written again is the same, a site resolved
 * later gets its frames, a frame several stacks hold is made once, and the stacks and frames
 * of processes that are gone are dropped (the caches hold those of the last full snapshot
 * only).
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/model.h"
#include "core/sample.h"
#include "view/snapshot.h"

#define NS 1000000000ull

static struct sample_site heap_site(uint32_t pid, uint64_t hash)
{
	return (struct sample_site){ .pid = pid, .kind = LT_KIND_HEAP, .gen = 1,
				     .stack_hash = hash, .outstanding_bytes = 64,
				     .outstanding_count = 1, .allocs = 1, .alloc_bytes = 64 };
}

/* Sample at second sec with sites[0..n), the frames of `frames_of` (0: none) and events. */
static int apply(struct model *m, unsigned int sec, struct sample_site *sites, size_t n,
		 uint32_t frames_of, const char *symbol, uint32_t exited)
{
	struct sample s;
	int err;

	memset(&s, 0, sizeof(s));
	s.ts_ns = sec * NS;
	s.sites = sites;
	s.n_sites = n;
	for (size_t i = 0; i < n; i++) {
		struct sample_event *ev;

		if (sec != 1)
			continue;
		ev = sample__add_event(&s);
		*ev = (struct sample_event){ .type = SAMPLE_EV_FIRST, .pid = sites[i].pid,
					     .gen = 1 };
	}
	/* Every stack of process frames_of: the same frame (its leaking function). */
	for (size_t i = 0; frames_of && i < n; i++) {
		struct sample_frames *sf;
		struct sym_frame f = { .addr = 0x401000, .symbol = (char *)symbol, .offset = 8,
				       .module = "/bin/prog", .file = "prog.c", .line = 7 };

		if (sites[i].pid != frames_of)
			continue;
		sf = sample__add_frames(&s);
		sf->pid = frames_of;
		sf->gen = 1;
		sf->stack_hash = sites[i].stack_hash;
		sf->frames = calloc(1, sizeof(*sf->frames));
		sf->n_frames = 1;
		if (sym_frame__copy(&sf->frames[0], &f))
			return -1;
	}
	if (exited) {
		struct sample_event *ev = sample__add_event(&s);

		*ev = (struct sample_event){ .type = SAMPLE_EV_EXIT, .pid = exited, .old_gen = 1 };
	}
	err = model__apply(m, &s);
	s.sites = NULL;
	s.n_sites = 0;
	sample__free(&s);
	return err;
}

/* The snapshot line, less the parts that change by themselves (time, leaktop's own cost). */
static char *snapshot_line(const struct model *m)
{
	char *buf = NULL, *stats;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	if (snapshot__write_line(f, m)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	stats = strstr(buf, "\"processes\"");
	if (stats)
		memmove(buf, stats, strlen(stats) + 1);
	return buf;
}

static void test_snapshot_stacks_are_made_once_and_dropped_with_their_process(void)
{
	struct sample_site sites[] = { heap_site(200, 0x60), heap_site(100, 0x60),
				       heap_site(100, 0x61) };
	struct dead_image *dead = NULL;
	struct model m;
	char *first, *again, *later;

	model__init(&m, 1.0, RES_ALL, 8);
	CHECK_EQ_INT(apply(&m, 1, sites, 3, 100, "leak_a", 0), 0);
	first = snapshot_line(&m);
	CHECK(first != NULL);
	/* Process 100's two stacks resolved, 200's not yet: only 100's are kept, their one
	 * frame once. */
	CHECK_EQ_INT(snapshot__cached_stacks(), 2);
	CHECK_EQ_INT(snapshot__cached_frames(), 1);
	CHECK(strstr(first, "\"stack\":[{\"addr\":\"0x401000\",\"symbol\":\"leak_a\",\"offset\":8,"
		     "\"module\":\"/bin/prog\",\"file\":\"prog.c\",\"line\":7}]") != NULL);
	again = snapshot_line(&m);
	CHECK(again != NULL);
	CHECK_EQ_STR(again, first);
	model__reported(&m);

	/* Process 200's frames come, process 100 exits: both stacks are shown. */
	CHECK_EQ_INT(apply(&m, 2, sites, 3, 200, "leak_b", 100), 0);
	later = snapshot_line(&m);
	CHECK(later != NULL);
	CHECK(strstr(later, "\"symbol\":\"leak_a\"") && strstr(later, "\"symbol\":\"leak_b\""));
	CHECK_EQ_INT(snapshot__cached_stacks(), 3);
	CHECK_EQ_INT(snapshot__cached_frames(), 2);
	model__reported(&m);
	CHECK_EQ_INT(model__reap(&m, &dead), 1);
	free(dead);
	free(later);

	/* Process 100 is gone: its stack is no longer held. */
	CHECK_EQ_INT(apply(&m, 3, sites, 1, 0, NULL, 0), 0);
	later = snapshot_line(&m);
	CHECK(later != NULL);
	CHECK(!strstr(later, "leak_a") && strstr(later, "\"symbol\":\"leak_b\""));
	CHECK_EQ_INT(snapshot__cached_stacks(), 1);
	CHECK_EQ_INT(snapshot__cached_frames(), 1);
	free(first);
	free(again);
	free(later);
	model__free(&m);
}

int main(void)
{
	RUN(test_snapshot_stacks_are_made_once_and_dropped_with_their_process);
	CHECK_EXIT();
}
