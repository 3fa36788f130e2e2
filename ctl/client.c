// SPDX-License-Identifier: BSD-2-Clause
/* client.c - ferryctl's side of the control socket. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "client.h"

/* ---- the socket ---- */

int client_connect(const char *path)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	memcpy(addr.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	return fd;
}

int client_send_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Waits until fd is readable or timeout_ms passes (-1: no limit), with the
 * signal mask waitmask in force: signals blocked elsewhere are taken only
 * here, so a flag set by their handler is never missed. Returns 1 when
 * readable, 0 on timeout, -EINTR when a signal arrived, or -errno.
 */
int client_wait_readable(int fd, int timeout_ms, const sigset_t *waitmask)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	struct timespec ts = {
		.tv_sec = timeout_ms / 1000,
		.tv_nsec = (long)(timeout_ms % 1000) * 1000000,
	};
	int n = ppoll(&pfd, 1, timeout_ms < 0 ? NULL : &ts, waitmask);

	if (n < 0)
		return -errno;
	return n > 0;
}

/*
 * Reads up to the first newline; *reply is malloc'd and NUL-terminated.
 * With a waitmask, waits in client_wait_readable() before each read, so a signal
 * ends the wait with -EINTR.
 */
int client_read_reply(int fd, char **reply, const sigset_t *waitmask)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap), *nl;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (len + 1 == cap) {
			char *bigger;

			if (cap >= MAX_REPLY) {
				free(buf);
				return -EMSGSIZE;
			}
			bigger = realloc(buf, cap * 2);
			if (!bigger) {
				free(buf);
				return -ENOMEM;
			}
			buf = bigger;
			cap *= 2;
		}
		if (waitmask) {
			int rc = client_wait_readable(fd, -1, waitmask);

			if (rc < 0) {
				free(buf);
				return rc;
			}
		}
		n = recv(fd, buf + len, cap - 1 - len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int rc = n < 0 ? -errno : -ECONNRESET;

			free(buf);
			return rc;
		}
		nl = memchr(buf + len, '\n', (size_t)n);
		len += (size_t)n;
		if (nl) {
			*nl = '\0';
			*reply = buf;
			return 0;
		}
	}
}
