// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_format.c - the one spelling of bytes, rates, ages, frames, site titles and process
 * flags (view/format.c), the escaping of what traced processes control (util/escape.c) in
 * it and in the text report and diff built on it, and the bounded line stream the TUI
 * draws through.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "util/escape.h"
#include "view/diff.h"
#include "view/format.h"
#include "view/report.h"

static char buf[4096];

static char *printed_buf;

static FILE *open_printed(void)
{
	static size_t len;

	free(printed_buf);
	printed_buf = NULL;
	return open_memstream(&printed_buf, &len);
}

/* Close f and return what was written to it (valid until the next open_printed). */
static const char *close_printed(FILE *f)
{
	fclose(f);
	return printed_buf ? printed_buf : "";
}

static void test_bytes_scale_with_binary_units(void)
{
	CHECK_EQ_STR(fmt__bytes(buf, sizeof(buf), 0), "0 B");
	CHECK_EQ_STR(fmt__bytes(buf, sizeof(buf), 1023), "1023 B");
	CHECK_EQ_STR(fmt__bytes(buf, sizeof(buf), 1536), "1.5 KiB");
	CHECK_EQ_STR(fmt__bytes(buf, sizeof(buf), -2.0 * 1024 * 1024), "-2.0 MiB");
	CHECK_EQ_STR(fmt__signed_bytes(buf, sizeof(buf), 4096), "+4.0 KiB");
	CHECK_EQ_STR(fmt__signed_bytes(buf, sizeof(buf), -100), "-100 B");
}

static void test_rates_carry_their_unit(void)
{
	CHECK_EQ_STR(fmt__rate(buf, sizeof(buf), 410, UNIT_BYTES), "+410 B/s");
	CHECK_EQ_STR(fmt__rate(buf, sizeof(buf), 12800, UNIT_BYTES), "+12.5 KiB/s");
	CHECK_EQ_STR(fmt__rate(buf, sizeof(buf), -10, UNIT_BYTES), "-10 B/s");
	CHECK_EQ_STR(fmt__rate(buf, sizeof(buf), 0, UNIT_BYTES), "+0 B/s");
	CHECK_EQ_STR(fmt__rate(buf, sizeof(buf), 0.5, UNIT_FDS), "+0.5 fds/s");
	CHECK_EQ_STR(fmt__rate(buf, sizeof(buf), 0, UNIT_FDS), "+0.0 fds/s");
}

static void test_ages_grow_units_and_unknown_is_a_dash(void)
{
	CHECK_EQ_STR(fmt__age(buf, sizeof(buf), -1), "-");
	CHECK_EQ_STR(fmt__age(buf, sizeof(buf), 0.4), "0s");
	CHECK_EQ_STR(fmt__age(buf, sizeof(buf), 42.9), "42s");
	CHECK_EQ_STR(fmt__age(buf, sizeof(buf), 303), "5m03s");
	CHECK_EQ_STR(fmt__age(buf, sizeof(buf), 7500), "2h05m");
	CHECK_EQ_STR(fmt__age(buf, sizeof(buf), 3 * 86400 + 4 * 3600 + 59), "3d04h");
}

static const struct sym_frame known = {
	.addr = 0x55d0c0ffee00, .symbol = "leak_here", .offset = 0x14, .file = "leaky.c",
	.line = 12, .module = "/usr/local/bin/leaky",
};
static const struct sym_frame unknown = { .addr = 0x7f0000001234 };

static void test_frame_report_style_always_shows_the_address(void)
{
	FILE *f = open_printed();

	CHECK(f);
	fmt__frame(f, 0, &known, FRAME_ADDR);
	fputc('|', f);
	fmt__frame(f, 11, &unknown, FRAME_ADDR);
	CHECK_EQ_STR(close_printed(f), "#0  0x55d0c0ffee00 leak_here+0x14 leaky.c:12 "
		     "[/usr/local/bin/leaky]|#11 0x7f0000001234 (unknown)");
}

static void test_frame_short_style_shows_the_address_only_when_unknown(void)
{
	FILE *f = open_printed();

	CHECK(f);
	fmt__frame(f, 0, &known, FRAME_ADDR_IF_UNKNOWN);
	fputc('|', f);
	fmt__frame(f, 1, &unknown, FRAME_ADDR_IF_UNKNOWN);
	CHECK_EQ_STR(close_printed(f), "#0  leak_here+0x14 leaky.c:12 [/usr/local/bin/leaky]|"
		     "#1  0x7f0000001234 (unknown)");
}

