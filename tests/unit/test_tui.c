// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_tui.c - the curses view drawn for real on a pseudo-terminal of 80x24, read back from
 * curses' own screen: a stack frame far longer than its line (finding A2: it overflowed a
 * 512-byte stack buffer), the process list's columns (the whole comm, the command line in
 * the rest of the row, rates with units, anonymous mappings, unknown shown as such), the
 * sort keys, mmap sites in the site list, and escaped strings from the traced process.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <curses.h>
#include <sys/ioctl.h>

#include "check.h"
#include "tui/keys.h"
#include "tui/tui.h"

struct pty {
	int master;
	int saved_in, saved_out;
};

/* Make stdin and stdout a pseudo-terminal of cols x 24; 0 or -1. */
static int pty_enter(struct pty *p, int cols)
{
	struct winsize ws = { .ws_row = 24, .ws_col = cols };
	int slave;

	p->master = posix_openpt(O_RDWR | O_NOCTTY);
	if (p->master < 0 || grantpt(p->master) || unlockpt(p->master))
		return -1;
	slave = open(ptsname(p->master), O_RDWR | O_NOCTTY);
	if (slave < 0 || ioctl(slave, TIOCSWINSZ, &ws))
		return -1;
	fcntl(p->master, F_SETFL, O_NONBLOCK);
	fflush(stdout);
	p->saved_in = dup(0);
	p->saved_out = dup(1);
	dup2(slave, 0);
	dup2(slave, 1);
	close(slave);
	setenv("TERM", "xterm", 1);
	unsetenv("LINES");
	unsetenv("COLUMNS");
	return 0;
}

/* Throw away what curses sent to the terminal, so it never blocks on a full pty. */
static void pty_drain(struct pty *p)
{
	char buf[4096];

	fflush(stdout);
	while (read(p->master, buf, sizeof(buf)) > 0)
		;
}

static void pty_leave(struct pty *p)
{
	pty_drain(p);
	dup2(p->saved_in, 0);
	dup2(p->saved_out, 1);
	close(p->saved_in);
	close(p->saved_out);
	close(p->master);
}

/* Row y of the screen as curses holds it, trailing blanks cut. */
static const char *screen_row(int y, char *buf, int len)
{
	int n;

	buf[0] = '\0';
	mvinnstr(y, 0, buf, len - 1);
	n = strlen(buf);
	while (n > 0 && buf[n - 1] == ' ')
		buf[--n] = '\0';
	return buf;
}

/* Press a key: the view handles it and redraws. */
static void press(struct tui *t, const struct model *m, struct pty *p, int key)
{
	ungetch(key);
	tui__handle_keys(t, m);
	pty_drain(p);
}

static char *filled(char c, size_t n)
{
	char *s = malloc(n + 1);

	if (s) {
		memset(s, c, n);
		s[n] = '\0';
	}
	return s;
}

static void one_site_model(struct model *m, struct process *p, struct site *s,
			   struct sym_frame *f)
{
	*s = (struct site){ .kind = LT_KIND_HEAP, .stack_hash = 7, .frames = f, .n_frames = 1,
			    .outstanding_bytes = 192, .outstanding_count = 3, .allocs = 3,
			    .alloc_bytes = 192, .growth_per_s = 12800, .flagged = true };
	*p = (struct process){ .pid = 4242, .gen = 1, .target = true, .sites = s, .n_sites = 1,
			       .heap_outstanding_bytes = 192, .heap_outstanding_count = 3,
			       .heap_allocs = 3, .heap_growth_per_s = 12800,
			       .flags = PROC_HEAP_GROWTH,
			       .counters = { .rss_bytes = 4 << 20, .fd_count = 5, .valid = true } };
	*m = (struct model){ .procs = p, .n_procs = 1, .interval_s = 1, .resources = RES_HEAP };
}

