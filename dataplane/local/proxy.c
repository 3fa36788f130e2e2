// SPDX-License-Identifier: BSD-2-Clause
/*
 * proxy.c - the TCP proxy's thread, listeners, flows, relay and memory
 * bound.
 *
 * Every fd in the epoll set carries a token, not a pointer: the control
 * thread may delete a proxy between epoll_wait() returning and the thread
 * taking the lock, and a token whose generation no longer matches is
 * simply ignored.
 *
 * The memory bound. An sk_skb egress redirect queues the skb on the
 * peer's psock, uncharged to any socket, and TCP keeps opening the
 * sender's window, so a fast client and a slow backend grow that queue
 * without limit. The verdict program enforces the limit per skb (struct
 * ferry_proxy_ctl in ferry_abi.h): an skb that would take the bytes between
 * the two TCP stacks over the limit is held on the socket that received
 * it, charged to its receive buffer, so TCP closes the sender's window.
 * This thread, every millisecond, publishes how much each socket's peer
 * has acknowledged and copies held bytes on once everything redirected
 * before them has been handed to TCP, so order is kept; then the verdict
 * forwards again. A thread that runs late (two busy cores) only makes
 * pending look larger than it is: the bound holds whatever the tick does.
 *
 * Why not pause by taking the socket out of the map: the verdict only runs
 * from data_ready, so bytes that waited in the receive queue need a nudge
 * on resume, a socket in CLOSE_WAIT can't be put back into a sockmap, and
 * the bound would then depend on the tick being on time, which it is not
 * on two busy cores (5-15 ms late measured).
 *
 * Coalescing. The verdict takes each segment in softirq as it arrives, so
 * the receive queue is empty whenever TCP decides about an ACK, and it
 * ACKs a small pushed segment at once: the sender's Nagle then never has
 * unacknowledged data to wait behind and sends every small write alone
 * (64 B writes: 130-byte packets through this proxy, 615-byte ones through
 * a userspace splice(2) proxy, which reads later). So while a direction
 * streams small segments (a tick that moved COALESCE_MIN_SKBS skbs or more
 * of COALESCE_SMALL bytes or less on average), the receiving socket's
 * SO_RCVLOWAT is raised to the proxy's coalesce mark: TCP then calls
 * data_ready, and so the verdict, only once that many bytes wait (or its
 * window runs low), delays its ACKs, and the sender coalesces. The first
 * tick in which the direction moved less than the mark puts SO_RCVLOWAT
 * back to 1, which (tcp_set_rcvlowat -> tcp_data_ready) hands what waits
 * to the verdict at once: bytes below the mark wait about one tick at
 * most, later only when the tick is late. Larger segments are left alone:
 * at 1 KiB writes a raised mark made the proxy slower (measured in
 * docs/performance.md, not understood).
 *
 * The relay (modes relay and auto). Level-triggered epoll: a socket is
 * watched for EPOLLIN while its direction's buffer is empty and it has not
 * sent FIN, for EPOLLOUT while the other direction has bytes for it, and
 * not at all when neither holds (so a half-closed socket's EPOLLHUP cannot
 * spin the thread, and a socket whose bytes wait is not woken for them).
 * A wakeup reads what the buffer takes and writes it on, and again while
 * reads fill the buffer, RELAY_ROUNDS times at most, then lets the other
 * flows run; a short read ends it without a read that would only meet
 * EAGAIN. A read that filled the buffer says more is waiting: that write
 * goes with MSG_MORE, so TCP builds full segments, and when the wakeup
 * ends the socket is pushed (TCP_NODELAY set again pushes what MSG_MORE
 * corked). The memory per flow and direction is the buffer plus the two
 * socket buffers, all sized from limit: the receive buffer (limit/8 set,
 * limit/4 charged), the buffer (min(limit, RELAY_BUF)) and the send
 * buffer (limit/4 set, limit/2 charged).
 *
 * The pipe (relay modes, unless the proxy has pipe off). A read that fills
 * a direction's buffer says the direction streams: once that buffer has
 * been written out, the direction's next reads are splice(2)s from its
 * socket into a pipe of its own and from the pipe into the other socket
 * (SPLICE_F_MORE where the buffer would have used MSG_MORE), so its bytes
 * are not copied into ferryd and back. A splice that moves less than
 * PIPE_SMALL says the stream paused: once the pipe has been written out,
 * the direction reads into its buffer again, so a request/response flow's
 * small messages stay on the buffer and a stream that slows down goes back
 * to it. At any moment only one of a direction's buffer and pipe holds
 * bytes, and a read happens only when neither holds any, so bytes leave in
 * the order they came. The pipe's bytes are the direction's queued bytes:
 * its size is the buffer's (min(limit, RELAY_BUF)), the splice into it asks
 * for no more, and it is read into only when empty, so the memory bound is
 * the buffer's. EOF is passed on once the pipe is written out; an error on
 * either socket resets both, as on the buffer. The pipe is made when the
 * direction first streams and kept until the flow ends (two syscalls per
 * direction and flow; request/response flows never make one). Measured
 * against the buffer and HAProxy in docs/performance.md.
 */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <linux/tcp.h> /* its tcp_info has bytes_acked; glibc's does not */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <linux/sockios.h>

#include "ferry_abi.h"
#include "util.h"
#include "ferry_proxy.skel.h"
#include "log.h"
#include "proxy.h"

#define TICK_NS		  1000000     /* publish acked, copy held bytes */
#define COPY_BUF	  (64 * 1024) /* per direction, while holding */
#define MAX_EVENTS	  64
#define LISTEN_BACKLOG	  256
#define COALESCE_MIN_SKBS 16  /* in one tick, to raise the mark */
#define COALESCE_SMALL	  512 /* bytes per skb, on average, to raise it */
#define RELAY_BUF	  (128 * 1024) /* per direction, at most limit */
#define RELAY_ROUNDS	  4	       /* buffers per direction per wakeup */
#define PIPE_MIN	  (16 * 1024)  /* a smaller pipe is not worth it */
#define PIPE_SMALL	  (16 * 1024) /* a splice under it: back to the buffer */

/* What an epoll token names: kind (8 bits), index (24), generation (32). */
enum tok_kind {
	TOK_WAKE = 1,
	TOK_TIMER,
	TOK_LISTEN,
	TOK_CLIENT,
	TOK_BACKEND,
};

static uint64_t tok(enum tok_kind k, uint32_t idx, uint32_t gen)
{
	return (uint64_t)k << 56 | (uint64_t)(idx & 0xffffff) << 32 | gen;
}

enum side { CLIENT = 0, BACKEND = 1 };

enum flow_state {
	FLOW_FREE = 0,
	FLOW_CONNECTING, /* backend connect() in progress */
	FLOW_SPLICED,	 /* both sockets in the maps */
	FLOW_RELAY,	 /* bytes relayed by this thread */
};

struct listener {
	bool used;
	uint32_t gen;
	char name[FERRY_PROXY_NAME_MAX];
	struct ferry_proxy_addr listen, backend;
	uint64_t limit;
	uint32_t coalesce;
	uint32_t mode;
	uint32_t pipe; /* enum ferry_proxy_pipe */
	int fd;
	/* Totals; flows that ended add their bytes here. */
	uint64_t accepted, backend_failed, rejected_full, completed, aborted;
	uint64_t holds, copied, max_queued, coalesced;
	uint64_t bytes[2];
	uint64_t flows_relay, flows_splice; /* flows started in each mode */
	uint64_t relayed;		    /* bytes through the relay */
	uint64_t flows_piped, piped;	    /* relayed flows that used a pipe */
	char last_abort[128]; /* why the last aborted flow was aborted */
};

