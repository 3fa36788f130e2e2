/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * log.h - ferryd logs to stderr, one line per event, with a syslog level
 * prefix ("<3>") that journald turns into a priority. Hot paths never log;
 * rare events they meet are counted and reported by the control thread.
 */
#ifndef FERRY_LOG_H
#define FERRY_LOG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#define FERRY_LOG(prio, fmt, ...)                                              \
	fprintf(stderr, "<%d>ferryd: " fmt "\n", prio, ##__VA_ARGS__)

#define log_err(fmt, ...)  FERRY_LOG(3, "error: " fmt, ##__VA_ARGS__)
#define log_warn(fmt, ...) FERRY_LOG(4, "warning: " fmt, ##__VA_ARGS__)
#define log_info(fmt, ...) FERRY_LOG(6, fmt, ##__VA_ARGS__)

/*
 * Operator-facing errors: formats msg (the reply the control socket sends)
 * and returns err (-errno), so a failing step reads as one statement:
 *   return ferry_fail(msg, len, -ENOENT, "no port %s", name);
 */
__attribute__((format(printf, 4, 5))) static inline int
ferry_fail(char *msg, size_t len, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
	return err;
}

#endif /* FERRY_LOG_H */
