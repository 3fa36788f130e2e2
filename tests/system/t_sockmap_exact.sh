#!/usr/bin/env bash
# sockmap flow acceleration: the probe's answer, bad input, byte-exact
# redirected transfers and the verdict counters.
#
# One namespace (loopback only), a child cgroup v2 holding tcpx's client
# and server, ferryd attached to it with `default redirect` (every flow
# redirected, no learning: t_sockmap_learn checks that). Checked:
#   - the BPF_F_PERMANENT probe says "unsupported" on this kernel (the send
#     with flag bit 1 fails with EACCES), so auto picks apply-bytes, and
#     `verdict permanent` is refused;
#   - bad input (missing or non-cgroup2 path, the root cgroup, bad port
#     lists, unknown verdicts, double attach, detach when detached): a
#     clear error each, no program left on the cgroup, daemon serving;
#   - 1 B, 64 B, 1 KiB, 64 KiB messages over IPv4 and IPv6 arrive
#     byte-exact, every byte redirected, one verdict run per flow;
#   - 2 GiB in one flow: one verdict run (apply_bytes 0xffffffff re-arms
#     every 4 GiB - 1: the design promises ceil(bytes / (2^32 - 1)) runs);
#   - a port outside the list is not accelerated; a peer outside the
#     cgroup leaves its direction on TCP (byte-exact, counted as TCP); a
#     peer across a veth is not local and is not added;
#   - verdict per-message runs once per send() (the diagnostic baseline);
#   - a dual-stack listener's child (v4-mapped) pairs with its IPv4 client;
#   - show config carries the attach line; save + restart brings it back.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

[[ -x $TCPX ]] || tb_die "no tcpx at $TCPX (build first)"

tb_init
tb_ns h
tb_exec h sysctl -qw net.ipv6.conf.lo.disable_ipv6=0
tb_cgroup acc
CG=$TB_CGROUP
tb_ferryd h dut

# err CODE ARGS...: the command fails with CODE, and nothing is attached.
err() {
	tb_err dut "$@"
}

# Programs attached to the test's cgroup (bpftool, host side).
cg_progs() {
	local out
	out=$(bpftool -j cgroup show "$CG" 2>/dev/null)
	jq -s 'map(length) | add // 0' <<<"$out"
}

# flow SRVPORT KEY: the client->server direction's counter (dst port SRVPORT).
flow() {
	tb_ctlj dut sockmap show | jq -r --arg p ":$1" --arg k "$2" \
		'[.data.flows[] | select(.dst | endswith($p)) | .[$k]] | first // "none"'
}

# xfer ADDR PORT BYTES MSGSIZE [CLIENT ARGS...]: one transfer, server and
# client in the cgroup; fails unless both ends say it was all verified.
# The server listens on $SRV_ADDR when set, else on ADDR.
xfer() {
	local addr=$1 port=$2 bytes=$3 msg=$4 srv_out cli rc=0
	shift 4
	srv_out=$TB_RUN/srv-$port.json
	tb_tcpx_server h "${SRV_ADDR:-$addr}:$port" "$srv_out" --cgroup "$CG"
	cli=$(tb_cg_exec h "$CG" "$TCPX" client -d "$addr:$port" -n "$bytes" -m "$msg" "$@") || rc=$?
	wait "$TB_TCPX_PID" || rc=$?
	echo "    client: $cli"
	echo "    server: $(cat "$srv_out")"
	assert_eq "$addr:$port $bytes B in $msg B sends: tcpx exit codes" 0 "$rc"
	assert_json .bytes "$bytes" "$cli"
	assert_json .ok true "$(cat "$srv_out")"
	assert_json .bytes "$bytes" "$(cat "$srv_out")"
}

# ---- the probe ----
show=$(tb_do dut sockmap show)
assert_json .data.attached false "$show"
assert_json .data.permanent.supported false "$show"
assert_match "probe: the kernel's answer" "EACCES" "$(jq -r .data.permanent.probe <<<"$show")"