struct flow {
	enum flow_state state;
	uint32_t gen;
	int owner; /* listener index, -1 once its proxy was deleted */
	uint64_t limit;
	uint32_t coalesce;
	uint32_t mode; /* RELAY or SPLICE */
	int fd[2];
	uint64_t cookie[2];
	bool plain[2]; /* side s is not in the sockmap: copied by us */
	bool eof[2];   /* side s sent FIN */
	bool shut[2];  /* we shut down side s's write half */
	/* Held bytes of direction s read from side s, not yet written on. */
	uint8_t *buf[2];
	uint32_t buf_off[2], buf_len[2];
	uint64_t queued[2], max_queued;
	struct ferry_proxy_addr peer;
	/* Coalescing: skbs and bytes of direction s at the last tick, the
	 * SO_RCVLOWAT side s has now, times it was raised. */
	uint64_t seen_skbs[2], seen_bytes[2];
	uint32_t lowat[2];
	uint64_t coalesced[2];
	/* Relay: the buffer's size, bytes written on, times reading paused
	 * on a full buffer, a write corked by MSG_MORE, the epoll mask. */
	uint32_t buf_cap;
	uint64_t relayed[2], pauses[2];
	bool corked[2];
	uint32_t ev[2]; /* 0: not in the epoll set */
	/* The pipe of direction s, while it streams (see The pipe at the
	 * top): its ends ([s][0] read, [s][1] write; -1 until the direction
	 * first streams), the bytes it holds, whether the next read goes into
	 * it, the bytes moved through it. */
	int pipe[2][2];
	uint32_t pipe_cap, pipe_len[2];
	bool pipe_off, piping[2], piped_once;
	uint64_t piped[2];
};

struct ferry_proxy {
	pthread_mutex_t lock;
	pthread_t thread;
	int ep, wake_fd, timer_fd;
	bool stop;
	bool timer_on;
	struct ferry_proxy_bpf *skel; /* NULL until the first add */
	int map_fd, socks_fd;
	const struct ferry_proxy_ctr *ctrs; /* mmap of ferry_proxy_ctrs */
	struct ferry_proxy_ctl *ctl;	    /* mmap of ferry_proxy_ctl */
	size_t ctrs_len, ctl_len;
	struct listener ls[FERRY_PROXY_MAX];
	struct flow flows[FERRY_PROXY_MAX_FLOWS];
	uint32_t n_flows;
	uint32_t n_spliced; /* the tick runs while there are any */
	uint32_t gen_next;
	/* Aborts are logged at most once a second; the rest are counted. */
	uint64_t abort_logged_ns;
	uint32_t aborts_unlogged;
};

/* ---------------------------------------------------------- addresses */

int ferry_proxy_addr_parse(const char *s, struct ferry_proxy_addr *a,
			   struct ferry_err *msg)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&a->ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&a->ss;
	char host[INET6_ADDRSTRLEN];
	const char *colon, *p;
	unsigned long port = 0;
	bool v6 = s[0] == '[';
	size_t hlen;

	memset(a, 0, sizeof(*a));
	if (v6) {
		const char *end = strchr(s, ']');

		if (!end || end[1] != ':')
			goto bad;
		hlen = (size_t)(end - s - 1);
		colon = end + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || memchr(s, ':', (size_t)(colon - s)))
			goto bad;
		hlen = (size_t)(colon - s);
	}
	if (!hlen || hlen >= sizeof(host) || !colon[1])
		goto bad;
	memcpy(host, v6 ? s + 1 : s, hlen);
	host[hlen] = '\0';
	for (p = colon + 1; *p; p++) {
		if (*p < '0' || *p > '9' || port > 65535)
			goto bad;
		port = port * 10 + (unsigned long)(*p - '0');
	}
	if (port < 1 || port > 65535)
		return ferry_fail(msg, -ERANGE, "'%s': port must be 1-65535",
				  s);
	if (v6 && inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		a->len = sizeof(*sin6);
		return 0;
	}
	if (!v6 && inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		a->len = sizeof(*sin);
		return 0;
	}
bad:
	return ferry_fail(msg, -EINVAL,
			  "'%s' is not ADDR:PORT (an IPv4 address, or an "
			  "IPv6 one in brackets: [::1]:80)",
			  s);
}

void ferry_proxy_addr_text(const struct ferry_proxy_addr *a, char *buf,
			   size_t len)
{
	char h[INET6_ADDRSTRLEN] = "?";

	if (a->ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)&a->ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, h, sizeof(h));
		snprintf(buf, len, "[%s]:%u", h, ntohs(s6->sin6_port));
	} else {
		const struct sockaddr_in *s4 = (const void *)&a->ss;

		inet_ntop(AF_INET, &s4->sin_addr, h, sizeof(h));
		snprintf(buf, len, "%s:%u", h, ntohs(s4->sin_port));
	}
}

/* ---------------------------------------------------------------- BPF */

static void *map_mmap(struct bpf_map *m, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       bpf_map__fd(m), 0);

	return p == MAP_FAILED ? NULL : p;
}

static int bpf_load(struct ferry_proxy *px, struct ferry_err *msg)
{
	struct ferry_proxy_bpf *skel;
	int prog, err;
	void *c;

	skel = ferry_proxy_bpf__open_and_load();
	if (!skel)
		return ferry_fail(msg, -errno,
				  "cannot load the proxy's BPF program: %s",
				  strerror(errno));
	prog = bpf_program__fd(skel->progs.ferry_proxy_verdict);
	px->map_fd = bpf_map__fd(skel->maps.ferry_proxy_map);
	/* libbpf 1.1 has no SEC("sk_skb/verdict"): attach by hand. */
	if (bpf_prog_attach(prog, px->map_fd, BPF_SK_SKB_VERDICT, 0)) {
		err = -errno;
		ferry_fail(msg, err, "cannot attach the sk_skb verdict: %s",
			   strerror(-err));
		goto err_skel;
	}
	/* Read and written every millisecond per flow: mappings, not a
	 * syscall per access. */
	px->ctrs_len = sizeof(struct ferry_proxy_ctr) * FERRY_PROXY_MAX_FLOWS;
	px->ctl_len = sizeof(struct ferry_proxy_ctl) * FERRY_PROXY_MAX_FLOWS;
	c = map_mmap(skel->maps.ferry_proxy_ctrs, px->ctrs_len);
	if (!c) {
		err = -errno;
		goto err_map;
	}
	px->ctrs = c;
	px->ctl = map_mmap(skel->maps.ferry_proxy_ctl, px->ctl_len);
	if (!px->ctl) {
		err = -errno;
		goto err_ctrs;
	}
	px->socks_fd = bpf_map__fd(skel->maps.ferry_proxy_socks);
	px->skel = skel;
	return 0;

err_ctrs:
	munmap(c, px->ctrs_len);
err_map:
	ferry_fail(msg, err, "cannot map the proxy counters: %s",
		   strerror(-err));
err_skel:
	ferry_proxy_bpf__destroy(skel);
	return err;
}

static void bpf_unload(struct ferry_proxy *px)
{
	if (!px->skel)
		return;
	munmap((void *)px->ctrs, px->ctrs_len);
	munmap(px->ctl, px->ctl_len);
	ferry_proxy_bpf__destroy(px->skel);
	px->skel = NULL;
}

/* ------------------------------------------------------------- timing */

static void timer_arm(struct ferry_proxy *px, bool on)
{
	struct itimerspec its = {0};

	if (px->timer_on == on)
		return;
	if (on) {
		its.it_interval.tv_nsec = TICK_NS;
		its.it_value.tv_nsec = TICK_NS;
	}
	timerfd_settime(px->timer_fd, 0, &its, NULL);
	px->timer_on = on;
}

/* -------------------------------------------------------------- flows */

static uint32_t slot_of(const struct ferry_proxy *px, const struct flow *fl)
{
	return (uint32_t)(fl - px->flows);
}

static const struct ferry_proxy_dir_ctr *ctr_of(const struct ferry_proxy *px,
						const struct flow *fl, int dir)
{
	return &px->ctrs[slot_of(px, fl)].dir[dir];
}

/* Bytes side s received and sent on: redirected plus copied. */
static uint64_t moved(const struct ferry_proxy *px, const struct flow *fl,
		      int s)
{
	uint32_t slot = (uint32_t)(fl - px->flows);

	return __atomic_load_n(&px->ctrs[slot].dir[s].bytes, __ATOMIC_RELAXED) +
	       px->ctl[slot].copied[s];
}

