#!/usr/bin/env bash
# bench/capture.sh [BUILD_DIR] - what a capture costs the worker, counted by
# callgrind in instructions per frame (exact, not timing, so the numbers do
# not depend on this shared machine's load), as ratios against the same run's
# baselines:
#   - the worker loop's own cost per frame (bench/ring_bench, xconnect, burst
#     256: ferry_worker_poll_once and everything it calls);
#   - capture_bench's worker_burst() with no capture, with a capture whose
#     filter matches nothing, 1% (3 frames a burst of 256) and 100%, each
#     with ferry's filter evaluator (dataplane/capture/capture_filter.c) and with
#     libpcap's bpf_filter() on the same compiled program;
#   - more filter shapes on the same frames, matching none of them, with
#     both evaluators;
#   - the writer's cost per written frame (ferry_capture_drain(): on the
#     writer thread's core in ferryd, not the worker's).
# "loop ratio" is (worker loop + capture's extra) / worker loop: the
# worker's userspace instructions per frame with the capture, against
# without. It is not the forwarding-rate loss: on veth (copy mode) the
# kernel's transmit, not the loop, takes most of a worker's CPU
# (bench/run.sh --parts capture measures the pps).
# Then a wall-clock run with one producer thread and the writer thread
# (noisy on a shared host; shows whether the writer keeps up:
# dropped_ring_full).
set -euo pipefail
build=${1:-$(dirname "$0")/../build}
bin=$build/bench/capture_bench
ring=$build/bench/ring_bench
n=${CAPTURE_FRAMES:-256000}
out=$(mktemp)
trap 'rm -f "$out" "$out".*' EXIT

# ir FUNCTION PROGRAM ARGS...: instructions inside FUNCTION (inclusive).
ir() {
	local fn=$1
	shift
	valgrind --tool=callgrind --callgrind-out-file="$out" \
		--toggle-collect="$fn" "$@" >/dev/null 2>&1
	callgrind_annotate "$out" | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
}

per() { echo "scale=2; $1 / $2" | bc -l; }
calc() { echo "scale=${2:-2}; $1" | bc -l; }

fwd=$(per "$(ir ferry_worker_poll_once "$ring" "$n" 256 xconnect)" "$n")
printf 'worker loop (xconnect, burst 256): %s instructions/frame\n' "$fwd"
off=$(per "$(ir worker_burst "$bin" -n "$n" -m off -p 0)" "$n")
printf 'burst step, no capture: %s instructions/frame\n' "$off"
echo 'filter "udp and dst port 7777"; extra = instructions/frame added to the burst step'
printf '%-6s %13s %13s %9s %13s %13s\n' mode "ferry extra" "libpcap extra" \
	"lp/ferry" "ferry loop" "libpcap loop"
for m in none 1pct all; do
	f=$(per "$(ir worker_burst "$bin" -n "$n" -m "$m" -p 0 -e ferry)" "$n")
	l=$(per "$(ir worker_burst "$bin" -n "$n" -m "$m" -p 0 -e libpcap)" "$n")
	fx=$(calc "$f - $off")
	lx=$(calc "$l - $off")
	printf '%-6s %13s %13s %9s %13s %13s\n' "$m" "$fx" "$lx" \
		"$(calc "$lx / $fx")" "$(calc "($fwd + $fx) / $fwd" 4)" \
		"$(calc "($fwd + $lx) / $fwd" 4)"
done
# Other shapes, none matching these frames (UDP 12345 -> 7778, 10.0.0.1 ->
# 10.0.0.2): two indexed port loads; an or of a host and a port range;
# arithmetic through scratch memory (not fused).
echo "other filters, matching nothing:"
printf '%-52s %13s %13s %9s\n' filter "ferry extra" "libpcap extra" "lp/ferry"
for flt in "udp port 53" \
	"host 192.168.1.1 or (udp and portrange 1-1024)" \
	"ip[2:2] - ((ip[0]&0xf)<<2) - 8 > 1400" \
	"vlan 100 or (ip6 and tcp port 80) or (ip and tcp port 80)"; do
	f=$(per "$(ir worker_burst "$bin" -n "$n" -m none -p 0 -e ferry -f "$flt")" "$n")
	l=$(per "$(ir worker_burst "$bin" -n "$n" -m none -p 0 -e libpcap -f "$flt")" "$n")
	fx=$(calc "$f - $off")
	lx=$(calc "$l - $off")
	printf '%-52s %13s %13s %9s\n' "$flt" "$fx" "$lx" "$(calc "$lx / $fx")"
done
w=$(per "$(ir ferry_capture_drain "$bin" -n "$n" -m all -p 0)" "$n")
printf 'writer (all): %s instructions per written frame\n' "$w"
# Wall clock on one thread (-p 0, the drain between bursts), ns/frame of a
# filter matching nothing: 5 rounds, the three rows interleaved, medians.
median() { tr ' ' '\n' | grep . | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
declare -A ns=()
for ((r = 0; r < 5; r++)); do
	for row in off ferry libpcap; do
		m=none e=$row
		[[ $row == off ]] && m=off e=ferry
		ns[$row]+=" $("$bin" -n 4000000 -m "$m" -p 0 -e "$e" | sed -n 's/.*ns\/frame \([0-9.]*\).*/\1/p')"
	done
done
for row in off ferry libpcap; do
	printf 'wall clock, one thread, %-7s ns/frame: median %s of%s\n' "$row" \
		"$(median <<<"${ns[$row]}")" "${ns[$row]}"
done
echo "wall clock, one producer thread + the writer thread (ferry, libpcap interleaved):"
"$bin" -n 4000000 -m off -p 1
for m in none 1pct all; do
	for e in ferry libpcap; do
		"$bin" -n 4000000 -m "$m" -p 1 -e "$e"
	done
done
