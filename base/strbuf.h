/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * strbuf.h - one growing text buffer, for everything ferry writes as text
 * in pieces: the Prometheus exposition (each module printing its own
 * families) and ferryd's running configuration. The first failure sticks:
 * later appends do nothing, and take reports it, so a writer of many lines
 * checks once at the end.
 */
#ifndef FERRY_STRBUF_H
#define FERRY_STRBUF_H

struct ferry_strbuf;

/* An empty buffer; NULL with errno set. */
struct ferry_strbuf *ferry_strbuf_create(void);
void ferry_strbuf_free(struct ferry_strbuf *b);

/* Appends; 0 or -errno (-ENOMEM, -EINVAL), also the error of an earlier
 * append, which left the text as it was. */
__attribute__((format(printf, 2, 3))) int
ferry_strbuf_printf(struct ferry_strbuf *b, const char *fmt, ...);

/* Records a writer's own failure (rc < 0) as the buffer's, if it has none. */
void ferry_strbuf_fail(struct ferry_strbuf *b, int rc);

/* The text, NUL-terminated, now the caller's to free(); b is freed either
 * way. NULL with errno set if an append had failed. */
char *ferry_strbuf_take(struct ferry_strbuf *b);

#endif
