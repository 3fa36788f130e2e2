// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_capture.c - `capture start|stop|show`: arguments parsed here, the
 * capture made and wired into the workers by dataplane/core/capture_ctl.c.
 * Captures are runtime state: `show config` and `save` leave them out.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "capture.h"
#include "capture_ctl.h"
#include "cmd.h"
#include "server.h"

struct cap_params {
	const char *name;
	const char *port;
	uint64_t dirs;
	const char *filter;
	uint64_t snaplen, count, rate;
	uint64_t cpu;
	bool cpu_given;
	const char *file;
};

static const char *const dir_words[] = {"rx", "tx", "both", NULL};
static const uint64_t dir_vals[] = {FERRY_CAP_DIR_BIT(FERRY_CAP_RX),
				    FERRY_CAP_DIR_BIT(FERRY_CAP_TX),
				    FERRY_CAP_BOTH};

/* The rows start and stream share, after their first ones. */
/* clang-format off */
#define CAP_COMMON_ROWS                                                        \
	{"dir", CTL_OPT_WORD, 0, .off = offsetof(struct cap_params, dirs),     \
	 .size = sizeof(uint64_t), .words = dir_words, .vals = dir_vals,       \
	 .help = "rx as received, tx as sent (after any rewrite)"},            \
	{"filter", CTL_OPT_STRING, 0,                                          \
	 .off = offsetof(struct cap_params, filter),                           \
	 .size = sizeof(const char *), .metavar = "EXPR",                      \
	 .help = "a pcap filter (tcpdump's), in double quotes"},               \
	{"snaplen", CTL_OPT_U64, 0,                                            \
	 .off = offsetof(struct cap_params, snaplen),                          \
	 .size = sizeof(uint64_t), .min = 14, .max = 262144, .metavar = "N",   \
	 .help = "bytes kept per frame (default 65535)"},                      \
	{"count", CTL_OPT_U64, 0, .off = offsetof(struct cap_params, count),   \
	 .size = sizeof(uint64_t), .min = 0, .max = UINT64_MAX / 2,            \
	 .metavar = "N", .help = "stop after N frames (0: no limit)"},         \
	{"rate", CTL_OPT_U64, 0, .off = offsetof(struct cap_params, rate),     \
	 .size = sizeof(uint64_t), .min = 0, .max = 100000000,                 \
	 .metavar = "PPS", .help = "frames per second at most (0: no cap)"},  \
	{"cpu", CTL_OPT_U64, CTL_OPT_GIVEN,                                    \
	 .off = offsetof(struct cap_params, cpu), .size = sizeof(uint64_t),   \
	 .max = 1023, .metavar = "N",                                          \
	 .given_off = offsetof(struct cap_params, cpu_given),                  \
	 .help = "the CPU of the capture's threads (default: the CPUs no "     \
		 "worker is pinned to)"}

static const struct ctl_opt start_rows[] = {
	{NULL, CTL_OPT_NAME, CTL_OPT_POSITIONAL | CTL_OPT_REQUIRED,
	 .off = offsetof(struct cap_params, name), .size = sizeof(const char *),
	 .metavar = "NAME", .help = "the capture's name"},
	{"port", CTL_OPT_NAME, CTL_OPT_REQUIRED,
	 .off = offsetof(struct cap_params, port), .size = sizeof(const char *),
	 .metavar = "PORT", .values = CTL_VAL_PORT, .help = "the port watched"},
	CAP_COMMON_ROWS,
	{"file", CTL_OPT_STRING, CTL_OPT_REQUIRED,
	 .off = offsetof(struct cap_params, file), .size = sizeof(const char *),
	 .metavar = "PATH", .values = CTL_VAL_FILE,
	 .help = "the pcapng file the daemon writes"},
};

/* `capture stream` (ferryctl capture PORT ... -w): no name, no file. */
static const struct ctl_opt stream_rows[] = {
	{NULL, CTL_OPT_NAME, CTL_OPT_POSITIONAL | CTL_OPT_REQUIRED,
	 .off = offsetof(struct cap_params, port), .size = sizeof(const char *),
	 .metavar = "PORT", .values = CTL_VAL_PORT, .help = "the port watched"},
	CAP_COMMON_ROWS,
};
/* clang-format on */

static const struct cap_params start_dflt = {
	.dirs = FERRY_CAP_DIR_BIT(FERRY_CAP_RX),
};

static const struct ctl_syntax start_syntax = {
	CTL_OPTS(start_rows),
	.size = sizeof(struct cap_params),
	.dflt = &start_dflt,
	.command = "capture start",
};

