#!/usr/bin/env bash
# Every command through the real control socket: its happy path at least
# once, checked by what it answers and what changed; then error paths
# (unknown port, bad numbers, bad keywords, missing arguments, taken names,
# busy objects), each answered ok:false with its errno code and leaving the
# daemon as it was, still serving.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

PROMCHECK="$TB_LIB_DIR/promcheck.py"

# ok EXPR WANT CMD...: CMD succeeds (ok:true) and jq EXPR on its reply
# gives WANT. Failures are counted, not fatal, so one run shows them all.
ok() {
	local expr=$1 want=$2 out rc=0
	shift 2
	out=$(tb_ctlj dut "$@" 2>&1) || rc=$?
	if ((rc != 0)) || [[ $(jq -r .ok <<<"$out" 2>/dev/null) != true ]]; then
		assert__fail "$* should succeed" "exit: $rc" "reply: ${out:0:400}" || true
		return 0
	fi
	if assert_json "$expr" "$want" "$out" >/dev/null; then
		echo "ok: $* -> $expr == $want"
	fi
}

# err CODE CMD...: CMD is answered ok:false with error code CODE, a
# message, and ferryctl exits 1.
err() {
	local code=$1 out rc=0 seen
	shift
	out=$(tb_ctlj dut "$@" 2>&1) || rc=$?
	seen=$(jq -r '"\(.ok) \(.error.code) \(.error.message | length > 0)"' <<<"$out" 2>/dev/null || echo "not JSON")
	if [[ $rc == 1 && $seen == "false $code true" ]]; then
		echo "ok: $* -> $code ($(jq -r .error.message <<<"$out"))"
	else
		assert__fail "$* should fail with $code" "exit: $rc (want 1)" "reply: ${out:0:400}" || true
	fi
}

state() {
	{
		tb_ctlj dut port show | jq -S -c '[.data[] | {name, ifname, queue_first, queues, mode, xdp, app, workers}]'
		tb_ctlj dut worker show | jq -S -c '[.data[] | {id, cpu, idle, sockets}]'
		tb_ctlj dut show config | jq -c .data
	}
}

tb_init
tb_std3 1
tb_veth dut d2 sink s2 # a free interface for port add lines that must fail
D2=$(tb_ifname d2)
tb_ferryd dut dut
ncpu=$(nproc)

# ---- happy paths ----
ncmds=$(tb_ctlj dut help | jq '.data | length')
assert_ge "help lists the commands" 19 "$ncmds"
ok '[.data[] | .command] | index("port add") != null' true help
ok '.data.command' "port add" help port add
ok '.data.command' "stats reset" help stats reset
ok '[.data[] | .command] | join(",")' "port add,port del,port show" help port
ok '.data.protocol' 1 version
ok '.data.ferryd | length > 0' true version
ok '[.data[] | .cpu] | join(",")' 0 workers 0 idle poll
ok '[.data[] | .idle] | join(",")' busy workers 0
ok '.data[0] | "\(.id) \(.cpu) \(.idle)"' "0 0 busy" worker show
ok '.data[0] | "\(.name) \(.ifname) \(.queues)"' "p0 $D0 1" port add p0 dev "$D0"
ok '.data[0] | "\(.name) \(.mode_requested) \(.xdp)"' "p1 copy native" \
	port add p1 dev "$D1" queues 1 mode copy xdp native
ok '.data[0] | "\(.name) \(.xdp)"' "p2 generic" port add p2 dev "$D2" queues 0-0 xdp generic
ok '[.data[] | .name] | join(",")' "p0,p1,p2" port show
ok '[.data[] | .name] | join(",")' p2 port show p2
ok '.data' null port del p2
ok '[.data[] | .name] | join(",")' "p0,p1" port show
ok '.data[0].sockets | join(",")' "p0/0,p1/0" worker show
ok '.data' null xconnect add p0 p1
ok '.data[0].app' "xconnect p1" port show p0
ok '.data' null xconnect del p0
ok '.data[0].app' none port show p0
ok '.data' null reflect p0
ok '.data[0].app' reflect port show p0
ok '.data' null drop p1
ok '.data[0].app' drop port show p1
ok '.data' null gen start p0 rate 1000 size 128 flows 4 dst-mac 02:00:00:00:00:01 count 1000000
ok '[.data.gen[] | select(.port == "p0") | "\(.running) \(.size) \(.flows) \(.rate)"] | first' \
	"true 128 4 1000" stats
