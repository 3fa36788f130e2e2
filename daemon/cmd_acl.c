// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_acl.c - `acl add|del|show`: ACL rules in the classifier. They share
 * each port's rule table with the steering rules, so the running
 * configuration prints both kinds from one loop, in table order
 * (cmd_steer.c's steer_config): a reload rebuilds the same order.
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

static struct ferry_rule *match_of(void *params)
{
	return &((struct ferry_acl_params *)params)->match;
}

static const struct ferry_rule *cmatch_of(const void *params)
{
	return &((const struct ferry_acl_params *)params)->match;
}

/*
 * "192.0.2.0/24", "2001:db8::/32"; no length: a host. src and dst must be
 * of one family, since a frame has one.
 */
static int parse_prefix(const char *key, const char *val, struct ferry_rule *m,
			uint32_t addr[4], uint8_t *plen_out,
			struct ferry_err *err)
{
	const char *slash = strchr(val, '/');
	char buf[INET6_ADDRSTRLEN];
	uint64_t plen;
	uint8_t family;
	int rc, max, i;

	if (snprintf(buf, sizeof(buf), "%.*s",
		     (int)(slash ? (size_t)(slash - val) : strlen(val)),
		     val) >= (int)sizeof(buf))
		return ferry_fail(err, -EINVAL, "%s: bad prefix '%s'", key,
				  val);
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, buf, addr) == 1) {
		family = 4;
		max = 32;
	} else if (inet_pton(AF_INET6, buf, addr) == 1) {
		family = 6;
		max = 128;
	} else {
		return ferry_fail(err, -EINVAL,
				  "%s: '%s' is not an IPv4 or IPv6 address",
				  key, buf);
	}
	if (m->family && m->family != family)
		return ferry_fail(err, -EINVAL,
				  "%s: src and dst must both be IPv4 or IPv6",
				  key);
	plen = (uint64_t)max;
	if (slash) {
		rc = ctl_parse_u64(slash + 1, 0, (uint64_t)max, &plen,
				   "prefix length", err);
		if (rc)
			return rc;
	}
	/* Host bits cleared: printed back, the prefix reads as it matches. */
	for (i = 0; i < 4; i++) {
		int bits = (int)plen - 32 * i;

		if (bits <= 0)
			addr[i] = 0;
		else if (bits < 32)
			addr[i] &= htonl(0xffffffffu << (32 - bits));
	}
	m->family = family;
	*plen_out = (uint8_t)plen;
	/* /0 of a family: any address of it (plen 0 matches any). */
	return 0;
}

static int parse_src(const char *val, void *params, struct ferry_err *err)
{
	struct ferry_rule *m = match_of(params);

	return parse_prefix("src", val, m, m->src, &m->src_plen, err);
}

static int parse_dst(const char *val, void *params, struct ferry_err *err)
{
	struct ferry_rule *m = match_of(params);

	return parse_prefix("dst", val, m, m->dst, &m->dst_plen, err);
}

static void print_src(const void *params, char *buf, size_t len)
{
	const struct ferry_rule *m = cmatch_of(params);

	ferry_acl_prefix_text(m->family, m->src, m->src_plen, buf, len);
}

static void print_dst(const void *params, char *buf, size_t len)
{
	const struct ferry_rule *m = cmatch_of(params);

	ferry_acl_prefix_text(m->family, m->dst, m->dst_plen, buf, len);
}

static int parse_range(const char *key, const char *val, uint16_t *lo,
		       uint16_t *hi, struct ferry_err *err)
{
	const char *dash = strchr(val, '-');
	char first[16];
	uint64_t a, b;
	int rc;

	if (!dash) {
		rc = ctl_parse_u64(val, 1, 65535, &a, key, err);
		b = a;
	} else {
		snprintf(first, sizeof(first), "%.*s", (int)(dash - val), val);
		rc = ctl_parse_u64(first, 1, 65535, &a, key, err);
		if (!rc)
			rc = ctl_parse_u64(dash + 1, a, 65535, &b, key, err);
	}
	if (rc)
		return rc;
	*lo = (uint16_t)a;
	*hi = (uint16_t)b;
	return 0;
}

static int parse_sport(const char *val, void *params, struct ferry_err *err)
{
	struct ferry_rule *m = match_of(params);

	return parse_range("sport", val, &m->sport_lo, &m->sport_hi, err);
}

static int parse_dport(const char *val, void *params, struct ferry_err *err)
{
	struct ferry_rule *m = match_of(params);

	return parse_range("dport", val, &m->dport_lo, &m->dport_hi, err);
}

static void print_sport(const void *params, char *buf, size_t len)
{
	const struct ferry_rule *m = cmatch_of(params);

	ferry_acl_range_text(m->sport_lo, m->sport_hi, buf, len);
}

static void print_dport(const void *params, char *buf, size_t len)
{
	const struct ferry_rule *m = cmatch_of(params);

	ferry_acl_range_text(m->dport_lo, m->dport_hi, buf, len);
}

static const char *const proto_words[] = {"tcp", "udp", "icmp", "any", NULL};
static const uint64_t proto_vals[] = {IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP,
				      0};
static const char *const action_words[] = {"drop", "pass", NULL};
static const uint64_t action_vals[] = {FERRY_ACT_DROP, FERRY_ACT_APP};

#define AP(field)                                                              \
	.off = offsetof(struct ferry_acl_params, field),                       \
	.size = sizeof(((struct ferry_acl_params *)0)->field)

enum { G_MATCH = 1 };