static const struct ctl_syntax stream_syntax = {
	CTL_OPTS(stream_rows),
	.size = sizeof(struct cap_params),
	.dflt = &start_dflt,
	.command = "capture stream",
};

static const struct ctl_opt stop_rows[] = {
	{NULL, CTL_OPT_NAME, CTL_OPT_POSITIONAL | CTL_OPT_REQUIRED,
	 .off = offsetof(struct cap_params, name), .size = sizeof(const char *),
	 .metavar = "NAME", .help = "the capture's name"},
};

static const struct ctl_syntax stop_syntax = {
	CTL_OPTS(stop_rows),
	.size = sizeof(struct cap_params),
	.command = "capture stop",
};

static int cmd_capture_start(void *ctx, int argc, char **argv, json_t **data,
			     struct ferry_err *err)
{
	struct cap_params p;
	struct ferry_cap_req r = {.fd = -1};
	int rc = cmd_parse(&start_syntax, argc, argv, &p, err);

	if (rc)
		return rc;
	r.name = p.name;
	r.port = p.port;
	r.dirs = (unsigned)p.dirs;
	r.filter = p.filter;
	r.snaplen = (uint32_t)p.snaplen;
	r.count = p.count;
	r.rate_pps = p.rate;
	r.cpu = p.cpu_given ? (int)p.cpu : -1;
	r.path = p.file;
	rc = ferry_capture_start(CMD_F(ctx), &r, err);
	if (rc)
		return rc;
	*data = ferry_capture_show(CMD_F(ctx));
	return *data ? 0 : -ENOMEM;
}

/*
 * The pcapng stream goes to the client's own connection: no reply line on
 * success, the stream starts at once (ferryctl tells it from a JSON error
 * by its first byte); the capture ends when the client goes away.
 */
static int cmd_capture_stream(void *ctx, int argc, char **argv, json_t **data,
			      struct ferry_err *err)
{
	struct cap_params p;
	struct ferry_cap_req r = {0};
	char name[FERRY_CAP_NAME_MAX];
	int rc = cmd_parse(&stream_syntax, argc, argv, &p, err), fd;

	(void)data;
	if (rc)
		return rc;
	fd = ctl_server_conn_take(CMD_CTX(ctx)->srv);
	if (fd < 0)
		return ferry_fail(err, fd,
				  "capture stream: needs a client connection "
				  "(ferryctl capture PORT -w FILE|-)");
	/* Unique while it runs: the capture holds the fd open. */
	snprintf(name, sizeof(name), "stream-%d", fd);
	r.name = name;
	r.port = p.port;
	r.dirs = (unsigned)p.dirs;
	r.filter = p.filter;
	r.snaplen = (uint32_t)p.snaplen;
	r.count = p.count;
	r.rate_pps = p.rate;
	r.cpu = p.cpu_given ? (int)p.cpu : -1;
	r.fd = fd;
	r.own_fd = true;
	return ferry_capture_start(CMD_F(ctx), &r, err);
}

static int cmd_capture_stop(void *ctx, int argc, char **argv, json_t **data,
			    struct ferry_err *err)
{
	struct cap_params p;
	int rc = cmd_parse(&stop_syntax, argc, argv, &p, err);

	(void)data;
	if (rc)
		return rc;
	return ferry_capture_stop_name(CMD_F(ctx), p.name, err);
}

static int cmd_capture_show(void *ctx, int argc, char **argv, json_t **data,
			    struct ferry_err *err)
{
	(void)argv;
	if (argc)
		return ferry_fail(err, -EINVAL, "usage: capture show");
	*data = ferry_capture_show(CMD_F(ctx));
	return *data ? 0 : -ENOMEM;
}

static const struct ctl_cmd capture_cmds[] = {
	{"capture start", NULL,
	 "capture a port's frames to a pcapng file written by the daemon: rx "
	 "as received, tx as sent, frames the workers drop with the reason "
	 "in their comment; one capture per port and direction. Captures "
	 "are runtime state: show config and save leave them out",
	 cmd_capture_start, &start_syntax},
	{"capture stream", NULL,
	 "what ferryctl capture PORT -w FILE|- sends: the same capture, its "
	 "pcapng streamed on this connection until the client goes away",
	 cmd_capture_stream, &stream_syntax},
	{"capture stop", NULL,
	 "end a capture: what was copied is written, the file closed",
	 cmd_capture_stop, &stop_syntax},
	{"capture show", "",
	 "the running captures: frames matched, written, and copies dropped "
	 "by reason (ring full: the writer was behind; rate; count; output)",
	 cmd_capture_show},
};

const struct cmd_module cmd_capture_module = {
	.name = "capture",
	.cmds = capture_cmds,
	.n = CMD_N(capture_cmds),
};
