// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_port.c - `port add|del|show`: the rows of port add parse its line,
 * print it back for the running configuration and make its usage.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "ferry.h"
#include "ferry_abi.h"

/* "N": the first N queues; "A-B": queues A to B. */
static int parse_queues(const char *val, void *params, struct ferry_err *err)
{
	struct ferry_port_params *pp = params;
	const char *dash = strchr(val, '-');
	uint64_t a, b = 0;
	char first[32];
	int rc;

	if (!dash) {
		rc = ctl_parse_u64(val, 1, 64, &a, "queues", err);
		pp->q_first = 0;
		pp->n_queues = (uint32_t)a;
	} else {
		snprintf(first, sizeof(first), "%.*s", (int)(dash - val), val);
		rc = ctl_parse_u64(first, 0, 63, &a, "queues", err);
		if (!rc)
			rc = ctl_parse_u64(dash + 1, a, 63, &b, "queues", err);
		pp->q_first = (uint32_t)a;
		pp->n_queues = (uint32_t)(b - a + 1);
	}
	pp->queues_given = true;
	return rc;
}

static void print_queues(const void *params, char *buf, size_t len)
{
	const struct ferry_port_params *pp = params;

	if (pp->queues_given && pp->n_queues)
		snprintf(buf, len, "%u-%u", pp->q_first,
			 pp->q_first + pp->n_queues - 1);
}

static const char *const mode_words[] = {"auto", "zc", "copy", NULL};
static const uint64_t mode_vals[] = {FERRY_XSK_AUTO, FERRY_XSK_ZC,
				     FERRY_XSK_COPY};
static const char *const xdp_words[] = {"native", "generic", NULL};
static const char *const onoff_words[] = {"on", "off", NULL};
static const uint64_t onoff_vals[] = {1, 0};
static const char *const busy_words[] = {"on", "off", "prefer", NULL};
static const uint64_t busy_vals[] = {FERRY_BUSY_POLL_ON, FERRY_BUSY_POLL_OFF,
				     FERRY_BUSY_POLL_PREFER};
static const char *const default_words[] = {"xsk", "pass", NULL};
static const char *const backend_words[] = {"native", "dpdk", NULL};
static const char *const via_words[] = {"direct", "cpumap", NULL};
static const uint64_t via_vals[] = {FERRY_SPREAD_DIRECT, FERRY_SPREAD_CPUMAP};

#define PP(field)                                                              \
	.off = offsetof(struct ferry_port_params, field),                      \
	.size = sizeof(((struct ferry_port_params *)0)->field)

enum { G_SPREAD = 1 };

static const struct ctl_opt port_add_rows[] = {
	{.kind = CTL_OPT_NAME,
	 .flags = CTL_OPT_POSITIONAL | CTL_OPT_REQUIRED,
	 PP(name),
	 .metavar = "NAME",
	 .help = "the port's name"},
	{"dev", CTL_OPT_NAME, CTL_OPT_REQUIRED, PP(ifname), .metavar = "IFNAME",
	 .help = "the interface", .values = CTL_VAL_IFACE},
	{"queues", CTL_OPT_CUSTOM, 0, .metavar = "N|A-B", .example = "2-3",
	 .help = "the first N queues, or queues A to B (default: all)",
	 .parse = parse_queues, .print = print_queues},
	{"mode", CTL_OPT_WORD, 0, PP(mode), .words = mode_words,
	 .vals = mode_vals, .help = "AF_XDP zero-copy, copy, or what works"},
	{"xdp", CTL_OPT_WORD, CTL_OPT_GIVEN, PP(xdp_generic),
	 .words = xdp_words,
	 .given_off = offsetof(struct ferry_port_params, xdp_given),
	 .help = "XDP mode (default: the driver profile's)"},
	{"busy-poll", CTL_OPT_WORD, 0, PP(busy_poll), .words = busy_words,
	 .vals = busy_vals,
	 .help = "busy polling on the sockets (prefer: whatever the driver)"},
	{"default", CTL_OPT_WORD, 0, PP(default_pass), .words = default_words,
	 .help = "where frames no rule matches go"},
	{"spread", CTL_OPT_LITERAL, 0, .group = G_SPREAD, .next = "cpus",
	 .help = "software RSS over workers"},
	{"cpus", CTL_OPT_CPULIST, CTL_OPT_REQUIRED, PP(spread_cpus), .min = 1,
	 .group = G_SPREAD, .metavar = "CPULIST",
	 .help = "the workers' CPUs to spread over"},
	{"via", CTL_OPT_WORD, CTL_OPT_PIN, PP(spread_via), .words = via_words,
	 .vals = via_vals, .group = G_SPREAD,
	 .help = "hand frames over directly or through a CPUMAP"},
	{"backend", CTL_OPT_WORD, 0, PP(dpdk), .words = backend_words,
	 .help = "AF_XDP sockets, or DPDK's af_xdp PMD"},
	{"xdp-restore", CTL_OPT_WORD, 0, PP(xdp_restore), .words = onoff_words,
	 .vals = onoff_vals,
	 .help = "put ferry's program back when another tool takes it"},
};

