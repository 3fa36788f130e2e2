// SPDX-License-Identifier: BSD-2-Clause
/*
 * proxy_base - the userspace TCP proxies ferry's splice proxy is measured
 * against (bench/proxy.sh):
 *
 *   proxy_base splice|rw LISTEN_ADDR:PORT BACKEND_ADDR:PORT [-c CPU]
 *
 * splice: each direction moves bytes socket -> pipe -> socket with
 *         splice(2), so payload pages are not copied through userspace.
 * rw:     each direction read(2)s into a 64 KiB buffer and write(2)s it.
 * One thread per direction, blocking I/O: the simplest fast proxy, which is
 * what a baseline should be. EOF on one side becomes shutdown(SHUT_WR) on
 * the other; the pair closes when both directions are done.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define CHUNK (64 * 1024)

struct pair {
	int fd[2]; /* client, backend */
	bool splice;
	int done; /* directions finished */
	pthread_mutex_t lock;
};

struct dir {
	struct pair *p;
	int in, out;
};

static int parse_addr(const char *s, struct sockaddr_storage *ss,
		      socklen_t *len)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	size_t hlen;
	bool v6 = s[0] == '[';

	if (!colon)
		return -1;
	hlen = (size_t)(colon - s) - (v6 ? 2 : 0);
	if (hlen >= sizeof(host))
		return -1;
	memcpy(host, s + (v6 ? 1 : 0), hlen);
	host[hlen] = '\0';
	memset(ss, 0, sizeof(*ss));
	if (v6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)atoi(colon + 1));
		*len = sizeof(*a);
		return inet_pton(AF_INET6, host, &a->sin6_addr) == 1 ? 0 : -1;
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)atoi(colon + 1));
		*len = sizeof(*a);
		return inet_pton(AF_INET, host, &a->sin_addr) == 1 ? 0 : -1;
	}
}

static void move_splice(int in, int out)
{
	int pfd[2];

	if (pipe2(pfd, O_CLOEXEC))
		return;
	fcntl(pfd[1], F_SETPIPE_SZ, CHUNK * 4);
	for (;;) {
		ssize_t n = splice(in, NULL, pfd[1], NULL, CHUNK * 4,
				   SPLICE_F_MOVE | SPLICE_F_MORE),
			m;

		if (n <= 0)
			break;
		while (n > 0) {
			m = splice(pfd[0], NULL, out, NULL, (size_t)n,
				   SPLICE_F_MOVE | SPLICE_F_MORE);
			if (m <= 0)
				goto out;
			n -= m;
		}
	}
out:
	close(pfd[0]);
	close(pfd[1]);
}

static void move_rw(int in, int out)
{
	static __thread char buf[CHUNK];

	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf)), off = 0, m;

		if (n <= 0)
			break;
		while (off < n) {
			m = write(out, buf + off, (size_t)(n - off));
			if (m <= 0)
				return;
			off += m;
		}
	}
}

static void *dir_main(void *arg)
{
	struct dir *d = arg;
	struct pair *p = d->p;
	bool last;

	if (p->splice)
		move_splice(d->in, d->out);
	else
		move_rw(d->in, d->out);
	shutdown(d->out, SHUT_WR);
	pthread_mutex_lock(&p->lock);
	last = ++p->done == 2;
	pthread_mutex_unlock(&p->lock);
	if (last) {
		close(p->fd[0]);
		close(p->fd[1]);
		pthread_mutex_destroy(&p->lock);
		free(p);
	}
	free(d);
	return NULL;
}

static int start_dir(struct pair *p, int in, int out)
{
	struct dir *d = malloc(sizeof(*d));
	pthread_t t;

	if (!d)
		return -1;
	*d = (struct dir){.p = p, .in = in, .out = out};
	if (pthread_create(&t, NULL, dir_main, d)) {
		free(d);
		return -1;
	}
	pthread_detach(t);
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_storage la, ba;
	socklen_t ll, bl;
	int lfd, one = 1, cpu = -1;
	bool spl;

	if (argc >= 6 && !strcmp(argv[4], "-c"))
		cpu = atoi(argv[5]);
	if (argc < 4 || (strcmp(argv[1], "splice") && strcmp(argv[1], "rw")) ||
	    parse_addr(argv[2], &la, &ll) || parse_addr(argv[3], &ba, &bl)) {
		fprintf(stderr, "usage: proxy_base splice|rw LISTEN_ADDR:PORT "
				"BACKEND_ADDR:PORT [-c CPU]\n");
		return 2;
	}
	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	spl = !strcmp(argv[1], "splice");
	signal(SIGPIPE, SIG_IGN);
	lfd = socket(la.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&la, ll) ||
	    listen(lfd, 256)) {
		perror("proxy_base: listen");
		return 1;
	}
	for (;;) {
		int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC), b;
		struct pair *p;

		if (c < 0)
			continue;
		b = socket(ba.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (b < 0 || connect(b, (struct sockaddr *)&ba, bl)) {
			close(c);
			if (b >= 0)
				close(b);
			continue;
		}
		setsockopt(b, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		p = calloc(1, sizeof(*p));
		if (!p) {
			close(c);
			close(b);
			continue;
		}
		p->fd[0] = c;
		p->fd[1] = b;
		p->splice = spl;
		pthread_mutex_init(&p->lock, NULL);
		if (start_dir(p, c, b) || start_dir(p, b, c)) {
			fprintf(stderr, "proxy_base: cannot start threads\n");
			return 1;
		}
	}
}
