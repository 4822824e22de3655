/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * metrics_server.h - --listen: an HTTP endpoint (libmicrohttpd, its own thread) serving the
 * latest interval's metrics at /metrics, in the format the scraper's Accept header asks for
 * (view/metrics.h).  The run loop renders both formats once per interval and publishes them;
 * a request copies the published page and never touches the model.
 */
#ifndef LEAKTOP_METRICS_SERVER_H
#define LEAKTOP_METRICS_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct metrics_server;

/*
 * Listen on addr (bound here, so that a port in use is refused at once) and serve.  0, or
 * -errno with one line (cause and fix) in msg; text is the address as the user wrote it.
 * auth_path (--listen-auth: a line user:password, HTTP basic auth) and token_path
 * (--listen-token: a line, the bearer token), when not NULL, are read here (files of root
 * that no group or other may read, else refused); a request without either set of
 * credentials is then answered 401.
 */
int metrics_server__start(struct metrics_server **out, const struct sockaddr_storage *addr,
			  socklen_t addr_len, const char *text, const char *auth_path,
			  const char *token_path, int verbose, char *msg, size_t msg_len);
/*
 * The pages served from now on, one per format (malloc'd; the server owns them after the
 * call, whatever it returns): prom in the Prometheus text format, om in OpenMetrics.
 */
void metrics_server__publish(struct metrics_server *s, char *prom, size_t prom_len, char *om,
			     size_t om_len);
/* Requests answered so far (every path and status). */
uint64_t metrics_server__requests(const struct metrics_server *s);
/* Stop serving (open connections are closed) and free it; NULL is a no-op. */
void metrics_server__stop(struct metrics_server *s);

#endif
