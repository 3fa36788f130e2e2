/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * commands.h - ferryd's command table: every command the config file, the
 * control socket and ferryctl accept, with its arguments and help.
 */
#ifndef FERRY_CTL_COMMANDS_H
#define FERRY_CTL_COMMANDS_H

#include <stddef.h>

#include "proto.h"

struct ferry;
struct ferry_proxy;
struct ferry_sockmap;
struct ctl_server;

/* What every handler gets as ctx. */
struct ferryd_ctx {
	struct ferry *f;
	struct ferry_proxy *proxy; /* splice proxy (dataplane/proxy.h) */
	struct ferry_sockmap *sm;  /* local TCP flow acceleration */
	struct ctl_server *srv;	   /* NULL while the config file is applied */
	int stop; /* set by `shutdown` before the server runs */
};

const struct ctl_cmd *ferryd_commands(size_t *n);

#endif /* FERRY_CTL_COMMANDS_H */
