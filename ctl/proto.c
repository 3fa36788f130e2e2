/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * proto.c - the command grammar shared by the config file, the control
 * socket and ferryctl: tokenizer, table lookup, JSON replies, generated
 * help and the argument parsers handlers use to validate before acting.
 */
#include "opt.h"
#include "proto.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors ---- */

#define CTL_ERRNO_NAMES(X)                                                     \
	X(EINVAL)                                                              \
	X(ENOENT)                                                              \
	X(EEXIST)                                                              \
	X(EBUSY)                                                               \
	X(EPERM)                                                               \
	X(EACCES)                                                              \
	X(ENODEV)                                                              \
	X(ENOMEM)                                                              \
	X(EOPNOTSUPP)                                                          \
	X(ENOTSUP)                                                             \
	X(E2BIG)                                                               \
	X(ERANGE)                                                              \
	X(EAGAIN)                                                              \
	X(ENOSPC)                                                              \
	X(EIO)                                                                 \
	X(ENXIO)                                                               \
	X(EALREADY)                                                            \
	X(ETIMEDOUT)                                                           \
	X(ENOTCONN)                                                            \
	X(ESRCH)                                                               \
	X(ENOBUFS)                                                             \
	X(ECANCELED)                                                           \
	X(EADDRINUSE)                                                          \
	X(ENAMETOOLONG)                                                        \
	X(EMFILE)                                                              \
	X(ENOTDIR)                                                             \
	X(EFAULT)                                                              \
	X(EPIPE)                                                               \
	X(EINTR)                                                               \
	X(ENETDOWN)                                                            \
	X(EADDRNOTAVAIL)                                                       \
	X(EAFNOSUPPORT)                                                        \
	X(EMSGSIZE)

#define CTL_ERRNO_ENTRY(e) {e, #e},
static const struct {
	int no;
	const char *name;
} ctl_errno_table[] = {CTL_ERRNO_NAMES(CTL_ERRNO_ENTRY)};
#undef CTL_ERRNO_ENTRY

const char *ctl_errno_name(int err_no)
{
	size_t i;

	if (err_no < 0)
		err_no = -err_no;
	/* EOPNOTSUPP and ENOTSUP share a value on Linux; the first wins. */
	for (i = 0; i < sizeof(ctl_errno_table) / sizeof(ctl_errno_table[0]);
	     i++) {
		if (ctl_errno_table[i].no == err_no)
			return ctl_errno_table[i].name;
	}
	return "EIO";
}

/* ---- tokenizer and lookup ---- */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/*
 * Words are compacted in place: the write cursor never passes the read
 * cursor, because every quote dropped and every separator turned into a
 * terminator only shortens what has been read so far.
 */
int ctl_tokenize(char *line, char **argv, int max)
{
	char *r = line, *w = line;
	int argc = 0;

	for (;;) {
		bool quoted = false;

		while (is_blank(*r))
			r++;
		if (*r == '\0' || *r == '#')
			break;
		if (argc >= max)
			return -E2BIG;
		argv[argc++] = w;
		while (*r != '\0') {
			if (*r == '"') {
				quoted = !quoted;
				r++;
				continue;
			}
			if (!quoted && (is_blank(*r) || *r == '#'))
				break;
			*w++ = *r++;
		}
		if (quoted)
			return -EINVAL;
		if (*r == '\0' || *r == '#') {
			/* "word#comment": the word ends, the comment begins. */
			*w = '\0';
			break;
		}
		*w++ = '\0';
		r++;
	}
	return argc;
}

/* Words of name matched by argv's first words, or 0 if it does not match. */
static int name_match(const char *name, int argc, char **argv)
{
	const char *p = name;
	int k = 0;

	for (;;) {
		size_t len;

		while (*p == ' ')
			p++;
		if (*p == '\0')
			break;
		len = strcspn(p, " ");
		if (k >= argc || strlen(argv[k]) != len ||
		    memcmp(argv[k], p, len) != 0)
			return 0;
		k++;
		p += len;
	}
	return k;
}

const struct ctl_cmd *ctl_lookup(const struct ctl_cmd *table, size_t n,
				 int argc, char **argv, int *consumed)
{
	const struct ctl_cmd *best = NULL;
	int best_words = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		int words;

		if (!table[i].name)
			continue;
		words = name_match(table[i].name, argc, argv);
		if (words > best_words) {
			best = &table[i];
			best_words = words;
		}
	}
	if (consumed)
		*consumed = best_words;
	return best;
}

