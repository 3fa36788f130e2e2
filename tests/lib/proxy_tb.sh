# shellcheck shell=bash
# shellcheck disable=SC2034 # PX_* globals are read by the tests that source this
# proxy_tb.sh - the splice proxy's testbed, on top of testbed.sh:
#
#   cli (10.78.1.1, fd78:1::1) --veth-- px (ferryd "px") --veth-- srv
#                       px: 10.78.1.2, fd78:1::2 | 10.78.2.2, fd78:2::2
#                                             srv: 10.78.2.1, fd78:2::1
#
#   px_setup                  namespaces, links, addresses; ferryd "px" in px
#   px_bg NS OUTFILE CMD...   CMD in NS in the background, stdout to OUTFILE;
#                             its PID (tracked for the trap) in PX_PID
#   px_server NS ADDR:PORT OUT [ARGS]  tcpx server, returns once it listens,
#                                      stdout and stderr to OUT, PID in PX_PID
#   px_flow_field PROXY FIELD          a field of the proxy's first flow
#                                      (jq path below .flows[0])
#   px_kernel_held            bytes between the two TCP stacks in px by the
#                             kernel's own counters (ss): bytes_received of
#                             the socket facing the client minus bytes_acked
#                             of the socket facing the server
PX_CLI4=10.78.1.1 PX_PX4=10.78.1.2 PX_PXB4=10.78.2.2 PX_SRV4=10.78.2.1
PX_CLI6=fd78:1::1 PX_PX6=fd78:1::2 PX_PXB6=fd78:2::2 PX_SRV6=fd78:2::1
PX_PID=

px_setup() {
	[[ -x $TCPX ]] || tb_die "no tcpx at $TCPX (build first)"
	tb_ns cli
	tb_ns px
	tb_ns srv
	tb_veth cli c0 px p0
	tb_veth px p1 srv s0
	tb_ipv6_on cli "$(tb_ifname c0)"
	tb_ipv6_on px "$(tb_ifname p0)" "$(tb_ifname p1)"
	tb_ipv6_on srv "$(tb_ifname s0)"
	ip -n "$(tb_nsname cli)" addr add "$PX_CLI4/24" dev "$(tb_ifname c0)"
	ip -n "$(tb_nsname px)" addr add "$PX_PX4/24" dev "$(tb_ifname p0)"
	ip -n "$(tb_nsname px)" addr add "$PX_PXB4/24" dev "$(tb_ifname p1)"
	ip -n "$(tb_nsname srv)" addr add "$PX_SRV4/24" dev "$(tb_ifname s0)"
	ip -n "$(tb_nsname cli)" addr add "$PX_CLI6/64" dev "$(tb_ifname c0)" nodad
	ip -n "$(tb_nsname px)" addr add "$PX_PX6/64" dev "$(tb_ifname p0)" nodad
	ip -n "$(tb_nsname px)" addr add "$PX_PXB6/64" dev "$(tb_ifname p1)" nodad
	ip -n "$(tb_nsname srv)" addr add "$PX_SRV6/64" dev "$(tb_ifname s0)" nodad
	tb_ferryd px px
	# Bounded: a hung daemon must not hang the failing test's cleanup.
	tb_on_fail timeout 5 "$FERRYCTL" -s "$TB_RUN/px.sock" -j proxy show
	tb_on_fail timeout 5 ip netns exec "$(tb_nsname px)" ss -tniH
}

# A simple command (not a function) after `&`, so $! is the process itself.
px_bg() {
	local ns out=$2
	ns=$(tb_nsname "$1")
	shift 2
	ip netns exec "$ns" "$@" >"$out" 2>&1 &
	PX_PID=$!
	tb_track "$PX_PID"
}

px_server() {
	local rc=0
	tb_tcpx_server "$1" "$2" "$3" --stderr "${@:4}" || rc=$?
	PX_PID=$TB_TCPX_PID
	return "$rc"
}

px_flow_field() {
	tb_ctlj px proxy show "$1" | jq -r ".data.proxies[0].flows[0].$2 // 0"
}

px_kernel_held() {
	local out rcv ack
	out=$(tb_exec px ss -tinH state established)
	rcv=$(awk -v a="$PX_PX4:8000" '$3 == a {getline; if (match($0, /bytes_received:[0-9]+/)) print substr($0, RSTART + 15, RLENGTH - 15); exit}' <<<"$out")
	ack=$(awk -v a="$PX_SRV4:9000" '$4 == a {getline; if (match($0, /bytes_acked:[0-9]+/)) print substr($0, RSTART + 12, RLENGTH - 12); exit}' <<<"$out")
	echo $((${rcv:-0} - ${ack:-0}))
}
