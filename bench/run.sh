#!/usr/bin/env bash
# bench/run.sh - forwarding benchmark on the namespace testbed, every row
# measured in the same run so that rows compare with each other only.
#
#   bench/run.sh [--runs N] [--secs S] [--rate PPS] [--no-testpmd] [--no-callgrind]
#                [--parts throughput,kernel,paths,rxfwd,spare,callgrind,dpdk,proxy,sockmap,capture,route]
#
# The sockmap part (local TCP: plain, TCP_NODELAY, per-message redirect,
# ferry's lasting redirect) is bench/sockmap.sh and the proxy part is
# bench/proxy.sh, each with a testbed and table of its own; they run first,
# and alone when they are the only parts asked for. The route part (routed
# pps: kernel forwarding, an XDP bpf_fib_lookup forwarder, ferry's route app,
# with 1 route and with the full table) is bench/route.sh, likewise.
#
# Topology (tests/lib/testbed.sh, std3):
#   gen:g0 ──veth── dut:d0 [forwarder] dut:d1 ──veth── sink:s0
# The generator is ferry's (BPF_PROG_RUN live frames, 64-byte UDP, 1 flow)
# on CPU 0; the sink is an XDP program on s0 that counts and drops; the
# forwarder under test runs on CPU 1. Rows:
#   limit    generator straight into an XDP counter on d0 (the testbed's limit)
#   devmap   in-kernel XDP redirect d0 -> d1 through a DEVMAP
#   ferry    ferryd, xconnect p0 -> p1 path xsk, one busy-polling worker on
#            CPU 1 (the AF_XDP path; every ferry row but ferry_auto forces it)
#   ferry_auto  ferryd, xconnect p0 -> p1 on the default path auto: the
#            kernel path (the classifier's DEVMAP redirect), since s0 has
#            XDP (part kernel, beside devmap and ferry)
# Part paths: devmap, ferry_auto, ferry (xsk) and testpmd again, taking
# turns run by run (rows p_*), so that load drift on a shared host falls
# on all four alike.
#   testpmd  dpdk-testpmd, af_xdp PMD on d0 and d1, io forwarding, lcore 1
#   ferry_dpdk  ferryd as `ferry`, both ports `backend dpdk` (the af_xdp PMD
#            under ferry's worker; part dpdk, beside ferry and testpmd)
# Then, at a fixed rate every forwarder sustains, the spare capacity left on
# CPU 1 (a SCHED_IDLE spinner's loops/s against the same spinner alone), and
# userspace instructions per forwarded packet under callgrind. Part proxy:
# TCP proxy MB/s (iperf3) and requests/s (wrk, nginx), ferry's proxy
# (relay and sk_skb splice) against HAProxy and splice(2) and read/write
# proxies (bench/proxy.sh, its own testbed).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
# shellcheck source=../tests/lib/testbed.sh
. tests/lib/testbed.sh
# shellcheck source=lib.sh
. bench/lib.sh

RUNS=3
SECS=4
FIXED_RATE=200000
DO_TESTPMD=1
DO_CALLGRIND=1
PARTS=throughput,kernel,paths,rxfwd,spare,callgrind,dpdk,proxy,sockmap,capture,route
while (($#)); do
	case $1 in
	--runs) RUNS=$2 && shift ;;
	--secs) SECS=$2 && shift ;;
	--rate) FIXED_RATE=$2 && shift ;;
	--no-testpmd) DO_TESTPMD=0 ;;
	--no-callgrind) DO_CALLGRIND=0 ;;
	--parts) PARTS=$2 && shift ;;
	*) echo "usage: $0 [--runs N] [--secs S] [--rate PPS] [--no-testpmd] [--no-callgrind] [--parts LIST]" >&2 && exit 2 ;;
	esac
	shift
done

if [[ ,$PARTS, == *,sockmap,* ]]; then
	"$REPO/bench/sockmap.sh" --runs "$RUNS" || echo "==> sockmap part failed (see above)" >&2
	PARTS=$(tr ',' '\n' <<<"$PARTS" | { grep -vx sockmap || true; } | paste -sd, -)
	[[ -n $PARTS ]] || exit 0
	echo
