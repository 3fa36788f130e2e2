#!/usr/bin/env bash
# tests/vm/t_vm_route_vlan.sh: runs inside the guest (tests/vm/run.sh starts
# it from the repository's root). tests/vm/sys_route_vlan.sh, a system test
# in the testbed of tests/lib (kept out of tests/system/, which runs on the
# host), needs 802.1Q
# VLAN and VRF links, which the host's kernel may not make (this one has
# neither CONFIG_VLAN_8021Q nor CONFIG_NET_VRF); the guest's Debian kernel
# has both as modules. Loads them and runs the system test there, with
# CI=true so that a missing feature fails instead of skipping. The guest's
# NICs are not used: the test makes its own namespaces and veths.
#   FERRY_VM_TEST=sys_route_vlan (default): which test of tests/vm to run.
set -uo pipefail
# shellcheck source=guest_lib.sh
. "$(dirname "$0")/guest_lib.sh"

# the package's modules come without modules.dep (its postinst makes it):
# made here, in the guest's overlay
[[ -e /lib/modules/$(uname -r)/modules.dep ]] || depmod "$(uname -r)" ||
	bad "depmod"
for m in veth 8021q vrf; do
	if modprobe "$m" 2>/dev/null || [[ -d /sys/module/$m ]]; then
		ok "module $m"
	else
		bad "modprobe $m"
	fi
done
((fails)) && exit 1
t=${FERRY_VM_TEST:-sys_route_vlan}
if CI=true FERRYD=$PWD/build/daemon/ferryd FERRYCTL=$PWD/build/ctl/ferryctl \
	"tests/vm/$t.sh"; then
	ok "$t"
else
	bad "$t"
fi
