#!/usr/bin/env bash
# bench/steer.sh - CPU steering (CPUMAP) and software RSS on the namespace
# testbed; every row measured in the same run, so rows compare only with
# each other.
#
#   bench/steer.sh [--runs N] [--secs S] [--parts classify,tcp,spread,callgrind]
#
#   classify  ferry's generator (64-byte UDP, 64 flows, as fast as it goes)
#             into dut:d0; the classifier's verdict rate on the one RX CPU
#             with frames passed to the stack there (steering off) and
#             steered over CPUs 0-1 (steering on), with the frames the
#             remote CPUs processed and the CPUMAP enqueue drops
#   tcp       a local TCP service in dut (bench/tcp_svc) behind port p1
#             (default pass): connections per second and one stream's
#             MB/s, steering off and on (rule: tcp dport 5001 to cpus 0-1)
#   spread    the generator into a single-queue veth: ferry's drop app on
#             one plain socket, then `spread cpus 1` and `spread cpus 0-1`
#             (software RSS, direct): frames per second received
#   callgrind userspace instructions per received frame, plain socket
#             against spread over two workers (callgrind, saturated)
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
# shellcheck source=../tests/lib/testbed.sh
. tests/lib/testbed.sh
# shellcheck source=lib.sh
. bench/lib.sh

RUNS=3
SECS=4
PARTS=classify,tcp,spread,callgrind
while (($#)); do
	case $1 in
	--runs) RUNS=$2 && shift ;;
	--secs) SECS=$2 && shift ;;
	--parts) PARTS=$2 && shift ;;
	*) echo "usage: $0 [--runs N] [--secs S] [--parts LIST]" >&2 && exit 2 ;;
	esac
	shift
done
TCP_SVC=$REPO/build/bench/tcp_svc
[[ -x $TCP_SVC ]] || tb_die "build first (./run build)"
SVC_PORT=5001
CLI_IP=10.78.0.1
SRV_IP=10.78.0.2

part() { [[ ,$PARTS, == *,$1,* ]]; }

# rate_of JQ: per-second growth of a number in dut's stats over SECS.
rate_of() {
	local expr=$1 c1 c2 t1 t2
	c1=$(tb_ctlj dut stats | jq "$expr")
	t1=$(now)
	sleep "$SECS"
	c2=$(tb_ctlj dut stats | jq "$expr")
	t2=$(now)
	echo "($c2 - $c1) / ($t2 - $t1)" | bc -l | cut -d. -f1
}

gen_start() {
	tb_do gen gen start g0 dst-mac "$(tb_mac dut d0)" flows 64 >/dev/null
	sleep 1
}
gen_stop() {
	tb_do gen gen stop g0 >/dev/null || true
	sleep 0.5
}

# ---- classify: verdict rate on the RX CPU, steering off and on ----------

XDP_P0='.data.ports[] | select(.name == "p0") | .xdp'
bench_classify() {
	local v=() w=() i
	tb_do dut port add p0 dev "$D0" default pass >/dev/null
	for ((i = 0; i < RUNS; i++)); do
		gen_start
		v+=("$(rate_of "$XDP_P0 | .pass_no_rule")")
		gen_stop
	done
	record classify_pass "${v[@]}"
	tb_do dut steer add s1 port p0 match proto udp to cpus 0-1 >/dev/null
	tb_do dut stats reset >/dev/null
	for ((i = 0; i < RUNS; i++)); do
		gen_start
		w+=("$(rate_of "$XDP_P0 | .cpu_redirect")")
		gen_stop
	done
	record classify_steer "${w[@]}"
	local sh
	sh=$(tb_ctlj dut steer show s1)
	EXTRA[steered]=$(jq '[.data[0].counters[].steered] | add' <<<"$sh")
	EXTRA[processed]=$(jq '[.data[0].counters[].processed] | add' <<<"$sh")
	EXTRA[enq_drops]=$(tb_ctlj dut stats | jq '[.data.cpumap[]? | .enqueue_drops // 0] | add // 0')
	tb_do dut steer del s1 >/dev/null
	tb_do dut port del p0 >/dev/null
}

