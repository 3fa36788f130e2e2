// SPDX-License-Identifier: BSD-2-Clause
/* strbuf.c - see strbuf.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "strbuf.h"

struct ferry_strbuf {
	char *s;
	size_t len, cap;
	int err;
};

struct ferry_strbuf *ferry_strbuf_create(void)
{
	return calloc(1, sizeof(struct ferry_strbuf));
}

void ferry_strbuf_free(struct ferry_strbuf *b)
{
	if (!b)
		return;
	free(b->s);
	free(b);
}

int ferry_strbuf_printf(struct ferry_strbuf *b, const char *fmt, ...)
{
	va_list ap;
	size_t cap;
	char *s;
	int n;

	if (b->err)
		return b->err;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->len : NULL,
			      b->s ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->err = -EINVAL;
			return b->err;
		}
		if (b->s && b->len + (size_t)n < b->cap) {
			b->len += (size_t)n;
			return 0;
		}
		/* Doubling keeps a long exposition to a few reallocs. */
		cap = (b->cap + (size_t)n + 1) * 2;
		s = realloc(b->s, cap);
		if (!s) {
			b->err = -ENOMEM; /* b->s is still ours to free */
			return b->err;
		}
		b->s = s;
		b->cap = cap;
	}
}

void ferry_strbuf_fail(struct ferry_strbuf *b, int rc)
{
	if (!b->err && rc < 0)
		b->err = rc;
}

char *ferry_strbuf_take(struct ferry_strbuf *b)
{
	char *s;

	if (b->err) {
		errno = -b->err;
		ferry_strbuf_free(b);
		return NULL;
	}
	s = b->s ? b->s : calloc(1, 1);
	free(b);
	if (!s)
		errno = ENOMEM;
	return s;
}
