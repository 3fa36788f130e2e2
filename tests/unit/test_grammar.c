/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_grammar.c - ferryd's command grammar from its option rows, with no
 * dataplane running: for every command of every module and every option
 * (every word of a word option, both ends of a range), a line is parsed,
 * printed, parsed again and printed again, and the two prints must agree
 * and carry the option; bad lines are refused; the usage text generated
 * from the rows is checked against the synopses scripts and docs know.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "cmd_host.h"
#include "commands.h"
#include "opt.h"
#include "proto.h"

#define MAXW 64

/* Every command of every module that has option rows. */
static const struct ctl_cmd *find_cmd(const char *name)
{
	const struct cmd_module *const *m;
	size_t n, i, j;

	m = ferryd_modules(&n);
	for (i = 0; i < n; i++)
		for (j = 0; j < m[i]->n; j++)
			if (!strcmp(m[i]->cmds[j].name, name))
				return &m[i]->cmds[j];
	return NULL;
}

/* A good value for a row, the n-th of its kind (-1: no more). */
static int sample(const struct ctl_opt *o, int n, char *buf, size_t len)
{
	switch (o->kind) {
	case CTL_OPT_WORD:
		if (!o->words[n])
			return -1;
		snprintf(buf, len, "%s", o->words[n]);
		return 0;
	case CTL_OPT_U64:
		if (n > 1)
			return -1;
		snprintf(buf, len, "%" PRIu64, n ? o->max : o->min);
		return 0;
	case CTL_OPT_CPULIST:
		if (n > 1)
			return -1;
		snprintf(buf, len, "%s", n ? "0-2,5,63" : "1");
		return 0;
	case CTL_OPT_NAME:
		if (n > 1)
			return -1;
		snprintf(buf, len, "%s", n ? "with space" : "n1");
		return 0;
	case CTL_OPT_STRING:
		if (n > 0)
			return -1;
		snprintf(buf, len, "%s", "/sys/fs/cgroup/a b");
		return 0;
	case CTL_OPT_MAC:
		if (n > 0)
			return -1;
		snprintf(buf, len, "%s", "02:00:00:00:00:01");
		return 0;
	case CTL_OPT_CUSTOM:
		if (n > 0)
			return -1;
		assert_non_null(o->example); /* a custom row brings its own */
		snprintf(buf, len, "%s", o->example);
		return 0;
	case CTL_OPT_LITERAL:
		break;
	}
	return -1;
}

struct line {
	char store[MAXW][128];
	char *argv[MAXW];
	int argc;
};

static void push(struct line *l, const char *w)
{
	assert_true(l->argc < MAXW);
	snprintf(l->store[l->argc], sizeof(l->store[0]), "%s", w);
	l->argv[l->argc] = l->store[l->argc];
	l->argc++;
}

static bool literal_required(const struct ctl_syntax *s, int group)
{
	size_t k;

	for (k = 0; k < s->n; k++)
		if (s->opts[k].kind == CTL_OPT_LITERAL &&
		    s->opts[k].group == group)
			return s->opts[k].flags & CTL_OPT_REQUIRED;
	return true; /* group 0 */
}

/*
 * The smallest good line, plus (when extra >= 0) row `extra` with `val`,
 * with the literal that opens its group. Rows are laid out in row order so
 * literals come in theirs.
 */
static void build(const struct ctl_syntax *s, int extra, const char *val,
		  struct line *l)
{
	char v[128];
	size_t k;
	int eg = extra >= 0 ? s->opts[extra].group : 0;

	l->argc = 0;
	for (k = 0; k < s->n; k++) {
		const struct ctl_opt *o = &s->opts[k];
		bool open = literal_required(s, o->group) ||
			    (o->group && o->group == eg);
		bool req = o->flags & CTL_OPT_REQUIRED;

		if (!open)
			continue;
		if (o->kind == CTL_OPT_LITERAL) {
			push(l, o->key);
			continue;
		}
		if ((int)k == extra) {
			if (!(o->flags & CTL_OPT_POSITIONAL))
				push(l, o->key);
			push(l, val);
			continue;
		}
		/* An optional positional value goes in when a later row is
		 * given: the words after it are read as keywords. */
		if (!req &&
		    !((o->flags & CTL_OPT_POSITIONAL) && extra > (int)k))
			continue;
		assert_int_equal(sample(o, 0, v, sizeof(v)), 0);
		if (!(o->flags & CTL_OPT_POSITIONAL))
			push(l, o->key);
		push(l, v);
	}
}

