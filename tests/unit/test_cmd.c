/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_cmd.c - the command protocol: tokenizer, lookup, JSON replies, help,
 * argument parsers and config files, against a small fake command table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto.h"

/* ---- a fake command table ---- */

struct fake {
	const struct ctl_cmd *table;
	size_t n;
	int calls;
	int last_argc;
};

static int cmd_port(void *ctx, int argc, char **argv, json_t **data,
		    struct ferry_err *err)
{
	struct fake *f = ctx;

	(void)argv;
	(void)err;
	f->calls++;
	f->last_argc = argc;
	*data = json_string("port");
	return 0;
}

static int cmd_port_add(void *ctx, int argc, char **argv, json_t **data,
			struct ferry_err *err)
{
	struct fake *f = ctx;

	f->calls++;
	f->last_argc = argc;
	if (argc < 1)
		return ferry_fail(err, -EINVAL, "port add: missing NAME");
	*data = json_pack("{s:s,s:i}", "name", argv[0], "argc", argc);
	return 0;
}

static int cmd_fail(void *ctx, int argc, char **argv, json_t **data,
		    struct ferry_err *err)
{
	(void)ctx;
	(void)argc;
	(void)argv;
	/* Data set before failing must not leak or be sent. */
	*data = json_string("ignored");
	return ferry_fail(err, -EBUSY, "busy now");
}

static int cmd_silent(void *ctx, int argc, char **argv, json_t **data,
		      struct ferry_err *err)
{
	(void)ctx;
	(void)argc;
	(void)argv;
	(void)data;
	(void)err;
	return -ENODEV;
}

static int cmd_help(void *ctx, int argc, char **argv, json_t **data,
		    struct ferry_err *err)
{
	struct fake *f = ctx;

	return ctl_help(f->table, f->n, argc, argv, data, err);
}

static const struct ctl_cmd fake_table[] = {
	{.name = "port", .args = "", .help = "the port group", .fn = cmd_port},
	{.name = "port add",
	 .args = "NAME [dev IFNAME]",
	 .help = "add a port",
	 .fn = cmd_port_add},
	{.name = "fail", .args = "", .help = "always EBUSY", .fn = cmd_fail},
	{.name = "silent", .args = "", .help = "ENODEV", .fn = cmd_silent},
	{.name = "help", .args = "[COMMAND]", .help = "this", .fn = cmd_help},
};
#define FAKE_N (sizeof(fake_table) / sizeof(fake_table[0]))

static struct fake fake_new(void)
{
	struct fake f = {.table = fake_table, .n = FAKE_N};

	return f;
}

/* Runs line, checks the reply is one line of JSON, returns it parsed. */
static json_t *execute(struct fake *f, const char *line, int *rc)
{
	json_error_t jerr;
	json_t *reply;
	char *s;

	s = ctl_execute(fake_table, FAKE_N, f, line, rc);
	assert_non_null(s);
	assert_null(strchr(s, '\n'));
	reply = json_loads(s, 0, &jerr);
	if (!reply)
		fail_msg("reply '%s' is not JSON: %s", s, jerr.text);
	free(s);
	return reply;
}

static void assert_error(json_t *reply, const char *code, const char *msg)
{
	json_t *error = json_object_get(reply, "error");

	assert_true(json_is_false(json_object_get(reply, "ok")));
	assert_string_equal(json_string_value(json_object_get(error, "code")),
			    code);
	if (msg)
		assert_string_equal(
			json_string_value(json_object_get(error, "message")),
			msg);
}

/* ---- tokenizer ---- */

static void test_tokenize_blanks(void **state)
{
	char line[] = "  port\tadd  p0 \t dev\teth0  \n";
	char *argv[8];

	(void)state;
	assert_int_equal(ctl_tokenize(line, argv, 8), 5);
	assert_string_equal(argv[0], "port");
	assert_string_equal(argv[1], "add");
	assert_string_equal(argv[2], "p0");
	assert_string_equal(argv[3], "dev");
	assert_string_equal(argv[4], "eth0");
}

