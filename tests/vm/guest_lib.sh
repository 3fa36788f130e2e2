#!/usr/bin/env bash
# tests/vm/guest_lib.sh: sourced by the guest tests (t_vm_*.sh), inside the
# guest. ferryd/ferryctl from the host's build (over 9p), ok/bad lines, and
# a trap that prints ferryd's log and dmesg on a failure, ends ferryd
# ($FPID) and exits with the test's result.
FERRYD=${FERRYD:-build/daemon/ferryd}
FERRYCTL=${FERRYCTL:-build/ctl/ferryctl}
SOCK=/run/ferry-vm.sock
fails=0
ok() { echo "ok   $*"; }
bad() {
	echo "FAIL $*"
	fails=$((fails + 1))
}
# The kernel's own complaints: a WARN/BUG (ferry's sockets and programs
# taken down in the wrong order show up here first), a lockdep splat.
dmesg_bad() { dmesg | grep -E 'WARNING:|BUG:|Call Trace|Oops|general protection|RIP:|refcount_t|list_(add|del) corruption|Failed to disable zero-copy'; }
finish() {
	local bad_k
	# ferryd ends first (port del of every port: sockets closed, XDP
	# detached), so that what the teardown makes the kernel say is seen.
	if [[ -n ${FPID:-} ]] && kill "$FPID" 2>/dev/null; then
		for ((i = 0; i < 100; i++)); do
			kill -0 "$FPID" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$FPID" 2>/dev/null && bad "ferryd still running 10 s after SIGTERM"
	fi
	if bad_k=$(dmesg_bad); then
		bad "kernel warnings in dmesg:"
		echo "$bad_k" | head -20
	else
		ok "dmesg: no WARN/BUG"
	fi
	if ((fails)); then
		echo "--- ferryd log"
		tail -40 /run/ferry-vm.log 2>/dev/null
		echo "--- dmesg (last 40)"
		dmesg | tail -40
	fi
	[[ ${FERRY_VM_DEBUG:-} ]] && { echo "--- ferryd log"; cat /run/ferry-vm.log; }
	echo "$(basename "$0" .sh): $fails failed"
	exit $((fails ? 1 : 0))
}
trap finish EXIT
# The interface with MAC $1 (the NICs are told apart by the MACs run.sh gives).
nic_by_mac() {
	local n
	for n in /sys/class/net/*; do
		[[ $(cat "$n/address") == "$1" ]] && { echo "${n##*/}"; return 0; }
	done
	return 1
}
# four_nics: N0..N3, the guest's NICs by the MACs run.sh gives (FERRY_VM_NICS=4);
# 1 if one is missing.
four_nics() {
	N0=$(nic_by_mac 52:54:00:fe:00:00) N1=$(nic_by_mac 52:54:00:fe:00:01)
	N2=$(nic_by_mac 52:54:00:fe:00:02) N3=$(nic_by_mac 52:54:00:fe:00:03)
	[[ -n $N0 && -n $N1 && -n $N2 && -n $N3 ]] || {
		bad "four NICs needed (FERRY_VM_NICS=4)"
		return 1
	}
}

# hosts_ab [MTU]: namespaces pa (NIC1, 10.98.0.1/24) and pb (NIC3,
# 10.98.0.2/24), hosts that know nothing of ferry, their NICs at MTU
# (default: as they are). After four_nics.
hosts_ab() {
	local x ns nic addr
	for x in pa:"$N1":10.98.0.1 pb:"$N3":10.98.0.2; do
		IFS=: read -r ns nic addr <<<"$x"
		ip netns add "$ns"
		ip link set "$nic" netns "$ns"
		ip -n "$ns" link set lo up
		ip -n "$ns" link set "$nic" ${1:+mtu "$1"} up || bad "$ns: $nic up${1:+ at MTU $1}"
		ip -n "$ns" addr add "$addr/24" dev "$nic"
	done
}

# ferryctl on the guest's ferryd.
ctl() { "$FERRYCTL" -s "$SOCK" "$@"; }
# ferryd_up: ferryd in the background (its pid in FPID, for finish), its log
# in /run/ferry-vm.log; returns once it answers (or after 10 s).
ferryd_up() {
	local i
	"$FERRYD" -f -s "$SOCK" </dev/null >/run/ferry-vm.log 2>&1 &
	FPID=$!
	for ((i = 0; i < 100; i++)); do
		ctl version >/dev/null 2>&1 && return 0
		sleep 0.1
	done
}