static int tcp_info_get(int fd, struct tcp_info *ti)
{
	socklen_t l = sizeof(*ti);

	memset(ti, 0, sizeof(*ti));
	return getsockopt(fd, IPPROTO_TCP, TCP_INFO, ti, &l) ? -errno : 0;
}

static int map_key(const struct ferry_proxy *px, const struct flow *fl, int s)
{
	return (int)(2 * slot_of(px, fl) + (uint32_t)s);
}

static uint64_t ctr_read(const volatile __u64 *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static struct listener *owner_of(struct ferry_proxy *px, struct flow *fl)
{
	return fl->owner >= 0 ? &px->ls[fl->owner] : NULL;
}

static void pipe_close(struct flow *fl, int s)
{
	int e;

	for (e = 0; e < 2; e++) {
		if (fl->pipe[s][e] >= 0)
			close(fl->pipe[s][e]);
		fl->pipe[s][e] = -1;
	}
}

/* How a flow ended: which counter of its proxy it adds to. */
enum flow_end_how {
	END_DONE,	    /* both directions finished: completed */
	END_ABORT,	    /* an error on one side: aborted */
	END_BACKEND_FAILED, /* no backend connection: backend_failed */
};

/*
 * Ends a flow. Unless both directions are done, both sockets are reset
 * (SO_LINGER 0), so each peer sees ECONNRESET rather than an EOF that would
 * pass for the end of the data. When they are done, a plain close() lets
 * the kernel finish sending what TCP still holds.
 */
static void flow_end(struct ferry_proxy *px, struct flow *fl,
		     enum flow_end_how how)
{
	struct linger lg = {.l_onoff = 1, .l_linger = 0};
	struct listener *l = owner_of(px, fl);
	bool abort = how != END_DONE;
	int s;

	for (s = 0; s < 2; s++) {
		uint32_t key = (uint32_t)map_key(px, fl, s);

		if (fl->fd[s] < 0)
			continue;
		/* Out of the maps before the cookie goes, so the verdict
		 * never meets a socket it does not know. */
		if (fl->state == FLOW_SPLICED) {
			bpf_map_delete_elem(px->map_fd, &key);
			bpf_map_delete_elem(px->socks_fd, &fl->cookie[s]);
		}
		if (abort)
			setsockopt(fl->fd[s], SOL_SOCKET, SO_LINGER, &lg,
				   sizeof(lg));
		epoll_ctl(px->ep, EPOLL_CTL_DEL, fl->fd[s], NULL);
		close(fl->fd[s]);
		fl->fd[s] = -1;
		free(fl->buf[s]);
		fl->buf[s] = NULL;
		pipe_close(fl, s);
	}
	if (l) {
		if (fl->state == FLOW_RELAY) {
			l->bytes[0] += fl->relayed[0];
			l->bytes[1] += fl->relayed[1];
			l->relayed += fl->relayed[0] + fl->relayed[1];
			l->piped += fl->piped[0] + fl->piped[1];
			l->holds += fl->pauses[0] + fl->pauses[1];
		}
		if (fl->state == FLOW_SPLICED) {
			l->bytes[0] += moved(px, fl, 0);
			l->bytes[1] += moved(px, fl, 1);
			l->copied += px->ctl[slot_of(px, fl)].copied[0] +
				     px->ctl[slot_of(px, fl)].copied[1];
			l->holds += ctr_of(px, fl, 0)->holds +
				    ctr_of(px, fl, 1)->holds;
			l->coalesced += fl->coalesced[0] + fl->coalesced[1];
		}
		if (how == END_DONE)
			l->completed++;
		else if (how == END_ABORT)
			l->aborted++;
		else
			l->backend_failed++;
	}
	if (fl->state == FLOW_SPLICED && !--px->n_spliced)
		timer_arm(px, false);
	fl->state = FLOW_FREE;
	fl->gen = 0;
	px->n_flows--;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Ends a flow on an error and says why: in its proxy's last_abort (proxy
 * show) and in the log, at most one line a second so that a storm of
 * resets cannot flood it.
 */
static void flow_abort(struct ferry_proxy *px, struct flow *fl, const char *why,
		       int err)
{
	struct listener *l = owner_of(px, fl);
	uint64_t now = mono_ns();
	char peer[64], text[sizeof(l->last_abort)];

	snprintf(text, sizeof(text), "%s: %s", why, strerror(err));
	if (l)
		memcpy(l->last_abort, text, sizeof(text));
	if (now - px->abort_logged_ns >= 1000000000ull) {
		ferry_proxy_addr_text(&fl->peer, peer, sizeof(peer));
		log_warn("proxy %s: flow from %s aborted: %s",
			 l ? l->name : "-", peer, text);
		if (px->aborts_unlogged)
			log_warn("proxy: %u more flows aborted since the "
				 "previous such line, not logged",
				 px->aborts_unlogged);
		px->abort_logged_ns = now;
		px->aborts_unlogged = 0;
	} else {
		px->aborts_unlogged++;
	}
	flow_end(px, fl, END_ABORT);
}

static struct flow *flow_alloc(struct ferry_proxy *px)
{
	uint32_t i;

	for (i = 0; i < FERRY_PROXY_MAX_FLOWS; i++) {
		struct flow *fl = &px->flows[i];

		if (fl->state != FLOW_FREE)
			continue;
		memset(fl, 0, sizeof(*fl));
		fl->fd[0] = fl->fd[1] = -1;
		memset(fl->pipe, -1, sizeof(fl->pipe));
		fl->lowat[0] = fl->lowat[1] = 1; /* the kernel's default */
		fl->gen = ++px->gen_next ? px->gen_next : ++px->gen_next;
		return fl;
	}
	return NULL;
}

/*
 * Held bytes sit in the receiving socket's queue, charged to its receive
 * buffer: its size is what one direction may hold on top of the limit.
 * limit/8 set is limit/4 charged (the kernel doubles it for overhead).
 * The verdict empties the queue as segments arrive, so forwarding does not
 * need a large one. Set before the handshake: it sizes the window scale.
 */
static void rcvbuf_set(int fd, uint64_t limit)
{
	int v = (int)(limit / 8);

	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
}

static int sock_watch(struct ferry_proxy *px, struct flow *fl, int s,
		      uint32_t events, int op)
{
	struct epoll_event ev = {
		.events = events,
		.data.u64 = tok(s == CLIENT ? TOK_CLIENT : TOK_BACKEND,
				slot_of(px, fl), fl->gen),
	};

	return epoll_ctl(px->ep, op, fl->fd[s], &ev) ? -errno : 0;
}

/* Both sockets into the maps, then forwarding on. */
static int flow_splice(struct ferry_proxy *px, struct flow *fl)
{
	uint32_t slot = slot_of(px, fl);
	socklen_t sl = sizeof(uint64_t);
	int s, err, one = 1;

	memset((void *)&px->ctrs[slot], 0, sizeof(px->ctrs[slot]));
	memset(&px->ctl[slot], 0, sizeof(px->ctl[slot]));
	px->ctl[slot].limit = fl->limit;
	/* Backend first: its peer's bytes, already waiting, are kicked
	 * into the verdict when the client goes in. */
	for (s = 1; s >= 0; s--) {
		struct ferry_proxy_sock v = {
			.peer_key = 2 * slot + (uint32_t)(s ^ 1),
			.slot = slot,
			.dir = (uint32_t)s,
		};
		uint32_t key = 2 * slot + (uint32_t)s;
		uint64_t val = (uint64_t)fl->fd[s];

		if (getsockopt(fl->fd[s], SOL_SOCKET, SO_COOKIE, &fl->cookie[s],
			       &sl))
			return -errno;
		if (bpf_map_update_elem(px->socks_fd, &fl->cookie[s], &v,
					BPF_ANY))
			return -errno;
		if (fl->state != FLOW_SPLICED && !px->n_spliced++)
			timer_arm(px, true);
		fl->state = FLOW_SPLICED; /* flow_end undoes map entries */
		if (bpf_map_update_elem(px->map_fd, &key, &val, BPF_ANY)) {
			/* A sockmap takes only established sockets: a client
			 * that half-closed before the backend answered is in
			 * CLOSE_WAIT. Its bytes are copied by this thread;
			 * the other direction's redirects to it fail and are
			 * held and copied too, in order. */
			if (errno != EOPNOTSUPP)
				return -errno;
			fl->plain[s] = true;
			continue;
		}
		/* Bytes that arrived while the backend connected wait in the
		 * receive queue; data_ready (tcp_set_rcvlowat ->
		 * tcp_data_ready) hands them to the verdict now rather than
		 * when the next segment comes. */
		setsockopt(fl->fd[s], SOL_SOCKET, SO_RCVLOWAT, &one,
			   sizeof(one));
	}
	/* Edge-triggered FIN/error watch: EPOLLIN would fire for every
	 * byte a socket holds. */
	err = sock_watch(px, fl, CLIENT, EPOLLRDHUP | EPOLLET, EPOLL_CTL_ADD);
	if (!err)
		err = sock_watch(px, fl, BACKEND, EPOLLRDHUP | EPOLLET,
				 EPOLL_CTL_MOD);
	return err;
}

/* --------------------------------------------------------------- relay */

/* The relay's send buffer: limit/4 set is limit/2 charged. Without it
 * autotuning lets unacknowledged bytes grow to tcp_wmem[2] whatever the
 * limit. */
static void sndbuf_set(int fd, uint64_t limit)
{
	int v = (int)(limit / 4);

	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
}

/* Bytes direction s holds, in its buffer or its pipe (only one of them
 * holds any: see The pipe at the top). */
static uint32_t relay_pending(const struct flow *fl, int s)
{
	return fl->buf_len[s] - fl->buf_off[s] + fl->pipe_len[s];
}

/* Side s's epoll mask from the relay's state (see The relay at the top):
 * added, changed or removed only when it changes. */
static int relay_watch(struct ferry_proxy *px, struct flow *fl, int s)
{
	uint32_t want = 0;
	int op;

	if (!fl->eof[s] && !relay_pending(fl, s))
		want |= EPOLLIN;
	if (relay_pending(fl, s ^ 1))
		want |= EPOLLOUT;
	if (want == fl->ev[s])
		return 0;
	if (!want) {
		epoll_ctl(px->ep, EPOLL_CTL_DEL, fl->fd[s], NULL);
		fl->ev[s] = 0;
		return 0;
	}
	op = fl->ev[s] ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
	fl->ev[s] = want;
	return sock_watch(px, fl, s, want, op);
}

/* Pushes what a MSG_MORE write left corked on side d. */
static void relay_push(struct flow *fl, int d)
{
	int one = 1;

	if (!fl->corked[d])
		return;
	setsockopt(fl->fd[d], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	fl->corked[d] = false;
}

/*
 * Direction s's pipe, made when it first streams: as large as its buffer
 * would be (buf_cap), so that piping takes no more memory than relaying
 * through the buffer. A pipe the kernel will not grow (over
 * pipe-max-size, or the user's pipe pages over pipe-user-pages-soft) is
 * used at the size it has; one that cannot be made leaves the direction on
 * its buffer. Returns whether the direction has a pipe.
 */
static bool pipe_open(struct flow *fl, int s)
{
	int sz;

	if (fl->pipe[s][0] >= 0)
		return true;
	if (fl->pipe_off)
		return false;
	if (pipe2(fl->pipe[s], O_NONBLOCK | O_CLOEXEC)) {
		fl->pipe[s][0] = fl->pipe[s][1] = -1;
		return false;
	}
	sz = fcntl(fl->pipe[s][1], F_SETPIPE_SZ, (int)fl->buf_cap);
	if (sz < 0)
		sz = fcntl(fl->pipe[s][1], F_GETPIPE_SZ);
	if (sz < PIPE_MIN) {
		pipe_close(fl, s);
		return false;
	}
	/* Both directions' pipes get the same size: a kernel that made
	 * one smaller bounds the other too. */
	if (!fl->pipe_cap || (uint32_t)sz < fl->pipe_cap)
		fl->pipe_cap =
			(uint32_t)sz < fl->buf_cap ? (uint32_t)sz : fl->buf_cap;
	return true;
}

/*
 * Writes what direction s holds (its buffer's bytes or its pipe's) to side
 * d, MSG_MORE or SPLICE_F_MORE when more says so. Returns 0 when it is all
 * written, 1 when TCP took only part (the rest waits: EPOLLOUT on d), -errno
 * on a socket error.
 */
static int relay_drain(struct flow *fl, int s, bool more)
{
	int d = s ^ 1;
	ssize_t n;

	while (relay_pending(fl, s)) {
		if (fl->pipe_len[s])
			n = splice(fl->pipe[s][0], NULL, fl->fd[d], NULL,
				   fl->pipe_len[s],
				   SPLICE_F_MOVE | SPLICE_F_NONBLOCK |
					   (more ? SPLICE_F_MORE : 0));
		else
			n = send(fl->fd[d], fl->buf[s] + fl->buf_off[s],
				 fl->buf_len[s] - fl->buf_off[s],
				 MSG_DONTWAIT | MSG_NOSIGNAL |
					 (more ? MSG_MORE : 0));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				return -errno;
			fl->pauses[s]++;
			return 1;
		}
		fl->corked[d] |= more;
		fl->relayed[s] += (uint64_t)n;
		if (fl->pipe_len[s]) {
			fl->pipe_len[s] -= (uint32_t)n;
			fl->piped[s] += (uint64_t)n;
		} else {
			fl->buf_off[s] += (uint32_t)n;
		}
	}
	fl->buf_off[s] = fl->buf_len[s] = 0;
	return 0;
}

/*
 * Reads direction s's next bytes from side s into its pipe, if it pipes,
 * or else its buffer, as much as either takes: the byte count, 0 at EOF,
 * -errno (-EAGAIN when side s has nothing). Called only when the direction
 * holds nothing, so bytes leave in the order they came. A read that fills
 * the buffer switches the direction to the pipe; a splice that moves less
 * than PIPE_SMALL switches it back (its bytes are written out first).
 */
static ssize_t relay_fill(struct flow *fl, int s, bool *more)
{
	ssize_t n;

	if (fl->piping[s]) {
		n = splice(fl->fd[s], NULL, fl->pipe[s][1], NULL, fl->pipe_cap,
			   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n <= 0)
			return n < 0 ? -errno : 0;
		fl->pipe_len[s] = (uint32_t)n;
		*more = (uint32_t)n == fl->pipe_cap;
		if ((uint32_t)n < PIPE_SMALL)
			fl->piping[s] = false;
		return n;
	}
	if (!fl->buf[s]) {
		fl->buf[s] = malloc(fl->buf_cap);
		if (!fl->buf[s])
			return -EAGAIN; /* read later; TCP holds the sender */
	}
	n = recv(fl->fd[s], fl->buf[s], fl->buf_cap, MSG_DONTWAIT);
	if (n <= 0)
		return n < 0 ? -errno : 0;
	fl->buf_len[s] = (uint32_t)n;
	*more = (uint32_t)n == fl->buf_cap;
	if (*more && pipe_open(fl, s)) {
		fl->piping[s] = true;
		fl->piped_once = true;
	}
	return n;
}

/*
 * Direction s (side s to side s ^ 1): writes what it holds, then reads what
 * its buffer or pipe takes and writes that, RELAY_ROUNDS times at most;
 * passes FIN on once nothing is held. A write that TCP does not take whole
 * leaves the rest held and pauses reading (EPOLLOUT on the other side, no
 * EPOLLIN here): that is the memory bound. Returns -errno on a socket
 * error, with *where the side it was met on.
 */
static int relay_dir(struct ferry_proxy *px, struct flow *fl, int s, int *where)
{
	struct listener *l = owner_of(px, fl);
	bool more = false, once = fl->piped_once;
	int d = s ^ 1, round, err;
	ssize_t n;

	for (round = 0;; round++) {
		err = relay_drain(fl, s, more);
		if (err < 0) {
			*where = d;
			return err;
		}
		if (err)
			return 0;
		if (fl->eof[s]) {
			relay_push(fl, d);
			if (!fl->shut[d]) {
				shutdown(fl->fd[d], SHUT_WR);
				fl->shut[d] = true;
			}
			return 0;
		}
		/* A short read drained the socket (level-triggered epoll
		 * says when there is more): no read just to meet EAGAIN. */
		if (round == RELAY_ROUNDS || (round && !more))
			break;
		n = relay_fill(fl, s, &more);
		if (!once && fl->piped_once && l) {
			l->flows_piped++;
			once = true;
		}
		if (n == -EAGAIN)
			break;
		if (n == -EINTR)
			continue;
		if (n < 0) {
			*where = s;
			return (int)n;
		}
		if (n == 0) {
			fl->eof[s] = true;
			continue;
		}
		if ((uint64_t)n > fl->max_queued)
			fl->max_queued = (uint64_t)n;
	}
	relay_push(fl, d);
	return 0;
}

/* Relays what side s's events call for, then the flow's new epoll masks;
 * ends the flow when both directions are done, aborts it on an error. */
static void relay_event(struct ferry_proxy *px, struct flow *fl, int s,
			uint32_t events)
{
	struct listener *l = owner_of(px, fl);
	int where = s, err = 0;

	if (events & (EPOLLIN | EPOLLHUP | EPOLLRDHUP))
		err = relay_dir(px, fl, s, &where);
	if (!err && (events & EPOLLOUT))
		err = relay_dir(px, fl, s ^ 1, &where);
	if (!err)
		err = relay_watch(px, fl, CLIENT);
	if (!err)
		err = relay_watch(px, fl, BACKEND);
	if (err) {
		flow_abort(px, fl,
			   where == CLIENT ? "client socket" : "backend socket",
			   -err);
		return;
	}
	if (l && fl->max_queued > l->max_queued)
		l->max_queued = fl->max_queued;
	if (fl->shut[CLIENT] && fl->shut[BACKEND])
		flow_end(px, fl, END_DONE);
}

/* The backend answered: both sockets watched for reading. The backend's
 * connect watch (EPOLLOUT, edge-triggered) is replaced. */
static int relay_start(struct ferry_proxy *px, struct flow *fl)
{
	fl->buf_cap = fl->limit < RELAY_BUF ? (uint32_t)fl->limit : RELAY_BUF;
	fl->state = FLOW_RELAY;
	fl->ev[BACKEND] = EPOLLOUT | EPOLLET; /* as on_accept left it */
	relay_event(px, fl, CLIENT, EPOLLIN);
	return 0;
}

static void on_accept(struct ferry_proxy *px, uint32_t li)
{
	struct listener *l = &px->ls[li];
	struct linger lg = {.l_onoff = 1, .l_linger = 0};
	int one = 1;

	for (;;) {
		struct flow *fl;
		struct ferry_proxy_addr peer = {.len = sizeof(peer.ss)};
		int cfd, bfd;

		cfd = accept4(l->fd, (struct sockaddr *)&peer.ss, &peer.len,
			      SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd < 0)
			return; /* EAGAIN, or an aborted handshake */
		l->accepted++;
		fl = flow_alloc(px);
		if (!fl) {
			l->rejected_full++;
			setsockopt(cfd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
			close(cfd);
			continue;
		}
		bfd = socket(l->backend.ss.ss_family,
			     SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (bfd < 0) {
			l->backend_failed++;
			setsockopt(cfd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
			close(cfd);
			continue;
		}
		rcvbuf_set(bfd, l->limit);
		setsockopt(bfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		fl->fd[CLIENT] = cfd;
		fl->fd[BACKEND] = bfd;
		fl->owner = (int)li;
		fl->limit = l->limit;
		fl->coalesce = l->coalesce;
		fl->pipe_off = l->pipe == FERRY_PROXY_PIPE_OFF;
		fl->peer = peer;
		fl->mode = l->mode == FERRY_PROXY_MODE_SPLICE
				   ? FERRY_PROXY_MODE_SPLICE
				   : FERRY_PROXY_MODE_RELAY;
		if (fl->mode == FERRY_PROXY_MODE_RELAY) {
			sndbuf_set(cfd, l->limit);
			sndbuf_set(bfd, l->limit);
		}
		fl->state = FLOW_CONNECTING;
		px->n_flows++;
		if ((connect(bfd, (const struct sockaddr *)&l->backend.ss,
			     l->backend.len) &&
		     errno != EINPROGRESS) ||
		    sock_watch(px, fl, BACKEND, EPOLLOUT | EPOLLET,
			       EPOLL_CTL_ADD))
			flow_end(px, fl, END_BACKEND_FAILED);
	}
}

static void on_connected(struct ferry_proxy *px, struct flow *fl)
{
	struct listener *l = owner_of(px, fl);
	int err = 0;
	socklen_t sl = sizeof(err);

	if (getsockopt(fl->fd[BACKEND], SOL_SOCKET, SO_ERROR, &err, &sl))
		err = errno;
	if (err == EINPROGRESS || err == EALREADY)
		return;
	if (err) {
		flow_end(px, fl, END_BACKEND_FAILED);
		return;
	}
	if (fl->mode == FERRY_PROXY_MODE_RELAY) {
		if (l)
			l->flows_relay++;
		err = relay_start(px, fl);
		if (err)
			flow_abort(px, fl, "cannot relay the flow", -err);
		return;
	}
	if (l)
		l->flows_splice++;
	err = flow_splice(px, fl);
	if (err)
		flow_abort(px, fl, "cannot splice the flow", -err);
}

/* Bytes written into side s's socket that TCP has not been handed yet
 * (in its psock queue): 0 when everything sent on is in TCP's hands. acked
 * first, outq second: their sum never overstates what was written. */
static bool handed_to_tcp(struct ferry_proxy *px, struct flow *fl, int dir)
{
	struct tcp_info ti;
	int outq = 0, d = dir ^ 1;

	if (tcp_info_get(fl->fd[d], &ti) || ioctl(fl->fd[d], SIOCOUTQ, &outq))
		return false;
	return ti.tcpi_bytes_acked + (uint64_t)outq >= moved(px, fl, dir);
}

/*
 * Copies held bytes of direction s on, once everything redirected before
 * them is in TCP's hands (while any are held the verdict redirects
 * nothing, so that stays true); for a plain socket, whatever it has. Non-blocking both ways: what the
 * destination does not take waits in buf for the next tick. Returns
 * -errno on a socket error.
 */
static int copy_held(struct ferry_proxy *px, struct flow *fl, int s)
{
	struct ferry_proxy_ctl *ctl = &px->ctl[slot_of(px, fl)];
	uint64_t held = ctr_read(&ctr_of(px, fl, s)->held), room;
	int d = s ^ 1;
	ssize_t n;

	if ((!fl->plain[s] && held == ctl->copied[s]) ||
	    !handed_to_tcp(px, fl, s))
		return 0;
	if (!fl->buf[s]) {
		fl->buf[s] = malloc(COPY_BUF);
		if (!fl->buf[s])
			return 0; /* held bytes wait; TCP holds the sender */
	}
	for (;;) {
		if (fl->buf_off[s] == fl->buf_len[s]) {
			uint64_t want =
				fl->plain[s] ? COPY_BUF : held - ctl->copied[s];

			fl->buf_off[s] = fl->buf_len[s] = 0;
			if (!want)
				return 0;
			n = recv(fl->fd[s], fl->buf[s],
				 want < COPY_BUF ? want : COPY_BUF,
				 MSG_DONTWAIT);
			if (n <= 0)
				return n < 0 && errno != EAGAIN ? -errno : 0;
			fl->buf_len[s] = (uint32_t)n;
		}
		/* Within the same budget as the verdict, and only half of
		 * it: once the held bytes are through, the verdict must find
		 * room to forward again rather than hold on. */
		room = moved(px, fl, s);
		room = room > ctl->acked[s] ? room - ctl->acked[s] : 0;
		room = room < fl->limit / 2 ? fl->limit / 2 - room : 0;
		if (!room)
			return 0;
		if (room > fl->buf_len[s] - fl->buf_off[s])
			room = fl->buf_len[s] - fl->buf_off[s];
		n = send(fl->fd[d], fl->buf[s] + fl->buf_off[s], room,
			 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n <= 0)
			return n < 0 && errno != EAGAIN ? -errno : 0;
		fl->buf_off[s] += (uint32_t)n;
		/* After the write: the verdict forwards again once copied
		 * reaches held, and must find these bytes already queued. */
		__atomic_store_n(&ctl->copied[s], ctl->copied[s] + (uint64_t)n,
				 __ATOMIC_RELEASE);
		held = ctr_read(&ctr_of(px, fl, s)->held);
	}
}

/*
 * A direction is done once its source sent FIN and every byte before it
 * went on and into the destination's TCP; then the FIN goes on.
 * bytes_received counts the FIN's sequence number.
 */
static bool dir_drained(struct ferry_proxy *px, struct flow *fl, int s)
{
	struct ferry_proxy_ctl *ctl = &px->ctl[slot_of(px, fl)];
	struct tcp_info src;

	if ((!fl->plain[s] &&
	     ctr_read(&ctr_of(px, fl, s)->held) != ctl->copied[s]) ||
	    tcp_info_get(fl->fd[s], &src))
		return false;
	return moved(px, fl, s) + 1 >= src.tcpi_bytes_received &&
	       handed_to_tcp(px, fl, s);
}

/* SO_RCVLOWAT of side s for the next tick (see Coalescing at the top). */
static void coalesce_tick(struct ferry_proxy *px, struct flow *fl, int s)
{
	const struct ferry_proxy_dir_ctr *c = ctr_of(px, fl, s);
	uint64_t skbs = ctr_read(&c->skbs) + ctr_read(&c->held_skbs);
	uint64_t bytes = ctr_read(&c->bytes) + ctr_read(&c->held);
	uint64_t n = skbs - fl->seen_skbs[s], b = bytes - fl->seen_bytes[s];
	int want = 1;

	fl->seen_skbs[s] = skbs;
	fl->seen_bytes[s] = bytes;
	if (!fl->coalesce || fl->plain[s])
		return;
	if (fl->lowat[s] > 1)
		want = b >= fl->coalesce ? (int)fl->lowat[s] : 1;
	else if (n >= COALESCE_MIN_SKBS && b <= n * COALESCE_SMALL)
		want = (int)fl->coalesce;
	if ((uint32_t)want == fl->lowat[s] ||
	    setsockopt(fl->fd[s], SOL_SOCKET, SO_RCVLOWAT, &want, sizeof(want)))
		return;
	if (want > 1)
		fl->coalesced[s]++;
	fl->lowat[s] = (uint32_t)want;
}

/* One tick of one flow: publish acked, copy held bytes, pass FINs on. */
static void flow_tick(struct ferry_proxy *px, struct flow *fl)
{
	struct ferry_proxy_ctl *ctl = &px->ctl[slot_of(px, fl)];
	struct listener *l = owner_of(px, fl);
	int s, err;

	for (s = 0; s < 2; s++) {
		uint64_t m = moved(px, fl, s), q;
		struct tcp_info ti;
		int d = s ^ 1;

		coalesce_tick(px, fl, s);
		/* m - the last acked bounds pending from above: only ask
		 * the kernel when that bound nears the limit, or bytes are
		 * held. */
		q = m > ctl->acked[s] ? m - ctl->acked[s] : 0;
		if (q >= fl->limit / 4 || fl->plain[s] ||
		    ctr_read(&ctr_of(px, fl, s)->held) != ctl->copied[s]) {
			if (!tcp_info_get(fl->fd[d], &ti))
				__atomic_store_n(&ctl->acked[s],
						 ti.tcpi_bytes_acked,
						 __ATOMIC_RELAXED);
			q = m > ctl->acked[s] ? m - ctl->acked[s] : 0;
			err = copy_held(px, fl, s);
			if (err) {
				flow_abort(px, fl,
					   s == CLIENT
						   ? "held bytes to the backend"
						   : "held bytes to the client",
					   -err);
				return;
			}
		}
		fl->queued[s] = q;
		if (q > fl->max_queued)
			fl->max_queued = q;
		if (l && q > l->max_queued)
			l->max_queued = q;
		if (fl->eof[s] && !fl->shut[d] && dir_drained(px, fl, s)) {
			shutdown(fl->fd[d], SHUT_WR);
			fl->shut[d] = true;
		}
	}
	if (fl->shut[CLIENT] && fl->shut[BACKEND])
		flow_end(px, fl, END_DONE);
}

static void on_sock(struct ferry_proxy *px, struct flow *fl, int s,
		    uint32_t events)
{
	if (fl->state == FLOW_CONNECTING) {
		if (s == BACKEND)
			on_connected(px, fl);
		return;
	}
	if (events & EPOLLERR) {
		int err = 0;
		socklen_t sl = sizeof(err);

		if (getsockopt(fl->fd[s], SOL_SOCKET, SO_ERROR, &err, &sl) ||
		    !err)
			err = EIO;
		flow_abort(px, fl,
			   s == CLIENT ? "client socket" : "backend socket",
			   err);
		return;
	}
	if (fl->state == FLOW_RELAY) {
		relay_event(px, fl, s, events);
		return;
	}
	if (events & (EPOLLRDHUP | EPOLLHUP))
		fl->eof[s] = true;
}

/* ------------------------------------------------------------- thread */

static struct flow *flow_by_tok(struct ferry_proxy *px, uint32_t idx,
				uint32_t gen)
{
	struct flow *fl;

	if (idx >= FERRY_PROXY_MAX_FLOWS)
		return NULL;
	fl = &px->flows[idx];
	return fl->state != FLOW_FREE && fl->gen == gen ? fl : NULL;
}

static void dispatch(struct ferry_proxy *px, const struct epoll_event *ev)
{
	enum tok_kind k = (enum tok_kind)(ev->data.u64 >> 56);
	uint32_t idx = (uint32_t)(ev->data.u64 >> 32) & 0xffffff;
	uint32_t gen = (uint32_t)ev->data.u64;
	uint64_t n;
	struct flow *fl;
	uint32_t i;

	switch (k) {
	case TOK_WAKE:
		if (read(px->wake_fd, &n, sizeof(n)) < 0)
			break;
		break;
	case TOK_TIMER:
		if (read(px->timer_fd, &n, sizeof(n)) < 0)
			break;
		for (i = 0; i < FERRY_PROXY_MAX_FLOWS && px->n_flows; i++)
			if (px->flows[i].state == FLOW_SPLICED)
				flow_tick(px, &px->flows[i]);
		break;
	case TOK_LISTEN:
		if (idx < FERRY_PROXY_MAX && px->ls[idx].used &&
		    px->ls[idx].gen == gen)
			on_accept(px, idx);
		break;
	case TOK_CLIENT:
	case TOK_BACKEND:
		fl = flow_by_tok(px, idx, gen);
		if (fl)
			on_sock(px, fl, k == TOK_CLIENT ? CLIENT : BACKEND,
				ev->events);
		break;
	}
}

static void *proxy_main(void *arg)
{
	struct ferry_proxy *px = arg;
	struct epoll_event evs[MAX_EVENTS];
	int n, i;

	for (;;) {
		n = epoll_wait(px->ep, evs, MAX_EVENTS, -1);
		if (n < 0 && errno != EINTR) {
			log_err("proxy: epoll_wait: %s", strerror(errno));
			break;
		}
		pthread_mutex_lock(&px->lock);
		if (px->stop) {
			pthread_mutex_unlock(&px->lock);
			break;
		}
		for (i = 0; i < n; i++)
			dispatch(px, &evs[i]);
		pthread_mutex_unlock(&px->lock);
	}
	return NULL;
}

static int ep_add(struct ferry_proxy *px, int fd, uint64_t token)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = token};

	return epoll_ctl(px->ep, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

struct ferry_proxy *ferry_proxy_create(void)
{
	struct ferry_proxy *px = calloc(1, sizeof(*px));
	int err;

	if (!px)
		return NULL;
	pthread_mutex_init(&px->lock, NULL);
	px->ep = epoll_create1(EPOLL_CLOEXEC);
	if (px->ep < 0)
		goto err_px;
	px->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (px->wake_fd < 0)
		goto err_ep;
	px->timer_fd =
		timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (px->timer_fd < 0)
		goto err_wake;
	if (ep_add(px, px->wake_fd, tok(TOK_WAKE, 0, 0)) ||
	    ep_add(px, px->timer_fd, tok(TOK_TIMER, 0, 0)))
		goto err_timer;
	err = pthread_create(&px->thread, NULL, proxy_main, px);
	if (err) {
		errno = err;
		goto err_timer;
	}
	return px;

err_timer:
	err = errno;
	close(px->timer_fd);
	errno = err;
err_wake:
	err = errno;
	close(px->wake_fd);
	errno = err;
err_ep:
	err = errno;
	close(px->ep);
	errno = err;
err_px:
	err = errno;
	pthread_mutex_destroy(&px->lock);
	free(px);
	errno = err;
	return NULL;
}

void ferry_proxy_destroy(struct ferry_proxy *px)
{
	uint64_t one = 1;
	uint32_t i;

	if (!px)
		return;
	pthread_mutex_lock(&px->lock);
	px->stop = true;
	pthread_mutex_unlock(&px->lock);
	if (write(px->wake_fd, &one, sizeof(one)) < 0)
		log_warn("proxy: cannot wake the thread: %s", strerror(errno));
	pthread_join(px->thread, NULL);
	for (i = 0; i < FERRY_PROXY_MAX_FLOWS; i++)
		if (px->flows[i].state != FLOW_FREE)
			flow_end(px, &px->flows[i], END_ABORT);
	for (i = 0; i < FERRY_PROXY_MAX; i++)
		if (px->ls[i].used)
			close(px->ls[i].fd);
	bpf_unload(px);
	close(px->timer_fd);
	close(px->wake_fd);
	close(px->ep);
	pthread_mutex_destroy(&px->lock);
	free(px);
}

/* ------------------------------------------------------------ control */

static struct listener *find(struct ferry_proxy *px, const char *name)
{
	int i;

	for (i = 0; i < FERRY_PROXY_MAX; i++)
		if (px->ls[i].used && !strcmp(px->ls[i].name, name))
			return &px->ls[i];
	return NULL;
}

static int listen_on(const struct ferry_proxy_addr *a, const char *name,
		     uint64_t limit, struct ferry_err *msg)
{
	char at[64];
	int fd, one = 1, err;

	ferry_proxy_addr_text(a, at, sizeof(at));
	fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0)
		return ferry_fail(msg, -errno, "proxy %s: socket: %s", name,
				  strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (a->ss.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	rcvbuf_set(fd, limit); /* accepted sockets inherit it */
	if (bind(fd, (const struct sockaddr *)&a->ss, a->len) ||
	    listen(fd, LISTEN_BACKLOG)) {
		err = -errno;
		close(fd);
		return ferry_fail(msg, err, "proxy %s: cannot listen on %s: %s",
				  name, at, strerror(-err));
	}
	return fd;
}

int ferry_proxy_add(struct ferry_proxy *px, const struct ferry_proxy_params *pp,
		    struct ferry_err *msg)
{
	struct listener *l = NULL;
	int i, fd, rc = 0;

	if (!ferry_name_ok(pp->name, FERRY_PROXY_NAME_MAX))
		return ferry_fail(
			msg, -EINVAL,
			"bad proxy name '%s' (1-%d of A-Z a-z 0-9 _ . -)",
			pp->name, FERRY_PROXY_NAME_MAX - 1);
	/* A mark over the receive buffer (rcvbuf_set) would only be met
	 * when the window runs low. */
	if (pp->coalesce > pp->limit / 8)
		return ferry_fail(msg, -ERANGE,
				  "coalesce %u is over limit/8 (%llu), the "
				  "receive buffer",
				  pp->coalesce,
				  (unsigned long long)(pp->limit / 8));
	pthread_mutex_lock(&px->lock);
	if (find(px, pp->name)) {
		rc = ferry_fail(msg, -EEXIST, "proxy %s exists", pp->name);
		goto out;
	}
	for (i = 0; i < FERRY_PROXY_MAX && !l; i++)
		if (!px->ls[i].used)
			l = &px->ls[i];
	if (!l) {
		rc = ferry_fail(msg, -ENOSPC, "at most %d proxies",
				FERRY_PROXY_MAX);
		goto out;
	}
	if (pp->mode > FERRY_PROXY_MODE_SPLICE) {
		rc = ferry_fail(msg, -EINVAL, "bad proxy mode %u", pp->mode);
		goto out;
	}
	if (pp->pipe > FERRY_PROXY_PIPE_OFF) {
		rc = ferry_fail(msg, -EINVAL, "bad proxy pipe %u", pp->pipe);
		goto out;
	}
	if (!px->skel && pp->mode == FERRY_PROXY_MODE_SPLICE) {
		rc = bpf_load(px, msg);
		if (rc)
			goto out;
	}
	fd = listen_on(&pp->listen, pp->name, pp->limit, msg);
	if (fd < 0) {
		rc = fd;
		goto out;
	}
	memset(l, 0, sizeof(*l));
	snprintf(l->name, sizeof(l->name), "%s", pp->name);
	l->listen = pp->listen;
	l->backend = pp->backend;
	l->limit = pp->limit;
	l->coalesce = pp->coalesce;
	l->mode = pp->mode;
	l->pipe = pp->pipe;
	l->fd = fd;
	l->gen = ++px->gen_next ? px->gen_next : ++px->gen_next;
	rc = ep_add(px, fd, tok(TOK_LISTEN, (uint32_t)(l - px->ls), l->gen));
	if (rc) {
		close(fd);
		rc = ferry_fail(msg, rc, "proxy %s: epoll: %s", pp->name,
				strerror(-rc));
		goto out;
	}
	l->used = true;
out:
	pthread_mutex_unlock(&px->lock);
	return rc;
}

int ferry_proxy_del(struct ferry_proxy *px, const char *name,
		    struct ferry_err *msg)
{
	struct listener *l;
	int i;

	pthread_mutex_lock(&px->lock);
	l = find(px, name);
	if (!l) {
		pthread_mutex_unlock(&px->lock);
		return ferry_fail(msg, -ENOENT, "no proxy %s", name);
	}
	/* Closing removes it from the epoll set; a token already fetched
	 * finds the generation gone. Its flows carry on, ownerless. */
	close(l->fd);
	l->used = false;
	l->gen = 0;
	for (i = 0; i < FERRY_PROXY_MAX_FLOWS; i++)
		if (px->flows[i].state != FLOW_FREE &&
		    px->flows[i].owner == (int)(l - px->ls))
			px->flows[i].owner = -1;
	pthread_mutex_unlock(&px->lock);
	return 0;
}

static json_t *dir_json(const struct ferry_proxy_dir_ctr *c)
{
	json_t *o = json_object();

#define FERRY_PROXY_CTR_JSON(id, name)                                         \
	json_object_set_new(o, name,                                           \
			    json_integer((json_int_t)__atomic_load_n(          \
				    &c->id, __ATOMIC_RELAXED)));
	FERRY_PROXY_CTRS(FERRY_PROXY_CTR_JSON)
#undef FERRY_PROXY_CTR_JSON
	return o;
}

static const char *const state_names[] = {
	[FLOW_CONNECTING] = "connecting",
	[FLOW_SPLICED] = "spliced",
	[FLOW_RELAY] = "relay",
};

static json_t *relay_dir_json(const struct flow *fl, int s)
{
	return json_pack("{s:I, s:I, s:I, s:b, s:I, s:b}", "bytes",
			 (json_int_t)fl->relayed[s], "queued",
			 (json_int_t)relay_pending(fl, s), "pauses",
			 (json_int_t)fl->pauses[s], "eof", fl->eof[s], "piped",
			 (json_int_t)fl->piped[s], "pipe", fl->piping[s]);
}

static json_t *flow_json(struct ferry_proxy *px, struct flow *fl)
{
	const struct ferry_proxy_ctl *ctl =
		px->ctl ? &px->ctl[slot_of(px, fl)] : NULL;
	json_t *dir[2];
	char peer[64];
	int s;

	for (s = 0; s < 2; s++) {
		if (fl->state != FLOW_SPLICED) {
			dir[s] = relay_dir_json(fl, s);
			continue;
		}
		dir[s] = dir_json(ctr_of(px, fl, s));
		json_object_set_new(dir[s], "copied",
				    json_integer((json_int_t)ctl->copied[s]));
		json_object_set_new(dir[s], "queued",
				    json_integer((json_int_t)fl->queued[s]));
		json_object_set_new(dir[s], "eof", json_boolean(fl->eof[s]));
		json_object_set_new(dir[s], "plain",
				    json_boolean(fl->plain[s]));
		json_object_set_new(dir[s], "rcvlowat",
				    json_integer((json_int_t)fl->lowat[s]));
		json_object_set_new(dir[s], "coalesced",
				    json_integer((json_int_t)fl->coalesced[s]));
	}
	ferry_proxy_addr_text(&fl->peer, peer, sizeof(peer));
	return json_pack("{s:i, s:s, s:s, s:o, s:o, s:I}", "slot",
			 (int)slot_of(px, fl), "client", peer, "state",
			 state_names[fl->state], "client_to_backend", dir[0],
			 "backend_to_client", dir[1], "max_queued",
			 (json_int_t)fl->max_queued);
}

static const char *const mode_names[] = {
	[FERRY_PROXY_MODE_AUTO] = "auto",
	[FERRY_PROXY_MODE_RELAY] = "relay",
	[FERRY_PROXY_MODE_SPLICE] = "splice",
};

static json_t *listener_json(struct ferry_proxy *px, struct listener *l)
{
	char la[64], ba[64];
	uint64_t bytes[2] = {l->bytes[0], l->bytes[1]};
	uint64_t holds = l->holds, copied = l->copied, coalesced = l->coalesced;
	uint64_t relayed = l->relayed, piped = l->piped;
	json_t *flows = json_array(), *o;
	int i, s;

	for (i = 0; i < FERRY_PROXY_MAX_FLOWS; i++) {
		struct flow *fl = &px->flows[i];

		if (fl->state == FLOW_FREE || owner_of(px, fl) != l)
			continue;
		json_array_append_new(flows, flow_json(px, fl));
		if (fl->state == FLOW_RELAY) {
			for (s = 0; s < 2; s++) {
				bytes[s] += fl->relayed[s];
				relayed += fl->relayed[s];
				piped += fl->piped[s];
				holds += fl->pauses[s];
			}
		}
		if (fl->state != FLOW_SPLICED)
			continue;
		for (s = 0; s < 2; s++) {
			bytes[s] += moved(px, fl, s);
			holds += ctr_read(&ctr_of(px, fl, s)->holds);
			copied += px->ctl[i].copied[s];
			coalesced += fl->coalesced[s];
		}
	}
	ferry_proxy_addr_text(&l->listen, la, sizeof(la));
	ferry_proxy_addr_text(&l->backend, ba, sizeof(ba));
	o = json_pack(
		"{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
		"s:I, s:I, s:I, s:I, s:I, s:s?, s:o}",
		"name", l->name, "listen", la, "backend", ba, "limit",
		(json_int_t)l->limit, "coalesce", (json_int_t)l->coalesce,
		"accepted", (json_int_t)l->accepted, "active",
		(json_int_t)json_array_size(flows), "completed",
		(json_int_t)l->completed, "aborted", (json_int_t)l->aborted,
		"backend_failed", (json_int_t)l->backend_failed,
		"rejected_full", (json_int_t)l->rejected_full,
		"bytes_client_to_backend", (json_int_t)bytes[0],
		"bytes_backend_to_client", (json_int_t)bytes[1], "holds",
		(json_int_t)holds, "bytes_copied", (json_int_t)copied,
		"max_queued", (json_int_t)l->max_queued, "coalesced",
		(json_int_t)coalesced, "last_abort",
		l->last_abort[0] ? l->last_abort : NULL, "flows", flows);
	json_object_set_new(o, "mode", json_string(mode_names[l->mode]));
	json_object_set_new(
		o, "pipe",
		json_string(l->pipe == FERRY_PROXY_PIPE_OFF ? "off" : "auto"));
	json_object_set_new(o, "flows_relay",
			    json_integer((json_int_t)l->flows_relay));
	json_object_set_new(o, "flows_splice",
			    json_integer((json_int_t)l->flows_splice));
	json_object_set_new(o, "bytes_relayed",
			    json_integer((json_int_t)relayed));
	json_object_set_new(o, "flows_piped",
			    json_integer((json_int_t)l->flows_piped));
	json_object_set_new(o, "bytes_piped", json_integer((json_int_t)piped));
	return o;
}

json_t *ferry_proxy_show(struct ferry_proxy *px, const char *name,
			 struct ferry_err *msg)
{
	struct ferry_proxy_misc misc = {0};
	json_t *arr, *out = NULL;
	int i, draining = 0;
	uint32_t zero = 0;

	pthread_mutex_lock(&px->lock);
	if (name && !find(px, name)) {
		ferry_fail(msg, -ENOENT, "no proxy %s", name);
		goto out;
	}
	arr = json_array();
	for (i = 0; i < FERRY_PROXY_MAX; i++)
		if (px->ls[i].used && (!name || !strcmp(px->ls[i].name, name)))
			json_array_append_new(arr,
					      listener_json(px, &px->ls[i]));
	for (i = 0; i < FERRY_PROXY_MAX_FLOWS; i++)
		if (px->flows[i].state != FLOW_FREE && px->flows[i].owner < 0)
			draining++;
	if (px->skel)
		bpf_map_lookup_elem(
			bpf_map__fd(px->skel->maps.ferry_proxy_misc), &zero,
			&misc);
	out = json_pack("{s:o, s:i, s:I}", "proxies", arr, "draining_flows",
			draining, "unknown_socket_skbs",
			(json_int_t)misc.unknown);
out:
	pthread_mutex_unlock(&px->lock);
	return out;
}

int ferry_proxy_count(struct ferry_proxy *px)
{
	int i, n = 0;

	pthread_mutex_lock(&px->lock);
	for (i = 0; i < FERRY_PROXY_MAX; i++)
		n += px->ls[i].used;
	pthread_mutex_unlock(&px->lock);
	return n;
}

int ferry_proxy_get(struct ferry_proxy *px, int i,
		    struct ferry_proxy_params *pp, char *name, size_t name_len)
{
	int k, rc = -ENOENT;

	pthread_mutex_lock(&px->lock);
	for (k = 0; k < FERRY_PROXY_MAX; k++) {
		const struct listener *l = &px->ls[k];

		if (!l->used || i-- > 0)
			continue;
		snprintf(name, name_len, "%s", l->name);
		*pp = (struct ferry_proxy_params){
			.name = name,
			.listen = l->listen,
			.backend = l->backend,
			.limit = l->limit,
			.coalesce = l->coalesce,
			.mode = l->mode,
			.pipe = l->pipe,
		};
		rc = 0;
		break;
	}
	pthread_mutex_unlock(&px->lock);
	return rc;
}
