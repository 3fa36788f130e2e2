// SPDX-License-Identifier: BSD-2-Clause
/*
 * commands.c - the handlers behind ferryd's command table. Each parses and
 * checks all of its arguments before it calls into the dataplane, which
 * checks the rest (names, interfaces, queues) before it changes anything.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_host.h"
#include "cmd_proxy.h"
#include "cmd_sockmap.h"
#include "commands.h"
#include "ferry_abi.h"
#include "ferry.h"
#include "port_dpdk.h"
#include "privs.h"
#include "proxy.h"
#include "server.h"
#include "sockmap.h"
#include "steer.h"
#include "takeover.h"

#define CTX(c) ((struct ferryd_ctx *)(c))
#define F(c)   (CTX(c)->f)

static int need_args(int argc, int min, int max, const char *usage,
		     struct ctl_err *err)
{
	if (argc < min || argc > max)
		return ctl_errf(err, EINVAL, "usage: %s", usage);
	return 0;
}

/* ------------------------------------------------------------- basics */

static int cmd_version(void *ctx, int argc, char **argv, json_t **data,
		       struct ctl_err *err)
{
	if (argc)
		return ctl_errf(err, EINVAL, "usage: version");
	*data = json_pack("{s:s, s:s, s:b}", "ferryd", FERRY_VERSION,
			  "protocol", "1", "dpdk", ferry_dpdk_built());
	return 0;
}

static int cmd_help(void *ctx, int argc, char **argv, json_t **data,
		    struct ctl_err *err)
{
	size_t n;
	const struct ctl_cmd *t = ferryd_commands(&n);

	return ctl_help(t, n, argc, argv, data, err);
}

static int cmd_shutdown(void *ctx, int argc, char **argv, json_t **data,
			struct ctl_err *err)
{
	if (argc)
		return ctl_errf(err, EINVAL, "usage: shutdown");
	CTX(ctx)->stop = 1;
	if (CTX(ctx)->srv)
		ctl_server_stop(CTX(ctx)->srv);
	*data = json_string("shutting down");
	return 0;
}

/*
 * Hot restart, the old daemon's side: `ferryd --takeover` drives these
 * (takeover.h); an operator has no reason to type them.
 */
/*
 * A hot restart hands over ports only: a proxy's listening socket and its
 * flows, and a sockmap attachment, belong to this process. Refused before
 * anything changes, so the old ferryd carries on.
 */
static int handover_refuse_sockets(void *ctx, struct ctl_err *err)
{
	char line[CTL_MAX_LINE] = "", *px;
	bool proxies = false;

	if (CTX(ctx)->proxy) {
		px = ferry_proxy_config_text(CTX(ctx)->proxy);
		proxies = px && px[0];
		free(px);
	}
	if (CTX(ctx)->sm &&
	    ferry_sockmap_config(CTX(ctx)->sm, line, sizeof(line)))
		line[0] = 0;
	if (proxies || line[0])
		return ctl_errf(err, EBUSY,
				"this ferryd runs %s; a takeover hands over "
				"ports only: delete them first",
				proxies ? "splice proxies"
					: "a sockmap attachment");
	return 0;
}

static int cmd_handover(void *ctx, int argc, char **argv, json_t **data,
			struct ctl_err *err)
{
	static const char *const steps[] = {"begin", "release", "commit",
					    "abort", NULL};
	enum { BEGIN, RELEASE, COMMIT, ABORT };
	uint64_t dropped = 0;
	int step, rc;

	if (argc != 1)
		return ctl_errf(err, EINVAL,
				"usage: handover begin|release|commit|abort");
	rc = ctl_parse_choice(argv[0], steps, &step, "step", err);
	if (rc)
		return rc;
	switch (step) {
	case BEGIN:
		rc = handover_refuse_sockets(ctx, err);
		if (rc)
			return rc;
		return ferry_handover_begin(F(ctx), data, err->msg,
					    sizeof(err->msg));
	case RELEASE:
		rc = ferry_handover_release(F(ctx), &dropped, err->msg,
					    sizeof(err->msg));
		if (!rc)
			*data = json_pack("{s:I}", "dropped",
					  (json_int_t)dropped);
		return rc;
	case ABORT:
		rc = ferry_handover_resume(F(ctx), err->msg, sizeof(err->msg));
		break;
	default:
		rc = ferry_handover_commit(F(ctx), err->msg, sizeof(err->msg));
		if (!rc) {
			CTX(ctx)->stop = 1;
			if (CTX(ctx)->srv)
				ctl_server_stop(CTX(ctx)->srv);
		}
		break;
	}
	if (!rc)
		*data = json_string(argv[0]);
	return rc;
}

/* ------------------------------------------------------------ workers */

