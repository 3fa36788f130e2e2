// SPDX-License-Identifier: BSD-2-Clause
/*
 * health.c - the control thread's watch over the interfaces under ports,
 * run once a second from ferry_tick: is the interface still there, is its
 * link up, has its MTU changed, is ferry's XDP program still the one
 * attached. What it finds goes into the port's state and reason (`port
 * show`), its event counters and the log; the workers learn it through
 * their queues' down and max_frame fields, changed while they are parked.
 * An interface that is gone is returned as an event: failing the port
 * (its counters to the ledger, its sockets closed) is the caller's.
 *
 * It asks the kernel directly (if_indextoname, SIOCGIFFLAGS, bpf_xdp_query)
 * rather than reading /sys/class/net: `ip netns exec` remounts /sys, so
 * sysfs may describe another namespace than the one ferryd's sockets are in.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <linux/bpf.h>
#include <sys/ioctl.h>

#include "health.h"
#include "log.h"

int ferry_link_get(int ifreq_fd, const char *ifname, unsigned int *flags,
		   uint32_t *mtu)
{
	struct ifreq ifr;

	if (ifreq_fd < 0)
		return -ENOTSUP;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(ifreq_fd, SIOCGIFFLAGS, &ifr))
		return -errno;
	*flags = (unsigned int)(unsigned short)ifr.ifr_flags;
	if (ioctl(ifreq_fd, SIOCGIFMTU, &ifr))
		return -errno;
	*mtu = (uint32_t)ifr.ifr_mtu;
	return 0;
}

static void check_link(int ifreq_fd, struct ferry_port *p)
{
	unsigned int flags;
	uint32_t mtu;
	bool down;

	if (ferry_link_get(ifreq_fd, p->ifname, &flags, &mtu))
		return;
	/* IFF_RUNNING is the carrier (operstate up): a veth whose peer is
	 * down is IFF_UP but cannot send. */
	down = !(flags & IFF_UP) || !(flags & IFF_RUNNING);
	if (down != p->link_down) {
		p->link_down = down;
		ferry_port_set_down(p, down);
		if (down) {
			p->events.link_down++;
			log_warn("port %s: link of %s is down (%s); frames for "
				 "it are dropped as port_down",
				 p->name, p->ifname,
				 !(flags & IFF_UP) ? "admin down"
						   : "no carrier");
		} else {
			p->events.link_up++;
			log_info("port %s: link of %s is up again", p->name,
				 p->ifname);
		}
	}
	if (mtu != p->mtu) {
		log_info("port %s: MTU of %s changed from %u to %u; longer "
			 "frames are dropped as mtu_exceeded",
			 p->name, p->ifname, p->mtu, mtu);
		ferry_port_set_mtu(p, mtu);
		p->events.mtu_changed++;
		p->mtu_warning[0] = '\0';
		if (p->zerocopy && !ferry_port_zc_mtu_fits(p, mtu)) {
			snprintf(p->mtu_warning, sizeof(p->mtu_warning),
				 "MTU %u: frames over %u bytes do not fit a "
				 "zero-copy socket here (%s takes no multi-"
				 "buffer frames in zero-copy) and the driver "
				 "drops them (its rx_dropped); re-add the port "
				 "in mode copy to carry them",
				 mtu, FERRY_ZC_SINGLE_FRAME, p->driver);
			log_warn("port %s: %s", p->name, p->mtu_warning);
		}
	}
}

static void check_xdp(struct ferry_port *p)
{
	char name[BPF_OBJ_NAME_LEN];
	uint32_t id;
	int err;

	if (!p->prog_id || ferry_port_xdp_current(p, &id, name, sizeof(name)))
		return;
	if (id == p->prog_id) {
		if (p->xdp_lost)
			log_info("port %s: ferry's XDP program is attached to "
				 "%s again",
				 p->name, p->ifname);
		p->xdp_lost = false;
		return;
	}
	if (!p->xdp_lost || id != p->foreign_prog_id) {
		p->events.xdp_lost++;
		if (id)
			log_warn("port %s: XDP program '%s' (id %u) replaced "
				 "ferry's (id %u) on %s%s",
				 p->name, name, id, p->prog_id, p->ifname,
				 p->req.xdp_restore
					 ? "; restoring"
					 : "; not restoring (xdp-restore "
					   "off)");
		else
			log_warn("port %s: ferry's XDP program (id %u) was "
				 "removed from %s%s",
				 p->name, p->prog_id, p->ifname,
				 p->req.xdp_restore
					 ? "; restoring"
					 : "; not restoring (xdp-restore "
					   "off)");
	}
	p->xdp_lost = true;
	p->foreign_prog_id = id;
	if (!p->req.xdp_restore)
		return;
	err = ferry_port_xdp_restore(p, id);
	if (err) {
		log_warn("port %s: cannot restore the XDP program on %s: %s",
			 p->name, p->ifname, strerror(-err));
		return;
	}
	p->xdp_lost = false;
	p->events.xdp_restored++;
	log_info("port %s: XDP program id %u restored on %s", p->name,
		 p->prog_id, p->ifname);
}

/* State and reason follow from the facts: failed, else down, else up. */
static void set_state(struct ferry_port *p)
{
	if (p->state == FERRY_PORT_FAILED)
		return;
	if (p->link_down) {
		p->state = FERRY_PORT_DOWN;
		snprintf(p->reason, sizeof(p->reason), "link down");
	} else if (p->xdp_lost) {
		p->state = FERRY_PORT_DOWN;
		if (p->foreign_prog_id)
			snprintf(p->reason, sizeof(p->reason),
				 "XDP program id %u replaced ferry's",
				 p->foreign_prog_id);
		else
			snprintf(p->reason, sizeof(p->reason),
				 "ferry's XDP program was removed");
	} else {
		p->state = FERRY_PORT_UP;
		p->reason[0] = 0;
	}
}

enum ferry_health ferry_port_health(struct ferry_port *p, int ifreq_fd,
				    char *why, size_t len)
{
	char name[IF_NAMESIZE];

	if (p->state == FERRY_PORT_FAILED)
		return FERRY_HEALTH_OK;
	if (!if_indextoname((unsigned int)p->ifindex, name)) {
		snprintf(why, len, "interface %s (ifindex %d) disappeared",
			 p->ifname, p->ifindex);
		return FERRY_HEALTH_GONE;
	}
	if (strcmp(name, p->ifname)) {
		log_info("port %s: interface %s is now called %s", p->name,
			 p->ifname, name);
		snprintf(p->ifname, sizeof(p->ifname), "%s", name);
	}
	check_link(ifreq_fd, p);
	check_xdp(p);
	set_state(p);
	return FERRY_HEALTH_OK;
}
