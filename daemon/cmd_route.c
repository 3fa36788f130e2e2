// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_route.c - what the router holds: `fib show [PREFIX]`, `neigh show`;
 * and the netlink socket the server thread watches for it. (`route PORT`,
 * the app, is with the other apps in cmd_app.c.)
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "cmd.h"
#include "ferry.h"
#include "log.h"
#include "server.h"

struct fib_show_params {
	const char *prefix;
};

static const struct ctl_opt fib_show_rows[] = {
	{.kind = CTL_OPT_NAME,
	 .flags = CTL_OPT_POSITIONAL,
	 .off = offsetof(struct fib_show_params, prefix),
	 .size = sizeof(const char *),
	 .metavar = "PREFIX",
	 .help = "only routes inside PREFIX or covering it (ADDR[/LEN])"},
};

static const struct ctl_syntax fib_show_syntax = {
	CTL_OPTS(fib_show_rows), .size = sizeof(struct fib_show_params),
	.command = "fib show"};
static const struct ctl_syntax neigh_show_syntax = {
	.size = sizeof(struct fib_show_params), .command = "neigh show"};

static void route_readable(void *arg)
{
	ferry_route_process(arg);
}

void ferryd_route_watch(struct ferryd_ctx *ctx)
{
	int fd = ctx->f ? ferry_route_fd(ctx->f) : -1;
	int rc;

	if (fd < 0 || !ctx->srv)
		return;
	rc = ctl_server_watch(ctx->srv, fd, route_readable, ctx->f);
	if (rc)
		log_err("route: cannot watch the netlink socket: %s",
			strerror(-rc));
}

static int cmd_fib_show(void *ctx, int argc, char **argv, json_t **data,
			struct ferry_err *err)
{
	struct fib_show_params p;
	int rc = cmd_parse(&fib_show_syntax, argc, argv, &p, err);

	if (rc)
		return rc;
	*data = ferry_fib_show(CMD_F(ctx), p.prefix, err);
	return *data ? 0 : -EINVAL;
}

static int cmd_neigh_show(void *ctx, int argc, char **argv, json_t **data,
			  struct ferry_err *err)
{
	struct fib_show_params p;
	int rc = cmd_parse(&neigh_show_syntax, argc, argv, &p, err);

	if (rc)
		return rc;
	*data = ferry_neigh_show(CMD_F(ctx));
	return 0;
}

static const struct ctl_cmd route_cmds[] = {
	{"fib show", NULL,
	 "the routes ferry follows from the kernel, with next hop, port and "
	 "neighbour MAC",
	 cmd_fib_show, &fib_show_syntax},
	{"neigh show", NULL, "the neighbours ferry follows from the kernel",
	 cmd_neigh_show, &neigh_show_syntax},
};

const struct cmd_module cmd_route_module = {
	.name = "route",
	.cmds = route_cmds,
	.n = CMD_N(route_cmds),
};
