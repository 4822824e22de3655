// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_options.c - the command line parser: accepted forms, defaults, and one-line errors.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include <arpa/inet.h>
#include <netinet/in.h>

#include "cli/options.h"

/*
 * options__parse keeps pointers into argv (o.cmd, o.json_path, o.pprof_path, o.folded_path),
 * so argv must outlive the options it fills, as main()'s does.  The helper's argv is
 * therefore not on its own stack: it stays valid until the next parse(), which is as long
 * as any test looks at what parse() returned.
 */
static char *parse_argv[32];

static int parse(struct options *o, char *err, ...)
{
	const size_t max_args = sizeof(parse_argv) / sizeof(parse_argv[0]) - 1;
	int argc = 0;
	va_list ap;
	char *arg;

	va_start(ap, err);
	parse_argv[argc++] = "leaktop";
	while ((arg = va_arg(ap, char *))) {
		if ((size_t)argc == max_args) {
			fprintf(stderr, "test_options: parse() takes at most %zu arguments\n",
				max_args - 1);
			abort();
		}
		parse_argv[argc++] = arg;
	}
	va_end(ap);
	parse_argv[argc] = NULL;
	return options__parse(argc, parse_argv, o, err, 256);
}

static void test_options_defaults_trace_whole_system(void)
{
	struct options o;
	char err[256];

	CHECK_EQ_INT(parse(&o, err, NULL), 0);
	CHECK_EQ_INT(o.mode, MODE_SYSTEM);
	CHECK(o.interval_s == 1.0);
	CHECK(o.duration_s == 0);
	CHECK_EQ_INT(o.resources, RES_ALL);
	CHECK_EQ_INT(o.stack_depth, 32);
	CHECK(!o.batch_set);
	CHECK(o.json_path == NULL);
}

static void test_options_scan_max_stop_defaults_to_2000_and_takes_1_to_2000(void)
{
	struct options o;
	char err[256];

	CHECK_EQ_INT(parse(&o, err, NULL), 0);
	CHECK_EQ_INT(o.scan_max_stop_ms, 2000);
	CHECK_EQ_INT(parse(&o, err, "-p", "1", "--scan-every", "1", "--scan-max-stop", "5", NULL),
		     0);
	CHECK_EQ_INT(o.scan_max_stop_ms, 5);
	CHECK_EQ_INT(parse(&o, err, "--scan-max-stop", "2001", NULL), -EINVAL);
	CHECK_EQ_STR(err, "invalid --scan-max-stop '2001': expected 1 to 2000 milliseconds");
	CHECK_EQ_INT(parse(&o, err, "--scan-max-stop", "0", NULL), -EINVAL);
}

static void test_options_map_share_defaults_to_25_and_takes_1_to_100(void)
{
	struct options o;
	char err[256];

	CHECK_EQ_INT(parse(&o, err, NULL), 0);
	CHECK_EQ_INT(o.map_share_pct, 25);
	/* Not given: -p and -- let a process hold a whole map. */
	CHECK(!o.map_share_set);
	CHECK_EQ_INT(parse(&o, err, "--map-share", "100", NULL), 0);
	CHECK_EQ_INT(o.map_share_pct, 100);
	CHECK(o.map_share_set);
	CHECK_EQ_INT(parse(&o, err, "--map-share", "0", NULL), -EINVAL);
	CHECK_EQ_STR(err, "invalid --map-share '0': expected 1 to 100 percent");
	CHECK_EQ_INT(parse(&o, err, "--map-share", "101", NULL), -EINVAL);
}

