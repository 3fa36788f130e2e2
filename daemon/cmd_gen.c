// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_gen.c - `gen start|stop`: the traffic generator on a port.
 */
#include <errno.h>
#include <stddef.h>

#include "cmd.h"
#include "ferry.h"

struct gen_cmd_params {
	const char *port;
	struct ferry_gen_params gp;
};

#define GP(field)                                                              \
	.off = offsetof(struct gen_cmd_params, gp.field),                      \
	.size = sizeof(((struct ferry_gen_params *)0)->field)

static const char *const engine_words[] = {"auto", "live", "xsk", NULL};
static const uint64_t engine_vals[] = {FERRY_GEN_AUTO, FERRY_GEN_LIVE,
				       FERRY_GEN_XSK};

static const struct ctl_opt gen_start_rows[] = {
	{.kind = CTL_OPT_NAME,
	 .flags = CTL_OPT_POSITIONAL | CTL_OPT_REQUIRED,
	 .off = offsetof(struct gen_cmd_params, port),
	 .size = sizeof(const char *),
	 .metavar = "PORT",
	 .values = CTL_VAL_PORT,
	 .help = "the port frames leave by"},
	{"rate", CTL_OPT_U64, 0, GP(rate), .max = 100000000, .metavar = "PPS",
	 .help = "frames per second (0: as fast as possible)"},
	{"size", CTL_OPT_U64, 0, GP(size), .min = FERRY_GEN_MIN_SIZE,
	 .max = FERRY_GEN_MAX_SIZE, .metavar = "BYTES",
	 .help = "frame size without FCS"},
	{"flows", CTL_OPT_U64, 0, GP(flows), .min = 1,
	 .max = 65535 - FERRY_GEN_SPORT_BASE, .metavar = "N",
	 .help = "distinct UDP source ports"},
	{"dst-mac", CTL_OPT_MAC, 0, GP(dst_mac), .metavar = "MAC",
	 .help = "destination MAC (default: broadcast)"},
	{"count", CTL_OPT_U64, 0, GP(count), .max = UINT64_MAX / 2,
	 .metavar = "N", .help = "frames in all (0: until stopped)"},
	{"engine", CTL_OPT_WORD, 0, GP(engine), .words = engine_words,
	 .vals = engine_vals,
	 .help = "BPF live frames, or the port's AF_XDP TX ring"},
	{"vlan", CTL_OPT_U64, 0, GP(vid), .min = 1, .max = 4094,
	 .metavar = "VID", .help = "802.1Q tag of the frames (default: none)"},
};

static const struct gen_cmd_params gen_start_dflt = {
	.gp =
		{
			.size = 64,
			.flows = 1,
			.dst_mac = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
			.engine = FERRY_GEN_AUTO,
		},
};

static const struct ctl_syntax gen_start_syntax = {
	CTL_OPTS(gen_start_rows),
	.size = sizeof(struct gen_cmd_params),
	.dflt = &gen_start_dflt,
	.command = "gen start",
};

static const struct ctl_opt port_row[] = {
	{.kind = CTL_OPT_NAME,
	 .flags = CTL_OPT_POSITIONAL | CTL_OPT_REQUIRED,
	 .off = offsetof(struct gen_cmd_params, port),
	 .size = sizeof(const char *),
	 .metavar = "PORT",
	 .values = CTL_VAL_PORT},
};

static const struct ctl_syntax gen_stop_syntax = {
	CTL_OPTS(port_row), .size = sizeof(struct gen_cmd_params),
	.command = "gen stop"};

static int cmd_gen_start(void *ctx, int argc, char **argv, json_t **data,
			 struct ferry_err *err)
{
	struct gen_cmd_params p;
	int rc = cmd_parse(&gen_start_syntax, argc, argv, &p, err);

	return rc ? rc : ferry_gen_begin(CMD_F(ctx), p.port, &p.gp, err);
}

static int cmd_gen_stop(void *ctx, int argc, char **argv, json_t **data,
			struct ferry_err *err)
{
	struct gen_cmd_params p;
	int rc = cmd_parse(&gen_stop_syntax, argc, argv, &p, err);

	return rc ? rc : ferry_gen_end(CMD_F(ctx), p.port, err);
}

/* Generators are not part of the running configuration: no config. */
static const struct ctl_cmd gen_cmds[] = {
	{"gen start", NULL,
	 "generate UDP frames out of PORT (rate 0: as fast as possible; "
	 "engine: BPF live frames, or the port's AF_XDP TX ring)",
	 cmd_gen_start, &gen_start_syntax},
	{"gen stop", NULL, "stop PORT's generator", cmd_gen_stop,
	 &gen_stop_syntax},
};

const struct cmd_module cmd_gen_module = {
	.name = "gen",
	.cmds = gen_cmds,
	.n = CMD_N(gen_cmds),
};
