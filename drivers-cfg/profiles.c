// SPDX-License-Identifier: BSD-2-Clause
/* profiles.c - the driver profile table and the driver name probe. */
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "profiles.h"

#define ETHTOOL_L "ethtool -L IFNAME combined N"
/* XDP_PACKET_HEADROOM: every driver in the table reserves exactly this. */
#define XDP_HEADROOM 256
/*
 * A single-buffer XDP frame lives in one 4 KiB page with the headroom and
 * struct skb_shared_info (320 bytes) around it: 4096 - 256 - 320 - 14.
 */
#define XDP_MTU_PAGE 3506

/*
 * Values are the drivers' own defaults and limits as of Linux 6.x; `ref`
 * names the source file or document that says so. The last entry is the
 * generic default.
 */
static const struct ferry_driver_profile profiles[] = {
	{
		.driver = "veth",
		.native_xdp = true,
		.zerocopy = false,
		.wakeup_fill = false,
		.wakeup_tx_always = true,
		.headroom = XDP_HEADROOM,
		.ring_default = 256,
		.ring_max = 256,
		.xdp_mtu_max = XDP_MTU_PAGE,
		.ntuple = false,
		/* measured here: veth has rx/tx channels, no combined ones */
		.queues_cmd = "ethtool -L IFNAME rx N tx N (at most the "
			      "numrxqueues given at creation)",
		.quirk = "copy mode only (zero-copy bind: EOPNOTSUPP); "
			 "XDP_REDIRECT into a veth needs an XDP program or "
			 "GRO on its peer, else frames vanish uncounted",
		.ref = "drivers/net/veth.c (VETH_RING_SIZE, veth_xdp_set); "
		       "measured: docs/notes-drivers.md",
	},
	{
		.driver = "virtio_net",
		.native_xdp = true,
		.zerocopy = true,
		.xdp_queues_rx_only = true,
		.wakeup_fill = true,
		.wakeup_tx_always = false,
		.headroom = XDP_HEADROOM,
		.ring_default = 256,
		.ring_max = 1024,
		.xdp_mtu_max = XDP_MTU_PAGE,
		.ntuple = false,
		.queues_cmd = ETHTOOL_L,
		.quirk = "native XDP wants a TX queue per CPU for XDP_TX "
			 "(else it shares them under a lock); ring size is "
			 "the hypervisor's; zero-copy measured on 6.18, "
			 "refused on "
			 "6.12; "
			 "zero-copy TX runs in the TX queue's own NAPI, so "
			 "busy-poll on does not prefer busy polling (with "
			 "SO_PREFER_BUSY_POLL TX waits for an interrupt)",
		.ref = "drivers/net/virtio_net.c (virtnet_xdp_set, "
		       "virtnet_poll_tx, virtnet_xsk_wakeup)",
	},
	{
		.driver = "mlx5_core",
		.native_xdp = true,
		.zerocopy = true,
		.wakeup_fill = true,
		.wakeup_tx_always = false,
		.busy_poll_tx = true,
		.headroom = XDP_HEADROOM,
		.ring_default = 1024,
		.ring_max = 8192,
		.xdp_mtu_max = 3498,
		.ntuple = true,
		.queues_cmd = ETHTOOL_L,
		.quirk = "zero-copy sockets get dedicated XSK RQs numbered "
			 "after the regular channels: steer flows to them "
			 "with ethtool -N",
		.ref = "Documentation/networking/device_drivers/ethernet/"
		       "mellanox/mlx5/; drivers/net/ethernet/mellanox/mlx5/"
		       "core/en/xsk/",
	},
	{
		.driver = "ice",
		.native_xdp = true,
		.zerocopy = true,
		.zc_multibuf = true,
		.wakeup_fill = true,
		.wakeup_tx_always = false,
		.busy_poll_tx = true,
		.headroom = XDP_HEADROOM,
		.ring_default = 2048,
		.ring_max = 8160,
		.xdp_mtu_max = 3046,
		.ntuple = true,
		.queues_cmd = ETHTOOL_L,
		.quirk = "ring sizes are multiples of 32; attaching XDP "
			 "reconfigures the VSI (link flaps)",
		.ref = "drivers/net/ethernet/intel/ice/ice_ethtool.c, "
		       "ice_xsk.c",
	},
	{
		.driver = "i40e",
		.native_xdp = true,
		.zerocopy = true,
		.zc_multibuf = true,
		.wakeup_fill = true,
		.wakeup_tx_always = false,
		.busy_poll_tx = true,
		.headroom = XDP_HEADROOM,
		.ring_default = 512,
		.ring_max = 4096,
		.xdp_mtu_max = 3046,
		.ntuple = true,
		.queues_cmd = ETHTOOL_L,
		.quirk = "ring sizes are multiples of 32; XDP needs the 3 KiB "
			 "RX buffers (MTU <= 3046)",
		.ref = "drivers/net/ethernet/intel/i40e/i40e_main.c "
		       "(i40e_xdp_setup), i40e_xsk.c",
	},
	{
		.driver = "ixgbe",
		.native_xdp = true,
		.zerocopy = true,
		.wakeup_fill = true,
		.wakeup_tx_always = false,
		.busy_poll_tx = true,
		.headroom = XDP_HEADROOM,
		.ring_default = 512,
		.ring_max = 4096,
		.xdp_mtu_max = 3046,
		.ntuple = true,
		.queues_cmd = ETHTOOL_L,
		.quirk = "XDP refuses more CPUs than its XDP TX ring limit "
			 "(64 queues) and SR-IOV with DCB",
		.ref = "drivers/net/ethernet/intel/ixgbe/ixgbe_main.c "
		       "(ixgbe_xdp_setup)",
	},
	{
		.driver = "igc",
		.native_xdp = true,
		.zerocopy = true,
		.wakeup_fill = true,
		.wakeup_tx_always = false,
		.busy_poll_tx = true,
		.headroom = XDP_HEADROOM,
		.ring_default = 256,
		.ring_max = 4096,
		.xdp_mtu_max = 1500,
		.ntuple = true,
		.queues_cmd = ETHTOOL_L,
		.quirk = "4 queues at most; no jumbo frames with XDP",
		.ref = "drivers/net/ethernet/intel/igc/igc_xdp.c",
	},
	{
		.driver = "ena",
		.native_xdp = true,
		.zerocopy = false,
		.wakeup_fill = false,
		.wakeup_tx_always = true,
		.headroom = XDP_HEADROOM,
		.ring_default = 1024,
		.ring_max = 8192,
		.xdp_mtu_max = 3498,
		.ntuple = false,
		.queues_cmd = ETHTOOL_L,
		.quirk = "XDP needs half the queues free for XDP_TX, so use at "
			 "most half the channels; MTU <= 3498",
		.ref = "drivers/net/ethernet/amazon/ena/ena_xdp.c "
		       "(ENA_XDP_MAX_MTU)",
	},
	{
		.driver = "bnxt_en",
		.native_xdp = true,
		.zerocopy = false,
		.wakeup_fill = false,
		.wakeup_tx_always = true,
		.headroom = XDP_HEADROOM,
		.ring_default = 511,
		.ring_max = 2047,
		.xdp_mtu_max = 3498,
		.ntuple = true,
		.queues_cmd = ETHTOOL_L,
		.quirk = "no AF_XDP zero-copy upstream; XDP switches the RX "
			 "rings to page mode",
		.ref = "drivers/net/ethernet/broadcom/bnxt/bnxt_xdp.c",
	},
	{
		.driver = "generic",
		.native_xdp = false,
		.zerocopy = false,
		.wakeup_fill = false,
		.wakeup_tx_always = true,
		.headroom = XDP_HEADROOM,
		.ring_default = 512,
		.ring_max = 4096,
		.xdp_mtu_max = 1500,
		.ntuple = false,
		.queues_cmd = ETHTOOL_L,
		.quirk = "unknown driver: generic (skb) XDP and copy mode "
			 "unless asked otherwise",
		.ref = "Documentation/networking/af_xdp.rst",
	},
};

#define N_PROFILES (sizeof(profiles) / sizeof(profiles[0]))

const struct ferry_driver_profile *ferry_profiles(size_t *n)
{
	*n = N_PROFILES;
	return profiles;
}

const struct ferry_driver_profile *ferry_profile_lookup(const char *driver)
{
	size_t i;

	for (i = 0; driver && i < N_PROFILES - 1; i++)
		if (!strcmp(profiles[i].driver, driver))
			return &profiles[i];
	return &profiles[N_PROFILES - 1];
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
