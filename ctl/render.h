/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * render.h - replies for people. A table of views keyed by command words
 * (port show, stats, help, ...) draws the replies an operator reads most;
 * every other reply goes through the generic renderer. Either way no line
 * is wider than the limit and no JSON appears: nested objects and arrays
 * become sub-blocks and sub-tables. -j prints the raw line instead.
 */
#ifndef FERRY_CTL_RENDER_H
#define FERRY_CTL_RENDER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Never wider than this, whatever the terminal. */
#define RENDER_MAX_WIDTH 120
/* help CMD wraps to the terminal, or to this when stdout is not one. */
#define RENDER_PIPE_WIDTH 80

struct render_opts {
	bool json; /* -j: the raw reply line */
	bool all;  /* -a: counters that are zero too */
};

/*
 * Prints a reply line to the command words that asked for it (they pick
 * the view); returns the exit code (enum exit_code).
 */
int print_reply(const char *raw, int argc, char *const *argv,
		const struct render_opts *opts);
/* "ferryctl: CODE: message" on stderr. */
void render_error(const json_t *reply);

/*
 * The per-port stats layout, for `stats --watch`: data is a stats reply's
 * data, prev the previous one (NULL: rates from the daemon's pps only),
 * dt the seconds between them. Writes lines to f, unfolded.
 */
int render_stats(FILE *f, const json_t *data, const json_t *prev, double dt,
		 bool all, int width);

/* Columns of the terminal on fd, or 0 when it is not one. */
int render_term_cols(int fd);

/* ---- text helpers, exposed for their unit test ---- */

/* "1,234,567": a counter with its thousands separated by commas. */
char *render_count(long long n, char *buf, size_t size);
/* "1.25 G": a rate scaled to k/M/G with three significant digits. */
char *render_rate(double v, char *buf, size_t size);
/* Terminal columns of UTF-8 text (continuation bytes take none). */
size_t render_text_width(const char *s);
/* Bytes of s (len long) that make its first width columns. */
size_t render_cols_to_bytes(const char *s, size_t len, size_t width);
/*
 * Copies text to out with every line longer than width folded at a blank
 * (or cut hard when there is none); continuation lines are indented four
 * columns deeper than the line they continue. 0 or -errno.
 */
int render_fold(const char *text, size_t len, int width, FILE *out);

#endif /* FERRY_CTL_RENDER_H */
