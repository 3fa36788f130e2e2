/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ferryctl - sends one command line to ferryd's control socket and prints
 * the reply: raw JSON with -j, otherwise rendered for people. The renderer
 * knows nothing about individual commands; it turns arrays of objects into
 * tables and objects into "key: value" lines, so new commands need no
 * changes here.
 *
 * `stats --watch` is the one exception: it keeps the connection open, asks
 * for stats every INTERVAL seconds and redraws a compact table, like top.
 */
#include "proto.h"
#include "server.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_SOCKET "/run/ferry/ferryd.sock"
/* Far above any real reply; only guards against a runaway peer. */
#define MAX_REPLY (64u << 20)

enum exit_code {
	EXIT_OK = 0,
	EXIT_ERROR = 1, /* the daemon answered with an error */
	EXIT_COMM = 2,	/* usage, connection or protocol failure */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ferryctl [-s SOCKET] [-j] COMMAND [ARG...]\n"
		"       ferryctl [-s SOCKET] [-j] stats [ARG...] --watch "
		"[INTERVAL] [--count N]\n"
		"  -s SOCKET  control socket (default $FERRY_SOCKET or %s)\n"
		"  -j         print the raw JSON reply\n"
		"  -h         show this help\n"
		"  --watch    redraw stats every INTERVAL s (default 1, "
		"min 0.2)\n"
		"  --count N  with --watch: stop after N frames\n"
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

/* ---- the socket ---- */

static int connect_to(const char *path)
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

static int send_all(int fd, const char *buf, size_t len)
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
static int wait_readable(int fd, int timeout_ms, const sigset_t *waitmask)
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
 * With a waitmask, waits in wait_readable() before each read, so a signal
 * ends the wait with -EINTR.
 */
static int read_reply(int fd, char **reply, const sigset_t *waitmask)
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
			int rc = wait_readable(fd, -1, waitmask);

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

/* ---- rendering ---- */

static bool is_scalar(const json_t *v)
{
	return !json_is_object(v) && !json_is_array(v);
}

static bool is_table(const json_t *v)
{
	return json_is_array(v) && json_is_object(json_array_get(v, 0));
}

static char *scalar_text(const json_t *v)
{
	char buf[64];
	char *end;

	switch (json_typeof(v)) {
	case JSON_STRING:
		return strdup(json_string_value(v));
	case JSON_INTEGER:
		snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT,
			 json_integer_value(v));
		return strdup(buf);
	case JSON_REAL:
		/* Up to two decimals: 1.5 not 1.50, 2 not 2.00. */
		snprintf(buf, sizeof(buf), "%.2f", json_real_value(v));
		end = buf + strlen(buf) - 1;
		while (*end == '0')
			*end-- = '\0';
		if (*end == '.')
			*end = '\0';
		if (strcmp(buf, "-0") == 0)
			strcpy(buf, "0");
		return strdup(buf);
	case JSON_TRUE:
		return strdup("true");
	case JSON_FALSE:
		return strdup("false");
	default:
		return strdup("-");
	}
}

/*
 * Text of one value in a cell or after "key: ": scalars as themselves, a
 * list of scalars joined by commas, anything deeper as compact JSON.
 */
