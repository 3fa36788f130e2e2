/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ferryctl - sends one command line to ferryd's control socket and prints
 * the reply: raw JSON with -j, otherwise rendered for people (render.c:
 * a view per command where one helps, the generic renderer elsewhere).
 *
 * `stats --watch` keeps the connection open, asks for stats every INTERVAL
 * seconds and redraws the same per-port layout, like top.
 */
#include "client.h"
#include "cmd_host.h"
#include "proto.h"
#include "render.h"
#include "stream.h"
#include "watch.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_SOCKET "/run/ferry/ferryd.sock"
static void usage(FILE *f)
{
	fprintf(f,
		"usage: ferryctl [-s SOCKET] [-j|-a] COMMAND [ARG...]\n"
		"       ferryctl [-s SOCKET] [-j|-a] stats [ARG...] --watch "
		"[INTERVAL] [--count N]\n"
		"       ferryctl [-s SOCKET] capture PORT [OPTION...] -w "
		"FILE|-\n"
		"  -s SOCKET  control socket (default $FERRY_SOCKET or %s)\n"
		"  -j, --json print the raw JSON reply (every counter)\n"
		"  -a, --all  show counters that are zero too\n"
		"  -h, --help show this help\n"
		"  --watch    redraw stats every INTERVAL s (default 1, "
		"min 0.2)\n"
		"  --count N  with --watch: stop after N frames\n"
		"  -w FILE|-  capture: the pcapng stream into FILE or stdout\n"
		"Try 'ferryctl help' for the daemon's commands.\n",
		DEFAULT_SOCKET);
}

/* ---- the command line ---- */

/* Words joined by blanks; words with blanks or '#' are double-quoted. */
static int build_line(int argc, char **argv, char *line, size_t size)
{
	size_t len = 0;
	int i;

	for (i = 0; i < argc; i++) {
		const char *w = argv[i];
		bool quote = w[0] == '\0' || strpbrk(w, " \t#");
		int n;

		/* The grammar has no escapes, and '\n' ends a command. */
		if (strpbrk(w, "\"\n\r")) {
			fprintf(stderr,
				"ferryctl: argument '%s' contains a double "
				"quote or a newline\n",
				w);
			return -EINVAL;
		}
		n = snprintf(line + len, size - len, "%s%s%s%s", i ? " " : "",
			     quote ? "\"" : "", w, quote ? "\"" : "");
		if (n < 0 || (size_t)n >= size - len) {
			fprintf(stderr,
				"ferryctl: E2BIG: command line longer than %d "
				"bytes\n",
				CTL_MAX_LINE - 1);
			return -E2BIG;
		}
		len += (size_t)n;
	}
	return (int)len;
}

/* ---- commands that work without a daemon ---- */

static int host_check_local(void *ctx, int argc, char **argv, json_t **data,
			    struct ferry_err *err)
{
	return ctl_host_check(argc, argv, 0, "no ferryd: every online CPU",
			      data, err);
}

/* The same grammar and handler as ferryd's, run in this process. */
static const struct ctl_cmd local_commands[] = {
	{"host check", HOST_CHECK_ARGS, HOST_CHECK_HELP, host_check_local},
};

static bool runs_locally(int argc, char **argv)
{
	int used;

	return ctl_lookup(local_commands,
			  sizeof(local_commands) / sizeof(local_commands[0]),
			  argc, argv, &used) != NULL;
}

/* line: one command line without its newline. */
static int run_local(const char *path, const char *line, int argc, char **argv,
		     const struct render_opts *ro)
{
	char *reply;
	int rc;

	fprintf(stderr,
		"ferryctl: no ferryd answers on %s; checking this host "
		"from ferryctl itself\n",
		path);
	reply = ctl_execute(local_commands,
			    sizeof(local_commands) / sizeof(local_commands[0]),
			    NULL, line, NULL);
	if (!reply) {
		fprintf(stderr, "ferryctl: out of memory\n");
		return EXIT_COMM;
	}
	rc = print_reply(reply, argc, argv, ro);
	free(reply);
	return rc;
}

/* ---- main ---- */

int main(int argc, char **argv)
{
	const char *path = getenv("FERRY_SOCKET");
	char line[CTL_MAX_LINE + 1];
	static const struct option long_opts[] = {
		{"all", no_argument, NULL, 'a'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{"socket", required_argument, NULL, 's'},
		{0},
	};
	struct watch_opts watch = {0};
	struct render_opts ro = {0};
	char *reply = NULL;
	int opt, len, fd, rc, n_words;

	if (!path || !path[0])
		path = DEFAULT_SOCKET;
	/* '+': options end at the command, whose words may start with '-'. */
	while ((opt = getopt_long(argc, argv, "+s:jah", long_opts, NULL)) !=
	       -1) {
		switch (opt) {
		case 's':
			path = optarg;
			break;
		case 'j':
			ro.json = true;
			break;
		case 'a':
			ro.all = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_COMM;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_COMM;
	}

	n_words = argc - optind;
	if (stream_wanted(n_words, argv + optind))
		return stream_run(path, n_words, argv + optind);
	if (!strcmp(argv[optind], "stats") &&
	    take_watch_args(&n_words, argv + optind, &watch) < 0)
		return EXIT_COMM;

	/* CTL_MAX_LINE counts the newline. */
	len = build_line(n_words, argv + optind, line, CTL_MAX_LINE);
	if (len < 0)
		return len == -E2BIG ? EXIT_ERROR : EXIT_COMM;
	line[len++] = '\n';
	watch.all = ro.all;
	if (watch.on)
		return watch_run(path, line, (size_t)len, ro.json, &watch);

	fd = client_connect(path);
	if (fd < 0 && runs_locally(n_words, argv + optind)) {
		line[len - 1] = '\0';
		return run_local(path, line, n_words, argv + optind, &ro);
	}
	if (fd < 0) {
		fprintf(stderr, "ferryctl: cannot connect to %s: %s\n", path,
			strerror(-fd));
		return EXIT_COMM;
	}
	rc = client_send_all(fd, line, (size_t)len);
	if (rc == 0)
		rc = client_read_reply(fd, &reply, NULL);
	close(fd);
	if (rc < 0) {
		fprintf(stderr, "ferryctl: %s: %s\n", path,
			rc == -ECONNRESET ? "connection closed without a reply"
					  : strerror(-rc));
		return EXIT_COMM;
	}

	rc = print_reply(reply, n_words, argv + optind, &ro);
	free(reply);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "ferryctl: writing output: %s\n",
			strerror(errno));
		return EXIT_COMM;
	}
	return rc;
}