# guest_modules MODULE...: the guest kernel's MODULEs loaded, an ok/bad
# line each; "MODULE:ARGS" loads it with ARGS (commas: spaces). 1 if any
# failed.
guest_modules() {
	local m args
	# the package's modules come without modules.dep (its postinst makes
	# it): made here, in the guest's overlay
	[[ -e /lib/modules/$(uname -r)/modules.dep ]] || depmod "$(uname -r)" ||
		bad "depmod"
	for m in "$@"; do
		args=${m#*:}
		[[ $args == "$m" ]] && args=
		m=${m%%:*}
		# shellcheck disable=SC2086 # args are words
		if modprobe "$m" ${args//,/ } 2>/dev/null || [[ -d /sys/module/$m ]]; then
			ok "module $m"
		else
			bad "modprobe $m"
		fi
	done
	((fails == 0))
}

# sys_test NAME MODULE...: the system test tests/vm/NAME.sh (tests/lib's
# testbed, kept out of tests/system/, which runs on the host, because it
# needs links the host's kernel may not make) with the guest kernel's
# MODULEs loaded (guest_modules), under CI=true so that a missing feature
# fails instead of skipping. The guest's NICs are not used: the test makes
# its own namespaces and veths.
sys_test() {
	local t=$1
	shift
	guest_modules "$@" || return 1
	if CI=true FERRYD=$PWD/build/daemon/ferryd FERRYCTL=$PWD/build/ctl/ferryctl \
		"tests/vm/$t.sh"; then
		ok "$t"
	else
		bad "$t"
	fi
}

# udp_check FROM TO ADDR:PORT LABEL: 3 s of numbered datagrams (seqflow,
# 2000 pps, 8 flows of 512 bytes) from namespace FROM to ADDR:PORT in TO,
# every one received once, in order, each one's bytes checked: ok/bad.
udp_check() {
	local from=$1 to=$2 dst=$3 label=$4 rpid sent rcv i
	local seq=${SEQFLOW:-build/tests/seqflow}
	rm -f /run/seq.ready
	ip netns exec "$to" "$seq" recv -l "$dst" -f 8 -i 2 -T 60 -s 512 --ready /run/seq.ready >/run/seq.recv 2>&1 &
	rpid=$!
	for ((i = 0; i < 50; i++)); do
		[[ -e /run/seq.ready ]] && break
		sleep 0.1
	done
	sent=$(ip netns exec "$from" "$seq" send -d "$dst" -r 2000 -t 3 -f 8 -s 512 | jq .sent)
	wait "$rpid"
	rcv=$(tail -1 /run/seq.recv)
	echo "     seqflow: sent $sent, received $rcv"
	if [[ $(jq .unique <<<"$rcv") == "$sent" && $(jq .missing <<<"$rcv") == 0 &&
		$(jq '.bad // 0' <<<"$rcv") == 0 && $sent -gt 0 ]]; then
		ok "$label: $sent of $sent, none missing or bad"
	else
		bad "$label: $rcv of $sent"
	fi
}

# tcp_check FROM TO ADDR PORT MIB: MIB MiB over TCP from namespace FROM to
# a tcpx server on ADDR:PORT in TO, which checks every byte's value and
# position: ok/bad, and the time it took (TCG: nothing about a NIC).
tcp_check() {
	local from=$1 to=$2 dst=$3 port=$4 mib=$5 spid crc srv t0 t1 i
	local tcpx=${TCPX:-build/tests/tcpx}
	rm -f /run/tcpx.ready
	ip netns exec "$to" "$tcpx" server -l "$dst:$port" -n 1 --ready /run/tcpx.ready >/run/tcpx.srv 2>&1 &
	spid=$!
	for ((i = 0; i < 50; i++)); do
		[[ -e /run/tcpx.ready ]] && break
		sleep 0.1
	done
	t0=$(date +%s.%N)
	ip netns exec "$from" timeout 60 "$tcpx" client -d "$dst:$port" -n $((mib << 20)) -m 65536 >/run/tcpx.cli 2>&1
	crc=$?
	{ sleep 5; kill "$spid" 2>/dev/null; } &
	wait "$spid"
	t1=$(date +%s.%N)
	srv=$(tail -1 /run/tcpx.srv)
	echo "     tcpx $from -> $to: client rc $crc, server $srv ($(echo "$t1 - $t0" | bc) s under TCG)"
	if [[ $(jq -r .ok <<<"$srv") == true && $(jq -r .bytes <<<"$srv") == $((mib << 20)) ]]; then
		ok "TCP $mib MiB $from -> $to byte-exact"
	else
		bad "TCP $mib MiB $from -> $to: $srv"
	fi
}

# ping_check FROM DST WHAT: the first echo reply from namespace FROM to DST
# within 20 tries (a NIC's promiscuous mode reaches virtio_net from a
# driver work item, a moment after the xconnect; one clean-clone CI run on
# a loaded host got none in 10), then 20 pings that must all come back:
# ok "ping FROM -> DST WHAT"; 1 with the ports' counters printed if any is
# lost.
ping_check() {
	local from=$1 dst=$2 what=$3 try
	for ((try = 1; try <= 20; try++)); do
		ip netns exec "$from" ping -c 1 -W 1 "$dst" >/dev/null 2>&1 && break
	done
	if ((try > 20)); then
		echo "     no ping reply in 20 tries; the ports' queues:"
		ctl -j stats | jq -c '.data.ports[] | {name, q: [.queues[] | {rx: .rx_packets, tx: .tx_packets}]}'
	else
		echo "     first ping reply at attempt $try"
	fi
	if ip netns exec "$from" ping -c 20 -i 0.05 -W 2 "$dst" >/dev/null 2>&1; then
		ok "ping $from -> $dst $what"
		return 0
	fi
	bad "ping $from -> $dst $what"
	ctl -j stats | jq -c '.data.ports[] | {name, t: .totals, xdp: (.xdp | with_entries(select(.value > 0)))}'
	return 1
}

# xsk_checks STATS: from `ctl -j stats`, every frame conserved (what the
# ports received = what they sent + what they dropped, by reason) and none
# passed for want of a socket: ok/bad each.
xsk_checks() {
	local st=$1 rx tx drops no_xsk
	rx=$(jq '[.data.ports[] | .totals.rx_packets] | add' <<<"$st")
	tx=$(jq '[.data.ports[] | .totals.tx_packets] | add' <<<"$st")
	drops=$(jq '[.data.ports[] | .totals.drops] | add' <<<"$st")
	echo "     drops by reason: $(jq -c '[.data.ports[] | (.totals.drop_reasons // .drop_reasons // {}) | to_entries[] | select(.value > 0)] | from_entries' <<<"$st")"
	if ((rx == tx + drops && rx > 0)); then
		ok "conservation: rx $rx = tx $tx + drops $drops"
	else
		bad "conservation: rx $rx != tx $tx + drops $drops"
	fi
	no_xsk=$(jq '[.data.ports[] | .xdp.pass_no_xsk] | add' <<<"$st")
	if ((no_xsk == 0)); then ok "no frame on a queue without a socket"; else bad "pass_no_xsk $no_xsk"; fi
}

# pktgen_on DEV: the kernel's pktgen (module loaded) on kpktgend_0 set to
# send 60-byte UDP frames from DEV's queue 0 in bursts of 32, without end
# (count 0), to a MAC no one has: the wire carries them, whatever is
# forwarded drops at the far end. `echo start >/proc/net/pktgen/pgctrl`
# runs it (blocking), `echo stop` ends it.
pktgen_on() {
	local dev=$1 kv
	echo rem_device_all >/proc/net/pktgen/kpktgend_0
	echo "add_device $dev" >/proc/net/pktgen/kpktgend_0
	for kv in "count 0" "pkt_size 60" "dst_mac 02:00:00:00:00:99" "dst 10.99.0.2" \
		"src_min 10.99.0.1" "src_max 10.99.0.1" "queue_map_min 0" "queue_map_max 0" \
		"burst 32"; do
		echo "$kv" >"/proc/net/pktgen/$dev"
	done
}
