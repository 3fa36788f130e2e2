/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * server.c - the control socket. One thread, one epoll set holding the
 * listener, an eventfd (stop requests), a timerfd (tick and idle checks) and
 * up to CTL_MAX_CLIENTS non-blocking clients. Each client has a fixed input
 * buffer of one maximal line and a bounded output queue; nothing a client
 * does can block the loop or make the daemon buffer without bound.
 *
 * Access is decided once per connection, from the credentials the kernel
 * recorded at connect(), by a short table of rules (root, the daemon's
 * user, the access group). Credentials of the connecting process are what
 * count, as for the file modes: a user added to the group is served from
 * their next login on, like everywhere else in Unix.
 */
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/*
 * Replies are small (a few KiB for "stats" of many ports); a client that
 * lets a whole MiB pile up is not reading them and is closed.
 */
#define CTL_MAX_OUTPUT (1u << 20)
#define CTL_BACKLOG    16
#define CTL_EVENTS     64
/* Accepts per wakeup, so a connect storm cannot starve served clients. */
#define CTL_ACCEPT_BURST 16
/* Idle clients are looked for at least this often when there is no tick. */
#define CTL_DEFAULT_TICK_MS 1000
/*
 * A refused client keeps its slot this long at most: long enough for it to
 * send its line and read the refusal, short enough that refused clients
 * cannot hold the slots served ones need.
 */
#define CTL_DENIED_TIMEOUT_MS 2000
/* At most one log line about refused clients per this many ms. */
#define CTL_REFUSAL_LOG_MS 1000
#define CTL_NO_GROUP	   ((gid_t)-1)

_Static_assert(CTL_MAX_OUTPUT > 2 * CTL_MAX_LINE,
	       "a client must be able to queue at least one large reply");

/* epoll_event.data.u64: kind in the low byte, then slot, then generation. */
enum ctl_src {
	SRC_LISTEN,
	SRC_STOP,
	SRC_TIMER,
	SRC_CLIENT,
	SRC_EXTRA, /* a caller's fd (ctl_server_watch) */
	SRC_MAX,
};

struct ctl_client {
	int fd;
	uint32_t gen;	  /* tells a stale event from one for a reused slot */
	uint32_t events;  /* what epoll watches for now */
	bool eof;	  /* peer shut down its side: no more input */
	bool closing;	  /* close once the output has drained */
	bool denied;	  /* refused: input is discarded, then we close */
	uint64_t last_ms; /* last input or output progress */
	size_t in_len;
	char in[CTL_MAX_LINE];
	char *out; /* out[out_off, out_len) waits to be sent */
	size_t out_off, out_len, out_cap;
};

struct ctl_server {
	int listen_fd;
	int epoll_fd;
	int stop_fd;	    /* eventfd: written by ctl_server_stop() */
	int timer_fd;	    /* periodic: tick and idle timeout */
	bool listen_paused; /* out of fds: retry accepting on the next tick */
	bool stopping;
	uint32_t next_gen;
	const struct ctl_cmd *table;
	size_t n_cmds;
	void *ctx;
	void (*tick)(void *ctx);
	int extra_fd; /* ctl_server_watch; -1: none */
	void (*extra_fn)(void *arg);
	void *extra_arg;
	uint64_t refusal_log_ms;      /* next time a refusal may be logged */
	unsigned long refusals_quiet; /* refused since the last log line */
	char group[64];		      /* access group name; "" for none */
	unsigned int n_clients;
	struct ctl_client *clients[CTL_MAX_CLIENTS];
	dev_t sock_dev; /* to unlink only the socket we bound */
	ino_t sock_ino;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	/* The client whose command runs now, and whether its handler took
	 * the connection (ctl_server_conn_take). */
	struct ctl_client *running;
	bool taken;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t ev_data(enum ctl_src src, unsigned int slot, uint32_t gen)
{
	return (uint64_t)src | (uint64_t)slot << 8 | (uint64_t)gen << 32;
}

/* ---- socket path ---- */

/* gid of the group called name: 0 or -ENOENT / -errno. */
static int group_lookup(const char *name, gid_t *gid)
{
	struct group grp, *found = NULL;
	size_t size = 1024;
	char *buf = NULL;
	int rc;

	/* A group with many members needs a bigger buffer: ERANGE says so. */
	for (;;) {
		char *bigger = realloc(buf, size);

		if (!bigger) {
			rc = ENOMEM;
			break;
		}
		buf = bigger;
		rc = getgrnam_r(name, &grp, buf, size, &found);
		if (rc != ERANGE || size >= (1u << 20))
			break;
		size *= 2;
	}
	if (rc == 0 && found)
		*gid = found->gr_gid;
	free(buf);
	if (rc)
		return -rc;
	return found ? 0 : -ENOENT;
}

/*
 * Gives a directory to the access group, but only one that looks like ours:
 * owned by this user with the 0750 we create with. A directory the operator
 * made for something else (/tmp, a home) keeps its group.
 */
static void share_dir(const char *dir, gid_t gid)
{
	struct stat st;

	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & 07777) != 0750 ||
	    st.st_gid == gid)
		return;
	if (chown(dir, (uid_t)-1, gid) < 0)
		fprintf(stderr, "<4>ferryd: warning: chgrp %s: %s\n", dir,
			strerror(errno));
}