/* print(parse(line)) == print(parse(print(parse(line)))); returns the
 * first print in out. */
static void round_trip(const struct ctl_cmd *c, struct line *l, char *out,
		       size_t len)
{
	const struct ctl_syntax *s = c->syntax;
	unsigned char p1[1024], p2[1024];
	char again[CTL_MAX_LINE], *argv[MAXW];
	char second[CTL_MAX_LINE];
	struct ferry_err err = {{0}};
	int argc, nw, rc;

	assert_true(s->size <= sizeof(p1));
	rc = ctl_opt_parse(s, l->argc, l->argv, p1, &err);
	if (rc)
		fail_msg("%s: parse failed: %s", c->name, err.msg);
	snprintf(out, len, "%s", c->name);
	assert_int_equal(ctl_opt_print(s, p1, out, len), 0);

	/* The printed line goes through the tokenizer, as a file would. */
	snprintf(again, sizeof(again), "%s", out);
	argc = ctl_tokenize(again, argv, MAXW);
	assert_true(argc > 0);
	/* The command's own words: "stats", "port add", "sockmap policy
	 * add". */
	for (nw = 1, rc = 0; c->name[rc]; rc++)
		nw += c->name[rc] == ' ';
	rc = ctl_opt_parse(s, argc - nw, argv + nw, p2, &err);
	if (rc)
		fail_msg("%s: '%s' does not parse again: %s", c->name, out,
			 err.msg);
	snprintf(second, sizeof(second), "%s", c->name);
	assert_int_equal(ctl_opt_print(s, p2, second, sizeof(second)), 0);
	assert_string_equal(out, second);
}

static bool has_word(const char *line, const char *w)
{
	size_t n = strlen(w);
	const char *p = line;

	while ((p = strstr(p, w))) {
		if ((p == line || p[-1] == ' ' || p[-1] == '"') &&
		    (p[n] == ' ' || p[n] == 0 || p[n] == '"'))
			return true;
		p += n;
	}
	return false;
}

static void check_command(const struct ctl_cmd *c)
{
	const struct ctl_syntax *s = c->syntax;
	char out[CTL_MAX_LINE], v[128];
	struct line l;
	size_t k;
	int n;

	build(s, -1, NULL, &l);
	round_trip(c, &l, out, sizeof(out));
	for (k = 0; k < s->n; k++) {
		const struct ctl_opt *o = &s->opts[k];

		if (o->kind == CTL_OPT_LITERAL)
			continue;
		for (n = 0; sample(o, n, v, sizeof(v)) == 0; n++) {
			build(s, (int)k, v, &l);
			round_trip(c, &l, out, sizeof(out));
			/* A value that is not the default shows, under its
			 * key; pinned and required ones always. */
			if (o->key &&
			    (o->flags & (CTL_OPT_PIN | CTL_OPT_REQUIRED)))
				assert_true(has_word(out, o->key));
			if (o->kind == CTL_OPT_CUSTOM ||
			    o->kind == CTL_OPT_NAME || o->kind == CTL_OPT_MAC)
				if (!has_word(out, v) && !strchr(v, ' '))
					fail_msg("%s: %s %s missing from '%s'",
						 c->name, o->key ?: "", v, out);
		}
	}
}

static void test_every_command_round_trips(void **state)
{
	const struct cmd_module *const *m;
	size_t n, i, j, tested = 0;

	(void)state;
	m = ferryd_modules(&n);
	for (i = 0; i < n; i++)
		for (j = 0; j < m[i]->n; j++) {
			if (!m[i]->cmds[j].syntax)
				continue;
			check_command(&m[i]->cmds[j]);
			tested++;
		}
	/* port x3, app x4, steer x3, gen x2, workers, stats, save,
	 * handover, proxy x3, sockmap attach, sockmap policy x4. */
	assert_true(tested >= 20);
}

