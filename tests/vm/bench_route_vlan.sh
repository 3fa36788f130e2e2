#!/usr/bin/env bash
# tests/vm/bench_route_vlan.sh [ARGS...]: runs inside the guest
# (`tests/vm/run.sh -t 1200 tests/vm/bench_route_vlan.sh --runs 3 --secs 3`):
# bench/route.sh --vlan ARGS, routed 64-byte pps with and without 802.1Q
# VLANs in one run, on a kernel that has them (this host's has none). The
# guest is emulated (TCG): its figures are ratios between rows, nothing
# about a NIC.
set -uo pipefail
# shellcheck source=guest_lib.sh
. "$(dirname "$0")/guest_lib.sh"

guest_modules veth 8021q || exit 1
if bench/route.sh --vlan "$@"; then
	ok "bench/route.sh --vlan"
else
	bad "bench/route.sh --vlan"
fi