/*
 * mkdir -p of path's parent; directories it creates get 0750 and, with
 * gid, that group. The socket's own directory also gets the group when
 * it was left by an earlier run (share_dir() decides).
 */
static int make_parent_dir(const char *path, gid_t gid)
{
	char dir[PATH_MAX];
	char *slash, *p;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0; /* relative name in cwd, or a file in "/" */
	*slash = '\0';

	for (p = dir + 1;; p++) {
		bool last = *p == '\0';

		if (*p != '/' && !last)
			continue;
		*p = '\0';
		if (mkdir(dir, 0750) == 0) {
			/* The umask may have taken bits we want kept. */
			if (chmod(dir, 0750) < 0)
				return -errno;
			if (gid != CTL_NO_GROUP)
				share_dir(dir, gid);
		} else if (errno != EEXIST) {
			int rc = -errno;
			struct stat st;

			/* EACCES or EROFS on a directory that is there is fine. */
			if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
				return rc;
		}
		if (last)
			break;
		*p = '/';
	}
	if (gid != CTL_NO_GROUP)
		share_dir(dir, gid);
	return 0;
}

/*
 * A socket file left by a daemon that died is removed; one that still
 * answers belongs to a live daemon and is left alone. Connecting without
 * blocking: a live daemon with a full backlog answers EAGAIN.
 */
static int clear_stale_socket(const struct sockaddr_un *addr)
{
	struct stat st;
	int fd, rc;

	if (lstat(addr->sun_path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST; /* not ours to delete */

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	rc = connect(fd, (const struct sockaddr *)addr, sizeof(*addr));
	if (rc == 0 || errno == EAGAIN || errno == EINPROGRESS)
		rc = -EADDRINUSE;
	else if (errno == ECONNREFUSED)
		rc = unlink(addr->sun_path) < 0 && errno != ENOENT ? -errno : 0;
	else
		rc = -errno;
	close(fd);
	return rc;
}

/* ---- clients ---- */

static int client_watch(struct ctl_server *srv, unsigned int slot,
			uint32_t events)
{
	struct ctl_client *c = srv->clients[slot];
	struct epoll_event ev = {
		.events = events,
		.data.u64 = ev_data(SRC_CLIENT, slot, c->gen),
	};

	if (events == c->events)
		return 0;
	if (epoll_ctl(srv->epoll_fd, EPOLL_CTL_MOD, c->fd, &ev) < 0)
		return -errno;
	c->events = events;
	return 0;
}

static void client_close(struct ctl_server *srv, unsigned int slot)
{
	struct ctl_client *c = srv->clients[slot];

	if (!c)
		return;
	/* close() drops the epoll registration: the fd is not shared. */
	close(c->fd);
	free(c->out);
	free(c);
	srv->clients[slot] = NULL;
	srv->n_clients--;
}

static int client_queue(struct ctl_client *c, const char *s, size_t len)
{
	size_t pending = c->out_len - c->out_off;

	if (pending + len > CTL_MAX_OUTPUT)
		return -ENOBUFS;
	if (c->out_off > 0 && c->out_len + len > c->out_cap) {
		memmove(c->out, c->out + c->out_off, pending);
		c->out_off = 0;
		c->out_len = pending;
	}
	if (c->out_len + len > c->out_cap) {
		size_t cap = c->out_cap ? c->out_cap : 4096;
		char *out;

		while (cap < c->out_len + len)
			cap *= 2;
		out = realloc(c->out, cap);
		if (!out)
			return -ENOMEM;
		c->out = out;
		c->out_cap = cap;
	}
	memcpy(c->out + c->out_len, s, len);
	c->out_len += len;
	return 0;
}

/* The reply and its newline, or a fixed one when memory ran out. */
static int client_reply(struct ctl_client *c, char *reply)
{
	static const char nomem[] =
		"{\"ok\":false,\"error\":{\"code\":\"ENOMEM\","
		"\"message\":\"out of memory\"}}";
	int rc;

	if (reply)
		rc = client_queue(c, reply, strlen(reply));
	else
		rc = client_queue(c, nomem, sizeof(nomem) - 1);
	free(reply);
	return rc < 0 ? rc : client_queue(c, "\n", 1);
}

static char *error_reply(const char *code, const char *msg)
{
	json_t *j = json_pack("{s:b,s:{s:s,s:s}}", "ok", 0, "error", "code",
			      code, "message", msg);
	char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;

	json_decref(j);
	return s;
}

/* Sends what it can. -errno when the client is gone. */
static int client_flush(struct ctl_client *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off,
				 c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -errno;
		}
		c->out_off += (size_t)n;
		c->last_ms = now_ms();
	}
	c->out_off = c->out_len = 0;
	return 0;
}

