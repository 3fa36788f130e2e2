// SPDX-License-Identifier: BSD-2-Clause
/*
 * nlmirror_dump - load the kernel's routing state through nlmirror into a
 * FIB and print what the FIB holds; then, with -f, follow changes and
 * print each route change as it is applied. For tests/system/t_nlmirror.sh.
 *
 *   nlmirror_dump [-p IFNAME]... [-r ADDR@IFNAME] [-f SECONDS | -i]
 *
 * -p makes IFNAME ferry port 0, 1, ... in order; -r asks the kernel to
 * resolve ADDR on IFNAME (nlmirror_resolve) after the dump; -i, after the
 * dump, applies the kernel's changes as they come and answers commands on
 * stdin, one line each, having first applied whatever the kernel has sent
 * (so a change made before the command is in the answer):
 *   lookup ADDR     -> "lookup ADDR nh ID NEXTHOP" or "lookup ADDR none"
 *   routes          -> the route lines, then "end"
 *   counters        -> "counter NAME N" lines (on_route: the route changes
 *                      the mirror reported), then "end"
 *   rcvbuf BYTES    -> SO_RCVBUF of the event socket, "ok" (small: overruns)
 *   sleep SECONDS   -> read nothing for that long (events pile up), "ok"
 *   quit
 * Lines:
 *   link IFNAME port N|-
 *   port N mtu MTU ip4 ADDR ip6 ADDR|-   (nlmirror_route_port)
 *   addr ADDR/LEN dev IFNAME
 *   neigh ADDR dev IFNAME lladdr MAC
 *   route PREFIX/LEN NEXTHOP        (sorted by the caller: sort)
 *   ready
 *   add|del PREFIX/LEN NEXTHOP      (with -f)
 * where NEXTHOP is "local", "drop", "connected port P", "via GW port P
 * mac MAC|unresolved", or "multipath" and its paths in brackets.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fib.h"
#include "nlmirror.h"

struct ctx {
	const char *ports[16];
	int n_ports;
	struct fib *fib;
	struct nlmirror *nlm;
	int quiet;		    /* -i: route changes counted, not printed */
	unsigned long route_events; /* on_route calls after the dump */
};

static int port_of(void *arg, int ifindex, const char *ifname)
{
	struct ctx *c = arg;
	int i;

	(void)ifindex;
	for (i = 0; i < c->n_ports; i++)
		if (!strcmp(c->ports[i], ifname))
			return i;
	return -1;
}

static const char *ntop(int family, const uint8_t *a, char *buf)
{
	return inet_ntop(family == 4 ? AF_INET : AF_INET6, a, buf,
			 INET6_ADDRSTRLEN);
}

static void path(const struct ctx *c, uint32_t id, FILE *o)
{
	struct fib_nh_info in;
	uint8_t gw[16];
	char b[INET6_ADDRSTRLEN];
	int fam, ifi;

	if (fib_nh_get(c->fib, id, &in)) {
		fprintf(o, "?");
		return;
	}
	if (in.flags & FIB_NH_F_LOCAL) {
		fprintf(o, "local");
		return;
	}
	if (in.flags & FIB_NH_F_DROP) {
		fprintf(o, "drop");
		return;
	}
	if (in.flags & FIB_NH_F_CONNECTED) {
		fprintf(o, "connected port %d",
			in.port == FIB_PORT_NONE ? -1 : in.port);
		return;
	}
	if (nlmirror_nh_target(c->nlm, id, &fam, gw, &ifi) == 0)
		fprintf(o, "via %s ", ntop(fam, gw, b));
	fprintf(o, "port %d ", in.port == FIB_PORT_NONE ? -1 : in.port);
	if (in.flags & FIB_NH_F_NEIGH)
		fprintf(o, "mac %02x:%02x:%02x:%02x:%02x:%02x", in.mac[0],
			in.mac[1], in.mac[2], in.mac[3], in.mac[4], in.mac[5]);
	else
		fprintf(o, "unresolved");
}

static void nexthop(const struct ctx *c, uint32_t id, FILE *o)
{
	uint32_t m[FIB_MP_MAX];
	unsigned n = FIB_MP_MAX, i;

	if (fib_nh_group_get(c->fib, id, m, &n) == 0) {
		fprintf(o, "multipath [");
		for (i = 0; i < n; i++) {
			fprintf(o, i ? ", " : "");
			path(c, m[i], o);
		}
		fprintf(o, "]");
		return;
	}
	path(c, id, o);
}

struct walk {
	struct ctx *c;
	int family;
};

static int print_route(void *arg, const uint8_t prefix[16], unsigned len,
		       uint32_t nh)
{
	struct walk *w = arg;
	char b[INET6_ADDRSTRLEN];

	printf("route %s/%u ", ntop(w->family, prefix, b), len);
	nexthop(w->c, nh, stdout);
	printf("\n");
	return 0;
}

