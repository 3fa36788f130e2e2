// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_handover.c - hot restart, the old daemon's side: `ferryd --takeover`
 * drives `handover begin|release|commit|abort` (takeover.h); an operator
 * has no reason to type them.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "capture_ctl.h"
#include "cmd.h"
#include "ferry.h"
#include "proxy.h"
#include "rt.h"
#include "server.h"
#include "sockmap.h"
#include "takeover.h"

enum { BEGIN, RELEASE, COMMIT, ABORT, PASS, OFFER };

/* offer: begin, and the UMEM files with it (for a successor that reads
 * descriptors: `ferryd --takeover`) */
static const char *const step_words[] = {"begin", "release", "commit", "abort",
					 "pass",  "offer",   NULL};

struct handover_params {
	uint32_t step;
};

static const struct ctl_opt handover_rows[] = {
	{.kind = CTL_OPT_WORD,
	 .flags = CTL_OPT_POSITIONAL | CTL_OPT_REQUIRED,
	 .size = sizeof(uint32_t),
	 .words = step_words,
	 .metavar = NULL,
	 .help = "the step"},
};

static const struct ctl_syntax handover_syntax = {
	CTL_OPTS(handover_rows),
	.size = sizeof(struct handover_params),
	.command = "handover",
};

/*
 * A hot restart hands over ports only: a proxy's listening socket and its
 * flows, and a sockmap attachment, belong to this process. Refused before
 * anything changes, so the old ferryd carries on.
 */
static int refuse_sockets(struct ferryd_ctx *ctx, struct ferry_err *err)
{
	struct ferry_sockmap_params smp;
	int proxies = ctx->proxy ? ferry_proxy_count(ctx->proxy) : 0;
	int attached = ctx->sm && ferry_sockmap_get(ctx->sm, &smp) == 0;

	if (proxies || attached)
		return ferry_fail(err, -EBUSY,
				  "this ferryd runs %s; a takeover hands over "
				  "ports only: delete them first",
				  proxies ? "splice proxies"
					  : "a sockmap attachment");
	return 0;
}

static int send_fds(struct ferryd_ctx *ctx, const int *fds, int n);

/*
 * {"pid","config","progs","pass","umems","captures"}: the successor replays
 * the configuration, and maps the UMEM files (sent ahead of the reply)
 * while this daemon still forwards.
 */
static int begin(struct ferryd_ctx *ctx, json_t **data, bool offer,
		 struct ferry_err *err)
{
	int fds[FERRY_HANDOVER_MAX_FDS], n = 0;
	json_t *umems = NULL, *captures;
	char *text;
	int rc = refuse_sockets(ctx, err);

	if (!rc)
		rc = ferry_handover_begin(ctx->f, offer, data, err);
	if (rc)
		return rc;
	if (offer && (ferry_handover_umems(ctx->f, &umems, fds, &n) ||
		      json_object_set_new(*data, "umems", umems) ||
		      send_fds(ctx, fds, n))) {
		json_decref(*data);
		*data = NULL;
		return ferry_fail(err, -EIO, "sending the UMEM files failed");
	}
	/* Not in the configuration and not handed over (the commit ends
	 * them): named, so that the successor can say so. */
	captures = ferry_capture_show(ctx->f);
	text = ferryd_config_text(ctx, NULL);
	if (!text || !captures ||
	    json_object_set_new(*data, "captures", captures) ||
	    json_object_set_new(*data, "config", json_string(text))) {
		free(text);
		json_decref(*data);
		*data = NULL;
		return -ENOMEM;
	}
	free(text);
	return 0;
}

/*
 * The descriptors go ahead of the reply, on one newline byte (the reply
 * names them by their index here); the successor reads that byte with
 * recvmsg, then the reply as usual.
 */
static int send_fds(struct ferryd_ctx *ctx, const int *fds, int n)
{
	char nl = '\n';
	struct iovec iov = {.iov_base = &nl, .iov_len = 1};
	union {
		char buf[CMSG_SPACE(sizeof(int) * FERRY_HANDOVER_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *c;
	int fd = ctl_server_conn_fd(ctx->srv);

	if (fd < 0)
		return fd;
	if (n) {
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)n);
	}
	return sendmsg(fd, &mh, MSG_NOSIGNAL) == 1 ? 0 : -errno;
}

/* The sockets themselves, not a rebuild (takeover_rings.c). */
static int pass(struct ferryd_ctx *ctx, json_t **data, struct ferry_err *err)
{
	int fds[FERRY_HANDOVER_MAX_FDS], n = 0, rc;
	struct ferry_err ignored;
	struct ferry_rt rt = {0};

	rc = refuse_sockets(ctx, err);
	if (rc)
		return rc;
	/* Whatever follows (the pass, or the rebuild's release), the
	 * generators end here, said in the log. */
	ferry_handover_gens_end(ctx->f);
	/* Parked to sent without waiting for a CPU (rt.h); without
	 * CAP_SYS_NICE at the usual priority. */
	ferry_rt_raise(&rt);
	rc = ferry_handover_pass(ctx->f, data, fds, &n, err);
	if (!rc)
		rc = send_fds(ctx, fds, n);
	ferry_rt_restore(&rt);
	if (rc && !*data)
		return rc;
	if (rc) {
		json_decref(*data);
		*data = NULL;
		ferry_handover_resume(ctx->f, &ignored);
		return ferry_fail(err, rc, "sending the sockets: %s",
				  strerror(-rc));
	}
	return 0;
}

static int cmd_handover(void *ctx, int argc, char **argv, json_t **data,
			struct ferry_err *err)
{
	struct handover_params p;
	uint64_t dropped = 0;
	int rc = cmd_parse(&handover_syntax, argc, argv, &p, err);

	if (rc)
		return rc;
	switch (p.step) {
	case BEGIN:
		return begin(CMD_CTX(ctx), data, false, err);
	case OFFER:
		return begin(CMD_CTX(ctx), data, true, err);
	case RELEASE:
		rc = ferry_handover_release(CMD_F(ctx), &dropped, err);
		if (!rc)
			*data = json_pack("{s:I}", "dropped",
					  (json_int_t)dropped);
		return rc;
	case PASS:
		return pass(CMD_CTX(ctx), data, err);
	case ABORT:
		rc = ferry_handover_resume(CMD_F(ctx), err);
		break;
	default:
		rc = ferry_handover_commit(CMD_F(ctx), err);
		if (!rc) {
			CMD_CTX(ctx)->stop = 1;
			if (CMD_CTX(ctx)->srv)
				ctl_server_stop(CMD_CTX(ctx)->srv);
		}
		break;
	}
	if (!rc)
		*data = json_string(step_words[p.step]);
	return rc;
}

static const struct ctl_cmd handover_cmds[] = {
	{"handover", NULL,
	 "hot restart, old side (driven by 'ferryd --takeover')", cmd_handover,
	 &handover_syntax},
};

const struct cmd_module cmd_handover_module = {
	.name = "handover",
	.cmds = handover_cmds,
	.n = CMD_N(handover_cmds),
};