/*
 * After any change: send, then decide what epoll should wait for, or close
 * the client when there is nothing left to do for it.
 */
static void client_settle(struct ctl_server *srv, unsigned int slot)
{
	struct ctl_client *c = srv->clients[slot];
	bool pending;
	uint32_t events = 0;

	if (client_flush(c) < 0)
		goto close_client;
	pending = c->out_off < c->out_len;
	if ((c->closing || c->eof) && !pending)
		goto close_client;
	if (!c->closing && !c->eof)
		events |= EPOLLIN;
	if (pending)
		events |= EPOLLOUT;
	if (client_watch(srv, slot, events) < 0)
		goto close_client;
	return;

close_client:
	client_close(srv, slot);
}

static void client_run_line(struct ctl_server *srv, struct ctl_client *c,
			    char *line, size_t len)
{
	char *reply;
	int rc = 0;

	if (len > 0 && line[len - 1] == '\r')
		line[--len] = '\0';
	if (memchr(line, '\0', len)) {
		reply = error_reply("EINVAL", "line contains a NUL byte");
	} else {
		srv->running = c;
		srv->taken = false;
		reply = ctl_execute(srv->table, srv->n_cmds, srv->ctx, line,
				    &rc);
		srv->running = NULL;
	}
	if (srv->taken && rc == 0) {
		/* The handler owns a copy of the connection now (a stream):
		 * no reply, and ours is closed once what was queued before
		 * is sent. */
		srv->taken = false;
		free(reply);
		c->closing = true;
		c->eof = true;
		return;
	}
	srv->taken = false;
	if (client_reply(c, reply) < 0) {
		/* Not reading its replies, or out of memory: give up on it. */
		c->closing = true;
		c->eof = true;
	}
}

/* Runs every complete line in the input buffer, in order. */
static void client_run_lines(struct ctl_server *srv, struct ctl_client *c)
{
	size_t start = 0;

	while (!c->closing && start < c->in_len) {
		char *line = c->in + start;
		char *nl = memchr(line, '\n', c->in_len - start);

		if (!nl)
			break;
		*nl = '\0';
		client_run_line(srv, c, line, (size_t)(nl - line));
		start = (size_t)(nl - c->in) + 1;
	}
	if (start > 0) {
		memmove(c->in, c->in + start, c->in_len - start);
		c->in_len -= start;
	}
}

/*
 * A refused client got its error line when it was accepted. Closing it
 * right then would race with its first send() (EPIPE instead of the
 * reply), so its input is read and dropped until its first line or EOF.
 */
