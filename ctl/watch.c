// SPDX-License-Identifier: BSD-2-Clause
/*
 * watch.c - `stats --watch`: keeps the connection open, asks for stats
 * every INTERVAL seconds and redraws a compact table, like top.
 */
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

#include "client.h"
#include "proto.h"
#include "render.h"
#include "server.h"
#include "watch.h"

/* ---- stats --watch ---- */

#define WATCH_MIN_INTERVAL 0.2
/* One connection serves the whole watch: keep inside the idle timeout. */
#define WATCH_MAX_INTERVAL (CTL_IDLE_TIMEOUT_MS / 2000.0)

#define ANSI_HOME_CLEAR	 "\033[H\033[2J"
#define ANSI_CURSOR_HIDE "\033[?25l"
#define ANSI_CURSOR_SHOW "\033[?25h"

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
int take_watch_args(int *argc, char **argv, struct watch_opts *wo)
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

	rc = client_send_all(w->fd, w->request, w->request_len);
	if (rc == -EPIPE)
		rc = -ECONNRESET;
	if (!rc)
		rc = client_read_reply(w->fd, &raw, &w->waitmask);
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
	rc = client_wait_readable(w->fd, (int)(left * 1000) + 1, &w->waitmask);
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

int watch_run(const char *path, const char *request, size_t len, bool json_out,
	      const struct watch_opts *opts)
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
	w.fd = client_connect(path);
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
