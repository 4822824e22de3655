// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * fuzz_snapshot.c - libFuzzer target for the snapshot reader: any bytes go through
 * snapshot__read_buf(), and whatever it accepts goes through every view that renders saved
 * data (text report, folded stacks, pprof, diff against itself, both diff outputs), so a
 * value the reader lets through but a view cannot take shows up here too.  Rejections must
 * come with a one-line reason.  Built by `make fuzz` (clang -fsanitize=fuzzer,address).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view/diff.h"
#include "view/export.h"
#include "view/report.h"
#include "view/snapshot_read.h"

static FILE *devnull;

static void render(const struct model *m, const struct snapshot_info *info)
{
	struct report_opts ro = { .top_sites = 5 };
	struct export_opts eo = { .time_s = info->time_s };
	struct diff_side side = { "fuzz", m, info };
	struct diff_text_opts dto = { .top_sites = 3 };
	struct diff d;
	uint8_t *buf;
	size_t len;

	report__write(devnull, m, &ro);
	export__folded(devnull, m);
	if (!export__pprof_pack(m, &eo, &buf, &len))
		free(buf);
	if (!diff__compute(&side, &side, &d)) {
		diff__write_text(devnull, &d, &dto);
		diff__write_json(devnull, &d);
		diff__free(&d);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snapshot_info info;
	struct model m;
	char err[1024];

	if (!devnull)
		devnull = fopen("/dev/null", "w");
	if (!snapshot__read_buf(data, size, "fuzz.json", NULL, &m, &info, err, sizeof(err)))
		render(&m, &info);
	else if (!err[0] || strchr(err, '\n'))
		abort();	/* every rejection says why, on one line */
	model__free(&m);
	return 0;
}