/* ---- execution ---- */

/*
 * jansson refuses strings that are not UTF-8, and messages quote what the
 * user typed; replace bad bytes so an error reply can always be encoded.
 */
static void utf8_sanitize(char *s)
{
	unsigned char *p = (unsigned char *)s;

	while (*p) {
		int len, i;
		unsigned int cp;

		if (*p < 0x80) {
			p++;
			continue;
		}
		if ((*p & 0xe0) == 0xc0) {
			len = 2;
			cp = *p & 0x1f;
		} else if ((*p & 0xf0) == 0xe0) {
			len = 3;
			cp = *p & 0x0f;
		} else if ((*p & 0xf8) == 0xf0) {
			len = 4;
			cp = *p & 0x07;
		} else {
			*p++ = '?';
			continue;
		}
		for (i = 1; i < len; i++) {
			if ((p[i] & 0xc0) != 0x80)
				break;
			cp = (cp << 6) | (p[i] & 0x3f);
		}
		if (i < len || (len == 2 && cp < 0x80) ||
		    (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
			*p++ = '?';
			continue;
		}
		p += len;
	}
}

/* Some command's name starts with word and goes on: "port" of "port add". */
static bool is_group(const struct ctl_cmd *table, size_t n, const char *word)
{
	size_t len = strlen(word), i;

	for (i = 0; i < n; i++) {
		const char *name = table[i].name;

		if (name && strncmp(name, word, len) == 0 && name[len] == ' ')
			return true;
	}
	return false;
}

/* Runs one tokenized copy of a line; line is modified. */
static int dispatch(const struct ctl_cmd *table, size_t n, void *ctx,
		    char *line, json_t **data, struct ferry_err *err)
{
	char *argv[CTL_MAX_ARGS + 1];
	const struct ctl_cmd *cmd;
	int argc, consumed, rc;

	*data = NULL;
	err->msg[0] = '\0';
	argc = ctl_tokenize(line, argv, CTL_MAX_ARGS);
	if (argc == -E2BIG)
		return ferry_fail(err, -E2BIG, "too many words (at most %d)",
				  CTL_MAX_ARGS);
	if (argc < 0)
		return ferry_fail(err, -EINVAL, "unterminated quote");
	if (argc == 0)
		return 0;
	argv[argc] = NULL;

	cmd = ctl_lookup(table, n, argc, argv, &consumed);
	if (!cmd) {
		if (argc > 1 && is_group(table, n, argv[0]))
			return ferry_fail(
				err, -EINVAL,
				"unknown command '%s %s' (try 'help %s')",
				argv[0], argv[1], argv[0]);
		return ferry_fail(err, -EINVAL,
				  "unknown command '%s' (try 'help')", argv[0]);
	}
	if (!cmd->fn)
		return ferry_fail(err, -EOPNOTSUPP, "'%s' is not implemented",
				  cmd->name);

	rc = cmd->fn(ctx, argc - consumed, argv + consumed, data, err);
	if (rc > 0)
		rc = -rc; /* a handler that forgot the sign still fails */
	if (rc < 0) {
		json_decref(*data);
		*data = NULL;
		if (err->msg[0] == '\0')
			snprintf(err->msg, sizeof(err->msg), "%s",
				 strerror(-rc));
	}
	return rc;
}

static char *reply_ok(json_t *data)
{
	json_t *reply = json_object();
	char *s;

	if (!reply) {
		json_decref(data);
		return NULL;
	}
	json_object_set_new(reply, "ok", json_true());
	json_object_set_new(reply, "data", data ? data : json_null());
	s = json_dumps(reply, JSON_COMPACT);
	json_decref(reply);
	return s;
}

static char *reply_error(int rc, struct ferry_err *err)
{
	json_t *reply;
	char *s;

	utf8_sanitize(err->msg);
	reply = json_pack("{s:b,s:{s:s,s:s}}", "ok", 0, "error", "code",
			  ctl_errno_name(-rc), "message", err->msg);
	if (!reply)
		return NULL;
	s = json_dumps(reply, JSON_COMPACT);
	json_decref(reply);
	return s;
}

char *ctl_execute(const struct ctl_cmd *table, size_t n, void *ctx,
		  const char *line, int *rc)
{
	struct ferry_err err;
	json_t *data;
	char *copy, *s;
	int ret;

	copy = strdup(line);
	if (!copy)
		return NULL;
	ret = dispatch(table, n, ctx, copy, &data, &err);
	free(copy);

	if (ret == 0) {
		s = reply_ok(data);
		if (!s) {
			/* Data a handler built but jansson cannot encode. */
			ret = ferry_fail(&err, -EIO,
					 "reply could not be encoded");
			s = reply_error(ret, &err);
		}
	} else {
		s = reply_error(ret, &err);
	}
	if (rc)
		*rc = ret;
	return s;
}

int ctl_execute_err(const struct ctl_cmd *table, size_t n, void *ctx,
		    const char *line, struct ferry_err *why)
{
	char *out;
	int rc = 0;

	out = ctl_execute(table, n, ctx, line, &rc);
	if (rc) {
		json_t *reply = out ? json_loads(out, 0, NULL) : NULL;
		const char *m = json_string_value(json_object_get(
			json_object_get(reply, "error"), "message"));

		snprintf(why->msg, sizeof(why->msg), "%s", m ? m : "?");
		json_decref(reply);
	}
	free(out);
	return rc;
}

/* ---- help ---- */

/*
 * {"command","args","help"} as always, plus "usage" (the whole line),
 * "synopsis" (the short one: what is required, then "[OPTION...]") and,
 * for commands with option rows, "options" (opt.h's rows as JSON).
 */
static json_t *help_entry(const struct ctl_cmd *cmd)
{
	char args[1024], usage[1100], syn[1024], synopsis[1100];
	json_t *e;

	snprintf(args, sizeof(args), "%s", cmd->args ? cmd->args : "");
	if (!cmd->args && cmd->syntax &&
	    ctl_opt_usage(cmd->syntax, args, sizeof(args)))
		args[0] = 0;
	snprintf(usage, sizeof(usage), "%s%s%s", cmd->name, args[0] ? " " : "",
		 args);
	snprintf(syn, sizeof(syn), "%s", args);
	if (cmd->syntax && ctl_opt_synopsis(cmd->syntax, syn, sizeof(syn)))
		snprintf(syn, sizeof(syn), "%s", args);
	snprintf(synopsis, sizeof(synopsis), "%s%s%s", cmd->name,
		 syn[0] ? " " : "", syn);
	e = json_pack("{s:s,s:s,s:s,s:s,s:s}", "command", cmd->name, "args",
		      args, "help", cmd->help ? cmd->help : "", "usage", usage,
		      "synopsis", synopsis);
	if (e && cmd->syntax &&
	    json_object_set_new(e, "options", ctl_opt_json(cmd->syntax))) {
		json_decref(e);
		return NULL;
	}
	return e;
}

/* Entries of every command whose name starts with argv's words. */
static int help_list(const struct ctl_cmd *table, size_t n, int argc,
		     char **argv, json_t **data)
{
	json_t *list = json_array();
	size_t i;

	if (!list)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		json_t *entry;
		char name[CTL_MAX_LINE];
		char *words[CTL_MAX_ARGS];
		int nw, k;

		if (!table[i].name)
			continue;
		if (argc > 0) {
			snprintf(name, sizeof(name), "%s", table[i].name);
			nw = ctl_tokenize(name, words, CTL_MAX_ARGS);
			if (nw < argc)
				continue;
			for (k = 0; k < argc; k++)
				if (strcmp(words[k], argv[k]) != 0)
					break;
			if (k < argc)
				continue;
		}
		entry = help_entry(&table[i]);
		if (!entry || json_array_append_new(list, entry) < 0) {
			json_decref(list);
			return -ENOMEM;
		}
	}
	*data = list;
	return 0;
}

