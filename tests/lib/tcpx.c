// SPDX-License-Identifier: BSD-2-Clause
/*
 * tcpx - TCP traffic with a self-verifying byte stream, for system tests and
 * benchmarks (sockmap acceleration, splice proxy).
 *
 *   tcpx server -l ADDR:PORT [-c CPU] [-n CONNS] [--rate BYTES_PER_S]
 *               [--rcvbuf BYTES] [--ready FILE] [--close-after BYTES]
 *   tcpx client -d ADDR:PORT -n BYTES -m MSGSIZE [-c CPU] [-P FLOWS]
 *               [--nodelay] [--hold SECS] [--sndbuf BYTES]
 *
 * The byte at stream offset o is a pure function of o (pattern_byte()), so
 * the server checks content and order without knowing the client. The
 * function repeats with a prime period: a lost or repeated run of whole
 * messages (sizes that are powers of two in every test) can't line up with
 * it, and both ends send and compare straight from one precomputed table
 * instead of computing bytes on the hot path. Loss of a tail is caught by
 * the byte counts, which the caller compares.
 *
 * Request/response (a redis-like service, one request in flight per flow):
 *
 *   tcpx rr-server -l ADDR:PORT -m REQSIZE [--resp BYTES] [-c CPU]
 *                  [-n CONNS] [--ready FILE]
 *   tcpx rr-client -d ADDR:PORT -n REQUESTS -m REQSIZE [--resp BYTES]
 *                  [-c CPU] [-P FLOWS] [--pause-after N --pause SECS]
 *
 * The client writes a request of REQSIZE bytes, the server reads it whole,
 * checks it and writes a response of --resp bytes (default REQSIZE), which
 * the client reads whole and checks: both directions are the same
 * pattern stream as above, each from its own offset 0. --pause-after
 * makes every flow stop for SECS once N requests are done, with nothing in
 * flight (a test restarts ferryd then).
 *
 * ADDR is IPv4 or [IPv6]. Sizes take k/m/g suffixes (powers of 1024).
 * Each side prints JSON (one line per connection for the server, one line
 * for the client) and exits 0 only if everything was sent, or received and
 * verified.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Prime: see the header comment. About 1 MiB, so the table stays in L2/L3. */
#define PAT_PERIOD   1048573u
#define RBUF_BIG     (256u * 1024)
#define RBUF_SMALL   (16u * 1024)
#define THREAD_STACK (128u * 1024)
#define MAX_MSG	     (16u * 1024 * 1024)
#define MANY_CONNS   16

_Static_assert(RBUF_BIG <= MAX_MSG, "the table covers a whole read");

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint8_t pattern_byte(uint64_t off)
{
	uint64_t i = off % PAT_PERIOD;

	return (uint8_t)(splitmix64(i / 8) >> (8 * (i % 8)));
}

/*
 * PAT_PERIOD + span bytes: for any offset o, table + o % PAT_PERIOD holds
 * the next span bytes of the stream contiguously.
 */
struct pattern {
	uint8_t *table;
	size_t span;
};

static int pattern_init(struct pattern *p, size_t span)
{
	size_t i;

	p->span = span;
	p->table = malloc(PAT_PERIOD + span);
	if (!p->table)
		return -ENOMEM;
	for (i = 0; i < PAT_PERIOD + span; i++)
		p->table[i] = pattern_byte(i);
	return 0;
}