static const char *const idle_words[] = {"busy", "poll", NULL};

/*
 * Re-applies a saved configuration, minus its `workers` line: how ports
 * come back after the workers under them changed.
 */
static int replay_config(void *ctx, char *text, struct ctl_err *err)
{
	size_t n;
	const struct ctl_cmd *t = ferryd_commands(&n);
	char *line, *save = NULL;

	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		json_t *reply;
		char *out;
		int rc = 0;

		if (!strncmp(line, "workers", 7) || line[0] == '#')
			continue;
		out = ctl_execute(t, n, ctx, line, &rc);
		if (rc) {
			reply = out ? json_loads(out, 0, NULL) : NULL;
			ctl_errf(err, -rc,
				 "workers changed, but '%s' failed: %s", line,
				 json_string_value(json_object_get(
					 json_object_get(reply, "error"),
					 "message"))
					 ?: "?");
			json_decref(reply);
			free(out);
			return rc;
		}
		free(out);
	}
	return 0;
}

static int cmd_workers(void *ctx, int argc, char **argv, json_t **data,
		       struct ctl_err *err)
{
	uint64_t mask;
	int idle = FERRY_IDLE_BUSY, rc;
	char *saved = NULL;

	if (argc != 1 && !(argc == 3 && !strcmp(argv[1], "idle")))
		return ctl_errf(err, EINVAL,
				"usage: workers CPULIST [idle busy|poll]");
	rc = ctl_parse_list(argv[0], &mask, "CPULIST", err);
	if (!rc && argc == 3)
		rc = ctl_parse_choice(argv[2], idle_words, &idle, "idle", err);
	if (!rc)
		rc = ferry_cpus_check(mask, err->msg, sizeof(err->msg));
	if (rc)
		return rc;
	/*
	 * Sockets belong to their worker's UMEM, so new workers mean new
	 * sockets: the ports are drained and deleted, then added again from
	 * the running configuration. Generators are not part of it and stop.
	 */
	if (ferry_port_count(F(ctx))) {
		saved = ferry_config_text(F(ctx));
		if (!saved)
			return -ENOMEM;
		rc = ferry_ports_del_all(F(ctx));
		if (rc) {
			free(saved);
			return ctl_errf(err, -rc,
					"could not delete the ports "
					"to re-plan them (see the "
					"log)");
		}
	}
	rc = ferry_workers_set(F(ctx), mask, (enum ferry_idle)idle, err->msg,
			       sizeof(err->msg));
	/* Even when the new workers failed, bring the ports back (on a
	 * default worker) rather than leave the host without them. */
	if (saved) {
		struct ctl_err rerr = {{0}};
		int rrc = replay_config(ctx, saved, &rerr);

		if (!rc && rrc) {
			rc = rrc;
			*err = rerr;
		}
	}
	free(saved);
	if (rc)
		return rc;
	*data = ferry_worker_show(F(ctx));
	return 0;
}

static int cmd_worker_show(void *ctx, int argc, char **argv, json_t **data,
			   struct ctl_err *err)
{
	if (argc)
		return ctl_errf(err, EINVAL, "usage: worker show");
	*data = ferry_worker_show(F(ctx));
	return 0;
}

/* -------------------------------------------------------------- ports */

static int kw_queues(const char *val, void *dst, struct ctl_err *err)
{
	struct ferry_port_params *pp = dst;
	uint64_t a, b;
	const char *dash = strchr(val, '-');
	char first[32];
	int rc;

	if (!dash) {
		/* N: the first N queues. */
		rc = ctl_parse_u64(val, 1, 64, &a, "queues", err);
		pp->q_first = 0;
		pp->n_queues = (uint32_t)a;
	} else {
		snprintf(first, sizeof(first), "%.*s", (int)(dash - val), val);
		rc = ctl_parse_u64(first, 0, 63, &a, "queues", err);
		if (!rc)
			rc = ctl_parse_u64(dash + 1, a, 63, &b, "queues", err);
		pp->q_first = (uint32_t)a;
		pp->n_queues = (uint32_t)(b - a + 1);
	}
	pp->queues_given = true;
	return rc;
}

static const char *const mode_words[] = {"auto", "zc", "copy", NULL};
static const char *const xdp_words[] = {"native", "generic", NULL};

static int kw_mode(const char *val, void *dst, struct ctl_err *err)
{
	int m, rc = ctl_parse_choice(val, mode_words, &m, "mode", err);

	if (!rc)
		((struct ferry_port_params *)dst)->mode =
			(enum ferry_xsk_mode)m;
	return rc;
}