static void test_site_title_names_innermost_frame_or_says_unknown(void)
{
	struct sym_frame frames[2] = { known, unknown };
	struct site s = { .frames = frames, .n_frames = 2 };
	FILE *f = open_printed();

	CHECK(f);
	fmt__site_title(f, &s);
	fputc('|', f);
	s.frames = &frames[1];
	s.n_frames = 1;
	fmt__site_title(f, &s);
	fputc('|', f);
	s.n_frames = 0;
	fmt__site_title(f, &s);
	CHECK_EQ_STR(close_printed(f), "leak_here leaky.c:12|(unknown)|(stack unknown)");
}

static void test_site_title_of_stripped_code_names_module_and_known_caller(void)
{
	struct sym_frame frames[3] = {
		{ .addr = 0x5600000012a0, .module = "/usr/bin/tmux" },
		{ .addr = 0x5600000013b0, .module = "/usr/bin/tmux" },
		known,
	};
	struct site s = { .frames = frames, .n_frames = 3 };
	FILE *f = open_printed();

	CHECK(f);
	fmt__site_title(f, &s);
	fputc('|', f);
	s.n_frames = 2;
	fmt__site_title(f, &s);
	CHECK_EQ_STR(close_printed(f), "(unknown in tmux) < leak_here|(unknown in tmux)");
}

static void test_flags_one_table_for_names_and_letters(void)
{
	FILE *f = open_printed();

	CHECK_EQ_STR(fmt__flag_letters(buf, sizeof(buf), PROC_HEAP_GROWTH | PROC_RSS_UNEXPLAINED),
		     "HU");
	CHECK_EQ_STR(fmt__flag_letters(buf, sizeof(buf), 0), "");
	CHECK(f);
	fmt__flag_names(f, PROC_FD_GROWTH | PROC_RSS_GROWTH);
	CHECK_EQ_STR(close_printed(f), " [fd_growth] [rss_growth]");
	CHECK_EQ_INT(fmt__flag_by_name("rss_growth_unexplained"), PROC_FLAG_RSS_UNEXPLAINED);
	CHECK_EQ_INT(fmt__flag_by_name("heap_growth"), PROC_FLAG_HEAP);
	CHECK_EQ_INT(fmt__flag_by_name("future_flag"), -1);
}

static void test_escape_turns_terminal_controls_into_hex(void)
{
	CHECK_EQ_STR(escape__str(buf, sizeof(buf), "\033[2J\033]0;PWNED\007x\ty\n\177"),
		     "\\x1b[2J\\x1b]0;PWNED\\x07x\\x09y\\x0a\\x7f");
	CHECK(escape__needed("a\033b"));
	CHECK(!escape__needed("plain ./leaky --port 8080"));
}

static void test_escape_keeps_utf8_but_not_c1_bidi_or_malformed_bytes(void)
{
	CHECK_EQ_STR(escape__str(buf, sizeof(buf), "h\xc3\xa9llo \xe2\x96\x81 \xf0\x9f\x90\x9b"),
		     "h\xc3\xa9llo \xe2\x96\x81 \xf0\x9f\x90\x9b");
	CHECK(!escape__needed("std::vector<int>::push_back(int const&)"));
	/* C1 CSI, a right-to-left override, a lone continuation byte, an overlong '/', a
	 * surrogate, a truncated sequence at the end. */
	CHECK_EQ_STR(escape__str(buf, sizeof(buf), "\xc2\x9b" "1m"), "\\xc2\\x9b1m");
	CHECK_EQ_STR(escape__str(buf, sizeof(buf), "a\xe2\x80\xae" "b"), "a\\xe2\\x80\\xaeb");
	CHECK_EQ_STR(escape__str(buf, sizeof(buf), "\x80"), "\\x80");
	CHECK_EQ_STR(escape__str(buf, sizeof(buf), "\xc0\xaf"), "\\xc0\\xaf");
	CHECK_EQ_STR(escape__str(buf, sizeof(buf), "\xed\xa0\x80"), "\\xed\\xa0\\x80");
	CHECK_EQ_STR(escape__str(buf, sizeof(buf), "ok\xe2\x96"), "ok\\xe2\\x96");
}

