/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * proxy.h - the TCP proxy: ferryd accepts TCP clients on a listen address,
 * connects each to a backend, and moves the bytes between the two sockets
 * in one of two ways, chosen per proxy (mode):
 *
 *  - relay (and auto, the default): ferryd's proxy thread reads from one
 *    socket into a buffer of the flow's direction, as much as the buffer
 *    takes per wakeup, and writes it to the other (MSG_MORE while a full
 *    buffer says more is on the way), as HAProxy does. The buffer is
 *    min(limit, 128 KiB); a full buffer stops reading from that side, so
 *    TCP flow control pushes back on the sender. The two sockets' send
 *    and receive buffers are sized from limit too (proxy.c). A direction
 *    that streams (a read filled its buffer) moves through a pipe of the
 *    buffer's size instead, splice(2) in and out, until a splice moves
 *    little (pipe auto, the default; pipe off keeps every byte on the
 *    buffer). flows_piped and bytes_piped in show count it.
 *  - splice: an sk_skb verdict program moves the bytes each socket
 *    receives out of the other one, so payload does not enter userspace
 *    while the receiver keeps up (bpf/ferry_proxy.bpf.c). The bytes
 *    between the two TCP stacks are bounded per flow and direction
 *    (limit): the verdict holds what would exceed it on the receiving
 *    socket, and ferryd copies the held bytes on in order. While a
 *    direction streams small segments, the receiving socket's SO_RCVLOWAT
 *    is raised (coalesce), so the sender's small writes are coalesced into
 *    full segments before the verdict takes them; bytes below the mark
 *    wait about one tick at most (see proxy.c).
 *
 * auto is relay today: measured on veth (docs/performance.md, "The
 * splice proxy"), the sk_skb path was never ahead of the relay by more
 * than the noise, and far behind it at 1 MiB objects, so no flow is
 * handed to it. A hand-off would have to wait for a safe point
 * (the direction's buffer empty) to keep the bytes in order.
 *
 * One thread owns the sockets: it accepts, connects, relays, watches for
 * FIN and errors, and, while spliced flows exist, every millisecond
 * publishes what each peer acknowledged and copies held bytes. The control
 * thread calls add/del/show/config under the object's lock.
 *
 * Semantics the operator relies on, in every mode:
 *  - `proxy add` binds and listens before it answers; it does not probe the
 *    backend (a probe would be a connection the backend sees). A client
 *    whose backend connection fails is reset and counted (backend_failed).
 *  - `proxy del` closes the listening socket at once; established flows
 *    run to completion (draining_flows in show), then close.
 *  - EOF from one side becomes shutdown(SHUT_WR) on the other once every
 *    byte received before it has been handed to TCP; an error (RST) on one
 *    side resets the other, so no side mistakes a cut for a clean end.
 */
#ifndef FERRY_PROXY_H
#define FERRY_PROXY_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "ferry_err.h"

#define FERRY_PROXY_NAME_MAX	     32
#define FERRY_PROXY_MAX		     64
#define FERRY_PROXY_LIMIT_DEFAULT    (4ull << 20)
#define FERRY_PROXY_LIMIT_MIN	     (64ull << 10)
#define FERRY_PROXY_LIMIT_MAX	     (1ull << 30)
#define FERRY_PROXY_COALESCE_DEFAULT 2048
#define FERRY_PROXY_COALESCE_MAX     (1u << 20)

struct ferry_proxy;

/* How a proxy's flows move their bytes (see the top). */
enum ferry_proxy_mode {
	FERRY_PROXY_MODE_AUTO = 0,
	FERRY_PROXY_MODE_RELAY,
	FERRY_PROXY_MODE_SPLICE,
};

/* Whether a relayed direction that streams moves through a pipe. */
enum ferry_proxy_pipe {
	FERRY_PROXY_PIPE_AUTO = 0,
	FERRY_PROXY_PIPE_OFF,
};

struct ferry_proxy_addr {
	struct sockaddr_storage ss;
	socklen_t len;
};

struct ferry_proxy_params {
	const char *name;
	struct ferry_proxy_addr listen;
	struct ferry_proxy_addr backend;
	uint64_t limit; /* bytes queued per flow and direction */
	/* SO_RCVLOWAT while a direction streams small segments; 0: never */
	uint32_t coalesce;
	uint32_t mode; /* enum ferry_proxy_mode */
	uint32_t pipe; /* enum ferry_proxy_pipe */
};

/* Starts the proxy thread; the BPF object is loaded at the first add. */
struct ferry_proxy *ferry_proxy_create(void);
/* Closes every listener and flow (queued bytes are lost), joins. */
void ferry_proxy_destroy(struct ferry_proxy *px);

int ferry_proxy_add(struct ferry_proxy *px, const struct ferry_proxy_params *pp,
		    struct ferry_err *msg);
int ferry_proxy_del(struct ferry_proxy *px, const char *name,
		    struct ferry_err *msg);
/* {"proxies":[...], "draining_flows":N}; NULL with msg if name unknown. */
json_t *ferry_proxy_show(struct ferry_proxy *px, const char *name,
			 struct ferry_err *msg);
/* How many proxies listen. */
int ferry_proxy_count(struct ferry_proxy *px);
/* The i-th proxy's params as added (name copied into name); 0 or -ENOENT. */
int ferry_proxy_get(struct ferry_proxy *px, int i,
		    struct ferry_proxy_params *pp, char *name, size_t name_len);

/* "1.2.3.4:80" or "[::1]:80". */
int ferry_proxy_addr_parse(const char *s, struct ferry_proxy_addr *a,
			   struct ferry_err *msg);
void ferry_proxy_addr_text(const struct ferry_proxy_addr *a, char *buf,
			   size_t len);

#endif /* FERRY_PROXY_H */
