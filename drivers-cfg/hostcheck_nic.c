// SPDX-License-Identifier: BSD-2-Clause
/*
 * hostcheck_nic.c - one interface's rows of `host check`: its driver
 * profile, NUMA nodes of the NIC and the worker CPUs, queues against
 * workers, IRQ affinity, busy-poll knobs, a veth peer's TX checksum
 * offload.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/ethtool.h>
#include <linux/net_namespace.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hostcheck_int.h"

/* ---------------------------------------------------- the interface */

void hc_check_driver(struct hc *h)
{
	char link[PATH_MAX], path[PATH_MAX];
	ssize_t n;
	const char *base;

	snprintf(path, sizeof(path), "%s/sys/class/net/%s/device/driver",
		 h->root, h->ifname);
	n = readlink(path, link, sizeof(link) - 1);
	if (n > 0) {
		link[n] = '\0';
		base = strrchr(link, '/');
		base = base ? base + 1 : link;
		snprintf(h->driver, sizeof(h->driver), "%.*s",
			 (int)sizeof(h->driver) - 1, base);
	} else if (h->root[0] ||
		   ferry_driver_name(h->ifname, h->driver, sizeof(h->driver))) {
		snprintf(h->driver, sizeof(h->driver), "unknown");
	}
	h->profile = ferry_profile_lookup(h->driver);
	if (strcmp(h->profile->driver, "generic"))
		hc_row(h, "driver", HC_OK, NULL,
		       "%s: profile %s, %s XDP, %s, XDP MTU <= %u", h->driver,
		       h->profile->driver,
		       h->profile->native_xdp ? "native" : "generic",
		       h->profile->zerocopy ? "zero-copy" : "copy mode only",
		       h->profile->xdp_mtu_max);
	else
		hc_row(h, "driver", HC_WARN,
		       "port add ... xdp native mode zc to try anyway",
		       "%s: no profile, generic one used (generic XDP, copy "
		       "mode)",
		       h->driver);
}

int hc_probe_netdev_feat(const char *ifname, struct ferry_netdev_feat *out)
{
	int ifindex = (int)if_nametoindex(ifname);

	return ifindex ? ferry_netdev_feat_get(ifindex, out) : -ENODEV;
}

/*
 * What the driver reports (the netdev family) next to its profile: the
 * kernel's answer decides zero-copy and multi-buffer where it has one,
 * the profile where it has not; each says which.
 */
void hc_check_xdp_features(struct hc *h)
{
	struct ferry_netdev_feat feat = {0};
	char value[512];
	int err = h->probes->netdev_feat
			  ? h->probes->netdev_feat(h->ifname, &feat)
			  : -ENOSYS;

	ferry_driver_caps_decide(h->profile, &feat, err, &h->caps);
	ferry_driver_caps_fmt(&h->caps, value, sizeof(value));
	if (err && err != -ENOENT && err != -ENOSYS)
		hc_row(h, "xdp features", HC_WARN,
		       "ferryctl host check as root, or ask ferryd", "%s",
		       value);
	else
		hc_row(h, "xdp features", HC_OK, NULL, "%s", value);
}

void hc_check_numa(struct hc *h)
{
	struct ferry_numa_plan plan;
	char check[32], fix[160], cpus[128];
	long node;
	int c;

	h->nic_node =
		hc_read_long(h, &node, "/sys/class/net/%s/device/numa_node",
			     h->ifname)
			? -1
			: (int)node;
	if (h->nic_node < 0)
		hc_row(h, "numa: nic", HC_OK, NULL,
		       "%s has no node (virtual device or one-node host)",
		       h->ifname);
	else
		hc_row(h, "numa: nic", HC_OK, NULL, "%s on node %d", h->ifname,
		       h->nic_node);
	ferry_numa_plan(h->nic_node, h->cpus, h->cpu_node, &plan);
	ferry_cpulist_fmt(plan.nic_cpus, cpus, sizeof(cpus));
	snprintf(fix, sizeof(fix), "workers %s (the CPUs on node %d)",
		 cpus[0] ? cpus : "?", h->nic_node);
	for (c = 0; c < FERRY_NUMA_MAX_CPUS; c++) {
		if (!(h->cpus & (1ull << c)))
			continue;
		snprintf(check, sizeof(check), "numa: cpu %d", c);
		if (plan.off_node & (1ull << c))
			hc_row(h, check, HC_WARN, fix,
			       "node %d, NIC on node %d: frames cross nodes",
			       h->cpu_node[c], h->nic_node);
		else if (h->cpu_node[c] < 0)
			hc_row(h, check, HC_OK, NULL, "no node known");
		else
			hc_row(h, check, HC_OK, NULL, "node %d",
			       h->cpu_node[c]);
	}
}