static const uint8_t *pattern_at(const struct pattern *p, uint64_t off)
{
	return p->table + off % PAT_PERIOD;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
	struct timespec ts;

	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static const char *errno_name(int err)
{
	const char *name = err ? strerrorname_np(err) : NULL;

	return name ? name : "?";
}

/* "123", "64k", "4G": powers of 1024. */
static int parse_size(const char *s, uint64_t *out)
{
	static const struct {
		char suffix;
		unsigned shift;
	} units[] = {{'k', 10}, {'K', 10}, {'m', 20},
		     {'M', 20}, {'g', 30}, {'G', 30}};
	unsigned long long v;
	char *end;
	size_t i;

	errno = 0;
	if (*s == '-')
		return -EINVAL;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -EINVAL;
	if (*end) {
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (*end == units[i].suffix && !end[1])
				break;
		if (i == sizeof(units) / sizeof(units[0]))
			return -EINVAL;
		if (v > (UINT64_MAX >> units[i].shift))
			return -ERANGE;
		v <<= units[i].shift;
	}
	*out = v;
	return 0;
}

/* "10.0.0.1:80" or "[fd00::1]:80". */
static int parse_addr(const char *s, struct sockaddr_storage *ss,
		      socklen_t *len)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon, *hs = s;
	size_t hlen;
	unsigned long port;
	char *end;

	colon = strrchr(s, ':');
	if (!colon)
		return -EINVAL;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || port > 65535)
		return -EINVAL;
	hlen = colon - s;
	if (*s == '[') {
		if (hlen < 2 || s[hlen - 1] != ']')
			return -EINVAL;
		hs = s + 1;
		hlen -= 2;
	}
	if (hlen >= sizeof(host))
		return -EINVAL;
	memcpy(host, hs, hlen);
	host[hlen] = '\0';
	memset(ss, 0, sizeof(*ss));
	if (*s == '[') {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;

		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(port);
		if (inet_pton(AF_INET6, host, &a6->sin6_addr) != 1)
			return -EINVAL;
		*len = sizeof(*a6);
	} else {
		struct sockaddr_in *a4 = (struct sockaddr_in *)ss;

		a4->sin_family = AF_INET;
		a4->sin_port = htons(port);
		if (inet_pton(AF_INET, host, &a4->sin_addr) != 1)
			return -EINVAL;
		*len = sizeof(*a4);
	}
	return 0;
}

static int pin_cpu(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return -errno;
	return 0;
}

/* Runs fn(arg[i]) for i < n, in threads when n > 1; returns 0 or -errno. */
static int run_all(void *(*fn)(void *), void *args, size_t argsz, int n)
{
	pthread_t *tids;
	pthread_attr_t attr;
	int i, started = 0, err = 0;

	if (n == 1) {
		fn(args);
		return 0;
	}
	tids = calloc(n, sizeof(*tids));
	if (!tids)
		return -ENOMEM;
	pthread_attr_init(&attr);
	/* A thousand flows: keep each thread's reservation small. */
	pthread_attr_setstacksize(&attr, THREAD_STACK);
	for (i = 0; i < n; i++) {
		err = pthread_create(&tids[i], &attr, fn,
				     (char *)args + i * argsz);
		if (err)
			break;
		started++;
	}
	for (i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	pthread_attr_destroy(&attr);
	free(tids);
	return -err;
}

/*
 * read() that waits: a socket in a sockmap can return EAGAIN from a
 * blocking read when its wait ends without data (tcp_bpf_recvmsg), so
 * that is a reason to wait again, like EINTR.
 */
static ssize_t read_wait(int fd, void *buf, size_t len)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	ssize_t n;

	for (;;) {
		n = read(fd, buf, len);
		if (n >= 0 || (errno != EINTR && errno != EAGAIN))
			return n;
		if (errno == EAGAIN)
			poll(&pfd, 1, 100);
	}
}

/* ---- server ---------------------------------------------------------- */

struct server_opts {
	const char *listen;
	const char *ready;
	int cpu;
	int conns;
	uint64_t rate;
	uint64_t rcvbuf;
	uint64_t close_after;
};

struct server_conn {
	const struct server_opts *o;
	const struct pattern *pat;
	pthread_mutex_t *print_lock;
	int idx;
	int fd;
	double t_accept;
	/* results */
	uint64_t bytes;
	int64_t first_bad;
	int err;
	bool ok;
};

static int64_t first_mismatch(const uint8_t *buf, size_t n, uint64_t off)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (buf[i] != pattern_byte(off + i))
			return (int64_t)(off + i);
	return -1;
}