/* Every option row of every module, reachable from `help CMD`. */
static void test_rows_well_formed(void **state)
{
	const struct cmd_module *const *m;
	size_t n, i, j, k;

	(void)state;
	m = ferryd_modules(&n);
	for (i = 0; i < n; i++)
		for (j = 0; j < m[i]->n; j++) {
			const struct ctl_syntax *s = m[i]->cmds[j].syntax;

			if (!s)
				continue;
			assert_string_equal(s->command, m[i]->cmds[j].name);
			assert_null(m[i]->cmds[j].args); /* from the rows */
			for (k = 0; k < s->n; k++) {
				const struct ctl_opt *o = &s->opts[k];

				assert_true(o->off + o->size <= s->size ||
					    o->kind == CTL_OPT_CUSTOM ||
					    o->kind == CTL_OPT_LITERAL);
				if (!(o->flags & CTL_OPT_POSITIONAL))
					assert_non_null(o->key);
				if (o->kind == CTL_OPT_CUSTOM) {
					assert_non_null(o->parse);
					assert_non_null(o->print);
					assert_non_null(o->example);
				}
				if (o->kind == CTL_OPT_WORD)
					assert_non_null(o->words);
			}
		}
}

static int parse_line(const char *name, const char *line, char *msg, size_t len)
{
	const struct ctl_cmd *c = find_cmd(name);
	unsigned char p[1024];
	char buf[CTL_MAX_LINE], *argv[MAXW];
	struct ferry_err err = {{0}};
	int argc, rc;

	assert_non_null(c);
	assert_non_null(c->syntax);
	snprintf(buf, sizeof(buf), "%s", line);
	argc = ctl_tokenize(buf, argv, MAXW);
	assert_true(argc >= 0);
	rc = ctl_opt_parse(c->syntax, argc, argv, p, &err);
	snprintf(msg, len, "%s", err.msg);
	return rc;
}

static void refused(const char *name, const char *line, const char *want)
{
	char msg[256];
	int rc = parse_line(name, line, msg, sizeof(msg));

	if (rc != -EINVAL && rc != -ERANGE)
		fail_msg("%s %s: rc %d, want -EINVAL/-ERANGE", name, line, rc);
	if (want && !strstr(msg, want))
		fail_msg("%s %s: message '%s' lacks '%s'", name, line, msg,
			 want);
}

static void test_bad_lines_refused(void **state)
{
	(void)state;
	refused("port add", "", "usage: port add NAME dev IFNAME");
	refused("port add", "x", "'dev IFNAME' is required");
	refused("port add", "x dev", "needs a value");
	refused("port add", "x dev e0 bogus 1", "unknown keyword 'bogus'");
	refused("port add", "x dev e0 mode copy mode copy", "given twice");
	refused("port add", "x dev e0 mode turbo", "mode");
	refused("port add", "x dev e0 queues 3-1", "queues");
	refused("port add", "x dev e0 queues 0-99", "queues");
	refused("port add", "x dev e0 cpus 1", "'cpus' belongs after 'spread'");
	refused("port add", "x dev e0 spread via direct",
		"'spread' must be followed by 'cpus'");
	refused("port add", "x dev e0 spread cpus 1 spread cpus 2",
		"given twice");
	refused("steer add", "r port p0 to cpus 1", "usage: steer add");
	refused("steer add", "r port p0 to cpus 1 match", "usage: steer add");
	refused("steer add", "r port p0 match to 1", "must be followed by");
	refused("steer add", "r match to cpus 1", "'port PORT' is required");
	refused("steer add", "r port p0 match",
		"'to cpus CPULIST' is required");
	refused("steer add", "r port p0 match dst 300.1.1.1 to cpus 1", "dst");
	refused("steer add", "r port p0 match dport 0 to cpus 1", "dport");
	refused("steer add", "r port p0 match to cpus 1 qsize 0", "qsize");
	refused("acl add", "r port p0 match", "'action drop|pass' is required");
	refused("acl add", "r port p0 action drop", "usage: acl add");
	refused("acl add", "r port p0 match action reject", "action");
	refused("acl add",
		"r port p0 match src 10.0.0.0/8 dst fd00::/8 action drop",
		"both be IPv4 or IPv6");
	refused("acl add", "r port p0 match dst 10.0.0.0/33 action drop",
		"prefix length");
	refused("acl add", "r port p0 match sport 0 action drop", "sport");
	refused("acl add", "r port p0 match dport 9-8 action drop", "dport");
	refused("gen start", "p0 rate -5", "rate");
	refused("gen start", "p0 size 10", "size");
	refused("gen start", "p0 dst-mac 1:2:3", NULL);
	refused("workers", "64", NULL);
	refused("workers", "0-1 idle sometimes", "idle");
	refused("xconnect add", "p0", "usage: xconnect add PORT_IN PORT_OUT");
	refused("xconnect add", "p0 p1 p2", NULL);
	refused("handover", "later", NULL);
	refused("stats", "worker 64", "worker");
	refused("proxy add", "px listen 127.0.0.1:1", "required");
	refused("sockmap attach", "ports 80", "'cgroup PATH' is required");
	refused("sockmap attach", "cgroup /x verdict sometimes", "verdict");
}

