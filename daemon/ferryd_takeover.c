// SPDX-License-Identifier: BSD-2-Clause
/* ferryd_takeover.c - the new daemon's side of a hot restart. */
#include <errno.h>
#include <jansson.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client.h"
#include "ferry.h"
#include "ferryd_takeover.h"
#include "log.h"
#include "rt.h"
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
	bool can_pass; /* it said it can hand its sockets over */
	/* its UMEM files, sent with begin: mapped while it still serves */
	json_t *umems;
	/* its running captures (capture show): ended by the commit */
	json_t *captures;
	int umem_fds[FERRY_HANDOVER_MAX_FDS];
	int n_umem_fds;
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

/* Checks a reply line; 0 with *data (new reference, may be NULL). */
static int reply_data(const char *what, char *reply, json_t **data,
		      struct ferry_err *msg)
{
	json_t *j = json_loads(reply, 0, NULL), *err;

	free(reply);
	if (!j)
		return ferry_fail(msg, -EPROTO,
				  "'%s': the old ferryd's reply is not JSON",
				  what);
	if (!json_is_true(json_object_get(j, "ok"))) {
		err = json_object_get(j, "error");
		ferry_fail(msg, -EREMOTEIO, "old ferryd refused '%s': %s", what,
			   json_string_value(json_object_get(err, "message"))
				   ?: "?");
		json_decref(j);
		return -EREMOTEIO;
	}
	*data = json_incref(json_object_get(j, "data"));
	json_decref(j);
	return 0;
}

/*
 * `handover begin` and `pass`: one newline byte carrying the descriptors
 * (SCM_RIGHTS), then the reply describing them; a refusal (or an older
 * ferryd's begin) is the reply alone.
 */
static int request_fds(struct ferryd_takeover *t, const char *what,
		       json_t **desc, int *fds, int *n_fds,
		       struct ferry_err *msg)
{
	char line[64];
	union {
		char buf[CMSG_SPACE(sizeof(int) * FERRY_HANDOVER_MAX_FDS)];
		struct cmsghdr align;
	} u;
	char first = 0, *reply = NULL, *whole;
	struct iovec iov = {.iov_base = &first, .iov_len = 1};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *c;
	ssize_t n;
	int rc;

	*n_fds = 0;
	*desc = NULL;
	snprintf(line, sizeof(line), "%s\n", what);
	rc = client_send_all(t->fd, line, strlen(line));
	if (!rc) {
		rc = client_wait_readable(t->fd, REPLY_TIMEOUT_MS, NULL);
		rc = rc == 0 ? -ETIMEDOUT : rc < 0 ? rc : 0;
	}
	if (!rc) {
		n = recvmsg(t->fd, &mh, MSG_CMSG_CLOEXEC);
		rc = n == 1 ? 0 : n < 0 ? -errno : -ECONNRESET;
	}
	for (c = rc ? NULL : CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		*n_fds = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		memcpy(fds, CMSG_DATA(c), sizeof(int) * (size_t)*n_fds);
	}
	if (!rc && (mh.msg_flags & MSG_CTRUNC))
		rc = -EMSGSIZE;
	if (!rc)
		rc = client_read_reply(t->fd, &reply, NULL);
	if (rc)
		goto err_fds;
	/* A refusal has no byte of its own ahead: its first is the reply's. */
	if (first != '\n') {
		whole = malloc(strlen(reply) + 2);
		if (!whole) {
			free(reply);
			rc = -ENOMEM;
			goto err_fds;
		}
		whole[0] = first;
		strcpy(whole + 1, reply);
		free(reply);
		reply = whole;
	}
	rc = reply_data(what, reply, desc, msg);
	if (!rc && !*desc)
		rc = ferry_fail(msg, -EPROTO, "'%s': no description", what);
	if (rc)
		goto err_fds;
	return 0;

err_fds:
	while (*n_fds)
		close(fds[--*n_fds]);
	if (rc != -EREMOTEIO && rc != -EPROTO)
		ferry_fail(msg, rc, "'%s' to the old ferryd: %s", what,
			   strerror(-rc));
	return rc;
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
	/* offer: begin with the UMEM files; an older ferryd knows begin. */
	if (request_fds(t, "handover offer", &data, t->umem_fds, &t->n_umem_fds,
			msg) &&
	    request(t, "handover begin", &data, msg))
		goto err_fd;
	t->umems = json_incref(json_object_get(data, "umems"));
	t->captures = json_incref(json_object_get(data, "captures"));
	pid = json_integer_value(json_object_get(data, "pid"));
	config = json_string_value(json_object_get(data, "config"));
	if (pid <= 0 || !config) {
		ferry_fail(msg, -EPROTO,
			   "the old ferryd's 'handover begin' reply lacks "
			   "pid or config");
		goto err_data;
	}
	t->old_pid = (uint32_t)pid;
	t->can_pass = json_is_true(json_object_get(data, "pass"));
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
	json_decref(t->umems);
	json_decref(t->captures);
	while (t->n_umem_fds)
		close(t->umem_fds[--t->n_umem_fds]);
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

/*
 * The sockets themselves, if the old ferryd can pass them: 0 when they are
 * ours, 1 when only a rebuild is left (said why, the old ferryd serving).
 */
static int try_pass(struct ferryd_takeover *t, struct ferryd_ctx *ctx)
{
	int fds[FERRY_HANDOVER_MAX_FDS], n = 0, rc;
	struct ferry_err why = {{0}};
	struct ferry_rt rt = {0};
	json_t *desc = NULL;

	/* From the old workers' park to ours running: no waiting for a CPU
	 * on a loaded host (seen: 650 ms at load 7 on 2 vCPUs). */
	rc = ferry_rt_raise(&rt);
	if (rc)
		log_info("takeover: the pause runs at normal priority (%s)",
			 strerror(-rc));
	t->release_ns = ferry_now_ns();
	rc = request_fds(t, "handover pass", &desc, fds, &n, &why);
	if (!rc) {
		rc = ferry_takeover_adopt(ctx->f, desc, fds, n, &why);
		json_decref(desc);
	}
	ferry_rt_restore(&rt);
	/* Unless it refused (and changed nothing), it has parked its
	 * workers for us: it serves on, then the rebuild follows. */
	if (rc && rc != -EREMOTEIO)
		ferryd_takeover_abort(t);
	if (!rc)
		return 0;
	log_warn("takeover: the old ferryd's sockets cannot be handed over "
		 "(%s); rebuilding them instead, with a gap",
		 why.msg);
	t->release_ns = 0;
	return 1;
}

/*
 * While it sets up (the verifier, above all) this thread keeps off the
 * CPUs of the workers, the old daemon's on them still forwarding: on a
 * small host it would take their time and overflow their RX rings. Once:
 * when the configuration has named the workers' CPUs. *saved: the mask
 * to restore; false when nothing changed (no CPU left over).
 */
static bool keep_off_workers(struct ferryd_ctx *ctx, cpu_set_t *saved)
{
	uint64_t busy = ferry_worker_cpus(ctx->f);
	cpu_set_t set;
	int cpu, left = 0;

	if (!busy || sched_getaffinity(0, sizeof(*saved), saved))
		return false;
	CPU_ZERO(&set);
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, saved) || (cpu < 64 && (busy >> cpu) & 1))
			continue;
		CPU_SET(cpu, &set);
		left++;
	}
	if (!left || sched_setaffinity(0, sizeof(set), &set))
		return false;
	return true;
}

