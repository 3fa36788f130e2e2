// SPDX-License-Identifier: BSD-2-Clause
/*
 * render_text.c - the text under ferryctl's views: numbers with thousands
 * separated, rates scaled to k/M/G, terminal columns of UTF-8 text, and
 * the fold that keeps every line within the width limit. No JSON here, so
 * the unit test needs none.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "render.h"
#include "util.h"

/* ---- text ---- */

char *render_count(long long n, char *buf, size_t size)
{
	char digits[32], *out = buf;
	size_t len, i, lead;
	bool neg = n < 0;

	snprintf(digits, sizeof(digits), "%llu",
		 neg ? 0ULL - (unsigned long long)n : (unsigned long long)n);
	len = strlen(digits);
	if (size < len + len / 3 + 2) {
		snprintf(buf, size, "%s%s", neg ? "-" : "", digits);
		return buf;
	}
	if (neg)
		*out++ = '-';
	if (len < 4) {
		memcpy(out, digits, len + 1);
		return buf;
	}
	lead = len % 3 ? len % 3 : 3;
	for (i = 0; i < len; i++) {
		if (i >= lead && (i - lead) % 3 == 0)
			*out++ = ',';
		*out++ = digits[i];
	}
	*out = '\0';
	return buf;
}

char *render_rate(double v, char *buf, size_t size)
{
	static const char *const unit[] = {"", " k", " M", " G", " T"};
	int decimals = 0;
	size_t u = 0;

	if (!isfinite(v) || v < 0)
		v = 0;
	while (v >= 999.5 && u + 1 < ARRAY_LEN(unit)) {
		v /= 1000;
		u++;
	}
	/* Three significant digits once scaled: 1.25 k, 12.5 k, 125 k. */
	if (u > 0 && v < 9.995)
		decimals = 2;
	else if (u > 0 && v < 99.95)
		decimals = 1;
	snprintf(buf, size, "%.*f%s", decimals, v, unit[u]);
	return buf;
}

size_t render_text_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

/* Byte offset where width columns of s end (or its length). */
size_t render_cols_to_bytes(const char *s, size_t len, size_t width)
{
	size_t i, w = 0;

	for (i = 0; i < len; i++) {
		if (((unsigned char)s[i] & 0xc0) != 0x80) {
			if (w == width)
				return i;
			w++;
		}
	}
	return len;
}

static size_t span_width(const char *s, size_t len)
{
	size_t i, w = 0;

	for (i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			w++;
	return w;
}

/* One line (no newline) folded to width. */
static void fold_line(const char *s, size_t len, size_t width, FILE *out)
{
	size_t indent = 0, cont, avail;
	bool first = true;

	while (indent < len && s[indent] == ' ')
		indent++;
	cont = indent + 4;
	if (cont + 20 > width)
		cont = width > 20 ? width - 20 : 0;
	while (span_width(s, len) > (first ? width : width - cont)) {
		size_t cut;

		avail = first ? width : width - cont;
		cut = render_cols_to_bytes(s, len, avail);
		/* Back to the last blank that leaves something on the line. */
		while (cut > indent + 1 && s[cut] != ' ')
			cut--;
		if (cut <= indent + 1 || (!first && cut == 0))
			cut = render_cols_to_bytes(s, len, avail);
		fprintf(out, "%*s%.*s\n", first ? 0 : (int)cont, "", (int)cut,
			s);
		while (cut < len && s[cut] == ' ')
			cut++;
		s += cut;
		len -= cut;
		first = false;
	}
	fprintf(out, "%*s%.*s\n", first ? 0 : (int)cont, "", (int)len, s);
}

int render_fold(const char *text, size_t len, int width, FILE *out)
{
	const char *end = text + len;

	if (width < 24)
		width = 24;
	while (text < end) {
		const char *nl = memchr(text, '\n', (size_t)(end - text));
		size_t n = nl ? (size_t)(nl - text) : (size_t)(end - text);

		fold_line(text, n, (size_t)width, out);
		text += n + (nl ? 1 : 0);
	}
	return ferror(out) ? -EIO : 0;
}

int render_term_cols(int fd)
{
	struct winsize ws;

	if (!isatty(fd) || ioctl(fd, TIOCGWINSZ, &ws) < 0 || ws.ws_col == 0)
		return 0;
	return ws.ws_col;
}
