// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_stats.c - `stats`, `stats reset`, `metrics`: counters, as JSON for
 * ferryctl and as Prometheus text.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "cmd.h"
#include "ferry.h"

struct stats_params {
	const char *port;
	uint64_t worker;
	bool worker_given;
};

static const struct ctl_opt stats_rows[] = {
	{"port", CTL_OPT_NAME, 0, .off = offsetof(struct stats_params, port),
	 .size = sizeof(const char *), .metavar = "NAME",
	 .values = CTL_VAL_PORT, .help = "one port's counters"},
	{"worker", CTL_OPT_U64, CTL_OPT_GIVEN,
	 .off = offsetof(struct stats_params, worker), .size = sizeof(uint64_t),
	 .max = 63, .metavar = "N", .values = CTL_VAL_WORKER,
	 .given_off = offsetof(struct stats_params, worker_given),
	 .help = "one worker's counters"},
};

static const struct ctl_syntax stats_syntax = {
	CTL_OPTS(stats_rows),
	.size = sizeof(struct stats_params),
	.command = "stats",
};

static int cmd_stats(void *ctx, int argc, char **argv, json_t **data,
		     struct ferry_err *err)
{
	struct stats_params p;
	int rc = cmd_parse(&stats_syntax, argc, argv, &p, err);

	if (rc)
		return rc;
	if (p.port && p.worker_given)
		return ferry_fail(err, -EINVAL,
				  "stats: 'port' or 'worker', not both");
	*data = ferry_stats(CMD_F(ctx), p.port,
			    p.worker_given ? (int)p.worker : -1, err);
	return *data ? 0 : -ENOENT;
}

static int cmd_stats_reset(void *ctx, int argc, char **argv, json_t **data,
			   struct ferry_err *err)
{
	if (argc)
		return ferry_fail(err, -EINVAL, "usage: stats reset");
	ferry_stats_reset(CMD_F(ctx));
	return 0;
}

static int cmd_metrics(void *ctx, int argc, char **argv, json_t **data,
		       struct ferry_err *err)
{
	char *text;

	if (argc)
		return ferry_fail(err, -EINVAL, "usage: metrics");
	text = ferry_metrics(CMD_F(ctx));
	if (!text)
		return -ENOMEM;
	*data = json_string(text);
	free(text);
	return 0;
}

static const struct ctl_cmd stats_cmds[] = {
	{"stats", NULL, "counters and rates per port, queue and worker",
	 cmd_stats, &stats_syntax},
	{"stats reset", "", "start counting from zero (kernel counters kept)",
	 cmd_stats_reset},
	{"metrics", "", "counters in Prometheus text format", cmd_metrics},
};

const struct cmd_module cmd_stats_module = {
	.name = "stats",
	.cmds = stats_cmds,
	.n = CMD_N(stats_cmds),
};