static void test_tokenize_quotes(void **state)
{
	char line[] = "save \"my file.conf\" \"\" a\"b c\"d \"#x\"";
	char *argv[8];

	(void)state;
	assert_int_equal(ctl_tokenize(line, argv, 8), 5);
	assert_string_equal(argv[0], "save");
	assert_string_equal(argv[1], "my file.conf");
	assert_string_equal(argv[2], "");
	assert_string_equal(argv[3], "ab cd");
	assert_string_equal(argv[4], "#x");
}

static void test_tokenize_comments(void **state)
{
	char only[] = "   # nothing here";
	char trailing[] = "stats reset # and a note";
	char glued[] = "stats#note";
	char empty[] = "";
	char *argv[8];

	(void)state;
	assert_int_equal(ctl_tokenize(only, argv, 8), 0);
	assert_int_equal(ctl_tokenize(empty, argv, 8), 0);
	assert_int_equal(ctl_tokenize(trailing, argv, 8), 2);
	assert_string_equal(argv[1], "reset");
	assert_int_equal(ctl_tokenize(glued, argv, 8), 1);
	assert_string_equal(argv[0], "stats");
}

static void test_tokenize_errors(void **state)
{
	char many[] = "a b c d e";
	char fits[] = "a b c d";
	char open[] = "port add \"p0";
	char *argv[4];

	(void)state;
	assert_int_equal(ctl_tokenize(many, argv, 4), -E2BIG);
	assert_int_equal(ctl_tokenize(fits, argv, 4), 4);
	assert_int_equal(ctl_tokenize(open, argv, 4), -EINVAL);
}

/* ---- lookup ---- */

static void test_lookup_longest(void **state)
{
	char *add[] = {"port", "add", "p0"};
	char *show[] = {"port", "show"};
	char *partial[] = {"po"};
	char *none[] = {"nothing"};
	const struct ctl_cmd *cmd;
	int consumed = -1;

	(void)state;
	cmd = ctl_lookup(fake_table, FAKE_N, 3, add, &consumed);
	assert_non_null(cmd);
	assert_string_equal(cmd->name, "port add");
	assert_int_equal(consumed, 2);

	cmd = ctl_lookup(fake_table, FAKE_N, 2, show, &consumed);
	assert_non_null(cmd);
	assert_string_equal(cmd->name, "port");
	assert_int_equal(consumed, 1);

	assert_null(ctl_lookup(fake_table, FAKE_N, 1, partial, &consumed));
	assert_null(ctl_lookup(fake_table, FAKE_N, 1, none, &consumed));
	assert_int_equal(consumed, 0);
}

/* ---- execute ---- */

static void test_execute_ok(void **state)
{
	struct fake f = fake_new();
	json_t *reply, *data;
	int rc = -1;

	(void)state;
	reply = execute(&f, "port add \"p 0\" dev eth0", &rc);
	assert_int_equal(rc, 0);
	assert_true(json_is_true(json_object_get(reply, "ok")));
	data = json_object_get(reply, "data");
	assert_string_equal(json_string_value(json_object_get(data, "name")),
			    "p 0");
	assert_int_equal(json_integer_value(json_object_get(data, "argc")), 3);
	assert_null(json_object_get(reply, "error"));
	json_decref(reply);

	reply = execute(&f, "port show p0", &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(f.last_argc, 2);
	json_decref(reply);
}

static void test_execute_empty(void **state)
{
	static const char *const lines[] = {"", "   \t ", "# comment", "\n"};
	struct fake f = fake_new();
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		json_t *reply;
		int rc = -1;

		reply = execute(&f, lines[i], &rc);
		assert_int_equal(rc, 0);
		assert_true(json_is_true(json_object_get(reply, "ok")));
		assert_true(json_is_null(json_object_get(reply, "data")));
		json_decref(reply);
	}
	assert_int_equal(f.calls, 0);
}

static void test_execute_unknown(void **state)
{
	struct fake f = fake_new();
	json_t *reply;
	int rc = 0;

	(void)state;
	reply = execute(&f, "xyz 1 2", &rc);
	assert_int_equal(rc, -EINVAL);
	assert_error(reply, "EINVAL", "unknown command 'xyz' (try 'help')");
	json_decref(reply);

	/* Bytes that are not UTF-8 still make a valid JSON reply. */
	reply = execute(&f, "\xff\xfe bad", &rc);
	assert_error(reply, "EINVAL", NULL);
	json_decref(reply);
}