static int kw_xdp(const char *val, void *dst, struct ctl_err *err)
{
	int m, rc = ctl_parse_choice(val, xdp_words, &m, "xdp", err);

	if (!rc) {
		((struct ferry_port_params *)dst)->xdp_generic = m == 1;
		((struct ferry_port_params *)dst)->xdp_given = true;
	}
	return rc;
}

static const char *const onoff_words[] = {"off", "on", NULL};

static int kw_busy_poll(const char *val, void *dst, struct ctl_err *err)
{
	int m, rc = ctl_parse_choice(val, onoff_words, &m, "busy-poll", err);

	if (!rc)
		((struct ferry_port_params *)dst)->busy_poll = m == 1;
	return rc;
}

static const char *const default_words[] = {"xsk", "pass", NULL};

static int kw_default(const char *val, void *dst, struct ctl_err *err)
{
	int m, rc = ctl_parse_choice(val, default_words, &m, "default", err);

	if (!rc)
		((struct ferry_port_params *)dst)->default_pass = m == 1;
	return rc;
}

static const char *const backend_words[] = {"native", "dpdk", NULL};

static int kw_backend(const char *val, void *dst, struct ctl_err *err)
{
	int m, rc = ctl_parse_choice(val, backend_words, &m, "backend", err);

	if (!rc)
		((struct ferry_port_params *)dst)->dpdk = m == 1;
	return rc;
}

static int kw_xdp_restore(const char *val, void *dst, struct ctl_err *err)
{
	int m, rc = ctl_parse_choice(val, onoff_words, &m, "xdp-restore", err);

	if (!rc)
		((struct ferry_port_params *)dst)->xdp_restore = m == 1;
	return rc;
}

static int kw_dev(const char *val, void *dst, struct ctl_err *err)
{
	((struct ferry_port_params *)dst)->ifname = val;
	return 0;
}

static const char *const via_words[] = {"direct", "cpumap", NULL};

static int kw_spread_cpus(const char *val, void *dst, struct ctl_err *err)
{
	struct ferry_port_params *pp = dst;
	int rc = ctl_parse_list(val, &pp->spread_cpus, "spread cpus", err);

	if (!rc && !pp->spread_cpus)
		return ctl_errf(err, EINVAL, "spread cpus: empty CPU list");
	return rc;
}

static int kw_via(const char *val, void *dst, struct ctl_err *err)
{
	int m, rc = ctl_parse_choice(val, via_words, &m, "via", err);

	if (!rc)
		((struct ferry_port_params *)dst)->spread_via =
			(uint8_t)(m == 0 ? FERRY_SPREAD_DIRECT
					 : FERRY_SPREAD_CPUMAP);
	return rc;
}

#define PORT_ADD_USAGE                                                         \
	"usage: port add NAME dev IFNAME [queues N|A-B] [mode auto|zc|copy] "  \
	"[xdp native|generic] [busy-poll on|off] [default xsk|pass] "          \
	"[spread cpus CPULIST [via direct|cpumap]] [backend native|dpdk] "     \
	"[xdp-restore on|off]"

static int cmd_port_add(void *ctx, int argc, char **argv, json_t **data,
			struct ctl_err *err)
{
	struct ferry_port_params pp = {.mode = FERRY_XSK_AUTO,
				       .spread_via = FERRY_SPREAD_DIRECT};
	const struct ctl_kw kw[] = {
		{"dev", kw_dev, &pp},
		{"queues", kw_queues, &pp},
		{"mode", kw_mode, &pp},
		{"xdp", kw_xdp, &pp},
		{"busy-poll", kw_busy_poll, &pp},
		{"default", kw_default, &pp},
		{"cpus", kw_spread_cpus, &pp},
		{"via", kw_via, &pp},
		{"backend", kw_backend, &pp},
		{"xdp-restore", kw_xdp_restore, &pp},
	};
	int seen[sizeof(kw) / sizeof(kw[0])] = {0};
	char *words[CTL_MAX_ARGS];
	int i, n = 0, rc;
	bool spread = false;

	if (argc < 3)
		return ctl_errf(err, EINVAL, PORT_ADD_USAGE);
	pp.name = argv[0];
	/* "spread" is a fixed word in front of "cpus": drop it. */
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "spread") && !spread) {
			if (i + 1 >= argc || strcmp(argv[i + 1], "cpus"))
				return ctl_errf(err, EINVAL,
						"port add: 'spread' takes "
						"'cpus CPULIST'");
			spread = true;
			continue;
		}
		words[n++] = argv[i];
	}
	rc = ctl_parse_kw(n, words, kw, sizeof(kw) / sizeof(kw[0]), seen, err);
	if (rc)
		return rc;
	if (!spread && (seen[6] || seen[7]))
		return ctl_errf(err, EINVAL,
				"port add: 'cpus' and 'via' belong after "
				"'spread'");
	if (!pp.ifname)
		return ctl_errf(err, EINVAL,
				"port add: 'dev IFNAME' is required");
	rc = ferry_port_add(F(ctx), &pp, err->msg, sizeof(err->msg));
	if (rc)
		return rc;
	*data = ferry_port_show(F(ctx), pp.name, err->msg, sizeof(err->msg));
	return 0;
}