/*
 * A profile's queues_cmd with its placeholders filled in: the word IFNAME
 * and every standalone word N.
 */
static void queues_fix(const char *tmpl, const char *ifname, int n, char *buf,
		       size_t len)
{
	FILE *out = fmemopen(buf, len, "w");
	const char *s;

	if (!out) {
		snprintf(buf, len, "%s", tmpl);
		return;
	}
	for (s = tmpl; *s; s++) {
		bool word_start = s == tmpl || s[-1] == ' ';

		if (word_start && !strncmp(s, "IFNAME", 6)) {
			fputs(ifname, out);
			s += 5;
		} else if (word_start && s[0] == 'N' &&
			   (!s[1] || strchr(" )", s[1]))) {
			fprintf(out, "%d", n);
		} else {
			fputc(*s, out);
		}
	}
	fclose(out);
}

void hc_check_queues(struct hc *h)
{
	int workers = __builtin_popcountll(h->cpus), rxq = 0;
	struct dirent *de;
	char cmd[160], fix[256];
	DIR *d;

	d = hc_open_dir(h, "/sys/class/net/%s/queues", h->ifname);
	while (d && (de = readdir(d)))
		rxq += !strncmp(de->d_name, "rx-", 3);
	if (d)
		closedir(d);
	queues_fix(h->profile->queues_cmd, h->ifname, workers, cmd,
		   sizeof(cmd));
	snprintf(fix, sizeof(fix), "%s (or queues %s %d in host-setup.conf)",
		 cmd, h->ifname, workers);
	if (!rxq)
		hc_row(h, "queues", HC_WARN, "ethtool -l IFNAME",
		       "%s: no queues in sysfs", h->ifname);
	else if (rxq < workers)
		hc_row(h, "queues", HC_WARN, fix,
		       "%d RX queue(s), %d workers: %d worker(s) get no queue "
		       "of this port",
		       rxq, workers, workers - rxq);
	else if (rxq % workers)
		hc_row(h, "queues", HC_WARN, fix,
		       "%d RX queues, %d workers: uneven (some workers poll "
		       "one more queue)",
		       rxq, workers);
	else
		hc_row(h, "queues", HC_OK, NULL,
		       "%d RX queue(s), %d worker(s): %d per worker", rxq,
		       workers, rxq / workers);
}

/* IRQs of the device: its MSI vectors (a virtio NIC's are its parent's). */
static DIR *open_irq_dir(struct hc *h)
{
	DIR *d = hc_open_dir(h, "/sys/class/net/%s/device/msi_irqs", h->ifname);

	return d ? d
		 : hc_open_dir(h, "/sys/class/net/%s/device/../msi_irqs",
			       h->ifname);
}