int ferryd_takeover_run(struct ferryd_takeover *t, struct ferryd_ctx *ctx,
			struct ferry_err *msg)
{
	char *text = strdup(t->config), *line, *save = NULL;
	bool moved = false, tried = false;
	cpu_set_t saved;
	int rc = 0;

	if (!text)
		return ferry_fail(msg, -ENOMEM, "out of memory");
	ferry_takeover_start(ctx->f, t->old_pid, t->progs, t->n_progs, release,
			     t);
	if (t->can_pass)
		ferry_takeover_premap(ctx->f, t->umems, t->umem_fds,
				      t->n_umem_fds);
	t->n_umem_fds = 0; /* taken */
	for (line = strtok_r(text, "\n", &save); line && !rc;
	     line = strtok_r(NULL, "\n", &save)) {
		struct ferry_err why;

		rc = ctl_execute_err(ctx->cmds, ctx->n_cmds, ctx, line, &why);
		if (rc)
			ferry_fail(msg, rc, "'%s': %s", line, why.msg);
		if (!tried && ferry_worker_cpus(ctx->f)) {
			tried = true;
			moved = keep_off_workers(ctx, &saved);
		}
	}
	free(text);
	/* FERRY_TAKEOVER_REBUILD=1: the fallback on purpose, for
	 * bench/takeover.sh's before/after. */
	if (!rc && t->can_pass && !getenv("FERRY_TAKEOVER_REBUILD"))
		try_pass(t, ctx);
	if (!rc)
		rc = ferry_takeover_activate(ctx->f, msg);
	if (moved)
		sched_setaffinity(0, sizeof(saved), &saved);
	if (!rc)
		log_info("takeover: forwarding again %.1f ms after the old "
			 "ferryd's release began",
			 (double)(ferry_now_ns() - t->release_ns) / 1e6);
	return rc;
}

/*
 * The old ferryd's captures ended with its commit (its log says what each
 * wrote): a capture is runtime state of the process that runs it, its
 * file or client its own, so it is not carried on. Said here too, where
 * the operator looks after a restart.
 */
static void captures_said(const struct ferryd_takeover *t)
{
	json_t *c;
	size_t i;

	json_array_foreach(t->captures, i, c)
	{
		log_warn("takeover: capture %s on %s (dir %s, output %s) ended "
			 "with the old ferryd: captures are not carried on by "
			 "a hot restart; start it again here if it is still "
			 "wanted",
			 json_string_value(json_object_get(c, "name")) ?: "?",
			 json_string_value(json_object_get(c, "port")) ?: "?",
			 json_string_value(json_object_get(c, "dir")) ?: "?",
			 json_string_value(json_object_get(c, "output"))
				 ?: "?");
	}
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
	captures_said(t);
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
	while (t->n_umem_fds)
		close(t->umem_fds[--t->n_umem_fds]);
	json_decref(t->umems);
	json_decref(t->captures);
	free(t->config);
	free(t);
}
