#!/usr/bin/env bash
# The DPDK backend on hugepages: with 600 MB of free 2 MB pages EAL starts
# in-memory on hugepages (its log says so), and a DPDK-to-DPDK xconnect
# forwards every frame. Where the host cannot reserve that many pages the
# test checks the other branch: EAL says it runs on ordinary pages, and the
# same forwarding works. The host's pool is put back on exit.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init
tb_global_lock hugepages
NR=/proc/sys/vm/nr_hugepages
orig=$(cat "$NR")
tb_defer tb_write "$NR" "$orig"
tb_std3 1
tb_ferryd dut dut
if [[ $(tb_ctlj dut version | jq -r .data.dpdk) != true ]]; then
	tb_log "ferryd built without DPDK: t_dpdk checks the refusal"
	exit 0
fi

echo $((orig + 300)) >"$NR"
free=$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)
want=hugepages
((free >= 256)) || want="ordinary pages"
echo "free 2 MB pages: $free (expecting EAL on $want)"

tb_do dut workers 1 >/dev/null
tb_do dut port add p0 dev "$D0" backend dpdk queues 1 >/dev/null
tb_do dut port add p1 dev "$D1" backend dpdk queues 1 >/dev/null
tb_do dut xconnect add p0 p1 >/dev/null
assert_match "EAL's memory" "EAL up .*, $want" "$(grep 'EAL up' "$TB_RUN/dut.log")"

tb_gen_up
tb_sink_drop
# A rate a loaded 2-CPU host leaves room for: this checks that EAL on
# hugepages forwards, not how fast. At 10k pps a clean-clone CI run lost
# 310 of 20 000 (31 ms; the PMD's fill ring holds half its 2048 slots at
# the start): 2k pps leaves 250 ms for a stall of the dut or the sink.
tb_do gen gen start g0 dst-mac "$(tb_mac dut d0)" rate 2000 count 10000 >/dev/null
tb_wait_gen_done gen g0 30
tb_wait_quiet dut sink
seen=$(tb_stat sink s0 rx_packets)
if ((seen != 10000)); then
	# where they went: the dut's ports, the sink's
	tb_ctlj dut stats | jq -c '[.data.ports[] | {name, t: (.totals | with_entries(select(.value != 0)))}]'
	tb_ctlj sink stats | jq -c '[.data.ports[] | {name, t: (.totals | with_entries(select(.value != 0)))}]'
fi
assert_eq "frames at the sink" 10000 "$seen"
tb_do dut shutdown >/dev/null
tb_wait_exit dut 20
assert_eq "ferryd exit status" 0 "$TB_EXIT_RC"