void hc_check_irqs(struct hc *h)
{
	char aff[128], outside[128] = "", cpus[128], fix[256];
	int n = 0, bad = 0, first_bad = -1;
	struct dirent *de;
	DIR *d = open_irq_dir(h);

	if (!d) {
		hc_row(h, "irq affinity", HC_OK, NULL,
		       "%s has no IRQs (virtual device): nothing to pin",
		       h->ifname);
		return;
	}
	while ((de = readdir(d))) {
		int irq;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		irq = atoi(de->d_name);
		n++;
		if (hc_read_str(h, aff, sizeof(aff),
				"/proc/irq/%d/smp_affinity_list", irq))
			continue;
		if (hc_cpulist_parse(aff) & ~h->cpus) {
			if (!bad++) {
				first_bad = irq;
				snprintf(outside, sizeof(outside), "%s", aff);
			}
		}
	}
	closedir(d);
	ferry_cpulist_fmt(h->cpus, cpus, sizeof(cpus));
	snprintf(fix, sizeof(fix),
		 "irq-affinity %s %s in host-setup.conf (stop irqbalance), "
		 "or echo CPU > /proc/irq/N/smp_affinity_list",
		 h->ifname, cpus);
	if (bad)
		hc_row(h, "irq affinity", HC_WARN, fix,
		       "%d of %d IRQs may run off the workers (irq %d on CPUs "
		       "%s): softirq work lands on other cores",
		       bad, n, first_bad, outside);
	else
		hc_row(h, "irq affinity", HC_OK, NULL,
		       "%d IRQ(s), all on worker CPUs %s", n, cpus);
}

void hc_check_busy_poll(struct hc *h)
{
	long defer = -1, gft = -1;
	char fix[256];

	hc_read_long(h, &defer, "/sys/class/net/%s/napi_defer_hard_irqs",
		     h->ifname);
	hc_read_long(h, &gft, "/sys/class/net/%s/gro_flush_timeout", h->ifname);
	snprintf(fix, sizeof(fix),
		 "busy-poll %s defer=2 gro_flush_timeout=200000 in "
		 "host-setup.conf",
		 h->ifname);
	if (defer < 0 || gft < 0)
		hc_row(h, "busy-poll", HC_WARN, "a kernel with these (5.10+)",
		       "napi_defer_hard_irqs/gro_flush_timeout unreadable");
	else if (!h->caps.zerocopy)
		hc_row(h, "busy-poll", HC_OK, NULL,
		       "defer=%ld gro_flush_timeout=%ld; not used: %s is copy "
		       "mode only (%s), and copy-mode sockets cannot busy-poll",
		       defer, gft, h->driver,
		       ferry_caps_from_name(h->caps.zerocopy_from));
	else if (defer > 0 && gft > 0)
		hc_row(h, "busy-poll", HC_OK, NULL,
		       "defer=%ld gro_flush_timeout=%ld", defer, gft);
	else
		hc_row(h, "busy-poll", HC_WARN, fix,
		       "defer=%ld gro_flush_timeout=%ld: with busy-poll on, "
		       "IRQs still interrupt the workers",
		       defer, gft);
}

/* ------------------------------------------- a veth peer's checksums */

/* What a probe asks about a veth's peer. */
enum veth_ask {
	VETH_TX_CSUM, /* is its TX checksum offload on? */
	VETH_RX_NAPI, /* does it take ndo_xdp_xmit frames: XDP or GRO on? */
};

/*
 * One rtnetlink request and its single answer, read into buf: the answer's
 * first attribute past its hdr_len-byte header in *attr, and the bytes of
 * attributes in *rest. 0, or -errno (-EIO for an error or short answer).
 */
