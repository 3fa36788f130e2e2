# shellcheck shell=bash
# shellcheck disable=SC2034 # MIN/MAX/EXTRA are read by the scripts that source this
# bench/lib.sh - what bench/run.sh, bench/jumbo.sh and bench/steer.sh
# share: rows of repeated measurements reduced to median, min and max,
# ratios between rows of the same run, and the XDP attach/count helpers.
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

# ---- small XDP helpers (bpftool inside the namespace; tests/lib/testbed.sh)

# The object xdp_attach loads ($OBJ), where it pins (${XDP_PIN}_NS_IF_PROG) and
# the DEVMAP its redirect programs read (the _mb programs have their own).
XDP_PIN=${XDP_PIN:-/sys/fs/bpf/bench}
XDP_TX_MAP=${XDP_TX_MAP:-tx_port}

# xdp_attach NS IF PROG [DEVMAP_TARGET_IFINDEX]
xdp_attach() {
	local ns=$1 ifn=$2 prog=$3 target=${4:-} pin
	# The test's one bpffs is shared by every namespace and outlives each
	# attach: a pin per (namespace, interface, program), made afresh.
	pin=${XDP_PIN}_${ns}_${ifn}_$prog
	tb_exec "$ns" sh -c "
		rm -rf $pin ${pin}_maps &&
		bpftool prog loadall '$OBJ' $pin type xdp pinmaps ${pin}_maps &&
		bpftool net attach xdpdrv pinned $pin/$prog dev $ifn overwrite &&
		if [ -n '$target' ]; then
			bpftool map update pinned ${pin}_maps/$XDP_TX_MAP key 0 0 0 0 \
				value $((target & 255)) $(((target >> 8) & 255)) 0 0
		fi"
}

xdp_detach() {
	tb_exec "$1" ip link set dev "$2" xdp off 2>/dev/null || true
}

# xdp_count NS IF MAP: sum of a per-CPU u64 counter map of IF's program.
xdp_count() {
	local ns=$1 ifn=$2 map=$3 prog_id map_id
	prog_id=$(tb_exec "$ns" ip -j -d link show dev "$ifn" | jq -r '.[0].xdp.prog.id')
	for map_id in $(tb_exec "$ns" bpftool -j prog show id "$prog_id" | jq -r '.map_ids[]'); do
		if [[ $(tb_exec "$ns" bpftool -j map show id "$map_id" | jq -r .name) == "$map" ]]; then
			tb_exec "$ns" bpftool -j map dump id "$map_id" |
				jq '[.[0].formatted.values[].value] | add'
			return
		fi
	done
	echo 0
}

# xdp_rate NS IF MAP: frames per second seen by the counter over SECS
# (bench/steer.sh has a rate_of of its own, over ferryd's stats).
xdp_rate() {
	local c1 c2 t1 t2
	c1=$(xdp_count "$1" "$2" "$3")
	t1=$(now)
	sleep "$SECS"
	c2=$(xdp_count "$1" "$2" "$3")
	t2=$(now)
	echo "($c2 - $c1) / ($t2 - $t1)" | bc -l | cut -d. -f1
}