static void *server_conn_run(void *arg)
{
	struct server_conn *c = arg;
	const struct server_opts *o = c->o;
	size_t bufsz = o->conns > MANY_CONNS ? RBUF_SMALL : RBUF_BIG;
	uint8_t *buf = malloc(bufsz);
	double secs;

	c->first_bad = -1;
	if (!buf) {
		c->err = ENOMEM;
		goto out;
	}
	/* Pace in slices of 1/50 s so a slow reader reads evenly. */
	if (o->rate && o->rate / 50 < bufsz)
		bufsz = o->rate / 50 ? o->rate / 50 : 1;
	for (;;) {
		size_t want = bufsz;
		ssize_t n;

		if (o->close_after && o->close_after - c->bytes < want)
			want = o->close_after - c->bytes;
		n = read_wait(c->fd, buf, want);
		if (n == 0)
			break;
		if (n < 0) {
			c->err = errno;
			break;
		}
		if (c->first_bad < 0 &&
		    memcmp(buf, pattern_at(c->pat, c->bytes), n))
			c->first_bad = first_mismatch(buf, n, c->bytes);
		c->bytes += n;
		if (o->close_after && c->bytes >= o->close_after)
			break;
		if (o->rate)
			sleep_s(c->t_accept + (double)c->bytes / o->rate -
				now_s());
	}
out:
	secs = now_s() - c->t_accept;
	close(c->fd);
	free(buf);
	c->ok = !c->err && c->first_bad < 0;
	pthread_mutex_lock(c->print_lock);
	printf("{\"conn\":%d,\"bytes\":%llu,\"ok\":%s,\"first_bad_offset\":",
	       c->idx, (unsigned long long)c->bytes, c->ok ? "true" : "false");
	if (c->first_bad < 0)
		printf("null");
	else
		printf("%lld", (long long)c->first_bad);
	printf(",\"secs\":%.6f,\"MBps\":%.1f", secs,
	       secs > 0 ? c->bytes / secs / 1e6 : 0.0);
	if (c->err)
		printf(",\"errno\":\"%s\"", errno_name(c->err));
	printf("}\n");
	fflush(stdout);
	pthread_mutex_unlock(c->print_lock);
	return NULL;
}

static int touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static int server_main(const struct server_opts *o)
{
	pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;
	struct server_conn *conns = NULL;
	struct sockaddr_storage ss;
	struct pattern pat = {0};
	socklen_t len;
	int lfd = -1, one = 1, i, accepted = 0, rc = 1, err;

	if (parse_addr(o->listen, &ss, &len)) {
		fprintf(stderr, "tcpx: bad address '%s'\n", o->listen);
		return 2;
	}
	err = pattern_init(&pat, RBUF_BIG);
	if (err)
		goto out;
	conns = calloc(o->conns, sizeof(*conns));
	if (!conns) {
		err = -ENOMEM;
		goto out;
	}
	lfd = socket(ss.ss_family, SOCK_STREAM, 0);
	if (lfd < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one))) {
		err = -errno;
		goto out;
	}
	/* Set on the listener so accepted sockets inherit it before the
	 * handshake sizes the window. */
	if (o->rcvbuf) {
		int v = o->rcvbuf > INT_MAX ? INT_MAX : (int)o->rcvbuf;

		if (setsockopt(lfd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v))) {
			err = -errno;
			goto out;
		}
	}
	if (bind(lfd, (struct sockaddr *)&ss, len) ||
	    listen(lfd, o->conns > 128 ? o->conns : 128)) {
		err = -errno;
		goto out;
	}
	if (o->ready) {
		err = touch(o->ready);
		if (err)
			goto out;
	}
	for (i = 0; i < o->conns; i++) {
		int fd = accept(lfd, NULL, NULL);

		if (fd < 0) {
			if (errno == EINTR) {
				i--;
				continue;
			}
			err = -errno;
			goto out;
		}
		conns[i] = (struct server_conn){.o = o,
						.pat = &pat,
						.print_lock = &print_lock,
						.idx = i,
						.fd = fd,
						.t_accept = now_s()};
		accepted++;
	}
	close(lfd);
	lfd = -1;
	err = run_all(server_conn_run, conns, sizeof(*conns), o->conns);
	if (err)
		goto out;
	rc = 0;
	for (i = 0; i < o->conns; i++)
		if (!conns[i].ok)
			rc = 1;
out:
	if (err) {
		fprintf(stderr, "tcpx server: %s\n", strerror(-err));
		for (i = 0; i < accepted; i++)
			close(conns[i].fd);
	}
	if (lfd >= 0)
		close(lfd);
	free(conns);
	free(pat.table);
	return rc;
}

/* ---- client ---------------------------------------------------------- */