static int print_link(void *arg, const struct nlmirror_link *l)
{
	(void)arg;
	if (l->port >= 0)
		printf("link %s port %d\n", l->name, l->port);
	else
		printf("link %s port -\n", l->name);
	return 0;
}

static int print_addr(void *arg, const struct nlmirror_addr *a)
{
	char b[INET6_ADDRSTRLEN], n[IF_NAMESIZE] = "?";

	(void)arg;
	if_indextoname((unsigned)a->ifindex, n);
	printf("addr %s/%u dev %s\n", ntop(a->family, a->addr, b), a->prefixlen,
	       n);
	return 0;
}

static int print_neigh(void *arg, const struct nlmirror_neigh *e)
{
	char b[INET6_ADDRSTRLEN], n[IF_NAMESIZE] = "?";

	(void)arg;
	if_indextoname((unsigned)e->ifindex, n);
	printf("neigh %s dev %s lladdr %02x:%02x:%02x:%02x:%02x:%02x\n",
	       ntop(e->family, e->addr, b), n, e->mac[0], e->mac[1], e->mac[2],
	       e->mac[3], e->mac[4], e->mac[5]);
	return 0;
}

static void on_route(void *arg, enum nlmirror_change what, int family,
		     const uint8_t *prefix, unsigned len, uint32_t nh)
{
	struct ctx *c = arg;
	char b[INET6_ADDRSTRLEN];

	if (!c->nlm) /* the initial dump: printed as a whole afterwards */
		return;
	c->route_events++;
	if (c->quiet)
		return;
	printf("%s %s/%u ", what == NLMIRROR_ROUTE_ADD ? "add" : "del",
	       ntop(family, prefix, b), len);
	if (what == NLMIRROR_ROUTE_ADD)
		nexthop(c, nh, stdout);
	printf("\n");
	fflush(stdout);
}

static void print_routes(struct ctx *c)
{
	struct walk w = {.c = c, .family = 4};

	fib_walk(c->fib, 4, print_route, &w);
	w.family = 6;
	fib_walk(c->fib, 6, print_route, &w);
}

static void print_counters(const struct ctx *c)
{
	struct nlmirror_counters cnt;

	nlmirror_counters(c->nlm, &cnt);
#define X(n) printf("counter " #n " %llu\n", (unsigned long long)cnt.n);
	NLMIRROR_COUNTERS(X)
#undef X
	printf("counter on_route %lu\n", c->route_events);
}

static void lookup(const struct ctx *c, const char *addr)
{
	const struct fib_dp *dp = fib_dp(c->fib);
	uint8_t a[16];
	uint32_t nh, a4;

	if (inet_pton(AF_INET, addr, a) == 1) {
		memcpy(&a4, a, 4);
		nh = fib4_lookup(dp, ntohl(a4));
	} else if (inet_pton(AF_INET6, addr, a) == 1) {
		nh = fib6_lookup(dp, a);
	} else {
		printf("error bad address %s\n", addr);
		return;
	}
	if (nh == FIB_NH_NONE) {
		printf("lookup %s none\n", addr);
		return;
	}
	printf("lookup %s nh %u ", addr, nh);
	nexthop(c, nh, stdout);
	printf("\n");
}

/* One command line of -i; 1 to quit. */
static int command(struct ctx *c, char *line)
{
	char *arg = strchr(line, ' ');
	int v;

	if (arg)
		*arg++ = 0;
	if (!strcmp(line, "quit"))
		return 1;
	if (!strcmp(line, "lookup") && arg) {
		lookup(c, arg);
	} else if (!strcmp(line, "routes")) {
		print_routes(c);
		printf("end\n");
	} else if (!strcmp(line, "counters")) {
		print_counters(c);
		printf("end\n");
	} else if (!strcmp(line, "rcvbuf") && arg) {
		v = nlmirror_set_rcvbuf(c->nlm, atoi(arg));
		if (v)
			printf("error %s\n", strerror(-v));
		else
			printf("ok\n");
	} else if (!strcmp(line, "sleep") && arg) {
		usleep((useconds_t)(atof(arg) * 1e6));
		printf("ok\n");
	} else {
		printf("error unknown command %s\n", line);
	}
	fflush(stdout);
	return 0;
}

/* -i: the kernel's changes applied as they come, commands answered after
 * applying what is pending. */