fi
# The proxy part has its own testbed and table (bench/proxy.sh); it runs
# first, as its own process, and alone when it is the only part asked for.
if [[ ,$PARTS, == *,proxy,* ]]; then
	"$REPO/bench/proxy.sh" --runs "$RUNS" || echo "==> proxy part failed (see above)" >&2
	PARTS=$(tr ',' '\n' <<<"$PARTS" | { grep -vx proxy || true; } | paste -sd, -)
	[[ -n $PARTS ]] || exit 0
fi

if [[ ,$PARTS, == *,route,* ]]; then
	"$REPO/bench/route.sh" --runs "$RUNS" --secs "$SECS" || echo "==> route part failed (see above)" >&2
	PARTS=$(tr ',' '\n' <<<"$PARTS" | { grep -vx route || true; } | paste -sd, -)
	[[ -n $PARTS ]] || exit 0
	echo
fi

OBJ=$REPO/build/bench/xdp_devmap.bpf.o
SPINNER=$REPO/build/bench/spinner
FWD_CPU=1
[[ -f $OBJ && -x $SPINNER ]] || tb_die "build first (./run build)"
TESTPMD=$(command -v dpdk-testpmd || true)
[[ -n $TESTPMD ]] || DO_TESTPMD=0

# ---- measuring (XDP helpers and xdp_rate: bench/lib.sh) ------------------

gen_start() {
	tb_do gen gen start g0 dst-mac "$(tb_mac dut d0)" "$@" >/dev/null
	sleep 1
}

gen_stop() {
	tb_do gen gen stop g0 >/dev/null || true
	sleep 0.5
}


# ---- forwarders ----------------------------------------------------------

# start_ferry [IDLE [BACKEND]]; the xconnect's path is $XC_PATH (xsk).
start_ferry() {
	local idle=${1:-busy} backend=() path=()
	[[ ${XC_PATH:-xsk} != auto ]] && path=(path "${XC_PATH:-xsk}")
	[[ ${2:-native} == dpdk ]] && backend=(backend dpdk)
	tb_ferryd dut dut >/dev/null
	tb_do dut workers "$FWD_CPU" idle "$idle" >/dev/null
	tb_do dut port add p0 dev "$D0" "${backend[@]}" >/dev/null
	tb_do dut port add p1 dev "$D1" "${backend[@]}" >/dev/null
	tb_do dut xconnect add p0 p1 "${path[@]}" >/dev/null
}

stop_ferry() {
	tb_do dut shutdown >/dev/null || true
	tb_wait_exit dut 10 || true
}

# testpmd as both benchmarks run it: lcore 0 is the main lcore (it only
# prints stats), lcore FWD_CPU forwards; with --stats-period it runs until a
# signal and leaves stdin alone. $1: its --file-prefix.
testpmd_cmd() {
	TESTPMD_CMD=("$TESTPMD" -l "0,$FWD_CPU" --main-lcore 0 --no-pci --no-huge -m 1024
		--file-prefix "$1" --vdev "net_af_xdp0,iface=$D0" --vdev "net_af_xdp1,iface=$D1"
		-- --forward-mode=io --nb-cores=1 --auto-start --total-num-mbufs=16384
		--stats-period 1)
}

TESTPMD_PID=
start_testpmd() {
	local log=$TB_RUN/testpmd.log i
	testpmd_cmd "ferrybench$$"
	ip netns exec "$(tb_nsname dut)" "${TESTPMD_CMD[@]}" </dev/null >"$log" 2>&1 &
	TESTPMD_PID=$!
	tb_track "$TESTPMD_PID"
	for ((i = 0; i < 100; i++)); do
		grep -q "Port statistics" "$log" 2>/dev/null && return 0
		kill -0 "$TESTPMD_PID" 2>/dev/null || break
		sleep 0.2
	done
	cat "$log" >&2
	return 1
}

stop_testpmd() {
	[[ -n $TESTPMD_PID ]] || return 0
	kill -INT "$TESTPMD_PID" 2>/dev/null || true
	wait "$TESTPMD_PID" 2>/dev/null || true
	TESTPMD_PID=
	xdp_detach dut "$D0"
	xdp_detach dut "$D1"
}

# ---- placement -------------------------------------------------------------