static char *value_text(const json_t *v)
{
	size_t i, len = 0, cap = 64;
	json_t *e;
	char *buf;

	if (!v)
		return strdup("-");
	if (is_scalar(v))
		return scalar_text(v);
	if (json_is_array(v)) {
		json_array_foreach(v, i, e) if (!is_scalar(e)) goto as_json;
		buf = malloc(cap);
		if (!buf)
			return NULL;
		buf[0] = '\0';
		json_array_foreach(v, i, e)
		{
			char *t = scalar_text(e);
			size_t need;

			if (!t) {
				free(buf);
				return NULL;
			}
			need = len + strlen(t) + 2;
			if (need >= cap) {
				char *bigger;

				while (need >= cap)
					cap *= 2;
				bigger = realloc(buf, cap);
				if (!bigger) {
					free(t);
					free(buf);
					return NULL;
				}
				buf = bigger;
			}
			len += (size_t)sprintf(buf + len, "%s%s", i ? "," : "",
					       t);
			free(t);
		}
		return buf;
	}
as_json:
	return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

/* Columns on a terminal: UTF-8 continuation bytes take none. */
static size_t text_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

struct column {
	const char *key; /* in each row */
	const char *sub; /* in row[key], when that is an object; or NULL */
	char *title;
	size_t width;
	bool numeric; /* right-aligned */
};

static const json_t *cell_value(const json_t *row, const struct column *col)
{
	const json_t *v = json_object_get(row, col->key);

	if (col->sub)
		v = json_is_object(v) ? json_object_get(v, col->sub) : NULL;
	return v;
}

/* Columns from the first row's keys; its objects become parent.child. */
static int table_columns(const json_t *first, struct column **out,
			 size_t *n_cols)
{
	struct column *cols = NULL;
	size_t n = 0, cap = 0;
	const char *key, *sub;
	json_t *v, *sv;

	json_object_foreach((json_t *)first, key, v)
	{
		bool flat = json_is_object(v) && json_object_size(v) > 0;
		void *it = flat ? json_object_iter(v) : NULL;

		do {
			struct column *col;

			sub = it ? json_object_iter_key(it) : NULL;
			sv = it ? json_object_iter_value(it) : v;
			if (n == cap) {
				struct column *bigger;

				cap = cap ? cap * 2 : 8;
				bigger = realloc(cols, cap * sizeof(*cols));
				if (!bigger)
					goto err_cols;
				cols = bigger;
			}
			col = &cols[n];
			col->key = key;
			col->sub = sub;
			if (sub) {
				col->title =
					malloc(strlen(key) + strlen(sub) + 2);
				if (col->title)
					sprintf(col->title, "%s.%s", key, sub);
			} else {
				col->title = strdup(key);
			}
			if (!col->title)
				goto err_cols;
			col->width = text_width(col->title);
			col->numeric = json_is_number(sv);
			n++;
			it = it ? json_object_iter_next(v, it) : NULL;
		} while (it);
	}
	*out = cols;
	*n_cols = n;
	return 0;

err_cols:
	while (n > 0)
		free(cols[--n].title);
	free(cols);
	return -ENOMEM;
}

static void print_cell(const char *text, const struct column *col, bool last)
{
	size_t pad = col->width - text_width(text);

	if (col->numeric)
		printf("%*s%s", (int)pad, "", text);
	else if (last)
		printf("%s", text);
	else
		printf("%s%*s", text, (int)pad, "");
	if (!last)
		printf("  ");
}

static int print_table(const json_t *rows, int indent)
{
	size_t n_rows = json_array_size(rows), n_cols, r, c;
	struct column *cols;
	char **cells;
	int rc;

	rc = table_columns(json_array_get(rows, 0), &cols, &n_cols);
	if (rc < 0)
		return rc;
	if (n_cols == 0)
		goto err_cols; /* rows of empty objects: nothing to show */
	cells = calloc(n_rows * n_cols + 1, sizeof(*cells));
	if (!cells) {
		rc = -ENOMEM;
		goto err_cols;
	}
	for (r = 0; r < n_rows; r++) {
		const json_t *row = json_array_get(rows, r);

		for (c = 0; c < n_cols; c++) {
			const json_t *v = cell_value(row, &cols[c]);
			char **cell = &cells[r * n_cols + c];
			size_t w;

			*cell = value_text(v);
			if (!*cell) {
				rc = -ENOMEM;
				goto err_cells;
			}
			w = text_width(*cell);
			if (w > cols[c].width)
				cols[c].width = w;
			if (v && !json_is_number(v))
				cols[c].numeric = false;
		}
	}

	printf("%*s", indent, "");
	for (c = 0; c < n_cols; c++)
		print_cell(cols[c].title, &cols[c], c + 1 == n_cols);
	printf("\n");
	for (r = 0; r < n_rows; r++) {
		printf("%*s", indent, "");
		for (c = 0; c < n_cols; c++)
			print_cell(cells[r * n_cols + c], &cols[c],
				   c + 1 == n_cols);
		printf("\n");
	}

err_cells:
	for (r = 0; r < n_rows * n_cols; r++)
		free(cells[r]);
	free(cells);
err_cols:
	for (c = 0; c < n_cols; c++)
		free(cols[c].title);
	free(cols);
	return rc;
}

static int print_object(const json_t *obj, int indent)
{
	bool after_block = false;
	const char *key;
	json_t *v;
	int rc;

	json_object_foreach((json_t *)obj, key, v)
	{
		if (is_table(v)) {
			printf("\n%*s%s:\n", indent, "", key);
			rc = print_table(v, indent);
			if (rc < 0)
				return rc;
			after_block = true;
		} else if (json_is_object(v)) {
			if (after_block)
				printf("\n");
			printf("%*s%s:\n", indent, "", key);
			rc = print_object(v, indent + 2);
			if (rc < 0)
				return rc;
			after_block = false;
		} else {
			char *text = value_text(v);

			if (!text)
				return -ENOMEM;
			if (after_block)
				printf("\n");
			printf("%*s%s:%s%s\n", indent, "", key,
			       text[0] ? " " : "", text);
			free(text);
			after_block = false;
		}
	}
	return 0;
}

static int print_data(const json_t *data)
{
	char *text;
	size_t i;
	json_t *e;

	if (json_is_null(data))
		return 0;
	if (is_table(data))
		return print_table(data, 0);
	if (json_is_object(data))
		return print_object(data, 0);
	if (json_is_array(data)) {
		json_array_foreach(data, i, e)
		{
			char *text = value_text(e);

			if (!text)
				return -ENOMEM;
			printf("%s\n", text);
			free(text);
		}
		return 0;
	}

	text = value_text(data);
	if (!text)
		return -ENOMEM;
	printf("%s\n", text);
	free(text);
	return 0;
}

/* ---- replies ---- */

/* An error reply, as "ferryctl: CODE: message" on stderr. */
static void print_error(const json_t *reply)
{
	const json_t *error = json_object_get(reply, "error");
	const char *code = json_string_value(json_object_get(error, "code"));
	const char *msg = json_string_value(json_object_get(error, "message"));

	fprintf(stderr, "ferryctl: %s: %s\n", code ? code : "EIO",
		msg ? msg : "failed");
}

static int print_reply(const char *raw, bool json_out)
{
	json_t *reply, *ok;
	json_error_t jerr;
	int rc = EXIT_OK;

	reply = json_loads(raw, JSON_DECODE_ANY, &jerr);
	ok = json_object_get(reply, "ok");
	if (!json_is_boolean(ok)) {
		fprintf(stderr, "ferryctl: malformed reply: %s\n", raw);
		json_decref(reply);
		return EXIT_COMM;
	}
	if (json_out)
		printf("%s\n", raw);

	if (json_is_true(ok)) {
		if (!json_out &&
		    print_data(json_object_get(reply, "data")) < 0) {
			fprintf(stderr, "ferryctl: out of memory\n");
			rc = EXIT_COMM;
		}
	} else {
		if (!json_out)
			print_error(reply);
		rc = EXIT_ERROR;
	}
	json_decref(reply);
	return rc;
}

/* ---- stats --watch ---- */

#define WATCH_MIN_INTERVAL 0.2
/* One connection serves the whole watch: keep inside the idle timeout. */
#define WATCH_MAX_INTERVAL (CTL_IDLE_TIMEOUT_MS / 2000.0)

#define ANSI_HOME_CLEAR	 "\033[H\033[2J"
#define ANSI_CURSOR_HIDE "\033[?25l"
#define ANSI_CURSOR_SHOW "\033[?25h"

struct watch_opts {
	bool on;	     /* --watch given */
	double interval;     /* seconds between frames */
	unsigned long count; /* frames to draw; 0: until a signal */
};

/* One stats reply, kept so that byte counters can become rates. */
struct sample {
	json_t *data; /* the reply's "data"; NULL before the first */
	double t;     /* CLOCK_MONOTONIC seconds when it arrived */
};

struct watch {
	const char *path;
	const char *request; /* "stats ...\n" */
	size_t request_len;
	struct watch_opts opts;
	bool tty;	   /* redraw in place with ANSI escapes */
	bool json_out;	   /* one raw reply per line instead of tables */
	int fd;		   /* one connection for every poll */
	sigset_t waitmask; /* while waiting: SIGINT and SIGTERM let through */
	struct sample prev, cur;
	unsigned long frames;
};

/* Set by SIGINT/SIGTERM; seen when the wait they interrupt returns. */
static volatile sig_atomic_t watch_stop;

static void on_stop_signal(int sig)
{
	(void)sig;
	watch_stop = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- arguments ---- */

static bool parse_interval(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v))
		return false;
	*out = v;
	return true;
}

