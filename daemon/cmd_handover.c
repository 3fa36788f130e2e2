// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_handover.c - hot restart, the old daemon's side: `ferryd --takeover`
 * drives `handover begin|release|commit|abort` (takeover.h); an operator
 * has no reason to type them.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "cmd.h"
#include "ferry.h"
#include "proxy.h"
#include "server.h"
#include "sockmap.h"
#include "takeover.h"

enum { BEGIN, RELEASE, COMMIT, ABORT };

static const char *const step_words[] = {"begin", "release", "commit", "abort",
					 NULL};

struct handover_params {
	uint32_t step;
};

static const struct ctl_opt handover_rows[] = {
	{.kind = CTL_OPT_WORD,
	 .flags = CTL_OPT_POSITIONAL | CTL_OPT_REQUIRED,
	 .size = sizeof(uint32_t),
	 .words = step_words,
	 .metavar = NULL,
	 .help = "the step"},
};

static const struct ctl_syntax handover_syntax = {
	CTL_OPTS(handover_rows),
	.size = sizeof(struct handover_params),
	.command = "handover",
};

/*
 * A hot restart hands over ports only: a proxy's listening socket and its
 * flows, and a sockmap attachment, belong to this process. Refused before
 * anything changes, so the old ferryd carries on.
 */
static int refuse_sockets(struct ferryd_ctx *ctx, struct ferry_err *err)
{
	struct ferry_sockmap_params smp;
	int proxies = ctx->proxy ? ferry_proxy_count(ctx->proxy) : 0;
	int attached = ctx->sm && ferry_sockmap_get(ctx->sm, &smp) == 0;

	if (proxies || attached)
		return ferry_fail(err, -EBUSY,
				  "this ferryd runs %s; a takeover hands over "
				  "ports only: delete them first",
				  proxies ? "splice proxies"
					  : "a sockmap attachment");
	return 0;
}

/* {"pid","config"}: the successor replays the configuration. */
static int begin(struct ferryd_ctx *ctx, json_t **data, struct ferry_err *err)
{
	char *text;
	int rc = refuse_sockets(ctx, err);

	if (!rc)
		rc = ferry_handover_begin(ctx->f, data, err);
	if (rc)
		return rc;
	text = ferryd_config_text(ctx, NULL);
	if (!text || json_object_set_new(*data, "config", json_string(text))) {
		free(text);
		json_decref(*data);
		*data = NULL;
		return -ENOMEM;
	}
	free(text);
	return 0;
}

static int cmd_handover(void *ctx, int argc, char **argv, json_t **data,
			struct ferry_err *err)
{
	struct handover_params p;
	uint64_t dropped = 0;
	int rc = cmd_parse(&handover_syntax, argc, argv, &p, err);

	if (rc)
		return rc;
	switch (p.step) {
	case BEGIN:
		return begin(CMD_CTX(ctx), data, err);
	case RELEASE:
		rc = ferry_handover_release(CMD_F(ctx), &dropped, err);
		if (!rc)
			*data = json_pack("{s:I}", "dropped",
					  (json_int_t)dropped);
		return rc;
	case ABORT:
		rc = ferry_handover_resume(CMD_F(ctx), err);
		break;
	default:
		rc = ferry_handover_commit(CMD_F(ctx), err);
		if (!rc) {
			CMD_CTX(ctx)->stop = 1;
			if (CMD_CTX(ctx)->srv)
				ctl_server_stop(CMD_CTX(ctx)->srv);
		}
		break;
	}
	if (!rc)
		*data = json_string(step_words[p.step]);
	return rc;
}

static const struct ctl_cmd handover_cmds[] = {
	{"handover", NULL,
	 "hot restart, old side (driven by 'ferryd --takeover')", cmd_handover,
	 &handover_syntax},
};

const struct cmd_module cmd_handover_module = {
	.name = "handover",
	.cmds = handover_cmds,
	.n = CMD_N(handover_cmds),
};