# "rx-on-fwd": d0's receive (NAPI: XDP, the copy into the UMEM) runs in a
# kernel thread pinned to the forwarder's CPU, as on a NIC whose queue
# interrupt sits on the worker's core. By default it runs in the sender's
# softirq on CPU 0, where the generator saturates first (see docs).
placement() {
	local mode=$1 pid
	if [[ $mode != rx-on-fwd ]]; then
		# veth refuses the write (EIO) when it is already off
		tb_exec dut sh -c "echo 0 > /sys/class/net/$D0/threaded" 2>/dev/null || true
		tb_exec dut ethtool -K "$D0" gro off >/dev/null 2>&1 || true
		return 0
	fi
	# veth has a NAPI (and so a thread to pin) only with XDP or GRO on;
	# GRO keeps it there while forwarders come and go.
	tb_exec dut ethtool -K "$D0" gro on >/dev/null
	tb_exec dut sh -c "echo 1 > /sys/class/net/$D0/threaded"
	pid=$(pgrep -f "napi/$D0-" | head -n 1)
	[[ -n $pid ]] || tb_die "no NAPI thread for $D0"
	taskset -pc "$FWD_CPU" "$pid" >/dev/null
}

# ---- the rows ------------------------------------------------------------

# bench_xdp ROW PROG TARGET_IFINDEX NS IF: an XDP program on d0 (with its
# DEVMAP target, if any), the rate read from the counter on NS:IF.
bench_xdp() {
	local row=$1 prog=$2 target=$3 ns=$4 ifn=$5 v=() i
	xdp_attach dut "$D0" "$prog" "$target"
	for ((i = 0; i < RUNS; i++)); do
		gen_start
		v+=("$(xdp_rate "$ns" "$ifn" sink_ctr)")
		gen_stop
	done
	xdp_detach dut "$D0"
	record "$row" "${v[@]}"
}

bench_limit() {
	bench_xdp limit xdp_sink_count "" dut "$D0"
}

bench_devmap() {
	bench_xdp devmap xdp_devmap_fwd "$(tb_ifindex dut d1)" sink "$S0"
}

# bench_ferry ROW [IDLE [BACKEND]]
bench_ferry() {
	local row=$1 idle=${2:-busy} backend=${3:-native} v=() i st
	for ((i = 0; i < RUNS; i++)); do
		start_ferry "$idle" "$backend"
		tb_do dut stats reset >/dev/null
		gen_start
		v+=("$(xdp_rate sink "$S0" sink_ctr)")
		gen_stop
		st=$(tb_ctlj dut stats)
		EXTRA[${row}_kpp]=$(jq -r '.data.ports[] | select(.name == "p1") | .totals.kicks_per_packet' <<<"$st")
		EXTRA[${row}_userdrops]=$(jq -r '[.data.ports[].totals.drops] | add' <<<"$st")
		EXTRA[${row}_kerneldrops]=$(jq -r '[.data.ports[].totals | .rx_dropped + .rx_ring_full + .rx_fill_ring_empty_descs] | add' <<<"$st")
		EXTRA[${row}_rx]=$(jq -r '.data.ports[] | select(.name == "p0") | .totals.rx_packets' <<<"$st")
		EXTRA[${row}_path]=$(tb_ctlj dut port show p0 | jq -r '.data[0].path')
		stop_ferry
	done
	record "$row" "${v[@]}"
}

# Capture: ferry's row with a capture on p0 rx. cap_off none,
# cap_none a filter matching nothing, cap_1pct one flow of the generator's
# 100, cap_all every frame; the capture's threads on their default CPUs
# (those without a worker). cap_1pct_fwd is cap_1pct with them pinned to
# the forwarder's CPU (`cpu FWD_CPU`), where an unpinned writer could land:
# what the default placement saves. The rows take turns run by run, so load
# drift on this shared host falls on all of them alike. Output /dev/null:
# the question is the worker's cost, not the disk's.
declare -A CAP_FILTER=([cap_none]="udp port 7777" [cap_1pct]="udp src port 1024"
	[cap_1pct_fwd]="udp src port 1024" [cap_all]="udp")