static bool parse_count(const char *s, unsigned long *out)
{
	unsigned long v;
	char *end;

	if (s[0] < '0' || s[0] > '9')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v == 0)
		return false;
	*out = v;
	return true;
}

/*
 * Takes --watch [INTERVAL] and --count N out of a stats command's words
 * (argv[0] is "stats"); the other words stay, in order, for the daemon.
 * Returns 0, or -EINVAL after saying what is wrong.
 */
static int take_watch_args(int *argc, char **argv, struct watch_opts *wo)
{
	bool count_given = false;
	int i, kept = 1;

	*wo = (struct watch_opts){.interval = 1.0};
	for (i = 1; i < *argc; i++) {
		if (!strcmp(argv[i], "--watch")) {
			wo->on = true;
			if (i + 1 < *argc &&
			    parse_interval(argv[i + 1], &wo->interval))
				i++;
		} else if (!strcmp(argv[i], "--count")) {
			if (i + 1 == *argc ||
			    !parse_count(argv[i + 1], &wo->count)) {
				fprintf(stderr,
					"ferryctl: --count needs a "
					"number of frames (1 or more)\n");
				return -EINVAL;
			}
			count_given = true;
			i++;
		} else {
			argv[kept++] = argv[i];
		}
	}
	*argc = kept;
	if (count_given && !wo->on) {
		fprintf(stderr, "ferryctl: --count goes with --watch\n");
		return -EINVAL;
	}
	if (wo->on && (wo->interval < WATCH_MIN_INTERVAL ||
		       wo->interval > WATCH_MAX_INTERVAL)) {
		fprintf(stderr,
			"ferryctl: --watch: INTERVAL must be %g to %g "
			"seconds\n",
			WATCH_MIN_INTERVAL, WATCH_MAX_INTERVAL);
		return -EINVAL;
	}
	if (wo->on && kept > 1 && !strcmp(argv[1], "reset")) {
		fprintf(stderr, "ferryctl: 'stats reset' cannot be watched\n");
		return -EINVAL;
	}
	return 0;
}

