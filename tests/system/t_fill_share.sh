#!/usr/bin/env bash
# Fill shares with many queues: one worker serves two 8-queue ports (veth
# with 8 RX queues each), 16 AF_XDP sockets on one 16384-frame UMEM. Fill
# rings topped up to their 2048 slots would hold 32768 frames: the first
# eight sockets (p0's) took the whole UMEM and p1's queues had none, so
# nothing crossed from sink to gen. Now each ring holds an equal part of
# half the UMEM (512), so every queue receives:
#
# gen (10.88.0.1) --veth x8-- dut (xconnect p0 <-> p1, path xsk) --veth x8--
# sink (10.88.0.2): hosts that know nothing of ferry.
#
# Checked: ping both ways; byte-exact TCP both ways (tcpx); numbered UDP
# datagrams in 4 flows one way and 1 back, every one once (seqflow); each
# queue's fill_share is 512 and the UMEM keeps free frames; the kernel
# counted no RX drop for want of fill entries.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"
# shellcheck source=../lib/takeover.sh
. "$(dirname "$0")/../lib/takeover.sh"

SEQFLOW=$(tb__abs "${SEQFLOW:-build/tests/seqflow}")
TCPX=$(tb__abs "${TCPX:-build/tests/tcpx}")
RATE=${RATE:-5000}
[[ -x $SEQFLOW ]] || tb_die "no seqflow at $SEQFLOW (build first)"

tb_init
tb_std3 8
A=gen B=sink
tko_xconnect_bed
for p in p0 p1; do
	assert_eq "$p queues" 8 "$(tb_ctlj dut port show "$p" | jq '.data[0].queues')"
done
out=$(ip netns exec "$nsB" ping -c 3 -i 0.2 -W 2 "$A_IP" || true)
assert_match "sink -> gen ping" "3 received" "$out"

tb_tcpx gen sink "$B_IP" 7100 4000000
tb_tcpx sink gen "$A_IP" 7101 4000000

tko_streams 1 3
tko_streams_wait
tko_exactly_once "gen -> sink" "$(jq .sent "$TB_RUN/send_a.1")" "$TB_RUN/recv_b.1"
tko_exactly_once "sink -> gen" "$(jq .sent "$TB_RUN/send_b.1")" "$TB_RUN/recv_a.1"

st=$(tb_ctlj dut stats)
shares=$(jq -c '[.data.ports[] | .queues[] | .fill_share]' <<<"$st")
echo "fill shares: $shares"
echo "queues' rx: $(jq -c '[.data.ports[] | {name, q: [.queues[] | .rx_packets]}]' <<<"$st")"
assert_eq "16 sockets, each ring's share 512" "$(jq -n '[range(16)] | map(512)' | jq -c .)" "$shares"
assert_eq "RX drops for want of fill entries" 0 \
	"$(jq '[.data.ports[] | .totals.rx_fill_ring_empty_descs] | add' <<<"$st")"
ws=$(tb_ctlj dut worker show | jq -c '.data[0] | {umem_frames, umem_free, umem_consistent}')
echo "worker 0: $ws"
assert_ge "UMEM frames left in the pool" 1 "$(jq .umem_free <<<"$ws")"
echo "PASS t_fill_share"