declare -A CAP_ARGS=([cap_1pct_fwd]="cpu $FWD_CPU")
CAP_ROWS=(cap_off cap_none cap_1pct cap_1pct_fwd cap_all)
bench_capture() {
	local i row st
	declare -A vals=()
	for ((i = 0; i < RUNS; i++)); do
		for row in "${CAP_ROWS[@]}"; do
			start_ferry
			if [[ $row != cap_off ]]; then
				# shellcheck disable=SC2086 # keyword and value, two words
				tb_do dut capture start c port p0 filter "${CAP_FILTER[$row]}" \
					${CAP_ARGS[$row]:-} file /dev/null >/dev/null
			fi
			gen_start flows 100
			vals[$row]+=" $(xdp_rate sink "$S0" sink_ctr)"
			gen_stop
			if [[ $row != cap_off ]]; then
				st=$(tb_ctlj dut capture show)
				EXTRA[${row}_cap]=$(jq -c '.data[0] | {cpus, matched, written, dropped}' <<<"$st")
			fi
			stop_ferry
		done
	done
	for row in "${CAP_ROWS[@]}"; do
		# shellcheck disable=SC2086 # the values, one word each
		record "$row" ${vals[$row]}
	done
}

# Part paths: the bare DEVMAP program, ferry on path auto (the
# kernel path), ferry on path xsk and testpmd, one run of each in turn.
PATH_ROWS=(p_devmap p_ferry_auto p_ferry p_testpmd)
PATH_RATE=
path_sample() { # ROW: its rate in PATH_RATE (not a subshell: the PIDs stay tracked)
	local row=$1
	case $row in
	p_devmap) xdp_attach dut "$D0" xdp_devmap_fwd "$(tb_ifindex dut d1)" ;;
	p_ferry_auto) XC_PATH=auto start_ferry ;;
	p_ferry) start_ferry ;;
	p_testpmd) start_testpmd || { say "testpmd did not start" && return 1; } ;;
	esac
	if [[ $row == p_ferry_auto ]]; then
		EXTRA["p_ferry_auto_path"]=$(tb_ctlj dut port show p0 | jq -r '.data[0].path')
	fi
	gen_start
	PATH_RATE=$(xdp_rate sink "$S0" sink_ctr)
	gen_stop
	case $row in
	p_devmap) xdp_detach dut "$D0" ;;
	p_testpmd) stop_testpmd ;;
	*) stop_ferry ;;
	esac
}

bench_paths() {
	local i row
	declare -A vals=()
	for ((i = 0; i < RUNS; i++)); do
		for row in "${PATH_ROWS[@]}"; do
			[[ $row == p_testpmd ]] && ((!DO_TESTPMD)) && continue
			path_sample "$row" || continue
			vals[$row]+=" $PATH_RATE"
			say "$row: $PATH_RATE"
		done
	done
	for row in "${PATH_ROWS[@]}"; do
		[[ -n ${vals[$row]:-} ]] || continue
		# shellcheck disable=SC2086 # the values, one word each
		record "$row" ${vals[$row]}
	done
	# The rows of one run were measured seconds apart: their ratio
	# run by run shrugs off what this shared host does between runs,
	# which the ratio of two medians does not.
	EXTRA[p_auto_runs]=$(paste <(tr ' ' '\n' <<<"${vals[p_devmap]}") \
		<(tr ' ' '\n' <<<"${vals[p_ferry_auto]}") |
		awk 'NF == 2 && $1 > 0 { printf "%.3f\n", $2 / $1 }' | sort -n | tr '\n' ' ')
}

bench_testpmd() {
	local row=$1 v=() i
	for ((i = 0; i < RUNS; i++)); do
		start_testpmd || { say "testpmd did not start"; return 1; }
		gen_start
		v+=("$(xdp_rate sink "$S0" sink_ctr)")
		gen_stop
		stop_testpmd
	done
	record "$row" "${v[@]}"
}

# Spare capacity on the forwarder's CPU at a fixed offered rate.
spare() {
	"$SPINNER" "$FWD_CPU" "$SECS"
}

bench_spare() {
	local base
	base=$(spare)
	EXTRA[spare_none]=$base
	start_ferry busy
	gen_start rate "$FIXED_RATE"
	EXTRA[spare_ferry_busy]=$(spare)
	EXTRA[fixed_ferry_busy]=$(xdp_rate sink "$S0" sink_ctr)
	gen_stop
	stop_ferry
	start_ferry poll
	gen_start rate "$FIXED_RATE"
	EXTRA[spare_ferry_poll]=$(spare)
	EXTRA[fixed_ferry_poll]=$(xdp_rate sink "$S0" sink_ctr)
	gen_stop
	stop_ferry
	if ((DO_TESTPMD)); then
		start_testpmd
		gen_start rate "$FIXED_RATE"
		EXTRA[spare_testpmd]=$(spare)
		EXTRA[fixed_testpmd]=$(xdp_rate sink "$S0" sink_ctr)
		gen_stop
		stop_testpmd
	fi
}

