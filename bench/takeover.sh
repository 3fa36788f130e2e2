#!/usr/bin/env bash
# bench/takeover.sh - a hot restart's loss and longest silence at the
# receiver, sockets handed over (`handover pass`, this round) against the
# rebuild of earlier rounds (FERRY_TAKEOVER_REBUILD=1), same testbed, same
# run, at each rate.
#
#   bench/takeover.sh [--rounds N] [--rates "10000 100000 200000"]
#
# Each row is one takeover in the middle of 5 s of numbered UDP datagrams
# (tests/system/t_takeover_exact.sh with TAKEOVER_BENCH=1: gen -- dut
# xconnect path xsk -- sink, kernel UDP endpoints, 4 flows). Columns: lost
# (numbers never received), dup, late, and max_gap_ms, the longest time
# between two datagrams at the sink. The baseline silence of the testbed
# itself is measured in the same run: how=none is the same stream with no
# restart (on a 2-vCPU VM its longest silence is 8-40 ms: the scheduler's,
# not ferry's). A rate the testbed cannot carry shows as loss in how=none.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ROUNDS=2
RATES="10000 100000 200000"
while (($#)); do
	case $1 in
	--rounds) ROUNDS=$2 && shift ;;
	--rates) RATES=$2 && shift ;;
	*) echo "usage: $0 [--rounds N] [--rates \"PPS ...\"]" >&2 && exit 2 ;;
	esac
	shift
done

printf '%-8s %-8s %8s %8s %6s %6s %11s\n' rate how sent lost dup late max_gap_ms
for rate in $RATES; do
	for how in none rebuild pass; do
		rb= none=
		[[ $how == rebuild ]] && rb=1
		[[ $how == none ]] && none=1
		TAKEOVER_BENCH=1 TAKEOVER_REBUILD=$rb TAKEOVER_NONE=$none RATE=$rate ROUNDS=$ROUNDS \
			bash tests/system/t_takeover_exact.sh 2>/dev/null | sed -n 's/^BENCH //p' |
			while read -r _ _ _ sent json; do
				printf '%-8s %-8s %8s %8s %6s %6s %11.1f\n' "$rate" "$how" "${sent#sent=}" \
					"$(jq .missing <<<"$json")" "$(jq .duplicates <<<"$json")" \
					"$(jq .late <<<"$json")" "$(jq '.max_gap_us / 1000' <<<"$json")"
			done
	done
done