static void test_execute_handler_error(void **state)
{
	struct fake f = fake_new();
	json_t *reply;
	int rc = 0;

	(void)state;
	reply = execute(&f, "fail", &rc);
	assert_int_equal(rc, -EBUSY);
	assert_error(reply, "EBUSY", "busy now");
	assert_null(json_object_get(reply, "data"));
	json_decref(reply);

	/* No message: strerror stands in. */
	reply = execute(&f, "silent", &rc);
	assert_int_equal(rc, -ENODEV);
	assert_error(reply, "ENODEV", strerror(ENODEV));
	json_decref(reply);

	reply = execute(&f, "port add", &rc);
	assert_error(reply, "EINVAL", "port add: missing NAME");
	json_decref(reply);
}

/* ctl_execute_err: the outcome and the reply's message, no JSON. */
static void test_execute_err(void **state)
{
	struct fake f = fake_new();
	struct ferry_err why;

	(void)state;
	assert_int_equal(ctl_execute_err(fake_table, FAKE_N, &f, "fail", &why),
			 -EBUSY);
	assert_string_equal(why.msg, "busy now");
	assert_int_equal(
		ctl_execute_err(fake_table, FAKE_N, &f, "port add", &why),
		-EINVAL);
	assert_string_equal(why.msg, "port add: missing NAME");
	assert_int_equal(
		ctl_execute_err(fake_table, FAKE_N, &f, "port add p0", &why),
		0);
	assert_int_equal(f.calls, 2);
}

static void test_execute_bad_syntax(void **state)
{
	struct fake f = fake_new();
	char line[CTL_MAX_ARGS * 2 + 8];
	json_t *reply;
	int rc = 0, i;

	(void)state;
	reply = execute(&f, "port add \"p0", &rc);
	assert_int_equal(rc, -EINVAL);
	assert_error(reply, "EINVAL", "unterminated quote");
	json_decref(reply);

	for (i = 0; i <= CTL_MAX_ARGS; i++) {
		line[2 * i] = 'a';
		line[2 * i + 1] = ' ';
	}
	line[2 * i] = '\0';
	reply = execute(&f, line, &rc);
	assert_int_equal(rc, -E2BIG);
	assert_error(reply, "E2BIG", NULL);
	json_decref(reply);
	assert_int_equal(f.calls, 0);
}

static void test_errno_names(void **state)
{
	(void)state;
	assert_string_equal(ctl_errno_name(EINVAL), "EINVAL");
	assert_string_equal(ctl_errno_name(ENOENT), "ENOENT");
	assert_string_equal(ctl_errno_name(E2BIG), "E2BIG");
	assert_string_equal(ctl_errno_name(ECANCELED), "ECANCELED");
	assert_string_equal(ctl_errno_name(-EBUSY), "EBUSY");
	assert_string_equal(ctl_errno_name(4095), "EIO");
}

/* ---- help ---- */

static void test_help_list(void **state)
{
	struct fake f = fake_new();
	json_t *reply, *data, *first;
	int rc = -1;

	(void)state;
	reply = execute(&f, "help", &rc);
	assert_int_equal(rc, 0);
	data = json_object_get(reply, "data");
	assert_true(json_is_array(data));
	assert_int_equal(json_array_size(data), FAKE_N);
	first = json_array_get(data, 1);
	assert_string_equal(
		json_string_value(json_object_get(first, "command")),
		"port add");
	assert_string_equal(json_string_value(json_object_get(first, "args")),
			    "NAME [dev IFNAME]");
	assert_string_equal(json_string_value(json_object_get(first, "help")),
			    "add a port");
	json_decref(reply);
}

static void test_help_one(void **state)
{
	struct fake f = fake_new();
	json_t *reply, *data;
	int rc = -1;

	(void)state;
	reply = execute(&f, "help port add", &rc);
	assert_int_equal(rc, 0);
	data = json_object_get(reply, "data");
	assert_true(json_is_object(data));
	assert_string_equal(json_string_value(json_object_get(data, "command")),
			    "port add");
	json_decref(reply);

	reply = execute(&f, "help nothing", &rc);
	assert_int_equal(rc, -EINVAL);
	assert_error(reply, "EINVAL", "unknown command 'nothing' (try 'help')");
	json_decref(reply);
}