static void denied_read(struct ctl_server *srv, unsigned int slot)
{
	struct ctl_client *c = srv->clients[slot];
	ssize_t n;

	n = recv(c->fd, c->in, sizeof(c->in), MSG_DONTWAIT);
	if (n < 0 &&
	    (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n <= 0 || memchr(c->in, '\n', (size_t)n))
		c->eof = true;
	client_settle(srv, slot);
}

static void client_read(struct ctl_server *srv, unsigned int slot)
{
	struct ctl_client *c = srv->clients[slot];
	ssize_t n;

	if (c->denied) {
		denied_read(srv, slot);
		return;
	}

	/* One read per wakeup: other clients get their turn in between. */
	n = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len,
		 MSG_DONTWAIT);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return;
		client_close(srv, slot);
		return;
	}
	c->last_ms = now_ms();
	if (n == 0) {
		/*
		 * Half-closed ("printf cmd | nc -U"): a last line without
		 * its newline still counts, then replies drain and we close.
		 */
		c->eof = true;
		if (c->in_len > 0 && c->in_len < sizeof(c->in)) {
			c->in[c->in_len] = '\0';
			client_run_line(srv, c, c->in, c->in_len);
			c->in_len = 0;
		}
		client_settle(srv, slot);
		return;
	}
	c->in_len += (size_t)n;
	client_run_lines(srv, c);
	if (c->in_len == sizeof(c->in)) {
		char msg[64];

		snprintf(msg, sizeof(msg), "line longer than %d bytes",
			 CTL_MAX_LINE - 1);
		client_reply(c, error_reply("E2BIG", msg));
		c->closing = true;
	}
	client_settle(srv, slot);
}

static void on_client(struct ctl_server *srv, unsigned int slot, uint32_t gen,
		      uint32_t events)
{
	struct ctl_client *c;

	if (slot >= CTL_MAX_CLIENTS)
		return;
	c = srv->clients[slot];
	if (!c || c->gen != gen)
		return; /* closed earlier in this batch */

	if (events & EPOLLIN) {
		client_read(srv, slot);
		c = srv->clients[slot];
		if (!c)
			return;
	}
	if (events & EPOLLERR) {
		client_close(srv, slot);
		return;
	}
	if (events & EPOLLHUP) {
		/* Nobody to write to any more; input was read above. */
		if (c->eof || !(events & EPOLLIN)) {
			client_close(srv, slot);
			return;
		}
	}
	if (events & EPOLLOUT)
		client_settle(srv, slot);
}

/* ---- access ---- */

/* Is gid among the peer's supplementary groups (as of its connect())? */
static bool peer_has_group(int fd, gid_t gid)
{
	gid_t small[64], *groups = small;
	socklen_t len = sizeof(small);
	bool found = false;
	size_t i;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0) {
		/* ERANGE: len now says how much room the list needs. */
		if (errno != ERANGE || len == 0)
			return false;
		groups = malloc(len);
		if (!groups ||
		    getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
			goto out;
	}
	for (i = 0; i < len / sizeof(gid_t) && !found; i++)
		found = groups[i] == gid;
out:
	if (groups != small)
		free(groups);
	return found;
}

static bool allow_root(const struct ctl_server *srv, int fd,
		       const struct ucred *cred)
{
	return cred->uid == 0;
}

/* A daemon run by an ordinary user serves that user. */
static bool allow_self(const struct ctl_server *srv, int fd,
		       const struct ucred *cred)
{
	return cred->uid == geteuid();
}

/*
 * Looked up on every connection, not once at start: the group may be
 * made, renumbered or removed while the daemon runs.
 */
static bool allow_group(const struct ctl_server *srv, int fd,
			const struct ucred *cred)
{
	gid_t gid;

	if (!srv->group[0] || group_lookup(srv->group, &gid) < 0)
		return false;
	return cred->gid == gid || peer_has_group(fd, gid);
}

/* Whoever one rule allows is served; the rules are tried in this order. */
static const struct ctl_access_rule {
	const char *who;
	bool (*allows)(const struct ctl_server *srv, int fd,
		       const struct ucred *cred);
} access_rules[] = {
	{"root", allow_root},
	{"the daemon's user", allow_self},
	{"the access group", allow_group},
};

/* One line a second at most, saying how many more were refused meanwhile. */
static void log_refusal(struct ctl_server *srv, const char *why)
{
	uint64_t now = now_ms();

	if (now < srv->refusal_log_ms) {
		srv->refusals_quiet++;
		return;
	}
	if (srv->refusals_quiet)
		fprintf(stderr,
			"<4>ferryd: control client refused: %s "
			"(and %lu more since the last report)\n",
			why, srv->refusals_quiet);
	else
		fprintf(stderr, "<4>ferryd: control client refused: %s\n", why);
	srv->refusals_quiet = 0;
	srv->refusal_log_ms = now + CTL_REFUSAL_LOG_MS;
}