/* ---- reading a stats reply ---- */

static json_int_t counter(const json_t *obj, const char *key)
{
	return json_integer_value(json_object_get(obj, key));
}

static double number(const json_t *obj, const char *key)
{
	return json_number_value(json_object_get(obj, key));
}

/* The element of arr whose member key equals like's; NULL if none. */
static const json_t *find_like(const json_t *arr, const char *key,
			       const json_t *like)
{
	json_t *want = json_object_get(like, key), *e;
	size_t i;

	json_array_foreach(arr, i, e)
	{
		if (json_equal(json_object_get(e, key), want))
			return e;
	}
	return NULL;
}

/* Per second between two samples of a counter; -1 if unknown or reset. */
static double delta_rate(const json_t *cur, const json_t *prev, const char *key,
			 double dt)
{
	json_int_t now = counter(cur, key), then = counter(prev, key);

	if (!prev || dt <= 0 || now < then)
		return -1;
	return (double)(now - then) / dt;
}

/*
 * "no_tx_queue=12 rx_ring_full=3": the drop reasons and the kernel's drop
 * counters that are not zero, as totals.
 */
static void drop_detail(const json_t *row, char *buf, size_t size)
{
	static const char *const kernel[][2] = {
		{"rx_dropped", "rx_dropped"},
		{"rx_ring_full", "rx_ring_full"},
		{"rx_fill_ring_empty_descs", "fill_empty"},
	};
	const char *key;
	size_t len = 0, i;
	json_t *v;

	buf[0] = '\0';
	json_object_foreach(json_object_get(row, "drop_reasons"), key, v)
	{
		if (json_integer_value(v) && len < size)
			len += (size_t)snprintf(buf + len, size - len,
						"%s%s=%" JSON_INTEGER_FORMAT,
						len ? " " : "", key,
						json_integer_value(v));
	}
	for (i = 0; i < sizeof(kernel) / sizeof(kernel[0]); i++) {
		json_int_t n = counter(row, kernel[i][0]);

		if (n && len < size)
			len += (size_t)snprintf(buf + len, size - len,
						"%s%s=%" JSON_INTEGER_FORMAT,
						len ? " " : "", kernel[i][1],
						n);
	}
}