static int rtnl_ask(const void *req, size_t len, size_t hdr_len, char *buf,
		    size_t cap, struct rtattr **attr, int *rest)
{
	struct nlmsghdr *nh = (struct nlmsghdr *)buf;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	ssize_t n;

	if (fd < 0)
		return -errno;
	if (send(fd, req, len, 0) < 0 || (n = recv(fd, buf, cap, 0)) < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	close(fd);
	if (!NLMSG_OK(nh, (size_t)n) || nh->nlmsg_type == NLMSG_ERROR)
		return -EIO;
	*attr = (struct rtattr *)((char *)NLMSG_DATA(nh) +
				  NLMSG_ALIGN(hdr_len));
	*rest = (int)nh->nlmsg_len - (int)NLMSG_LENGTH(NLMSG_ALIGN(hdr_len));
	return 0;
}

/*
 * An XDP program attached to ifindex (any mode): 1/0, -errno. In the
 * namespace our namespace calls nsid (-1: ours), which needs no setns
 * (and so no CAP_SYS_ADMIN); its name in name when not NULL.
 */
static int xdp_attached_in(int32_t nsid, int ifindex, char *name)
{
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
		struct rtattr a;
		int32_t nsid;
	} req = {
		.nh = {.nlmsg_len = sizeof(req),
		       .nlmsg_type = RTM_GETLINK,
		       .nlmsg_flags = NLM_F_REQUEST},
		.ifi = {.ifi_family = AF_UNSPEC, .ifi_index = ifindex},
		.a = {.rta_len = RTA_LENGTH(4),
		      .rta_type = IFLA_TARGET_NETNSID},
		.nsid = nsid,
	};
	int found = 0;
	char buf[16384];
	struct rtattr *a, *x;
	int rest, xrest, err;

	if (nsid < 0)
		req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.ifi));
	err = rtnl_ask(&req, req.nh.nlmsg_len, sizeof(req.ifi), buf,
		       sizeof(buf), &a, &rest);
	if (err)
		return err;
	for (; RTA_OK(a, rest); a = RTA_NEXT(a, rest)) {
		if (a->rta_type == IFLA_IFNAME && name)
			snprintf(name, IF_NAMESIZE, "%.*s", (int)RTA_PAYLOAD(a),
				 (char *)RTA_DATA(a));
		if ((a->rta_type & NLA_TYPE_MASK) != IFLA_XDP)
			continue;
		x = RTA_DATA(a);
		xrest = (int)RTA_PAYLOAD(a);
		for (; RTA_OK(x, xrest); x = RTA_NEXT(x, xrest))
			if (x->rta_type == IFLA_XDP_ATTACHED &&
			    RTA_PAYLOAD(x) >= 1)
				found = *(uint8_t *)RTA_DATA(x) !=
					XDP_ATTACHED_NONE;
	}
	return found;
}

/*
 * In the calling thread's network namespace: is ifindex a veth, and what
 * ask asks of it? 1/0, -errno; its name in name.
 */
static int veth_ask_here(int ifindex, enum veth_ask ask, char *name)
{
	struct ethtool_drvinfo di = {.cmd = ETHTOOL_GDRVINFO};
	struct ethtool_value ev = {.cmd = ask == VETH_TX_CSUM ? ETHTOOL_GTXCSUM
							      : ETHTOOL_GGRO};
	struct ifreq ifr = {.ifr_ifindex = ifindex};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = -ENOENT;

	if (fd < 0)
		return -errno;
	if (ioctl(fd, SIOCGIFNAME, &ifr))
		goto out;
	snprintf(name, IF_NAMESIZE, "%s", ifr.ifr_name);
	ifr.ifr_data = (void *)&di;
	if (ioctl(fd, SIOCETHTOOL, &ifr) || strcmp(di.driver, "veth"))
		goto out;
	ifr.ifr_data = (void *)&ev;
	rc = ioctl(fd, SIOCETHTOOL, &ifr) ? -errno : ev.data != 0;
	/* veth keeps a NAPI (and so takes redirected frames) for GRO or
	 * for an XDP program. */
	if (ask == VETH_RX_NAPI && rc == 0)
		rc = xdp_attached_in(-1, ifindex, NULL);
out:
	close(fd);
	return rc;
}

struct ns_probe {
	int ns_fd;
	int ifindex;
	enum veth_ask ask;
	char name[IF_NAMESIZE];
	int rc;
};

/* A thread of its own enters the namespace, so the caller's stays put. */
static void *ns_probe_run(void *arg)
{
	struct ns_probe *np = arg;

	np->rc = setns(np->ns_fd, CLONE_NEWNET)
			 ? -errno
			 : veth_ask_here(np->ifindex, np->ask, np->name);
	return NULL;
}

