/* SPDX-License-Identifier: BSD-2-Clause */
/* cmd_proxy.h - handlers of the `proxy` commands (daemon/cmd_proxy.c). */
#ifndef FERRY_CTL_CMD_PROXY_H
#define FERRY_CTL_CMD_PROXY_H

#include "proto.h"

int cmd_proxy_add(void *ctx, int argc, char **argv, json_t **data,
		  struct ctl_err *err);
int cmd_proxy_del(void *ctx, int argc, char **argv, json_t **data,
		  struct ctl_err *err);
int cmd_proxy_show(void *ctx, int argc, char **argv, json_t **data,
		   struct ctl_err *err);

#define CMD_PROXY_ADD_ARGS                                                     \
	"NAME listen ADDR:PORT backend ADDR:PORT [limit BYTES] "               \
	"[coalesce BYTES]"

#endif /* FERRY_CTL_CMD_PROXY_H */
