// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_host.c - ferryd's `host check`: the handler both sides share
 * (ctl/cmd_host.c, which ferryctl also runs when no ferryd answers), with
 * this daemon's worker CPUs as the default.
 */
#include "cmd.h"
#include "cmd_host.h"
#include "ferry.h"

static int cmd_host_check(void *ctx, int argc, char **argv, json_t **data,
			  struct ctl_err *err)
{
	uint64_t cpus = ferry_worker_cpus(CMD_F(ctx));

	return ctl_host_check(argc, argv, cpus,
			      cpus ? "ferryd's workers"
				   : "no workers yet: "
				     "every online CPU",
			      data, err);
}

static const struct ctl_cmd host_cmds[] = {
	{"host check", HOST_CHECK_ARGS, HOST_CHECK_HELP, cmd_host_check},
};

const struct cmd_module cmd_host_module = {
	.name = "host",
	.cmds = host_cmds,
	.n = CMD_N(host_cmds),
};
