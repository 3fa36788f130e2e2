#!/usr/bin/env bash
# bench/capture.sh [BUILD_DIR] - what a capture costs the worker, counted by
# callgrind in instructions per frame (exact, not timing, so the numbers do
# not depend on this shared machine's load), as ratios against the same run's
# baseline:
#   - the worker loop's own cost per frame (bench/ring_bench, xconnect, burst
#     256: ferry_worker_poll_once and everything it calls);
#   - capture_bench's worker_burst() with no capture, with a capture whose
#     filter matches nothing, 1% (3 frames a burst of 256) and 100%;
#   - the writer's cost per written frame (ferry_capture_drain(): on the
#     writer thread's core in ferryd, not the worker's).
# "loop ratio" is (worker loop + capture's extra) / worker loop: the
# worker's userspace instructions per frame with the capture, against
# without. It is not the forwarding-rate loss: on veth (copy mode) the
# kernel's transmit, not the loop, takes most of a worker's CPU; the
# forwarding pps with a capture is measured once the capture is wired in.
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

fwd=$(per "$(ir ferry_worker_poll_once "$ring" "$n" 256 xconnect)" "$n")
printf 'worker loop (xconnect, burst 256): %s instructions/frame\n' "$fwd"
printf '%-6s %12s %12s %11s\n' mode instr/frame extra/frame "loop ratio"
off=
for m in off none 1pct all; do
	v=$(per "$(ir worker_burst "$bin" -n "$n" -m "$m" -p 0)" "$n")
	[[ -z $off ]] && off=$v
	extra=$(echo "scale=2; $v - $off" | bc -l)
	printf '%-6s %12s %12s %11s\n' "$m" "$v" "$extra" \
		"$(echo "scale=4; ($fwd + $extra) / $fwd" | bc -l)"
done
w=$(per "$(ir ferry_capture_drain "$bin" -n "$n" -m all -p 0)" "$n")
printf 'writer (all): %s instructions per written frame\n' "$w"
echo "wall clock, one producer thread + the writer thread:"
for m in off none 1pct all; do
	"$bin" -n 4000000 -m "$m" -p 1
done