static void test_options_listen_takes_a_port_an_ipv4_or_bracketed_ipv6_address(void)
{
	struct options o;
	char err[256];
	struct sockaddr_in *a4 = (struct sockaddr_in *)&o.listen_addr;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&o.listen_addr;

	CHECK_EQ_INT(parse(&o, err, NULL), 0);
	CHECK_EQ_INT(o.listen_len, 0);
	CHECK_EQ_INT(o.metrics_sites, 20);
	CHECK(!o.quiet);
	/* A port alone: loopback only. */
	CHECK_EQ_INT(parse(&o, err, "--listen", "9645", "-q", NULL), 0);
	CHECK_EQ_INT(a4->sin_family, AF_INET);
	CHECK_EQ_INT(ntohl(a4->sin_addr.s_addr), INADDR_LOOPBACK);
	CHECK_EQ_INT(ntohs(a4->sin_port), 9645);
	CHECK_EQ_STR(o.listen_text, "9645");
	CHECK(o.quiet);
	CHECK_EQ_INT(parse(&o, err, "--listen", "*:80", NULL), 0);
	CHECK_EQ_INT(a4->sin_addr.s_addr, htonl(INADDR_ANY));
	CHECK_EQ_INT(parse(&o, err, "--listen=10.1.2.3:8080", "--metrics-sites", "0", NULL), 0);
	CHECK_EQ_INT(ntohl(a4->sin_addr.s_addr), 0x0a010203);
	CHECK_EQ_INT(o.metrics_sites, 0);
	CHECK_EQ_INT(parse(&o, err, "--listen", "[::1]:9645", NULL), 0);
	CHECK_EQ_INT(a6->sin6_family, AF_INET6);
	CHECK(IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr));
	CHECK_EQ_INT(o.listen_len, sizeof(struct sockaddr_in6));
	/* Names are not looked up; ports are 1-65535; v6 needs brackets. */
	CHECK_EQ_INT(parse(&o, err, "--listen", "example.com:80", NULL), -EINVAL);
	CHECK(strstr(err, "invalid --listen 'example.com:80'"));
	CHECK_EQ_INT(parse(&o, err, "--listen", "0", NULL), -EINVAL);
	CHECK_EQ_INT(parse(&o, err, "--listen", "65536", NULL), -EINVAL);
	CHECK_EQ_INT(parse(&o, err, "--listen", "::1:80", NULL), -EINVAL);
	CHECK_EQ_INT(parse(&o, err, "--listen", "[::1]", NULL), -EINVAL);
	CHECK_EQ_INT(parse(&o, err, "--listen", "127.0.0.1:", NULL), -EINVAL);
	CHECK_EQ_INT(parse(&o, err, "--metrics-sites", "1001", NULL), -EINVAL);
	CHECK(strstr(err, "invalid --metrics-sites '1001'"));
}

static void test_options_stop_at_takes_a_function_or_a_site_id_and_a_number(void)
{
	struct options o;
	char err[256];

	CHECK_EQ_INT(parse(&o, err, "--stop-at", "make_block:7", "--", "prog", NULL), 0);
	CHECK_EQ_STR(o.stop_at_fn, "make_block");
	CHECK_EQ_INT(o.stop_at_hash, 0);
	CHECK_EQ_INT(o.stop_at_seq, 7);
	/* C++ names keep their colons: N follows the last one. */
	CHECK_EQ_INT(parse(&o, err, "--stop-at", "ns::Cache::put:12", "-p", "5", NULL), 0);
	CHECK_EQ_STR(o.stop_at_fn, "ns::Cache::put");
	CHECK_EQ_INT(o.stop_at_seq, 12);
	/* A site id: 16 hex digits, as the JSON's stack_id (0x allowed). */
	CHECK_EQ_INT(parse(&o, err, "--stop-at", "0302f9f5736b1dbc:3", "-p", "5", NULL), 0);
	CHECK(o.stop_at_hash == 0x0302f9f5736b1dbcULL);
	CHECK_EQ_STR(o.stop_at_fn, "");
	CHECK_EQ_INT(parse(&o, err, "--stop-at", "0x0302F9F5736B1DBC:3", "-p", "5", NULL), 0);
	CHECK(o.stop_at_hash == 0x0302f9f5736b1dbcULL);
	CHECK_EQ_INT(parse(&o, err, "--stop-at", "f", "-p", "5", NULL), -EINVAL);
	CHECK_EQ_INT(parse(&o, err, "--stop-at", "f:0", "-p", "5", NULL), -EINVAL);
	CHECK_EQ_INT(parse(&o, err, "--stop-at", ":1", "-p", "5", NULL), -EINVAL);
	CHECK_EQ_INT(parse(&o, err, "--stop-at", "f:1x", "-p", "5", NULL), -EINVAL);
	CHECK_EQ_INT(parse(&o, err, "--stop-at", "0000000000000000:1", "-p", "5", NULL), -EINVAL);
	CHECK(strstr(err, "invalid --stop-at"));
	/* It stops a traced process: not for the whole system. */
	CHECK_EQ_INT(parse(&o, err, "--stop-at", "f:1", NULL), -EINVAL);
	CHECK(strstr(err, "give -p PID or -- CMD"));
}

static void test_options_pid_list_long_and_short(void)
{
	struct options o;
	char err[256];

	CHECK_EQ_INT(parse(&o, err, "-p", "12,34", NULL), 0);
	CHECK_EQ_INT(o.mode, MODE_PIDS);
	CHECK_EQ_INT(o.n_pids, 2);
	CHECK_EQ_INT(o.pids[0], 12);
	CHECK_EQ_INT(o.pids[1], 34);
	CHECK_EQ_INT(parse(&o, err, "--pid=7", NULL), 0);
	CHECK_EQ_INT(o.n_pids, 1);
	CHECK_EQ_INT(o.pids[0], 7);
}