static int interactive(struct ctx *c)
{
	char buf[4096];
	size_t used = 0;
	ssize_t n;
	int err;

	for (;;) {
		struct pollfd pfd[2] = {
			{.fd = nlmirror_fd(c->nlm), .events = POLLIN},
			{.fd = 0, .events = POLLIN},
		};
		char *nl;

		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			return 1;
		err = nlmirror_process(c->nlm);
		if (err < 0) {
			fprintf(stderr, "nlmirror_process: %s\n",
				strerror(-err));
			return 1;
		}
		if (!(pfd[1].revents & (POLLIN | POLLHUP)))
			continue;
		n = read(0, buf + used, sizeof(buf) - 1 - used);
		if (n <= 0)
			return 0;
		used += (size_t)n;
		buf[used] = 0;
		while ((nl = strchr(buf, '\n'))) {
			*nl = 0;
			if (command(c, buf))
				return 0;
			/* a command's answer holds what the kernel sent
			 * before it: apply that before the next one */
			err = nlmirror_process(c->nlm);
			if (err < 0)
				return 1;
			used -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, used + 1);
		}
		if (used == sizeof(buf) - 1)
			used = 0; /* a line too long: dropped */
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	struct fib_params fp = {.v4_groups = 256, .v6_groups = 4096};
	struct ctx c = {0};
	struct nlmirror_params np = {
		.port_of = port_of, .on_route = on_route, .arg = &c};
	const char *resolve = NULL;
	double follow = 0, end;
	int opt, err, inter = 0;

	while ((opt = getopt(argc, argv, "p:f:r:i")) != -1) {
		switch (opt) {
		case 'p':
			if (c.n_ports < 16)
				c.ports[c.n_ports++] = optarg;
			break;
		case 'f':
			follow = atof(optarg);
			break;
		case 'r':
			resolve = optarg;
			break;
		case 'i':
			inter = 1;
			c.quiet = 1;
			break;
		default:
			fprintf(stderr,
				"usage: %s [-p IFNAME]... "
				"[-r ADDR@IFNAME] [-f SECONDS | -i]\n",
				argv[0]);
			return 2;
		}
	}
	c.fib = fib_create(&fp);
	if (!c.fib) {
		perror("fib_create");
		return 1;
	}
	np.fib = c.fib;
	c.nlm = NULL;
	{
		struct nlmirror *m = nlmirror_create(&np);

		if (!m) {
			perror("nlmirror_create");
			return 1;
		}
		c.nlm = m;
	}
	nlmirror_walk_links(c.nlm, print_link, NULL);
	for (opt = 0; opt < c.n_ports; opt++) {
		struct route_port rp = {0};
		char b4[INET_ADDRSTRLEN], b6[INET6_ADDRSTRLEN];
		uint32_t a4;

		if (nlmirror_route_port(c.nlm, opt, &rp))
			continue;
		a4 = htonl(rp.ip4);
		printf("port %d mtu %u ip4 %s ip6 %s\n", opt, rp.mtu,
		       inet_ntop(AF_INET, &a4, b4, sizeof(b4)),
		       rp.has_ip6 ? ntop(6, rp.ip6, b6) : "-");
	}
	nlmirror_walk_addrs(c.nlm, print_addr, NULL);
	nlmirror_walk_neigh(c.nlm, print_neigh, NULL);
	print_routes(&c);
	if (resolve) {
		char addr[64], *at;
		uint8_t a[16];
		int fam;

		snprintf(addr, sizeof(addr), "%s", resolve);
		at = strchr(addr, '@');
		if (!at) {
			fprintf(stderr, "-r ADDR@IFNAME\n");
			return 2;
		}
		*at = 0;
		fam = strchr(addr, ':') ? 6 : 4;
		if (inet_pton(fam == 4 ? AF_INET : AF_INET6, addr, a) != 1) {
			fprintf(stderr, "bad address %s\n", addr);
			return 2;
		}
		err = nlmirror_resolve(c.nlm, fam, a,
				       (int)if_nametoindex(at + 1));
		if (err) {
			fprintf(stderr, "nlmirror_resolve: %s\n",
				strerror(-err));
			return 1;
		}
	}
	printf("ready\n");
	fflush(stdout);
	if (inter) {
		err = interactive(&c);
		nlmirror_destroy(c.nlm);
		fib_destroy(c.fib);
		return err;
	}
	for (end = now() + follow; now() < end;) {
		struct pollfd pfd = {.fd = nlmirror_fd(c.nlm),
				     .events = POLLIN};
		int ms = (int)((end - now()) * 1000) + 1;

		if (poll(&pfd, 1, ms) > 0) {
			err = nlmirror_process(c.nlm);
			if (err < 0) {
				fprintf(stderr, "nlmirror_process: %s\n",
					strerror(-err));
				return 1;
			}
		}
	}
	if (follow) {
		nlmirror_walk_neigh(c.nlm, print_neigh, NULL);
		print_counters(&c);
	}
	nlmirror_destroy(c.nlm);
	fib_destroy(c.fib);
	return 0;
}
