#!/usr/bin/env bash
# tests/vm/t_vm_route_vlan.sh: runs inside the guest (tests/vm/run.sh starts
# it from the repository's root): tests/vm/sys_route_vlan.sh, which needs
# 802.1Q VLAN and VRF links (this host's kernel has neither
# CONFIG_VLAN_8021Q nor CONFIG_NET_VRF; the guest's Debian kernel has both
# as modules). See sys_test in guest_lib.sh.
set -uo pipefail
# shellcheck source=guest_lib.sh
. "$(dirname "$0")/guest_lib.sh"

sys_test sys_route_vlan veth 8021q vrf