static int cmd_port_del(void *ctx, int argc, char **argv, json_t **data,
			struct ctl_err *err)
{
	int rc = need_args(argc, 1, 1, "port del NAME", err);

	return rc ? rc
		  : ferry_port_del(F(ctx), argv[0], err->msg, sizeof(err->msg));
}

static int cmd_port_show(void *ctx, int argc, char **argv, json_t **data,
			 struct ctl_err *err)
{
	int rc = need_args(argc, 0, 1, "port show [NAME]", err);

	if (rc)
		return rc;
	*data = ferry_port_show(F(ctx), argc ? argv[0] : NULL, err->msg,
				sizeof(err->msg));
	return *data ? 0 : -ENOENT;
}

/* --------------------------------------------------------------- apps */

static int cmd_xconnect_add(void *ctx, int argc, char **argv, json_t **data,
			    struct ctl_err *err)
{
	int rc = need_args(argc, 2, 2, "xconnect add PORT_IN PORT_OUT", err);

	return rc ? rc
		  : ferry_app_set(F(ctx), argv[0], FERRY_APP_XCONNECT, argv[1],
				  err->msg, sizeof(err->msg));
}

static int cmd_xconnect_del(void *ctx, int argc, char **argv, json_t **data,
			    struct ctl_err *err)
{
	int rc = need_args(argc, 1, 1, "xconnect del PORT_IN", err);

	return rc ? rc
		  : ferry_xconnect_del(F(ctx), argv[0], err->msg,
				       sizeof(err->msg));
}

static int cmd_reflect(void *ctx, int argc, char **argv, json_t **data,
		       struct ctl_err *err)
{
	int rc = need_args(argc, 1, 1, "reflect PORT", err);

	return rc ? rc
		  : ferry_app_set(F(ctx), argv[0], FERRY_APP_REFLECT, NULL,
				  err->msg, sizeof(err->msg));
}

static int cmd_drop(void *ctx, int argc, char **argv, json_t **data,
		    struct ctl_err *err)
{
	int rc = need_args(argc, 1, 1, "drop PORT", err);

	return rc ? rc
		  : ferry_app_set(F(ctx), argv[0], FERRY_APP_DROP, NULL,
				  err->msg, sizeof(err->msg));
}

/* ----------------------------------------------------------- steering */

#define STEER_USAGE                                                            \
	"usage: steer add NAME port PORT match [proto tcp|udp|any] "           \
	"[dst PREFIX] [dport N|N-M] to cpus CPULIST [qsize N]"

static const char *const proto_words[] = {"any", "tcp", "udp", NULL};
static const uint8_t proto_nums[] = {0, IPPROTO_TCP, IPPROTO_UDP};

static int kw_steer_port(const char *val, void *dst, struct ctl_err *err)
{
	((struct ferry_steer_params *)dst)->port = val;
	return 0;
}

static int kw_proto(const char *val, void *dst, struct ctl_err *err)
{
	int m, rc = ctl_parse_choice(val, proto_words, &m, "proto", err);

	if (!rc)
		((struct ferry_steer_params *)dst)->match.l4_proto =
			proto_nums[m];
	return rc;
}

/* "192.0.2.0/24", "2001:db8::/32"; no length: a host. */
static int kw_dst(const char *val, void *dst, struct ctl_err *err)
{
	struct ferry_rule *m = &((struct ferry_steer_params *)dst)->match;
	const char *slash = strchr(val, '/');
	char addr[INET6_ADDRSTRLEN];
	uint64_t plen;
	int rc, max;

	if (snprintf(addr, sizeof(addr), "%.*s",
		     (int)(slash ? (size_t)(slash - val) : strlen(val)),
		     val) >= (int)sizeof(addr))
		return ctl_errf(err, EINVAL, "dst: bad prefix '%s'", val);
	memset(m->dst, 0, sizeof(m->dst));
	if (inet_pton(AF_INET, addr, m->dst) == 1) {
		m->family = 4;
		max = 32;
	} else if (inet_pton(AF_INET6, addr, m->dst) == 1) {
		m->family = 6;
		max = 128;
	} else {
		return ctl_errf(err, EINVAL,
				"dst: '%s' is not an IPv4 or IPv6 address",
				addr);
	}
	plen = (uint64_t)max;
	if (slash) {
		rc = ctl_parse_u64(slash + 1, 1, (uint64_t)max, &plen,
				   "dst prefix length", err);
		if (rc)
			return rc;
	}
	m->dst_plen = (uint8_t)plen;
	return 0;
}

