/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * commands.h - ferryd's command table, put together from the command
 * modules (cmd.h) at start: every command the config file, the control
 * socket and ferryctl accept, with its arguments and help.
 */
#ifndef FERRY_DAEMON_COMMANDS_H
#define FERRY_DAEMON_COMMANDS_H

#include <stddef.h>

#include "proto.h"

struct ferry;
struct ferry_proxy;
struct ferry_sockmap;
struct ctl_server;
struct cmd_module;

/* What every handler gets as ctx. */
struct ferryd_ctx {
	struct ferry *f;
	struct ferry_proxy *proxy; /* splice proxy (dataplane/local/proxy.h) */
	struct ferry_sockmap *sm;  /* local TCP flow acceleration */
	struct ctl_server *srv;	   /* NULL while the config file is applied */
	int stop; /* set by `shutdown` before the server runs */
	/* Every module's rows in one table, built by ferryd_commands_init
	 * and not changed after. */
	struct ctl_cmd *cmds;
	size_t n_cmds;
};

/* Once a route port exists: the server watches the router's netlink socket
 * (cmd_route.c). Idempotent; called after `route` and from the tick. */
void ferryd_route_watch(struct ferryd_ctx *ctx);

/* Builds ctx->cmds from the modules; 0 or -ENOMEM. */
int ferryd_commands_init(struct ferryd_ctx *ctx);
void ferryd_commands_fini(struct ferryd_ctx *ctx);

/* The modules, in the order of the table and of the configuration. */
const struct cmd_module *const *ferryd_modules(size_t *n);

/*
 * The running configuration as command lines, every module's in module
 * order; skip (may be NULL) leaves one module's lines out. malloc'd, NULL
 * on failure.
 */
char *ferryd_config_text(struct ferryd_ctx *ctx, const struct cmd_module *skip);

#endif /* FERRY_DAEMON_COMMANDS_H */