/* ---- parsers ---- */

static void test_parse_u64(void **state)
{
	struct ferry_err err = {{0}};
	uint64_t v = 0;

	(void)state;
	assert_int_equal(ctl_parse_u64("42", 1, 64, &v, "queues", &err), 0);
	assert_int_equal(v, 42);
	assert_int_equal(ctl_parse_u64("0x10", 0, 100, &v, "n", &err), 0);
	assert_int_equal(v, 16);
	assert_int_equal(ctl_parse_u64("18446744073709551615", 0, UINT64_MAX,
				       &v, "n", &err),
			 0);
	assert_true(v == UINT64_MAX);

	v = 7;
	assert_int_equal(ctl_parse_u64("7x", 1, 64, &v, "queues", &err),
			 -EINVAL);
	assert_string_equal(err.msg, "queues: '7x' is not a number");
	assert_int_equal(v, 7);
	assert_int_equal(ctl_parse_u64("", 0, 9, &v, "n", &err), -EINVAL);
	assert_int_equal(ctl_parse_u64("-1", 0, 9, &v, "n", &err), -EINVAL);
	assert_int_equal(ctl_parse_u64(" 1", 0, 9, &v, "n", &err), -EINVAL);
	assert_int_equal(ctl_parse_u64("0x", 0, 9, &v, "n", &err), -EINVAL);

	assert_int_equal(ctl_parse_u64("65", 1, 64, &v, "queues", &err),
			 -ERANGE);
	assert_string_equal(err.msg, "queues: 65 is out of range (1-64)");
	assert_int_equal(ctl_parse_u64("0", 1, 64, &v, "queues", &err),
			 -ERANGE);
	assert_int_equal(ctl_parse_u64("18446744073709551616", 0, UINT64_MAX,
				       &v, "n", &err),
			 -ERANGE);
}

static void test_parse_list_good(void **state)
{
	static const struct {
		const char *s;
		uint64_t mask;
	} cases[] = {
		{"3", 0x8},	      {"0-3", 0xf}, {"0,2-3", 0xd},
		{"5,1", 0x22},	      {"2-2", 0x4}, {"63", UINT64_C(1) << 63},
		{"0-63", UINT64_MAX},
	};
	struct ferry_err err = {{0}};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t mask = 0;

		if (ctl_parse_list(cases[i].s, &mask, "cpus", &err) != 0)
			fail_msg("'%s': %s", cases[i].s, err.msg);
		if (mask != cases[i].mask)
			fail_msg("'%s': expected %#llx, got %#llx", cases[i].s,
				 (unsigned long long)cases[i].mask,
				 (unsigned long long)mask);
	}
}

static void test_parse_list_bad(void **state)
{
	static const struct {
		const char *s;
		int rc;
	} cases[] = {
		{"", -EINVAL},	    {",", -EINVAL},    {"1,", -EINVAL},
		{",1", -EINVAL},    {"1,,2", -EINVAL}, {"a", -EINVAL},
		{"1-", -EINVAL},    {"-1", -EINVAL},   {"1--2", -EINVAL},
		{"1-2-3", -EINVAL}, {"3-1", -EINVAL},  {" 1", -EINVAL},
		{"64", -ERANGE},    {"0-64", -ERANGE}, {"99999999999", -ERANGE},
	};
	struct ferry_err err = {{0}};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t mask = 0xabc;
		int rc = ctl_parse_list(cases[i].s, &mask, "cpus", &err);

		if (rc != cases[i].rc)
			fail_msg("'%s': expected %d, got %d", cases[i].s,
				 cases[i].rc, rc);
		assert_int_equal(mask, 0xabc);
		assert_non_null(strstr(err.msg, "cpus: "));
	}
	ctl_parse_list("3-1", &(uint64_t){0}, "cpus", &err);
	assert_string_equal(err.msg, "cpus: '3-1' is a reversed range");
	ctl_parse_list("0,64", &(uint64_t){0}, "cpus", &err);
	assert_string_equal(err.msg, "cpus: 64 is too large (ids go up to 63: "
				     "ferry keeps CPU and queue sets in 64-bit "
				     "masks)");
}

