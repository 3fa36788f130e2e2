#!/usr/bin/env bash
# bench/kernel_path_cost.sh - what ferry's classifier costs in front of the
# kernel path's DEVMAP redirect, against the bare DEVMAP program
# (bench/xdp_devmap.bpf.c), both run by BPF_PROG_TEST_RUN (bpftool prog
# run, no live frames: the program alone, the redirect chosen but not
# flushed), in the same run, as ratios:
#
#   devmap          the bare program: bpf_redirect_map and a counter
#   ferry           ferry's classifier on path kernel, no rules, 64-byte
#                   UDP with a complete checksum (parse, config, counters)
#   ferry_rules8    the same with 8 steer rules that do not match (walked)
#
# A repeated test run works on one buffer: a partial checksum is completed
# by the first run only. So the completion is measured by single runs
# (repeat 1, the median of ONES invocations; each includes the timer's own
# cost, so these rows compare with each other only):
#   once_ferry          a 64-byte UDP frame with a complete checksum
#   once_partial        64 bytes with a partial checksum (the field holds the
#                       pseudo-header sum, as a veth sender's CHECKSUM_PARTIAL
#                       skb leaves it): completed before the redirect
#   once_partial1k      the same with a 1000-byte payload
#
#   bench/kernel_path_cost.sh [--repeat N] [--runs N]
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
# shellcheck source=../tests/lib/testbed.sh
. tests/lib/testbed.sh
# shellcheck source=lib.sh
. bench/lib.sh

REPEAT=2000000
RUNS=5
ONES=201
while (($#)); do
	case $1 in
	--repeat) REPEAT=$2 && shift ;;
	--runs) RUNS=$2 && shift ;;
	*) echo "usage: $0 [--repeat N] [--runs N]" >&2 && exit 2 ;;
	esac
	shift
done
OBJ=$REPO/build/bench/xdp_devmap.bpf.o
[[ -f $OBJ ]] || tb_die "build first (./run build)"

# frame FILE PAYLOAD_LEN PARTIAL(0|1): Ethernet + IPv4 + UDP to d0's MAC.
frame() {
	python3 - "$1" "$2" "$3" <<'PY'
import struct, sys
out, plen, partial = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
def csum(b):
    if len(b) % 2: b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16: s = (s & 0xffff) + (s >> 16)
    return s
src, dst = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])
payload = bytes(range(256)) * (plen // 256 + 1)
payload = payload[:plen]
ulen = 8 + plen
pseudo = src + dst + struct.pack("!BBH", 0, 17, ulen)
udp0 = struct.pack("!HHHH", 1024, 9, ulen, 0) + payload
if partial:
    c = csum(pseudo)  # the pseudo-header sum, not complemented
else:
    c = (~csum(pseudo + udp0)) & 0xffff or 0xffff
udp = struct.pack("!HHHH", 1024, 9, ulen, c) + payload
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + ulen, 0, 0, 64, 17, 0, src, dst)
ip = ip[:10] + struct.pack("!H", (~csum(ip)) & 0xffff) + ip[12:]
eth = bytes.fromhex("020000000002") + bytes.fromhex("020000000001") + b"\x08\x00"
open(out, "wb").write(eth + ip + udp)
PY
}

# run_ns PROG_ID FILE: median ns per run over RUNS runs.
run_ns() {
	local v=() i
	for ((i = 0; i < RUNS; i++)); do
		v+=("$(bpftool prog run id "$1" data_in "$2" repeat "$REPEAT" 2>&1 |
			sed -n 's/.*duration (average): \([0-9]*\)ns.*/\1/p')")
	done
	stats3 "${v[@]}" | cut -d' ' -f1
}

# run_once PROG_ID FILE: median ns of ONES single runs.
run_once() {
	local i
	for ((i = 0; i < ONES; i++)); do
		bpftool prog run id "$1" data_in "$2" repeat 1 2>&1 |
			sed -n 's/.*duration[^0-9]*\([0-9]*\)ns.*/\1/p'
	done | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

tb_init
tb_std3 1
# The sink's ferryd puts XDP on s0, so d1 takes redirected frames.
tb_ferryd sink sink >/dev/null
tb_do sink workers 0 >/dev/null
tb_do sink port add s0 dev "$S0" >/dev/null
tb_ferryd dut dut >/dev/null
tb_do dut workers 1 >/dev/null
tb_do dut port add p0 dev "$D0" >/dev/null
tb_do dut port add p1 dev "$D1" >/dev/null
tb_do dut xconnect add p0 p1 path kernel >/dev/null
FERRY_ID=$(tb_xdp_prog_id dut d0)

frame "$TB_RUN/f64" 18 0
frame "$TB_RUN/f64p" 18 1
frame "$TB_RUN/f1kp" 1000 1

# The bare DEVMAP program, loaded (not attached) with d1 in its map.
target=$(tb_ifindex dut d1)
pin=/sys/fs/bpf/bench_kpc
tb_exec dut sh -c "bpftool prog loadall '$OBJ' $pin type xdp pinmaps ${pin}_maps &&
	bpftool map update pinned ${pin}_maps/tx_port key 0 0 0 0 \
		value $((target & 255)) $(((target >> 8) & 255)) 0 0"
DEVMAP_ID=$(tb_exec dut bpftool -j prog show pinned "$pin/xdp_devmap_fwd" | jq -r .id)

declare -A NS
NS[devmap]=$(run_ns "$DEVMAP_ID" "$TB_RUN/f64")
NS[ferry]=$(run_ns "$FERRY_ID" "$TB_RUN/f64")
NS[once_ferry]=$(run_once "$FERRY_ID" "$TB_RUN/f64")
NS[once_partial]=$(run_once "$FERRY_ID" "$TB_RUN/f64p")
NS[once_partial1k]=$(run_once "$FERRY_ID" "$TB_RUN/f1kp")
# The completion happened: the frame that comes out has a full checksum.
bpftool prog run id "$FERRY_ID" data_in "$TB_RUN/f64p" data_out "$TB_RUN/f64p.out" >/dev/null
cmp -s "$TB_RUN/f64p" "$TB_RUN/f64p.out" && tb_die "the partial checksum was not completed"
for i in 1 2 3 4 5 6 7 8; do
	tb_do dut steer add r$i port p0 match proto tcp dport $((1000 + i)) to cpus 0 >/dev/null
done
NS[ferry_rules8]=$(run_ns "$FERRY_ID" "$TB_RUN/f64")
verdicts=$(tb_ctlj dut stats | jq -c '.data.ports[] | select(.name == "p0") | .xdp | {dev_redirect, drop_no_dev}')

echo "ferry classifier in front of the DEVMAP redirect: $(uname -r), BPF_PROG_TEST_RUN,"
echo "repeat $REPEAT, median of $RUNS runs; ns per frame (the machine's, compare ratios only)"
printf '%-16s %8s %10s\n' row ns vs_devmap
for row in devmap ferry ferry_rules8; do
	printf '%-16s %8s %10s\n' "$row" "${NS[$row]}" \
		"$(echo "scale=2; ${NS[$row]} / ${NS[devmap]}" | bc -l)"
done
printf '%-16s %8s %10s\n' row ns vs_once_ferry
for row in once_ferry once_partial once_partial1k; do
	printf '%-16s %8s %10s\n' "$row" "${NS[$row]}" \
		"$(echo "scale=2; ${NS[$row]} / ${NS[once_ferry]}" | bc -l)"
done
echo "p0 verdicts after the runs: $verdicts"