static void test_options_rejects_bad_pid(void)
{
	struct options o;
	char err[256];

	CHECK_EQ_INT(parse(&o, err, "-p", "abc", NULL), -EINVAL);
	CHECK(strstr(err, "abc") != NULL);
	CHECK_EQ_INT(parse(&o, err, "-p", "0", NULL), -EINVAL);
	CHECK_EQ_INT(parse(&o, err, "-p", "12,", NULL), 0);	/* trailing comma is harmless */
	CHECK_EQ_INT(parse(&o, err, "-p", "-5", NULL), -EINVAL);
	CHECK_EQ_INT(parse(&o, err, "-p", "99999999999", NULL), -EINVAL);
	CHECK(strchr(err, '\n') == NULL);
}

static void test_options_command_after_double_dash_keeps_its_flags(void)
{
	struct options o;
	char err[256];

	CHECK_EQ_INT(parse(&o, err, "-b", "--", "ls", "-l", "-p", NULL), 0);
	CHECK_EQ_INT(o.mode, MODE_COMMAND);
	CHECK_EQ_STR(o.cmd[0], "ls");
	CHECK_EQ_STR(o.cmd[1], "-l");
	CHECK_EQ_STR(o.cmd[2], "-p");
	CHECK(o.cmd[3] == NULL);
	CHECK_EQ_INT(o.n_pids, 0);
	CHECK(o.batch);
}

static void test_options_paths_and_command_point_into_argv(void)
{
	struct options o;
	char err[256];

	CHECK_EQ_INT(parse(&o, err, "-j", "out.json", "--pprof", "p.gz", "--folded", "f.txt",
			   "--", "ls", NULL), 0);
	CHECK(o.json_path == parse_argv[2]);
	CHECK(o.pprof_path == parse_argv[4]);
	CHECK(o.folded_path == parse_argv[6]);
	CHECK(o.cmd == &parse_argv[8]);
	CHECK(o.cmd[1] == NULL);
}

static void test_options_missing_command_is_an_error(void)
{
	struct options o;
	char err[256];

	CHECK_EQ_INT(parse(&o, err, "--", NULL), -EINVAL);
	CHECK(strstr(err, "missing command") != NULL);
}

static void test_options_stray_argument_is_an_error(void)
{
	struct options o;
	char err[256];

	CHECK_EQ_INT(parse(&o, err, "ls", NULL), -EINVAL);
	CHECK(strstr(err, "--") != NULL);
}

static void test_options_output_path_forgotten_before_command_is_an_error(void)
{
	struct options o;
	char err[256];

	CHECK_EQ_INT(parse(&o, err, "-j", "--", "ls", NULL), -EINVAL);
	CHECK_EQ_STR(err, "--json needs a file name or '-' before '--'");
	CHECK_EQ_INT(parse(&o, err, "--pprof", "--", "ls", NULL), -EINVAL);
	CHECK_EQ_STR(err, "--pprof needs a file name before '--'");
	CHECK_EQ_INT(parse(&o, err, "--folded=", NULL), -EINVAL);
	CHECK_EQ_STR(err, "empty --folded path: give a file name");
	CHECK_EQ_INT(parse(&o, err, "-j", "-", "--", "ls", NULL), 0);
	CHECK_EQ_STR(o.json_path, "-");
	CHECK_EQ_STR(o.cmd[0], "ls");
}

static void test_options_intervals_accept_fractions_only_in_range(void)
{
	struct options o;
	char err[256];

	CHECK_EQ_INT(parse(&o, err, "-i", "0.25", "-d", "3", NULL), 0);
	CHECK(o.interval_s == 0.25);
	CHECK(o.duration_s == 3);
	CHECK_EQ_INT(parse(&o, err, "--interval", "0", NULL), -EINVAL);
	CHECK_EQ_INT(parse(&o, err, "-i", "1x", NULL), -EINVAL);
	CHECK_EQ_INT(parse(&o, err, "-i", "nan", NULL), -EINVAL);
	CHECK_EQ_INT(parse(&o, err, "-d", "-1", NULL), -EINVAL);
}

static void test_options_unknown_flag_and_missing_value(void)
{
	struct options o;
	char err[256];

	CHECK_EQ_INT(parse(&o, err, "--bogus", NULL), -EINVAL);
	CHECK(strstr(err, "--bogus") != NULL);
	CHECK_EQ_INT(parse(&o, err, "-x", NULL), -EINVAL);
	CHECK(strstr(err, "-x") != NULL);
	CHECK_EQ_INT(parse(&o, err, "-i", NULL), -EINVAL);
	CHECK(strstr(err, "needs a value") != NULL);
}

