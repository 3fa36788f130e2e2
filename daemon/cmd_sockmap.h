/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cmd_sockmap.h - the `sockmap` commands (local TCP flow acceleration);
 * their table entries are in commands.c.
 */
#ifndef FERRY_CTL_CMD_SOCKMAP_H
#define FERRY_CTL_CMD_SOCKMAP_H

#include "proto.h"

int cmd_sockmap_attach(void *ctx, int argc, char **argv, json_t **data,
		       struct ctl_err *err);
int cmd_sockmap_detach(void *ctx, int argc, char **argv, json_t **data,
		       struct ctl_err *err);
int cmd_sockmap_show(void *ctx, int argc, char **argv, json_t **data,
		     struct ctl_err *err);

#define CMD_SOCKMAP_ATTACH_ARGS                                                \
	"cgroup PATH [ports LIST] "                                            \
	"[verdict auto|permanent|apply-bytes|per-message]"

#endif /* FERRY_CTL_CMD_SOCKMAP_H */