static const struct ctl_opt acl_add_rows[] = {
	{.kind = CTL_OPT_NAME,
	 .flags = CTL_OPT_POSITIONAL | CTL_OPT_REQUIRED,
	 AP(name),
	 .metavar = "NAME",
	 .help = "the rule's name (unique among ACL and steering rules)"},
	{"port", CTL_OPT_NAME, CTL_OPT_REQUIRED, AP(port), .metavar = "PORT",
	 .values = CTL_VAL_PORT, .help = "the port whose frames it filters"},
	{"match", CTL_OPT_LITERAL, CTL_OPT_REQUIRED, .group = G_MATCH,
	 .help = "the fields that must match (none: every frame)"},
	{"proto", CTL_OPT_WORD, 0, AP(match.l4_proto), .words = proto_words,
	 .vals = proto_vals, .group = G_MATCH,
	 .help = "the L4 protocol (icmp: ICMP or ICMPv6)"},
	{"src", CTL_OPT_CUSTOM, 0, .metavar = "PREFIX",
	 .example = "2001:db8::/32", .group = G_MATCH, .parse = parse_src,
	 .print = print_src, .help = "source IPv4 or IPv6 prefix"},
	{"dst", CTL_OPT_CUSTOM, 0, .metavar = "PREFIX",
	 .example = "192.0.2.0/24", .group = G_MATCH, .parse = parse_dst,
	 .print = print_dst, .help = "destination IPv4 or IPv6 prefix"},
	{"sport", CTL_OPT_CUSTOM, 0, .metavar = "N|N-M",
	 .example = "1024-65535", .group = G_MATCH, .parse = parse_sport,
	 .print = print_sport, .help = "source port or range (tcp, udp)"},
	{"dport", CTL_OPT_CUSTOM, 0, .metavar = "N|N-M", .example = "22",
	 .group = G_MATCH, .parse = parse_dport, .print = print_dport,
	 .help = "destination port or range (tcp, udp)"},
	/* Pinned: a saved rule says what it does. */
	{"action", CTL_OPT_WORD, CTL_OPT_REQUIRED | CTL_OPT_PIN, AP(action),
	 .words = action_words, .vals = action_vals, .metavar = "drop|pass",
	 .help = "drop the frame, or let it on to the port's app"},
};

static const struct ferry_acl_params acl_add_dflt = {
	.action = FERRY_ACT_DROP,
};

const struct ctl_syntax cmd_acl_add_syntax = {
	CTL_OPTS(acl_add_rows),
	.size = sizeof(struct ferry_acl_params),
	.dflt = &acl_add_dflt,
	.command = "acl add",
};

struct acl_name_params {
	const char *name;
};

static const struct ctl_opt name_row[] = {
	CMD_NAME_ROW(CTL_OPT_REQUIRED, CTL_VAL_NONE),
};

static const struct ctl_opt name_opt_row[] = {
	CMD_NAME_ROW(0, CTL_VAL_NONE),
};

static const struct ctl_syntax acl_del_syntax = {
	CTL_OPTS(name_row), .size = sizeof(struct acl_name_params),
	.command = "acl del"};
static const struct ctl_syntax acl_show_syntax = {
	CTL_OPTS(name_opt_row), .size = sizeof(struct acl_name_params),
	.command = "acl show"};

static int cmd_acl_add(void *ctx, int argc, char **argv, json_t **data,
		       struct ferry_err *err)
{
	struct ferry_acl_params ap;
	int rc = cmd_parse(&cmd_acl_add_syntax, argc, argv, &ap, err);

	if (rc)
		return rc;
	rc = ferry_acl_add(ferry_rules(CMD_F(ctx)), &ap, err);
	if (rc)
		return rc;
	*data = ferry_acl_show(ferry_rules(CMD_F(ctx)), ap.name, err);
	return 0;
}

static int cmd_acl_del(void *ctx, int argc, char **argv, json_t **data,
		       struct ferry_err *err)
{
	struct acl_name_params p;
	int rc = cmd_parse(&acl_del_syntax, argc, argv, &p, err);

	(void)data;
	return rc ? rc : ferry_acl_del(ferry_rules(CMD_F(ctx)), p.name, err);
}

static int cmd_acl_show(void *ctx, int argc, char **argv, json_t **data,
			struct ferry_err *err)
{
	struct acl_name_params p;
	int rc = cmd_parse(&acl_show_syntax, argc, argv, &p, err);

	if (rc)
		return rc;
	*data = ferry_acl_show(ferry_rules(CMD_F(ctx)), p.name, err);
	return *data ? 0 : -ENOENT;
}

static const struct ctl_cmd acl_cmds[] = {
	{"acl add", NULL,
	 "drop PORT's frames that match, or let them on to its app, in XDP "
	 "before any worker sees them (one table with the steering rules, "
	 "checked in the order added, first match wins)",
	 cmd_acl_add, &cmd_acl_add_syntax},
	{"acl del", NULL,
	 "delete an ACL rule; its frames take the next matching rule or the "
	 "port's default path",
	 cmd_acl_del, &acl_del_syntax},
	{"acl show", NULL,
	 "every port's rule table in order, ACL and steering rules, with the "
	 "frames and bytes each matched first",
	 cmd_acl_show, &acl_show_syntax},
};

/* No .config: steer_config prints both kinds in table order. */
const struct cmd_module cmd_acl_module = {
	.name = "acl",
	.cmds = acl_cmds,
	.n = CMD_N(acl_cmds),
};
