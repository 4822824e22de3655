// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * fd_net.c - descriptors that arrive from the network side: a TCP listener on 127.0.0.1,
 * client sockets connected to it, connections taken with accept() and accept4(), and
 * descriptors passed with SCM_RIGHTS over Unix socketpairs, received by recvmsg() (three
 * in one message, over a stream pair) and recvmmsg() (one in each of two messages, over a
 * datagram pair).  The descriptors sent are closed by the sender once sent, so only the
 * received copies stay open.  Every leaking call carries a marker LEAK:NAME; the counts in
 * tests/e2e/fd.sh mirror this file.  Before each step main() zeroes the stack below its
 * frame (scrub_stack), so stale return addresses never decide the call site.  No stdio.
 *
 * Usage: fd_net DIR
 * It closes the descriptors it inherited above stderr, creates DIR/passed and
 * DIR/passed_batch (the files whose descriptors are passed), leaks, then creates DIR/done
 * holding its pid and waits for DIR/quit (at most 60 s), opening and closing nothing while
 * it waits.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static char passed[4096], passed_batch[4096];

#include "fd_common.h"

/* creat() each passed file and close it: 2 opens, 2 closes. */
NOINLINE void make_files(void)
{
	must(close(must(creat(passed, 0644))));
	must(close(must(creat(passed_batch, 0644))));
}

/* 1 socket, listening on 127.0.0.1 at a port the kernel picks, put in *port. */
NOINLINE int listen_on_loopback(unsigned short *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int s = must(socket(AF_INET, SOCK_STREAM, 0)); /* LEAK:listen */

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	must(bind(s, (struct sockaddr *)&a, sizeof(a)));
	must(listen(s, 8));
	must(getsockname(s, (struct sockaddr *)&a, &len));
	*port = a.sin_port;
	return s;
}

/* 3 client sockets connected to the listener (the kernel queues them: no accept needed). */
NOINLINE void connect_clients(unsigned short port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = port };

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (int i = 0; i < 3; i++) {
		int c = must(socket(AF_INET, SOCK_STREAM, 0)); /* LEAK:client */

		must(connect(c, (struct sockaddr *)&a, sizeof(a)));
	}
}

/* 2 x accept() */
NOINLINE void accept_conns(int s)
{
	for (int i = 0; i < 2; i++)
		must(accept(s, NULL, NULL)); /* LEAK:accept */
}

/* 1 x accept4(SOCK_CLOEXEC) */
NOINLINE void accept4_conn(int s)
{
	must(accept4(s, NULL, NULL, SOCK_CLOEXEC)); /* LEAK:accept4 */
}

/* 1 x socketpair(AF_UNIX, SOCK_STREAM): 2 descriptors */
NOINLINE void make_stream_pair(int sv[2])
{
	must(socketpair(AF_UNIX, SOCK_STREAM, 0, sv)); /* LEAK:stream_pair */
}

/* 1 x socketpair(AF_UNIX, SOCK_DGRAM): 2 descriptors */
NOINLINE void make_dgram_pair(int sv[2])
{
	must(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv)); /* LEAK:dgram_pair */
}

/* Send one byte with the n descriptors fds as SCM_RIGHTS. */
static void send_fds(int sock, const int *fds, int n)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} u;
	char byte = 'x';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = CMSG_SPACE(sizeof(int) * n),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

	memset(u.buf, 0, sizeof(u.buf));
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * n);
	memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
	if (sendmsg(sock, &mh, 0) != 1)
		_exit(2);
}

/* 3 x open(passed), sent in one message, then closed: nothing outstanding here. */
NOINLINE void open_to_pass(int sock)
{
	int fds[3];

	for (int i = 0; i < 3; i++)
		fds[i] = must(open(passed, O_RDONLY)); /* LEAK:open_to_pass */
	send_fds(sock, fds, 3);
	for (int i = 0; i < 3; i++)
		must(close(fds[i]));
}

/* 2 x open(passed_batch), each sent in a message of its own, then closed. */
NOINLINE void open_to_pass_batch(int sock)
{
	int fds[2];

	for (int i = 0; i < 2; i++)
		fds[i] = must(open(passed_batch, O_RDONLY)); /* LEAK:open_to_pass_batch */
	for (int i = 0; i < 2; i++)
		send_fds(sock, &fds[i], 1);
	for (int i = 0; i < 2; i++)
		must(close(fds[i]));
}

/* 1 x recvmsg() receiving the 3 descriptors open_to_pass() sent */
NOINLINE void receive_fds(int sock)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} u;
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *c;

	if (must(recvmsg(sock, &mh, 0)) != 1) /* LEAK:recvmsg */
		_exit(2);
	c = CMSG_FIRSTHDR(&mh);
	if (!c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int) * 3))
		_exit(5);
}

/* 1 x recvmmsg() receiving both messages of open_to_pass_batch(), one descriptor each */
NOINLINE void receive_batch(int sock)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} u[2];
	char bytes[2];
	struct iovec iov[2];
	struct mmsghdr mm[2];

	memset(mm, 0, sizeof(mm));
	for (int i = 0; i < 2; i++) {
		iov[i].iov_base = &bytes[i];
		iov[i].iov_len = 1;
		mm[i].msg_hdr.msg_iov = &iov[i];
		mm[i].msg_hdr.msg_iovlen = 1;
		mm[i].msg_hdr.msg_control = u[i].buf;
		mm[i].msg_hdr.msg_controllen = sizeof(u[i].buf);
	}
	if (must(recvmmsg(sock, mm, 2, 0, NULL)) != 2) /* LEAK:recvmmsg */
		_exit(5);
}

int main(int argc, char **argv)
{
	unsigned short port;
	int s, stream[2], dgram[2];

	if (argc < 2)
		return 2;
	snprintf(passed, sizeof(passed), "%s/passed", argv[1]);
	snprintf(passed_batch, sizeof(passed_batch), "%s/passed_batch", argv[1]);
	close_inherited();
	scrub_stack();
	make_files();
	scrub_stack();
	s = listen_on_loopback(&port);
	scrub_stack();
	connect_clients(port);
	scrub_stack();
	accept_conns(s);
	scrub_stack();
	accept4_conn(s);
	scrub_stack();
	make_stream_pair(stream);
	scrub_stack();
	open_to_pass(stream[0]);
	scrub_stack();
	receive_fds(stream[1]);
	scrub_stack();
	make_dgram_pair(dgram);
	scrub_stack();
	open_to_pass_batch(dgram[0]);
	scrub_stack();
	receive_batch(dgram[1]);
	handshake(argv[1], "done", "quit");
	return 0;
}
