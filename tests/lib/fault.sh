# shellcheck shell=bash
# fault.sh - helpers for the fault tests (tests/system/t_fault_*.sh).
# Source after testbed.sh and assert.sh.
#
#   fault_port NAME PORT KEY        a `port show` field of PORT
#   fault_wait_port NAME PORT KEY VALUE [TIMEOUT]
#                                   waits until the field reads VALUE
#   fault_drop NAME PORT REASON     PORT's drop counter for REASON
#   fault_ledger NAME JQ            a number from the `stats` ledger
#   fault_umem_idle NAME            the UMEM leak check: pool and owner tags
#                                   agree, and after a re-plan (every UMEM
#                                   closed) no frame is missing
#   fault_wait_event NAME PORT EVENT N [TIMEOUT]

fault_port() {
	tb_ctlj "$1" port show "$2" | jq -r --arg k "$3" '.data[0][$k] // empty'
}

fault_wait_port() {
	local name=$1 port=$2 key=$3 want=$4 timeout=${5:-10} i seen=
	for ((i = 0; i < timeout * 10; i++)); do
		seen=$(fault_port "$name" "$port" "$key")
		if [[ $seen == "$want" ]]; then
			tb_log "$name port $port: $key is $want after $((i / 10)).$((i % 10)) s"
			return 0
		fi
		sleep 0.1
	done
	tb_log "$name port $port: $key still '$seen' after ${timeout}s, not '$want'"
	return 1
}

fault_drop() {
	tb_ctlj "$1" stats | jq -r --arg p "$2" --arg r "$3" \
		'[.data.ports[] | select(.name == $p) | .totals.drop_reasons[$r]] | first // 0'
}

# A kernel-path counter of a port (stats' paths.kernel), 0 if absent.
fault_kpath() {
	tb_ctlj "$1" stats | jq -r --arg p "$2" --arg k "$3" \
		'[.data.ports[] | select(.name == $p) | .paths.kernel[$k]] | first // 0'
}

# The fault tests run on the xconnect path $XC_PATH (xsk unless set: the
# *_kernel wrappers set kernel). fault_xc_path NAME IN OUT sets it on the
# running xconnect IN -> OUT and checks it took.
XC_PATH=${XC_PATH:-xsk}
fault_xc_path() {
	tb_do "$1" xconnect add "$2" "$3" path "$XC_PATH" >/dev/null
	assert_eq "$2 path" "$XC_PATH" "$(fault_port "$1" "$2" path)"
}

# What IN lost because its egress was down: port_down on the workers'
# path, err_down (the redirect refused) on the kernel path.
fault_lost_down() {
	if [[ $XC_PATH == kernel ]]; then
		fault_kpath "$1" "$2" err_down
	else
		fault_drop "$1" "$2" port_down
	fi
}

fault_ledger() {
	tb_ctlj "$1" stats | jq -r ".data.ledger | $2"
}

fault_umem_idle() {
	local name=$1 w cpus
	w=$(tb_ctlj "$name" worker show | jq -c '[.data[] | {id, umem_frames, umem_free, umem_in_rings, umem_elsewhere, umem_consistent}]')
	echo "umem of $name: $w"
	jq -e 'all(.umem_consistent)' <<<"$w" >/dev/null || {
		assert__fail "$name: UMEM pool and owner tags disagree" "$w"
		return 1
	}
	# Re-plan onto the same CPUs: every port is deleted (each UMEM closes,
	# checked to the frame) and added again.
	cpus=$(tb_ctlj "$name" show config | jq -r .data | sed -n 's/^workers \([^ ]*\).*/\1/p')
	tb_do "$name" workers "$cpus" >/dev/null
	w=$(tb_ctlj "$name" stats | jq -c '.data.ledger | {umem_closed, umem_frames_lost}')
	echo "UMEMs closed by $name: $w"
	assert_json .umem_frames_lost 0 "$w"
	assert_ge "UMEMs closed and checked" 1 "$(jq .umem_closed <<<"$w")"
}

# fault_wait_event NAME PORT EVENT N [TIMEOUT]: until PORT's event counter is N.
fault_wait_event() {
	local name=$1 port=$2 ev=$3 want=$4 timeout=${5:-10} i seen=
	for ((i = 0; i < timeout * 10; i++)); do
		seen=$(tb_ctlj "$name" port show "$port" | jq -r --arg e "$ev" '.data[0].events[$e]')
		if [[ $seen == "$want" ]]; then
			tb_log "$name port $port: $ev is $want after $((i / 10)).$((i % 10)) s"
			return 0
		fi
		sleep 0.1
	done
	tb_log "$name port $port: $ev still '$seen' after ${timeout}s, not '$want'"
	return 1
}

# fault_wait_ge WHAT MIN CMD...: waits (up to 20 s) until CMD prints a
# number >= MIN, then asserts it: "it moves", with no rate assumed.
fault_wait_ge() {
	local what=$1 min=$2 i seen=
	shift 2
	for ((i = 0; i < 200; i++)); do
		seen=$("$@")
		[[ $seen =~ ^[0-9]+$ ]] && ((seen >= min)) && break
		sleep 0.1
	done
	assert_ge "$what" "$min" "$seen"
}