/* True when the peer on fd may be served; otherwise why[] says why not. */
static bool peer_allowed(struct ctl_server *srv, int fd, char *why, size_t size)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	size_t i;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		snprintf(why, size, "cannot identify the client: %s",
			 strerror(errno));
		log_refusal(srv, why);
		return false;
	}
	for (i = 0; i < sizeof(access_rules) / sizeof(access_rules[0]); i++)
		if (access_rules[i].allows(srv, fd, &cred))
			return true;
	if (srv->group[0])
		snprintf(why, size,
			 "permission denied: uid %u (pid %d) is not root and "
			 "not in group '%s'",
			 (unsigned int)cred.uid, (int)cred.pid, srv->group);
	else
		snprintf(why, size,
			 "permission denied: uid %u (pid %d) is not root",
			 (unsigned int)cred.uid, (int)cred.pid);
	log_refusal(srv, why);
	return false;
}

/* ---- listener, stop, timer ---- */

/* A best-effort refusal, so ferryctl says why instead of "no reply". */
static void refuse(int fd, char *reply)
{
	struct iovec iov[2] = {
		{.iov_base = reply, .iov_len = reply ? strlen(reply) : 0},
		{.iov_base = "\n", .iov_len = 1},
	};
	struct msghdr msg = {.msg_iov = iov, .msg_iovlen = 2};
	ssize_t n;

	if (reply) {
		n = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
		(void)n;
	}
	free(reply);
	close(fd);
}

/* The slot taken, or -errno. */
static int client_add(struct ctl_server *srv, int fd)
{
	struct ctl_client *c;
	struct epoll_event ev;
	unsigned int slot;

	for (slot = 0; slot < CTL_MAX_CLIENTS; slot++)
		if (!srv->clients[slot])
			break;
	if (slot == CTL_MAX_CLIENTS)
		return -EBUSY;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->fd = fd;
	c->gen = srv->next_gen++;
	c->events = EPOLLIN;
	c->last_ms = now_ms();
	ev.events = c->events;
	ev.data.u64 = ev_data(SRC_CLIENT, slot, c->gen);
	if (epoll_ctl(srv->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		int rc = -errno;

		free(c);
		return rc;
	}
	srv->clients[slot] = c;
	srv->n_clients++;
	return (int)slot;
}

/*
 * A refused client still takes a slot for a moment (see denied_read());
 * with no slot free it is answered and closed at once, as a busy one is.
 */
static void accept_one(struct ctl_server *srv, int fd)
{
	char why[160];
	bool allowed = peer_allowed(srv, fd, why, sizeof(why));
	int slot =
		srv->n_clients < CTL_MAX_CLIENTS ? client_add(srv, fd) : -EBUSY;
	struct ctl_client *c;

	if (slot < 0) {
		refuse(fd, allowed ? error_reply("EBUSY",
						 "too many control clients")
				   : error_reply("EACCES", why));
		return;
	}
	if (allowed)
		return;
	c = srv->clients[slot];
	c->denied = true;
	if (client_reply(c, error_reply("EACCES", why)) < 0)
		c->eof = true;
	client_settle(srv, slot);
}

static int listen_pause(struct ctl_server *srv, bool pause)
{
	struct epoll_event ev = {
		.events = pause ? 0 : EPOLLIN,
		.data.u64 = ev_data(SRC_LISTEN, 0, 0),
	};

	if (epoll_ctl(srv->epoll_fd, EPOLL_CTL_MOD, srv->listen_fd, &ev) < 0)
		return -errno;
	srv->listen_paused = pause;
	return 0;
}

static int on_listen(struct ctl_server *srv, uint32_t events)
{
	int i;

	(void)events;
	for (i = 0; i < CTL_ACCEPT_BURST; i++) {
		int fd = accept4(srv->listen_fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			if (errno == EINTR || errno == ECONNABORTED ||
			    errno == EPROTO)
				continue;
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM)
				/* Level-triggered: it would spin; wait a tick. */
				return listen_pause(srv, true);
			return -errno;
		}
		accept_one(srv, fd);
	}
	return 0;
}

