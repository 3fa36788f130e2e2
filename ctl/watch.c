// SPDX-License-Identifier: BSD-2-Clause
/*
 * watch.c - `stats --watch`: keeps the connection open, asks for stats
 * every INTERVAL seconds and redraws the per-port layout of `stats` (rates
 * from the difference of two samples), like top. On a terminal a frame is
 * cut to its size, and says what it cut; elsewhere lines are folded.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "render.h"
#include "server.h" /* CTL_IDLE_TIMEOUT_MS */
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

/* ---- drawing a frame ---- */

static void render_header(const struct watch *w, FILE *f)
{
	time_t now = time(NULL);
	char when[32];
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	fprintf(f, "ferry stats  %s  %s  every %gs%s\n", w->path, when,
		w->opts.interval, w->tty ? "  (Ctrl-C quits)" : "");
}

/* Terminal rows and columns now (it may have been resized); 0 if unknown. */
static void term_size(int *rows, int *cols)
{
	struct winsize ws;

	*rows = *cols = 0;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0) {
		*rows = ws.ws_row;
		*cols = ws.ws_col;
	}
}

/*
 * Writes the frame cut to the terminal: lines to its width, the frame to
 * its height less one line, which then says what did not fit.
 */
static void put_cut(const char *text, size_t len, int rows, int cols)
{
	const char *end = text + len;
	int shown = 0, hidden = 0, cut = 0;

	while (text < end) {
		const char *nl = memchr(text, '\n', (size_t)(end - text));
		size_t n = nl ? (size_t)(nl - text) : (size_t)(end - text);
		size_t i, w = 0;

		if (rows > 1 && shown >= rows - 1) {
			hidden++;
		} else {
			/* Bytes of the first cols columns (UTF-8). */
			for (i = 0; i < n; i++) {
				if (((unsigned char)text[i] & 0xc0) != 0x80 &&
				    w++ == (size_t)cols)
					break;
			}
			if (i < n)
				cut++;
			printf("%.*s\n", (int)i, text);
			shown++;
		}
		text += n + (nl ? 1 : 0);
	}
	if (hidden || cut) {
		char note[128];

		snprintf(note, sizeof(note),
			 "(terminal too small: %d lines hidden, %d cut)",
			 hidden, cut);
		/* The note obeys the width it talks about. */
		printf("%.*s", cols, note);
	}
}

static void draw_frame(const struct watch *w)
{
	double dt = w->cur.t - w->prev.t;
	int rows = 0, cols = 0, width = RENDER_MAX_WIDTH;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (w->tty)
		term_size(&rows, &cols);
	if (cols > 0 && cols < width)
		width = cols;
	f = open_memstream(&buf, &len);
	if (!f)
		return;
	render_header(w, f);
	fputc('\n', f);
	render_stats(f, w->cur.data, w->prev.data, dt, w->opts.all, width);
	if (fclose(f)) {
		free(buf);
		return;
	}
	if (w->tty) {
		fputs(ANSI_HOME_CLEAR, stdout);
		put_cut(buf, len, rows, cols > 0 ? cols : width);
	} else {
		if (w->frames)
			putchar('\n');
		render_fold(buf, len, width, stdout);
	}
	free(buf);
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
				render_error(reply);
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