static void usage_is(const char *name, const char *want)
{
	const struct ctl_cmd *c = find_cmd(name);
	char u[1024];

	assert_non_null(c);
	assert_int_equal(ctl_opt_usage(c->syntax, u, sizeof(u)), 0);
	assert_string_equal(u, want);
}

/* The synopses `help` showed before the rows made them. */
static void test_usage_from_rows(void **state)
{
	(void)state;
	usage_is("port add",
		 "NAME dev IFNAME [queues N|A-B] [mode auto|zc|copy] "
		 "[xdp native|generic] [busy-poll on|off|prefer] [default "
		 "xsk|pass] "
		 "[spread cpus CPULIST [via direct|cpumap]] "
		 "[backend native|dpdk] [xdp-restore on|off]");
	usage_is("steer add",
		 "NAME port PORT match [proto tcp|udp|any] [dst PREFIX] "
		 "[dport N|N-M] to cpus CPULIST [qsize N]");
	/* As docs/ferryctl.8 writes it. */
	usage_is("acl add",
		 "NAME port PORT match [proto tcp|udp|icmp|any] [src PREFIX] "
		 "[dst PREFIX] [sport N|N-M] [dport N|N-M] action drop|pass");
	usage_is("gen start",
		 "PORT [rate PPS] [size BYTES] [flows N] "
		 "[dst-mac MAC] [count N] [engine auto|live|xsk] [vlan VID]");
	usage_is("workers", "[CPULIST] [idle busy|poll]");
	usage_is("xconnect add", "PORT_IN PORT_OUT [path auto|xsk|kernel]");
	usage_is("port show", "[NAME]");
	usage_is("handover", "begin|release|commit|abort|pass|offer");
	usage_is("proxy add", "NAME listen ADDR:PORT backend ADDR:PORT "
			      "[limit BYTES] [coalesce BYTES] "
			      "[mode auto|relay|splice] [pipe auto|off]");
	usage_is("sockmap attach",
		 "cgroup PATH [ports LIST] "
		 "[verdict auto|permanent|apply-bytes|per-message] "
		 "[default learn|plain|redirect] [warmup N] [rr-max BYTES] "
		 "[min-write BYTES] [lag-max BYTES]");
	usage_is("sockmap policy add dst",
		 "PORT|ADDR:PORT learn|plain|redirect [cgroup PATH]");
	usage_is("sockmap policy del dst", "PORT|ADDR:PORT [cgroup PATH]");
	/* The form of configs saved before `dst`. */
	usage_is("sockmap policy add",
		 "PORT|ADDR:PORT learn|plain|redirect [cgroup PATH]");
	usage_is("sockmap policy del", "PORT|ADDR:PORT [cgroup PATH]");
	usage_is("stats", "[port NAME] [worker N]");
	/* ferryctl's local table says the same from a string. */
	usage_is("host check", HOST_CHECK_ARGS);
}

static void synopsis_is(const char *name, const char *want)
{
	const struct ctl_cmd *c = find_cmd(name);
	char u[1024];

	assert_non_null(c);
	assert_int_equal(ctl_opt_synopsis(c->syntax, u, sizeof(u)), 0);
	assert_string_equal(u, want);
}

/* The short synopsis of `help`'s list: what is required, then the rest
 * as one [OPTION...]. */