static int on_stop(struct ctl_server *srv, uint32_t events)
{
	uint64_t v;

	(void)events;
	if (read(srv->stop_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return -errno;
	srv->stopping = true;
	return 0;
}

static int on_timer(struct ctl_server *srv, uint32_t events)
{
	uint64_t expirations, now;
	unsigned int slot;

	(void)events;
	if (read(srv->timer_fd, &expirations, sizeof(expirations)) < 0)
		return errno == EAGAIN ? 0 : -errno;
	if (srv->tick)
		srv->tick(srv->ctx);

	now = now_ms();
	for (slot = 0; slot < CTL_MAX_CLIENTS; slot++) {
		struct ctl_client *c = srv->clients[slot];

		if (c && now - c->last_ms >= (c->denied ? CTL_DENIED_TIMEOUT_MS
							: CTL_IDLE_TIMEOUT_MS))
			client_close(srv, slot);
	}
	if (srv->listen_paused)
		return listen_pause(srv, false);
	return 0;
}

static int watch_fd(int epoll_fd, int fd, enum ctl_src src);

static int on_extra(struct ctl_server *srv, uint32_t events)
{
	(void)events;
	srv->extra_fn(srv->extra_arg);
	return 0;
}

static int (*const fixed_handlers[])(struct ctl_server *, uint32_t) = {
	[SRC_LISTEN] = on_listen,
	[SRC_STOP] = on_stop,
	[SRC_TIMER] = on_timer,
	[SRC_EXTRA] = on_extra,
};

int ctl_server_watch(struct ctl_server *srv, int fd, void (*fn)(void *arg),
		     void *arg)
{
	int rc;

	if (srv->extra_fd == fd)
		return 0;
	if (srv->extra_fd >= 0)
		return -EBUSY;
	srv->extra_fn = fn;
	srv->extra_arg = arg;
	rc = watch_fd(srv->epoll_fd, fd, SRC_EXTRA);
	if (!rc)
		srv->extra_fd = fd;
	return rc;
}

/* ---- server ---- */

static int watch_fd(int epoll_fd, int fd, enum ctl_src src)
{
	struct epoll_event ev = {
		.events = EPOLLIN,
		.data.u64 = ev_data(src, 0, 0),
	};

	return epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

struct ctl_server *ctl_server_create(const struct ctl_server_params *p)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct ctl_server *srv;
	const char *group = p && p->group ? p->group : CTL_ACCESS_GROUP;
	gid_t gid = CTL_NO_GROUP;
	struct itimerspec its = {0};
	unsigned int period_ms;
	struct stat st;
	int rc;

	if (!p || !p->path || !p->path[0] || (!p->table && p->n_cmds)) {
		errno = EINVAL;
		return NULL;
	}
	if (strlen(p->path) >= sizeof(addr.sun_path) ||
	    strlen(group) >= sizeof(srv->group)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	srv = calloc(1, sizeof(*srv));
	if (!srv)
		return NULL;
	srv->table = p->table;
	srv->n_cmds = p->n_cmds;
	srv->ctx = p->ctx;
	srv->tick = p->tick;
	srv->extra_fd = -1;
	srv->next_gen = 1;
	memcpy(srv->group, group, strlen(group) + 1);
	memcpy(srv->path, p->path, strlen(p->path) + 1);
	memcpy(addr.sun_path, p->path, strlen(p->path) + 1);

	/* No such group: the files stay root's alone, which is the safe side. */
	if (group[0] && group_lookup(group, &gid) < 0)
		gid = CTL_NO_GROUP;
	rc = make_parent_dir(p->path, gid);
	if (rc < 0)
		goto err_free;
	rc = clear_stale_socket(&addr);
	if (rc < 0)
		goto err_free;

	srv->listen_fd =
		socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (srv->listen_fd < 0) {
		rc = -errno;
		goto err_free;
	}
	if (bind(srv->listen_fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		rc = -errno;
		goto err_listen;
	}
	if (chmod(p->path, 0660) < 0 || lstat(p->path, &st) < 0 ||
	    listen(srv->listen_fd, CTL_BACKLOG) < 0) {
		rc = -errno;
		goto err_bind;
	}
	/* Best effort: an ordinary user may not give files to the group. */
	if (gid != CTL_NO_GROUP && lchown(p->path, (uid_t)-1, gid) < 0)
		fprintf(stderr, "<4>ferryd: warning: chgrp %s: %s\n", p->path,
			strerror(errno));
	srv->sock_dev = st.st_dev;
	srv->sock_ino = st.st_ino;

	srv->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (srv->epoll_fd < 0) {
		rc = -errno;
		goto err_bind;
	}
	srv->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (srv->stop_fd < 0) {
		rc = -errno;
		goto err_epoll;
	}
	srv->timer_fd =
		timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (srv->timer_fd < 0) {
		rc = -errno;
		goto err_stop;
	}
	period_ms = p->tick && p->tick_ms ? p->tick_ms : CTL_DEFAULT_TICK_MS;
	its.it_interval.tv_sec = period_ms / 1000;
	its.it_interval.tv_nsec = (long)(period_ms % 1000) * 1000000;
	its.it_value = its.it_interval;
	if (timerfd_settime(srv->timer_fd, 0, &its, NULL) < 0) {
		rc = -errno;
		goto err_timer;
	}

	rc = watch_fd(srv->epoll_fd, srv->listen_fd, SRC_LISTEN);
	if (!rc)
		rc = watch_fd(srv->epoll_fd, srv->stop_fd, SRC_STOP);
	if (!rc)
		rc = watch_fd(srv->epoll_fd, srv->timer_fd, SRC_TIMER);
	if (rc < 0)
		goto err_timer;
	return srv;

err_timer:
	close(srv->timer_fd);
err_stop:
	close(srv->stop_fd);
err_epoll:
	close(srv->epoll_fd);
err_bind:
	unlink(p->path);
err_listen:
	close(srv->listen_fd);
err_free:
	free(srv);
	errno = -rc;
	return NULL;
}

int ctl_server_run(struct ctl_server *srv)
{
	struct epoll_event events[CTL_EVENTS];
	unsigned int slot;

	srv->stopping = false;
	while (!srv->stopping) {
		int n, i;

		n = epoll_wait(srv->epoll_fd, events, CTL_EVENTS, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (i = 0; i < n; i++) {
			uint64_t d = events[i].data.u64;
			unsigned int src = d & 0xff;
			int rc;

			if (src == SRC_CLIENT) {
				on_client(srv, (d >> 8) & 0xffffff,
					  (uint32_t)(d >> 32),
					  events[i].events);
				continue;
			}
			if (src >= SRC_MAX || !fixed_handlers[src])
				continue;
			rc = fixed_handlers[src](srv, events[i].events);
			if (rc < 0)
				return rc;
		}
	}
	/* The reply to "shutdown" is usually still on its way out. */
	for (slot = 0; slot < CTL_MAX_CLIENTS; slot++)
		if (srv->clients[slot])
			client_flush(srv->clients[slot]);
	return 0;
}

int ctl_server_conn_take(struct ctl_server *srv)
{
	int fd;

	if (!srv || !srv->running)
		return -ENOTCONN;
	if (srv->running->out_off < srv->running->out_len)
		return -EBUSY; /* replies to earlier lines still queued */
	fd = fcntl(srv->running->fd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -errno;
	srv->taken = true;
	return fd;
}

int ctl_server_conn_fd(struct ctl_server *srv)
{
	if (!srv || !srv->running)
		return -ENOTCONN;
	if (srv->running->out_off < srv->running->out_len)
		return -EBUSY;
	return srv->running->fd;
}

void ctl_server_stop(struct ctl_server *srv)
{
	uint64_t one = 1;
	int saved = errno; /* may run inside a signal handler */
	ssize_t n;

	n = write(srv->stop_fd, &one, sizeof(one));
	(void)n; /* EAGAIN: the counter is already non-zero, stop is pending */
	errno = saved;
}

void ctl_server_destroy(struct ctl_server *srv)
{
	struct stat st;
	unsigned int slot;

	if (!srv)
		return;
	for (slot = 0; slot < CTL_MAX_CLIENTS; slot++)
		client_close(srv, slot);
	close(srv->timer_fd);
	close(srv->stop_fd);
	close(srv->epoll_fd);
	close(srv->listen_fd);
	/* A newer daemon may have replaced the file; leave theirs alone. */
	if (lstat(srv->path, &st) == 0 && st.st_dev == srv->sock_dev &&
	    st.st_ino == srv->sock_ino)
		unlink(srv->path);
	free(srv);
}
