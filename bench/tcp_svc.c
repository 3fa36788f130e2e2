// SPDX-License-Identifier: BSD-2-Clause
/*
 * tcp_svc - the local TCP service and its clients for bench/steer.sh.
 *
 *   tcp_svc server PORT            accept, read to EOF, close; forever
 *   tcp_svc cps ADDR PORT SECS     connect + 1 byte + close, in a loop
 *   tcp_svc stream ADDR PORT SECS  one connection, 64 KiB writes
 *
 * The clients print one JSON line: {"conns_per_s":N} or {"MBps":N}.
 * IPv4 only; the testbed's addresses are IPv4.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_EVENTS 64
#define BUF_SIZE   65536

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int addr_of(const char *ip, const char *port, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)atoi(port));
	return inet_pton(AF_INET, ip, &sa->sin_addr) == 1 ? 0 : -EINVAL;
}

static int server(const char *port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)atoi(port))};
	struct epoll_event ev = {.events = EPOLLIN}, evs[MAX_EVENTS];
	static char buf[BUF_SIZE];
	int one = 1, lfd, ep, n, i;

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 4096))
		return perror("listen"), 1;
	ep = epoll_create1(EPOLL_CLOEXEC);
	ev.data.fd = lfd;
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev))
		return perror("epoll"), 1;
	for (;;) {
		n = epoll_wait(ep, evs, MAX_EVENTS, -1);
		for (i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (fd == lfd) {
				int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

				if (c < 0)
					continue;
				ev.data.fd = c;
				epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
				continue;
			}
			if (read(fd, buf, sizeof(buf)) <= 0)
				close(fd); /* closing removes it from epoll */
		}
	}
}

static int cps(const char *ip, const char *port, double secs)
{
	struct sockaddr_in sa;
	double t0, t;
	long n = 0;

	if (addr_of(ip, port, &sa))
		return fprintf(stderr, "bad address %s\n", ip), 2;
	t0 = now_s();
	do {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		struct linger lg = {.l_onoff = 1, .l_linger = 0};

		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
			return perror("connect"), 1;
		if (write(fd, "x", 1) != 1)
			return perror("write"), 1;
		/* RST on close: no TIME_WAIT, so ports never run out. */
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(fd);
		n++;
		t = now_s();
	} while (t - t0 < secs);
	printf("{\"conns_per_s\":%.0f}\n", (double)n / (t - t0));
	return 0;
}

static int stream(const char *ip, const char *port, double secs)
{
	static char buf[BUF_SIZE];
	struct sockaddr_in sa;
	double t0, t;
	long long bytes = 0;
	int fd;

	if (addr_of(ip, port, &sa))
		return fprintf(stderr, "bad address %s\n", ip), 2;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		return perror("connect"), 1;
	t0 = now_s();
	do {
		ssize_t w = write(fd, buf, sizeof(buf));

		if (w < 0)
			return perror("write"), 1;
		bytes += w;
		t = now_s();
	} while (t - t0 < secs);
	close(fd);
	printf("{\"MBps\":%.1f}\n", (double)bytes / 1e6 / (t - t0));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "server"))
		return server(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "cps"))
		return cps(argv[2], argv[3], atof(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "stream"))
		return stream(argv[2], argv[3], atof(argv[4]));
	fprintf(stderr, "usage: tcp_svc server PORT | cps ADDR PORT SECS | "
			"stream ADDR PORT SECS\n");
	return 2;
}
