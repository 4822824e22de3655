// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * metrics_server.c - the --listen endpoint (see metrics_server.h), on libmicrohttpd.
 *
 * leaktop runs as root, so the endpoint is small on purpose: GET and HEAD only, three paths
 * ("/metrics", "/" naming it, anything else 404), no request bodies, small request heads, and
 * nothing but a copy of the last published page in any answer; with --listen-auth or
 * --listen-token, nothing but a 401 without the credentials.  The socket is made and bound
 * here, before any probe goes in, so that a port in use is one clear line; libmicrohttpd's
 * thread starts with every signal blocked (Ctrl-C stays the run loop's).
 *
 * Slow clients cannot lock a scraper out (review C5).  libmicrohttpd's timeout is idle time,
 * so a client that sends a byte every few seconds would hold its connection for ever, and a
 * per-address limit lets four of them on 127.0.0.1 lock out a Prometheus on the same host.
 * Here every connection has a deadline for its current phase: the request head must be in
 * HEAD_DEADLINE_S after the accept (or the previous answer), the answer sent
 * ANSWER_DEADLINE_S after the head.  At each accept the connections past their deadline are
 * shut down, and when MAX_CONNECTIONS are open the oldest still waiting for its head (else
 * the oldest) makes room: a new client always gets in, and a scraper's request, whose head
 * comes at once, is never the oldest.  No per-address limit.  All of it runs on
 * libmicrohttpd's one thread (its callbacks), so the table needs no lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <microhttpd.h>

#include "cli/metrics_server.h"
#include "util/msg.h"
#include "view/metrics.h"
#include "util/clock.h"

#define MAX_CONNECTIONS		64	/* open at once; more evict the oldest */
#define CONN_SLOTS		128	/* libmicrohttpd's limit: evicted ones still closing */
#define HEAD_DEADLINE_S		5	/* from accept (or the last answer) to a whole head */
#define ANSWER_DEADLINE_S	10	/* from the head to the answer's last byte */
#define IDLE_TIMEOUT_S		10
#define MEMORY_LIMIT_BYTES	(16 * 1024)	/* per connection: the request head, buffers */
#define BACKLOG			64
#define CRED_MAX		1024	/* a credentials file's line, at most */

/* A connection, from libmicrohttpd's accept to its close. */
struct conn {
	bool used;
	bool busy;			/* a request head is in: answering */
	bool cut;			/* shut down by us, not closed yet */
	int fd;
	double since_s;			/* start of the current phase (monotonic) */
};

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
	struct conn conns[CONN_SLOTS];	/* libmicrohttpd's thread only */
	/* --listen-auth user:password, --listen-token: "" when not asked. */
	char user[CRED_MAX], password[CRED_MAX], token[CRED_MAX];
};

static void cut(struct conn *c)
{
	shutdown(c->fd, SHUT_RDWR);	/* libmicrohttpd sees the end and closes it */
	c->cut = true;
}

/* Before each accept: connections past their deadline go; at the limit, the oldest too. */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
	struct metrics_server *s = cls;
	struct conn *oldest = NULL;
	double now = monotonic_s();
	size_t open = 0;

	(void)addr;
	(void)len;
	for (size_t i = 0; i < CONN_SLOTS; i++) {
		struct conn *c = &s->conns[i];

		if (!c->used || c->cut)
			continue;
		if (now - c->since_s > (c->busy ? ANSWER_DEADLINE_S : HEAD_DEADLINE_S)) {
			cut(c);
			continue;
		}
		open++;
		/* Waiting for a head goes before answering; then the older. */
		if (!oldest || (oldest->busy && !c->busy) ||
		    (oldest->busy == c->busy && c->since_s < oldest->since_s))
			oldest = c;
	}
	if (open >= MAX_CONNECTIONS && oldest)
		cut(oldest);
	return MHD_YES;
}

static void on_connection(void *cls, struct MHD_Connection *mc, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct metrics_server *s = cls;
	const union MHD_ConnectionInfo *info;
	struct conn *c = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (c)
			c->used = false;
		return;
	}
	*socket_context = NULL;
	info = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!info)
		return;
	for (size_t i = 0; i < CONN_SLOTS; i++) {
		if (s->conns[i].used)
			continue;
		s->conns[i] = (struct conn){ .used = true, .fd = info->connect_fd,
					     .since_s = monotonic_s() };
		*socket_context = &s->conns[i];
		return;
	}
}

static struct conn *conn_of(struct MHD_Connection *mc)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return info ? info->socket_context : NULL;
}

/* A request answered: the connection waits for its next head from now. */
static void on_completed(void *cls, struct MHD_Connection *mc, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct conn *c = conn_of(mc);

	(void)cls;
	(void)req_cls;
	(void)toe;
	if (c) {
		c->busy = false;
		c->since_s = monotonic_s();
	}
}

/* Equal, in a time that depends on the lengths only. */
static bool same_secret(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char diff = la != lb;

	for (size_t i = 0; i < la; i++)
		diff |= (unsigned char)a[i] ^ (unsigned char)b[i % (lb ? lb : 1)];
	return !diff && lb;
}

/* Does the request carry the credentials asked for (always, when none are)? */
static bool authorized(struct metrics_server *s, struct MHD_Connection *c)
{
	const char *h;
	bool ok = false;

	if (!s->user[0] && !s->token[0])
		return true;
	if (s->token[0]) {
		h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
		if (h && !strncasecmp(h, "Bearer ", 7) && same_secret(h + 7, s->token))
			ok = true;
	}
	if (!ok && s->user[0]) {
		char *password = NULL, *user = MHD_basic_auth_get_username_password(c, &password);

		/* Both compared whatever the first gives: no early answer to time. */
		if (user && password)
			ok = same_secret(user, s->user) & same_secret(password, s->password);
		MHD_free(user);
		MHD_free(password);
	}
	return ok;
}

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

