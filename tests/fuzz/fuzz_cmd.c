/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_cmd.c - libFuzzer target for the command protocol (ctl/proto.c).
 *
 * The input is cut into lines as the control socket does; each line runs
 * through ctl_execute() against a small fake table whose handlers use every
 * argument parser, and through the tokenizer, the lookup and the parsers
 * directly. What must hold for any input:
 *   - the reply is one line of JSON: {"ok":true,...} exactly when rc is 0,
 *     otherwise an error whose code is ctl_errno_name(rc) and a message;
 *   - the tokenizer returns words inside the line, or -E2BIG / -EINVAL;
 *   - a parser that succeeds returns a value that fits what it was asked
 *     (a range, a MAC that prints back as its input); error messages are
 *     terminated inside their buffer.
 * ASan and UBSan catch the rest; leaks fail too, so every reply is freed.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "opt.h"
#include "proto.h"

/* Fails the run with a message; libFuzzer saves the input. */
#define FUZZ_CHECK(cond, ...)                                                  \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr,                                        \
				"fuzz_cmd: check failed: %s: ", #cond);        \
			fprintf(stderr, __VA_ARGS__);                          \
			fputc('\n', stderr);                                   \
			abort();                                               \
		}                                                              \
	} while (0)

/* ---- the fake table ---- */

struct fz_port {
	const char *dev;
	uint64_t queues;
	int mode;
	int xdp;
	uint64_t count;
	uint8_t mac[6];
};

static const char *const fz_modes[] = {"auto", "zc", "copy", NULL};
static const char *const fz_xdp[] = {"native", "generic", NULL};
static const char *const fz_idle[] = {"busy", "poll", NULL};

static int kw_dev(const char *val, void *dst, struct ferry_err *err)
{
	((struct fz_port *)dst)->dev = val;
	return 0;
}

static int kw_queues(const char *val, void *dst, struct ferry_err *err)
{
	return ctl_parse_list(val, &((struct fz_port *)dst)->queues, "queues",
			      err);
}

static int kw_mode(const char *val, void *dst, struct ferry_err *err)
{
	return ctl_parse_choice(val, fz_modes, &((struct fz_port *)dst)->mode,
				"mode", err);
}

static int kw_xdp(const char *val, void *dst, struct ferry_err *err)
{
	return ctl_parse_choice(val, fz_xdp, &((struct fz_port *)dst)->xdp,
				"xdp", err);
}

static int kw_count(const char *val, void *dst, struct ferry_err *err)
{
	return ctl_parse_u64(val, 1, UINT64_MAX / 2,
			     &((struct fz_port *)dst)->count, "count", err);
}

static int kw_mac(const char *val, void *dst, struct ferry_err *err)
{
	return ctl_parse_mac(val, ((struct fz_port *)dst)->mac, err);
}

/* "port add NAME dev IF [queues L] [mode M] [xdp X] [count N] [dst-mac A]" */
static int fz_port_add(void *ctx, int argc, char **argv, json_t **data,
		       struct ferry_err *err)
{
	struct fz_port p = {0};
	const struct ctl_kw kw[] = {
		{"dev", kw_dev, &p},	 {"queues", kw_queues, &p},
		{"mode", kw_mode, &p},	 {"xdp", kw_xdp, &p},
		{"count", kw_count, &p}, {"dst-mac", kw_mac, &p},
		{"ignored", NULL, NULL},
	};
	int seen[sizeof(kw) / sizeof(kw[0])];
	int rc;

	if (argc < 3)
		return ferry_fail(err, -EINVAL,
				  "usage: port add NAME dev IF ...");
	rc = ctl_parse_kw(argc - 1, argv + 1, kw, sizeof(kw) / sizeof(kw[0]),
			  seen, err);
	if (rc)
		return rc;
	if (!seen[0])
		return ferry_fail(err, -EINVAL, "'dev IF' is required");
	/* NULL when a word is not UTF-8: the reply then says "data":null. */
	*data = json_pack("{s:s,s:s,s:I,s:i}", "name", argv[0], "dev", p.dev,
			  "queues", (json_int_t)p.queues, "mode", p.mode);
	return 0;
}

/* "workers LIST [idle busy|poll]" */
static int fz_workers(void *ctx, int argc, char **argv, json_t **data,
		      struct ferry_err *err)
{
	uint64_t mask;
	int idle = 0, rc;

