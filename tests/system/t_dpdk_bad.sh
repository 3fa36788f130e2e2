#!/usr/bin/env bash
# Bad input to `port add ... backend dpdk`: each gets a clear error, leaves
# no port and no XDP program behind, and the daemon keeps serving. A foreign
# program is never touched, a live ferryd's interface never taken; a killed
# ferryd's program is taken over. Skips the DPDK cases (t_dpdk checks the
# refusal) when ferryd was built without DPDK.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init
tb_std3 6
tb_ferryd dut dut

# refused CODE WORD ARGS...: port add ARGS fails with CODE, its message
# mentions WORD, and nothing is left.
refused() {
	local code=$1 word=$2 out rc=0
	shift 2
	out=$(tb_ctlj dut port add "$@") || rc=$?
	echo "port add $*: $out"
	assert_eq "exit status" 1 "$rc"
	assert_json .error.code "$code" "$out"
	assert_match "message" "$word" "$(jq -r .error.message <<<"$out")"
	assert_json '.data | length' 0 "$(tb_do dut port show)"
	assert_eq "XDP on d0" none "$(tb_xdp_prog_id dut d0)"
}

refused EINVAL backend p0 dev "$D0" backend foo
if [[ $(tb_ctlj dut version | jq -r .data.dpdk) != true ]]; then
	tb_log "ferryd built without DPDK: t_dpdk checks the refusal"
	exit 0
fi
tb_do dut workers 1 >/dev/null
refused EINVAL zero-copy p0 dev "$D0" backend dpdk mode zc
refused EINVAL generic p0 dev "$D0" backend dpdk xdp generic
refused EINVAL busy-poll p0 dev "$D0" backend dpdk busy-poll on
refused ERANGE 'RX queue' p0 dev "$D0" backend dpdk queues 4-7
refused ENODEV 'no interface' p0 dev nosuchif0 backend dpdk
# veth has six RX queues but no combined channels: the PMD takes one.
refused ERANGE 'combined channel' p0 dev "$D0" backend dpdk

tb_log "a foreign XDP program stays"
tb_exec dut ip link set dev "$D1" xdpgeneric obj "$TB_REPO/build/bench/xdp_devmap.bpf.o" sec xdp
foreign=$(tb_xdp_prog_id dut d1)
[[ $foreign =~ ^[0-9]+$ ]] || tb_die "could not attach the foreign program"
refused EBUSY 'ferry did not load' p1 dev "$D1" backend dpdk queues 1
assert_eq "foreign program on d1" "$foreign" "$(tb_xdp_prog_id dut d1)"
tb_exec dut ip link set dev "$D1" xdpgeneric off

tb_log "the daemon still serves: queue 3 alone, then a duplicate"
out=$(tb_do dut port add p0 dev "$D0" backend dpdk queues 3-3)
assert_json '.data[0].queue_first' 3 "$out"
assert_json '.data[0].backend' dpdk "$out"
rc=0
out=$(tb_ctlj dut port add p0b dev "$D0" backend dpdk) || rc=$?
assert_json .error.code EEXIST "$out"

tb_log "a live ferryd's interface is not taken; a killed one's is"
tb_ferryd dut dut2
tb_do dut2 workers 0 >/dev/null
rc=0
out=$(tb_ctlj dut2 port add q0 dev "$D0" backend dpdk queues 1) || rc=$?
echo "$out"
assert_json .error.code EBUSY "$out"
assert_match "message" 'driven by ferryd' "$(jq -r .error.message <<<"$out")"
# Two ferryds with EAL up at once: each has its own file prefix.
tb_do dut2 port add q1 dev "$D1" backend dpdk queues 1 >/dev/null
tb_kill9 dut
out=$(tb_do dut2 port add q0 dev "$D0" backend dpdk queues 1)
assert_json '.data[0].took_over_stale_program' true "$out"
tb_do dut2 port del q0 >/dev/null
tb_do dut2 port del q1 >/dev/null
assert_eq "XDP on d0 after port del" none "$(tb_xdp_prog_id dut d0)"
assert_eq "XDP on d1 after port del" none "$(tb_xdp_prog_id dut d1)"
