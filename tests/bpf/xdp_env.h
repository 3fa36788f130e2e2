/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * xdp_env.h - what the classifier's BPF unit tests share (test_xdp,
 * test_acl, test_fib_xdp): loading the real ferry_xdp object, and skipping
 * when it cannot be loaded (not root) except under CI=true, where that
 * fails. Include after cmocka.h.
 */
#ifndef FERRY_TESTS_XDP_ENV_H
#define FERRY_TESTS_XDP_ENV_H

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ferry_xdp.skel.h"

static inline bool xdp_env_ci(void)
{
	const char *v = getenv("CI");

	return v && !strcmp(v, "true");
}

/* The classifier, loaded; NULL (said on stderr) when it cannot be. */
static inline struct ferry_xdp_bpf *xdp_env_load(void)
{
	struct ferry_xdp_bpf *skel = ferry_xdp_bpf__open();

	if (skel) {
		/* The tracepoint program is not under test. */
		bpf_program__set_autoload(skel->progs.ferry_cpumap_enqueue,
					  false);
		if (ferry_xdp_bpf__load(skel)) {
			ferry_xdp_bpf__destroy(skel);
			skel = NULL;
		}
	}
	if (!skel)
		fprintf(stderr, "cannot load ferry_xdp (%s)%s\n",
			strerror(errno),
			xdp_env_ci() ? "" : ": skipping, needs root (CAP_BPF)");
	return skel;
}

/* Skips the test (or fails it under CI) when the classifier is not loaded. */
static inline void xdp_env_require(const struct ferry_xdp_bpf *skel)
{
	if (!skel) {
		if (xdp_env_ci())
			fail_msg("CI=true and the classifier cannot be loaded");
		skip();
	}
}

#endif /* FERRY_TESTS_XDP_ENV_H */
