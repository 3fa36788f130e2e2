/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cmd.h - what a command module gives the composition root: its commands
 * (name, help, handler and option rows, next to the handlers in
 * cmd_<group>.c) and the lines it adds to the running configuration,
 * printed from the same rows that parse them.
 */
#ifndef FERRY_DAEMON_CMD_H
#define FERRY_DAEMON_CMD_H

#include <stdarg.h>
#include <stddef.h>

#include "commands.h"
#include "opt.h"
#include "proto.h"
#include "strbuf.h"

/* Appends "NAME ARGS\n", the arguments printed from the rows; a row that
 * cannot be printed is the buffer's failure. */
void cmd_buf_line(struct ferry_strbuf *b, const char *name,
		  const struct ctl_syntax *s, const void *params);

/*
 * The row of a command whose one argument is an object's NAME (`acl del
 * NAME`, `proxy show [NAME]`): flags 0 (optional) or CTL_OPT_REQUIRED;
 * values, what completion offers (CTL_VAL_PORT, ..., CTL_VAL_NONE). The
 * params struct holds the name first.
 */
#define CMD_NAME_ROW(flags_, values_)                                          \
	{                                                                      \
		.kind = CTL_OPT_NAME, .flags = CTL_OPT_POSITIONAL | (flags_),  \
		.size = sizeof(const char *), .metavar = "NAME",               \
		.values = (values_),                                           \
	}

struct cmd_module {
	const char *name;
	const struct ctl_cmd *cmds;
	size_t n;
	/* Appends this module's part of the running configuration; NULL:
	 * the module's commands configure nothing that lasts. */
	void (*config)(struct ferryd_ctx *ctx, struct ferry_strbuf *b);
};

extern const struct cmd_module cmd_handover_module;
extern const struct cmd_module cmd_workers_module;
extern const struct cmd_module cmd_port_module;
extern const struct cmd_module cmd_app_module;
extern const struct cmd_module cmd_steer_module;
extern const struct cmd_module cmd_acl_module;
/* The rows of `acl add`: steer_config prints ACL rules with them. */
extern const struct ctl_syntax cmd_acl_add_syntax;
extern const struct cmd_module cmd_sockmap_module;
extern const struct cmd_module cmd_gen_module;
extern const struct cmd_module cmd_stats_module;
extern const struct cmd_module cmd_config_module;
extern const struct cmd_module cmd_host_module;
extern const struct cmd_module cmd_proxy_module;
extern const struct cmd_module cmd_route_module;
extern const struct cmd_module cmd_capture_module;

#define CMD_CTX(c) ((struct ferryd_ctx *)(c))
#define CMD_F(c)   (CMD_CTX(c)->f)
#define CMD_N(a)   (sizeof(a) / sizeof((a)[0]))

/* Parses argv with the rows of the command being run. */
static inline int cmd_parse(const struct ctl_syntax *s, int argc, char **argv,
			    void *params, struct ferry_err *err)
{
	return ctl_opt_parse(s, argc, argv, params, err);
}

#endif /* FERRY_DAEMON_CMD_H */
