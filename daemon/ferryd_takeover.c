// SPDX-License-Identifier: BSD-2-Clause
/* ferryd_takeover.c - the new daemon's side of a hot restart. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "ferry.h"
#include "ferryd_takeover.h"
#include "log.h"
#include "takeover.h"
#include "util.h"

/* An old daemon that does not answer within this is taken as stuck. */
#define REPLY_TIMEOUT_MS 10000

struct ferryd_takeover {
	int fd;
	uint32_t old_pid;
	char *config; /* the old daemon's running configuration */
	uint64_t release_ns;
	/* its programs by interface, as it named them (an older ferryd
	 * names none: then only its pins in bpffs recognise them) */
	struct ferry_adopt_prog progs[FERRY_MAX_PORTS];
	int n_progs;
};

/*
 * One command to the old daemon; 0 with *data (a new reference, may be
 * NULL) or -errno with msg.
 */
static int request(struct ferryd_takeover *t, const char *line, json_t **data,
		   struct ferry_err *msg)
{
	char buf[64];
	char *reply = NULL;
	json_t *j, *err;
	int rc;

	snprintf(buf, sizeof(buf), "%s\n", line);
	rc = client_send_all(t->fd, buf, strlen(buf));
	if (!rc) {
		rc = client_wait_readable(t->fd, REPLY_TIMEOUT_MS, NULL);
		rc = rc == 0 ? -ETIMEDOUT : rc < 0 ? rc : 0;
	}
	if (!rc)
		rc = client_read_reply(t->fd, &reply, NULL);
	if (rc)
		return ferry_fail(msg, rc, "'%s' to the old ferryd: %s", line,
				  strerror(-rc));
	j = json_loads(reply, 0, NULL);
	free(reply);
	if (!j)
		return ferry_fail(msg, -EPROTO,
				  "'%s': the old ferryd's reply is not JSON",
				  line);
	if (!json_is_true(json_object_get(j, "ok"))) {
		err = json_object_get(j, "error");
		ferry_fail(msg, -EPROTO, "old ferryd refused '%s': %s", line,
			   json_string_value(json_object_get(err, "message"))
				   ?: "?");
		json_decref(j);
		return -EPROTO;
	}
	if (data)
		*data = json_incref(json_object_get(j, "data"));
	json_decref(j);
	return 0;
}

struct ferryd_takeover *ferryd_takeover_connect(const char *path,
						struct ferry_err *msg)
{
	struct ferryd_takeover *t = calloc(1, sizeof(*t));
	json_t *data = NULL, *prog;
	const char *config;
	json_int_t pid;
	size_t i;

	if (!t) {
		ferry_fail(msg, -ENOMEM, "out of memory");
		return NULL;
	}
	t->fd = client_connect(path);
	if (t->fd < 0) {
		ferry_fail(msg, t->fd, "no ferryd to take over from on %s (%s)",
			   path, strerror(-t->fd));
		goto err_free;
	}
	if (request(t, "handover begin", &data, msg))
		goto err_fd;
	pid = json_integer_value(json_object_get(data, "pid"));
	config = json_string_value(json_object_get(data, "config"));
	if (pid <= 0 || !config) {
		ferry_fail(msg, -EPROTO,
			   "the old ferryd's 'handover begin' reply lacks "
			   "pid or config");
		goto err_data;
	}
	t->old_pid = (uint32_t)pid;
	t->config = strdup(config);
	json_array_foreach(json_object_get(data, "progs"), i, prog)
	{
		if (t->n_progs >= FERRY_MAX_PORTS)
			break;
		t->progs[t->n_progs++] = (struct ferry_adopt_prog){
			.ifindex = (int)json_integer_value(
				json_object_get(prog, "ifindex")),
			.prog_id = (uint32_t)json_integer_value(
				json_object_get(prog, "prog_id")),
		};
	}
	json_decref(data);
	if (!t->config) {
		ferry_fail(msg, -ENOMEM, "out of memory");
		goto err_fd;
	}
	log_info("takeover: ferryd pid %u on %s hands over", t->old_pid, path);
	return t;

err_data:
	json_decref(data);
err_fd:
	close(t->fd);
err_free:
	free(t);
	return NULL;
}

static int release(void *arg, struct ferry_err *msg)
{
	struct ferryd_takeover *t = arg;
	json_t *data = NULL;
	int rc;

	t->release_ns = ferry_now_ns();
	rc = request(t, "handover release", &data, msg);
	if (!rc)
		log_info("takeover: the old ferryd's sockets dropped %lld "
			 "frame(s) since its last stats reset",
			 (long long)json_integer_value(
				 json_object_get(data, "dropped")));
	json_decref(data);
	return rc;
}

int ferryd_takeover_run(struct ferryd_takeover *t, struct ferryd_ctx *ctx,
			struct ferry_err *msg)
{
	char *text = strdup(t->config), *line, *save = NULL;
	int rc = 0;

	if (!text)
		return ferry_fail(msg, -ENOMEM, "out of memory");
	ferry_takeover_start(ctx->f, t->old_pid, t->progs, t->n_progs, release,
			     t);
	for (line = strtok_r(text, "\n", &save); line && !rc;
	     line = strtok_r(NULL, "\n", &save)) {
		struct ferry_err why;

		rc = ctl_execute_err(ctx->cmds, ctx->n_cmds, ctx, line, &why);
		if (rc)
			ferry_fail(msg, rc, "'%s': %s", line, why.msg);
	}
	free(text);
	if (!rc)
		rc = ferry_takeover_activate(ctx->f, msg);
	if (!rc)
		log_info("takeover: forwarding again %.1f ms after the old "
			 "ferryd's release began",
			 (double)(ferry_now_ns() - t->release_ns) / 1e6);
	return rc;
}

int ferryd_takeover_commit(struct ferryd_takeover *t, struct ferry_err *msg)
{
	char *rest = NULL;
	int rc = request(t, "handover commit", NULL, msg);

	if (rc)
		return rc;
	/* It closes our connection on its way out, before its listener:
	 * the socket path is ours to bind soon after. */
	if (client_wait_readable(t->fd, REPLY_TIMEOUT_MS, NULL) > 0 &&
	    client_read_reply(t->fd, &rest, NULL) == 0)
		free(rest);
	log_info("takeover: ferryd pid %u released its ports", t->old_pid);
	return 0;
}

void ferryd_takeover_abort(struct ferryd_takeover *t)
{
	struct ferry_err msg;

	if (!t->release_ns)
		return; /* it never let go of anything */
	if (request(t, "handover abort", NULL, &msg))
		log_err("takeover: %s", msg.msg);
	else
		log_info("takeover: aborted; ferryd pid %u serves again",
			 t->old_pid);
}

void ferryd_takeover_close(struct ferryd_takeover *t)
{
	if (!t)
		return;
	close(t->fd);
	free(t->config);
	free(t);
}
