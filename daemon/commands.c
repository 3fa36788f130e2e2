// SPDX-License-Identifier: BSD-2-Clause
/*
 * commands.c - the composition root of ferryd's commands: the modules
 * (cmd_<group>.c, each with its handlers and option rows), the commands
 * that belong to no group (help, version, shutdown, complete), the table
 * built from them, and the running configuration as every module prints
 * it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "ferry.h"
#include "port_dpdk.h"
#include "server.h"

/* ------------------------------------------------------------- text */

void cmd_buf_line(struct ferry_strbuf *b, const char *name,
		  const struct ctl_syntax *s, const void *params)
{
	char line[CTL_MAX_LINE];
	int rc;

	snprintf(line, sizeof(line), "%s", name);
	rc = ctl_opt_print(s, params, line, sizeof(line));
	if (rc) {
		ferry_strbuf_fail(b, rc);
		return;
	}
	ferry_strbuf_printf(b, "%s\n", line);
}

/* ----------------------------------------------------------- basics */

static int cmd_version(void *ctx, int argc, char **argv, json_t **data,
		       struct ferry_err *err)
{
	if (argc)
		return ferry_fail(err, -EINVAL, "usage: version");
	*data = json_pack("{s:s, s:s, s:b}", "ferryd", FERRY_VERSION,
			  "protocol", "1", "dpdk", ferry_dpdk_built());
	return 0;
}

static int cmd_help(void *ctx, int argc, char **argv, json_t **data,
		    struct ferry_err *err)
{
	return ctl_help(CMD_CTX(ctx)->cmds, CMD_CTX(ctx)->n_cmds, argc, argv,
			data, err);
}

static int cmd_shutdown(void *ctx, int argc, char **argv, json_t **data,
			struct ferry_err *err)
{
	if (argc)
		return ferry_fail(err, -EINVAL, "usage: shutdown");
	CMD_CTX(ctx)->stop = 1;
	if (CMD_CTX(ctx)->srv)
		ctl_server_stop(CMD_CTX(ctx)->srv);
	*data = json_string("shutting down");
	return 0;
}

/*
 * `complete WORD...`: what may follow the words typed so far, from the
 * command names and the option rows: {"words":[...],"values":KIND}, where
 * KIND ("port", "iface", "worker", "proxy", "file" or "") says which names
 * the shell should add. The bash completion asks this, so its words are
 * the rows'.
 */
static int cmd_complete(void *ctx, int argc, char **argv, json_t **data,
			struct ferry_err *err)
{
	const struct ferryd_ctx *c = CMD_CTX(ctx);
	enum ctl_opt_values values = CTL_VAL_NONE;
	const struct ctl_cmd *best = NULL;
	int best_words = 0, i, k, nw;
	json_t *words = json_array(), *more;
	size_t j;

	if (!words)
		return -ENOMEM;
	for (j = 0; j < c->n_cmds; j++) {
		char name[128], *w[16];

		snprintf(name, sizeof(name), "%s", c->cmds[j].name);
		nw = ctl_tokenize(name, w, 16);
		for (k = 0; k < nw && k < argc; k++)
			if (strcmp(w[k], argv[k]))
				break;
		if (k < nw && k == argc) {
			/* The next word of a command name, once. */
			for (i = 0; i < (int)json_array_size(words); i++)
				if (!strcmp(json_string_value(
						    json_array_get(words, i)),
					    w[k]))
					break;
			if (i == (int)json_array_size(words))
				json_array_append_new(words, json_string(w[k]));
		} else if (k == nw && nw > best_words) {
			best = &c->cmds[j];
			best_words = nw;
		}
	}
	if (best && best->syntax) {
		more = ctl_opt_complete(best->syntax, argc - best_words,
					argv + best_words, &values);
		json_array_extend(words, more);
		json_decref(more);
	} else if (best && !strcmp(best->name, "help")) {
		/* help takes command names: what a line starting with the
		 * words after it would complete to. */
		json_decref(words);
		return cmd_complete(ctx, argc - 1, argv + 1, data, err);
	}
	*data = json_pack("{s:o, s:s}", "words", words, "values",
			  ctl_opt_values_name(values));
	return *data ? 0 : -ENOMEM;
}

static const struct ctl_cmd basic_cmds[] = {
	{"help", "[COMMAND]", "list commands, or describe one", cmd_help},
	{"version", "", "ferryd and protocol version", cmd_version},
	{"shutdown", "", "detach from every port and exit", cmd_shutdown},
	{"complete", "[WORD...]",
	 "what may follow WORD... on a command line (for shell completion)",
	 cmd_complete},
};

static const struct cmd_module basic_module = {
	.name = "basic",
	.cmds = basic_cmds,
	.n = CMD_N(basic_cmds),
};

/* ------------------------------------------------------------ table */

/*
 * The order of `help` and of the running configuration: workers before
 * the ports on them, ports before the apps and rules that name them.
 */
static const struct cmd_module *const modules[] = {
	&basic_module,	   &cmd_handover_module, &cmd_workers_module,
	&cmd_port_module,  &cmd_app_module,	 &cmd_steer_module,
	&cmd_acl_module,   &cmd_sockmap_module,	 &cmd_gen_module,
	&cmd_stats_module, &cmd_config_module,	 &cmd_host_module,
	&cmd_proxy_module, &cmd_route_module,	 &cmd_capture_module,
};

const struct cmd_module *const *ferryd_modules(size_t *n)
{
	*n = CMD_N(modules);
	return modules;
}

int ferryd_commands_init(struct ferryd_ctx *ctx)
{
	size_t i, n = 0;

	for (i = 0; i < CMD_N(modules); i++)
		n += modules[i]->n;
	ctx->cmds = calloc(n, sizeof(*ctx->cmds));
	if (!ctx->cmds)
		return -ENOMEM;
	ctx->n_cmds = 0;
	for (i = 0; i < CMD_N(modules); i++) {
		memcpy(ctx->cmds + ctx->n_cmds, modules[i]->cmds,
		       modules[i]->n * sizeof(*ctx->cmds));
		ctx->n_cmds += modules[i]->n;
	}
	return 0;
}

void ferryd_commands_fini(struct ferryd_ctx *ctx)
{
	free(ctx->cmds);
	ctx->cmds = NULL;
	ctx->n_cmds = 0;
}

char *ferryd_config_text(struct ferryd_ctx *ctx, const struct cmd_module *skip)
{
	struct ferry_strbuf *b = ferry_strbuf_create();
	size_t i;

	if (!b)
		return NULL;
	ferry_strbuf_printf(b, "# ferryd %s running configuration\n",
			    FERRY_VERSION);
	for (i = 0; i < CMD_N(modules); i++)
		if (modules[i]->config && modules[i] != skip)
			modules[i]->config(ctx, b);
	return ferry_strbuf_take(b);
}