static void test_escaped_copy_is_cut_between_characters(void)
{
	char small[6];

	CHECK_EQ_STR(escape__str(small, sizeof(small), "a\033bcdef"), "a\\x1b");
	CHECK_EQ_STR(escape__str(small, 5, "a\033bcdef"), "a");
	CHECK_EQ_STR(escape__str(small, 4, "\xc3\xa9\xc3\xa9"), "\xc3\xa9");
	CHECK_EQ_STR(fmt__str_buf(small, sizeof(small), NULL, "?"), "?");
	CHECK_EQ_STR(fmt__str_buf(small, sizeof(small), "", "?"), "?");
}

static void test_line_stream_never_writes_past_its_buffer(void)
{
	struct {
		char line[16];
		char guard[64];
	} b;
	FILE *f;

	memset(&b, 'G', sizeof(b));
	f = fmt__line_open(b.line, sizeof(b.line));
	CHECK(f);
	for (int i = 0; i < 1000; i++)
		fputs("0123456789", f);
	fmt__line_close(f, b.line, sizeof(b.line));
	CHECK_EQ_INT(strlen(b.line) < sizeof(b.line), 1);
	CHECK(!strncmp(b.line, "0123456789", 10));
	for (size_t i = 0; i < sizeof(b.guard); i++)
		CHECK_EQ_INT(b.guard[i], 'G');
	f = fmt__line_open(b.line, sizeof(b.line));
	CHECK(f);
	fputs("short", f);
	fmt__line_close(f, b.line, sizeof(b.line));
	CHECK_EQ_STR(b.line, "short");
}

/* The TUI's stack view: a frame much longer than its line (finding A2). */
static void test_long_frame_is_cut_to_its_line(void)
{
	char *symbol = malloc(2001), *file = malloc(2001), *module = malloc(2001);
	struct sym_frame fr = { .addr = 0x1000, .offset = 8, .line = 7 };
	struct {
		char line[512];
		char guard[256];
	} b;
	FILE *f;

	CHECK(symbol && file && module);
	memset(symbol, 'S', 2000);
	memset(file, 'F', 2000);
	memset(module, 'M', 2000);
	symbol[2000] = file[2000] = module[2000] = '\0';
	fr.symbol = symbol;
	fr.file = file;
	fr.module = module;
	memset(&b, 'G', sizeof(b));
	f = fmt__line_open(b.line, sizeof(b.line));
	CHECK(f);
	fmt__frame(f, 0, &fr, FRAME_ADDR_IF_UNKNOWN);
	fmt__line_close(f, b.line, sizeof(b.line));
	CHECK(!strncmp(b.line, "#0  SSSS", 8));
	CHECK(strlen(b.line) < sizeof(b.line));
	for (size_t i = 0; i < sizeof(b.guard); i++)
		CHECK_EQ_INT(b.guard[i], 'G');
	free(symbol);
	free(file);
	free(module);
}

/* A process whose comm, command line, symbols and paths carry terminal escapes. */
static void hostile_model(struct model *m, struct process *p, struct site *s,
			  struct sym_frame *fr)
{
	*fr = (struct sym_frame){ .addr = 0x1000, .symbol = "evil\033]52;c;AAAA\007", .offset = 4,
				  .file = "x\033[2J.c", .line = 3, .module = "/tmp/\033[31mlib" };
	*s = (struct site){ .kind = LT_KIND_HEAP, .frames = fr, .n_frames = 1,
			    .outstanding_bytes = 64, .outstanding_count = 1, .allocs = 1 };
	*p = (struct process){ .pid = 42, .target = true, .sites = s, .n_sites = 1,
			       .cmdline = "./a \033]0;PWNED\007 \xc2\x9b" "2J",
			       .heap_outstanding_bytes = 64, .heap_outstanding_count = 1 };
	snprintf(p->comm, sizeof(p->comm), "\033[2Jevil");
	*m = (struct model){ .procs = p, .n_procs = 1, .resources = RES_HEAP };
}

static void test_report_escapes_what_the_process_controls(void)
{
	struct report_opts o = { .top_sites = 10 };
	struct sym_frame fr;
	struct process p;
	struct site s;
	struct model m;
	const char *out;
	FILE *f = open_printed();

	CHECK(f);
	hostile_model(&m, &p, &s, &fr);
	report__write(f, &m, &o);
	out = close_printed(f);
	CHECK(!strchr(out, '\033'));
	CHECK(!strchr(out, '\007'));
	CHECK(!strstr(out, "\xc2\x9b"));
	CHECK(strstr(out, "\nPID 42 \\x1b[2Jevil  [./a \\x1b]0;PWNED\\x07 \\xc2\\x9b2J]\n"));
	CHECK(strstr(out, "evil\\x1b]52;c;AAAA\\x07+0x4 x\\x1b[2J.c:3 [/tmp/\\x1b[31mlib]"));
}