static void test_synopsis_from_rows(void **state)
{
	(void)state;
	synopsis_is("port add", "NAME dev IFNAME [OPTION...]");
	synopsis_is("steer add",
		    "NAME port PORT match to cpus CPULIST [OPTION...]");
	synopsis_is("workers", "[CPULIST] [OPTION...]");
	synopsis_is("port show", "[NAME]");
	synopsis_is("stats", "[OPTION...]");
	synopsis_is("xconnect add", "PORT_IN PORT_OUT [OPTION...]");
}

/* What show config prints for a port: only what differs from the default,
 * the effective queues and XDP mode, the spread group whole. */
static void test_print_defaults_left_out(void **state)
{
	const struct ctl_cmd *c = find_cmd("port add");
	struct line l = {0};
	char out[CTL_MAX_LINE];
	const char *words[] = {"p0",  "dev",	"e0",	  "queues", "1",
			       "xdp", "native", "spread", "cpus",   "0-1"};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		push(&l, words[i]);
	round_trip(c, &l, out, sizeof(out));
	assert_string_equal(out, "port add p0 dev e0 queues 0-0 xdp native "
				 "spread cpus 0-1 via direct");

	c = find_cmd("steer add");
	l.argc = 0;
	push(&l, "r");
	push(&l, "port");
	push(&l, "p0");
	push(&l, "match");
	push(&l, "to");
	push(&l, "cpus");
	push(&l, "3");
	round_trip(c, &l, out, sizeof(out));
	assert_string_equal(out, "steer add r port p0 match to cpus 3 "
				 "qsize 2048");

	/* An ACL: every match field, the prefix's host bits cleared, the
	 * action always said. */
	c = find_cmd("acl add");
	l.argc = 0;
	{
		const char *acl[] = {
			"r",	 "port",     "p0",     "match",
			"proto", "udp",	     "src",    "10.1.2.3/16",
			"dst",	 "10.9.9.9", "sport",  "1024-65535",
			"dport", "53",	     "action", "pass"};

		for (i = 0; i < sizeof(acl) / sizeof(acl[0]); i++)
			push(&l, acl[i]);
	}
	round_trip(c, &l, out, sizeof(out));
	assert_string_equal(out, "acl add r port p0 match proto udp "
				 "src 10.1.0.0/16 dst 10.9.9.9/32 "
				 "sport 1024-65535 dport 53 action pass");
	l.argc = 0;
	push(&l, "r6");
	push(&l, "port");
	push(&l, "p0");
	push(&l, "match");
	push(&l, "dst");
	push(&l, "2001:db8::1/32");
	push(&l, "action");
	push(&l, "drop");
	round_trip(c, &l, out, sizeof(out));
	assert_string_equal(out, "acl add r6 port p0 match dst 2001:db8::/32 "
				 "action drop");
}

/* What completion is told, from the same rows. */
static void test_complete_from_rows(void **state)
{
	const struct ctl_cmd *c = find_cmd("port add");
	enum ctl_opt_values v;
	char *typed[] = {"p0", "dev", "e0", "spread", "cpus", "1", "mode"};
	json_t *a;

	(void)state;
	a = ctl_opt_complete(c->syntax, 2, typed, &v);
	assert_int_equal(v, CTL_VAL_IFACE);
	json_decref(a);
	a = ctl_opt_complete(c->syntax, 7, typed, &v);
	assert_int_equal(json_array_size(a), 3); /* auto zc copy */
	json_decref(a);
	a = ctl_opt_complete(c->syntax, 4, typed, &v);
	assert_string_equal(json_string_value(json_array_get(a, 0)), "cpus");
	json_decref(a);
	/* After "spread cpus 1": via is offered, spread is not again. */
	a = ctl_opt_complete(c->syntax, 6, typed, &v);
	{
		size_t i;
		int via = 0, spread = 0;

		for (i = 0; i < json_array_size(a); i++) {
			const char *w = json_string_value(json_array_get(a, i));

			via += !strcmp(w, "via");
			spread += !strcmp(w, "spread");
		}
		assert_int_equal(via, 1);
		assert_int_equal(spread, 0);
	}
	json_decref(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_well_formed),
		cmocka_unit_test(test_every_command_round_trips),
		cmocka_unit_test(test_bad_lines_refused),
		cmocka_unit_test(test_usage_from_rows),
		cmocka_unit_test(test_synopsis_from_rows),
		cmocka_unit_test(test_print_defaults_left_out),
		cmocka_unit_test(test_complete_from_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