ok '.data' null gen stop p0
ok '[.data.gen[] | select(.port == "p0") | .running] | first' false stats
ok '"\(.data.ports | length) \(.data.workers | length)"' "2 1" stats
ok '"\(.data.ports[0].name) \(.data.workers | length)"' "p0 0" stats port p0
ok '"\(.data.ports | length) \(.data.workers[0].id)"' "0 0" stats worker 0
ok '.data' null stats reset
ok '[.data.ports[] | .totals.rx_packets] | add' 0 stats
ok '.data | test("ferry_queue_rx_packets_total\\{port=\"p0\",queue=\"0\"\\} ")' true metrics
tb_ctlj dut metrics | jq -j .data >"$TB_RUN/metrics.prom"
assert_ok "$PYTHON" "$PROMCHECK" --strict "$TB_RUN/metrics.prom"
ok '.data | split("\n") | map(select(startswith("port add"))) | length' 2 show config
ok '.data.saved' "$TB_RUN/saved.conf" save "$TB_RUN/saved.conf"
assert_eq "saved file == show config" "$(tb_ctlj dut show config | jq -j .data)" "$(cat "$TB_RUN/saved.conf")"
ok '.data' null xconnect add p0 p1 # for the EBUSY cases below

# ---- error paths: the state must not move ----
before=$(state)

# unknown ports and objects
err ENOENT port del nope
err ENOENT port show nope
err ENOENT xconnect add nope p1
err ENOENT xconnect add p0 nope
err ENOENT xconnect del nope
err ENOENT xconnect del p1 # p1 has no xconnect
err ENOENT reflect nope
err ENOENT drop nope
err ENOENT gen start nope
err ENOENT gen stop nope
err ENOENT stats port nope
err ENOENT stats worker 5 # in range, not configured
err ENODEV port add p9 dev nosuchif0
err ENOENT save "$TB_RUN/no/such/dir/x.conf"

# bad numbers: not a number is EINVAL, out of range ERANGE
err EINVAL workers abc
err ERANGE workers 64
err EINVAL workers 3-1
err EINVAL port add p9 dev "$D2" queues x
err ERANGE port add p9 dev "$D2" queues 0-99
err ERANGE port add p9 dev "$D2" queues 0
err ERANGE port add p9 dev "$D2" queues 4 # the veth has one queue
err EINVAL gen start p0 rate fast
err ERANGE gen start p0 rate 1000000000
err ERANGE gen start p0 size 10
err ERANGE gen start p0 flows 0
err EINVAL gen start p0 dst-mac 02:00:00:00:00
err EINVAL stats worker x
err ERANGE stats worker 64

# bad keywords and words
err EINVAL port add p9 dev "$D2" bogus 1
err EINVAL port add p9 dev "$D2" mode turbo
err EINVAL port add p9 dev "$D2" xdp hw
err EINVAL port add p9 dev "$D2" mode copy mode copy
err EINVAL workers 0 idle lazy
err EINVAL gen start p0 bogus 1
err EINVAL stats frob
err EINVAL port frob
err EINVAL frobnicate
err EINVAL help frobnicate
err EINVAL port add "bad name" dev "$D2"

# `workers` with no argument shows the workers, as `worker show` does
ok '.data | length' "$(tb_ctlj dut worker show | jq '.data | length')" workers

# missing (or extra) arguments
err EINVAL port add
err EINVAL port add p9
err EINVAL port add p9 dev
err EINVAL port add p9 queues 1
err EINVAL port del
err EINVAL port show p0 p1
err EINVAL xconnect add p0
err EINVAL xconnect del
err EINVAL reflect
err EINVAL drop
err EINVAL gen start
err EINVAL gen stop
err EINVAL workers idle poll  # no CPULIST before idle
err EINVAL worker show 0
err EINVAL version 1
err EINVAL stats reset now
err EINVAL metrics now
err EINVAL show config now
err EINVAL save

# taken and busy
err EEXIST port add p0 dev "$D2"   # name taken
err EEXIST port add p9 dev "$D0"   # interface taken
err EBUSY port del p1              # the egress of p0's xconnect
if ((ncpu < 64)); then
	err EINVAL workers 63 # not an online CPU here
fi

after=$(state)
assert_eq "state after the error paths" "$before" "$after"

# gen start while one runs: EBUSY, and the running one goes on
ok '.data' null gen start p0 rate 1000
err EBUSY gen start p0
ok '[.data.gen[] | select(.port == "p0") | .running] | first' true stats
ok '.data' null gen stop p0

assert_ok tb_ctlj dut version
assert_json '.ok' true "$(tb_ctlj dut port show)"
if ((ASSERT_FAILS > 0)); then
	echo "$ASSERT_FAILS check(s) failed" >&2
	exit 1
fi
