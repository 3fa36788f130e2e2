// SPDX-License-Identifier: BSD-2-Clause
/*
 * metrics_http.c - Prometheus scrape endpoint. libmicrohttpd runs one
 * internal thread (epoll) that answers GET /metrics with a copy of the last
 * snapshot the control thread published, 404 for any other path and 405
 * for any other method. The snapshot is the only state the two threads
 * share, and it is guarded by one mutex held for a pointer swap (control
 * thread) or one memcpy (HTTP thread), never for anything slower.
 */
#include "metrics_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"

/* Prometheus text exposition format, as scrapers ask for it. */
#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4"
#define METRICS_PATH	     "/metrics"
/*
 * A scraper holds one connection at a time; a few more leave room for a
 * person with curl. Idle connections are closed after METRICS_IDLE_S, so
 * clients that connect and say nothing cannot use up the limit for good.
 */
#define METRICS_MAX_CLIENTS 16
#define METRICS_IDLE_S	    10
#define METRICS_BACKLOG	    16

struct metrics_http {
	pthread_mutex_t lock; /* guards text and text_len */
	char *text;	      /* latest snapshot; NULL until the first */
	size_t text_len;
	int fd;			/* listening socket until MHD takes it */
	struct MHD_Daemon *mhd; /* NULL until started */
	char url[96];
};

/* ------------------------------------------------------------ address */

__attribute__((format(printf, 3, 4))) static int
bad_spec(struct ferry_err *msg, const char *spec, const char *fmt, ...)
{
	char why[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	ferry_errf(msg,
		   "--metrics %s: %s (expected ADDR:PORT, e.g. 127.0.0.1:9464, "
		   "[::1]:9464 or localhost:9464)",
		   spec, why);
	return -EINVAL;
}

/* Decimal 1-65535, nothing else. */
static int parse_port(const char *s, in_port_t *port)
{
	unsigned long v = 0;

	if (*s == '\0')
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(*s - '0');
		if (v > 65535)
			return -ERANGE;
	}
	if (v == 0)
		return -ERANGE;
	*port = htons((in_port_t)v);
	return 0;
}

/*
 * "1.2.3.4:P", "[::1]:P", "localhost:P", "P" or ":P" (both 127.0.0.1)
 * into a socket address. Host
 * names other than localhost are refused rather than resolved: a scrape
 * endpoint should not depend on DNS at start-up, and a name with several
 * addresses would leave which one we bound to a guess.
 */
static int parse_spec(const char *spec, struct sockaddr_storage *ss,
		      socklen_t *sl, struct ferry_err *msg)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	char host[INET6_ADDRSTRLEN], lo[32];
	const char *port_s, *end;
	size_t hlen;
	in_port_t port;
	int rc;

	memset(ss, 0, sizeof(*ss));
	/* PORT or :PORT: loopback. Counters reach beyond the host only when
	 * the operator names an address. */
	port_s = spec + (spec[0] == ':');
	if (*port_s && strspn(port_s, "0123456789") == strlen(port_s) &&
	    strlen(port_s) < 8) {
		snprintf(lo, sizeof(lo), "127.0.0.1:%s", port_s);
		spec = lo;
	}
	if (spec[0] == '[') {
		end = strchr(spec, ']');
		if (!end || end[1] != ':')
			return bad_spec(msg, spec,
					"an IPv6 address needs ']:PORT'");
		hlen = (size_t)(end - spec - 1);
		port_s = end + 2;
	} else {
		end = strrchr(spec, ':');
		if (!end)
			return bad_spec(msg, spec, "no ':PORT'");
		hlen = (size_t)(end - spec);
		port_s = end + 1;
		if (memchr(spec, ':', hlen))
			return bad_spec(msg, spec,
					"an IPv6 address goes in brackets");
	}
	if (hlen == 0 || hlen >= sizeof(host))
		return bad_spec(msg, spec, "no address");
	memcpy(host, spec[0] == '[' ? spec + 1 : spec, hlen);
	host[hlen] = '\0';

	if (spec[0] == '[') {
		if (inet_pton(AF_INET6, host, &sin6->sin6_addr) != 1)
			return bad_spec(msg, spec,
					"'%s' is not an IPv6 address", host);
		sin6->sin6_family = AF_INET6;
		*sl = sizeof(*sin6);
	} else {
		if (!strcmp(host, "localhost"))
			snprintf(host, sizeof(host), "127.0.0.1");
		if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
			return bad_spec(msg, spec,
					"'%s' is not an IPv4 address, [IPv6] "
					"or localhost",
					host);
		sin->sin_family = AF_INET;
		*sl = sizeof(*sin);
	}
	rc = parse_port(port_s, &port);
	if (rc)
		return bad_spec(msg, spec, "'%s' is %s", port_s,
				rc == -ERANGE ? "not a port (1-65535)"
					      : "not a number");
	if (ss->ss_family == AF_INET6)
		sin6->sin6_port = port;
	else
		sin->sin_port = port;
	return 0;
}

