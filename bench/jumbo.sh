#!/usr/bin/env bash
# bench/jumbo.sh - large frames through the xconnect, every row in one run:
#
#   bench/jumbo.sh [--runs N] [--secs S] [--sizes 1500,9000] [--no-testpmd] [--no-iperf]
#
# Part 1, on the std3 testbed (gen:g0 -- dut:d0 [forwarder] dut:d1 --
# sink:s0) with MTU 9000 on every link: frames of each size (UDP, 4 flows)
# from ferry's generator on CPU 0 (live frames up to 1514 bytes, the AF_XDP
# TX ring with multi-buffer chains above), counted and dropped by an XDP
# program on s0; the forwarder on CPU 1. Rows per size: limit (generator
# straight into a counter on d0), devmap (in-kernel XDP redirect d0 -> d1),
# ferry (xconnect p0 -> p1, one busy worker), testpmd (af_xdp PMD, io
# forwarding; it may refuse a size: the row says so). pps and Gbit/s of
# frame bytes (no FCS, preamble or gap), ratios against devmap.
#
# Part 2, on the wire testbed (cli -- dut -- srv, tests/lib/testbed.sh
# tb_wire): TCP with iperf3 (1 stream) at MTU 1500 and 9000, through ferry's
# xconnect both ways and through a Linux bridge in the dut, TX checksum
# offload on at both hosts (the worker completes partial checksums).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
# shellcheck source=../tests/lib/testbed.sh
. tests/lib/testbed.sh
# shellcheck source=../tests/lib/assert.sh
. tests/lib/assert.sh
# shellcheck source=lib.sh
. bench/lib.sh

RUNS=3
SECS=3
SIZES=1500,9000
DO_TESTPMD=1
DO_IPERF=1
INNER=
while (($#)); do
	case $1 in
	--runs) RUNS=$2 && shift ;;
	--secs) SECS=$2 && shift ;;
	--sizes) SIZES=$2 && shift ;;
	--no-testpmd) DO_TESTPMD=0 ;;
	--no-iperf) DO_IPERF=0 ;;
	--inner) INNER=$2 && shift ;; # one part on its own testbed: rows on stdout
	*) echo "usage: $0 [--runs N] [--secs S] [--sizes LIST] [--no-testpmd] [--no-iperf]" >&2 && exit 2 ;;
	esac
	shift
done
OBJ=$REPO/build/bench/xdp_devmap.bpf.o
FWD_CPU=1
[[ -f $OBJ ]] || tb_die "build first (./run build)"
TESTPMD=$(command -v dpdk-testpmd || true)
[[ -n $TESTPMD ]] || DO_TESTPMD=0

# bench/lib.sh's XDP helpers: pins of their own, the _mb program's map.
XDP_PIN=/sys/fs/bpf/jbench
XDP_TX_MAP=tx_port_mb
gen_start() { # SIZE
	tb_do gen gen start g0 dst-mac "$(tb_mac dut d0)" size "$1" flows 4 >/dev/null
	sleep 1
}
gen_stop() {
	tb_do gen gen stop g0 >/dev/null || true
	sleep 0.5
}

bench_xdp() { # ROW SIZE PROG TARGET NS IF
	local row=$1 size=$2 prog=$3 target=$4 ns=$5 ifn=$6 v=() i
	xdp_attach dut "$D0" "$prog" "$target"
	for ((i = 0; i < RUNS; i++)); do
		gen_start "$size"
		v+=("$(xdp_rate "$ns" "$ifn" sink_ctr_mb)")
		gen_stop
	done
	xdp_detach dut "$D0"
	echo "$row ${v[*]}"
}

