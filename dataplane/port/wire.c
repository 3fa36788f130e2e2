// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * wire.c - a port's wire mode in its classifier, and what `port show`
 * says about it. Control thread only.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ferry_xdp.skel.h"
#include "wire.h"

/*
 * A wire takes frames for any destination, and a NIC drops those not for
 * its own address before XDP sees them (every hardware NIC; virtio_net in
 * QEMU too; veth has no filter). Promiscuous mode by a membership on an
 * AF_PACKET socket that receives nothing (protocol 0): the kernel counts
 * it (dev_set_promiscuity), so it adds to what others asked for, is not
 * the operator's IFF_PROMISC flag, and ends with the socket, a crash
 * included. CAP_NET_RAW, which ferryd keeps.
 */
static int wire_promisc(struct ferry_port *p, bool on)
{
	struct packet_mreq mr = {
		.mr_ifindex = p->ifindex,
		.mr_type = PACKET_MR_PROMISC,
	};
	int fd, err;

	if (!on || p->promisc_fd >= 0) {
		if (!on && p->promisc_fd >= 0) {
			close(p->promisc_fd);
			p->promisc_fd = -1;
		}
		return 0;
	}
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr,
		       sizeof(mr))) {
		err = -errno;
		close(fd);
		return err;
	}
	p->promisc_fd = fd;
	return 0;
}

void ferry_port_wire_release(struct ferry_port *p)
{
	wire_promisc(p, false);
}

int ferry_port_wire_apply(struct ferry_port *p)
{
	struct ferry_xdp_cfg cfg;
	uint32_t key = 0;
	uint8_t want, route;
	int fd, err;

	err = wire_promisc(p, ferry_port_is_wire(p));
	if (err)
		return err;
	if (!p->skel)
		return 0;
	fd = bpf_map__fd(p->skel->maps.ferry_cfg);
	/* Read, change one byte, write: the rule count and the spread
	 * settings in the same entry belong to other commands. */
	if (bpf_map_lookup_elem(fd, &key, &cfg))
		return -errno;
	want = ferry_port_is_wire(p) ? 0 : 1;
	route = p->app == FERRY_APP_ROUTE;
	if (cfg.pass_arp_ndp == want && cfg.route_host == route)
		return 0;
	cfg.pass_arp_ndp = want;
	cfg.route_host = route;
	if (bpf_map_update_elem(fd, &key, &cfg, 0))
		return -errno;
	return 0;
}

const char *ferry_port_host_frames(const struct ferry_port *p, bool rules,
				   char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	if (!ferry_port_is_wire(p))
		n += snprintf(buf + n, len - n, "arp,ndp");
	if (p->app == FERRY_APP_ROUTE && n < len)
		n += snprintf(buf + n, len - n, ",local,link-local");
	if (p->default_action == FERRY_ACT_PASS && n < len)
		n += snprintf(buf + n, len - n, "%sunmatched", n ? "," : "");
	if (rules && n < len)
		n += snprintf(buf + n, len - n, "%srules", n ? "," : "");
	if (!n)
		snprintf(buf, len, "none (wire)");
	return buf;
}