# ---- tcp: a local service, steering off and on -------------------------

svc_rows() {
	local tag=$1 c=() s=() i out
	for ((i = 0; i < RUNS; i++)); do
		out=$(tb_exec cli taskset -c 0 "$TCP_SVC" cps "$SRV_IP" "$SVC_PORT" "$SECS")
		c+=("$(jq -r '.conns_per_s' <<<"$out")")
		out=$(tb_exec cli taskset -c 0 "$TCP_SVC" stream "$SRV_IP" "$SVC_PORT" "$SECS")
		s+=("$(jq -r '.MBps | floor' <<<"$out")")
	done
	record "cps_$tag" "${c[@]}"
	record "mbps_$tag" "${s[@]}"
}

bench_tcp() {
	tb_veth cli c1 dut d1
	local c1 d1
	c1=$(tb_ifname c1)
	d1=$(tb_ifname d1)
	ip -n "$(tb_nsname cli)" addr add "$CLI_IP/24" dev "$c1"
	ip -n "$(tb_nsname dut)" addr add "$SRV_IP/24" dev "$d1"
	# The sender keeps TX checksum offload on: the classifier completes
	# partial checksums of steered frames (docs/design.md).
	tb_exec dut "$TCP_SVC" server "$SVC_PORT" >/dev/null 2>&1 &
	tb_track $!
	sleep 0.5
	tb_do dut port add p1 dev "$d1" default pass >/dev/null
	svc_rows off
	tb_do dut steer add t1 port p1 match proto tcp dport "$SVC_PORT" to cpus 0-1 >/dev/null
	svc_rows on
	EXTRA[tcp_steered]=$(tb_ctlj dut steer show t1 | jq '[.data[0].counters[].steered] | add')
	tb_do dut steer del t1 >/dev/null
	tb_do dut port del p1 >/dev/null
}

# ---- spread: one queue over one and two workers ------------------------

RX_P0='[.data.ports[] | select(.name == "p0") | .totals.rx_packets] | add'
spread_row() {
	local row=$1 v=() i
	shift
	tb_do dut port add p0 dev "$D0" "$@" >/dev/null
	tb_do dut drop p0 >/dev/null
	for ((i = 0; i < RUNS; i++)); do
		gen_start
		v+=("$(rate_of "$RX_P0")")
		gen_stop
	done
	record "$row" "${v[@]}"
	tb_do dut port del p0 >/dev/null
}

bench_spread() {
	spread_row plain_w1
	spread_row spread_1 spread cpus ${SPREAD1_CPU:-0}
	spread_row spread_2 spread cpus 0-1
}

# ---- callgrind: instructions per received frame -------------------------

CG_SECS=6
# cg_row ROW PORT_ARGS...: dut's ferryd under callgrind; the worker threads'
# instructions (every thread but the busiest non-worker is counted: main,
# signal and HTTP threads do nothing per frame) over the frames received.
cg_row() {
	local row=$1 out=$TB_RUN/cg.$1 real=$FERRYD ir c1 c2 f
	shift
	tb_do dut shutdown >/dev/null || true
	tb_wait_exit dut 10 || true
	FERRYD=$TB_RUN/ferryd-callgrind
	printf '#!/bin/sh\nexec valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file=%s "%s" "$@"\n' \
		"$out" "$real" >"$FERRYD"
	chmod +x "$FERRYD"
	tb_ferryd dut dut >/dev/null
	FERRYD=$real
	tb_do dut workers 0-1 idle poll >/dev/null
	tb_do dut port add p0 dev "$D0" "$@" >/dev/null
	tb_do dut drop p0 >/dev/null
	gen_start
	callgrind_control -z "${TB_PID_OF[dut]}" >/dev/null
	c1=$(tb_ctlj dut stats | jq "$RX_P0")
	sleep "$CG_SECS"
	callgrind_control -d "${TB_PID_OF[dut]}" >/dev/null
	c2=$(tb_ctlj dut stats | jq "$RX_P0")
	gen_stop
	ir=$(for f in "$out".1-*; do
		callgrind_annotate "$f" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
	done | awk '{s += $1} END {print s + 0}')
	EXTRA[cg_${row}_ir]=$ir
	EXTRA[cg_${row}_pk]=$((c2 - c1))
	((c2 > c1)) && EXTRA[cg_${row}_ipp]=$((ir / (c2 - c1)))
	tb_do dut shutdown >/dev/null || true
	tb_wait_exit dut 10 || true
	tb_ferryd dut dut >/dev/null
	tb_do dut workers 0-1 idle poll >/dev/null
}