static int kw_dport(const char *val, void *dst, struct ctl_err *err)
{
	struct ferry_rule *m = &((struct ferry_steer_params *)dst)->match;
	const char *dash = strchr(val, '-');
	char first[16];
	uint64_t a, b;
	int rc;

	if (!dash) {
		rc = ctl_parse_u64(val, 1, 65535, &a, "dport", err);
		b = a;
	} else {
		snprintf(first, sizeof(first), "%.*s", (int)(dash - val), val);
		rc = ctl_parse_u64(first, 1, 65535, &a, "dport", err);
		if (!rc)
			rc = ctl_parse_u64(dash + 1, a, 65535, &b, "dport",
					   err);
	}
	if (rc)
		return rc;
	m->dport_lo = (uint16_t)a;
	m->dport_hi = (uint16_t)b;
	return 0;
}

static int kw_cpus(const char *val, void *dst, struct ctl_err *err)
{
	return ctl_parse_list(val, &((struct ferry_steer_params *)dst)->cpus,
			      "cpus", err);
}

static int kw_qsize(const char *val, void *dst, struct ctl_err *err)
{
	uint64_t v;
	int rc = ctl_parse_u64(val, FERRY_CPUMAP_QSIZE_MIN,
			       FERRY_CPUMAP_QSIZE_MAX, &v, "qsize", err);

	if (!rc)
		((struct ferry_steer_params *)dst)->qsize = (uint32_t)v;
	return rc;
}

static int cmd_steer_add(void *ctx, int argc, char **argv, json_t **data,
			 struct ctl_err *err)
{
	struct ferry_steer_params sp = {.qsize = FERRY_CPUMAP_QSIZE_DEFAULT};
	const struct ctl_kw kw[] = {
		{"port", kw_steer_port, &sp}, {"proto", kw_proto, &sp},
		{"dst", kw_dst, &sp},	      {"dport", kw_dport, &sp},
		{"cpus", kw_cpus, &sp},	      {"qsize", kw_qsize, &sp},
	};
	int seen[sizeof(kw) / sizeof(kw[0])] = {0};
	char *words[CTL_MAX_ARGS];
	int i, n = 0, rc, match = -1, to = -1;

	if (argc < 1)
		return ctl_errf(err, EINVAL, STEER_USAGE);
	sp.name = argv[0];
	/* The grammar's fixed words: "match" before the match fields, "to"
	 * before "cpus". Drop them and parse the rest as keywords. */
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "match") && match < 0) {
			match = n;
			continue;
		}
		if (!strcmp(argv[i], "to") && to < 0) {
			to = n;
			if (i + 1 >= argc || strcmp(argv[i + 1], "cpus"))
				return ctl_errf(err, EINVAL,
						"'to' must be followed by "
						"'cpus CPULIST'; " STEER_USAGE);
			continue;
		}
		words[n++] = argv[i];
	}
	if (match < 0 || to < 0 || to < match)
		return ctl_errf(err, EINVAL, STEER_USAGE);
	rc = ctl_parse_kw(n, words, kw, sizeof(kw) / sizeof(kw[0]), seen, err);
	if (rc)
		return rc;
	if (!seen[0])
		return ctl_errf(err, EINVAL,
				"steer add: 'port PORT' is required");
	if (!seen[4])
		return ctl_errf(err, EINVAL,
				"steer add: 'to cpus CPULIST' is required");
	rc = ferry_steer_add(F(ctx), &sp, err->msg, sizeof(err->msg));
	if (rc)
		return rc;
	*data = ferry_steer_show(F(ctx), sp.name, err->msg, sizeof(err->msg));
	return 0;
}

static int cmd_steer_del(void *ctx, int argc, char **argv, json_t **data,
			 struct ctl_err *err)
{
	int rc = need_args(argc, 1, 1, "steer del NAME", err);

	return rc ? rc
		  : ferry_steer_del(F(ctx), argv[0], err->msg,
				    sizeof(err->msg));
}

static int cmd_steer_show(void *ctx, int argc, char **argv, json_t **data,
			  struct ctl_err *err)
{
	int rc = need_args(argc, 0, 1, "steer show [NAME]", err);

	if (rc)
		return rc;
	*data = ferry_steer_show(F(ctx), argc ? argv[0] : NULL, err->msg,
				 sizeof(err->msg));
	return *data ? 0 : -ENOENT;
}

/* ---------------------------------------------------------- generator */

static int kw_u64(const char *val, uint64_t min, uint64_t max, void *dst,
		  const char *what, struct ctl_err *err)
{
	return ctl_parse_u64(val, min, max, dst, what, err);
}

