// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_host.c - ferryd's `host check`: the handler both sides share
 * (ctl/cmd_host.c, which ferryctl also runs when no ferryd answers), with
 * this daemon's worker CPUs as the default.
 */
#include <stddef.h>
#include <stdint.h>

#include "cmd.h"
#include "cmd_host.h"
#include "ferry.h"

static int cmd_host_check(void *ctx, int argc, char **argv, json_t **data,
			  struct ferry_err *err)
{
	uint64_t cpus = ferry_worker_cpus(CMD_F(ctx));

	return ctl_host_check(argc, argv, cpus,
			      cpus ? "ferryd's workers"
				   : "no workers yet: "
				     "every online CPU",
			      data, err);
}

/*
 * The rows make the synopsis and completion; the handler is the one
 * ferryctl runs too, which parses its own words (HOST_CHECK_ARGS there).
 */
struct host_params {
	const char *ifname;
	uint64_t cpus;
};

static const struct ctl_opt host_check_rows[] = {
	{.kind = CTL_OPT_NAME,
	 .flags = CTL_OPT_POSITIONAL,
	 .off = offsetof(struct host_params, ifname),
	 .size = sizeof(const char *),
	 .metavar = "IFNAME",
	 .values = CTL_VAL_IFACE,
	 .help = "an interface to check"},
	{"cpus", CTL_OPT_CPULIST, 0, .off = offsetof(struct host_params, cpus),
	 .size = sizeof(uint64_t), .metavar = "CPULIST",
	 .help = "the worker CPUs to check against"},
};

static const struct ctl_syntax host_check_syntax = {
	CTL_OPTS(host_check_rows),
	.size = sizeof(struct host_params),
	.command = "host check",
};

static const struct ctl_cmd host_cmds[] = {
	{"host check", NULL, HOST_CHECK_HELP, cmd_host_check,
	 &host_check_syntax},
};

const struct cmd_module cmd_host_module = {
	.name = "host",
	.cmds = host_cmds,
	.n = CMD_N(host_cmds),
};