bench_callgrind() {
	command -v valgrind >/dev/null && command -v callgrind_control >/dev/null || return 0
	cg_row plain
	cg_row spread2 spread cpus 0-1
}

# ---- run -----------------------------------------------------------------

tb_init
tb_ns gen
tb_ns dut
tb_ns cli
tb_veth gen g0 dut d0
G0=$(tb_ifname g0)
D0=$(tb_ifname d0)
tb_ferryd gen gen >/dev/null
tb_do gen workers 0 idle poll >/dev/null
tb_do gen port add g0 dev "$G0" >/dev/null
tb_ferryd dut dut >/dev/null
tb_do dut workers 0-1 idle poll >/dev/null

if part classify; then
	say "classify: pass vs steer, $RUNS runs of ${SECS}s"
	bench_classify
fi
if part tcp; then
	say "tcp: local service, steering off and on"
	bench_tcp
fi
if part spread; then
	say "spread: plain socket, spread over 1 and 2 workers"
	bench_spread
fi
if part callgrind; then
	say "callgrind: plain socket and spread over 2 workers"
	bench_callgrind
fi

echo
echo "ferry steering benchmark: $(uname -r), veth (native XDP, copy mode), $(nproc) CPUs,"
echo "need_wakeup on, busy-poll n/a (copy mode), idle poll workers, 64-byte UDP from"
echo "ferry's generator (64 flows), median of $RUNS runs of ${SECS}s"
printf '%-16s %12s %12s %12s %8s\n' row median min max ratio
for pair in classify_pass: classify_steer:classify_pass cps_off: cps_on:cps_off \
	mbps_off: mbps_on:mbps_off plain_w1: spread_1:plain_w1 spread_2:plain_w1; do
	row=${pair%%:*} base=${pair#*:}
	[[ -n ${MED[$row]:-} ]] || continue
	printf '%-16s %12s %12s %12s %8s\n' "$row" "${MED[$row]}" "${MIN[$row]}" "${MAX[$row]}" \
		"$([[ -n $base ]] && ratio "$row" "$base" || echo)"
done
[[ -n ${EXTRA[steered]:-} ]] &&
	echo "classify_steer: steered ${EXTRA[steered]}, processed on the target CPUs ${EXTRA[processed]}, CPUMAP enqueue drops ${EXTRA[enq_drops]}"
[[ -n ${EXTRA[tcp_steered]:-} ]] && echo "tcp on: frames steered ${EXTRA[tcp_steered]}"
if [[ -n ${EXTRA[cg_plain_ipp]:-} ]]; then
	echo "userspace instructions per received frame (callgrind, all threads, ${CG_SECS}s, drop app):"
	for row in plain spread2; do
		[[ -n ${EXTRA[cg_${row}_ipp]:-} ]] || continue
		printf '  %-8s %6s  (%s instructions / %s frames)\n' "$row" "${EXTRA[cg_${row}_ipp]}" \
			"${EXTRA[cg_${row}_ir]}" "${EXTRA[cg_${row}_pk]}"
	done
fi
echo "rows: pps for classify_* and spread*, connections/s for cps_*, MB/s for mbps_*"