static const struct ferry_port_params port_add_dflt = {
	.mode = FERRY_XSK_AUTO,
	.spread_via = FERRY_SPREAD_DIRECT,
};

static const struct ctl_syntax port_add_syntax = {
	CTL_OPTS(port_add_rows),
	.size = sizeof(struct ferry_port_params),
	.dflt = &port_add_dflt,
	.command = "port add",
};

struct port_name_params {
	const char *name;
};

static const struct ctl_opt port_name_row[] = {
	CMD_NAME_ROW(CTL_OPT_REQUIRED, CTL_VAL_PORT),
};

static const struct ctl_opt port_name_opt_row[] = {
	CMD_NAME_ROW(0, CTL_VAL_PORT),
};

static const struct ctl_syntax port_del_syntax = {
	CTL_OPTS(port_name_row),
	.size = sizeof(struct port_name_params),
	.command = "port del",
};

static const struct ctl_syntax port_show_syntax = {
	CTL_OPTS(port_name_opt_row),
	.size = sizeof(struct port_name_params),
	.command = "port show",
};

static int cmd_port_add(void *ctx, int argc, char **argv, json_t **data,
			struct ferry_err *err)
{
	struct ferry_port_params pp;
	int rc = cmd_parse(&port_add_syntax, argc, argv, &pp, err);

	if (rc)
		return rc;
	rc = ferry_port_add(CMD_F(ctx), &pp, err);
	if (rc)
		return rc;
	*data = ferry_port_show(CMD_F(ctx), pp.name, err);
	return 0;
}

static int cmd_port_del(void *ctx, int argc, char **argv, json_t **data,
			struct ferry_err *err)
{
	struct port_name_params p;
	int rc = cmd_parse(&port_del_syntax, argc, argv, &p, err);

	return rc ? rc : ferry_port_del(CMD_F(ctx), p.name, err);
}

static int cmd_port_show(void *ctx, int argc, char **argv, json_t **data,
			 struct ferry_err *err)
{
	struct port_name_params p;
	int rc = cmd_parse(&port_show_syntax, argc, argv, &p, err);

	if (rc)
		return rc;
	*data = ferry_port_show(CMD_F(ctx), p.name, err);
	return *data ? 0 : -ENOENT;
}

static void port_config(struct ferryd_ctx *ctx, struct ferry_strbuf *b)
{
	struct ferry_port_params pp;
	int i;

	for (i = 0; ferry_port_get(ctx->f, i, &pp) == 0; i++)
		cmd_buf_line(b, "port add", &port_add_syntax, &pp);
}

static const struct ctl_cmd port_cmds[] = {
	{"port add", NULL,
	 "attach ferry to an interface: XDP classifier and one AF_XDP socket "
	 "per queue (queues N: the first N; default: where frames no rule "
	 "matches go, the queue's socket or the kernel; spread: software "
	 "RSS, one queue's frames over the workers on CPULIST by flow hash, "
	 "copy mode, drop and reflect only; backend dpdk: the queues are a "
	 "DPDK af_xdp PMD ethdev; xdp-restore: put ferry's program back when "
	 "another tool replaces or removes it)",
	 cmd_port_add, &port_add_syntax},
	{"port del", NULL, "drain a port, detach and close it", cmd_port_del,
	 &port_del_syntax},
	{"port show", NULL, "ports: queues, mode obtained, XDP, UMEM, app",
	 cmd_port_show, &port_show_syntax},
};

const struct cmd_module cmd_port_module = {
	.name = "port",
	.cmds = port_cmds,
	.n = CMD_N(port_cmds),
	.config = port_config,
};