int ctl_help(const struct ctl_cmd *table, size_t n, int argc, char **argv,
	     json_t **data, struct ferry_err *err)
{
	const struct ctl_cmd *cmd;
	char joined[256];
	size_t len = 0;
	int consumed, rc, i;

	if (argc == 0)
		return help_list(table, n, 0, argv, data);

	cmd = ctl_lookup(table, n, argc, argv, &consumed);
	if (cmd && consumed == argc) {
		*data = help_entry(cmd);
		return *data ? 0 : -ENOMEM;
	}
	/* "help port": every "port ..." command, when there are some. */
	rc = help_list(table, n, argc, argv, data);
	if (rc < 0)
		return ferry_fail(err, rc, "%s", strerror(-rc));
	if (json_array_size(*data) > 0)
		return 0;
	json_decref(*data);
	*data = NULL;

	joined[0] = '\0';
	for (i = 0; i < argc && len < sizeof(joined); i++)
		len += snprintf(joined + len, sizeof(joined) - len, "%s%s",
				i ? " " : "", argv[i]);
	return ferry_fail(err, -EINVAL, "unknown command '%s' (try 'help')",
			  joined);
}

/* ---- config files ---- */

int ctl_run_file(const struct ctl_cmd *table, size_t n, void *ctx,
		 const char *path, int *lineno, struct ferry_err *err)
{
	struct ferry_err line_err;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *f;
	int rc = 0, no = 0;

	if (lineno)
		*lineno = 0;
	f = fopen(path, "re");
	if (!f) {
		rc = -errno;
		return ferry_fail(err, rc, "%s: %s", path, strerror(-rc));
	}

	while ((len = getline(&line, &cap, f)) >= 0) {
		json_t *data;

		no++;
		if ((size_t)len > CTL_MAX_LINE ||
		    ((size_t)len == CTL_MAX_LINE && line[len - 1] != '\n')) {
			rc = ferry_fail(&line_err, -E2BIG,
					"line longer than %d bytes",
					CTL_MAX_LINE - 1);
		} else if (memchr(line, '\0', len)) {
			rc = ferry_fail(&line_err, -EINVAL,
					"line contains a NUL byte");
		} else {
			rc = dispatch(table, n, ctx, line, &data, &line_err);
			json_decref(data);
		}
		if (rc < 0)
			break;
	}
	if (rc == 0 && ferror(f)) {
		rc = ferry_fail(err, -EIO, "%s: read error", path);
		no = 0;
	} else if (rc < 0) {
		/* Checked so the compiler sees truncation is handled. */
		if (snprintf(err->msg, sizeof(err->msg), "line %d: %s", no,
			     line_err.msg) >= (int)sizeof(err->msg))
			err->msg[sizeof(err->msg) - 1] = '\0';
	}
	if (lineno && rc < 0)
		*lineno = no;
	free(line);
	fclose(f);
	return rc;
}