# Userspace instructions per forwarded packet, ferry and testpmd alike:
# each runs under callgrind (--separate-threads), offered more than it can
# forward under valgrind so that its loop rarely polls empty rings; the
# counters are zeroed when traffic is flowing and dumped CG_SECS later; the
# busiest thread's instructions over the frames the sink saw meanwhile.
CG_SECS=8
CG_RATE=0 # as fast as the generator goes: both forwarders saturated

cg_window() {
	local pid=$1 out=$2 c1 c2 ir f
	gen_start rate "$CG_RATE"
	sleep 1
	callgrind_control -z "$pid" >/dev/null
	c1=$(xdp_count sink "$S0" sink_ctr)
	sleep "$CG_SECS"
	callgrind_control -d "$pid" >/dev/null
	c2=$(xdp_count sink "$S0" sink_ctr)
	gen_stop
	ir=$(for f in "$out".1-*; do
		callgrind_annotate "$f" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
	done | sort -n | tail -n 1)
	# keep the profiles for callgrind_annotate
	for f in "$out".1-*; do cp "$f" "$REPO/build/callgrind.$(basename "$f")"; done
	echo "${ir:-0} $((c2 - c1))"
}

cg_record() {
	local row=$1 ir=$2 pk=$3
	EXTRA[cg_${row}_ir]=$ir
	EXTRA[cg_${row}_pk]=$pk
	((pk > 0)) && EXTRA[cg_${row}_ipp]=$((ir / pk))
}

# cg_ferry ROW [BACKEND]: ferryd under callgrind, forwarding.
cg_ferry() {
	local row=$1 backend=${2:-native} out ir pk real=$FERRYD
	out=$TB_RUN/cg.$row
	FERRYD=$TB_RUN/ferryd-callgrind
	printf '#!/bin/sh\nexec valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file=%s "%s" "$@"\n' \
		"$out" "$real" >"$FERRYD"
	chmod +x "$FERRYD"
	start_ferry busy "$backend"
	FERRYD=$real
	read -r ir pk < <(cg_window "${TB_PID_OF[dut]}" "$out")
	cg_record "$row" "$ir" "$pk"
	stop_ferry
}

bench_callgrind() {
	local out ir pk i
	command -v valgrind >/dev/null && command -v callgrind_control >/dev/null || return 0

	cg_ferry ferry

	((DO_TESTPMD)) || return 0
	out=$TB_RUN/cg.testpmd
	testpmd_cmd "ferrycg$$"
	ip netns exec "$(tb_nsname dut)" valgrind --tool=callgrind --separate-threads=yes \
		--callgrind-out-file="$out" "${TESTPMD_CMD[@]}" </dev/null >"$TB_RUN/testpmd-cg.log" 2>&1 &
	TESTPMD_PID=$!
	tb_track "$TESTPMD_PID"
	for ((i = 0; i < 120; i++)); do
		grep -q "Port statistics" "$TB_RUN/testpmd-cg.log" && break
		sleep 1
	done
	read -r ir pk < <(cg_window "$TESTPMD_PID" "$out")
	cg_record testpmd "$ir" "$pk"
	stop_testpmd
}

# ---- run -----------------------------------------------------------------

tb_init
tb_std3 1
tb_ferryd gen gen >/dev/null
tb_do gen workers 0 idle poll >/dev/null
tb_do gen port add g0 dev "$G0" >/dev/null
xdp_attach sink "$S0" xdp_sink_count

part() { [[ ,$PARTS, == *,$1,* ]]; }

placement default
if part throughput; then
	say "rows: limit, devmap, ferry, testpmd; $RUNS runs of ${SECS}s each"
	bench_limit
	bench_devmap
	bench_ferry ferry
	if ((DO_TESTPMD)); then bench_testpmd testpmd || say "testpmd row failed: see its log above"; fi
fi
if part kernel; then
	say "kernel path: devmap, ferry on path auto (kernel), ferry on path xsk"
	[[ -n ${MED[devmap]:-} ]] || bench_devmap
	XC_PATH=auto bench_ferry ferry_auto
	[[ -n ${MED[ferry]:-} ]] || bench_ferry ferry