static void test_tui_stack_view_cuts_a_frame_longer_than_its_line(void)
{
	char *symbol = filled('S', 3000), *file = filled('F', 3000), *module = filled('M', 3000);
	struct sym_frame f = { .addr = 0x1000, .offset = 0x18, .line = 4 };
	struct process p;
	struct site s;
	struct model m;
	struct pty pty;
	struct tui *t;
	char title[256], frame[256];

	CHECK(symbol && file && module);
	f.symbol = symbol;
	f.file = file;
	f.module = module;
	one_site_model(&m, &p, &s, &f);
	snprintf(p.comm, sizeof(p.comm), "longname");
	CHECK_EQ_INT(pty_enter(&pty, 80), 0);
	t = tui__start();
	if (t) {
		tui__update(t, &m);
		press(t, &m, &pty, '\n');	/* the process's sites */
		press(t, &m, &pty, '\n');	/* the site's stack */
		screen_row(1, title, sizeof(title));
		screen_row(3, frame, sizeof(frame));
		tui__stop(t);
	}
	pty_leave(&pty);
	free(symbol);
	free(file);
	free(module);
	CHECK(t);
	CHECK_EQ_STR(title, "heap site 0000000000000007 of longname (pid 4242)  LEAK");
	CHECK(!strncmp(frame, "#0  SSSSSSSS", 12));
	CHECK_EQ_INT(strlen(frame), 80);
}

/*
 * Draw m on a cols x 24 pseudo-terminal and read screen rows rows[0..n) into out; false when
 * the TUI could not start.
 */
static bool draw_rows_at(const struct model *m, int cols, const int *rows, char (*out)[256],
			 int n)
{
	struct pty pty;
	struct tui *t;

	for (int i = 0; i < n; i++)
		out[i][0] = '\0';
	if (pty_enter(&pty, cols))
		return false;
	t = tui__start();
	if (t) {
		tui__update(t, m);
		pty_drain(&pty);
		for (int i = 0; i < n; i++)
			screen_row(rows[i], out[i], sizeof(out[i]));
		tui__stop(t);
	}
	pty_leave(&pty);
	return t != NULL;
}

/* The same on 80 columns, the usual terminal. */
static bool draw_rows(const struct model *m, const int *rows, char (*out)[256], int n)
{
	return draw_rows_at(m, 80, rows, out, n);
}

static void test_tui_process_row_shows_whole_comm_and_command_line_rest(void)
{
	struct sym_frame f = { .addr = 0x1000, .symbol = "leak_simple" };
	const int rows[] = { 1, 2 };
	char got[2][256];
	struct process p;
	struct site s;
	struct model m;

	one_site_model(&m, &p, &s, &f);
	snprintf(p.comm, sizeof(p.comm), "leak_simple_15c");
	p.cmdline = "./build/tests/progs/leak_simple_15c --forever";
	CHECK(draw_rows_at(&m, 100, rows, got, 2));
	CHECK(!strncmp(got[0], "    PID COMMAND               RSS   FDS      HEAP", 48));
	CHECK(strstr(got[0], " HEAP/s      MMAP FLAGS CMDLINE"));
	/* The whole 15-byte comm, the rate with its unit, the command line to the edge. */
	CHECK(!strncmp(got[1], "   4242 leak_simple_15c ", 24));
	CHECK(strstr(got[1], " +12.5 KiB/s         - H     ./build/tests/progs/le"));
	CHECK_EQ_INT(strlen(got[1]), 100);
	/* 80 columns: every number still, the command line cut to what is left. */
	CHECK(draw_rows(&m, rows, got, 2));
	CHECK(!strncmp(got[1], "   4242 leak_simple_15c ", 24));
	CHECK(strstr(got[1], " +12.5 KiB/s         - H     ./"));
	CHECK_EQ_INT(strlen(got[1]), 80);
}

