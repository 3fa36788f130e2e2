#!/usr/bin/env bash
# bench/route_cost.sh [ROUTE_BENCH] - instructions per frame of route_frame()
# (parse, FIB lookup, next hop, TTL/hop limit with the checksum update, MAC
# rewrite), counted by callgrind, so the figure depends on the code only.
# Prints: "IPv4|IPv6 <instructions per frame>", untagged, then with an
# 802.1Q tag in (VID 100) and out (VID 200): the VLAN sub-interfaces' cost.
set -euo pipefail
bin=${1:-$(dirname "$0")/../build/bench/route_bench}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
n=200000
for vlan in "" vlan; do
	for fam in 4 6; do
		# shellcheck disable=SC2086 # no word when untagged
		valgrind --tool=callgrind --callgrind-out-file="$out" \
			--toggle-collect=route_frame "$bin" "$n" "$fam" $vlan >/dev/null 2>&1
		ir=$(callgrind_annotate "$out" | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
		printf 'IPv%s%s %s\n' "$fam" "${vlan:+ 802.1Q in and out}" "$(echo "scale=1; $ir / $n" | bc -l)"
	done
done
