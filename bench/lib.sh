# shellcheck shell=bash
# shellcheck disable=SC2034 # MIN/MAX/EXTRA are read by the scripts that source this
# bench/lib.sh - what bench/run.sh and bench/steer.sh share: rows of
# repeated measurements reduced to median, min and max, and ratios between
# rows of the same run.
#
#   record ROW VALUE...   MED[ROW] MIN[ROW] MAX[ROW] from the values
#   ratio ROW BASE        MED[ROW] / MED[BASE] to 2 places, "-" without BASE

say() { printf '==> %s\n' "$*" >&2; }
now() { date +%s.%N; }

# median / min / max of a list of numbers
stats3() {
	printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {printf "%d %d %d\n", a[int((NR+1)/2)], a[1], a[NR]}'
}

declare -A MED MIN MAX EXTRA

record() {
	local row=$1 m lo hi
	shift
	read -r m lo hi < <(stats3 "$@")
	MED[$row]=$m MIN[$row]=$lo MAX[$row]=$hi
}

ratio() { [[ -n ${MED[$2]:-} && ${MED[$2]:-0} != 0 ]] && echo "scale=2; ${MED[$1]} / ${MED[$2]}" | bc -l || echo "-"; }
