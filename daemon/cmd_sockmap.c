// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_sockmap.c - `sockmap attach|detach|show`: arguments are parsed and
 * checked here, the rest (cgroup, kernel support) by dataplane/local/sockmap.c,
 * before anything is attached.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "sockmap.h"

#define SM(c) (CMD_CTX(c)->sm)

static int parse_ports(const char *val, void *params, struct ferry_err *err)
{
	struct ferry_sockmap_params *p = params;

	return ferry_sockmap_parse_ports(val, p->ranges, &p->n_ranges, err);
}

static void print_ports(const void *params, char *buf, size_t len)
{
	const struct ferry_sockmap_params *p = params;
	size_t used = 0;
	unsigned i;

	for (i = 0; i < p->n_ranges && used < len; i++) {
		const struct ferry_sm_port_range *r = &p->ranges[i];

		used += (size_t)(r->lo == r->hi
					 ? snprintf(buf + used, len - used,
						    "%s%u", i ? "," : "", r->lo)
					 : snprintf(buf + used, len - used,
						    "%s%u-%u", i ? "," : "",
						    r->lo, r->hi));
	}
}

static const char *const verdict_words[] = {"auto", "permanent", "apply-bytes",
					    "per-message", NULL};
static const uint64_t verdict_vals[] = {
	(uint64_t)FERRY_SM_MODE_AUTO, FERRY_SM_PERMANENT, FERRY_SM_APPLY_BYTES,
	FERRY_SM_PER_MESSAGE};

static const struct ctl_opt attach_rows[] = {
	{"cgroup", CTL_OPT_STRING, CTL_OPT_REQUIRED,
	 .off = offsetof(struct ferry_sockmap_params, cgroup),
	 .size = sizeof(const char *), .metavar = "PATH",
	 .values = CTL_VAL_FILE, .help = "a cgroup v2 directory, not the root"},
	{"ports", CTL_OPT_CUSTOM, 0, .metavar = "LIST",
	 .example = "7000-7010,7020", .parse = parse_ports,
	 .print = print_ports, .help = "local TCP ports (default: every port)"},
	{"verdict", CTL_OPT_WORD, 0,
	 .off = offsetof(struct ferry_sockmap_params, mode),
	 .size = sizeof(int), .words = verdict_words, .vals = verdict_vals,
	 .help = "how sends are redirected"},
};

static const struct ferry_sockmap_params attach_dflt = {
	.mode = FERRY_SM_MODE_AUTO,
};

static const struct ctl_syntax attach_syntax = {
	CTL_OPTS(attach_rows),
	.size = sizeof(struct ferry_sockmap_params),
	.dflt = &attach_dflt,
	.command = "sockmap attach",
};

static int cmd_sockmap_attach(void *ctx, int argc, char **argv, json_t **data,
			      struct ferry_err *err)
{
	struct ferry_sockmap_params p;
	int rc = cmd_parse(&attach_syntax, argc, argv, &p, err);

	if (rc)
		return rc;
	rc = ferry_sockmap_attach(SM(ctx), &p, err);
	if (rc)
		return rc;
	*data = ferry_sockmap_show(SM(ctx));
	return 0;
}

static int cmd_sockmap_detach(void *ctx, int argc, char **argv, json_t **data,
			      struct ferry_err *err)
{
	if (argc)
		return ferry_fail(err, -EINVAL, "usage: sockmap detach");
	return ferry_sockmap_detach(SM(ctx), data, err);
}

static int cmd_sockmap_show(void *ctx, int argc, char **argv, json_t **data,
			    struct ferry_err *err)
{
	if (argc)
		return ferry_fail(err, -EINVAL, "usage: sockmap show");
	*data = ferry_sockmap_show(SM(ctx));
	return *data ? 0 : -ENOMEM;
}

static void sockmap_config(struct ferryd_ctx *ctx, struct ferry_strbuf *b)
{
	struct ferry_sockmap_params p;

	if (ctx->sm && ferry_sockmap_get(ctx->sm, &p) == 0)
		cmd_buf_line(b, "sockmap attach", &attach_syntax, &p);
}

static const struct ctl_cmd sockmap_cmds[] = {
	{"sockmap attach", NULL,
	 "accelerate local TCP flows of the processes in a cgroup v2 (not "
	 "the root): established loopback sockets whose port is in LIST go "
	 "into a SOCKHASH and each send is redirected to the peer's ingress; "
	 "verdict auto: permanent where the kernel has BPF_F_PERMANENT, else "
	 "apply-bytes (one verdict per 4 GiB); per-message is a diagnostic "
	 "baseline",
	 cmd_sockmap_attach, &attach_syntax},
	{"sockmap detach", "",
	 "stop accelerating: no new sockets, live flows back to plain TCP "
	 "(a socket with redirected data queued stays until it closes)",
	 cmd_sockmap_detach},
	{"sockmap show", "",
	 "the attachment, the verdict mechanism in use, the BPF_F_PERMANENT "
	 "probe, and per flow direction its verdict runs and bytes",
	 cmd_sockmap_show},
};

const struct cmd_module cmd_sockmap_module = {
	.name = "sockmap",
	.cmds = sockmap_cmds,
	.n = CMD_N(sockmap_cmds),
	.config = sockmap_config,
};