static void test_options_resources_and_stack_depth(void)
{
	struct options o;
	char err[256];

	CHECK_EQ_INT(parse(&o, err, "-r", "heap", "--stack-depth", "127", NULL), 0);
	CHECK_EQ_INT(o.resources, RES_HEAP);
	CHECK_EQ_INT(o.stack_depth, 127);
	CHECK_EQ_INT(parse(&o, err, "--resources=fd,heap", NULL), 0);
	CHECK_EQ_INT(o.resources, RES_HEAP | RES_FD);
	CHECK_EQ_INT(parse(&o, err, "--resources=fd,heap,mmap", NULL), 0);
	CHECK_EQ_INT(o.resources, RES_ALL);
	CHECK_EQ_INT(parse(&o, err, "-r", "mmap", NULL), 0);
	CHECK_EQ_INT(o.resources, RES_MMAP);
	CHECK_EQ_INT(parse(&o, err, NULL), 0);
	CHECK_EQ_INT(o.resources, RES_ALL);
	CHECK_EQ_INT(parse(&o, err, "-r", "gpu", NULL), -EINVAL);
	CHECK_EQ_INT(parse(&o, err, "--stack-depth", "128", NULL), -EINVAL);
	CHECK_EQ_INT(parse(&o, err, "--stack-depth", "0", NULL), -EINVAL);
}

static void test_options_pid_and_command_cannot_mix(void)
{
	struct options o;
	char err[256];

	CHECK_EQ_INT(parse(&o, err, "-p", "1", "--", "ls", NULL), -EINVAL);
}

static void test_options_json_dash_and_help(void)
{
	struct options o;
	char err[256];

	CHECK_EQ_INT(parse(&o, err, "-j", "-", NULL), 0);
	CHECK_EQ_STR(o.json_path, "-");
	CHECK_EQ_INT(parse(&o, err, "--help", NULL), 0);
	CHECK(o.help);
	CHECK_EQ_INT(parse(&o, err, "-V", NULL), 0);
	CHECK(o.version);
	CHECK(strstr(options__usage(), "--pid") != NULL);
}

static void test_options_listen_auth_and_token_need_listen_and_keep_their_paths(void)
{
	struct options o;
	char err[256];

	CHECK_EQ_INT(parse(&o, err, "--listen", "9645", "--listen-auth", "/etc/leaktop/auth",
			   "--listen-token", "/etc/leaktop/token", NULL), 0);
	CHECK_EQ_STR(o.listen_auth_path, "/etc/leaktop/auth");
	CHECK_EQ_STR(o.listen_token_path, "/etc/leaktop/token");
	CHECK_EQ_INT(parse(&o, err, "--listen-auth", "/etc/leaktop/auth", NULL), -EINVAL);
	CHECK(strstr(err, "--listen ADDR:PORT"));
	CHECK_EQ_INT(parse(&o, err, "--listen", "9645", "--listen-token", "", NULL), -EINVAL);
	CHECK_EQ_INT(parse(&o, err, NULL), 0);
	CHECK(!o.listen_auth_path && !o.listen_token_path);
}

int main(void)
{
	RUN(test_options_defaults_trace_whole_system);
	RUN(test_options_scan_max_stop_defaults_to_2000_and_takes_1_to_2000);
	RUN(test_options_map_share_defaults_to_25_and_takes_1_to_100);
	RUN(test_options_pid_list_long_and_short);
	RUN(test_options_listen_takes_a_port_an_ipv4_or_bracketed_ipv6_address);
	RUN(test_options_listen_auth_and_token_need_listen_and_keep_their_paths);
	RUN(test_options_stop_at_takes_a_function_or_a_site_id_and_a_number);
	RUN(test_options_rejects_bad_pid);
	RUN(test_options_command_after_double_dash_keeps_its_flags);
	RUN(test_options_paths_and_command_point_into_argv);
	RUN(test_options_missing_command_is_an_error);
	RUN(test_options_stray_argument_is_an_error);
	RUN(test_options_intervals_accept_fractions_only_in_range);
	RUN(test_options_unknown_flag_and_missing_value);
	RUN(test_options_resources_and_stack_depth);
	RUN(test_options_pid_and_command_cannot_mix);
	RUN(test_options_json_dash_and_help);
	RUN(test_options_output_path_forgotten_before_command_is_an_error);
	CHECK_EXIT();
}
