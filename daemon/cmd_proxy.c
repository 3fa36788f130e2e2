// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_proxy.c - `proxy add|del|show`: argument checks, then the proxy
 * object (dataplane/local/proxy.c) under its lock.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "cmd.h"
#include "proxy.h"

#define PX(c) (CMD_CTX(c)->proxy)

static int parse_listen(const char *val, void *params, struct ferry_err *err)
{
	return ferry_proxy_addr_parse(
		val, &((struct ferry_proxy_params *)params)->listen, err);
}

static int parse_backend(const char *val, void *params, struct ferry_err *err)
{
	return ferry_proxy_addr_parse(
		val, &((struct ferry_proxy_params *)params)->backend, err);
}

static void print_listen(const void *params, char *buf, size_t len)
{
	ferry_proxy_addr_text(
		&((const struct ferry_proxy_params *)params)->listen, buf, len);
}

static void print_backend(const void *params, char *buf, size_t len)
{
	ferry_proxy_addr_text(
		&((const struct ferry_proxy_params *)params)->backend, buf,
		len);
}

#define XP(field)                                                              \
	.off = offsetof(struct ferry_proxy_params, field),                     \
	.size = sizeof(((struct ferry_proxy_params *)0)->field)

/* Indexed by enum ferry_proxy_mode. */
static const char *const mode_words[] = {"auto", "relay", "splice", NULL};
/* Indexed by enum ferry_proxy_pipe. */
static const char *const pipe_words[] = {"auto", "off", NULL};

static const struct ctl_opt proxy_add_rows[] = {
	{.kind = CTL_OPT_NAME,
	 .flags = CTL_OPT_POSITIONAL | CTL_OPT_REQUIRED,
	 XP(name),
	 .metavar = "NAME",
	 .help = "the proxy's name"},
	{"listen", CTL_OPT_CUSTOM, CTL_OPT_REQUIRED, .metavar = "ADDR:PORT",
	 .example = "127.0.0.1:8000", .parse = parse_listen,
	 .print = print_listen, .help = "where clients connect"},
	{"backend", CTL_OPT_CUSTOM, CTL_OPT_REQUIRED, .metavar = "ADDR:PORT",
	 .example = "[::1]:9000", .parse = parse_backend,
	 .print = print_backend, .help = "where each client is connected to"},
	/* Pinned: saved proxies keep their buffer sizes if defaults move. */
	{"limit", CTL_OPT_U64, CTL_OPT_PIN, XP(limit),
	 .min = FERRY_PROXY_LIMIT_MIN, .max = FERRY_PROXY_LIMIT_MAX,
	 .metavar = "BYTES", .help = "bytes queued per flow and direction"},
	{"coalesce", CTL_OPT_U64, CTL_OPT_PIN, XP(coalesce),
	 .max = FERRY_PROXY_COALESCE_MAX, .metavar = "BYTES",
	 .help = "SO_RCVLOWAT for streams of small segments (0: never)"},
	/* Pinned: saved proxies keep their mode if the default moves. */
	{"mode", CTL_OPT_WORD, CTL_OPT_PIN, XP(mode), .words = mode_words,
	 .help = "relay in ferryd (auto: today the same), or sk_skb splice"},
	{"pipe", CTL_OPT_WORD, 0, XP(pipe), .words = pipe_words,
	 .help = "relay: a direction that streams moves through a pipe "
		 "(auto), or always through the buffer (off)"},
};

static const struct ferry_proxy_params proxy_add_dflt = {
	.limit = FERRY_PROXY_LIMIT_DEFAULT,
	.coalesce = FERRY_PROXY_COALESCE_DEFAULT,
};

static const struct ctl_syntax proxy_add_syntax = {
	CTL_OPTS(proxy_add_rows),
	.size = sizeof(struct ferry_proxy_params),
	.dflt = &proxy_add_dflt,
	.command = "proxy add",
};

struct proxy_name_params {
	const char *name;
};

