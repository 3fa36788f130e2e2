#!/usr/bin/env bash
# bpffs unmounted under ferryd: its programs and maps live as long as its
# file descriptors, so forwarding goes on and port del / port add (on an
# interface with no program: nothing to recognise; the port's program is
# then not pinned, which ferryd warns of), steering and the generator still
# work.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"
# shellcheck source=../lib/fault.sh
. "$(dirname "$0")/../lib/fault.sh"

tb_init
tb_std3_chain

tb_do gen gen start g0 rate 20000 dst-mac "$(tb_mac dut d0)" >/dev/null
fault_wait_ge "p1 forwards" 1000 tb_stat dut p1 tx_packets
# Each daemon has its own mount namespace (ip netns exec); unmount there.
pid=${TB_PID_OF[dut]}
nsenter -t "$pid" -m umount /sys/fs/bpf
assert_eq "bpffs mounts seen by the dut ferryd" 0 \
	"$(nsenter -t "$pid" -m awk '$2 == "/sys/fs/bpf"' /proc/mounts | wc -l)"
t0=$(tb_stat dut p1 tx_packets)
fault_wait_ge "p1 forwards with bpffs gone" $((t0 + 1000)) tb_stat dut p1 tx_packets
assert_eq "p0 state" up "$(fault_port dut p0 state)"

tb_do dut port del p0 >/dev/null
tb_do dut port add p0 dev "$D0" >/dev/null
tb_do dut xconnect add p0 p1 >/dev/null
tb_do dut steer add tcp80 port p0 match proto tcp dport 80 to cpus 0 >/dev/null
t1=$(tb_stat dut p1 tx_packets)
fault_wait_ge "p1 forwards after port del/add without bpffs" $((t1 + 1000)) tb_stat dut p1 tx_packets
tb_do dut steer del tcp80 >/dev/null
tb_do dut gen start p1 count 100 rate 1000 >/dev/null
tb_wait_gen_done dut p1 10
assert_eq "dut generator frames without bpffs" 100 "$(tb_gen dut p1 frames)"
tb_do gen gen stop g0 >/dev/null