/* ---- argument parsers ---- */

/* Decimal digits, or hex after "0x"; nothing else, not even blanks. */
static int parse_u64_strict(const char *s, uint64_t *out)
{
	int base = 10;
	uint64_t v = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && s[2] != '\0') {
		base = 16;
		s += 2;
	}
	if (*s == '\0')
		return -EINVAL;
	for (; *s; s++) {
		unsigned int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			return -EINVAL;
		if (v > (UINT64_MAX - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	*out = v;
	return 0;
}

int ctl_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out,
		  const char *what, struct ferry_err *err)
{
	uint64_t v = 0;
	int rc;

	rc = parse_u64_strict(s, &v);
	if (rc == -EINVAL)
		return ferry_fail(err, -EINVAL, "%s: '%s' is not a number",
				  what, s);
	if (rc < 0 || v < min || v > max)
		return ferry_fail(err, -ERANGE,
				  "%s: %s is out of range (%llu-%llu)", what, s,
				  (unsigned long long)min,
				  (unsigned long long)max);
	*out = v;
	return 0;
}

/* One list id: decimal digits up to a ',' or '-' or the end. */
static int parse_id(const char **p, unsigned int *id)
{
	const char *s = *p;
	unsigned int v = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++)
		if (v < 1000000)
			v = v * 10 + (*s - '0');
	*p = s;
	*id = v;
	return 0;
}

int ctl_parse_list(const char *s, uint64_t *mask, const char *what,
		   struct ferry_err *err)
{
	const char *p = s;
	uint64_t m = 0;

