#!/usr/bin/env bash
# Capture on an xconnect forwarded in the kernel (path kernel: the
# classifier redirects every frame into the egress's DEVMAP and no worker
# sees one), so only the classifier's capture hook can show them: 1000
# generator frames in two flows, captured on p0 rx with a filter matching
# one flow. The file holds that flow's 500 frames, byte for byte as sent and
# in order, each with its verdict xdp=dev_redirect; the sink still gets all
# 1000 (the capture takes copies); the frames stayed on the kernel path.
# The same on p1 dir tx: the DEVMAP entry runs the capture's program while
# it runs (frames as sent, all of them, the kernel-path counters still
# counting) and none once it stops.
# Then the same on path xsk, for the verdict the worker gives (app=xconnect).
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
tb_gen_up
tb_ferryd dut dut
tb_do dut workers 1 >/dev/null
tb_do dut port add p0 dev "$D0" >/dev/null
tb_do dut port add p1 dev "$D1" >/dev/null
# A DEVMAP redirect into d1 needs XDP on its peer s0: ferryd on the sink
# passes s0's frames to its kernel, where the sink's capture reads them.
tb_ferryd sink sink
tb_do sink workers 0 >/dev/null
tb_do sink port add s0 dev "$S0" default pass >/dev/null
tb_do dut xconnect add p0 p1 path kernel >/dev/null

assert_eq "path" kernel "$(tb_pshow dut p0 path)"

# run TAG: 1000 frames, two flows, captured on p0 rx (flow 1024 only) and
# at the sink (all of them, byte-exact); leaves the file in $TB_RUN/TAG.pcapng.
run() {
	local tag=$1 f="$TB_RUN/$1.pcapng" show
	tb_do dut stats reset >/dev/null
	tb_do dut capture start "$tag" port p0 filter "udp and src port 1024" \
		file "$f" >/dev/null
	tb_capture_start sink s0 "$TB_RUN/sink-$tag" --count 1000 --timeout 60 --verify-gen 128
	tb_do gen gen start g0 count 1000 rate 10000 size 128 flows 2 >/dev/null
	tb_wait_gen_done gen g0 30
	tb_capture_wait "$TB_RUN/sink-$tag"
	tb_wait_quiet dut
	assert_json .received 1000 "$TB_CAP"
	assert_json .bad 0 "$TB_CAP"
	# The XDP records come through a perf buffer its reader polls.
	show=$(cap_show_until '.data[0].written == 500')
	echo "show: $show"
	assert_json '.data[0].matched' 500 "$show"
	assert_json '.data[0].written' 500 "$show"
	tb_do dut capture stop "$tag" >/dev/null
	assert_eq "$tag: tcpdump count" 500 "$(tcpdump -nn -r "$f" 2>/dev/null | wc -l)"
	assert_eq "$tag: frames as sent" 500 "$(cap_check_frames "$f" 1024 128)"
	assert_eq "$tag: p1 tx" 1000 "$(tb_stat dut p1 tx_packets)"
}

run kernel
f="$TB_RUN/kernel.pcapng"
assert_eq "kernel: dev_redirect comments" 500 "$(cap_count "$f" 'xdp=dev_redirect')"
assert_eq "kernel: p0 kernel rx" 1000 "$(tb_kstat dut p0 rx_packets)"
assert_eq "kernel: p0 xsk rx" 0 "$(tb_xstat dut p0 rx_packets)"
assert_eq "kernel: still path kernel" kernel "$(tb_pshow dut p0 path)"

# ---- dir tx on the egress: the DEVMAP entry's program, only while it runs ----
progs() { cap_devmap_progs dut p0 ferry_tx_dev; }
assert_eq "no program in the DEVMAP entry before" 0 "$(progs)"
f="$TB_RUN/ktx.pcapng"
tb_do dut stats reset >/dev/null
tb_do dut capture start ktx port p1 dir tx filter "udp and src port 1024" \
	file "$f" >/dev/null
[[ $(progs) =~ ^[1-9][0-9]*$ ]] || tb_die "no program in the DEVMAP entry: $(progs)"
# A path switch while it runs: the entry written again keeps the program.
tb_do dut xconnect add p0 p1 path xsk >/dev/null
tb_do dut xconnect add p0 p1 path kernel >/dev/null
assert_eq "path" kernel "$(tb_pshow dut p0 path)"
[[ $(progs) =~ ^[1-9][0-9]*$ ]] || tb_die "switched: no program in the entry: $(progs)"
tb_capture_start sink s0 "$TB_RUN/sink-ktx" --count 1000 --timeout 60 --verify-gen 128
tb_do gen gen start g0 count 1000 rate 10000 size 128 flows 2 >/dev/null
tb_wait_gen_done gen g0 30
tb_capture_wait "$TB_RUN/sink-ktx"
tb_wait_quiet dut
assert_json .received 1000 "$TB_CAP"
assert_json .bad 0 "$TB_CAP"
show=$(cap_show_until '.data[0].written == 500')
echo "show: $show"
assert_json '.data[0].matched' 500 "$show"
assert_json '.data[0].written' 500 "$show"
assert_json '.data[0].xdp_tx.records' 1000 "$show"
assert_json '.data[0].xdp_tx.lost' 0 "$show"
# With the program in the entry the kernel-path counters still count.
assert_eq "ktx: p0 kernel rx" 1000 "$(tb_kstat dut p0 rx_packets)"
assert_eq "ktx: p1 kernel tx" 1000 "$(tb_kstat dut p1 tx_packets)"
assert_eq "ktx: p1 tx" 1000 "$(tb_stat dut p1 tx_packets)"
tb_do dut capture stop ktx >/dev/null
# Off: the entry holds no program again (the kernel path runs nothing).
assert_eq "no program in the DEVMAP entry after" 0 "$(progs)"
assert_eq "ktx: tcpdump count" 500 "$(tcpdump -nn -r "$f" 2>/dev/null | wc -l)"
assert_eq "ktx: frames as sent" 500 "$(cap_check_frames "$f" 1024 128)"
assert_eq "ktx: dev_redirect comments" 500 "$(cap_count "$f" 'xdp=dev_redirect')"
assert_eq "ktx: interface p1-tx" 1 "$(cap_count "$f" 'p1-tx')"

tb_do dut xconnect add p0 p1 path xsk >/dev/null
assert_eq "path" xsk "$(tb_pshow dut p0 path)"
run xsk
f="$TB_RUN/xsk.pcapng"
assert_eq "xsk: app comments" 500 "$(cap_count "$f" 'app=xconnect')"
assert_eq "xsk: no dev_redirect" 0 "$(cap_count "$f" 'xdp=dev_redirect')"
assert_eq "xsk: p0 xsk rx" 1000 "$(tb_xstat dut p0 rx_packets)"
assert_json '.data | length' 0 "$(tb_do dut capture show)"
tb_log "ok"