static enum MHD_Result refuse_unauthorized(struct metrics_server *s, struct MHD_Connection *c)
{
	static const char text[] = "leaktop: credentials required (--listen-auth, --listen-token)\n";
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(sizeof(text) - 1, (void *)text,
					    MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	if (s->user[0]) {
		ret = MHD_queue_basic_auth_fail_response(c, "leaktop", r);
	} else {
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
					"Bearer realm=\"leaktop\"");
		ret = MHD_queue_response(c, MHD_HTTP_UNAUTHORIZED, r);
	}
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_len, void **req_cls)
{
	static const char not_found[] = "not found: leaktop serves /metrics\n";
	static const char bad_method[] = "only GET and HEAD\n";
	struct metrics_server *s = cls;
	struct conn *conn = conn_of(c);

	(void)version;
	(void)upload;
	(void)upload_len;
	(void)req_cls;
	/* The head is in: the answer's deadline runs from now. */
	if (conn && !conn->busy) {
		conn->busy = true;
		conn->since_s = monotonic_s();
	}
	atomic_fetch_add(&s->requests, 1);
	if (!authorized(s, c))
		return refuse_unauthorized(s, c);
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

/*
 * The first line of a credentials file into buf: a regular file (not a link) of root or
 * leaktop's uid that no group or other may read or write.  0, or -errno with the line.
 */
static int read_secret(const char *opt, const char *path, char *buf, size_t len, char *msg,
		       size_t msg_len)
{
	struct stat st;
	ssize_t n;
	int fd, err = 0;
	char *nl;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return msg__set(msg, msg_len, -errno, "cannot read %s %s: %s; give a file holding "
				"the credentials", opt, path, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		err = msg__set(msg, msg_len, -EINVAL, "refusing %s %s: not a regular file; give "
			       "a file holding the credentials", opt, path);
		goto out;
	}
	if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & 077)) {
		err = msg__set(msg, msg_len, -EPERM, "refusing %s %s: other users may read or "
			       "change it (owner uid %u, mode %04o); chown root and chmod 600 it",
			       opt, path, (unsigned int)st.st_uid, st.st_mode & 07777);
		goto out;
	}
	n = read(fd, buf, len - 1);
	if (n < 0) {
		err = msg__set(msg, msg_len, -errno, "cannot read %s %s: %s", opt, path,
			       strerror(errno));
		goto out;
	}
	buf[n] = '\0';
	nl = strpbrk(buf, "\r\n");
	if (nl)
		*nl = '\0';
	if (!buf[0] || (size_t)n == len - 1)
		err = msg__set(msg, msg_len, -EINVAL, "refusing %s %s: its first line is %s; "
			       "write the credentials on one line", opt, path,
			       buf[0] ? "too long" : "empty");
out:
	close(fd);
	return err;
}

static int load_credentials(struct metrics_server *s, const char *auth_path,
			    const char *token_path, char *msg, size_t msg_len)
{
	char line[CRED_MAX * 2], *colon;
	int err;

	if (token_path) {
		err = read_secret("--listen-token", token_path, s->token, sizeof(s->token), msg,
				  msg_len);
		if (err)
			return err;
	}
	if (!auth_path)
		return 0;
	err = read_secret("--listen-auth", auth_path, line, sizeof(line), msg, msg_len);
	if (err)
		return err;
	colon = strchr(line, ':');
	if (!colon || colon == line || !colon[1] || strlen(line) >= CRED_MAX) {
		explicit_bzero(line, sizeof(line));
		return msg__set(msg, msg_len, -EINVAL, "refusing --listen-auth %s: expected one "
				"line user:password (both not empty)", auth_path);
	}
	*colon = '\0';
	snprintf(s->user, sizeof(s->user), "%s", line);
	snprintf(s->password, sizeof(s->password), "%s", colon + 1);
	explicit_bzero(line, sizeof(line));
	return 0;
}

int metrics_server__start(struct metrics_server **out, const struct sockaddr_storage *addr,
			  socklen_t addr_len, const char *text, const char *auth_path,
			  const char *token_path, int verbose, char *msg, size_t msg_len)
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
	s->fd = -1;
	pthread_mutex_init(&s->lock, NULL);
	err = load_credentials(s, auth_path, token_path, msg, msg_len);
	if (err)
		goto fail;
	s->fd = open_socket(addr, addr_len, text, msg, msg_len);
	if (s->fd < 0) {
		err = s->fd;
		goto fail;
	}
	/* The daemon's thread inherits this mask: signals stay with the run loop. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	s->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO |
				     MHD_USE_ERROR_LOG, 0, on_accept, s, on_request, s,
				     MHD_OPTION_EXTERNAL_LOGGER, on_log, s,
				     MHD_OPTION_LISTEN_SOCKET, s->fd,
				     MHD_OPTION_CONNECTION_LIMIT, (unsigned int)CONN_SLOTS,
				     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)IDLE_TIMEOUT_S,
				     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)MEMORY_LIMIT_BYTES,
				     MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
				     MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
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
	explicit_bzero(s, sizeof(*s));
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
	explicit_bzero(s, sizeof(*s));
	free(s);
}
