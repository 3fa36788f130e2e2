#!/usr/bin/env bash
# Hot restart with the ports on the kernel path: `ferryd --takeover` under
# traffic while p0 -> p1 and p1 -> p0 forward in XDP (DEVMAP, `path
# kernel`). No socket carries those frames, so the restart loses none.
#
# std3 testbed: gen --veth-- dut (xconnect p0 <-> p1, path kernel) --veth--
# sink (drop; its ferryd puts the XDP on s0 the redirect into d1 needs).
# The generator sends 300k frames at 100k pps; one second in, a second dut
# ferryd starts with --takeover. Checked:
#   - the old ferryd exits 0, the new one serves the same configuration,
#     its own program on d0, and says path kernel for p0 and p1;
#   - every generated frame reached the sink (its rx, plus what its own
#     socket dropped, printed): the number lost is printed, and must be 0;
#   - the classifier verdicts carried on: dev_redirect on p0 = generated;
#   - the kernel-path tracepoints are the new process's: ferry_devmap_xmit
#     attached once per kernel-path port, none left of the old process;
#   - the new ferryd's kernel-path counters: p0's paths.kernel rx and p1's
#     paths.kernel tx both = generated over the takeover (the old program's
#     redirects count as sent), and agree again for frames sent after it.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

N=300000
RATE=100000

tb_init
tb_std3_chain
tb_do dut xconnect add p0 p1 path kernel >/dev/null
# the other way too: d0's peer g0 has the generator's XDP
tb_do dut xconnect add p1 p0 path kernel >/dev/null

# devmap_links BTF_ID: ferry_devmap_xmit links on the host whose program
# came from the object with that BTF (one ferryd skeleton: a port's). This
# bpftool shows no pids; links of other tests' ferryds have other BTF ids.
devmap_links() {
	local id n=0
	for id in $(bpftool -j link show | jq -r '.[] | select(.tp_name == "xdp_devmap_xmit") | .prog_id'); do
		bpftool -j prog show id "$id" 2>/dev/null |
			jq -e --argjson b "$1" '.name == "ferry_devmap_xmit" and .btf_id == $b' >/dev/null &&
			n=$((n + 1))
	done
	echo "$n"
}
# xdp_btf IF: the BTF id of the program ferryd attached to dut's IF.
xdp_btf() { bpftool -j prog show id "$(tb_xdp_prog_id dut "$1")" | jq .btf_id; }

assert_eq "p0 path kernel" kernel "$(tb_pshow dut p0 path)"
assert_eq "p1 path kernel" kernel "$(tb_pshow dut p1 path)"
old_pid=${TB_PID_OF[dut]}
old_btf0=$(xdp_btf "$D0") old_btf1=$(xdp_btf "$D1")
assert_eq "old ferryd: ferry_devmap_xmit links, p0" 1 "$(devmap_links "$old_btf0")"
assert_eq "old ferryd: ferry_devmap_xmit links, p1" 1 "$(devmap_links "$old_btf1")"


# The successor reads the pinned verdict counters from zero: take them now.
redir0=$(tb_xdpstat dut p0 dev_redirect)
tb_do dut stats reset >/dev/null
tb_do sink stats reset >/dev/null
config_before=$(tb_ctlj dut show config | jq -r .data)
prog0_before=$(tb_xdp_prog_id dut d0)

# ---- takeover under traffic
tb_do gen gen start g0 count "$N" rate "$RATE" size 64 flows 4 >/dev/null
sleep 1
tb_takeover dut2
tb_takeover_wait dut2
assert_eq "old ferryd exit code" 0 "$TB_EXIT_RC"
tb_wait_gen_done gen g0 30
tb_wait_quiet dut sink

gen=$(tb_gen gen g0 frames)
sink=$(tb_stat sink s0 rx_packets)
# what the sink's own socket could not take (its drop app's drops are
# frames it received)
sink_drops=0
for k in rx_dropped rx_ring_full; do
	sink_drops=$((sink_drops + $(tb_stat sink s0 "$k")))