/* Suspects mode: the header says what each suspect costs, costliest first, names escaped. */
static void test_heap_header_says_what_each_suspect_costs(void)
{
	struct process procs[5] = {
		{ .pid = 10, .comm = "cheap", .heap_mode = PROC_HEAP_SUSPECT,
		  .heap_cost_pct = 0.01 },
		{ .pid = 11, .comm = "redis\033", .heap_mode = PROC_HEAP_SUSPECT,
		  .heap_cost_pct = 1.5 },
		{ .pid = 12, .comm = "kept", .heap_mode = PROC_HEAP_EXACT, .heap_cost_pct = 9 },
		{ .pid = 13, .comm = "gone", .heap_mode = PROC_HEAP_RELEASED,
		  .heap_cost_pct = NAN },
		{ .pid = 14, .comm = "new", .heap_mode = PROC_HEAP_SUSPECT, .heap_cost_pct = NAN },
	};
	struct model m = { .procs = procs, .n_procs = 5, .heap_budgeted = true,
			   .heap_mode = HEAP_MODE_SUSPECTS, .heap_cost_pct = 1.6,
			   .heap_budget_pct = 2, .heap_exact_cost_pct = 7.1 };

	CHECK_EQ_STR(fmt__heap_mode(buf, sizeof(buf), &m),
		     "heap suspects 3  cost 1.60%/2% (exact ~7.10%)  released 1: 11 redis\\x1b "
		     "1.50%, 10 cheap 0.01%, 14 new ?");
	m.heap_mode = HEAP_MODE_EXACT;
	m.heap_bucket_fill = 0.25;
	CHECK_EQ_STR(fmt__heap_mode(buf, sizeof(buf), &m), "heap exact  cost 1.60%/2%  bucket 25%");
	/* Cut short, never overrun. */
	m.heap_mode = HEAP_MODE_SUSPECTS;
	CHECK(strlen(fmt__heap_mode(buf, 40, &m)) == 39);
}

static void test_diff_text_escapes_what_the_process_controls(void)
{
	struct snapshot_info info = { .time = "2026-01-01T00:00:00Z", .time_s = 1 };
	struct diff_text_opts o = { .top_sites = 10 };
	struct diff_side old, new_;
	struct sym_frame fr;
	struct process p;
	struct site s;
	struct model m, empty = { .resources = RES_HEAP };
	struct diff d;
	const char *out;
	FILE *f;

	hostile_model(&m, &p, &s, &fr);
	old = (struct diff_side){ "old.json", &empty, &info };
	new_ = (struct diff_side){ "new\033[2J.json", &m, &info };
	CHECK_EQ_INT(diff__compute(&old, &new_, &d), 0);
	f = open_printed();
	CHECK(f);
	diff__write_text(f, &d, &o);
	out = close_printed(f);
	diff__free(&d);
	CHECK(!strchr(out, '\033'));
	CHECK(strstr(out, "new\\x1b[2J.json"));
	CHECK(strstr(out, "PID 42 \\x1b[2Jevil  [./a \\x1b]0;PWNED\\x07 \\xc2\\x9b2J]  (new)"));
	CHECK(strstr(out, "#0  evil\\x1b]52;c;AAAA\\x07+0x4 x\\x1b[2J.c:3"));
}

int main(void)
{
	RUN(test_bytes_scale_with_binary_units);
	RUN(test_rates_carry_their_unit);
	RUN(test_ages_grow_units_and_unknown_is_a_dash);
	RUN(test_frame_report_style_always_shows_the_address);
	RUN(test_frame_short_style_shows_the_address_only_when_unknown);
	RUN(test_site_title_names_innermost_frame_or_says_unknown);
	RUN(test_site_title_of_stripped_code_names_module_and_known_caller);
	RUN(test_flags_one_table_for_names_and_letters);
	RUN(test_escape_turns_terminal_controls_into_hex);
	RUN(test_escape_keeps_utf8_but_not_c1_bidi_or_malformed_bytes);
	RUN(test_escaped_copy_is_cut_between_characters);
	RUN(test_line_stream_never_writes_past_its_buffer);
	RUN(test_long_frame_is_cut_to_its_line);
	RUN(test_report_escapes_what_the_process_controls);
	RUN(test_diff_text_escapes_what_the_process_controls);
	RUN(test_heap_header_says_what_each_suspect_costs);
	free(printed_buf);
	CHECK_EXIT();
}