static void test_tui_header_says_when_work_was_deferred(void)
{
	struct sym_frame f = { .addr = 0x1000, .symbol = "leak_simple" };
	const int rows[] = { 0 };
	char quiet[1][256], busy[1][256];
	struct process p;
	struct site s;
	struct model m;

	one_site_model(&m, &p, &s, &f);
	CHECK(draw_rows(&m, rows, quiet, 1));
	m.stacks_pending = 5;
	m.procs_deferred = 2;
	CHECK(draw_rows(&m, rows, busy, 1));
	CHECK(!strstr(quiet[0], "deferred"));
	CHECK(strstr(busy[0], "  dropped 0  deferred 5 stacks 2 procs  sort:") != NULL);
}

static void test_tui_escapes_comm_and_command_line(void)
{
	struct sym_frame f = { .addr = 0x1000, .symbol = "leak_simple" };
	const int rows[] = { 2 };
	char row[1][256];
	struct process p;
	struct site s;
	struct model m;

	one_site_model(&m, &p, &s, &f);
	snprintf(p.comm, sizeof(p.comm), "\033[2Jx");
	p.cmdline = "\033]0;X\007";
	CHECK(draw_rows_at(&m, 100, rows, row, 1));
	CHECK(!strncmp(row[0], "   4242 \\x1b[2Jx ", 17));
	CHECK(strstr(row[0], " \\x1b]0;X\\x07"));
}

/* A process of one heap site and one mmap site; mmap tracked. */
static void heap_and_mmap_model(struct model *m, struct process *p, struct site *s,
				struct sym_frame *f)
{
	one_site_model(m, p, &s[0], &f[0]);
	s[1] = (struct site){ .kind = LT_KIND_MMAP, .stack_hash = 9, .frames = &f[1],
			      .n_frames = 1, .outstanding_bytes = 3 << 20, .outstanding_count = 3,
			      .allocs = 4, .frees = 1, .alloc_bytes = 4 << 20 };
	p->n_sites = 2;
	p->mmap_outstanding_bytes = 3 << 20;
	p->mmap_outstanding_count = 3;
	p->mmap_maps = 4;
	p->mmap_unmaps = 1;
	m->resources = RES_HEAP | RES_MMAP;
}

static void test_tui_process_row_shows_mapped_bytes_in_mmap_column(void)
{
	struct sym_frame f[2] = { { .addr = 0x1000, .symbol = "leak_simple" },
				  { .addr = 0x2000, .symbol = "map_arena" } };
	const int rows[] = { 1, 2 };
	char got[2][256];
	struct process p;
	struct site s[2];
	struct model m;

	heap_and_mmap_model(&m, &p, s, f);
	snprintf(p.comm, sizeof(p.comm), "mapper");
	CHECK(draw_rows_at(&m, 100, rows, got, 2));
	CHECK(strstr(got[0], "   HEAP      HEAP/s      MMAP FLAGS CMDLINE"));
	CHECK(strstr(got[1], "  192 B +12.5 KiB/s   3.0 MiB H"));
}

static void test_tui_mmap_column_says_unknown_when_mmap_is_not_tracked(void)
{
	struct sym_frame f = { .addr = 0x1000, .symbol = "leak_simple" };
	const int rows[] = { 2 };
	char got[1][256];
	struct process p;
	struct site s;
	struct model m;

	one_site_model(&m, &p, &s, &f);		/* -r heap: nothing known of mappings */
	CHECK(draw_rows(&m, rows, got, 1));
	CHECK(strstr(got[0], " +12.5 KiB/s         - H"));
}

static void test_tui_heap_columns_say_unknown_when_heap_is_not_tracked(void)
{
	struct sym_frame f = { .addr = 0x1000, .symbol = "leak_simple" };
	const int rows[] = { 2 };
	char got[1][256];
	struct process p;
	struct site s;
	struct model m;

	one_site_model(&m, &p, &s, &f);
	p.heap_outstanding_bytes = p.heap_outstanding_count = 0;
	p.heap_growth_per_s = 0;
	m.resources = RES_FD | RES_MMAP;
	CHECK(draw_rows(&m, rows, got, 1));
	CHECK(strstr(got[0], "         -           -       0 B H"));
}

