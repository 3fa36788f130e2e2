#!/usr/bin/env bash
# A config file that fails on line 3 stops ferryd quickly with a non-zero
# exit and "line 3" in its error, and leaves nothing behind: no XDP program
# on the interfaces lines 1-2 attached, no control socket, no listener.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init
tb_ns dut
tb_ns peer
tb_veth dut d0 peer e0
tb_veth dut d1 peer e1
D0=$(tb_ifname d0) D1=$(tb_ifname d1)

# Files whose line 3 fails for different reasons: the dataplane refuses
# (no such interface, a name taken), the grammar refuses, an argument is
# out of range, a port is unknown. A comment line counts as a line.
two="port add p0 dev $D0
port add p1 dev $D1"
configs=(
	"$two
port add p2 dev nosuchif"
	"$two
frobnicate p0"
	"$two
port add p2 dev $D0 queues 0-99"
	"$two
xconnect add p0 nope"
	"# one port, then its name again
port add p0 dev $D0
port add p0 dev $D1"
)
ran=0
for body in "${configs[@]}"; do
	ran=$((ran + 1))
	conf="$TB_RUN/bad$ran.conf"
	sock="$TB_RUN/bad$ran.sock"
	printf '%s\n' "$body" >"$conf"
	echo "--- config $ran:"
	sed 's/^/    /' "$conf"
	start=$(date +%s%N)
	rc=0
	err=$(tb_exec dut timeout 20 "$FERRYD" -f -s "$sock" -c "$conf" 2>&1 >/dev/null </dev/null) || rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	echo "ferryd said: $err"
	if ((rc == 0 || rc == 124)); then
		assert__fail "config $ran: ferryd exits non-zero on its own" "exit status: $rc"
	else
		assert__pass "config $ran: ferryd exits $rc"
	fi
	assert_le "config $ran: ms until ferryd exited" 5000 "$ms"
	assert_match "config $ran: the error names line 3" "line 3: " "$err"
	assert_eq "config $ran: no XDP program left on d0" none "$(tb_xdp_prog_id dut d0)"
	assert_eq "config $ran: no XDP program left on d1" none "$(tb_xdp_prog_id dut d1)"
	assert_eq "config $ran: no control socket left" no "$([[ -e $sock ]] && echo yes || echo no)"
done

# With --metrics too: its listener goes with the daemon (the port can be
# bound again at once).
conf="$TB_RUN/bad$ran.conf"
rc=0
err=$(tb_exec dut timeout 20 "$FERRYD" -f -s "$TB_RUN/m.sock" -c "$conf" --metrics 127.0.0.1:9464 2>&1 >/dev/null </dev/null) || rc=$?
assert_eq "with --metrics: exit status" 1 "$rc"
assert_match "with --metrics: the error names line 3" "line 3: " "$err"
assert_ok tb_exec dut "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 9464)); s.listen()'
assert_eq "with --metrics: no XDP program left on d0" none "$(tb_xdp_prog_id dut d0)"

# The interfaces are usable afterwards: a good file on the same ones works.
printf 'port add p0 dev %s\nport add p1 dev %s\nxconnect add p0 p1\n' "$D0" "$D1" >"$TB_RUN/good.conf"
tb_ferryd dut good -c "$TB_RUN/good.conf"
assert_json '[.data[] | .name] | join(",")' "p0,p1" "$(tb_do good port show)"
