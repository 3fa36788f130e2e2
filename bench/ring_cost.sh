#!/usr/bin/env bash
# bench/ring_cost.sh [RING_BENCH] - userspace instructions per packet of the
# worker loop (ferry_worker_poll_once and everything it calls), counted by
# callgrind on fake rings, so the figure depends on the code only.
# Prints: "<app> <burst> <instructions per packet>" per case.
set -euo pipefail
bin=${1:-$(dirname "$0")/../build/bench/ring_bench}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for app in xconnect reflect; do
	for burst in 256 64 8 1; do
		n=200000
		valgrind --tool=callgrind --callgrind-out-file="$out" \
			--toggle-collect=ferry_worker_poll_once \
			"$bin" "$n" "$burst" "$app" >/dev/null 2>&1
		ir=$(callgrind_annotate "$out" | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
		printf '%-9s burst %-3s %s\n' "$app" "$burst" "$(echo "scale=1; $ir / $n" | bc -l)"
	done
done