static void test_tui_sort_key_mmap_puts_most_mapped_first(void)
{
	struct sym_frame f[4] = { { .addr = 0x1000, .symbol = "leak_simple" },
				  { .addr = 0x2000, .symbol = "map_arena" },
				  { .addr = 0x1000, .symbol = "leak_simple" },
				  { .addr = 0x2000, .symbol = "map_arena" } };
	char heap_row[256], mmap_row[256], header[256];
	struct process p[2];
	struct site s[2][2];
	struct model m, m2;
	struct pty pty;
	struct tui *t;

	heap_and_mmap_model(&m, &p[0], s[0], &f[0]);
	heap_and_mmap_model(&m2, &p[1], s[1], &f[2]);
	/* pid 4242 has more heap, pid 4343 more mappings. */
	p[1].pid = 4343;
	p[1].gen = 2;
	p[1].heap_outstanding_bytes = 64;
	p[1].mmap_outstanding_bytes = 64 << 20;
	m.procs = p;
	m.n_procs = 2;
	heap_row[0] = mmap_row[0] = header[0] = '\0';
	CHECK_EQ_INT(pty_enter(&pty, 80), 0);
	t = tui__start();
	if (t) {
		tui__update(t, &m);
		press(t, &m, &pty, 's');	/* heap */
		screen_row(2, heap_row, sizeof(heap_row));
		press(t, &m, &pty, 's');	/* mmap */
		screen_row(0, header, sizeof(header));
		screen_row(2, mmap_row, sizeof(mmap_row));
		tui__stop(t);
	}
	pty_leave(&pty);
	CHECK(t);
	CHECK(!strncmp(heap_row, "   4242 ", 8));
	CHECK(strstr(header, " sort:mmap "));
	CHECK(!strncmp(mmap_row, "   4343 ", 8));
}

static void test_tui_site_list_shows_mmap_sites_as_mapped_bytes_and_mappings(void)
{
	struct sym_frame f[2] = { { .addr = 0x1000, .symbol = "leak_simple" },
				  { .addr = 0x2000, .symbol = "map_arena" } };
	char mmap_row[256], stack_head[256], summary[256];
	struct process p;
	struct site s[2];
	struct model m;
	struct pty pty;
	struct tui *t;

	heap_and_mmap_model(&m, &p, s, f);
	snprintf(p.comm, sizeof(p.comm), "mapper");
	mmap_row[0] = stack_head[0] = summary[0] = '\0';
	CHECK_EQ_INT(pty_enter(&pty, 80), 0);
	t = tui__start();
	if (t) {
		tui__update(t, &m);
		press(t, &m, &pty, '\n');	/* the sites: the flagged heap site, then mmap */
		screen_row(3, mmap_row, sizeof(mmap_row));
		press(t, &m, &pty, KEY_DOWN);
		press(t, &m, &pty, '\n');	/* the mmap site's stack */
		screen_row(1, stack_head, sizeof(stack_head));
		screen_row(2, summary, sizeof(summary));
		tui__stop(t);
	}
	pty_leave(&pty);
	CHECK(t);
	CHECK(!strncmp(mmap_row, "     mmap    3.0 MiB       3 ", 29));
	CHECK(strstr(mmap_row, " map_arena"));
	CHECK_EQ_STR(stack_head, "mmap site 0000000000000009 of mapper (pid 4242)");
	CHECK(!strncmp(summary, "mapped 3.0 MiB in 3 mappings  maps 4  unmaps 1", 46));
}

