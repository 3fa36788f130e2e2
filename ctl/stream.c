// SPDX-License-Identifier: BSD-2-Clause
/*
 * stream.c - ferryctl's side of a streamed capture. On success the daemon
 * sends no reply line: the pcapng stream starts at once with its Section
 * Header Block (first byte 0x0a), so a first byte '{' is a JSON error.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client.h"
#include "proto.h"
#include "stream.h"

bool stream_wanted(int argc, char **argv)
{
	int i;

	if (argc < 2 || strcmp(argv[0], "capture"))
		return false;
	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-w"))
			return true;
	return false;
}

/* "capture stream" and the words but -w FILE, quoted as ferryctl does. */
static int stream_line(int argc, char **argv, const char **out, char *line,
		       size_t size)
{
	size_t len;
	int i, n;

	n = snprintf(line, size, "capture stream");
	len = (size_t)n;
	*out = NULL;
	for (i = 1; i < argc; i++) {
		const char *w = argv[i];
		bool quote;

		if (!strcmp(w, "-w")) {
			if (i + 1 >= argc) {
				fprintf(stderr,
					"ferryctl: -w needs FILE or -\n");
				return -EINVAL;
			}
			*out = argv[++i];
			continue;
		}
		if (strpbrk(w, "\"\n\r")) {
			fprintf(stderr,
				"ferryctl: argument '%s' contains a double "
				"quote or a newline\n",
				w);
			return -EINVAL;
		}
		quote = w[0] == '\0' || strpbrk(w, " \t#");
		n = snprintf(line + len, size - len, " %s%s%s",
			     quote ? "\"" : "", w, quote ? "\"" : "");
		if (n < 0 || (size_t)n >= size - len) {
			fprintf(stderr, "ferryctl: E2BIG: command too long\n");
			return -E2BIG;
		}
		len += (size_t)n;
	}
	if (len + 1 >= size)
		return -E2BIG;
	line[len++] = '\n';
	line[len] = '\0';
	return (int)len;
}

static void on_signal(int sig)
{
	(void)sig; /* only to interrupt recv() */
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The daemon's JSON error: its message on stderr. */
static int print_error(int fd)
{
	char *reply = NULL;
	json_t *j;
	int rc = client_read_reply(fd, &reply, NULL);

	if (rc < 0) {
		fprintf(stderr, "ferryctl: %s\n", strerror(-rc));
		return EXIT_COMM;
	}
	j = json_loads(reply, 0, NULL);
	fprintf(stderr, "ferryctl: %s: %s\n",
		json_string_value(
			json_object_get(json_object_get(j, "error"), "code"))
			?: "error",
		json_string_value(
			json_object_get(json_object_get(j, "error"), "message"))
			?: reply);
	json_decref(j);
	free(reply);
	return EXIT_ERROR;
}

int stream_run(const char *path, int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = on_signal};
	char line[CTL_MAX_LINE + 1], buf[65536];
	const char *out = NULL;
	int len, fd, ofd = -1, rc = EXIT_OK;
	ssize_t n;

	len = stream_line(argc, argv, &out, line, sizeof(line));
	if (len < 0)
		return len == -E2BIG ? EXIT_ERROR : EXIT_COMM;
	if (!out) {
		fprintf(stderr, "ferryctl: capture: -w FILE or -w - needed\n");
		return EXIT_COMM;
	}
	fd = client_connect(path);
	if (fd < 0) {
		fprintf(stderr, "ferryctl: cannot connect to %s: %s\n", path,
			strerror(-fd));
		return EXIT_COMM;
	}
	if (client_send_all(fd, line, (size_t)len) < 0) {
		fprintf(stderr, "ferryctl: %s: %s\n", path, strerror(errno));
		close(fd);
		return EXIT_COMM;
	}
	/* Ctrl-C ends the copy, not the process: what came is kept. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	n = recv(fd, buf, 1, MSG_PEEK);
	if (n == 1 && buf[0] == '{') {
		rc = print_error(fd);
		close(fd);
		return rc;
	}
	if (n <= 0) {
		fprintf(stderr, "ferryctl: %s: connection closed\n", path);
		close(fd);
		return EXIT_COMM;
	}
	if (!strcmp(out, "-"))
		ofd = STDOUT_FILENO;
	else
		ofd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (ofd < 0) {
		fprintf(stderr, "ferryctl: %s: %s\n", out, strerror(errno));
		close(fd);
		return EXIT_ERROR;
	}
	for (;;) {
		/* The reader of a pipe may leave while nothing comes (|
		 * tcpdump -c N): POLLERR on our end says so without a write. */
		struct pollfd pfd[2] = {{.fd = fd, .events = POLLIN},
					{.fd = ofd, .events = 0}};

		if (poll(pfd, 2, -1) < 0)
			break; /* Ctrl-C (EINTR) */
		if (pfd[1].revents & (POLLERR | POLLHUP))
			break;
		if (!(pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n <= 0)
			break; /* EOF, Ctrl-C (EINTR) or the daemon gone */
		if (write_all(ofd, buf, (size_t)n) < 0) {
			/* The reader left (EPIPE): a normal end. */
			if (errno != EPIPE) {
				fprintf(stderr, "ferryctl: %s: %s\n", out,
					strerror(errno));
				rc = EXIT_ERROR;
			}
			break;
		}
	}
	close(fd);
	if (ofd != STDOUT_FILENO && close(ofd) < 0) {
		fprintf(stderr, "ferryctl: %s: %s\n", out, strerror(errno));
		rc = EXIT_ERROR;
	}
	return rc;
}