	if (argc != 1 && !(argc == 3 && !strcmp(argv[1], "idle")))
		return ferry_fail(err, -EINVAL, "usage: workers LIST [idle X]");
	rc = ctl_parse_list(argv[0], &mask, "CPULIST", err);
	if (!rc && argc == 3)
		rc = ctl_parse_choice(argv[2], fz_idle, &idle, "idle", err);
	if (rc)
		return rc;
	*data = json_integer((json_int_t)(mask >> 1));
	return 0;
}

/* Every word back, as an array: strings jansson may refuse. */
static int fz_echo(void *ctx, int argc, char **argv, json_t **data,
		   struct ferry_err *err)
{
	json_t *arr = json_array();
	int i;

	for (i = 0; arr && i < argc; i++)
		json_array_append_new(arr, json_string(argv[i]));
	*data = arr;
	return 0;
}

/* Fails without a message, so dispatch() fills one from strerror(). */
static int fz_fail(void *ctx, int argc, char **argv, json_t **data,
		   struct ferry_err *err)
{
	*data = json_string("dropped on failure");
	return argc ? -ENOENT : -EPERM;
}

/* A handler that forgot the sign of its errno. */
static int fz_positive(void *ctx, int argc, char **argv, json_t **data,
		       struct ferry_err *err)
{
	return EINVAL;
}

/* The handlers' context: help needs the table it is in. */
struct fz_ctx {
	const struct ctl_cmd *table;
	size_t n;
};

static int fz_help(void *ctx, int argc, char **argv, json_t **data,
		   struct ferry_err *err)
{
	const struct fz_ctx *c = ctx;

	return ctl_help(c->table, c->n, argc, argv, data, err);
}

static const struct ctl_cmd fz_table[] = {
	{"help", "[COMMAND]", "list commands", fz_help},
	{"workers", "LIST [idle busy|poll]", "workers", fz_workers},
	{"port add", "NAME dev IF [...]", "add a port", fz_port_add},
	{"port", "WORD...", "the group's own command", fz_echo},
	{"port del", "NAME", "not implemented", NULL},
	{"echo", "WORD...", "echo", fz_echo},
	{"a b c", "", "three words", fz_echo},
	{"fail", "", "fails", fz_fail},
	{"positive", "", "wrong sign", fz_positive},
	{NULL, NULL, "a hole in the table", NULL},
};
static const struct fz_ctx fz_ctx = {
	.table = fz_table,
	.n = sizeof(fz_table) / sizeof(fz_table[0]),
};

/* ---- checks ---- */

static void check_err_msg(const struct ferry_err *err)
{
	FUZZ_CHECK(memchr(err->msg, '\0', sizeof(err->msg)) != NULL,
		   "unterminated error message");
}

static void check_reply(const char *line, const char *reply, int rc)
{
	json_error_t jerr;
	json_t *j, *ok, *code, *msg;

	FUZZ_CHECK(reply != NULL, "no reply to '%s'", line);
	FUZZ_CHECK(strchr(reply, '\n') == NULL, "reply is not one line: %s",
		   reply);
	j = json_loads(reply, 0, &jerr);
	FUZZ_CHECK(j && json_is_object(j), "not a JSON object (%s): %s",
		   jerr.text, reply);
	ok = json_object_get(j, "ok");
	FUZZ_CHECK(json_is_boolean(ok), "no boolean ok: %s", reply);
	FUZZ_CHECK(json_is_true(ok) == (rc == 0), "ok vs rc %d: %s", rc, reply);
	if (rc == 0) {
		FUZZ_CHECK(json_object_get(j, "data") != NULL, "no data: %s",
			   reply);
	} else {
		FUZZ_CHECK(rc < 0, "positive rc %d", rc);
		code = json_object_get(json_object_get(j, "error"), "code");
		msg = json_object_get(json_object_get(j, "error"), "message");
		FUZZ_CHECK(json_is_string(code) && json_is_string(msg),
			   "error without code or message: %s", reply);
		FUZZ_CHECK(!strcmp(json_string_value(code), ctl_errno_name(rc)),
			   "code %s for rc %d", json_string_value(code), rc);
	}
	json_decref(j);
}

