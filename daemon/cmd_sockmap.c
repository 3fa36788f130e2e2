// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_sockmap.c - `sockmap attach|detach|show|policy add|policy del`:
 * arguments are parsed and checked here, the rest (cgroup, kernel support)
 * by dataplane/local/sockmap.c, before anything is attached.
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

/* In enum ferry_sm_decision order, for the rows below. */
static const char *const decision_words[] = {"learn", "plain", "redirect",
					     NULL};
_Static_assert(FERRY_SM__DECISIONS == 3, "decision_words follows the enum");

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
	{"default", CTL_OPT_WORD, 0,
	 .off = offsetof(struct ferry_sockmap_params, dflt),
	 .size = sizeof(int), .words = decision_words,
	 .help = "services without a policy: learn which connections to "
		 "redirect, or all plain, or all redirected"},
	{"warmup", CTL_OPT_U64, 0,
	 .off = offsetof(struct ferry_sockmap_params, rule.learn_samples),
	 .size = sizeof(__u64), .min = 1, .max = FERRY_SM_LEARN_SAMPLES_MAX,
	 .metavar = "N",
	 .help = "learning: sockets of a service measured before it is "
		 "decided"},
	{"rr-max", CTL_OPT_U64, 0,
	 .off = offsetof(struct ferry_sockmap_params,
			 rule.rr_max_bytes_per_turn),
	 .size = sizeof(__u64), .max = FERRY_SM_RULE_BYTES_MAX,
	 .metavar = "BYTES",
	 .help = "learning: request/response (redirected) at most this many "
		 "bytes per turn; 0: nothing is"},
	{"min-write", CTL_OPT_U64, 0,
	 .off = offsetof(struct ferry_sockmap_params, rule.min_mean_write),
	 .size = sizeof(__u64), .max = FERRY_SM_RULE_BYTES_MAX,
	 .metavar = "BYTES",
	 .help = "learning: a stream is redirected when its mean write is at "
		 "least this; 0: every stream is (default 1 GiB: none is)"},
	{"lag-max", CTL_OPT_U64, 0,
	 .off = offsetof(struct ferry_sockmap_params, lag_max),
	 .size = sizeof(uint64_t), .max = FERRY_SM_LAG_MAX_MAX,
	 .metavar = "BYTES",
	 .help = "a redirected direction whose reader has more unread goes "
		 "to plain TCP; 0: no bound"},
};

