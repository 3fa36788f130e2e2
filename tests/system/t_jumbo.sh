#!/usr/bin/env bash
# MTU 9000 on every link of cli -- dut (xconnect both ways) -- srv: ping's
# 9000-byte frames cross (don't fragment), TCP at MTU 9000 crosses byte-exact
# both ways, the frames the dut forwarded were multi-buffer ones; a 9000-byte
# frame towards a 1500-MTU egress is counted mtu_exceeded and nothing else.
# Static neighbours: ARP does not have to cross the dut.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"
# shellcheck source=../lib/fault.sh
. "$(dirname "$0")/../lib/fault.sh"

tb_init
tb_wire 9000
assert_eq "p0 mtu" 9000 "$(fault_port dut p0 mtu)"
assert_eq "p1 mtu" 9000 "$(fault_port dut p1 mtu)"

out=$(ip netns exec "$(tb_nsname cli)" ping -c 3 -i 0.2 -W 2 -s 8972 -M do 10.88.0.2 || true)
echo "$out"
assert_match "9000-byte pings answered" "3 received" "$out"
out=$(ip netns exec "$(tb_nsname cli)" ping -6 -c 3 -i 0.2 -W 2 -s 8952 -M do fd88::2 || true)
echo "$out"
assert_match "9000-byte IPv6 pings answered" "3 received" "$out"
# Each ping is one 9014-byte frame each way, well over one UMEM frame. The
# wire also carries the hosts' small ARP/NDP frames, so the bytes are checked
# as a total, not as a mean per frame: six requests came in on p0.
assert_ge "p0 rx bytes (six 9000-byte frames crossed whole)" $((6 * 9000)) \
	"$(tb_stat dut p0 rx_bytes)"

tb_do dut stats reset >/dev/null
tb_wire_tcpx 10.88.0.2 7100 33554432 65536
tb_wire_tcpx "[fd88::2]" 7101 16777216 65536
# ...and the other way: the server side is the client now.
out=$TB_RUN/tcpx-rev.json
tb_tcpx_server cli 10.88.0.1:7102 "$out"
cli=$(ip netns exec "$(tb_nsname srv)" timeout 60 "$TCPX" client -d 10.88.0.1:7102 -n 16m -m 64k)
wait "$TB_TCPX_PID"
assert_json .ok true "$(cat "$out")"
assert_json .bytes 16777216 "$cli"
stats=$(tb_do dut stats)
echo "dut: $(jq -c '[.data.ports[] | {name, rx: .totals.rx_packets, rxb: .totals.rx_bytes, tx: .totals.tx_packets, drops: .totals.drops}]' <<<"$stats")"
assert_ge "p0 bytes per frame (TCP segments at MTU 9000)" 4000 \
	$(($(tb_stat dut p0 rx_bytes) / $(tb_stat dut p0 rx_packets)))
assert_eq "p0 drops" 0 "$(tb_stat dut p0 drops)"
assert_eq "p1 drops" 0 "$(tb_stat dut p1 drops)"

# The egress MTU lowered to 1500 (its far end too): one 9000-byte frame
# towards it is mtu_exceeded, nothing else moves.
tb_wait_quiet dut
tb_exec dut ip link set dev "$D1" mtu 1500
ip -n "$(tb_nsname srv)" link set dev "$S0" mtu 1500
fault_wait_port dut p1 mtu 1500 5
tb_do dut stats reset >/dev/null
ip netns exec "$(tb_nsname cli)" ping -c 1 -W 1 -s 8972 -M do 10.88.0.2 || true
tb_wait_quiet dut
echo "p0: $(tb_ctlj dut stats | jq -c '.data.ports[] | select(.name == "p0") | .totals')"
# The wire may carry a host's ARP/NDP frame in the same moment: whatever
# else came in crossed, and only the 9000-byte frame stayed behind.
rx=$(tb_stat dut p0 rx_packets)
assert_ge "p0 rx_packets" 1 "$rx"
assert_eq "p0 mtu_exceeded" 1 "$(fault_drop dut p0 mtu_exceeded)"
assert_eq "p0 drops (mtu_exceeded only)" 1 "$(tb_stat dut p0 drops)"
assert_eq "p1 tx_packets (all but the big frame)" $((rx - 1)) "$(tb_stat dut p1 tx_packets)"
assert_le "p1 tx_bytes (no frame over 1514 bytes)" $((1514 * (rx - 1))) "$(tb_stat dut p1 tx_bytes)"
# No echo reply came back (the request never arrived): p1 took in only
# small frames, if any.
assert_le "p1 rx_bytes (no frame over 1514 bytes)" $((1514 * $(tb_stat dut p1 rx_packets))) \
	"$(tb_stat dut p1 rx_bytes)"
# Short frames still cross.
out=$(ip netns exec "$(tb_nsname cli)" ping -c 2 -i 0.2 -W 2 -s 1000 10.88.0.2 || true)
assert_match "short pings answered" "2 received" "$out"
fault_umem_idle dut
