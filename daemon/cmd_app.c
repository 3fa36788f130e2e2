// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_app.c - what a port does with what it receives: `xconnect add|del`,
 * `reflect`, `drop`, `route`.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "cmd.h"
#include "ferry.h"

struct app_params {
	const char *port;
	const char *peer;
	uint8_t path; /* enum ferry_path */
};

static const char *const path_words[] = {
#define PATH_WORD(id, name) name,
	FERRY_PATHS(PATH_WORD)
#undef PATH_WORD
		NULL};

#define AP(field)                                                              \
	.off = offsetof(struct app_params, field), .size = sizeof(const char *)

static const struct ctl_opt xconnect_add_rows[] = {
	{.kind = CTL_OPT_NAME,
	 .flags = CTL_OPT_POSITIONAL | CTL_OPT_REQUIRED,
	 AP(port),
	 .metavar = "PORT_IN",
	 .values = CTL_VAL_PORT,
	 .help = "the port frames arrive on"},
	{.kind = CTL_OPT_NAME,
	 .flags = CTL_OPT_POSITIONAL | CTL_OPT_REQUIRED,
	 AP(peer),
	 .metavar = "PORT_OUT",
	 .values = CTL_VAL_PORT,
	 .help = "the port they leave by"},
	{"path", CTL_OPT_WORD, 0, .off = offsetof(struct app_params, path),
	 .size = sizeof(uint8_t), .words = path_words,
	 .help = "workers (xsk), the kernel's DEVMAP, or kernel when nothing "
		 "needs a worker"},
};

static const struct ctl_opt port_in_row[] = {
	{.kind = CTL_OPT_NAME,
	 .flags = CTL_OPT_POSITIONAL | CTL_OPT_REQUIRED,
	 AP(port),
	 .metavar = "PORT_IN",
	 .values = CTL_VAL_PORT},
};

static const struct ctl_opt port_row[] = {
	{.kind = CTL_OPT_NAME,
	 .flags = CTL_OPT_POSITIONAL | CTL_OPT_REQUIRED,
	 AP(port),
	 .metavar = "PORT",
	 .values = CTL_VAL_PORT},
};

static const struct ctl_syntax xconnect_add_syntax = {
	CTL_OPTS(xconnect_add_rows), .size = sizeof(struct app_params),
	.command = "xconnect add"};
static const struct ctl_syntax xconnect_del_syntax = {
	CTL_OPTS(port_in_row), .size = sizeof(struct app_params),
	.command = "xconnect del"};
static const struct ctl_syntax reflect_syntax = {
	CTL_OPTS(port_row), .size = sizeof(struct app_params),
	.command = "reflect"};
static const struct ctl_opt route_rows[] = {
	{.kind = CTL_OPT_NAME,
	 .flags = CTL_OPT_POSITIONAL | CTL_OPT_REQUIRED,
	 AP(port),
	 .metavar = "PORT",
	 .values = CTL_VAL_PORT},
	{"path", CTL_OPT_WORD, 0, .off = offsetof(struct app_params, path),
	 .size = sizeof(uint8_t), .words = path_words,
	 .help = "workers (xsk), bpf_fib_lookup and a DEVMAP in XDP (kernel), "
		 "or kernel when nothing needs a worker"},
};

static const struct ctl_syntax route_syntax = {
	CTL_OPTS(route_rows), .size = sizeof(struct app_params),
	.command = "route"};
static const struct ctl_syntax drop_syntax = {CTL_OPTS(port_row),
					      .size = sizeof(struct app_params),
					      .command = "drop"};

static int set_app(void *ctx, const struct ctl_syntax *s, enum ferry_app app,
		   int argc, char **argv, struct ferry_err *err)
{
	struct app_params p;
	int rc = cmd_parse(s, argc, argv, &p, err);

	return rc ? rc : ferry_app_set(CMD_F(ctx), p.port, app, p.peer, err);
}