static const struct ferry_sockmap_params attach_dflt = {
	.mode = FERRY_SM_MODE_AUTO,
	.dflt = FERRY_SM_D_LEARN,
	.rule = FERRY_SM_RULE_DEFAULT,
	.lag_max = FERRY_SM_LAG_MAX_DEFAULT,
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

static int parse_service(const char *val, void *params, struct ferry_err *err)
{
	struct ferry_sockmap_policy *p = params;

	return ferry_sockmap_service_parse(val, &p->key, err);
}

static void print_service(const void *params, char *buf, size_t len)
{
	ferry_sockmap_service_text(
		&((const struct ferry_sockmap_policy *)params)->key, buf, len);
}

/* The rows `policy add` and `policy del` share; positionals come first. */
#define POLICY_SERVICE_ROW                                                     \
	{                                                                      \
		.kind = CTL_OPT_CUSTOM,                                        \
		.flags = CTL_OPT_POSITIONAL | CTL_OPT_REQUIRED,                \
		.metavar = "PORT|ADDR:PORT", .example = "127.0.0.1:6379",      \
		.parse = parse_service, .print = print_service,                \
		.help = "the service: its server's port, on any or one "       \
			"address"                                              \
	}
#define POLICY_CGROUP_ROW                                                      \
	{                                                                      \
		"cgroup", CTL_OPT_STRING, 0,                                   \
			.off = offsetof(struct ferry_sockmap_policy, cgroup),  \
			.size = sizeof(const char *), .metavar = "PATH",       \
			.values = CTL_VAL_FILE,                                \
			.help = "only where the server socket is in this "     \
				"cgroup v2 "                                   \
				"(relative: to " FERRY_SM_CGROUP_ROOT          \
				"); its service is "                           \
				"kept apart from the port's in other cgroups"  \
	}

static const struct ctl_opt policy_add_rows[] = {
	POLICY_SERVICE_ROW,
	{.kind = CTL_OPT_WORD,
	 .flags = CTL_OPT_POSITIONAL | CTL_OPT_REQUIRED,
	 .off = offsetof(struct ferry_sockmap_policy, decision),
	 .size = sizeof(int),
	 .words = decision_words,
	 .help = "what its new connections get (learn: what it measured)"},
	POLICY_CGROUP_ROW,
};

static const struct ctl_opt policy_del_rows[] = {
	POLICY_SERVICE_ROW,
	POLICY_CGROUP_ROW,
};

/*
 * `sockmap policy add dst SERVICE DECISION`, as ACLs and proxies name a
 * destination; the form without `dst` is what ferryd saved before, kept so
 * that those config files still load. Same rows, same handlers.
 */
static const struct ctl_syntax policy_add_syntax = {
	CTL_OPTS(policy_add_rows),
	.size = sizeof(struct ferry_sockmap_policy),
	.command = "sockmap policy add dst",
};

static const struct ctl_syntax policy_add_bare_syntax = {
	CTL_OPTS(policy_add_rows),
	.size = sizeof(struct ferry_sockmap_policy),
	.command = "sockmap policy add",
};

static const struct ctl_syntax policy_del_syntax = {
	CTL_OPTS(policy_del_rows),
	.size = sizeof(struct ferry_sockmap_policy),
	.command = "sockmap policy del dst",
};

static const struct ctl_syntax policy_del_bare_syntax = {
	CTL_OPTS(policy_del_rows),
	.size = sizeof(struct ferry_sockmap_policy),
	.command = "sockmap policy del",
};

static int policy_add(void *ctx, const struct ctl_syntax *syn, int argc,
		      char **argv, struct ferry_err *err)
{
	struct ferry_sockmap_policy p;
	int rc = cmd_parse(syn, argc, argv, &p, err);

	if (rc)
		return rc;
	return ferry_sockmap_policy_add(SM(ctx), &p, err);
}

static int policy_del(void *ctx, const struct ctl_syntax *syn, int argc,
		      char **argv, struct ferry_err *err)
{
	struct ferry_sockmap_policy p;
	int rc = cmd_parse(syn, argc, argv, &p, err);

	if (rc)
		return rc;
	return ferry_sockmap_policy_del(SM(ctx), &p, err);
}

static int cmd_sockmap_policy_add(void *ctx, int argc, char **argv,
				  json_t **data, struct ferry_err *err)
{
	(void)data;
	return policy_add(ctx, &policy_add_syntax, argc, argv, err);
}

static int cmd_sockmap_policy_add_bare(void *ctx, int argc, char **argv,
				       json_t **data, struct ferry_err *err)
{
	(void)data;
	return policy_add(ctx, &policy_add_bare_syntax, argc, argv, err);
}

static int cmd_sockmap_policy_del(void *ctx, int argc, char **argv,
				  json_t **data, struct ferry_err *err)
{
	(void)data;
	return policy_del(ctx, &policy_del_syntax, argc, argv, err);
}

static int cmd_sockmap_policy_del_bare(void *ctx, int argc, char **argv,
				       json_t **data, struct ferry_err *err)
{
	(void)data;
	return policy_del(ctx, &policy_del_bare_syntax, argc, argv, err);
}

static void sockmap_config(struct ferryd_ctx *ctx, struct ferry_strbuf *b)
{
	struct ferry_sockmap_params p;
	struct ferry_sockmap_policy pol;
	unsigned i;

	if (!ctx->sm)
		return;
	/* Policies first: the attachment starts with them in its map. */
	for (i = 0; ferry_sockmap_policy_get(ctx->sm, i, &pol) == 0; i++)
		cmd_buf_line(b, "sockmap policy add dst", &policy_add_syntax,
			     &pol);
	if (ferry_sockmap_get(ctx->sm, &p) == 0)
		cmd_buf_line(b, "sockmap attach", &attach_syntax, &p);
}

static const struct ctl_cmd sockmap_cmds[] = {
	{"sockmap attach", NULL,
	 "accelerate local TCP flows of the processes in a cgroup v2 (not "
	 "the root): established loopback sockets whose port is in LIST go "
	 "into a SOCKHASH and each send is redirected to the peer's ingress; "
	 "verdict auto: permanent where the kernel has BPF_F_PERMANENT, else "
	 "apply-bytes (one verdict per 4 GiB); per-message is a diagnostic "
	 "baseline; default learn redirects a service's new connections once "
	 "warmup sockets of it showed request/response (at most rr-max bytes "
	 "per turn) or a mean write of at least min-write",
	 cmd_sockmap_attach, &attach_syntax},
	{"sockmap policy add dst", NULL,
	 "pin a service (its server's port, or address and port) to plain "
	 "TCP or to the redirect, or back to learning; new connections "
	 "follow it, established ones keep what they got; with cgroup PATH "
	 "(a cgroup v2 directory that must exist) only connections whose "
	 "server socket is in that cgroup, and that service learns and "
	 "counts apart from the same port elsewhere (a server in another "
	 "network namespace than ferryd's must start listening after "
	 "`sockmap attach`)",
	 cmd_sockmap_policy_add, &policy_add_syntax},
	{"sockmap policy add", NULL,
	 "the same as `sockmap policy add dst` (the form of older configs)",
	 cmd_sockmap_policy_add_bare, &policy_add_bare_syntax},
	{"sockmap policy del dst", NULL,
	 "remove a service's policy (with its cgroup PATH, if it has one)",
	 cmd_sockmap_policy_del, &policy_del_syntax},
	{"sockmap policy del", NULL,
	 "the same as `sockmap policy del dst` (the form of older configs)",
	 cmd_sockmap_policy_del_bare, &policy_del_bare_syntax},
	{"sockmap detach", "",
	 "stop accelerating: no new sockets, live flows back to plain TCP "
	 "(a socket with redirected data queued stays until it closes)",
	 cmd_sockmap_detach},
	{"sockmap show", "",
	 "the attachment, the verdict mechanism in use, the BPF_F_PERMANENT "
	 "probe, the policies, per service its decision for new connections "
	 "with the evidence (measured sockets, mean write, turns per KiB, "
	 "req-resp or stream) "
	 "and counters, whether it is measuring (not while every service is "
	 "decided plain), and per redirected flow direction its verdict runs "
	 "and bytes",
	 cmd_sockmap_show},
};

const struct cmd_module cmd_sockmap_module = {
	.name = "sockmap",
	.cmds = sockmap_cmds,
	.n = CMD_N(sockmap_cmds),
	.config = sockmap_config,
};
