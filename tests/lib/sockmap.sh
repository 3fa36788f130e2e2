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