static const struct ctl_opt name_row[] = {
	CMD_NAME_ROW(CTL_OPT_REQUIRED, CTL_VAL_PROXY),
};

static const struct ctl_opt name_opt_row[] = {
	CMD_NAME_ROW(0, CTL_VAL_PROXY),
};

static const struct ctl_syntax proxy_del_syntax = {
	CTL_OPTS(name_row), .size = sizeof(struct proxy_name_params),
	.command = "proxy del"};
static const struct ctl_syntax proxy_show_syntax = {
	CTL_OPTS(name_opt_row), .size = sizeof(struct proxy_name_params),
	.command = "proxy show"};

static int cmd_proxy_add(void *ctx, int argc, char **argv, json_t **data,
			 struct ferry_err *err)
{
	struct ferry_proxy_params pp;
	int rc = cmd_parse(&proxy_add_syntax, argc, argv, &pp, err);

	if (rc)
		return rc;
	if (!PX(ctx))
		return ferry_fail(err, -ENOTSUP, "this ferryd has no proxy");
	rc = ferry_proxy_add(PX(ctx), &pp, err);
	if (rc)
		return rc;
	*data = ferry_proxy_show(PX(ctx), pp.name, err);
	return 0;
}

static int cmd_proxy_del(void *ctx, int argc, char **argv, json_t **data,
			 struct ferry_err *err)
{
	struct proxy_name_params p;
	int rc = cmd_parse(&proxy_del_syntax, argc, argv, &p, err);

	if (rc)
		return rc;
	if (!PX(ctx))
		return ferry_fail(err, -ENOTSUP, "this ferryd has no proxy");
	return ferry_proxy_del(PX(ctx), p.name, err);
}

static int cmd_proxy_show(void *ctx, int argc, char **argv, json_t **data,
			  struct ferry_err *err)
{
	struct proxy_name_params p;
	int rc = cmd_parse(&proxy_show_syntax, argc, argv, &p, err);

	if (rc)
		return rc;
	if (!PX(ctx))
		return ferry_fail(err, -ENOTSUP, "this ferryd has no proxy");
	*data = ferry_proxy_show(PX(ctx), p.name, err);
	return *data ? 0 : -ENOENT;
}

static void proxy_config(struct ferryd_ctx *ctx, struct ferry_strbuf *b)
{
	struct ferry_proxy_params pp;
	char name[FERRY_PROXY_NAME_MAX];
	int i;

	for (i = 0; ctx->proxy && ferry_proxy_get(ctx->proxy, i, &pp, name,
						  sizeof(name)) == 0;
	     i++)
		cmd_buf_line(b, "proxy add", &proxy_add_syntax, &pp);
}

static const struct ctl_cmd proxy_cmds[] = {
	{"proxy add", NULL,
	 "TCP proxy: accept clients on listen, connect each to backend "
	 "and move bytes between the two sockets: mode auto (the default) "
	 "and relay read and write them in ferryd's proxy thread, mode "
	 "splice in the kernel (sk_skb); limit: bytes queued per flow and "
	 "direction before the sender is paused (65536-1073741824, default "
	 "4194304); coalesce: splice only; pipe: relay only, auto (the "
	 "default) moves a direction that fills its buffer through a pipe "
	 "(splice(2), no copy into ferryd), off never. The backend is not "
	 "probed: a "
	 "client whose backend connection fails is reset and counted",
	 cmd_proxy_add, &proxy_add_syntax},
	{"proxy del", NULL,
	 "stop accepting; established flows run to completion", cmd_proxy_del,
	 &proxy_del_syntax},
	{"proxy show", NULL,
	 "proxies with their flows, byte counters, pauses and queued bytes",
	 cmd_proxy_show, &proxy_show_syntax},
};

const struct cmd_module cmd_proxy_module = {
	.name = "proxy",
	.cmds = proxy_cmds,
	.n = CMD_N(proxy_cmds),
	.config = proxy_config,
};
