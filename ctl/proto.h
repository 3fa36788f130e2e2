/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * proto.h - ferry's command protocol: one grammar for the config file, the
 * control socket and ferryctl.
 *
 * A command line is split into words; the longest command name in the table
 * whose words match the first words of the line wins ("port add" before
 * "port"); the rest are its arguments. A handler validates everything before
 * it changes anything, then answers with JSON data or an error. The reply on
 * the wire is one JSON object on one line:
 *   {"ok":true,"data":...}
 *   {"ok":false,"error":{"code":"EINVAL","message":"..."}}
 */
#ifndef FERRY_CTL_PROTO_H
#define FERRY_CTL_PROTO_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "ferry_err.h"

#define CTL_MAX_LINE 4096 /* bytes in one command line, newline included */
#define CTL_MAX_ARGS 64	  /* words in one command line */

/*
 * A handler gets the words after the command name. It returns 0 and sets
 * *data (NULL means JSON null), or -errno with err->msg filled
 * (`return ferry_fail(err, -EINVAL, ...)`, ferry_err.h): the errno names
 * the reply's code.
 */
typedef int (*ctl_fn)(void *ctx, int argc, char **argv, json_t **data,
		      struct ferry_err *err);

struct ctl_syntax;

struct ctl_cmd {
	const char *name; /* one or more words: "port add" */
	const char *args; /* synopsis of the arguments; NULL: from .syntax */
	const char *help; /* one line */
	ctl_fn fn;
	/* The option rows (opt.h) that parse the arguments, generate the
	 * synopsis and feed completion; NULL for free-form arguments. */
	const struct ctl_syntax *syntax;
};

/* Name of an errno value ("EINVAL"); "EIO" for values it does not know. */
const char *ctl_errno_name(int err_no);

/*
 * Splits line in place into argv (at most max words). Words are separated
 * by blanks; double quotes group a word; '#' outside quotes starts a
 * comment. Returns the word count, or -E2BIG / -EINVAL (open quote).
 */
int ctl_tokenize(char *line, char **argv, int max);

/* Longest-name match; *consumed = words of the name. NULL if none. */
const struct ctl_cmd *ctl_lookup(const struct ctl_cmd *table, size_t n,
				 int argc, char **argv, int *consumed);

/*
 * Runs one command line against the table and returns the reply as a
 * malloc'd one-line JSON string (no trailing newline). Never NULL except on
 * allocation failure. An empty or comment-only line answers ok with null.
 * *rc (optional) receives 0 or the handler's -errno.
 */
char *ctl_execute(const struct ctl_cmd *table, size_t n, void *ctx,
		  const char *line, int *rc);

/*
 * ctl_execute for a caller in the same process that wants the outcome, not
 * the JSON (replaying configuration lines): returns *rc's value, and on
 * failure the reply's error message in why ("?" when there is none).
 */
int ctl_execute_err(const struct ctl_cmd *table, size_t n, void *ctx,
		    const char *line, struct ferry_err *why);

/* help / help CMD, generated from the table. */
int ctl_help(const struct ctl_cmd *table, size_t n, int argc, char **argv,
	     json_t **data, struct ferry_err *err);

/*
 * Applies a file of command lines (one per line, '#' comments). Stops at
 * the first failing line: returns its -errno, *lineno set to it, err filled
 * with "line N: message". Returns 0 when every line succeeded.
 */
int ctl_run_file(const struct ctl_cmd *table, size_t n, void *ctx,
		 const char *path, int *lineno, struct ferry_err *err);

/* ---- argument parsers: 0 or -EINVAL/-ERANGE, err filled ---- */

int ctl_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out,
		  const char *what, struct ferry_err *err);
/* "3", "0-3", "0,2-3": bit i set for CPU/queue i; ids must be < 64. */
int ctl_parse_list(const char *s, uint64_t *mask, const char *what,
		   struct ferry_err *err);
/* "aa:bb:cc:dd:ee:ff" */
int ctl_parse_mac(const char *s, uint8_t mac[6], struct ferry_err *err);
/* Picks s out of a NULL-terminated word list; returns its index. */
int ctl_parse_choice(const char *s, const char *const *choices, int *out,
		     const char *what, struct ferry_err *err);

/*
 * Keyword arguments after the positional ones: "queues 0-3 mode copy".
 * Each spec names a keyword and a parser that stores into dst. Unknown or
 * repeated keywords and missing values are errors. Nothing is applied by
 * this function beyond writing dst fields; seen[i] tells which were given.
 */
struct ctl_kw {
	const char *key;
	int (*parse)(const char *val, void *dst, struct ferry_err *err);
	void *dst;
};
int ctl_parse_kw(int argc, char **argv, const struct ctl_kw *spec, size_t n,
		 int *seen, struct ferry_err *err);

#endif /* FERRY_CTL_PROTO_H */
