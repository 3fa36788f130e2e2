// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_workers.c - `workers` (set, or with no argument show, the workers)
 * and `worker show`. New workers re-plan the ports from the running
 * configuration.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "ferry.h"

struct workers_params {
	uint64_t cpus;
	uint32_t idle; /* enum ferry_idle */
};

static const char *const idle_words[] = {"busy", "poll", NULL};
static const uint64_t idle_vals[] = {FERRY_IDLE_BUSY, FERRY_IDLE_POLL};

static const struct ctl_opt workers_rows[] = {
	{.kind = CTL_OPT_CPULIST,
	 .flags = CTL_OPT_POSITIONAL,
	 .off = offsetof(struct workers_params, cpus),
	 .size = sizeof(uint64_t),
	 .metavar = "CPULIST",
	 .help = "one worker per CPU (none given: show the workers)"},
	{"idle", CTL_OPT_WORD, 0, .off = offsetof(struct workers_params, idle),
	 .size = sizeof(uint32_t), .words = idle_words, .vals = idle_vals,
	 .help = "spin, or sleep in poll() when there is nothing to do"},
};

static const struct workers_params workers_dflt = {.idle = FERRY_IDLE_BUSY};

static const struct ctl_syntax workers_syntax = {
	CTL_OPTS(workers_rows),
	.size = sizeof(struct workers_params),
	.dflt = &workers_dflt,
	.command = "workers",
};

/*
 * Re-applies a configuration without its `workers` line: how ports come
 * back after the workers under them changed.
 */
static int replay_config(struct ferryd_ctx *ctx, char *text,
			 struct ferry_err *err)
{
	char *line, *save = NULL;

	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		struct ferry_err why;
		int rc;

		if (line[0] == '#')
			continue;
		rc = ctl_execute_err(ctx->cmds, ctx->n_cmds, ctx, line, &why);
		if (rc) {
			ferry_fail(err, rc,
				   "workers changed, but '%s' failed: %s", line,
				   why.msg);
			return rc;
		}
	}
	return 0;
}

static int cmd_workers(void *ctx, int argc, char **argv, json_t **data,
		       struct ferry_err *err)
{
	struct workers_params p;
	char *saved = NULL;
	int rc;

	/* No argument: what `worker show` says, not a usage error. */
	if (!argc) {
		*data = ferry_worker_show(CMD_F(ctx));
		return *data ? 0 : -ENOMEM;
	}
	rc = cmd_parse(&workers_syntax, argc, argv, &p, err);
	if (!rc && !p.cpus)
		return ferry_fail(err, -EINVAL,
				  "workers: a CPULIST comes before idle");
	if (!rc)
		rc = ferry_cpus_check(p.cpus, err);
	if (rc)
		return rc;
	/*
	 * Sockets belong to their worker's UMEM, so new workers mean new
	 * sockets: the ports are drained and deleted, then added again from
	 * the running configuration. Generators are not part of it and stop.
	 */
	if (ferry_port_count(CMD_F(ctx))) {
		saved = ferryd_config_text(CMD_CTX(ctx), &cmd_workers_module);
		if (!saved)
			return -ENOMEM;
		rc = ferry_ports_del_all(CMD_F(ctx));
		if (rc) {
			free(saved);
			return ferry_fail(err, rc,
					  "could not delete the ports "
					  "to re-plan them (see the "
					  "log)");
		}
	}
	rc = ferry_workers_set(CMD_F(ctx), p.cpus, (enum ferry_idle)p.idle,
			       err);
	/* Even when the new workers failed, bring the ports back (on a
	 * default worker) rather than leave the host without them. */
	if (saved) {
		struct ferry_err rerr = {{0}};
		int rrc = replay_config(CMD_CTX(ctx), saved, &rerr);

		if (!rc && rrc) {
			rc = rrc;
			*err = rerr;
		}
	}
	free(saved);
	if (rc)
		return rc;
	*data = ferry_worker_show(CMD_F(ctx));
	return 0;
}

static int cmd_worker_show(void *ctx, int argc, char **argv, json_t **data,
			   struct ferry_err *err)
{
	if (argc)
		return ferry_fail(err, -EINVAL, "usage: worker show");
	*data = ferry_worker_show(CMD_F(ctx));
	return 0;
}

static void workers_config(struct ferryd_ctx *ctx, struct ferry_strbuf *b)
{
	struct workers_params p;
	enum ferry_idle idle;

	if (ferry_workers_get(ctx->f, &p.cpus, &idle) <= 0)
		return;
	p.idle = (uint32_t)idle;
	cmd_buf_line(b, "workers", &workers_syntax, &p);
}

static const struct ctl_cmd workers_cmds[] = {
	{"workers", NULL,
	 "one pinned polling thread per CPU; existing ports are drained and "
	 "re-added on the new workers (generators stop); no argument: show "
	 "the workers",
	 cmd_workers, &workers_syntax},
	{"worker show", "", "workers, their CPUs, sockets and UMEM",
	 cmd_worker_show},
};

const struct cmd_module cmd_workers_module = {
	.name = "workers",
	.cmds = workers_cmds,
	.n = CMD_N(workers_cmds),
	.config = workers_config,
};