struct client_opts {
	const char *dest;
	uint64_t bytes;
	uint64_t msg;
	uint64_t sndbuf;
	int cpu;
	int flows;
	bool nodelay;
	double hold;
};

struct client_flow {
	const struct client_opts *o;
	const struct pattern *pat;
	int fd;
	/* results */
	uint64_t sent;
	int err;
};

static void *client_flow_run(void *arg)
{
	struct client_flow *f = arg;
	const struct client_opts *o = f->o;
	char sink[4096];
	ssize_t n;

	while (f->sent < o->bytes) {
		size_t want = o->bytes - f->sent < o->msg ? o->bytes - f->sent
							  : o->msg;

		n = send(f->fd, pattern_at(f->pat, f->sent), want,
			 MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			f->err = errno;
			return NULL;
		}
		f->sent += n;
	}
	if (shutdown(f->fd, SHUT_WR)) {
		f->err = errno;
		return NULL;
	}
	/* The peer's close says it has read everything (or given up). */
	n = read_wait(f->fd, sink, sizeof(sink));
	while (n > 0)
		n = read_wait(f->fd, sink, sizeof(sink));
	if (n < 0)
		f->err = errno;
	return NULL;
}

static int client_connect(const struct client_opts *o,
			  const struct sockaddr_storage *ss, socklen_t len)
{
	int fd, one = 1;

	fd = socket(ss->ss_family, SOCK_STREAM, 0);
	if (fd < 0)
		return -errno;
	if (o->nodelay &&
	    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		goto err_fd;
	if (o->sndbuf) {
		int v = o->sndbuf > INT_MAX ? INT_MAX : (int)o->sndbuf;

		if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v)))
			goto err_fd;
	}
	while (connect(fd, (const struct sockaddr *)ss, len))
		if (errno != EINTR)
			goto err_fd;
	return fd;
err_fd:
	one = -errno;
	close(fd);
	return one;
}

static int client_main(const struct client_opts *o)
{
	struct client_flow *flows = NULL;
	struct sockaddr_storage ss;
	struct pattern pat = {0};
	uint64_t total = 0;
	int i, opened = 0, errors = 0, last_err = 0, err, rc = 1;
	double t0, secs;
	socklen_t len;

	if (parse_addr(o->dest, &ss, &len)) {
		fprintf(stderr, "tcpx: bad address '%s'\n", o->dest);
		return 2;
	}
	err = pattern_init(&pat, o->msg);
	if (err)
		goto out;
	flows = calloc(o->flows, sizeof(*flows));
	if (!flows) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < o->flows; i++) {
		int fd = client_connect(o, &ss, len);

		if (fd < 0) {
			err = fd;
			goto out;
		}
		flows[i] = (struct client_flow){.o = o, .pat = &pat, .fd = fd};
		opened++;
	}
	sleep_s(o->hold);
	t0 = now_s();
	err = run_all(client_flow_run, flows, sizeof(*flows), o->flows);
	if (err)
		goto out;
	secs = now_s() - t0;
	for (i = 0; i < o->flows; i++) {
		total += flows[i].sent;
		if (flows[i].err) {
			errors++;
			last_err = flows[i].err;
		}
	}
	printf("{\"flows\":%d,\"bytes\":%llu,\"secs\":%.6f,\"MBps\":%.1f,"
	       "\"errors\":%d,\"last_errno\":",
	       o->flows, (unsigned long long)total, secs,
	       secs > 0 ? total / secs / 1e6 : 0.0, errors);
	if (last_err)
		printf("\"%s\"}\n", errno_name(last_err));
	else
		printf("null}\n");
	fflush(stdout);
	rc = errors || total != o->bytes * o->flows;
out:
	if (err)
		fprintf(stderr, "tcpx client: %s\n", strerror(-err));
	for (i = 0; i < opened; i++)
		close(flows[i].fd);
	free(flows);
	free(pat.table);
	return rc;
}

/* ---- request/response ------------------------------------------------ */

struct rr_opts {
	const char *addr;
	const char *ready;
	uint64_t req, resp;
	uint64_t requests;
	uint64_t pause_after;
	double pause;
	int conns;
};