static int cmd_xconnect_add(void *ctx, int argc, char **argv, json_t **data,
			    struct ferry_err *err)
{
	struct app_params p;
	int rc = cmd_parse(&xconnect_add_syntax, argc, argv, &p, err);

	return rc ? rc
		  : ferry_xconnect_add(CMD_F(ctx), p.port, p.peer,
				       (enum ferry_path)p.path, err);
}

static int cmd_xconnect_del(void *ctx, int argc, char **argv, json_t **data,
			    struct ferry_err *err)
{
	struct app_params p;
	int rc = cmd_parse(&xconnect_del_syntax, argc, argv, &p, err);

	return rc ? rc : ferry_xconnect_del(CMD_F(ctx), p.port, err);
}

static int cmd_reflect(void *ctx, int argc, char **argv, json_t **data,
		       struct ferry_err *err)
{
	return set_app(ctx, &reflect_syntax, FERRY_APP_REFLECT, argc, argv,
		       err);
}

static int cmd_drop(void *ctx, int argc, char **argv, json_t **data,
		    struct ferry_err *err)
{
	return set_app(ctx, &drop_syntax, FERRY_APP_DROP, argc, argv, err);
}

static int cmd_route(void *ctx, int argc, char **argv, json_t **data,
		     struct ferry_err *err)
{
	struct app_params p;
	int rc = cmd_parse(&route_syntax, argc, argv, &p, err);

	if (!rc)
		rc = ferry_route_add(CMD_F(ctx), p.port,
				     (enum ferry_path)p.path, err);
	if (!rc)
		ferryd_route_watch(ctx);
	return rc;
}

/* After every port add, so a peer exists when its xconnect is read. */
static void app_config(struct ferryd_ctx *ctx, struct ferry_strbuf *b)
{
	struct app_params p;
	enum ferry_app app;
	int i;

	for (i = 0; ferry_port_app_get(ctx->f, i, &app, &p.peer) == 0; i++) {
		struct ferry_port_params pp;

		if (ferry_port_get(ctx->f, i, &pp))
			break;
		p.port = pp.name;
		switch (app) {
		case FERRY_APP_XCONNECT: {
			enum ferry_path path = FERRY_PATH_AUTO;

			ferry_port_path_get(ctx->f, i, &path);
			p.path = (uint8_t)path;
			cmd_buf_line(b, "xconnect add", &xconnect_add_syntax,
				     &p);
		} break;
		case FERRY_APP_REFLECT:
			cmd_buf_line(b, "reflect", &reflect_syntax, &p);
			break;
		case FERRY_APP_DROP:
			cmd_buf_line(b, "drop", &drop_syntax, &p);
			break;
		case FERRY_APP_ROUTE: {
			enum ferry_path path = FERRY_PATH_AUTO;

			ferry_port_path_get(ctx->f, i, &path);
			p.path = (uint8_t)path;
			cmd_buf_line(b, "route", &route_syntax, &p);
		} break;
		default:
			break;
		}
	}
}

static const struct ctl_cmd app_cmds[] = {
	{"xconnect add", NULL,
	 "send every frame received on PORT_IN out of PORT_OUT",
	 cmd_xconnect_add, &xconnect_add_syntax},
	{"xconnect del", NULL, "remove PORT_IN's xconnect", cmd_xconnect_del,
	 &xconnect_del_syntax},
	{"reflect", NULL, "swap MACs and send frames back out of PORT",
	 cmd_reflect, &reflect_syntax},
	{"drop", NULL, "count and drop every frame received on PORT", cmd_drop,
	 &drop_syntax},
	{"route", NULL,
	 "route PORT's IP frames by the kernel's routes and neighbours",
	 cmd_route, &route_syntax},
};

const struct cmd_module cmd_app_module = {
	.name = "app",
	.cmds = app_cmds,
	.n = CMD_N(app_cmds),
	.config = app_config,
};
