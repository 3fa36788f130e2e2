// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_steer.c - `steer add|del|show`: CPU steering rules. The fixed words
 * "match" and "to" are literal rows: "match" opens the match fields, "to"
 * must be followed by "cpus".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "acl.h"
#include "cmd.h"
#include "ferry.h"
#include "steer.h"

/* "192.0.2.0/24", "2001:db8::/32"; no length: a host. */
static int parse_dst(const char *val, void *params, struct ferry_err *err)
{
	struct ferry_rule *m = &((struct ferry_steer_params *)params)->match;
	const char *slash = strchr(val, '/');
	char addr[INET6_ADDRSTRLEN];
	uint64_t plen;
	int rc, max;

	if (snprintf(addr, sizeof(addr), "%.*s",
		     (int)(slash ? (size_t)(slash - val) : strlen(val)),
		     val) >= (int)sizeof(addr))
		return ferry_fail(err, -EINVAL, "dst: bad prefix '%s'", val);
	memset(m->dst, 0, sizeof(m->dst));
	if (inet_pton(AF_INET, addr, m->dst) == 1) {
		m->family = 4;
		max = 32;
	} else if (inet_pton(AF_INET6, addr, m->dst) == 1) {
		m->family = 6;
		max = 128;
	} else {
		return ferry_fail(err, -EINVAL,
				  "dst: '%s' is not an IPv4 or IPv6 address",
				  addr);
	}
	plen = (uint64_t)max;
	if (slash) {
		rc = ctl_parse_u64(slash + 1, 1, (uint64_t)max, &plen,
				   "dst prefix length", err);
		if (rc)
			return rc;
	}
	m->dst_plen = (uint8_t)plen;
	return 0;
}

static void print_dst(const void *params, char *buf, size_t len)
{
	ferry_steer_dst_text(
		&((const struct ferry_steer_params *)params)->match, buf, len);
}

static int parse_dport(const char *val, void *params, struct ferry_err *err)
{
	struct ferry_rule *m = &((struct ferry_steer_params *)params)->match;
	const char *dash = strchr(val, '-');
	char first[16];
	uint64_t a, b;
	int rc;

	if (!dash) {
		rc = ctl_parse_u64(val, 1, 65535, &a, "dport", err);
		b = a;
	} else {
		snprintf(first, sizeof(first), "%.*s", (int)(dash - val), val);
		rc = ctl_parse_u64(first, 1, 65535, &a, "dport", err);
		if (!rc)
			rc = ctl_parse_u64(dash + 1, a, 65535, &b, "dport",
					   err);
	}
	if (rc)
		return rc;
	m->dport_lo = (uint16_t)a;
	m->dport_hi = (uint16_t)b;
	return 0;
}

static void print_dport(const void *params, char *buf, size_t len)
{
	const struct ferry_rule *m =
		&((const struct ferry_steer_params *)params)->match;

	if (m->dport_lo == m->dport_hi && m->dport_lo)
		snprintf(buf, len, "%u", m->dport_lo);
	else if (m->dport_lo || m->dport_hi)
		snprintf(buf, len, "%u-%u", m->dport_lo, m->dport_hi);
}

static const char *const proto_words[] = {"tcp", "udp", "any", NULL};
static const uint64_t proto_vals[] = {IPPROTO_TCP, IPPROTO_UDP, 0};

#define SP(field)                                                              \
	.off = offsetof(struct ferry_steer_params, field),                     \
	.size = sizeof(((struct ferry_steer_params *)0)->field)

enum { G_MATCH = 1, G_TO };

static const struct ctl_opt steer_add_rows[] = {
	{.kind = CTL_OPT_NAME,
	 .flags = CTL_OPT_POSITIONAL | CTL_OPT_REQUIRED,
	 SP(name),
	 .metavar = "NAME",
	 .help = "the rule's name"},
	{"port", CTL_OPT_NAME, CTL_OPT_REQUIRED, SP(port), .metavar = "PORT",
	 .values = CTL_VAL_PORT, .help = "the port whose frames it steers"},
	{"match", CTL_OPT_LITERAL, CTL_OPT_REQUIRED, .group = G_MATCH,
	 .help = "the fields that must match (none: every frame)"},
	{"proto", CTL_OPT_WORD, 0, SP(match.l4_proto), .words = proto_words,
	 .vals = proto_vals, .group = G_MATCH, .help = "the L4 protocol"},
	{"dst", CTL_OPT_CUSTOM, 0, .metavar = "PREFIX",
	 .example = "2001:db8::/32", .group = G_MATCH, .parse = parse_dst,
	 .print = print_dst, .help = "destination IPv4 or IPv6 prefix"},
	{"dport", CTL_OPT_CUSTOM, 0, .metavar = "N|N-M", .example = "9000-9010",
	 .group = G_MATCH, .parse = parse_dport, .print = print_dport,
	 .help = "destination port or range"},
	{"to", CTL_OPT_LITERAL, CTL_OPT_REQUIRED, .group = G_TO,
	 .next = "cpus"},
	{"cpus", CTL_OPT_CPULIST, CTL_OPT_REQUIRED, SP(cpus), .group = G_TO,
	 .metavar = "CPULIST", .help = "the CPUs the flows hash over"},
	/* Pinned: a saved rule keeps its queue size if the default moves. */
	{"qsize", CTL_OPT_U64, CTL_OPT_PIN, SP(qsize),
	 .min = FERRY_CPUMAP_QSIZE_MIN, .max = FERRY_CPUMAP_QSIZE_MAX,
	 .metavar = "N", .help = "CPUMAP queue size"},
};