bench_ferry() { # ROW SIZE
	local row=$1 size=$2 v=() i st
	for ((i = 0; i < RUNS; i++)); do
		tb_ferryd dut dut >/dev/null
		tb_do dut workers "$FWD_CPU" >/dev/null
		tb_do dut port add p0 dev "$D0" >/dev/null
		tb_do dut port add p1 dev "$D1" >/dev/null
		tb_do dut xconnect add p0 p1 >/dev/null
		gen_start "$size"
		v+=("$(xdp_rate sink "$S0" sink_ctr_mb)")
		gen_stop
		st=$(tb_ctlj dut stats)
		echo "EXTRA ${row}_drops $(jq -c '[.data.ports[] | .totals.drop_reasons | with_entries(select(.value > 0))] | add' <<<"$st")"
		tb_do dut shutdown >/dev/null || true
		tb_wait_exit dut 10 || true
	done
	echo "$row ${v[*]}"
}

bench_testpmd() { # ROW SIZE
	local row=$1 size=$2 v=() i log=$TB_RUN/testpmd.log pid ok big=()
	((size <= 1514)) || big=(--max-pkt-len=$((size + 4)) --mbuf-size=$((size + 1024)))
	for ((i = 0; i < RUNS; i++)); do
		ip netns exec "$(tb_nsname dut)" "$TESTPMD" -l "0,$FWD_CPU" --main-lcore 0 --no-pci --no-huge -m 1024 \
			--file-prefix "fjb$$" --vdev "net_af_xdp0,iface=$D0" --vdev "net_af_xdp1,iface=$D1" \
			-- --forward-mode=io --nb-cores=1 --auto-start --total-num-mbufs=16384 \
			"${big[@]}" --stats-period 1 </dev/null >"$log" 2>&1 &
		pid=$!
		tb_track "$pid"
		ok=0
		for ((k = 0; k < 100; k++)); do
			grep -q "Port statistics" "$log" 2>/dev/null && ok=1 && break
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.2
		done
		if ((!ok)); then
			echo "EXTRA ${row}_err $(grep -iE "error|fail|invalid|cannot" "$log" | head -n 2 | tr '\n' ' ' | cut -c1-200)"
			kill -INT "$pid" 2>/dev/null || true
			wait "$pid" 2>/dev/null || true
			return 1
		fi
		gen_start "$size"
		v+=("$(xdp_rate sink "$S0" sink_ctr_mb)")
		gen_stop
		kill -INT "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		xdp_detach dut "$D0"
		xdp_detach dut "$D1"
	done
	echo "$row ${v[*]}"
}

gbps() { [[ -n ${MED[$1]:-} ]] && echo "scale=2; ${MED[$1]} * $2 * 8 / 1000000000" | bc -l || echo "-"; }

# ---- part 1: frames ---------------------------------------------------------
# Each part runs as a child process of its own (--inner): the testbed's
# cleanup ends the process, and tells its own children by $$.
IFS=, read -r -a sizes <<<"$SIZES"
if [[ $INNER == frames ]]; then
	tb_init
	tb_std3
	tb_std3_mtu 9000
	tb_gen_up
	xdp_attach sink "$S0" xdp_sink_count_mb
	for size in "${sizes[@]}"; do
		say "$size-byte frames: limit, devmap, ferry, testpmd; $RUNS runs of ${SECS}s"
		bench_xdp "limit_$size" "$size" xdp_sink_count_mb "" dut "$D0"
		bench_xdp "devmap_$size" "$size" xdp_devmap_fwd_mb "$(tb_ifindex dut d1)" sink "$S0"
		bench_ferry "ferry_$size" "$size"
		if ((DO_TESTPMD)); then
			bench_testpmd "testpmd_$size" "$size" || say "testpmd did not start with $size-byte frames"
		fi
	done
	exit 0