/* The tokenizer on its own: words lie inside the line, in order. */
static void check_tokenize(const char *line, size_t len)
{
	char *copy = strdup(line);
	char *argv[CTL_MAX_ARGS + 1];
	const struct ctl_cmd *cmd;
	int argc, consumed, i;

	if (!copy)
		return;
	argc = ctl_tokenize(copy, argv, CTL_MAX_ARGS);
	FUZZ_CHECK(argc == -E2BIG || argc == -EINVAL ||
			   (argc >= 0 && argc <= CTL_MAX_ARGS),
		   "argc %d", argc);
	for (i = 0; i < argc; i++) {
		FUZZ_CHECK(argv[i] >= copy && argv[i] <= copy + len,
			   "word %d outside the line", i);
		FUZZ_CHECK(argv[i] + strlen(argv[i]) <= copy + len,
			   "word %d runs past the line", i);
		FUZZ_CHECK(i == 0 || argv[i] > argv[i - 1],
			   "words out of order");
	}
	if (argc > 0) {
		cmd = ctl_lookup(fz_ctx.table, fz_ctx.n, argc, argv, &consumed);
		FUZZ_CHECK(!cmd || (consumed > 0 && consumed <= argc),
			   "consumed %d of %d", consumed, argc);
		FUZZ_CHECK(cmd || consumed == 0, "no command, consumed %d",
			   consumed);
	}
	free(copy);
}

