#!/usr/bin/env bash
# tests/vm/t_vm_route_bond.sh: runs inside the guest (tests/vm/run.sh starts
# it from the repository's root): tests/vm/sys_route_bond.sh, which needs
# bond links (this host's kernel has no CONFIG_BONDING; the guest's Debian
# kernel has it as a module, loaded without its default bond0). See
# sys_test in guest_lib.sh.
set -uo pipefail
# shellcheck source=guest_lib.sh
. "$(dirname "$0")/guest_lib.sh"

sys_test sys_route_bond veth bonding:max_bonds=0