static void format_url(struct metrics_http *mh,
		       const struct sockaddr_storage *ss)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		snprintf(mh->url, sizeof(mh->url), "http://[%s]:%u%s", a,
			 ntohs(s6->sin6_port), METRICS_PATH);
	} else {
		const struct sockaddr_in *s4 = (const void *)ss;

		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		snprintf(mh->url, sizeof(mh->url), "http://%s:%u%s", a,
			 ntohs(s4->sin_port), METRICS_PATH);
	}
}

/* Bound and listening, non-blocking (MHD's loop accepts until EAGAIN). */
static int listen_on(const struct sockaddr_storage *ss, socklen_t sl,
		     struct ferry_err *msg)
{
	int fd, one = 1, err;

	fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0) {
		err = errno;
		ferry_errf(msg, "metrics socket: %s", strerror(err));
		return -err;
	}
	/* A restarted ferryd must not wait out the old one's TIME_WAITs. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* [::] means IPv6 only; IPv4 is asked for by its own address. */
	if (ss->ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)ss, sl) ||
	    listen(fd, METRICS_BACKLOG)) {
		err = errno;
		ferry_errf(msg, "metrics: cannot listen: %s", strerror(err));
		close(fd);
		return -err;
	}
	return fd;
}

/* ------------------------------------------------------------ requests */

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned int code,
				  const char *text)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(strlen(text), (void *)text,
					    MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; charset=utf-8");
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

/* Runs on MHD's thread: touches nothing but the snapshot. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
				  const char *url, const char *method,
				  const char *version, const char *upload,
				  size_t *upload_len, void **req_cls)
{
	struct metrics_http *mh = cls;
	struct MHD_Response *r = NULL;
	enum MHD_Result ret;

	if (strcmp(url, METRICS_PATH))
		return reply_text(c, MHD_HTTP_NOT_FOUND, "not found\n");
	if (strcmp(method, MHD_HTTP_METHOD_GET) &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED,
				  "method not allowed\n");

	/* MUST_COPY: the control thread frees this text on its next tick. */
	pthread_mutex_lock(&mh->lock);
	if (mh->text)
		r = MHD_create_response_from_buffer(mh->text_len, mh->text,
						    MHD_RESPMEM_MUST_COPY);
	pthread_mutex_unlock(&mh->lock);
	if (!r)
		return reply_text(c, MHD_HTTP_SERVICE_UNAVAILABLE,
				  "no metrics yet\n");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				METRICS_CONTENT_TYPE);
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* MHD's own messages, in ferryd's log format. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[256];
	size_t n;

	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = '\0';
	log_warn("metrics http: %s", line);
}

/* ------------------------------------------------------------ object */

struct metrics_http *metrics_http_create(const char *spec,
					 struct ferry_err *msg)
{
	struct sockaddr_storage ss;
	struct metrics_http *mh;
	socklen_t sl = 0;
	int rc;

	rc = parse_spec(spec, &ss, &sl, msg);
	if (rc)
		goto err;
	mh = calloc(1, sizeof(*mh));
	if (!mh) {
		rc = -ENOMEM;
		ferry_errf(msg, "out of memory");
		goto err;
	}
	rc = pthread_mutex_init(&mh->lock, NULL);
	if (rc) {
		rc = -rc;
		ferry_errf(msg, "metrics: %s", strerror(-rc));
		goto err_mh;
	}
	mh->fd = listen_on(&ss, sl, msg);
	if (mh->fd < 0) {
		rc = mh->fd;
		goto err_lock;
	}
	format_url(mh, &ss);
	return mh;

err_lock:
	pthread_mutex_destroy(&mh->lock);
err_mh:
	free(mh);
err:
	errno = -rc;
	return NULL;
}

int metrics_http_start(struct metrics_http *mh)
{
	int fd = mh->fd;

	if (mh->mhd)
		return -EALREADY;
	if (fd < 0)
		return -EBADF;
	/*
	 * From here the socket is MHD's: MHD_stop_daemon() closes it, and a
	 * failed start may or may not have closed it already, so we never
	 * close it ourselves (a leak on a path where the daemon exits beats
	 * closing someone else's descriptor).
	 */
	mh->fd = -1;
	errno = 0;
	mh->mhd = MHD_start_daemon(
		MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL,
		on_request, mh, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, mh,
		MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)METRICS_MAX_CLIENTS,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)METRICS_IDLE_S,
		MHD_OPTION_END);
	if (!mh->mhd)
		return errno ? -errno : -EIO;
	return 0;
}

void metrics_http_publish(struct metrics_http *mh, char *text)
{
	size_t n;
	char *old;

	if (!text)
		return;
	n = strlen(text);
	pthread_mutex_lock(&mh->lock);
	old = mh->text;
	mh->text = text;
	mh->text_len = n;
	pthread_mutex_unlock(&mh->lock);
	free(old);
}

const char *metrics_http_url(const struct metrics_http *mh)
{
	return mh->url;
}

void metrics_http_destroy(struct metrics_http *mh)
{
	if (!mh)
		return;
	if (mh->mhd)
		MHD_stop_daemon(mh->mhd);
	if (mh->fd >= 0)
		close(mh->fd);
	pthread_mutex_destroy(&mh->lock);
	free(mh->text);
	free(mh);
}