static int kw_rate(const char *val, void *dst, struct ctl_err *err)
{
	return kw_u64(val, 0, 100000000,
		      &((struct ferry_gen_params *)dst)->rate, "rate", err);
}

static int kw_count(const char *val, void *dst, struct ctl_err *err)
{
	return kw_u64(val, 0, UINT64_MAX / 2,
		      &((struct ferry_gen_params *)dst)->count, "count", err);
}

static int kw_size(const char *val, void *dst, struct ctl_err *err)
{
	uint64_t v;
	int rc = kw_u64(val, FERRY_GEN_MIN_SIZE, FERRY_GEN_MAX_SIZE, &v, "size",
			err);

	((struct ferry_gen_params *)dst)->size = (uint32_t)v;
	return rc;
}

static int kw_flows(const char *val, void *dst, struct ctl_err *err)
{
	uint64_t v;
	int rc = kw_u64(val, 1, 65535 - FERRY_GEN_SPORT_BASE, &v, "flows", err);

	((struct ferry_gen_params *)dst)->flows = (uint32_t)v;
	return rc;
}

static int kw_dst_mac(const char *val, void *dst, struct ctl_err *err)
{
	return ctl_parse_mac(val, ((struct ferry_gen_params *)dst)->dst_mac,
			     err);
}

static const char *const engine_words[] = {"auto", "live", "xsk", NULL};

static int kw_engine(const char *val, void *dst, struct ctl_err *err)
{
	int m, rc = ctl_parse_choice(val, engine_words, &m, "engine", err);

	if (!rc)
		((struct ferry_gen_params *)dst)->engine =
			(enum ferry_gen_engine)m;
	return rc;
}

static int cmd_gen_start(void *ctx, int argc, char **argv, json_t **data,
			 struct ctl_err *err)
{
	struct ferry_gen_params gp = {
		.size = 64,
		.flows = 1,
		.dst_mac = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
	};
	const struct ctl_kw kw[] = {
		{"rate", kw_rate, &gp},	  {"size", kw_size, &gp},
		{"flows", kw_flows, &gp}, {"dst-mac", kw_dst_mac, &gp},
		{"count", kw_count, &gp}, {"engine", kw_engine, &gp},
	};
	int rc;

	if (argc < 1)
		return ctl_errf(err, EINVAL,
				"usage: gen start PORT [rate PPS] [size BYTES] "
				"[flows N] [dst-mac MAC] [count N] "
				"[engine auto|live|xsk]");
	rc = ctl_parse_kw(argc - 1, argv + 1, kw, sizeof(kw) / sizeof(kw[0]),
			  NULL, err);
	if (rc)
		return rc;
	return ferry_gen_begin(F(ctx), argv[0], &gp, err->msg,
			       sizeof(err->msg));
}

static int cmd_gen_stop(void *ctx, int argc, char **argv, json_t **data,
			struct ctl_err *err)
{
	int rc = need_args(argc, 1, 1, "gen stop PORT", err);

	return rc ? rc
		  : ferry_gen_end(F(ctx), argv[0], err->msg, sizeof(err->msg));
}

/* -------------------------------------------------------------- stats */

static int cmd_stats(void *ctx, int argc, char **argv, json_t **data,
		     struct ctl_err *err)
{
	const char *port = NULL;
	uint64_t w = 0;
	int worker = -1, rc;

	if (argc == 2 && !strcmp(argv[0], "port")) {
		port = argv[1];
	} else if (argc == 2 && !strcmp(argv[0], "worker")) {
		rc = ctl_parse_u64(argv[1], 0, 63, &w, "worker", err);
		if (rc)
			return rc;
		worker = (int)w;
	} else if (argc) {
		return ctl_errf(
			err, EINVAL,
			"usage: stats [port NAME|worker N] | stats reset");
	}
	*data = ferry_stats(F(ctx), port, worker, err->msg, sizeof(err->msg));
	return *data ? 0 : -ENOENT;
}

static int cmd_stats_reset(void *ctx, int argc, char **argv, json_t **data,
			   struct ctl_err *err)
{
	if (argc)
		return ctl_errf(err, EINVAL, "usage: stats reset");
	ferry_stats_reset(F(ctx));
	return 0;
}

static int cmd_metrics(void *ctx, int argc, char **argv, json_t **data,
		       struct ctl_err *err)
{
	char *text;

	if (argc)
		return ctl_errf(err, EINVAL, "usage: metrics");
	text = ferry_metrics(F(ctx));
	if (!text)
		return -ENOMEM;
	*data = json_string(text);
	free(text);
	return 0;
}

/* ------------------------------------------------------------- config */

/* The dataplane's lines, the sockmap attachment, then the proxies';
 * malloc'd. */