static void test_tui_stack_view_lists_the_allocation_numbers_of_lost_blocks(void)
{
	struct sym_frame f = { .addr = 0x1000, .symbol = "make_block" };
	struct process p;
	struct site s;
	struct model m;
	struct pty pty;
	struct tui *t;
	char title[256], counts[256], lost[256], frame[256];

	one_site_model(&m, &p, &s, &f);
	snprintf(p.comm, sizeof(p.comm), "seq_leak");
	s.has_lost = true;
	s.lost_count[SCAN_DEFINITE] = 3;
	s.lost_bytes[SCAN_DEFINITE] = 144;
	s.lost_count[SCAN_INDIRECT] = 1;
	s.n_lost_seqs = 3;
	s.lost_seqs[0] = 3;
	s.lost_seqs[1] = 7;
	s.lost_seqs[2] = 9;
	CHECK_EQ_INT(pty_enter(&pty, 100), 0);
	t = tui__start();
	if (t) {
		tui__update(t, &m);
		press(t, &m, &pty, '\n');	/* the process's sites */
		press(t, &m, &pty, '\n');	/* the site's stack */
		screen_row(1, title, sizeof(title));
		screen_row(2, counts, sizeof(counts));
		screen_row(3, lost, sizeof(lost));
		screen_row(4, frame, sizeof(frame));
		tui__stop(t);
	}
	pty_leave(&pty);
	CHECK(t);
	CHECK_EQ_STR(title, "heap site 0000000000000007 of seq_leak (pid 4242)  LEAK");
	CHECK(!strncmp(counts, "outstanding 192 B in 3 blocks", 29));
	CHECK_EQ_STR(lost, "scan: 3 definitely lost (144 B)  allocations #3, 7, 9  indirect 1  "
		     "possible 0");
	CHECK(!strncmp(frame, "#0  make_block", 14));
}

/*
 * A message answering a key stays 4 s at any interval (16 samples at -i 0.25, where 3
 * samples were 0.75 s), and a symbols hint found meanwhile does not replace it.
 */
static void test_tui_answer_to_a_key_stays_four_seconds_and_no_hint_replaces_it(void)
{
	struct sym_missing hint = { .module = "/usr/lib/libfoo.so.1" };
	char rows[17][256], first[256];
	struct sym_frame f = { .addr = 0x1000, .symbol = "leak_simple" };
	struct process p;
	struct site s;
	struct model m;
	struct pty pty;
	struct tui *t;

	one_site_model(&m, &p, &s, &f);
	m.interval_s = 0.25;
	first[0] = '\0';
	CHECK_EQ_INT(pty_enter(&pty, 80), 0);
	t = tui__start();
	if (t) {
		tui__update(t, &m);
		press(t, &m, &pty, 's');
		screen_row(23, first, sizeof(first));
		m.sym_missing = &hint;		/* a module without symbols turns up */
		m.n_sym_missing = 1;
		for (int i = 0; i < 17; i++) {
			tui__update(t, &m);
			pty_drain(&pty);
			screen_row(23, rows[i], sizeof(rows[i]));
		}
		tui__stop(t);
	}
	pty_leave(&pty);
	CHECK(t);
	CHECK(strstr(first, "sorted by "));
	for (int i = 0; i < 15; i++)
		CHECK_EQ_STR(rows[i], first);
	CHECK(!strstr(rows[16], "sorted by "));
	CHECK(strstr(rows[16], "libfoo"));	/* the hint, once the answer has gone */
}

/* Is the key of hint (up to its ':') a whole word of footer, with its word or bare? */
static bool footer_names(const char *footer, const char *hint)
{
	size_t n = strcspn(hint, ":");
	char key[32];

	snprintf(key, sizeof(key), "%.*s", (int)n, hint);
	for (const char *at = footer; (at = strstr(at, key)) != NULL; at++)
		if ((at == footer || at[-1] == ' ') && (at[n] == ':' || at[n] == ' ' || !at[n]))
			return true;
	return false;
}

/* Every key of the table with a footer hint is in the footer, at 80 columns (where words
 * give way) as in a wide terminal (every hint whole), and the footer fits its row. */