/*
 * One rtnetlink request and its answer's attribute want (a 32-bit
 * value) in *v: 0, -ENOENT when the answer lacks it, -errno.
 */
static int rtnl_get_s32(void *req, size_t len, size_t hdr_len, int want,
			int32_t *v)
{
	char buf[8192];
	struct rtattr *a;
	int rest, err;

	err = rtnl_ask(req, len, hdr_len, buf, sizeof(buf), &a, &rest);
	if (err)
		return err;
	for (; RTA_OK(a, rest); a = RTA_NEXT(a, rest))
		if (a->rta_type == want && RTA_PAYLOAD(a) >= 4) {
			memcpy(v, RTA_DATA(a), 4);
			return 0;
		}
	return -ENOENT;
}

/* Where our veth's peer lives, as an id of our namespace: -ENOENT here. */
static int link_netnsid(int ifindex, int32_t *nsid)
{
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
	} req = {
		.nh = {.nlmsg_len = sizeof(req),
		       .nlmsg_type = RTM_GETLINK,
		       .nlmsg_flags = NLM_F_REQUEST},
		.ifi = {.ifi_family = AF_UNSPEC, .ifi_index = ifindex},
	};

	return rtnl_get_s32(&req, sizeof(req), sizeof(req.ifi),
			    IFLA_LINK_NETNSID, nsid);
}

/* The id our namespace gives the namespace of ns_fd (-1: none yet). */
static int fd_netnsid(int ns_fd, int32_t *nsid)
{
	struct {
		struct nlmsghdr nh;
		struct rtgenmsg g;
		char pad[3];
		struct rtattr a;
		uint32_t fd;
	} req = {
		.nh = {.nlmsg_len = sizeof(req),
		       .nlmsg_type = RTM_GETNSID,
		       .nlmsg_flags = NLM_F_REQUEST},
		.g = {.rtgen_family = AF_UNSPEC},
		.a = {.rta_len = RTA_LENGTH(4), .rta_type = NETNSA_FD},
		.fd = (uint32_t)ns_fd,
	};

	return rtnl_get_s32(&req, sizeof(req), sizeof(req.g), NETNSA_NSID,
			    nsid);
}

/*
 * The peer's ifindex is our iflink. In our namespace when a veth has it
 * there and points back at us; else the namespaces `ip netns` names are
 * tried, and only one veth with that index may answer. An unnamed
 * namespace (a container runtime's) is not found: -ENOENT.
 */
static int veth_peer_ask(const char *ifname, enum veth_ask ask, char *peer,
			 size_t len)
{
	char path[PATH_MAX], buf[32], name[IF_NAMESIZE], found[IF_NAMESIZE];
	int own = (int)if_nametoindex(ifname), iflink, rc, hits = 0, ans = 0;
	int32_t want_nsid, nsid;
	struct stat self;
	struct dirent *de;
	long back;
	FILE *f;
	DIR *d;

	snprintf(path, sizeof(path), "/sys/class/net/%s/iflink", ifname);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	iflink = fgets(buf, sizeof(buf), f) ? atoi(buf) : 0;
	fclose(f);
	/* A veth's peer in another namespace may have our own index. */
	if (iflink <= 0)
		return -ENOENT;
	rc = veth_ask_here(iflink, ask, name);
	if (rc >= 0 && strcmp(name, ifname)) {
		snprintf(path, sizeof(path), "/sys/class/net/%s/iflink", name);
		f = fopen(path, "r");
		back = f && fgets(buf, sizeof(buf), f) ? atol(buf) : 0;
		if (f)
			fclose(f);
		if (back == own) {
			snprintf(peer, len, "%s", name);
			return rc;
		}
	}
	if (stat("/proc/self/ns/net", &self))
		return -errno;
	/* Which namespace: the one whose id is our link's link-netnsid. */
	if (link_netnsid(own, &want_nsid))
		want_nsid = -1;
	d = opendir("/run/netns");
	while (d && (de = readdir(d))) {
		struct ns_probe np = {
			.ifindex = iflink, .ask = ask, .rc = -ENOENT};
		struct stat st;
		pthread_t t;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/run/netns/%s", de->d_name);
		np.ns_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (np.ns_fd < 0)
			continue;
		/* Our own namespace is the one place the peer is not; with
		 * the link's namespace id known, only that one is tried. */
		if ((!fstat(np.ns_fd, &st) && st.st_ino == self.st_ino &&
		     st.st_dev == self.st_dev) ||
		    (want_nsid >= 0 &&
		     (fd_netnsid(np.ns_fd, &nsid) || nsid != want_nsid))) {
			close(np.ns_fd);
			continue;
		}
		if (!pthread_create(&t, NULL, ns_probe_run, &np))
			pthread_join(t, NULL);
		close(np.ns_fd);
		if (np.rc < 0)
			continue;
		if (!hits++) {
			ans = np.rc;
			snprintf(found, sizeof(found), "%s", np.name);
			snprintf(path, sizeof(path), "%s", de->d_name);
			snprintf(peer, len, "%s (netns %s)", found, path);
		}
	}
	if (d)
		closedir(d);
	return hits == 1 ? ans : -ENOENT;
}