# ---- bad input: an error each, nothing attached ----
err EINVAL sockmap attach
err EINVAL sockmap attach ports 7000
err EINVAL sockmap attach cgroup
err ENOENT sockmap attach cgroup "$TB_RUN/no/such/cgroup"
err EINVAL sockmap attach cgroup "$TB_RUN"
err EPERM sockmap attach cgroup "$TB_CGMNT"
err EINVAL sockmap attach cgroup "$CG" ports 0
err EINVAL sockmap attach cgroup "$CG" ports 70000
err EINVAL sockmap attach cgroup "$CG" ports 7010-7000
err EINVAL sockmap attach cgroup "$CG" ports 80,http
err EINVAL sockmap attach cgroup "$CG" ports 80,
err EINVAL sockmap attach cgroup "$CG" ports -5
err E2BIG sockmap attach cgroup "$CG" ports 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17
err EINVAL sockmap attach cgroup "$CG" verdict sometimes
err EOPNOTSUPP sockmap attach cgroup "$CG" verdict permanent
err EINVAL sockmap attach cgroup "$CG" bogus 1
err EINVAL sockmap attach cgroup "$CG" default sometimes
err ENOENT sockmap detach
err EINVAL sockmap detach now
assert_json .data.attached false "$(tb_do dut sockmap show)"
assert_eq "programs on the cgroup after the refusals" 0 "$(cg_progs)"
assert_json .data.ferryd 0.1.0 "$(tb_do dut version)"

# ---- attach ----
# lag-max 0: no lag guard, so the verdict lasts 4 GiB - 1 bytes and every
# byte is redirected however far the reader falls behind (t_sockmap_lag
# tests the guard, on by default).
out=$(tb_do dut sockmap attach cgroup "$CG" ports 7000-7010,7020 default redirect lag-max 0)
assert_json .data.mechanism apply-bytes "$out"
assert_json .data.verdict auto "$out"
assert_json .data.ports 7000-7010,7020 "$out"
assert_eq "programs on the cgroup" 1 "$(cg_progs)"
err EBUSY sockmap attach cgroup "$CG"
assert_eq "programs on the cgroup after a second attach" 1 "$(cg_progs)"
assert_match "show config" "sockmap attach cgroup \"$CG\" ports 7000-7010,7020 default redirect lag-max 0$" \
	"$(tb_ctlj dut show config | jq -r .data)"

# ---- byte-exact, every byte redirected, one verdict per flow ----
port=7000
for addr in 127.0.0.1 '[::1]'; do
	for m in "1 200000" "64 4000000" "1024 64000000" "65536 256000000"; do
		read -r msg bytes <<<"$m"
		xfer "$addr" $port "$bytes" "$msg"
		assert_eq "$addr:$port verdict runs" 1 "$(flow $port verdict_runs)"
		assert_eq "$addr:$port redirects" 1 "$(flow $port redirects)"
		assert_eq "$addr:$port bytes redirected" "$bytes" "$(flow $port bytes_redirected)"
		assert_eq "$addr:$port bytes over TCP" 0 "$(flow $port bytes_tcp)"
		assert_eq "$addr:$port path" redirect "$(flow $port path)"
		port=$((port + 1))
	done
done

# ---- a dual-stack listener: its IPv4 client is keyed as IPv4 both ways ----
SRV_ADDR='[::]' xfer 127.0.0.1 7010 8000000 4096
assert_eq "v4-mapped: verdict runs" 1 "$(flow 7010 verdict_runs)"
assert_eq "v4-mapped: bytes redirected" 8000000 "$(flow 7010 bytes_redirected)"
assert_eq "v4-mapped: the server's direction is IPv4 too" 4 \
	"$(tb_ctlj dut sockmap show | jq '[.data.flows[] | select(.src == "127.0.0.1:7010") | .family] | first')"

# ---- a long flow: the verdict runs once per 4 GiB - 1 ----
big=$((2 * 1024 * 1024 * 1024))
xfer 127.0.0.1 7020 $big 65536
assert_eq "2 GiB: verdict runs = ceil(bytes / (2^32 - 1))" \
	$(((big + 4294967294) / 4294967295)) "$(flow 7020 verdict_runs)"
assert_eq "2 GiB: bytes redirected" $big "$(flow 7020 bytes_redirected)"