done
redir=$(($(tb_xdpstat dut p0 dev_redirect) - redir0))
echo "dut: $(tb_ctlj dut stats | jq -c '[.data.ports[] | {name, t: .totals, x: .xdp, k: .paths.kernel}]')"
echo "sink: $(tb_ctlj sink stats | jq -c '[.data.ports[] | {name, t: .totals, x: .xdp}]')"
vdrops=
for nsif in "gen $G0 tx" "dut $D0 rx" "dut $D1 tx" "sink $S0 rx"; do
	read -r ns ifn dir <<<"$nsif"
	vdrops+=" $ns/$ifn:$(ip -n "$(tb_nsname "$ns")" -s -j link show dev "$ifn" | jq ".[0].stats64.$dir.dropped")"
done
tb_log "takeover (kernel path): generated $gen, sink rx $sink + its socket drops $sink_drops, p0 dev_redirect $redir; veth drops$vdrops"
echo "TAKEOVER_KERNEL_LOST=$((gen - sink - sink_drops)) of $gen at $RATE pps"

assert_eq "generated" "$N" "$gen"
assert_eq "every frame reached the sink" "$gen" $((sink + sink_drops))
assert_eq "verdicts carried on: dev_redirect on p0" "$gen" "$redir"
assert_eq "same configuration" "$config_before" "$(tb_ctlj dut show config | jq -r .data)"
prog0_after=$(tb_xdp_prog_id dut d0)
[[ $prog0_after != none && $prog0_after != "$prog0_before" ]] ||
	tb_die "d0: program $prog0_after after takeover (was $prog0_before)"
assert_match "new ferryd took over" "took over from ferryd pid $old_pid" "$(cat "$TB_RUN/dut2.log")"
# The new ferryd's ledger over the restart: rx is the shared verdict
# counter, tx its own tracepoint's plus what the old program redirected.
assert_eq "over the takeover: p0 kernel rx" "$gen" "$(tb_kstat dut p0 rx_packets)"
assert_eq "over the takeover: p1 kernel tx" "$gen" "$(tb_kstat dut p1 tx_packets)"
assert_eq "over the takeover: p1 tx" "$gen" "$(tb_stat dut p1 tx_packets)"
assert_eq "after takeover: p0 path kernel" kernel "$(tb_pshow dut p0 path)"
assert_eq "after takeover: p1 path kernel" kernel "$(tb_pshow dut p1 path)"

# ---- the tracepoints are the new process's, once per kernel-path port
new_btf0=$(xdp_btf "$D0") new_btf1=$(xdp_btf "$D1")
assert_eq "new ferryd: ferry_devmap_xmit links, p0" 1 "$(devmap_links "$new_btf0")"
assert_eq "new ferryd: ferry_devmap_xmit links, p1" 1 "$(devmap_links "$new_btf1")"
assert_eq "old ferryd: none left, p0" 0 "$(devmap_links "$old_btf0")"
assert_eq "old ferryd: none left, p1" 0 "$(devmap_links "$old_btf1")"

# ---- the new ferryd's kernel-path counters
tb_do dut stats reset >/dev/null
tb_do sink stats reset >/dev/null
tb_do gen gen start g0 count 10000 rate 20000 size 64 flows 4 >/dev/null
tb_wait_gen_done gen g0 30
tb_wait_quiet dut sink
assert_eq "after takeover: sink rx" 10000 "$(tb_stat sink s0 rx_packets)"
assert_eq "after takeover: p0 kernel rx" 10000 "$(tb_kstat dut p0 rx_packets)"
assert_eq "after takeover: p1 kernel tx" 10000 "$(tb_kstat dut p1 tx_packets)"
assert_eq "after takeover: p0 rx" 10000 "$(tb_stat dut p0 rx_packets)"
assert_eq "after takeover: p1 tx" 10000 "$(tb_stat dut p1 tx_packets)"

# ---- shuts down cleanly: its links go with it
tb_do dut shutdown >/dev/null
tb_wait_exit dut2 10 || tb_die "new ferryd did not exit on shutdown"
assert_eq "new ferryd exit code" 0 "$TB_EXIT_RC"
assert_eq "d0 detached at exit" none "$(tb_xdp_prog_id dut d0)"
assert_eq "no ferry_devmap_xmit link left, p0" 0 "$(devmap_links "$new_btf0")"
assert_eq "no ferry_devmap_xmit link left, p1" 0 "$(devmap_links "$new_btf1")"
echo "PASS t_takeover_kernel"