/* ---- drawing a frame ---- */

static void render_header(const struct watch *w)
{
	time_t now = time(NULL);
	char when[32];
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	printf("ferry stats  %s  %s  every %gs%s\n", w->path, when,
	       w->opts.interval, w->tty ? "  (Ctrl-C quits)" : "");
}

static int port_name_width(const json_t *ports)
{
	size_t i, width = strlen("PORT");
	json_t *p;

	json_array_foreach(ports, i, p)
	{
		const char *name =
			json_string_value(json_object_get(p, "name"));

		if (name && strlen(name) > width)
			width = strlen(name);
	}
	return (int)width;
}

/* One port or queue row; prev is the same row in the previous sample. */
static void print_port_row(const char *port, int name_width, const char *queue,
			   const char *worker, const json_t *row,
			   const json_t *prev, double dt)
{
	double rx_bps = delta_rate(row, prev, "rx_bytes", dt);
	char mbit[32], detail[256];

	if (rx_bps < 0)
		snprintf(mbit, sizeof(mbit), "-");
	else
		snprintf(mbit, sizeof(mbit), "%.2f", rx_bps * 8 / 1e6);
	drop_detail(row, detail, sizeof(detail));
	printf("%-*s  %5s  %6s  %12.0f  %12.0f  %10s  %12" JSON_INTEGER_FORMAT
	       "  %9.3f%s%s\n",
	       name_width, port, queue, worker, number(row, "rx_pps"),
	       number(row, "tx_pps"), mbit, counter(row, "drops"),
	       number(row, "kicks_per_packet"), detail[0] ? "  " : "", detail);
}

/*
 * A row per queue; a port with several queues gets its totals first, on
 * a row whose queue is "all".
 */
static void render_ports(const struct watch *w)
{
	const json_t *ports = json_object_get(w->cur.data, "ports");
	const json_t *prev_ports = json_object_get(w->prev.data, "ports");
	double dt = w->cur.t - w->prev.t;
	int name_width = port_name_width(ports);
	size_t i, j;
	json_t *port, *q;

	if (!json_array_size(ports))
		return;
	printf("\n%-*s  %5s  %6s  %12s  %12s  %10s  %12s  %9s  %s\n",
	       name_width, "PORT", "QUEUE", "WORKER", "RX_PPS", "TX_PPS",
	       "RX_MBIT/S", "DROPS", "KICKS/PKT", "DROPPED BY (totals)");
	json_array_foreach(ports, i, port)
	{
		const char *name =
			json_string_value(json_object_get(port, "name"));
		const json_t *queues = json_object_get(port, "queues");
		const json_t *prev = find_like(prev_ports, "name", port);
		const json_t *prev_queues = json_object_get(prev, "queues");

		if (!name)
			name = "?";
		if (json_array_size(queues) != 1)
			print_port_row(name, name_width, "all", "-",
				       json_object_get(port, "totals"),
				       json_object_get(prev, "totals"), dt);
		json_array_foreach(queues, j, q)
		{
			json_int_t wid = counter(q, "worker");
			char qid[24], worker[24] = "-";

			snprintf(qid, sizeof(qid), "%" JSON_INTEGER_FORMAT,
				 counter(q, "queue"));
			if (wid >= 0)
				snprintf(worker, sizeof(worker),
					 "%" JSON_INTEGER_FORMAT, wid);
			print_port_row(name, name_width, qid, worker, q,
				       find_like(prev_queues, "queue", q), dt);
		}
	}
}

static void render_workers(const struct watch *w)
{
	const json_t *workers = json_object_get(w->cur.data, "workers");
	size_t i;
	json_t *wk;

	if (!json_array_size(workers))
		return;
	printf("\n%6s  %4s  %12s  %6s  %s\n", "WORKER", "CPU", "RX_PPS",
	       "BUSY%", "IDLE");
	json_array_foreach(workers, i, wk)
	{
		const char *idle =
			json_string_value(json_object_get(wk, "idle"));

		printf("%6" JSON_INTEGER_FORMAT "  %4" JSON_INTEGER_FORMAT
		       "  %12.0f  %6.1f  %s\n",
		       counter(wk, "id"), counter(wk, "cpu"),
		       number(wk, "rx_pps"), 100.0 * number(wk, "busy_share"),
		       idle ? idle : "-");
	}
}

