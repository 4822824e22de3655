// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * metrics_server.c - the --listen endpoint (see metrics_server.h), on libmicrohttpd.
 *
 * leaktop runs as root, so the endpoint is small on purpose: GET and HEAD only, three paths
 * ("/metrics", "/" naming it, anything else 404), a bounded number of connections (also per
 * client address), a short idle timeout, no request bodies, and nothing but a copy of the
 * last published page in any answer.  The socket is made and bound here, before any probe
 * goes in, so that a port in use is one clear line; libmicrohttpd's thread starts with every
 * signal blocked (Ctrl-C stays the run loop's).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <microhttpd.h>

#include "cli/metrics_server.h"
#include "util/msg.h"
#include "view/metrics.h"

#define MAX_CONNECTIONS		16
#define MAX_PER_CLIENT		4
#define IDLE_TIMEOUT_S		10
#define BACKLOG			16

struct page {
	char *data;
	size_t len;
};

struct metrics_server {
	struct MHD_Daemon *daemon;
	int fd;
	pthread_mutex_t lock;		/* guards pages */
	struct page pages[2];		/* by enum metrics_format; data NULL: nothing yet */
	_Atomic uint64_t requests;
	int verbose;
};

static const char index_text[] =
	"leaktop: metrics at /metrics (OpenMetrics or the Prometheus text format)\n";

static enum MHD_Result answer(struct MHD_Connection *c, unsigned int status, const char *type,
			      const void *body, size_t len, const char *allow)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result serve_metrics(struct metrics_server *s, struct MHD_Connection *c)
{
	const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							 MHD_HTTP_HEADER_ACCEPT);
	enum metrics_format fmt = metrics__negotiate(accept);
	enum MHD_Result ret;

	pthread_mutex_lock(&s->lock);
	if (!s->pages[fmt].data) {
		static const char wait[] = "leaktop: no interval has completed yet; retry\n";

		pthread_mutex_unlock(&s->lock);
		return answer(c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain; charset=utf-8", wait,
			      sizeof(wait) - 1, NULL);
	}
	ret = answer(c, MHD_HTTP_OK, metrics__content_type(fmt), s->pages[fmt].data,
		     s->pages[fmt].len, NULL);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_len, void **req_cls)
{
	static const char not_found[] = "not found: leaktop serves /metrics\n";
	static const char bad_method[] = "only GET and HEAD\n";
	struct metrics_server *s = cls;

	(void)version;
	(void)upload;
	(void)upload_len;
	(void)req_cls;
	atomic_fetch_add(&s->requests, 1);
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return answer(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8",
			      bad_method, sizeof(bad_method) - 1, "GET, HEAD");
	if (!strcmp(url, "/metrics"))
		return serve_metrics(s, c);
	if (!strcmp(url, "/"))
		return answer(c, MHD_HTTP_OK, "text/plain; charset=utf-8", index_text,
			      sizeof(index_text) - 1, NULL);
	return answer(c, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8", not_found,
		      sizeof(not_found) - 1, NULL);
}

/* libmicrohttpd's own messages: with -v only, escaped like every other line. */
static void on_log(void *cls, const char *fmt, va_list ap)
{
	struct metrics_server *s = cls;
	char line[512];
	size_t n;

	if (!s->verbose)
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = '\0';
	err_line("metrics endpoint: %s", line);
}

/* A bound, listening socket for addr; -errno with the line in msg. */
static int open_socket(const struct sockaddr_storage *addr, socklen_t len, const char *text,
		       char *msg, size_t msg_len)
{
	int fd, one = 1, err;

	fd = socket(addr->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		msg__set(msg, msg_len, err, "cannot listen on %s: %s", text, strerror(-err));
		return err;
	}
	/* A restart may bind while the last run's connections linger; a listener still
	 * refuses it. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)addr, len) || listen(fd, BACKLOG)) {
		err = -errno;
		if (err == -EADDRINUSE)
			msg__set(msg, msg_len, err, "cannot listen on %s: the port is in use; "
				 "choose another port with --listen, or stop what uses it", text);
		else if (err == -EADDRNOTAVAIL)
			msg__set(msg, msg_len, err, "cannot listen on %s: no interface of this "
				 "machine has that address; give one of its addresses", text);
		else
			msg__set(msg, msg_len, err, "cannot listen on %s: %s", text,
				 strerror(-err));
		close(fd);
		return err;
	}
	return fd;
}

int metrics_server__start(struct metrics_server **out, const struct sockaddr_storage *addr,
			  socklen_t addr_len, const char *text, int verbose, char *msg,
			  size_t msg_len)
{
	struct metrics_server *s = calloc(1, sizeof(*s));
	sigset_t all, old;
	int err;

	*out = NULL;
	if (!s) {
		msg__set(msg, msg_len, -ENOMEM, "out of memory");
		return -ENOMEM;
	}
	s->verbose = verbose;
	pthread_mutex_init(&s->lock, NULL);
	s->fd = open_socket(addr, addr_len, text, msg, msg_len);
	if (s->fd < 0) {
		err = s->fd;
		goto fail;
	}
	/* The daemon's thread inherits this mask: signals stay with the run loop. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	s->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO |
				     MHD_USE_ERROR_LOG, 0, NULL, NULL, on_request, s,
				     MHD_OPTION_EXTERNAL_LOGGER, on_log, s,
				     MHD_OPTION_LISTEN_SOCKET, s->fd,
				     MHD_OPTION_CONNECTION_LIMIT, (unsigned int)MAX_CONNECTIONS,
				     MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)MAX_PER_CLIENT,
				     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)IDLE_TIMEOUT_S,
				     MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!s->daemon) {
		err = -EIO;
		msg__set(msg, msg_len, err, "cannot serve metrics on %s: the HTTP server did not "
			 "start; run with -v for its messages", text);
		goto fail;
	}
	*out = s;
	return 0;
fail:
	if (s->fd >= 0)
		close(s->fd);
	pthread_mutex_destroy(&s->lock);
	free(s);
	return err;
}

void metrics_server__publish(struct metrics_server *s, char *prom, size_t prom_len, char *om,
			     size_t om_len)
{
	struct page old[2];

	pthread_mutex_lock(&s->lock);
	memcpy(old, s->pages, sizeof(old));
	s->pages[METRICS_PROMETHEUS] = (struct page){ prom, prom_len };
	s->pages[METRICS_OPENMETRICS] = (struct page){ om, om_len };
	pthread_mutex_unlock(&s->lock);
	free(old[0].data);
	free(old[1].data);
}

uint64_t metrics_server__requests(const struct metrics_server *s)
{
	return atomic_load(&((struct metrics_server *)s)->requests);
}

void metrics_server__stop(struct metrics_server *s)
{
	if (!s)
		return;
	MHD_stop_daemon(s->daemon);	/* closes the listening socket too */
	pthread_mutex_destroy(&s->lock);
	free(s->pages[0].data);
	free(s->pages[1].data);
	free(s);
}
