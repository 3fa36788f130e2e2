#!/usr/bin/env bash
# Hugepages exhausted: a UMEM that finds no free 2 MB hugepage is made of
# ordinary pages, with a warning in the log, and `port show` / `worker show`
# say so; forwarding works either way. First with no hugepage free at all,
# then with exactly one UMEM's worth: the first ferryd takes them, the
# second finds none left. nr_hugepages is put back on exit.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"
# shellcheck source=../lib/fault.sh
. "$(dirname "$0")/../lib/fault.sh"

tb_init
tb_global_lock hugepages
NR=/proc/sys/vm/nr_hugepages
orig=$(cat "$NR")
tb_defer tb_write "$NR" "$orig"
meminfo() { awk -v k="$1:" '$1 == k {print $2}' /proc/meminfo; }
UMEM_PAGES=17 # 16384 frames of 2 KiB per worker, then their pool (umem.h)

# Only pages someone uses stay: none is free.
in_use=$(($(meminfo HugePages_Total) - $(meminfo HugePages_Free)))
echo "$in_use" >"$NR"
echo "hugepages: total $(meminfo HugePages_Total), free $(meminfo HugePages_Free) (was $orig)"

tb_std3
tb_gen_up
tb_dut_xconnect
assert_match "dut log" 'warning: umem: no free 2 MB hugepages' "$(cat "$TB_RUN/dut.log")"
assert_json '[.data[].umem] | unique | join(",")' pages "$(tb_do dut port show)"
assert_json '.data[0].umem' pages "$(tb_do dut worker show)"
tb_do gen gen start g0 count 2000 rate 20000 dst-mac "$(tb_mac dut d0)" >/dev/null
tb_wait_gen_done gen g0 30
tb_wait_quiet 20 dut
assert_eq "p1 tx_packets on ordinary pages" 2000 "$(tb_stat dut p1 tx_packets)"

# One UMEM's worth: the dut's new UMEM takes it, the sink's finds none.
echo $((in_use + UMEM_PAGES)) >"$NR"
free=$(meminfo HugePages_Free)
echo "hugepages: total $(meminfo HugePages_Total), free $free"
if ((free < UMEM_PAGES)); then
	echo "the kernel found only $free free hugepages; the second half needs $UMEM_PAGES"
	exit 0
fi
tb_do dut xconnect del p0 >/dev/null
tb_do dut port del p0 >/dev/null
tb_do dut port del p1 >/dev/null # the worker's last socket: its UMEM goes
tb_do dut port add p0 dev "$D0" >/dev/null
tb_do dut port add p1 dev "$D1" >/dev/null
tb_do dut xconnect add p0 p1 >/dev/null
assert_json '[.data[].umem] | unique | join(",")' hugepages "$(tb_do dut port show)"
assert_eq "hugepages free after the dut took its UMEM" 0 "$(meminfo HugePages_Free)"
tb_sink_drop
assert_json '.data[0].umem' pages "$(tb_do sink port show)"
assert_match "sink log" 'warning: umem: no free 2 MB hugepages' "$(cat "$TB_RUN/sink.log")"
tb_do gen gen start g0 count 2000 rate 20000 dst-mac "$(tb_mac dut d0)" >/dev/null
tb_wait_gen_done gen g0 30
tb_wait_quiet 20 dut sink
assert_eq "sink rx_packets (dut on hugepages, sink on pages)" 2000 "$(tb_stat sink s0 rx_packets)"
fault_umem_idle dut
