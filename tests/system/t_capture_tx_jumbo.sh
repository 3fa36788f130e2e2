#!/usr/bin/env bash
# A tx capture on the egress of an xconnect on path kernel, at MTU 9000:
# the capture's DEVMAP program (xdp.frags/devmap) takes multi-buffer frames,
# so 9000-byte pings still cross with it in the DEVMAP entry, and the file
# holds them as sent (original length 9014, cut at the XDP snaplen).
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"
# shellcheck source=../lib/capture_check.sh
. "$(dirname "$0")/../lib/capture_check.sh"

command -v tcpdump >/dev/null || tb_die "tcpdump is needed (apt-get install tcpdump)"

tb_init
tb_wire 9000
# a DEVMAP redirect into a veth arrives only if its peer has GRO or XDP
ip netns exec "$(tb_nsname cli)" ethtool -K "$C0" gro on >/dev/null
ip netns exec "$(tb_nsname srv)" ethtool -K "$S0" gro on >/dev/null
tb_do dut xconnect add p0 p1 path kernel >/dev/null
tb_do dut xconnect add p1 p0 path kernel >/dev/null
assert_eq "p0 path" kernel "$(tb_pshow dut p0 path)"
assert_eq "p1 path" kernel "$(tb_pshow dut p1 path)"

f="$TB_RUN/jumbo.pcapng"
tb_do dut capture start j port p1 dir tx filter "icmp" file "$f" >/dev/null
[[ $(cap_devmap_progs dut p0 ferry_tx_dev) =~ ^[1-9][0-9]*$ ]] || tb_die "no program in p0's DEVMAP entry"
tb_do dut stats reset >/dev/null
out=$(ip netns exec "$(tb_nsname cli)" ping -c 3 -i 0.2 -W 2 -s 8972 -M "do" 10.88.0.2 || true)
echo "$out"
assert_match "9000-byte pings answered with the program in the entry" "3 received" "$out"
tb_wait_quiet dut
assert_ge "p0 kernel rx" 3 "$(tb_kstat dut p0 rx_packets)"
assert_ge "p1 kernel tx" 3 "$(tb_kstat dut p1 tx_packets)"
show=$(cap_show_until '.data[0].written >= 3')
echo "show: $show"
tb_do dut capture stop j >/dev/null
assert_eq "no program in the entry after" 0 "$(cap_devmap_progs dut p0 ferry_tx_dev)"
d=$(tcpdump -nn -e -r "$f" 2>/dev/null)
echo "$d" | head -3
assert_eq "echo requests of 9014-byte frames, as sent" 3 \
	"$(grep -c 'length 9014: .*ICMP echo request' <<<"$d" || true)"
# and the path still carries them with nothing attached
out=$(ip netns exec "$(tb_nsname cli)" ping -c 2 -i 0.2 -W 2 -s 8972 -M "do" 10.88.0.2 || true)
assert_match "9000-byte pings after" "2 received" "$out"
tb_log "ok"
