// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * main.c - the `leaktop` entry point: a table of subcommands, each with its own parser.
 * Without a subcommand word, leaktop runs live (whole system, -p or -- CMD).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/check_cmd.h"
#include "cli/lastref_cmd.h"
#include "cli/options.h"
#include "cli/report_cmd.h"
#include "cli/run.h"

static int cmd_run(int argc, char **argv)
{
	struct options o;
	char err[512];

	if (options__parse(argc, argv, &o, err, sizeof(err))) {
		fprintf(stderr, "leaktop: %s\n", err);
		return 2;
	}
	if (o.help) {
		fputs(options__usage(), stdout);
		return 0;
	}
	if (o.version) {
		printf("leaktop %s\n", LEAKTOP_VERSION);
		return 0;
	}
	return run__main(&o);
}

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{ "run", cmd_run },
	{ "report", report_cmd__report },
	{ "diff", report_cmd__diff },
	{ "scan", run__scan_main },
	{ "lastref", lastref_cmd__main },
	{ "check", check_cmd__main },
};

int main(int argc, char **argv)
{
	/* Symbols come from local files only: never stall on a debuginfod server as root. */
	unsetenv("DEBUGINFOD_URLS");
	if (argc > 1) {
		for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
			if (!strcmp(argv[1], commands[i].name))
				return commands[i].fn(argc - 1, argv + 1);
	}
	return cmd_run(argc, argv);
}
