#!/usr/bin/env bash
# bench/takeover_window.sh - frames lost by a hot restart (ferryd --takeover),
# against the same stream with no restart, measured in the same run.
#
#   bench/takeover_window.sh [--runs N] [--rate PPS] [--frames N]
#
# Topology (tests/lib/testbed.sh, std3):
#   gen:g0 ──veth── dut:d0 [ferryd xconnect p0 -> p1] dut:d1 ──veth── sink:s0
# Each run sends the same stream twice: once untouched (baseline), once with
# a --takeover ferryd started 1 s in (each run takes over from the last
# run's successor). Columns:
#   base_lost   generated - received at the sink, no restart
#   lost        the same with a takeover
#   no_xsk      of those, passed to the kernel while no socket was bound
#   sock_drops  of those, dropped at a socket (old or new) or the sink's
#   window_ms   the new ferryd's "forwarding again N ms after the release"
# On a shared 2-vCPU machine the socket drops depend on what else runs:
# the restart's own CPU work (the verifier, the old daemon's exit) competes
# with the busy-polling workers.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
# shellcheck source=../tests/lib/testbed.sh
. tests/lib/testbed.sh

RUNS=3
RATE=100000
FRAMES=300000
while (($#)); do
	case $1 in
	--runs) RUNS=$2 && shift ;;
	--rate) RATE=$2 && shift ;;
	--frames) FRAMES=$2 && shift ;;
	*) echo "usage: $0 [--runs N] [--rate PPS] [--frames N]" >&2 && exit 2 ;;
	esac
	shift
done

tb_init
tb_std3_chain

# Counters now: sink rx, pass_no_xsk on p0, drops at the dut's sockets,
# drops at the sink's. Nothing is reset: every row is a difference.
snapshot() {
	local dut=0 sink=0 p k
	for p in p0 p1; do
		for k in drops rx_dropped rx_ring_full; do
			dut=$((dut + $(tb_stat dut "$p" "$k")))
		done
	done
	for k in rx_dropped rx_ring_full; do
		sink=$((sink + $(tb_stat sink s0 "$k")))
	done
	echo "$(tb_stat sink s0 rx_packets) $(tb_xdpstat dut p0 pass_no_xsk) $dut $sink"
}

stream() {
	tb_do gen gen start g0 count "$FRAMES" rate "$RATE" size 64 flows 4 >/dev/null
}

finish() {
	tb_wait_gen_done gen g0 60
	tb_wait_quiet dut sink
}

printf '%-4s %10s %10s %10s %10s %10s\n' run base_lost lost no_xsk sock_drops window_ms
for ((r = 1; r <= RUNS; r++)); do
	read -r rx0 _ _ _ <<<"$(snapshot)"
	stream
	finish
	read -r rx1 pass_a dut_a sink_a <<<"$(snapshot)"
	base_lost=$((FRAMES - (rx1 - rx0)))

	stream
	sleep 1
	old=${TB_PID_OF[dut]}
	log="$TB_RUN/dut-$r.log"
	nsenter --target "$old" --mount --net "$FERRYD" -f -s "$(tb_sock dut)" \
		--takeover </dev/null >>"$log" 2>&1 &
	pid=$!
	tb_track "$pid"
	tb_wait_exit dut 20 || tb_die "old ferryd did not exit"
	[[ $TB_EXIT_RC == 0 ]] || tb_die "old ferryd exited $TB_EXIT_RC"
	TB_PID_OF[dut]=$pid
	for ((i = 0; i < 100; i++)); do
		grep -q "ready on" "$log" && break
		sleep 0.1
	done
	finish
	read -r rx2 pass_b dut_b sink_b <<<"$(snapshot)"
	# The old daemon's drops since it started (it never reset), reported
	# at the release; the new one's start at zero.
	old_drops=$(sed -n "s/.*old ferryd's sockets dropped \([0-9]*\) frame.*/\1/p" "$log")
	window=$(sed -n 's/.*forwarding again \([0-9.]*\) ms.*/\1/p' "$log")
	printf '%-4s %10s %10s %10s %10s %10s\n' "$r" "$base_lost" $((FRAMES - (rx2 - rx1))) \
		$((pass_b - pass_a)) $((old_drops - dut_a + dut_b + sink_b - sink_a)) "$window"
done
echo "($FRAMES frames of 64 bytes at $RATE pps per stream; kernel $(uname -r), $(nproc) CPUs)"