static void render_gen(const struct watch *w)
{
	const json_t *gens = json_object_get(w->cur.data, "gen");
	size_t i;
	json_t *g;

	if (!json_array_size(gens))
		return;
	printf("\n%-12s  %14s  %12s  %s\n", "GEN", "FRAMES", "PPS", "STATE");
	json_array_foreach(gens, i, g)
	{
		const char *port =
			json_string_value(json_object_get(g, "port"));

		printf("%-12s  %14" JSON_INTEGER_FORMAT "  %12.0f  %s\n",
		       port ? port : "?", counter(g, "frames"),
		       number(g, "pps"),
		       json_is_true(json_object_get(g, "running")) ? "running"
								   : "stopped");
	}
}

static void draw_frame(const struct watch *w)
{
	if (w->tty)
		fputs(ANSI_HOME_CLEAR, stdout);
	else if (w->frames)
		putchar('\n');
	render_header(w);
	render_ports(w);
	render_workers(w);
	render_gen(w);
	if (!json_array_size(json_object_get(w->cur.data, "ports")) &&
	    !json_array_size(json_object_get(w->cur.data, "workers")))
		printf("\nno ports and no workers\n");
}

/* ---- the loop ---- */

/*
 * Sends the request and takes the reply: 0 with *reply set, -EINTR on
 * SIGINT/SIGTERM, -ECONNRESET when the daemon went away, -EBADMSG when
 * the reply is not ferry's JSON, or another -errno.
 */
static int watch_poll(struct watch *w, json_t **reply)
{
	char *raw = NULL;
	int rc;

	rc = send_all(w->fd, w->request, w->request_len);
	if (rc == -EPIPE)
		rc = -ECONNRESET;
	if (!rc)
		rc = read_reply(w->fd, &raw, &w->waitmask);
	if (rc)
		return rc;
	if (w->json_out)
		printf("%s\n", raw);
	*reply = json_loads(raw, 0, NULL);
	free(raw);
	if (!json_is_boolean(json_object_get(*reply, "ok"))) {
		json_decref(*reply);
		return -EBADMSG;
	}
	return 0;
}

/*
 * Sleeps until the monotonic time until, or until a stop signal (-EINTR)
 * or the daemon closing the connection (-ECONNRESET).
 */
static int watch_sleep(struct watch *w, double until)
{
	double left = until - now_s();
	ssize_t n;
	char c;
	int rc;

	if (left <= 0)
		return 0;
	/* Rounded up, so the wait never ends a little early. */
	rc = wait_readable(w->fd, (int)(left * 1000) + 1, &w->waitmask);
	if (rc <= 0)
		return rc;
	/* ferryd speaks only when spoken to: readable means closed. */
	n = recv(w->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n < 0)
		return -errno;
	return n == 0 ? -ECONNRESET : -EBADMSG;
}

/* The exit status for why the loop ended, said on stderr if need be. */
static int watch_end(const struct watch *w, int rc)
{
	if (watch_stop)
		return EXIT_OK; /* Ctrl-C or SIGTERM: the way to leave */
	if (rc == -ECONNRESET) {
		fprintf(stderr,
			"ferryctl: %s: the daemon closed the connection\n",
			w->path);
		return EXIT_ERROR;
	}
	fprintf(stderr, "ferryctl: %s: %s\n", w->path,
		rc == -EBADMSG ? "malformed reply" : strerror(-rc));
	return EXIT_COMM;
}

static int watch_loop(struct watch *w)
{
	double next = now_s();

	for (;;) {
		json_t *reply = NULL;
		int rc = watch_poll(w, &reply);

		if (rc)
			return watch_end(w, rc);
		if (!json_is_true(json_object_get(reply, "ok"))) {
			if (!w->json_out)
				print_error(reply);
			json_decref(reply);
			return EXIT_ERROR;
		}
		json_decref(w->prev.data);
		w->prev = w->cur;
		w->cur.data = json_incref(json_object_get(reply, "data"));
		w->cur.t = now_s();
		json_decref(reply);

		if (!w->json_out)
			draw_frame(w);
		if (fflush(stdout) || ferror(stdout))
			return watch_end(w, -EIO);
		if (++w->frames == w->opts.count)
			return EXIT_OK;

		/* A steady beat: drawing time does not add up into drift. */
		next += w->opts.interval;
		if (next < now_s())
			next = now_s() + w->opts.interval;
		rc = watch_sleep(w, next);
		if (rc)
			return watch_end(w, rc);
	}
}

