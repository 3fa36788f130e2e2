/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * server.h - the control socket: a Unix stream socket served by one thread
 * with epoll. Clients send command lines terminated by '\n' and get one
 * JSON line back per command. Lines longer than CTL_MAX_LINE, more than
 * CTL_MAX_CLIENTS clients and clients idle for longer than the idle timeout
 * are refused or closed; a client that does not read its replies is closed
 * rather than buffered for without bound.
 *
 * Access: the socket file is 0660 in a 0750 directory, both given to the
 * access group (default "ferry") when that group exists. On top of the file
 * modes, each client's credentials (SO_PEERCRED, SO_PEERGROUPS: as they were
 * at its connect()) are checked: root, the daemon's own user and members of
 * the access group (primary or supplementary) are served; anyone else gets
 * one EACCES error line and is closed.
 */
#ifndef FERRY_CTL_SERVER_H
#define FERRY_CTL_SERVER_H

#include "proto.h"

#define CTL_MAX_CLIENTS	    32
#define CTL_IDLE_TIMEOUT_MS 60000
#define CTL_ACCESS_GROUP    "ferry"

struct ctl_server;

struct ctl_server_params {
	const char *path; /* socket path; its directory is created 0750 */
	/* Group allowed besides root: NULL means CTL_ACCESS_GROUP, "" none. */
	const char *group;
	const struct ctl_cmd *table; /* command table */
	size_t n_cmds;
	void *ctx; /* passed to every handler and to tick */
	/* Called about every tick_ms on the server thread (stats sampling). */
	void (*tick)(void *ctx);
	unsigned int tick_ms;
};

/* Binds and listens (replacing a stale socket file). NULL with errno set. */
struct ctl_server *ctl_server_create(const struct ctl_server_params *p);
/* Serves until ctl_server_stop(); returns 0 or -errno. */
int ctl_server_run(struct ctl_server *srv);
/*
 * One more fd for the server thread to watch (the router's netlink socket):
 * fn(arg) runs on it when fd is readable (level-triggered: fn reads it).
 * 0 (also when fd is already watched), -EBUSY if another is, or -errno.
 */
int ctl_server_watch(struct ctl_server *srv, int fd, void (*fn)(void *arg),
		     void *arg);
/* Safe from a handler or a signal handler: run() returns after this. */
void ctl_server_stop(struct ctl_server *srv);

/*
 * For a handler, on the server thread: a copy of the connection whose
 * command is running, for a command that streams its answer (`capture
 * stream`). If the handler then returns 0 the server sends no reply and
 * closes its own copy: the connection is the handler's. If it fails, its
 * error is the reply as usual (the handler closes the copy). -ENOTCONN
 * when no client runs the command (the config file).
 */
int ctl_server_conn_take(struct ctl_server *srv);
/*
 * For a handler: the connection whose command is running, to send on it
 * before the reply (descriptors with SCM_RIGHTS: `handover pass`); the
 * server keeps it. -EBUSY while earlier replies are still queued,
 * -ENOTCONN as above.
 */
int ctl_server_conn_fd(struct ctl_server *srv);
/* Closes clients and the listener and unlinks the socket path. */
void ctl_server_destroy(struct ctl_server *srv);

#endif /* FERRY_CTL_SERVER_H */
