#!/usr/bin/env bash
# Both hosts keep TX checksum offload on (veth's default, every container's):
# their TCP/UDP frames reach the dut with partial checksums, which the
# worker completes (dataplane/fastpath/csum.h). TCP over IPv4 and IPv6 and UDP
# datagrams cross cli -- dut (xconnect both ways) -- srv intact, and neither
# host counts a checksum error. Static neighbours: ARP need not cross.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init
tb_wire 1500
for h in cli:$C0 srv:$S0; do
	off=$(ip netns exec "$(tb_nsname "${h%%:*}")" ethtool -k "${h#*:}" | awk '/^tx-checksumming:/ {print $2}')
	assert_eq "${h%%:*}: TX checksum offload" on "$off"
done

csum_errors() { # NS: the host's TCP and UDP checksum error counters, summed
	ip netns exec "$(tb_nsname "$1")" nstat -az TcpInCsumErrors UdpInCsumErrors Udp6InCsumErrors |
		awk 'NR > 1 {s += $2} END {print s + 0}'
}

tb_wire_tcpx 10.88.0.2 7200 8388608 16384
tb_wire_tcpx "[fd88::2]" 7201 8388608 16384

# UDP: 200 datagrams of 100..1294 bytes (odd and even, none fragmented);
# the server checks each payload.
cat >"$TB_RUN/udp.py" <<'PY'
import socket, sys
fam = socket.AF_INET6 if ":" in sys.argv[2] else socket.AF_INET
s = socket.socket(fam, socket.SOCK_DGRAM)
def payload(i):
    return bytes((i * 31 + k) & 0xff for k in range(100 + i * 6))
if sys.argv[1] == "server":
    # 200 datagrams back to back must all fit: no drop for lack of room.
    s.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)  # SO_RCVBUFFORCE
    s.bind((sys.argv[2], int(sys.argv[3])))
    s.settimeout(5)
    open(sys.argv[4], "w").close()
    good = bad = 0
    try:
        while good + bad < 200:
            d, _ = s.recvfrom(65536)
            i = (len(d) - 100) // 6
            good += d == payload(i)
            bad += d != payload(i)
    except socket.timeout:
        pass
    print(good, bad)
else:
    for i in range(200):
        s.sendto(payload(i), (sys.argv[2], int(sys.argv[3])))
PY
for dst in 10.88.0.2 fd88::2; do
	rm -f "$TB_RUN/udp.ready"
	ip netns exec "$(tb_nsname srv)" "$PYTHON" "$TB_RUN/udp.py" server "$dst" 7300 "$TB_RUN/udp.ready" >"$TB_RUN/udp.out" &
	pid=$!
	tb_track "$pid"
	tb_wait_file "$TB_RUN/udp.ready"
	ip netns exec "$(tb_nsname cli)" "$PYTHON" "$TB_RUN/udp.py" client "$dst" 7300
	wait "$pid"
	echo "dut after UDP to $dst: $(tb_ctlj dut stats | jq -c '[.data.ports[] | {name, t: .totals | {rx_packets, tx_packets, drops, rx_dropped, rx_ring_full, rx_fill_ring_empty_descs, d: (.drop_reasons | with_entries(select(.value > 0)))}, x: .xdp | with_entries(select(.value > 0))}]')"
	echo "srv: $(ip netns exec "$(tb_nsname srv)" nstat -az | grep -E 'Udp6?(InErrors|RcvbufErrors|InCsumErrors|NoPorts|InDatagrams)' | tr -s ' ' | tr '\n' ';')"
	assert_eq "UDP to $dst: datagrams received intact, damaged" "200 0" "$(cat "$TB_RUN/udp.out")"
done

assert_eq "cli checksum errors" 0 "$(csum_errors cli)"
assert_eq "srv checksum errors" 0 "$(csum_errors srv)"
fixed=$(tb_ctlj dut stats | jq '[.data.workers[].csum_fixed] | add')
echo "dut completed $fixed partial checksums"
assert_ge "partial checksums completed by the dut" 1000 "$fixed"
echo "dut drops: $(tb_ctlj dut stats | jq -c '[.data.ports[] | {name, d: (.totals.drop_reasons | with_entries(select(.value > 0)))}]')"
assert_eq "p0 mtu_exceeded" 0 "$(tb_ctlj dut stats | jq '.data.ports[0].totals.drop_reasons.mtu_exceeded')"