	for (;;) {
		unsigned int lo, hi, i;
		const char *item = p;
		int len;

		if (parse_id(&p, &lo) < 0)
			goto err_syntax;
		hi = lo;
		if (*p == '-') {
			p++;
			if (parse_id(&p, &hi) < 0)
				goto err_syntax;
		}
		if (*p != ',' && *p != '\0')
			goto err_syntax;
		len = (int)(p - item);
		if (hi < lo)
			return ferry_fail(err, -EINVAL,
					  "%s: '%.*s' is a reversed range",
					  what, len, item);
		if (hi >= 64)
			return ferry_fail(
				err, -ERANGE,
				"%s: %u is too large (ids go up to 63: ferry "
				"keeps CPU and queue sets in 64-bit masks)",
				what, hi);
		for (i = lo; i <= hi; i++)
			m |= UINT64_C(1) << i;
		if (*p == '\0')
			break;
		p++;
	}
	*mask = m;
	return 0;

err_syntax:
	return ferry_fail(err, -EINVAL,
			  "%s: '%s' is not a list (expected e.g. 0-3 or 0,2-3)",
			  what, s);
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int ctl_parse_mac(const char *s, uint8_t mac[6], struct ferry_err *err)
{
	uint8_t m[6];
	int i;

	for (i = 0; i < 6; i++) {
		const char *g = s + 3 * i;
		int hi, lo;

		hi = hex_digit(g[0]);
		lo = hi < 0 ? -1 : hex_digit(g[1]);
		if (lo < 0 || g[2] != (i == 5 ? '\0' : ':'))
			return ferry_fail(err, -EINVAL,
					  "'%s' is not a MAC address (expected "
					  "aa:bb:cc:dd:ee:ff)",
					  s);
		m[i] = (uint8_t)(hi << 4 | lo);
	}
	memcpy(mac, m, sizeof(m));
	return 0;
}

/* Joins words with ", " into buf, truncating quietly. */
static void join_words(char *buf, size_t size, const char *const *words,
		       size_t n)
{
	size_t len = 0, i;

	buf[0] = '\0';
	for (i = 0; i < n && words[i] && len < size; i++)
		len += snprintf(buf + len, size - len, "%s%s", i ? ", " : "",
				words[i]);
}

int ctl_parse_choice(const char *s, const char *const *choices, int *out,
		     const char *what, struct ferry_err *err)
{
	char expected[160];
	int i;

	for (i = 0; choices[i]; i++) {
		if (strcmp(s, choices[i]) == 0) {
			*out = i;
			return 0;
		}
	}
	join_words(expected, sizeof(expected), choices, (size_t)i);
	return ferry_fail(err, -EINVAL, "%s: '%s' is not one of %s", what, s,
			  expected);
}

int ctl_parse_kw(int argc, char **argv, const struct ctl_kw *spec, size_t n,
		 int *seen, struct ferry_err *err)
{
	int local_seen[64];
	size_t j;
	int i, rc;

	if (!seen) {
		if (n > sizeof(local_seen) / sizeof(local_seen[0]))
			return ferry_fail(err, -EINVAL, "too many keywords");
		seen = local_seen;
	}
	for (j = 0; j < n; j++)
		seen[j] = 0;

	/* Check the shape of the whole line before parsing any value. */
	for (i = 0; i < argc; i += 2) {
		for (j = 0; j < n; j++)
			if (strcmp(argv[i], spec[j].key) == 0)
				break;
		if (j == n) {
			char expected[160];
			const char *keys[32];
			size_t k;

			for (k = 0; k < n && k < 32; k++)
				keys[k] = spec[k].key;
			join_words(expected, sizeof(expected), keys, k);
			return ferry_fail(err, -EINVAL,
					  "unknown keyword '%s' (expected: %s)",
					  argv[i], expected);
		}
		if (seen[j])
			return ferry_fail(err, -EINVAL,
					  "keyword '%s' given twice", argv[i]);
		if (i + 1 >= argc)
			return ferry_fail(err, -EINVAL,
					  "keyword '%s' needs a value",
					  argv[i]);
		seen[j] = 1;
	}
	for (i = 0; i < argc; i += 2) {
		for (j = 0; j < n; j++)
			if (strcmp(argv[i], spec[j].key) == 0)
				break;
		if (!spec[j].parse)
			continue;
		err->msg[0] = '\0';
		rc = spec[j].parse(argv[i + 1], spec[j].dst, err);
		if (rc < 0) {
			if (err->msg[0] == '\0')
				ferry_fail(err, rc, "%s: '%s': %s", argv[i],
					   argv[i + 1], strerror(-rc));
			return rc;
		}
	}
	return 0;
}
