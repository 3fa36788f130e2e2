#!/usr/bin/env bash
# Capture on ports of the DPDK backend (worker_dpdk.c's taps): 1000
# generator frames in two flows through an xconnect, p0 rx captured with a
# filter matching one flow (500 frames, byte for byte as sent, in order,
# app=xconnect) and p1 tx whole (1000): DPDK -> DPDK, DPDK -> native and
# native -> DPDK. Skipped (passes) when ferryd was built without DPDK.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"
# shellcheck source=../lib/capture_check.sh
. "$(dirname "$0")/../lib/capture_check.sh"

command -v tcpdump >/dev/null || tb_die "tcpdump is needed (apt-get install tcpdump)"

tb_init
tb_std3
tb_ferryd dut dut
if [[ $(tb_ctlj dut version | jq -r .data.dpdk) != true ]]; then
	tb_log "ferryd built without DPDK: nothing to capture"
	exit 0
fi
tb_gen_up
tb_do dut workers 1 >/dev/null

# run TAG: the two captures over 1000 frames; the sink gets them all.
run() {
	local tag=$1 rx="$TB_RUN/$1-rx.pcapng" tx="$TB_RUN/$1-tx.pcapng" show
	tb_do dut stats reset >/dev/null
	tb_do dut capture start "$tag-rx" port p0 filter "udp and src port 1024" \
		file "$rx" >/dev/null
	tb_do dut capture start "$tag-tx" port p1 dir tx file "$tx" >/dev/null
	tb_capture_start sink s0 "$TB_RUN/sink-$tag" --count 1000 --timeout 60 --verify-gen 128
	tb_do gen gen start g0 count 1000 rate 10000 size 128 flows 2 >/dev/null
	tb_wait_gen_done gen g0 30
	tb_capture_wait "$TB_RUN/sink-$tag"
	tb_wait_quiet dut
	assert_json .received 1000 "$TB_CAP"
	assert_json .bad 0 "$TB_CAP"
	show=$(tb_do dut capture show)
	echo "show: $show"
	tb_do dut capture stop "$tag-rx" >/dev/null
	tb_do dut capture stop "$tag-tx" >/dev/null
	assert_eq "$tag: rx count" 500 "$(tcpdump -nn -r "$rx" 2>/dev/null | wc -l)"
	assert_eq "$tag: rx frames as sent" 500 "$(cap_check_frames "$rx" 1024 128)"
	assert_eq "$tag: rx app comments" 500 "$(cap_count "$rx" 'app=xconnect')"
	assert_eq "$tag: tx count" 1000 "$(tcpdump -nn -r "$tx" 2>/dev/null | wc -l)"
	assert_eq "$tag: tx flow 1025 as sent" 500 \
		"$(cap_check_frames <(tcpdump -r "$tx" -w - 'udp src port 1025' 2>/dev/null) 1025 128)"
	assert_json '.data | length' 0 "$(tb_do dut capture show)"
}

tb_log "DPDK -> DPDK"
tb_do dut port add p0 dev "$D0" backend dpdk >/dev/null
tb_do dut port add p1 dev "$D1" backend dpdk >/dev/null
tb_do dut xconnect add p0 p1 >/dev/null
run dd

tb_log "DPDK -> native"
tb_do dut xconnect del p0 >/dev/null
tb_do dut port del p1 >/dev/null
tb_do dut port add p1 dev "$D1" >/dev/null
tb_do dut xconnect add p0 p1 >/dev/null
run dn

tb_log "native -> DPDK"
tb_do dut xconnect del p0 >/dev/null
tb_do dut port del p0 >/dev/null
tb_do dut port del p1 >/dev/null
tb_do dut port add p0 dev "$D0" >/dev/null
tb_do dut port add p1 dev "$D1" backend dpdk >/dev/null
tb_do dut xconnect add p0 p1 >/dev/null
run nd
tb_log "ok"
