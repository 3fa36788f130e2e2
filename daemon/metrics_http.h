/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * metrics_http.h - GET /metrics over HTTP for Prometheus, served by
 * libmicrohttpd's own thread.
 *
 * That thread never touches the dataplane: the control thread renders the
 * metrics text (once a tick) and publishes it here; a request gets a copy of
 * the latest snapshot. So a scrape is at most one tick old, and a slow or
 * hostile HTTP client can only ever hold up its own connection.
 *
 * Life cycle: create() parses ADDR:PORT and binds the listening socket, so a
 * bad address fails before the daemon starts anything; start() starts the
 * HTTP thread (after daemon(), since threads do not survive a fork).
 */
#ifndef FERRY_METRICS_HTTP_H
#define FERRY_METRICS_HTTP_H

#include <stddef.h>

#include "ferry_err.h"

struct metrics_http;

/*
 * spec is "ADDR:PORT" where ADDR is an IPv4 address, "[IPv6]" or
 * "localhost" (127.0.0.1), and PORT is 1-65535. NULL with errno set and a
 * message for the operator in msg: EINVAL for a spec that does not parse,
 * the bind()/listen() errno (EADDRINUSE, EADDRNOTAVAIL, ...) otherwise.
 */
struct metrics_http *metrics_http_create(const char *spec,
					 struct ferry_err *msg);
/* Starts serving. 0 or -errno. */
int metrics_http_start(struct metrics_http *mh);
/*
 * Replaces the snapshot with text (malloc'd, NUL-terminated; ownership
 * passes to mh). A NULL text keeps the previous snapshot.
 */
void metrics_http_publish(struct metrics_http *mh, char *text);
/* "http://127.0.0.1:9464/metrics": where it listens, for the log. */
const char *metrics_http_url(const struct metrics_http *mh);
/* Stops the thread, closes the socket and frees the snapshot. */
void metrics_http_destroy(struct metrics_http *mh);

#endif /* FERRY_METRICS_HTTP_H */