static void test_parse_mac(void **state)
{
	static const char *const bad[] = {
		"",
		"aa:bb:cc:dd:ee",
		"aa:bb:cc:dd:ee:ff:00",
		"aa-bb-cc-dd-ee-ff",
		"a:bb:cc:dd:ee:ff",
		"gg:bb:cc:dd:ee:ff",
		"aa:bb:cc:dd:ee:fff",
	};
	struct ferry_err err = {{0}};
	uint8_t mac[6] = {0};
	const uint8_t want[6] = {0x02, 0xab, 0xCD, 0x00, 0x10, 0xff};
	size_t i;

	(void)state;
	assert_int_equal(ctl_parse_mac("02:ab:CD:00:10:ff", mac, &err), 0);
	assert_memory_equal(mac, want, 6);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (ctl_parse_mac(bad[i], mac, &err) != -EINVAL)
			fail_msg("'%s' was accepted as a MAC", bad[i]);
		assert_non_null(strstr(err.msg, "is not a MAC address"));
	}
	assert_memory_equal(mac, want, 6);
}

static void test_parse_choice(void **state)
{
	static const char *const modes[] = {"auto", "zc", "copy", NULL};
	struct ferry_err err = {{0}};
	int idx = -1;

	(void)state;
	assert_int_equal(ctl_parse_choice("copy", modes, &idx, "mode", &err),
			 0);
	assert_int_equal(idx, 2);
	assert_int_equal(ctl_parse_choice("auto", modes, &idx, "mode", &err),
			 0);
	assert_int_equal(idx, 0);
	assert_int_equal(ctl_parse_choice("ZC", modes, &idx, "mode", &err),
			 -EINVAL);
	assert_string_equal(err.msg, "mode: 'ZC' is not one of auto, zc, copy");
	assert_int_equal(idx, 0);
}

/* ---- keyword arguments ---- */

struct port_opts {
	uint64_t queues;
	int mode;
};

static int kw_queues(const char *val, void *dst, struct ferry_err *err)
{
	return ctl_parse_list(val, dst, "queues", err);
}

static int kw_mode(const char *val, void *dst, struct ferry_err *err)
{
	static const char *const modes[] = {"auto", "zc", "copy", NULL};

	return ctl_parse_choice(val, modes, dst, "mode", err);
}

static int parse_port_opts(const char *line, struct port_opts *o, int *seen,
			   struct ferry_err *err)
{
	const struct ctl_kw spec[] = {
		{.key = "queues", .parse = kw_queues, .dst = &o->queues},
		{.key = "mode", .parse = kw_mode, .dst = &o->mode},
	};
	char buf[256], *argv[16];
	int argc;

	snprintf(buf, sizeof(buf), "%s", line);
	argc = ctl_tokenize(buf, argv, 16);
	assert_true(argc >= 0);
	return ctl_parse_kw(argc, argv, spec, 2, seen, err);
}

static void test_parse_kw_good(void **state)
{
	struct port_opts o = {0};
	struct ferry_err err = {{0}};
	int seen[2] = {-1, -1};

	(void)state;
	assert_int_equal(
		parse_port_opts("mode copy queues 0-1", &o, seen, &err), 0);
	assert_int_equal(o.queues, 0x3);
	assert_int_equal(o.mode, 2);
	assert_int_equal(seen[0], 1);
	assert_int_equal(seen[1], 1);

	o.mode = 7;
	assert_int_equal(parse_port_opts("queues 4", &o, seen, &err), 0);
	assert_int_equal(seen[0], 1);
	assert_int_equal(seen[1], 0);
	assert_int_equal(o.mode, 7);

	assert_int_equal(parse_port_opts("", &o, NULL, &err), 0);
}

static void test_parse_kw_errors(void **state)
{
	struct port_opts o = {0};
	struct ferry_err err = {{0}};
	int seen[2];

	(void)state;
	assert_int_equal(parse_port_opts("queues 1 speed 10", &o, seen, &err),
			 -EINVAL);
	assert_string_equal(err.msg,
			    "unknown keyword 'speed' (expected: queues, mode)");

	assert_int_equal(parse_port_opts("mode zc mode copy", &o, seen, &err),
			 -EINVAL);
	assert_string_equal(err.msg, "keyword 'mode' given twice");

	assert_int_equal(parse_port_opts("queues 1 mode", &o, seen, &err),
			 -EINVAL);
	assert_string_equal(err.msg, "keyword 'mode' needs a value");

	/* The shape is checked before any value is parsed. */
	o.queues = 0;
	assert_int_equal(parse_port_opts("queues 1 bogus", &o, seen, &err),
			 -EINVAL);
	assert_int_equal(o.queues, 0);

	assert_int_equal(parse_port_opts("queues 9-2", &o, seen, &err),
			 -EINVAL);
	assert_string_equal(err.msg, "queues: '9-2' is a reversed range");
}