/* Every parser on one word. */
static void check_parsers(const char *s, uint64_t lo, uint64_t hi)
{
	struct ferry_err err;
	uint64_t v, mask;
	uint8_t mac[6];
	char back[18];
	int idx;

	if (lo > hi) {
		uint64_t t = lo;

		lo = hi;
		hi = t;
	}
	if (ctl_parse_u64(s, lo, hi, &v, "n", &err) == 0)
		FUZZ_CHECK(v >= lo && v <= hi, "%llu outside %llu-%llu",
			   (unsigned long long)v, (unsigned long long)lo,
			   (unsigned long long)hi);
	else
		check_err_msg(&err);

	if (ctl_parse_list(s, &mask, "list", &err) == 0)
		FUZZ_CHECK(mask != 0, "empty mask from '%s'", s);
	else
		check_err_msg(&err);

	if (ctl_parse_mac(s, mac, &err) == 0) {
		snprintf(back, sizeof(back), "%02x:%02x:%02x:%02x:%02x:%02x",
			 mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
		FUZZ_CHECK(!strcasecmp(back, s), "MAC '%s' read as %s", s,
			   back);
	} else {
		check_err_msg(&err);
	}

	if (ctl_parse_choice(s, fz_modes, &idx, "mode", &err) == 0)
		FUZZ_CHECK(idx >= 0 && idx < 3 && !strcmp(fz_modes[idx], s),
			   "choice %d for '%s'", idx, s);
	else
		check_err_msg(&err);
}

/* ---- option rows (opt.h): every kind, a group, a literal ---- */

struct fz_opts {
	const char *name;
	const char *dev;
	uint64_t n;
	uint8_t small;
	uint32_t word;
	int sword;
	uint64_t cpus;
	uint64_t grouped;
	uint8_t mac[6];
	const char *path;
};

static const char *const fz_words[] = {"a", "b-c", "d", NULL};
static const uint64_t fz_svals[] = {(uint64_t)-1, 0, 7};

#define FO(f)                                                                  \
	.off = offsetof(struct fz_opts, f),                                    \
	.size = sizeof(((struct fz_opts *)0)->f)

static const struct ctl_opt fz_rows[] = {
	{.kind = CTL_OPT_NAME,
	 .flags = CTL_OPT_POSITIONAL | CTL_OPT_REQUIRED,
	 FO(name),
	 .metavar = "NAME"},
	{"dev", CTL_OPT_NAME, CTL_OPT_REQUIRED, FO(dev), .metavar = "IF"},
	{"n", CTL_OPT_U64, 0, FO(n), .min = 2, .max = UINT64_MAX - 1},
	{"small", CTL_OPT_U64, CTL_OPT_PIN, FO(small), .max = 200},
	{"word", CTL_OPT_WORD, 0, FO(word), .words = fz_words},
	{"sword", CTL_OPT_WORD, 0, FO(sword), .words = fz_words,
	 .vals = fz_svals},
	{"cpus", CTL_OPT_CPULIST, 0, FO(cpus)},
	{"grp", CTL_OPT_LITERAL, 0, .group = 1, .next = "g"},
	{"g", CTL_OPT_CPULIST, CTL_OPT_REQUIRED, FO(grouped), .min = 1,
	 .group = 1},
	{"mac", CTL_OPT_MAC, 0, FO(mac)},
	{"path", CTL_OPT_STRING, 0, FO(path)},
};

static const struct fz_opts fz_opts_dflt = {.small = 5, .sword = -1};

static const struct ctl_syntax fz_syntax = {
	fz_rows, sizeof(fz_rows) / sizeof(fz_rows[0]),
	.size = sizeof(struct fz_opts), .dflt = &fz_opts_dflt, .command = "fz"};

/*
 * A line the rows accept prints back as a line they accept again, and
 * that one prints the same: what show config writes, -c reads.
 */
static void check_opts(const char *line)
{
	char *copy = strdup(line), *argv[CTL_MAX_ARGS + 1];
	char out[CTL_MAX_LINE], out2[CTL_MAX_LINE], again[CTL_MAX_LINE];
	struct fz_opts a, b;
	struct ferry_err err;
	int argc, rc;

	if (!copy)
		return;
	argc = ctl_tokenize(copy, argv, CTL_MAX_ARGS);
	if (argc < 0 || ctl_opt_parse(&fz_syntax, argc, argv, &a, &err)) {
		free(copy);
		return;
	}
	snprintf(out, sizeof(out), "fz");
	rc = ctl_opt_print(&fz_syntax, &a, out, sizeof(out));
	/* A name holding a double quote cannot be written back. */
	if (rc || strchr(line, '"')) {
		free(copy);
		return;
	}
	snprintf(again, sizeof(again), "%s", out + 3);
	argc = ctl_tokenize(again, argv, CTL_MAX_ARGS);
	FUZZ_CHECK(argc >= 0, "'%s' does not split", out);
	rc = ctl_opt_parse(&fz_syntax, argc, argv, &b, &err);
	FUZZ_CHECK(rc == 0, "'%s' printed from '%s' is refused: %s", out, line,
		   err.msg);
	snprintf(out2, sizeof(out2), "fz");
	FUZZ_CHECK(!ctl_opt_print(&fz_syntax, &b, out2, sizeof(out2)),
		   "second print");
	FUZZ_CHECK(!strcmp(out, out2), "'%s' then '%s'", out, out2);
	free(copy);
}

static void run_line(const char *line, size_t len, uint64_t lo, uint64_t hi)
{
	char *copy, *argv[CTL_MAX_ARGS + 1], *reply;
	int rc = 1, argc, i;

	reply = ctl_execute(fz_ctx.table, fz_ctx.n, (void *)&fz_ctx, line, &rc);
	check_reply(line, reply, rc);
	free(reply);

	check_tokenize(line, len);
	check_parsers(line, lo, hi);
	check_opts(line);
	copy = strdup(line);
	if (!copy)
		return;
	argc = ctl_tokenize(copy, argv, CTL_MAX_ARGS);
	for (i = 0; i < argc; i++)
		check_parsers(argv[i], lo, hi);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t lo = 0, hi = UINT64_MAX;
	char *buf, *line, *end;

	/* A few leading bytes choose the range ctl_parse_u64 is asked for. */
	if (size >= 2 && data[0] == 0xff) {
		lo = data[1] & 0x0f ? (uint64_t)1 << (data[1] & 0x0f) : 0;
		hi = (uint64_t)-1 >> (data[1] >> 4);
		data += 2;
		size -= 2;
	}
	buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';

	/*
	 * As the socket server reads: lines end at '\n'; one holding a NUL is
	 * refused before it is parsed, so a NUL ends what ctl_execute() sees.
	 */
	for (line = buf; line <= buf + size; line = end + 1) {
		end = memchr(line, '\n', (size_t)(buf + size - line));
		if (!end)
			end = buf + size;
		*end = '\0';
		if (end - line < CTL_MAX_LINE)
			run_line(line, strlen(line), lo, hi);
	}
	free(buf);
	return 0;
}