struct rr_flow {
	const struct rr_opts *o;
	const struct pattern *pat;
	pthread_mutex_t *print_lock;
	int idx;
	int fd;
	/* results */
	uint64_t done;	   /* requests answered */
	int64_t first_bad; /* received offset, -1: none */
	int err;
};

/* Writes len bytes of the pattern from offset off. 0 or an errno. */
static int write_all(int fd, const struct pattern *pat, uint64_t off,
		     uint64_t len)
{
	uint64_t sent = 0;
	ssize_t n;

	while (sent < len) {
		n = send(fd, pattern_at(pat, off + sent), len - sent,
			 MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		sent += (uint64_t)n;
	}
	return 0;
}

/* Reads len bytes checked against the pattern at off: 0, -1 at EOF before
 * the first byte, or an errno (EPIPE: EOF midway). */
static int read_all(struct rr_flow *f, uint8_t *buf, uint64_t off, uint64_t len)
{
	uint64_t got = 0;
	ssize_t n;

	while (got < len) {
		n = read_wait(f->fd, buf, len - got);
		if (n < 0)
			return errno;
		if (n == 0)
			return got ? EPIPE : -1;
		if (f->first_bad < 0 &&
		    memcmp(buf, pattern_at(f->pat, off + got), (size_t)n))
			f->first_bad =
				first_mismatch(buf, (size_t)n, off + got);
		got += (uint64_t)n;
	}
	return 0;
}

static void *rr_server_run(void *arg)
{
	struct rr_flow *f = arg;
	const struct rr_opts *o = f->o;
	uint8_t *buf = malloc(o->req);
	int rc;

	f->first_bad = -1;
	if (!buf) {
		f->err = ENOMEM;
		goto out;
	}
	for (;;) {
		rc = read_all(f, buf, f->done * o->req, o->req);
		if (rc == -1)
			break;
		if (rc) {
			f->err = rc;
			break;
		}
		rc = write_all(f->fd, f->pat, f->done * o->resp, o->resp);
		if (rc) {
			f->err = rc;
			break;
		}
		f->done++;
	}
out:
	close(f->fd);
	free(buf);
	pthread_mutex_lock(f->print_lock);
	printf("{\"conn\":%d,\"requests\":%llu,\"ok\":%s", f->idx,
	       (unsigned long long)f->done,
	       !f->err && f->first_bad < 0 ? "true" : "false");
	if (f->first_bad >= 0)
		printf(",\"first_bad_offset\":%lld", (long long)f->first_bad);
	if (f->err)
		printf(",\"errno\":\"%s\"", errno_name(f->err));
	printf("}\n");
	fflush(stdout);
	pthread_mutex_unlock(f->print_lock);
	return NULL;
}

static void *rr_client_run(void *arg)
{
	struct rr_flow *f = arg;
	const struct rr_opts *o = f->o;
	uint8_t *buf = malloc(o->resp);
	int rc;

	f->first_bad = -1;
	if (!buf) {
		f->err = ENOMEM;
		return NULL;
	}
	while (f->done < o->requests) {
		if (o->pause_after && f->done == o->pause_after)
			sleep_s(o->pause);
		rc = write_all(f->fd, f->pat, f->done * o->req, o->req);
		if (!rc)
			rc = read_all(f, buf, f->done * o->resp, o->resp);
		if (rc) {
			f->err = rc == -1 ? EPIPE : rc;
			break;
		}
		f->done++;
	}
	free(buf);
	return NULL;
}

static int rr_main(const struct rr_opts *o, bool server)
{
	pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;
	struct rr_flow *flows = NULL;
	struct sockaddr_storage ss;
	struct pattern pat = {0};
	uint64_t done = 0;
	int lfd = -1, one = 1, i, opened = 0, bad = 0, last_err = 0, err;
	int rc = 1;
	double t0, secs;
	socklen_t len;

	if (parse_addr(o->addr, &ss, &len)) {
		fprintf(stderr, "tcpx: bad address '%s'\n", o->addr);
		return 2;
	}
	err = pattern_init(&pat, o->req > o->resp ? o->req : o->resp);
	if (err)
		goto out;
	flows = calloc(o->conns, sizeof(*flows));
	if (!flows) {
		err = -ENOMEM;
		goto out;
	}
	if (server) {
		lfd = socket(ss.ss_family, SOCK_STREAM, 0);
		if (lfd < 0 ||
		    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one,
			       sizeof(one)) ||
		    bind(lfd, (struct sockaddr *)&ss, len) ||
		    listen(lfd, o->conns > 128 ? o->conns : 128)) {
			err = -errno;
			goto out;
		}
		if (o->ready) {
			err = touch(o->ready);
			if (err)
				goto out;
		}
	}
	for (i = 0; i < o->conns; i++) {
		int fd;

		if (server) {
			fd = accept(lfd, NULL, NULL);
			if (fd < 0 && errno == EINTR) {
				i--;
				continue;
			}
			fd = fd < 0 ? -errno : fd;
		} else {
			struct client_opts co = {0};

			fd = client_connect(&co, &ss, len);
		}
		if (fd < 0) {
			err = fd;
			goto out;
		}
		flows[i] = (struct rr_flow){.o = o,
					    .pat = &pat,
					    .print_lock = &print_lock,
					    .idx = i,
					    .fd = fd};
		opened++;
	}
	t0 = now_s();
	err = run_all(server ? rr_server_run : rr_client_run, flows,
		      sizeof(*flows), o->conns);
	if (err)
		goto out;
	secs = now_s() - t0;
	for (i = 0; i < o->conns; i++) {
		done += flows[i].done;
		if (flows[i].err || flows[i].first_bad >= 0) {
			bad++;
			last_err = flows[i].err;
		}
	}
	rc = bad != 0;
	if (server)
		goto out;
	printf("{\"flows\":%d,\"requests\":%llu,\"secs\":%.6f,"
	       "\"rps\":%.0f,\"ok\":%s,\"last_errno\":",
	       o->conns, (unsigned long long)done, secs,
	       secs > 0 ? done / secs : 0.0, bad ? "false" : "true");
	if (last_err)
		printf("\"%s\"}\n", errno_name(last_err));
	else
		printf("null}\n");
	fflush(stdout);
	rc = bad || done != o->requests * (uint64_t)o->conns;
out:
	if (err)
		fprintf(stderr, "tcpx rr: %s\n", strerror(-err));
	/* The server's flows closed their own sockets. */
	if (err || !server)
		for (i = 0; i < opened; i++)
			close(flows[i].fd);
	if (lfd >= 0)
		close(lfd);
	free(flows);
	free(pat.table);
	return rc;
}

