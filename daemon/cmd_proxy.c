// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_proxy.c - `proxy add|del|show`: argument checks, then the proxy
 * object (dataplane/proxy.c) under its lock.
 */
#include <errno.h>
#include <string.h>

#include "cmd_proxy.h"
#include "commands.h"
#include "proxy.h"

#define PX(c) (((struct ferryd_ctx *)(c))->proxy)

static int kw_addr(const char *val, void *dst, struct ctl_err *err)
{
	return ferry_proxy_addr_parse(val, dst, err->msg, sizeof(err->msg));
}

static int kw_limit(const char *val, void *dst, struct ctl_err *err)
{
	return ctl_parse_u64(val, FERRY_PROXY_LIMIT_MIN, FERRY_PROXY_LIMIT_MAX,
			     dst, "limit", err);
}

static int kw_coalesce(const char *val, void *dst, struct ctl_err *err)
{
	uint64_t v;
	int rc = ctl_parse_u64(val, 0, FERRY_PROXY_COALESCE_MAX, &v, "coalesce",
			       err);

	if (!rc)
		*(uint32_t *)dst = (uint32_t)v;
	return rc;
}

int cmd_proxy_add(void *ctx, int argc, char **argv, json_t **data,
		  struct ctl_err *err)
{
	struct ferry_proxy_params pp = {
		.limit = FERRY_PROXY_LIMIT_DEFAULT,
		.coalesce = FERRY_PROXY_COALESCE_DEFAULT,
	};
	const struct ctl_kw kw[] = {
		{"listen", kw_addr, &pp.listen},
		{"backend", kw_addr, &pp.backend},
		{"limit", kw_limit, &pp.limit},
		{"coalesce", kw_coalesce, &pp.coalesce},
	};
	int seen[sizeof(kw) / sizeof(kw[0])] = {0};
	int rc;

	if (argc < 1)
		return ctl_errf(err, EINVAL,
				"usage: proxy add " CMD_PROXY_ADD_ARGS);
	pp.name = argv[0];
	rc = ctl_parse_kw(argc - 1, argv + 1, kw, sizeof(kw) / sizeof(kw[0]),
			  seen, err);
	if (rc)
		return rc;
	if (!seen[0] || !seen[1])
		return ctl_errf(err, EINVAL,
				"proxy add: 'listen ADDR:PORT' and 'backend "
				"ADDR:PORT' are required");
	if (!PX(ctx))
		return ctl_errf(err, ENOTSUP, "this ferryd has no proxy");
	rc = ferry_proxy_add(PX(ctx), &pp, err->msg, sizeof(err->msg));
	if (rc)
		return rc;
	*data = ferry_proxy_show(PX(ctx), pp.name, err->msg, sizeof(err->msg));
	return 0;
}

int cmd_proxy_del(void *ctx, int argc, char **argv, json_t **data,
		  struct ctl_err *err)
{
	if (argc != 1)
		return ctl_errf(err, EINVAL, "usage: proxy del NAME");
	if (!PX(ctx))
		return ctl_errf(err, ENOTSUP, "this ferryd has no proxy");
	return ferry_proxy_del(PX(ctx), argv[0], err->msg, sizeof(err->msg));
}

int cmd_proxy_show(void *ctx, int argc, char **argv, json_t **data,
		   struct ctl_err *err)
{
	if (argc > 1)
		return ctl_errf(err, EINVAL, "usage: proxy show [NAME]");
	if (!PX(ctx))
		return ctl_errf(err, ENOTSUP, "this ferryd has no proxy");
	*data = ferry_proxy_show(PX(ctx), argc ? argv[0] : NULL, err->msg,
				 sizeof(err->msg));
	return *data ? 0 : -ENOENT;
}
