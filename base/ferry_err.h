/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ferry_err.h - the one error type of the control path, shared by
 * dataplane/, ctl/, daemon/ and drivers-cfg/: a failing step formats the
 * message the operator reads into a struct ferry_err and returns -errno, and
 * the control socket sends that message as the reply, with no copy between
 * layers. Header-only, so every library can use it without linking another.
 */
#ifndef FERRY_ERR_H
#define FERRY_ERR_H

#include <stdarg.h>
#include <stdio.h>

/* Long enough for a path, an interface name and a reason. */
#define FERRY_ERR_LEN 256

struct ferry_err {
	char msg[FERRY_ERR_LEN];
};

__attribute__((format(printf, 2, 0))) static inline void
ferry_verrf(struct ferry_err *e, const char *fmt, va_list ap)
{
	if (e)
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
}

/* Formats the message into e (NULL: nowhere), for constructors that return
 * NULL with errno set. */
__attribute__((format(printf, 2, 3))) static inline void
ferry_errf(struct ferry_err *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ferry_verrf(e, fmt, ap);
	va_end(ap);
}

/*
 * Formats the message into e (NULL: nowhere) and returns err (-errno), so a
 * failing step reads as one statement:
 *   return ferry_fail(err, -ENOENT, "no port %s", name);
 */
__attribute__((format(printf, 3, 4))) static inline int
ferry_fail(struct ferry_err *e, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ferry_verrf(e, fmt, ap);
	va_end(ap);
	return err;
}

#endif /* FERRY_ERR_H */