/* ---- command line ---------------------------------------------------- */

enum {
	OPT_RATE = 256,
	OPT_RCVBUF,
	OPT_SNDBUF,
	OPT_READY,
	OPT_NODELAY,
	OPT_HOLD,
	OPT_CLOSE_AFTER,
	OPT_RESP,
	OPT_PAUSE_AFTER,
	OPT_PAUSE,
};

static const struct option long_opts[] = {
	{"rate", required_argument, NULL, OPT_RATE},
	{"rcvbuf", required_argument, NULL, OPT_RCVBUF},
	{"sndbuf", required_argument, NULL, OPT_SNDBUF},
	{"ready", required_argument, NULL, OPT_READY},
	{"nodelay", no_argument, NULL, OPT_NODELAY},
	{"hold", required_argument, NULL, OPT_HOLD},
	{"close-after", required_argument, NULL, OPT_CLOSE_AFTER},
	{"resp", required_argument, NULL, OPT_RESP},
	{"pause-after", required_argument, NULL, OPT_PAUSE_AFTER},
	{"pause", required_argument, NULL, OPT_PAUSE},
	{NULL, 0, NULL, 0},
};

static void usage(void)
{
	fprintf(stderr,
		"usage: tcpx server -l ADDR:PORT [-c CPU] [-n CONNS] "
		"[--rate BYTES_PER_S] [--rcvbuf BYTES] [--ready FILE] "
		"[--close-after BYTES]\n"
		"       tcpx client -d ADDR:PORT -n BYTES -m MSGSIZE [-c CPU] "
		"[-P FLOWS] [--nodelay] [--hold SECS] [--sndbuf BYTES]\n"
		"       tcpx rr-server -l ADDR:PORT -m REQSIZE [--resp BYTES] "
		"[-c CPU] [-n CONNS] [--ready FILE]\n"
		"       tcpx rr-client -d ADDR:PORT -n REQUESTS -m REQSIZE "
		"[--resp BYTES] [-c CPU] [-P FLOWS] [--pause-after N "
		"--pause SECS]\n");
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
	long v;
	char *end;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

int main(int argc, char **argv)
{
	struct server_opts so = {.cpu = -1, .conns = 1};
	struct client_opts co = {.cpu = -1, .flows = 1};
	struct rr_opts ro = {.conns = 1};
	bool server, rr;
	uint64_t n = 0;
	bool have_n = false;
	char *end;
	int c, bad = 0, cpu = -1;

	if (argc < 2 ||
	    (strcmp(argv[1], "server") && strcmp(argv[1], "client") &&
	     strcmp(argv[1], "rr-server") && strcmp(argv[1], "rr-client"))) {
		usage();
		return 2;
	}
	rr = !strncmp(argv[1], "rr-", 3);
	server = !strcmp(argv[1] + (rr ? 3 : 0), "server");
	optind = 2;
	while ((c = getopt_long(argc, argv, "l:d:c:n:m:P:", long_opts, NULL)) !=
	       -1) {
		switch (c) {
		case 'l':
			so.listen = optarg;
			break;
		case 'd':
			co.dest = optarg;
			break;
		case 'c':
			bad |= parse_int(optarg, 0, CPU_SETSIZE - 1, &cpu);
			break;
		case 'n':
			bad |= parse_size(optarg, &n);
			have_n = true;
			break;
		case 'm':
			bad |= parse_size(optarg, &co.msg);
			break;
		case 'P':
			bad |= parse_int(optarg, 1, 1 << 20, &co.flows);
			break;
		case OPT_RATE:
			bad |= parse_size(optarg, &so.rate);
			break;
		case OPT_RCVBUF:
			bad |= parse_size(optarg, &so.rcvbuf);
			break;
		case OPT_SNDBUF:
			bad |= parse_size(optarg, &co.sndbuf);
			break;
		case OPT_READY:
			so.ready = optarg;
			break;
		case OPT_NODELAY:
			co.nodelay = true;
			break;
		case OPT_HOLD:
			errno = 0;
			co.hold = strtod(optarg, &end);
			bad |= errno || end == optarg || *end || co.hold < 0;
			break;
		case OPT_CLOSE_AFTER:
			bad |= parse_size(optarg, &so.close_after);
			break;
		case OPT_RESP:
			bad |= parse_size(optarg, &ro.resp);
			break;
		case OPT_PAUSE_AFTER:
			bad |= parse_size(optarg, &ro.pause_after);
			break;
		case OPT_PAUSE:
			errno = 0;
			ro.pause = strtod(optarg, &end);
			bad |= errno || end == optarg || *end || ro.pause < 0;
			break;
		default:
			bad = 1;
		}
	}
	if (bad || optind != argc) {
		usage();
		return 2;
	}
	/* A reader that stops early must not kill the writer. */
	signal(SIGPIPE, SIG_IGN);
	if (pin_cpu(cpu)) {
		perror("tcpx: sched_setaffinity");
		return 2;
	}
	if (rr) {
		ro.addr = server ? so.listen : co.dest;
		ro.ready = so.ready;
		ro.req = co.msg;
		if (!ro.resp)
			ro.resp = ro.req;
		if (server && have_n && n >= 1 && n <= 1 << 20)
			ro.conns = (int)n;
		else if (!server)
			ro.conns = co.flows;
		ro.requests = server ? 0 : n;
		if (!ro.addr || ro.req < 1 || ro.req > MAX_MSG ||
		    ro.resp > MAX_MSG || (!server && !have_n) ||
		    (server && have_n && ro.conns != (int)n)) {
			usage();
			return 2;
		}
		return rr_main(&ro, server);
	}
	if (server) {
		if (!so.listen || (have_n && (n < 1 || n > 1 << 20))) {
			usage();
			return 2;
		}
		so.conns = have_n ? (int)n : 1;
		so.cpu = cpu;
		return server_main(&so);
	}
	if (!co.dest || !have_n || co.msg < 1 || co.msg > MAX_MSG) {
		usage();
		return 2;
	}
	co.bytes = n;
	co.cpu = cpu;
	return client_main(&co);
}