static void test_tui_footer_lists_every_key_of_the_table(void)
{
	char narrow[256], wide[256];
	size_t hinted = 0;

	tui_keys__footer(narrow, sizeof(narrow), 80);
	tui_keys__footer(wide, sizeof(wide), 200);
	CHECK(strlen(narrow) <= 80);
	for (size_t i = 0; i < tui_n_keys; i++) {
		const char *hint = tui_keys[i].footer;

		if (!hint)
			continue;
		hinted++;
		CHECK(tui_keys[i].name != NULL);	/* an alias has no hint of its own */
		if (!footer_names(narrow, hint) || !strstr(wide, hint))
			fprintf(stderr, "footer misses %s: \"%s\"\n", hint, narrow);
		CHECK(footer_names(narrow, hint));
		CHECK(strstr(wide, hint) != NULL);
	}
	CHECK(hinted >= 11);
	CHECK(strstr(narrow, "L:lastref") && strstr(narrow, "t:heap") && strstr(narrow, "q:quit"));
	/* A row too narrow for any word keeps every key. */
	tui_keys__footer(narrow, sizeof(narrow), 10);
	CHECK_EQ_STR(narrow, "Enter Esc s / p w S L t ? q");
}

/* `?` lists every named key of the table once, with its help; only the moving keys are
 * left out of the footer (every other key is a command the footer must show). */
static void test_tui_help_lists_every_key_of_the_table(void)
{
	static const char *const moving[] = { "Up/Down", "PgUp/PgDn", "Home/End" };
	char line[256], want[256];
	size_t named = 0, lines = 0;

	while (!tui_keys__help_line(lines, line, sizeof(line)))
		lines++;
	for (size_t i = 0; i < tui_n_keys; i++) {
		const struct tui_key *k = &tui_keys[i];
		bool found = false, is_moving = false;

		CHECK(k->fn != NULL);
		if (!k->name) {
			CHECK(!k->help && !k->footer);
			continue;
		}
		CHECK(k->help && k->help[0]);
		snprintf(want, sizeof(want), "  %-10s %s", k->name, k->help);
		for (size_t l = 0; l < lines; l++) {
			tui_keys__help_line(l, line, sizeof(line));
			found |= !strcmp(line, want);
		}
		CHECK(found);
		for (size_t m = 0; m < sizeof(moving) / sizeof(moving[0]); m++)
			is_moving |= !strcmp(k->name, moving[m]);
		CHECK(is_moving == !k->footer);
		named++;
	}
	CHECK_EQ_INT(lines, named);
	CHECK(tui_keys__find('L') && tui_keys__find('t') && !tui_keys__find('Z'));
}

/* The footer row drawn at 80x24 is the table's footer, L and t in it. */
static void test_tui_footer_drawn_from_the_key_table(void)
{
	struct sym_frame f = { .addr = 0x1000, .symbol = "leak_simple" };
	const int rows[] = { 23 };
	char got[1][256], want[256];
	struct process p;
	struct site s;
	struct model m;

	one_site_model(&m, &p, &s, &f);
	CHECK(draw_rows(&m, rows, got, 1));
	tui_keys__footer(want, sizeof(want), 80);
	CHECK_EQ_STR(got[0], want);
	CHECK(strstr(got[0], " L:lastref t:heap ") != NULL);
}

int main(void)
{
	RUN(test_tui_stack_view_lists_the_allocation_numbers_of_lost_blocks);
	RUN(test_tui_stack_view_cuts_a_frame_longer_than_its_line);
	RUN(test_tui_process_row_shows_whole_comm_and_command_line_rest);
	RUN(test_tui_escapes_comm_and_command_line);
	RUN(test_tui_header_says_when_work_was_deferred);
	RUN(test_tui_process_row_shows_mapped_bytes_in_mmap_column);
	RUN(test_tui_mmap_column_says_unknown_when_mmap_is_not_tracked);
	RUN(test_tui_heap_columns_say_unknown_when_heap_is_not_tracked);
	RUN(test_tui_sort_key_mmap_puts_most_mapped_first);
	RUN(test_tui_site_list_shows_mmap_sites_as_mapped_bytes_and_mappings);
	RUN(test_tui_answer_to_a_key_stays_four_seconds_and_no_hint_replaces_it);
	RUN(test_tui_footer_lists_every_key_of_the_table);
	RUN(test_tui_help_lists_every_key_of_the_table);
	RUN(test_tui_footer_drawn_from_the_key_table);
	CHECK_EXIT();
}