# ---- a port outside the list stays plain TCP ----
before=$(tb_do dut sockmap show | jq '.data.counters.sockets_added')
xfer 127.0.0.1 7100 1000000 1024
assert_eq "port 7100: no flow entry" none "$(flow 7100 verdict_runs)"
assert_json .data.counters.sockets_added "$before" "$(tb_do dut sockmap show)"

# ---- a peer outside the map: that direction goes over TCP, and stays ----
# The server runs outside the cgroup, so only the client's socket is added.
tb_tcpx_server h 127.0.0.1:7008 "$TB_RUN/srv-7008.json"
tb_cg_exec h "$CG" "$TCPX" client -d 127.0.0.1:7008 -n 50000000 -m 1024 >/dev/null
wait "$TB_TCPX_PID"
assert_json .ok true "$(cat "$TB_RUN/srv-7008.json")"
assert_json .bytes 50000000 "$(cat "$TB_RUN/srv-7008.json")"
assert_eq "no peer: path" tcp "$(flow 7008 path)"
assert_eq "no peer: bytes over TCP" 50000000 "$(flow 7008 bytes_tcp)"
assert_eq "no peer: bytes redirected" 0 "$(flow 7008 bytes_redirected)"
assert_eq "no peer: verdict runs (the TCP verdict lasts too)" 1 "$(flow 7008 verdict_runs)"

# ---- a peer on another host (namespace, veth): not added at all ----
tb_ns r
tb_veth h v0 r v1
ip -n "$(tb_nsname h)" addr add 10.79.0.1/24 dev "$(tb_ifname v0)"
ip -n "$(tb_nsname r)" addr add 10.79.0.2/24 dev "$(tb_ifname v1)"
ip -n "$(tb_nsname r)" link set lo up
nl=$(tb_do dut sockmap show | jq .data.counters.not_local)
tb_tcpx_server r 10.79.0.2:7009 "$TB_RUN/srv-7009.json"
tb_cg_exec h "$CG" "$TCPX" client -d 10.79.0.2:7009 -n 1000000 -m 1024 >/dev/null
wait "$TB_TCPX_PID"
assert_json .ok true "$(cat "$TB_RUN/srv-7009.json")"
assert_eq "remote peer: no flow entry" none "$(flow 7009 verdict_runs)"
assert_json .data.counters.not_local $((nl + 1)) "$(tb_do dut sockmap show)"

# ---- per-message: the baseline runs the verdict on every send() ----
out=$(tb_do dut sockmap detach)
assert_json .data.sockets_draining 0 "$out"
assert_eq "programs on the cgroup after detach" 0 "$(cg_progs)"
assert_match "show config after detach" "^[^s]*$" "$(tb_ctlj dut show config | jq -r .data | grep sockmap || true)"
out=$(tb_do dut sockmap attach cgroup "$CG" ports 7000 verdict per-message default redirect)
assert_json .data.mechanism per-message "$out"
xfer 127.0.0.1 7000 1024000 1024
assert_eq "per-message: verdict runs = sends" 1000 "$(flow 7000 verdict_runs)"
assert_eq "per-message: bytes redirected" 1024000 "$(flow 7000 bytes_redirected)"
assert_match "show config (per-message)" "sockmap attach cgroup \"$CG\" ports 7000 verdict per-message default redirect$" \
	"$(tb_ctlj dut show config | jq -r .data)"

# ---- save + restart: the attachment comes back ----
tb_do dut save "$TB_RUN/saved.conf" >/dev/null
tb_do dut shutdown >/dev/null
tb_wait_exit dut 20
assert_eq "programs on the cgroup after shutdown" 0 "$(cg_progs)"
tb_ferryd h dut2 -c "$TB_RUN/saved.conf"
out=$(tb_do dut2 sockmap show)
assert_json '"\(.data.attached) \(.data.cgroup) \(.data.ports) \(.data.verdict)"' \
	"true $CG 7000 per-message" "$out"
assert_eq "programs on the cgroup after restart" 1 "$(cg_progs)"
tb_do dut2 sockmap detach >/dev/null
assert_eq "programs on the cgroup after the last detach" 0 "$(cg_progs)"