/*
 * SIGINT and SIGTERM set watch_stop and are blocked except while waiting,
 * so each wait either sees the flag or is ended by the signal. A signal
 * the caller ignores (a background job's SIGINT) stays ignored.
 */
static void catch_stop_signals(sigset_t *orig, sigset_t *waitmask)
{
	static const int sigs[] = {SIGINT, SIGTERM};
	struct sigaction sa = {.sa_handler = on_stop_signal}, old;
	sigset_t block;
	size_t i;

	sigemptyset(&block);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&block, sigs[i]);
	sigprocmask(SIG_BLOCK, &block, orig);
	*waitmask = *orig;
	/* No SA_RESTART: the signal must end the ppoll() it interrupts. */
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		sigdelset(waitmask, sigs[i]);
		if (!sigaction(sigs[i], &sa, &old) && old.sa_handler == SIG_IGN)
			sigaction(sigs[i], &old, NULL);
	}
}

static int watch_run(const char *path, const char *request, size_t len,
		     bool json_out, const struct watch_opts *opts)
{
	struct watch w = {
		.path = path,
		.request = request,
		.request_len = len,
		.opts = *opts,
		.json_out = json_out,
		.tty = !json_out && isatty(STDOUT_FILENO),
	};
	sigset_t orig;
	int rc;

	catch_stop_signals(&orig, &w.waitmask);
	w.fd = connect_to(path);
	if (w.fd < 0) {
		fprintf(stderr, "ferryctl: cannot connect to %s: %s\n", path,
			strerror(-w.fd));
		rc = EXIT_COMM;
		goto out_signals;
	}
	/* A whole frame per write, so a redraw does not flicker. */
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	if (w.tty)
		fputs(ANSI_CURSOR_HIDE, stdout);

	rc = watch_loop(&w);

	if (w.tty) {
		/* The prompt comes back on a line of its own, after "^C". */
		fputs(ANSI_CURSOR_SHOW "\n", stdout);
		fflush(stdout);
	}
	json_decref(w.prev.data);
	json_decref(w.cur.data);
	close(w.fd);
out_signals:
	/* The handler stays: a signal still pending only sets the flag. */
	sigprocmask(SIG_SETMASK, &orig, NULL);
	return rc;
}

/* ---- main ---- */

int main(int argc, char **argv)
{
	const char *path = getenv("FERRY_SOCKET");
	char line[CTL_MAX_LINE + 1];
	struct watch_opts watch = {0};
	bool json_out = false;
	char *reply = NULL;
	int opt, len, fd, rc, n_words;

	if (!path || !path[0])
		path = DEFAULT_SOCKET;
	/* '+': options end at the command, whose words may start with '-'. */
	while ((opt = getopt(argc, argv, "+s:jh")) != -1) {
		switch (opt) {
		case 's':
			path = optarg;
			break;
		case 'j':
			json_out = true;
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
	if (!strcmp(argv[optind], "stats") &&
	    take_watch_args(&n_words, argv + optind, &watch) < 0)
		return EXIT_COMM;

	/* CTL_MAX_LINE counts the newline. */
	len = build_line(n_words, argv + optind, line, CTL_MAX_LINE);
	if (len < 0)
		return len == -E2BIG ? EXIT_ERROR : EXIT_COMM;
	line[len++] = '\n';
	if (watch.on)
		return watch_run(path, line, (size_t)len, json_out, &watch);

	fd = connect_to(path);
	if (fd < 0) {
		fprintf(stderr, "ferryctl: cannot connect to %s: %s\n", path,
			strerror(-fd));
		return EXIT_COMM;
	}
	rc = send_all(fd, line, (size_t)len);
	if (rc == 0)
		rc = read_reply(fd, &reply, NULL);
	close(fd);
	if (rc < 0) {
		fprintf(stderr, "ferryctl: %s: %s\n", path,
			rc == -ECONNRESET ? "connection closed without a reply"
					  : strerror(-rc));
		return EXIT_COMM;
	}

	rc = print_reply(reply, json_out);
	free(reply);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "ferryctl: writing output: %s\n",
			strerror(errno));
		return EXIT_COMM;
	}
	return rc;
}
