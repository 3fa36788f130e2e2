/* SPDX-License-Identifier: BSD-2-Clause */
/* client.h - ferryctl's side of the control socket: connect, send, read. */
#ifndef FERRY_CTL_CLIENT_H
#define FERRY_CTL_CLIENT_H

#include <signal.h>
#include <stddef.h>

/* Far above any real reply; only guards against a runaway peer. */
#define MAX_REPLY (64u << 20)

enum exit_code {
	EXIT_OK = 0,
	EXIT_ERROR = 1, /* the daemon answered with an error */
	EXIT_COMM = 2,	/* usage, connection or protocol failure */
};

/* A connected socket, or -errno. */
int client_connect(const char *path);
int client_send_all(int fd, const char *buf, size_t len);
/* 1 readable, 0 timeout, -errno; waitmask: signals let through meanwhile. */
int client_wait_readable(int fd, int timeout_ms, const sigset_t *waitmask);
/* Reads one reply line (malloc'd, no newline) into *reply; 0 or -errno. */
int client_read_reply(int fd, char **reply, const sigset_t *waitmask);

#endif /* FERRY_CTL_CLIENT_H */