fi
if part paths; then
	say "paths, interleaved run by run: devmap, ferry auto (kernel), ferry xsk, testpmd"
	bench_paths
fi
if part rxfwd; then
	say "placement rx-on-fwd: d0's receive on CPU $FWD_CPU"
	placement rx-on-fwd
	bench_ferry ferry_rxfwd
	bench_ferry ferry_rxfwd_poll poll
	if ((DO_TESTPMD)); then bench_testpmd testpmd_rxfwd || say "testpmd row failed: see its log above"; fi
	placement default
fi
if part spare; then
	say "spare capacity on CPU $FWD_CPU at $FIXED_RATE pps"
	bench_spare
fi
if part dpdk; then
	if [[ $("$FERRYCTL" -s "$(tb_sock gen)" -j version | jq -r .data.dpdk) == true ]]; then
		say "dpdk: ferry over the native backend and over DPDK (af_xdp PMD), testpmd"
		[[ -n ${MED[ferry]:-} ]] || bench_ferry ferry
		bench_ferry ferry_dpdk busy dpdk
		if ((DO_TESTPMD)) && [[ -z ${MED[testpmd]:-} ]]; then
			bench_testpmd testpmd || say "testpmd row failed: see its log above"
		fi
		# The forwarder-bound placement is where the backends differ.
		placement rx-on-fwd
		[[ -n ${MED[ferry_rxfwd]:-} ]] || bench_ferry ferry_rxfwd
		bench_ferry ferry_dpdk_rxfwd busy dpdk
		if ((DO_TESTPMD)) && [[ -z ${MED[testpmd_rxfwd]:-} ]]; then
			bench_testpmd testpmd_rxfwd || say "testpmd row failed: see its log above"
		fi
		placement default
		if ((DO_CALLGRIND)) && command -v callgrind_control >/dev/null; then
			say "dpdk: ferry over both backends under callgrind"
			[[ -n ${EXTRA[cg_ferry_ipp]:-} ]] || cg_ferry ferry
			cg_ferry ferry_dpdk dpdk
		fi
	else
		say "dpdk: ferryd was built without DPDK; part skipped"
	fi
fi
if part capture; then
	say "capture: ferry with a capture on p0 rx: none, matching nothing, 1%, 100%"
	bench_capture
fi
if part callgrind && ((DO_CALLGRIND)); then
	say "callgrind: ferry and testpmd forwarding under valgrind"
	bench_callgrind
fi


echo
echo "ferry forwarding benchmark: $(uname -r), veth (native XDP, copy mode), 64-byte frames, 1 flow,"
echo "need_wakeup on, busy-poll sockets n/a (copy mode), median of $RUNS runs of ${SECS}s"
echo "placement default: generator, d0 receive and sink on CPU 0, forwarder on CPU $FWD_CPU"
echo "placement rx-on-fwd: d0 receive (NAPI thread) moved to CPU $FWD_CPU, beside the forwarder"
printf '%-18s %12s %12s %12s %10s %10s\n' row median_pps min max vs_testpmd vs_devmap
for row in limit devmap ferry_auto ferry ferry_dpdk testpmd ferry_rxfwd ferry_rxfwd_poll ferry_dpdk_rxfwd testpmd_rxfwd; do
	[[ -n ${MED[$row]:-} ]] || continue
	base=testpmd
	[[ $row == *rxfwd* ]] && base=testpmd_rxfwd
	printf '%-18s %12s %12s %12s %10s %10s\n' "$row" "${MED[$row]}" "${MIN[$row]}" "${MAX[$row]}" \
		"$(ratio "$row" "$base")" "$(ratio "$row" devmap)"
done
if [[ -n ${MED[ferry_auto]:-} ]]; then
	echo "kernel path: ferry_auto (path ${EXTRA[ferry_auto_path]:-?}) / devmap = $(ratio ferry_auto devmap); ferry_auto / ferry (path xsk) = $(ratio ferry_auto ferry)"