/* ---- config files ---- */

static char *write_temp(const char *text)
{
	char *path = strdup("/tmp/ferry-test-cmd-XXXXXX");
	int fd;

	assert_non_null(path);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void test_run_file_error_line(void **state)
{
	struct fake f = fake_new();
	struct ferry_err err = {{0}};
	char *path;
	int lineno = 0;

	(void)state;
	path = write_temp("# a config\n"
			  "port add p0 dev eth0\n"
			  "fail now\n"
			  "port add p1\n");
	assert_int_equal(
		ctl_run_file(fake_table, FAKE_N, &f, path, &lineno, &err),
		-EBUSY);
	assert_int_equal(lineno, 3);
	assert_string_equal(err.msg, "line 3: busy now");
	assert_int_equal(f.calls, 1); /* stopped at line 3 */
	unlink(path);
	free(path);
}

static void test_run_file_ok(void **state)
{
	struct fake f = fake_new();
	struct ferry_err err = {{0}};
	char *path;
	int lineno = -1;

	(void)state;
	path = write_temp("port add p0\r\n\n   # x\nport add p1 # comment\n"
			  "port add p2"); /* no final newline */
	assert_int_equal(
		ctl_run_file(fake_table, FAKE_N, &f, path, &lineno, &err), 0);
	assert_int_equal(lineno, 0);
	assert_int_equal(f.calls, 3);
	unlink(path);
	free(path);
}

static void test_run_file_long_line(void **state)
{
	struct fake f = fake_new();
	struct ferry_err err = {{0}};
	char *text, *path;
	int lineno = 0;

	(void)state;
	text = malloc(CTL_MAX_LINE + 32);
	assert_non_null(text);
	strcpy(text, "port add p0\nport ");
	memset(text + strlen(text), 'x', CTL_MAX_LINE);
	strcpy(text + strlen("port add p0\nport ") + CTL_MAX_LINE, "\n");
	path = write_temp(text);
	assert_int_equal(
		ctl_run_file(fake_table, FAKE_N, &f, path, &lineno, &err),
		-E2BIG);
	assert_int_equal(lineno, 2);
	assert_non_null(strstr(err.msg, "line 2: "));
	unlink(path);
	free(path);
	free(text);

	assert_int_equal(ctl_run_file(fake_table, FAKE_N, &f,
				      "/nonexistent/ferry.conf", &lineno, &err),
			 -ENOENT);
	assert_non_null(strstr(err.msg, "/nonexistent/ferry.conf"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tokenize_blanks),
		cmocka_unit_test(test_tokenize_quotes),
		cmocka_unit_test(test_tokenize_comments),
		cmocka_unit_test(test_tokenize_errors),
		cmocka_unit_test(test_lookup_longest),
		cmocka_unit_test(test_execute_ok),
		cmocka_unit_test(test_execute_empty),
		cmocka_unit_test(test_execute_unknown),
		cmocka_unit_test(test_execute_handler_error),
		cmocka_unit_test(test_execute_err),
		cmocka_unit_test(test_execute_bad_syntax),
		cmocka_unit_test(test_errno_names),
		cmocka_unit_test(test_help_list),
		cmocka_unit_test(test_help_one),
		cmocka_unit_test(test_parse_u64),
		cmocka_unit_test(test_parse_list_good),
		cmocka_unit_test(test_parse_list_bad),
		cmocka_unit_test(test_parse_mac),
		cmocka_unit_test(test_parse_choice),
		cmocka_unit_test(test_parse_kw_good),
		cmocka_unit_test(test_parse_kw_errors),
		cmocka_unit_test(test_run_file_error_line),
		cmocka_unit_test(test_run_file_ok),
		cmocka_unit_test(test_run_file_long_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