static char *config_text(void *ctx)
{
	char line[CTL_MAX_LINE] = "", *base = ferry_config_text(F(ctx));
	char *px = NULL, *out;
	size_t n;

	if (!base)
		return NULL;
	if (CTX(ctx)->sm &&
	    ferry_sockmap_config(CTX(ctx)->sm, line, sizeof(line)))
		line[0] = 0;
	if (CTX(ctx)->proxy) {
		px = ferry_proxy_config_text(CTX(ctx)->proxy);
		if (!px) {
			free(base);
			return NULL;
		}
	}
	n = strlen(base) + strlen(line) + (px ? strlen(px) : 0) + 1;
	out = malloc(n);
	if (out)
		snprintf(out, n, "%s%s%s", base, line, px ? px : "");
	free(base);
	free(px);
	return out;
}

static int cmd_show_config(void *ctx, int argc, char **argv, json_t **data,
			   struct ctl_err *err)
{
	char *text;

	if (argc)
		return ctl_errf(err, EINVAL, "usage: show config");
	text = config_text(ctx);
	if (!text)
		return -ENOMEM;
	*data = json_string(text);
	free(text);
	return 0;
}

static int cmd_save(void *ctx, int argc, char **argv, json_t **data,
		    struct ctl_err *err)
{
	char tmp[4096];
	char *text;
	size_t n;
	FILE *fp;
	int rc = need_args(argc, 1, 1, "save FILE", err), fd;

	if (rc)
		return rc;
	if (snprintf(tmp, sizeof(tmp), "%s.tmpXXXXXX", argv[0]) >=
	    (int)sizeof(tmp))
		return ctl_errf(err, ENAMETOOLONG, "path too long");
	text = config_text(ctx);
	if (!text)
		return -ENOMEM;
	/* Write beside the target and rename: a crash leaves the old file. */
	fd = mkstemp(tmp);
	if (fd < 0) {
		int e = errno;

		/* Root without CAP_DAC_OVERRIDE: say why root may not. */
		if ((e == EACCES || e == EPERM) &&
		    !ferry_privs_have(CAP_DAC_OVERRIDE))
			rc = ctl_errf(err, e,
				      "save %s: %s (ferryd dropped "
				      "CAP_DAC_OVERRIDE after setup; save "
				      "where its user may write)",
				      argv[0], strerror(e));
		else
			rc = ctl_errf(err, e, "save %s: %s", argv[0],
				      strerror(e));
		goto out_text;
	}
	fp = fdopen(fd, "w");
	n = strlen(text);
	if (!fp || fwrite(text, 1, n, fp) != n || fflush(fp) ||
	    fsync(fileno(fp))) {
		rc = ctl_errf(err, errno ? errno : EIO, "save %s: %s", argv[0],
			      strerror(errno ? errno : EIO));
		if (fp)
			fclose(fp);
		else
			close(fd);
		unlink(tmp);
		goto out_text;
	}
	fclose(fp);
	if (rename(tmp, argv[0])) {
		rc = ctl_errf(err, errno, "save %s: %s", argv[0],
			      strerror(errno));
		unlink(tmp);
		goto out_text;
	}
	*data = json_pack("{s:s}", "saved", argv[0]);
out_text:
	free(text);
	return rc;
}

/* --------------------------------------------------------------- host */

static int cmd_host_check(void *ctx, int argc, char **argv, json_t **data,
			  struct ctl_err *err)
{
	uint64_t cpus = ferry_worker_cpus(F(ctx));

	return ctl_host_check(argc, argv, cpus,
			      cpus ? "ferryd's workers"
				   : "no workers yet: "
				     "every online CPU",
			      data, err);
}

/* -------------------------------------------------------------- table */

