# shellcheck shell=bash
# tests/lib/sockmap.sh: what the sockmap system tests share (after
# testbed.sh and assert.sh). Needs $TCPX, the netns h and the attached
# cgroup $CG of the test.

# sm_stream ADDR PORT BYTES SERVER_CGROUP TAG: one transfer of BYTES in
# 1 KiB writes from a client in $CG to a tcpx server on ADDR:PORT in
# SERVER_CGROUP, verified by the server (every byte) and by the client's
# count; the asserts are named TAG.
sm_stream() {
	local addr=$1 port=$2 bytes=$3 cg=$4 tag=$5 cli rc=0 out
	SM_N=$((${SM_N:-0} + 1))
	out=$TB_RUN/stream-$port-$SM_N.json
	tb_tcpx_server h "$addr:$port" "$out" --cgroup "$cg" ||
		tb_die "tcpx server on $addr:$port did not start"
	cli=$(tb_cg_exec h "$CG" "$TCPX" client -d "$addr:$port" -n "$bytes" -m 1024) || rc=$?
	wait "$TB_TCPX_PID" || rc=$?
	assert_eq "$tag: exit codes" 0 "$rc"
	assert_json '"\(.ok) \(.bytes)"' "true $bytes" "$(cat "$out")"
	assert_json .bytes "$bytes" "$cli"
}

# sm_testbed: the sockmap tests' host: tcpx built, the testbed, netns h
# with a child cgroup v2 (its path in CG) and ferryd `dut` in h.
sm_testbed() {
	[[ -x $TCPX ]] || tb_die "no tcpx at $TCPX (build first)"
	tb_init
	tb_ns h
	tb_cgroup acc
	CG=$TB_CGROUP
	tb_ferryd h dut
}

# sm_server PORT ARGS...: a tcpx server on 127.0.0.1:PORT in $CG (ARGS:
# tcpx server's), once it listens; its PID in SRV_PID, its output in
# $TB_RUN/srv-PORT.json.
sm_server() {
	local port=$1
	shift
	tb_tcpx_server h "127.0.0.1:$port" "$TB_RUN/srv-$port.json" --cgroup "$CG" "$@" ||
		tb_die "tcpx server on $port did not start"
	SRV_PID=$TB_TCPX_PID
}

# sm_client ARGS...: tcpx client ARGS in $CG.
sm_client() {
	tb_cg_exec h "$CG" "$TCPX" client "$@"
}