fi
if [[ -n ${MED[p_devmap]:-} ]]; then
	echo
	echo "paths, default placement, rows interleaved run by run (median of $RUNS runs of ${SECS}s; load average $(cut -d' ' -f1-3 /proc/loadavg)):"
	printf '%-14s %12s %12s %12s %10s %10s\n' row median_pps min max vs_devmap vs_testpmd
	for row in "${PATH_ROWS[@]}"; do
		[[ -n ${MED[$row]:-} ]] || continue
		printf '%-14s %12s %12s %12s %10s %10s\n' "$row" "${MED[$row]}" "${MIN[$row]}" "${MAX[$row]}" \
			"$(ratio "$row" p_devmap)" "$(ratio "$row" p_testpmd)"
	done
	echo "paths: ferry auto (path ${EXTRA[p_ferry_auto_path]:-?}) / devmap = $(ratio p_ferry_auto p_devmap);" \
		"ferry xsk / testpmd = $(ratio p_ferry p_testpmd); ferry auto / testpmd = $(ratio p_ferry_auto p_testpmd)"
	if [[ -n ${EXTRA[p_auto_runs]:-} ]]; then
		echo "paths: ferry auto / devmap run by run (sorted): ${EXTRA[p_auto_runs]}; median" \
			"$(awk '{ n = split($0, a, " "); printf "%.3f", n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }' <<<"${EXTRA[p_auto_runs]}")"
	fi
fi
if [[ -n ${MED[cap_off]:-} ]]; then
	echo
	echo "capture on p0 rx, 100 flows, output /dev/null (median of $RUNS runs of ${SECS}s, rows interleaved):"
	printf '%-13s %12s %12s %12s %10s\n' row median_pps min max vs_cap_off
	for row in "${CAP_ROWS[@]}"; do
		printf '%-13s %12s %12s %12s %10s\n' "$row" "${MED[$row]}" "${MIN[$row]}" "${MAX[$row]}" \
			"$(ratio "$row" cap_off)"
	done
	for row in "${CAP_ROWS[@]}"; do
		[[ -n ${EXTRA[${row}_cap]:-} ]] && echo "  $row (last run): ${EXTRA[${row}_cap]}"
	done
	echo
fi
if [[ -n ${MED[ferry_dpdk]:-} ]]; then
	echo "backends, default placement: ferry native / ferry over DPDK = $(ratio ferry ferry_dpdk); ferry over DPDK / testpmd = $(ratio ferry_dpdk testpmd)"
	echo "backends, rx-on-fwd: ferry native / ferry over DPDK = $(ratio ferry_rxfwd ferry_dpdk_rxfwd); ferry over DPDK / testpmd = $(ratio ferry_dpdk_rxfwd testpmd_rxfwd)"
fi
echo
for row in ferry ferry_dpdk ferry_rxfwd ferry_rxfwd_poll ferry_dpdk_rxfwd; do
	[[ -n ${EXTRA[${row}_kpp]:-} ]] || continue
	printf '%-18s kicks/packet %.4f; ferry dropped %s; kernel dropped before ferry (socket rings full) %s; received %s (last run)\n' \
		"$row" "${EXTRA[${row}_kpp]}" "${EXTRA[${row}_userdrops]}" "${EXTRA[${row}_kerneldrops]}" "${EXTRA[${row}_rx]}"
done
echo
echo "spare capacity on CPU $FWD_CPU at $FIXED_RATE pps offered, default placement (SCHED_IDLE spinner loops/s; share of an idle CPU):"
for k in none ferry_busy ferry_poll testpmd; do
	[[ -n ${EXTRA[spare_$k]:-} ]] || continue
	printf '  %-11s %14s  %5s  forwarded %s pps\n' "$k" "${EXTRA[spare_$k]}" \
		"$(echo "scale=2; ${EXTRA[spare_$k]} / ${EXTRA[spare_none]}" | bc -l)" "${EXTRA[fixed_$k]:-n/a}"
done
if [[ -n ${EXTRA[cg_ferry_ipp]:-} ]]; then
	echo
	echo "userspace instructions per forwarded packet (callgrind, busiest thread, ${CG_SECS}s window, offered the generator's maximum):"
	for row in ferry ferry_dpdk testpmd; do
		[[ -n ${EXTRA[cg_${row}_ipp]:-} ]] || continue
		printf '  %-8s %6s  (%s instructions / %s packets)\n' "$row" "${EXTRA[cg_${row}_ipp]}" \
			"${EXTRA[cg_${row}_ir]}" "${EXTRA[cg_${row}_pk]}"
	done
fi
echo
echo "ferry worker loop alone on fake rings (bench/ring_cost.sh: callgrind, instructions per packet):"
"$REPO/bench/ring_cost.sh" "$REPO/build/bench/ring_bench" | sed 's/^/  /'