static const struct ctl_cmd commands[] = {
	{"help", "[COMMAND]", "list commands, or describe one", cmd_help},
	{"version", "", "ferryd and protocol version", cmd_version},
	{"shutdown", "", "detach from every port and exit", cmd_shutdown},
	{"handover", "begin|release|commit|abort",
	 "hot restart, old side (driven by 'ferryd --takeover')", cmd_handover},
	{"workers", "CPULIST [idle busy|poll]",
	 "one pinned polling thread per CPU; existing ports are drained and "
	 "re-added on the new workers (generators stop)",
	 cmd_workers},
	{"worker show", "", "workers, their CPUs, sockets and UMEM",
	 cmd_worker_show},
	{"port add",
	 "NAME dev IFNAME [queues N|A-B] [mode auto|zc|copy] "
	 "[xdp native|generic] [busy-poll on|off] [default xsk|pass] "
	 "[spread cpus CPULIST [via direct|cpumap]] [backend native|dpdk] "
	 "[xdp-restore on|off]",
	 "attach ferry to an interface: XDP classifier and one AF_XDP socket "
	 "per queue (queues N: the first N; default: where frames no rule "
	 "matches go, the queue's socket or the kernel; spread: software "
	 "RSS, one queue's frames over the workers on CPULIST by flow hash, "
	 "copy mode, drop and reflect only; backend dpdk: the queues are a "
	 "DPDK af_xdp PMD ethdev; xdp-restore: put ferry's program back when "
	 "another tool replaces or removes it)",
	 cmd_port_add},
	{"port del", "NAME", "drain a port, detach and close it", cmd_port_del},
	{"port show", "[NAME]", "ports: queues, mode obtained, XDP, UMEM, app",
	 cmd_port_show},
	{"xconnect add", "PORT_IN PORT_OUT",
	 "send every frame received on PORT_IN out of PORT_OUT",
	 cmd_xconnect_add},
	{"xconnect del", "PORT_IN", "remove PORT_IN's xconnect",
	 cmd_xconnect_del},
	{"reflect", "PORT", "swap MACs and send frames back out of PORT",
	 cmd_reflect},
	{"drop", "PORT", "count and drop every frame received on PORT",
	 cmd_drop},
	{"steer add",
	 "NAME port PORT match [proto tcp|udp|any] [dst PREFIX] "
	 "[dport N|N-M] to cpus CPULIST [qsize N]",
	 "steer PORT's frames that match to the kernel stack on one of "
	 "CPULIST, "
	 "chosen by a symmetric flow hash (rules are per port, since each "
	 "port has its own classifier; checked in the order added, first "
	 "match wins; qsize: CPUMAP queue, 1-16384, default 2048)",
	 cmd_steer_add},
	{"steer del", "NAME",
	 "delete a steering rule; its frames take the port's default path",
	 cmd_steer_del},
	{"steer show", "[NAME]",
	 "steering rules with per-CPU steered/processed counters",
	 cmd_steer_show},
	{"sockmap attach", CMD_SOCKMAP_ATTACH_ARGS,
	 "accelerate local TCP flows of the processes in a cgroup v2 (not "
	 "the root): established loopback sockets whose port is in LIST go "
	 "into a SOCKHASH and each send is redirected to the peer's ingress; "
	 "verdict auto: permanent where the kernel has BPF_F_PERMANENT, else "
	 "apply-bytes (one verdict per 4 GiB); per-message is a diagnostic "
	 "baseline",
	 cmd_sockmap_attach},
	{"sockmap detach", "",
	 "stop accelerating: no new sockets, live flows back to plain TCP "
	 "(a socket with redirected data queued stays until it closes)",
	 cmd_sockmap_detach},
	{"sockmap show", "",
	 "the attachment, the verdict mechanism in use, the BPF_F_PERMANENT "
	 "probe, and per flow direction its verdict runs and bytes",
	 cmd_sockmap_show},
	{"gen start",
	 "PORT [rate PPS] [size BYTES] [flows N] [dst-mac MAC] [count N] "
	 "[engine auto|live|xsk]",
	 "generate UDP frames out of PORT (rate 0: as fast as possible; "
	 "engine: BPF live frames, or the port's AF_XDP TX ring)",
	 cmd_gen_start},
	{"gen stop", "PORT", "stop PORT's generator", cmd_gen_stop},
	{"stats", "[port NAME|worker N]",
	 "counters and rates per port, queue and worker", cmd_stats},
	{"stats reset", "", "start counting from zero (kernel counters kept)",
	 cmd_stats_reset},
	{"metrics", "", "counters in Prometheus text format", cmd_metrics},
	{"show config", "", "the running configuration as commands",
	 cmd_show_config},
	{"save", "FILE", "write the running configuration to FILE", cmd_save},
	{"host check", HOST_CHECK_ARGS, HOST_CHECK_HELP, cmd_host_check},
	{"proxy add", CMD_PROXY_ADD_ARGS,
	 "TCP splice proxy: accept clients on listen, connect each to backend "
	 "and move bytes between the two sockets in the kernel (sk_skb); "
	 "limit: bytes queued per flow and direction before the sender is "
	 "paused (65536-1073741824, default 4194304). The backend is not "
	 "probed: a client whose backend connection fails is reset and "
	 "counted",
	 cmd_proxy_add},
	{"proxy del", "NAME",
	 "stop accepting; established flows run to completion", cmd_proxy_del},
	{"proxy show", "[NAME]",
	 "proxies with their flows, byte counters, pauses and queued bytes",
	 cmd_proxy_show},
};

const struct ctl_cmd *ferryd_commands(size_t *n)
{
	*n = sizeof(commands) / sizeof(commands[0]);
	return commands;
}