int hc_probe_veth_peer_tx_csum(const char *ifname, char *peer, size_t len)
{
	return veth_peer_ask(ifname, VETH_TX_CSUM, peer, len);
}

/*
 * A peer in another namespace: entering it needs CAP_SYS_ADMIN, which
 * ferryd gives up; its XDP program is seen from here, by netnsid, and
 * only GRO needs the namespace.
 */
int ferry_veth_peer_rx_ready(const char *ifname, char *peer, size_t len)
{
	char path[PATH_MAX], buf[32], name[IF_NAMESIZE] = "?";
	int own = (int)if_nametoindex(ifname), iflink, rc;
	int32_t nsid;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/iflink", ifname);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	iflink = fgets(buf, sizeof(buf), f) ? atoi(buf) : 0;
	fclose(f);
	if (iflink > 0 && !link_netnsid(own, &nsid) &&
	    xdp_attached_in(nsid, iflink, name) == 1) {
		snprintf(peer, len, "%s (netns id %d)", name, nsid);
		return 1;
	}
	rc = veth_peer_ask(ifname, VETH_RX_NAPI, peer, len);
	if (rc == -ENOENT && name[0] != '?')
		snprintf(peer, len, "%s (netns id %d)", name, nsid);
	return rc;
}

/*
 * A veth whose peer keeps TX checksum offload on (the default, and every
 * container's) hands over TCP/UDP frames with partial checksums. Not a
 * fault: ferry completes them (docs/design.md), so this is a note, with
 * the cost it saves as the fix.
 */
void hc_check_veth_csum(struct hc *h)
{
	char peer[IF_NAMESIZE + 80] = "?", fix[160];
	int rc;

	if (strcmp(h->driver, "veth") || !h->probes->veth_peer_tx_csum)
		return;
	rc = h->probes->veth_peer_tx_csum(h->ifname, peer, sizeof(peer));
	snprintf(fix, sizeof(fix),
		 "nothing needed; 'ethtool -K %.*s tx off' on the peer saves "
		 "ferry the completion",
		 (int)strcspn(peer, " "), peer);
	if (rc > 0)
		hc_row(h, "veth peer checksums", HC_OK, fix,
		       "peer %s has TX checksum offload on: its TCP/UDP "
		       "frames carry partial checksums, which ferry completes "
		       "(classifier before CPU steering, worker when it "
		       "forwards)",
		       peer);
	else if (!rc)
		hc_row(h, "veth peer checksums", HC_OK, NULL,
		       "peer %s sends full checksums (TX offload off)", peer);
	else
		hc_row(h, "veth peer checksums", HC_OK, NULL,
		       "peer not found (%s): if it keeps TX checksum offload "
		       "on, ferry completes its partial checksums",
		       strerror(-rc));
}