static const struct ferry_steer_params steer_add_dflt = {
	.qsize = FERRY_CPUMAP_QSIZE_DEFAULT,
};

static const struct ctl_syntax steer_add_syntax = {
	CTL_OPTS(steer_add_rows),
	.size = sizeof(struct ferry_steer_params),
	.dflt = &steer_add_dflt,
	.command = "steer add",
};

struct steer_name_params {
	const char *name;
};

static const struct ctl_opt name_row[] = {
	CMD_NAME_ROW(CTL_OPT_REQUIRED, CTL_VAL_NONE),
};

static const struct ctl_opt name_opt_row[] = {
	CMD_NAME_ROW(0, CTL_VAL_NONE),
};

static const struct ctl_syntax steer_del_syntax = {
	CTL_OPTS(name_row), .size = sizeof(struct steer_name_params),
	.command = "steer del"};
static const struct ctl_syntax steer_show_syntax = {
	CTL_OPTS(name_opt_row), .size = sizeof(struct steer_name_params),
	.command = "steer show"};

static int cmd_steer_add(void *ctx, int argc, char **argv, json_t **data,
			 struct ferry_err *err)
{
	struct ferry_steer_params sp;
	int rc = cmd_parse(&steer_add_syntax, argc, argv, &sp, err);

	if (rc)
		return rc;
	rc = ferry_steer_add(ferry_rules(CMD_F(ctx)), &sp, err);
	if (rc)
		return rc;
	*data = ferry_steer_show(ferry_rules(CMD_F(ctx)), sp.name, err);
	return 0;
}

static int cmd_steer_del(void *ctx, int argc, char **argv, json_t **data,
			 struct ferry_err *err)
{
	struct steer_name_params p;
	int rc = cmd_parse(&steer_del_syntax, argc, argv, &p, err);

	return rc ? rc : ferry_steer_del(ferry_rules(CMD_F(ctx)), p.name, err);
}

static int cmd_steer_show(void *ctx, int argc, char **argv, json_t **data,
			  struct ferry_err *err)
{
	struct steer_name_params p;
	int rc = cmd_parse(&steer_show_syntax, argc, argv, &p, err);

	if (rc)
		return rc;
	*data = ferry_steer_show(ferry_rules(CMD_F(ctx)), p.name, err);
	return *data ? 0 : -ENOENT;
}

/*
 * Per port, in table order, so a reload keeps the order: steering and ACL
 * rules share the table, so both kinds are printed here, in one loop.
 */
static void steer_config(struct ferryd_ctx *ctx, struct ferry_strbuf *b)
{
	struct ferry_steer_params sp;
	struct ferry_acl_params ap;
	int i, j, rc;

	for (i = 0; i < ferry_port_count(ctx->f); i++)
		for (j = 0; (rc = ferry_steer_get(ferry_rules(ctx->f), i, j,
						  &sp)) >= 0;
		     j++) {
			if (rc == 0)
				cmd_buf_line(b, "steer add", &steer_add_syntax,
					     &sp);
			else if (ferry_acl_get(ferry_rules(ctx->f), i, j,
					       &ap) == 0)
				cmd_buf_line(b, "acl add", &cmd_acl_add_syntax,
					     &ap);
		}
}

static const struct ctl_cmd steer_cmds[] = {
	{"steer add", NULL,
	 "steer PORT's frames that match to the kernel stack on one of "
	 "CPULIST, chosen by a symmetric flow hash (rules are per port, since "
	 "each port has its own classifier; checked in the order added, first "
	 "match wins; qsize: CPUMAP queue, 1-16384, default 2048)",
	 cmd_steer_add, &steer_add_syntax},
	{"steer del", NULL,
	 "delete a steering rule; its frames take the port's default path",
	 cmd_steer_del, &steer_del_syntax},
	{"steer show", NULL,
	 "steering rules with per-CPU steered/processed counters",
	 cmd_steer_show, &steer_show_syntax},
};

const struct cmd_module cmd_steer_module = {
	.name = "steer",
	.cmds = steer_cmds,
	.n = CMD_N(steer_cmds),
	.config = steer_config,
};
