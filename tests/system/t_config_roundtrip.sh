#!/usr/bin/env bash
# `save FILE` writes a configuration that a new ferryd started with
# `-c FILE` turns back into the same daemon: `show config` is identical and
# `port show` and `worker show` agree (names, interfaces, queues, modes,
# XDP mode, apps, workers' CPUs and idle mode).
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

# What must survive the round trip (not program ids, MACs or counters).
ports() {
	tb_do "$1" port show | jq -S -c '[.data[] | {name, ifname, queue_first, queues, mode,
		mode_requested, xdp, app, workers}]'
}
workers() {
	tb_do "$1" worker show | jq -S -c '[.data[] | {id, cpu, idle, sockets}]'
}
show_config() {
	tb_do "$1" show config | jq -j .data
}

tb_init
tb_ns dut
tb_ns peer
tb_veth dut d0 peer e0 2
tb_veth dut d1 peer e1 2
tb_veth dut d2 peer e2
tb_veth dut d3 peer e3
D0=$(tb_ifname d0) D1=$(tb_ifname d1) D2=$(tb_ifname d2) D3=$(tb_ifname d3)
ncpu=$(nproc)
if ((ncpu >= 2)); then cpus=0-1; else cpus=0; fi

tb_ferryd dut first
tb_do first workers "$cpus" idle poll >/dev/null
tb_do first port add p0 dev "$D0" >/dev/null
tb_do first port add p1 dev "$D1" queues 1-1 mode copy >/dev/null
tb_do first port add p2 dev "$D2" xdp generic >/dev/null
tb_do first port add p3 dev "$D3" queues 1 mode auto xdp native >/dev/null
tb_do first xconnect add p0 p1 >/dev/null
tb_do first reflect p2 >/dev/null
tb_do first drop p3 >/dev/null

conf="$TB_RUN/saved.conf"
cfg1=$(show_config first)
ports1=$(ports first)
workers1=$(workers first)
echo "show config:"
printf '%s' "$cfg1" | sed 's/^/    /'
echo "ports: $ports1"
echo "workers: $workers1"
assert_json '.data.saved' "$conf" "$(tb_do first save "$conf")"
assert_eq "saved file == show config" "$cfg1" "$(cat "$conf")"
# Sanity: what we compare says what we configured.
assert_json '[.[] | .app] | join(",")' "xconnect p1,none,reflect,drop" "$ports1"
assert_json '[.[] | .xdp] | join(",")' "native,native,generic,native" "$ports1"
assert_json '.[1] | "\(.queue_first) \(.queues) \(.mode_requested)"' "1 1 copy" "$ports1"
assert_json '[.[] | .idle] | unique | join(",")' poll "$workers1"

tb_do first shutdown >/dev/null
tb_wait_exit first 15
assert_eq "first ferryd exit status" 0 "$TB_EXIT_RC"
for i in d0 d1 d2 d3; do
	assert_eq "no XDP program on $i after shutdown" none "$(tb_xdp_prog_id dut "$i")"
done

tb_ferryd dut second -c "$conf"
assert_eq "show config after -c FILE" "$cfg1" "$(show_config second)"
assert_eq "port show after -c FILE" "$ports1" "$(ports second)"
assert_eq "worker show after -c FILE" "$workers1" "$(workers second)"

# And once more: the restored daemon saves the same file.
assert_ok tb_do second save "$TB_RUN/again.conf"
assert_eq "saved again == saved first" "$(cat "$conf")" "$(cat "$TB_RUN/again.conf")"
