#!/usr/bin/env bash
# bench/acl_cost.sh - the classifier's cost per frame against the number of
# rules in a port's table (ACL and steering rules share it), the linear
# walk beside the bit-vector matcher, in the same run: build/bench/acl_bench
# loads the classifier object ferryd loads, installs N rules with each
# matcher as the daemon does (dataplane/rules/rulecls.c) and times a 64-byte UDP
# frame that no rule matches (every rule walked: the worst case for the
# walk, and the case of every frame an ACL lets through) with
# BPF_PROG_TEST_RUN (repeat R, the program alone, no NIC).
#
# Rounds are interleaved (every N and both matchers once per round) and
# each cell is the median over the rounds. ns are this machine's, under
# whatever load it has: compare the ratios.
#
#   bench/acl_cost.sh [--rounds N] [--repeat R] [RULES...]
#   (default RULES: 0 1 8 16 32 100 1000)
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=$REPO/build/bench/acl_bench
ROUNDS=5
REPEAT=200000
while (($#)); do
	case $1 in
	--rounds) ROUNDS=$2 && shift 2 ;;
	--repeat) REPEAT=$2 && shift 2 ;;
	-h | --help) sed -n '2,17p' "$0" && exit 0 ;;
	*) break ;;
	esac
done
RULES=("$@")
((${#RULES[@]})) || RULES=(0 1 8 16 32 100 1000)
[[ -x $BIN ]] || {
	echo "acl_cost: build first (./run build)" >&2
	exit 1
}
((EUID == 0)) || {
	echo "acl_cost: needs root (BPF_PROG_TEST_RUN)" >&2
	exit 1
}

raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
for ((r = 0; r < ROUNDS; r++)); do
	"$BIN" -r "$REPEAT" -k 3 "${RULES[@]}" >>"$raw"
done

median() { # median N MATCHER
	awk -v n="$1" -v m="$2" '$1 == n && $2 == m {print $3}' "$raw" |
		sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'
}
ratio() { echo "scale=2; $1 / $2" | bc -l; }

echo "classifier cost per frame against rule count: $(uname -r), BPF_PROG_TEST_RUN"
echo "repeat $REPEAT, median of $ROUNDS interleaved rounds; load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%6s %10s %10s %14s %11s %11s\n' rules linear_ns bitvec_ns linear/bitvec linear_vs_1 bitvec_vs_1
l1=$(median 1 linear)
b1=$(median 1 bitvec)
for n in "${RULES[@]}"; do
	l=$(median "$n" linear)
	b=$(median "$n" bitvec)
	printf '%6s %10s %10s %14s %11s %11s\n' "$n" "$l" "$b" "$(ratio "$l" "$b")" \
		"$( [[ -n $l1 ]] && ratio "$l" "$l1" || echo -)" "$( [[ -n $b1 ]] && ratio "$b" "$b1" || echo -)"
done
echo "ferryd walks tables of up to FERRY_CLS_LINEAR_MAX rules (dataplane/rules/rulecls.h) and uses the bit-vector matcher above"
