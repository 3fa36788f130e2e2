#!/usr/bin/env bash
# Software RSS: one veth queue spread over two workers by flow hash.
#
# cli --veth (1 queue)-- dut: ferryd in dut, workers on CPUs 0 and 1, port p0
# with `spread cpus 0-1`. Checked:
#   - each of 12 UDP flows sent alone lands on exactly one worker, every
#     frame of it, and both workers get flows;
#   - 64 flows at once: every frame reaches a worker (rx totals = sent);
#   - reflect through the spread sockets (the second worker sends frames of
#     the first worker's UMEM): every frame comes back, and once quiet the
#     owner's UMEM holds all its frames again (nothing leaked or doubled);
#   - via cpumap on one CPU: the probe passes and frames arrive;
#   - via cpumap on queue 1 of a two-queue veth: the probe fails (the kernel
#     delivers CPUMAP frames as queue 0's) and the port falls back to plain
#     per-queue mode, saying so;
#   - bad input is refused with clear errors and nothing is left behind.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init
tb_ns cli
tb_ns dut
tb_veth cli c0 dut d0
tb_veth cli c1 dut d1 2
C0=$(tb_ifname c0)
D0=$(tb_ifname d0)
D1=$(tb_ifname d1)
MAC=$(tb_mac dut d0)

tb_ferryd dut dut
tb_do dut workers 0-1 idle poll >/dev/null

err() {
	tb_err dut "$@"
}

# ---- bad input ----
err EINVAL port add p0 dev "$D0" spread cpus 0,5
err EINVAL port add p0 dev "$D0" spread 0-1
err EINVAL port add p0 dev "$D0" cpus 0-1
err EINVAL port add p0 dev "$D1" queues 0-1 spread cpus 0-1
err EOPNOTSUPP port add p0 dev "$D0" mode zc spread cpus 0-1
err EOPNOTSUPP port add p0 dev "$D0" spread cpus 0-1 via cpumap
err EOPNOTSUPP port add p0 dev "$D0" xdp generic spread cpus 0-1
err EINVAL port add p0 dev "$D0" spread cpus 0-1 via sideways
assert_json '.data | length' 0 "$(tb_do dut port show)"

# ---- direct: flows stay on one worker ----
out=$(tb_do dut port add p0 dev "$D0" spread cpus 0-1)
assert_json '.data[0].spread.active' true "$out"
assert_json '.data[0].spread.via' direct "$out"
assert_json '.data[0].spread.workers | join(",")' 0,1 "$out"
assert_json '.data[0].mode' copy "$out"
tb_do dut drop p0 >/dev/null
err EOPNOTSUPP xconnect add p0 p0

# rx_packets of p0 per worker, as "w0 w1".
per_worker() {
	tb_ctlj dut stats port p0 | jq -r \
		'[.data.ports[0].queues | sort_by(.worker)[] | .rx_packets] | join(" ")'
}

N=50
used0=0 used1=0
for ((f = 0; f < 12; f++)); do
	read -r a0 a1 < <(per_worker)
	tb_exec cli "$PYTHON" "$PKT" send "$C0" "$N" good --dst-mac "$MAC" \
		--sport-base $((3000 + f)) >/dev/null
	tb_wait_quiet 10 dut
	read -r b0 b1 < <(per_worker)
	d0=$((b0 - a0)) d1=$((b1 - a1))
	one=no
	if ((d0 == N && d1 == 0)) || ((d0 == 0 && d1 == N)); then one=ok; fi
	assert_eq "flow $f: all $N frames on one worker (w0 +$d0, w1 +$d1)" ok "$one"
	((d0 == N)) && used0=$((used0 + 1))
	((d1 == N)) && used1=$((used1 + 1))
done
assert_ge "flows on worker 0" 1 "$used0"
assert_ge "flows on worker 1" 1 "$used1"

read -r a0 a1 < <(per_worker)
tb_exec cli "$PYTHON" "$PKT" send "$C0" 1280 good --dst-mac "$MAC" --flows 64 >/dev/null
tb_wait_quiet 10 dut
read -r b0 b1 < <(per_worker)
assert_eq "64 flows: every frame reached a worker" 1280 $((b0 - a0 + b1 - a1))
echo "    split: w0 $((b0 - a0)), w1 $((b1 - a1))"
assert_json '.data.ports[0].queues | map(.rx_dropped + .rx_ring_full) | add' 0 \
	"$(tb_ctlj dut stats port p0)"

# ---- reflect: the second worker sends the owner's frames ----
tb_do dut reflect p0 >/dev/null
tb_capture_start cli c0 "$TB_RUN/refl.json" --count 640 --timeout 15
tb_exec cli "$PYTHON" "$PKT" send "$C0" 640 good --dst-mac "$MAC" --flows 32 \
	--src-mac 02:00:00:00:00:01 >/dev/null
tb_capture_wait "$TB_RUN/refl.json"
assert_json '.received' 640 "$(cat "$TB_RUN/refl.json")"
tb_wait_quiet 10 dut
stats=$(tb_ctlj dut stats port p0)
assert_json '[.data.ports[0].queues[].tx_packets] | add' 640 "$stats"
assert_json '[.data.ports[0].queues[] | select(.tx_packets > 0)] | length' 2 "$stats"
# Owner's UMEM: everything free but what its fill ring holds (2048 slots,
# refilled 64 at a time).
inuse=$(tb_ctlj dut worker show | jq '.data[0].umem_frames - .data[0].umem_free')
assert_ge "owner's frames out of the pool" $((2048 - 63)) "$inuse"
assert_le "owner's frames out of the pool" 2048 "$inuse"
assert_json '[.data.workers[].frames_dup] | add' 0 "$(tb_ctlj dut stats)"
tb_do dut port del p0 >/dev/null
assert_json '[.data[].sockets | length] | add' 0 "$(tb_do dut worker show)"

# ---- via cpumap on one CPU: probe passes, frames arrive ----
out=$(tb_do dut port add p0 dev "$D0" spread cpus 1 via cpumap)
assert_json '.data[0].spread.active' true "$out"
assert_match "probe note" 'probe: 8 of 8 frames' "$(jq -r '.data[0].spread.note' <<<"$out")"
tb_do dut drop p0 >/dev/null
tb_exec cli "$PYTHON" "$PKT" send "$C0" 200 good --dst-mac "$MAC" --flows 8 >/dev/null
tb_wait_quiet 10 dut
assert_json '[.data.ports[0].queues[].rx_packets] | add' 200 "$(tb_ctlj dut stats port p0)"
tb_do dut port del p0 >/dev/null

# ---- via cpumap on queue 1: the probe fails, per-queue mode instead ----
out=$(tb_do dut port add p1 dev "$D1" queues 1-1 spread cpus 0 via cpumap)
assert_json '.data[0].spread.active' false "$out"
assert_match "fallback note" 'fell back to per-queue mode.*queue 0' \
	"$(jq -r '.data[0].spread.note' <<<"$out")"
assert_json '.data[0].queues' 1 "$out"
assert_json '.data[0].queue_first' 1 "$out"
assert_match "fallback logged" 'falling back to per-queue mode' "$(cat "$TB_RUN/dut.log")"
tb_do dut port del p1 >/dev/null
assert_json '[.data[].sockets | length] | add' 0 "$(tb_do dut worker show)"

# ---- show config round-trips the spread ----
tb_do dut port add p0 dev "$D0" spread cpus 0-1 >/dev/null
assert_match "show config" 'port add p0 .* spread cpus 0-1 via direct' \
	"$(tb_ctlj dut show config | jq -r .data)"
tb_do dut port del p0 >/dev/null
