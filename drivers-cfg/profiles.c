// SPDX-License-Identifier: BSD-2-Clause
/* profiles.c - the driver profile table and the driver name probe. */
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <stdio.h>
#include <unistd.h>

#include "profiles.h"

#define ETHTOOL_L "ethtool -L IFNAME combined N"

/* Sorted by nothing in particular; the last entry is the generic default. */
static const struct ferry_driver_profile profiles[] = {
	{.driver = "veth",
	 .native_xdp = true,
	 .zerocopy = false,
	 .wakeup_fill = false,
	 .headroom = 256,
	 .ring_default = 256,
	 .ring_max = 256,
	 .xdp_mtu_max = 3818,
	 .ntuple = false,
	 .queues_cmd = "ip link add ... numtxqueues N numrxqueues N",
	 .quirk = "copy mode only; XDP_REDIRECT into a veth needs an XDP "
		  "program (or GRO) on its peer"},
	{.driver = "virtio_net",
	 .native_xdp = true,
	 .zerocopy = false,
	 .wakeup_fill = false,
	 .headroom = 256,
	 .ring_default = 256,
	 .ring_max = 1024,
	 .xdp_mtu_max = 3506,
	 .ntuple = false,
	 .queues_cmd = ETHTOOL_L,
	 .quirk = "native XDP needs as many queue pairs as CPUs (XDP_TX "
		  "queues); zero-copy only on kernels >= 6.11 with vhost"},
	{.driver = "mlx5_core",
	 .native_xdp = true,
	 .zerocopy = true,
	 .wakeup_fill = true,
	 .headroom = 256,
	 .ring_default = 1024,
	 .ring_max = 8192,
	 .xdp_mtu_max = 3498,
	 .ntuple = true,
	 .queues_cmd = ETHTOOL_L,
	 .quirk = "zero-copy sockets use dedicated XSK queues; see "
		  "Documentation/networking/device_drivers/ethernet/"
		  "mellanox/mlx5"},
	{.driver = "ice",
	 .native_xdp = true,
	 .zerocopy = true,
	 .wakeup_fill = true,
	 .headroom = 256,
	 .ring_default = 2048,
	 .ring_max = 8160,
	 .xdp_mtu_max = 3046,
	 .ntuple = true,
	 .queues_cmd = ETHTOOL_L,
	 .quirk = "ring sizes are multiples of 32"},
	{.driver = "i40e",
	 .native_xdp = true,
	 .zerocopy = true,
	 .wakeup_fill = true,
	 .headroom = 256,
	 .ring_default = 512,
	 .ring_max = 4096,
	 .xdp_mtu_max = 3046,
	 .ntuple = true,
	 .queues_cmd = ETHTOOL_L,
	 .quirk = "ring sizes are multiples of 32"},
	{.driver = "ixgbe",
	 .native_xdp = true,
	 .zerocopy = true,
	 .wakeup_fill = true,
	 .headroom = 256,
	 .ring_default = 512,
	 .ring_max = 4096,
	 .xdp_mtu_max = 3046,
	 .ntuple = true,
	 .queues_cmd = ETHTOOL_L,
	 .quirk = "XDP needs no more queues than the driver's XDP ring limit "
		  "(64)"},
	{.driver = "igc",
	 .native_xdp = true,
	 .zerocopy = true,
	 .wakeup_fill = true,
	 .headroom = 256,
	 .ring_default = 256,
	 .ring_max = 4096,
	 .xdp_mtu_max = 1500,
	 .ntuple = true,
	 .queues_cmd = ETHTOOL_L,
	 .quirk = "4 queues; no jumbo frames with XDP"},
	{.driver = "ena",
	 .native_xdp = true,
	 .zerocopy = false,
	 .wakeup_fill = false,
	 .headroom = 256,
	 .ring_default = 1024,
	 .ring_max = 8192,
	 .xdp_mtu_max = 3498,
	 .ntuple = false,
	 .queues_cmd = ETHTOOL_L,
	 .quirk = "XDP needs half the queues free for XDP_TX; MTU <= 3498"},
	{.driver = "bnxt_en",
	 .native_xdp = true,
	 .zerocopy = false,
	 .wakeup_fill = false,
	 .headroom = 256,
	 .ring_default = 511,
	 .ring_max = 2047,
	 .xdp_mtu_max = 3498,
	 .ntuple = true,
	 .queues_cmd = ETHTOOL_L,
	 .quirk = "no AF_XDP zero-copy upstream"},
	{.driver = "generic",
	 .native_xdp = false,
	 .zerocopy = false,
	 .wakeup_fill = false,
	 .headroom = 256,
	 .ring_default = 512,
	 .ring_max = 4096,
	 .xdp_mtu_max = 1500,
	 .ntuple = false,
	 .queues_cmd = ETHTOOL_L,
	 .quirk = "unknown driver: generic XDP and copy mode assumed"},
};

const struct ferry_driver_profile *ferry_profile_lookup(const char *driver)
{
	size_t i, n = sizeof(profiles) / sizeof(profiles[0]);

	for (i = 0; driver && i < n - 1; i++)
		if (!strcmp(profiles[i].driver, driver))
			return &profiles[i];
	return &profiles[n - 1];
}

int ferry_driver_name(const char *ifname, char *buf, unsigned int len)
{
	struct ethtool_drvinfo info = {.cmd = ETHTOOL_GDRVINFO};
	struct ifreq ifr = {0};
	int fd, err = 0;

	if (strlen(ifname) >= IFNAMSIZ)
		return -EINVAL;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	strcpy(ifr.ifr_name, ifname);
	ifr.ifr_data = (void *)&info;
	if (ioctl(fd, SIOCETHTOOL, &ifr))
		err = -errno;
	else
		snprintf(buf, len, "%s", info.driver);
	close(fd);
	return err;
}
