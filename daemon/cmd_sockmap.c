// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_sockmap.c - `sockmap attach|detach|show`: arguments are parsed and
 * checked here, the rest (cgroup, kernel support) by dataplane/sockmap.c,
 * before anything is attached.
 */
#include <errno.h>
#include <string.h>

#include "cmd_sockmap.h"
#include "commands.h"
#include "sockmap.h"

#define SM(c) (((struct ferryd_ctx *)(c))->sm)

static int kw_cgroup(const char *val, void *dst, struct ctl_err *err)
{
	((struct ferry_sockmap_params *)dst)->cgroup = val;
	return 0;
}

static int kw_ports(const char *val, void *dst, struct ctl_err *err)
{
	struct ferry_sockmap_params *p = dst;

	return ferry_sockmap_parse_ports(val, p->ranges, &p->n_ranges, err->msg,
					 sizeof(err->msg));
}

static int kw_verdict(const char *val, void *dst, struct ctl_err *err)
{
	if (ferry_sockmap_mode_parse(
		    val, &((struct ferry_sockmap_params *)dst)->mode))
		return ctl_errf(err, EINVAL,
				"verdict: '%s' is not one of auto, permanent, "
				"apply-bytes, per-message",
				val);
	return 0;
}

int cmd_sockmap_attach(void *ctx, int argc, char **argv, json_t **data,
		       struct ctl_err *err)
{
	struct ferry_sockmap_params p = {.mode = FERRY_SM_MODE_AUTO};
	const struct ctl_kw kw[] = {
		{"cgroup", kw_cgroup, &p},
		{"ports", kw_ports, &p},
		{"verdict", kw_verdict, &p},
	};
	int seen[sizeof(kw) / sizeof(kw[0])] = {0};
	int rc;

	rc = ctl_parse_kw(argc, argv, kw, sizeof(kw) / sizeof(kw[0]), seen,
			  err);
	if (rc)
		return rc;
	if (!seen[0] || !p.cgroup[0])
		return ctl_errf(
			err, EINVAL,
			"usage: sockmap attach " CMD_SOCKMAP_ATTACH_ARGS);
	rc = ferry_sockmap_attach(SM(ctx), &p, err->msg, sizeof(err->msg));
	if (rc)
		return rc;
	*data = ferry_sockmap_show(SM(ctx));
	return 0;
}

int cmd_sockmap_detach(void *ctx, int argc, char **argv, json_t **data,
		       struct ctl_err *err)
{
	if (argc)
		return ctl_errf(err, EINVAL, "usage: sockmap detach");
	return ferry_sockmap_detach(SM(ctx), data, err->msg, sizeof(err->msg));
}

int cmd_sockmap_show(void *ctx, int argc, char **argv, json_t **data,
		     struct ctl_err *err)
{
	if (argc)
		return ctl_errf(err, EINVAL, "usage: sockmap show");
	*data = ferry_sockmap_show(SM(ctx));
	return *data ? 0 : -ENOMEM;
}
