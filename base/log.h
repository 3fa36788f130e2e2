/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * log.h - ferryd logs to stderr, one line per event, with a syslog level
 * prefix ("<3>") that journald turns into a priority. Hot paths never log;
 * rare events they meet are counted and reported by the control thread.
 */
#ifndef FERRY_LOG_H
#define FERRY_LOG_H

#include <stdio.h>

/* Operator-facing errors: ferry_fail() and struct ferry_err. */
#include "ferry_err.h"

#define FERRY_LOG(prio, fmt, ...)                                              \
	fprintf(stderr, "<%d>ferryd: " fmt "\n", prio, ##__VA_ARGS__)

#define log_err(fmt, ...)  FERRY_LOG(3, "error: " fmt, ##__VA_ARGS__)
#define log_warn(fmt, ...) FERRY_LOG(4, "warning: " fmt, ##__VA_ARGS__)
#define log_info(fmt, ...) FERRY_LOG(6, fmt, ##__VA_ARGS__)

#endif /* FERRY_LOG_H */