fi
rows=$(mktemp)
if [[ -z $INNER ]]; then
	inner_args=(--runs "$RUNS" --secs "$SECS" --sizes "$SIZES")
	((DO_TESTPMD)) || inner_args+=(--no-testpmd)
	"$0" "${inner_args[@]}" --inner frames >"$rows" || say "frames part failed"
	while read -r row vals; do
		if [[ $row == EXTRA ]]; then
			EXTRA[${vals%% *}]=${vals#* }
		else
			# shellcheck disable=SC2086 # a list of values
			record "$row" $vals
		fi
	done <"$rows"
fi
GEN_ENGINES=$(for s in "${sizes[@]}"; do printf '%s:%s ' "$s" "$( ((s <= 1514)) && echo live || echo xsk)"; done)

# ---- part 2: TCP -----------------------------------------------------------
iperf() { # one 1-stream run cli -> srv: Gbit/s x100
	local out
	ip netns exec "$(tb_nsname srv)" iperf3 -s -1 -B 10.88.0.2 >/dev/null 2>&1 &
	tb_track $!
	sleep 0.5
	out=$(ip netns exec "$(tb_nsname cli)" iperf3 -c 10.88.0.2 -t "$SECS" -J)
	wait $! || true
	jq '.end.sum_received.bits_per_second / 1e9 * 100 | floor' <<<"$out"
}
if [[ $INNER == tcp-* ]]; then
	mtu=${INNER#tcp-}
	tb_init
	tb_wire "$mtu"
	v=()
	for ((i = 0; i < RUNS; i++)); do v+=("$(iperf)"); done
	echo "tcp_ferry_$mtu ${v[*]}"
	tb_do dut shutdown >/dev/null
	tb_wait_exit dut 10 || true
	tb_exec dut ip link add br0 type bridge
	tb_exec dut ip link set dev "$D0" master br0
	tb_exec dut ip link set dev "$D1" master br0
	tb_exec dut ip link set dev br0 mtu "$mtu" up
	sleep 1
	v=()
	for ((i = 0; i < RUNS; i++)); do v+=("$(iperf)"); done
	echo "tcp_bridge_$mtu ${v[*]}"
	exit 0
fi
if ((DO_IPERF)) && command -v iperf3 >/dev/null; then
	for mtu in 1500 9000; do
		"$0" --runs "$RUNS" --secs "$SECS" --inner "tcp-$mtu" >"$rows" || say "TCP at MTU $mtu failed"
		while read -r row vals; do
			# shellcheck disable=SC2086 # a list of values
			record "$row" $vals
		done <"$rows"
	done
fi
rm -f "$rows"
echo
echo "large frames through the xconnect: $(uname -r), veth (native XDP, copy mode), MTU 9000 on every link,"
echo "need_wakeup on, busy-poll n/a (copy mode), forwarder on CPU $FWD_CPU, generator and sink on CPU 0,"
echo "UDP 4 flows, generator engine by size: $GEN_ENGINES; median of $RUNS runs of ${SECS}s"
printf '%-14s %10s %9s %9s %9s %8s %9s\n' row median_pps min max Gbit/s vs_devmap vs_limit
for size in "${sizes[@]}"; do
	for r in limit devmap ferry testpmd; do
		row=${r}_$size
		if [[ -z ${MED[$row]:-} ]]; then
			[[ $r == testpmd && -n ${EXTRA[${row}_err]:-} ]] && printf '%-14s refused: %s\n' "$row" "${EXTRA[${row}_err]}"
			continue
		fi
		printf '%-14s %10s %9s %9s %9s %8s %9s\n' "$row" "${MED[$row]}" "${MIN[$row]}" "${MAX[$row]}" \
			"$(gbps "$row" "$size")" "$(ratio "$row" "devmap_$size")" "$(ratio "$row" "limit_$size")"
	done
	[[ -n ${EXTRA[ferry_${size}_drops]:-} ]] && echo "  ferry_$size drops by reason (last run): ${EXTRA[ferry_${size}_drops]}"
done
if [[ -n ${MED[tcp_ferry_1500]:-} || -n ${MED[tcp_ferry_9000]:-} ]]; then
	echo
	echo "TCP, iperf3 1 stream cli -> srv, ${SECS}s, TX checksum offload on at both hosts (Gbit/s x100):"
	printf '%-18s %8s %8s %8s %10s\n' row median min max vs_bridge
	for mtu in 1500 9000; do
		for r in ferry bridge; do
			row=tcp_${r}_$mtu
			[[ -n ${MED[$row]:-} ]] || continue
			printf '%-18s %8s %8s %8s %10s\n' "$row" "${MED[$row]}" "${MIN[$row]}" "${MAX[$row]}" "$(ratio "$row" "tcp_bridge_$mtu")"
		done
	done
fi
