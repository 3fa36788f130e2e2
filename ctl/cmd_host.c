// SPDX-License-Identifier: BSD-2-Clause
/* cmd_host.c - the `host check` handler, shared by ferryd and ferryctl. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd_host.h"
#include "hostcheck.h"

static int kw_cpus(const char *val, void *dst, struct ferry_err *err)
{
	return ctl_parse_list(val, dst, "cpus", err);
}

int ctl_host_check(int argc, char **argv, uint64_t dflt_cpus,
		   const char *cpus_from, json_t **data, struct ferry_err *err)
{
	struct ferry_hostcheck_params hp = {.cpus = dflt_cpus,
					    .cpus_from = cpus_from};
	uint64_t cpus = 0;
	const struct ctl_kw kw[] = {{"cpus", kw_cpus, &cpus}};
	int seen[1] = {0}, rc;

	/* An optional IFNAME first: any word that is not a keyword. */
	if (argc && strcmp(argv[0], "cpus")) {
		hp.ifname = argv[0];
		argc--;
		argv++;
	}
	rc = ctl_parse_kw(argc, argv, kw, 1, seen, err);
	if (rc) {
		char why[sizeof(err->msg)];

		snprintf(why, sizeof(why), "%s", err->msg);
		return ferry_fail(err, rc, "%s; usage: host check %s", why,
				  HOST_CHECK_ARGS);
	}
	if (seen[0]) {
		hp.cpus = cpus;
		hp.cpus_from = "given";
	}
	*data = ferry_host_check(&hp, &rc, err);
	return *data ? 0 : rc;
}
