#!/usr/bin/env bash
# ferryd as the unit runs it: an unprivileged user (a numeric uid with no
# passwd entry, so there is nothing to create or delete) holding only the
# unit's ambient capabilities, no_new_privs, under the unit's system call
# filter and MemoryDenyWriteExecute= (tests/lib/seccomp_exec, fed the list
# read from the unit file itself). The dut ferryd, run that way:
#   - forwards byte-exact through an xconnect;
#   - deletes and adds ports;
#   - restarts after SIGKILL and replaces its own stale programs;
#   - hot-restarts (--takeover) and adopts its predecessor's programs;
#   - serves metrics on loopback when given only a port;
#   - asked for what it may not do (save where it may not write), answers
#     with a clear error and keeps serving.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init
[[ -x $SECCOMP_EXEC ]] || tb_die "no seccomp_exec at $SECCOMP_EXEC (build first)"
command -v setpriv >/dev/null || tb_die "no setpriv (package util-linux)"

# A uid and gid nobody uses.
for ((uid = 61000 + RANDOM % 4000; ; uid++)); do
	getent passwd "$uid" >/dev/null || getent group "$uid" >/dev/null || break
done
tb_log "unprivileged ferryd: uid/gid $uid"

# The unit's capabilities, as setpriv spells them: +net_admin,+net_raw,...
caps=$(tb_unit_values AmbientCapabilities | xargs -n1 | sed 's/^CAP_/+/' |
	tr '[:upper:]' '[:lower:]' | paste -sd,)
[[ $caps == *net_admin* && $caps != *sys_admin* ]] || tb_die "unexpected unit capabilities: $caps"
tb_unit_syscalls >"$TB_RUN/syscalls"
chmod 0644 "$TB_RUN/syscalls"
mdwe=
[[ $(tb_unit_values MemoryDenyWriteExecute | xargs) == yes ]] && mdwe=--mdwe
wrap=$TB_RUN/ferryd-unprivileged
# LeakSanitizer (an ASan build of ferryd) stops the threads with ptrace,
# which the unit's filter refuses as systemd would: leaks are checked by
# the other tests.
cat >"$wrap" <<EOF
#!/bin/sh
# exec all the way: tb_ferryd's PID is ferryd's.
ASAN_OPTIONS=\${ASAN_OPTIONS:+\$ASAN_OPTIONS:}detect_leaks=0
export ASAN_OPTIONS
exec setpriv --reuid $uid --regid $uid --clear-groups \\
	--inh-caps -all,$caps --ambient-caps -all,$caps --bounding-set -all,$caps \\
	--no-new-privs -- "$SECCOMP_EXEC" $mdwe "$TB_RUN/syscalls" -- "$FERRYD" "\$@"
EOF
chmod 0755 "$wrap"
# The run dir takes the control sockets: the uid may write there. The
# bpffs' ferry/ directory is shared with the root daemons of this test
# (on a host, only the ferry user's ferryd pins there).
chgrp "$uid" "$TB_RUN"
chmod 0775 "$TB_RUN"
mkdir -m 1777 "$TB_BPFFS/ferry"

tb_std3
tb_veth dut d2 sink s2
D2=$(tb_ifname d2)
# The dut first: the gen and sink daemons are root as usual.
FERRYD=$wrap tb_dut_xconnect
pid=${TB_PID_OF[dut]}
st() { awk -v k="$1:" '$1 == k {print $2}' "/proc/$pid/status"; }
want=$(printf '%016x' $(((1 << 12) | (1 << 13) | (1 << 14) | (1 << 23) | (1 << 38) | (1 << 39))))
assert_eq "dut ferryd uid" "$uid" "$(st Uid)"
assert_eq "dut ferryd CapEff" "$want" "$(st CapEff)"
assert_eq "dut ferryd NoNewPrivs" 1 "$(st NoNewPrivs)"
assert_eq "dut ferryd Seccomp (filter)" 2 "$(st Seccomp)"
# The system call list, and MemoryDenyWriteExecute='s own filter.
assert_eq "dut ferryd seccomp filters" "$([[ -n $mdwe ]] && echo 2 || echo 1)" "$(st Seccomp_filters)"
assert_eq "pins are the uid's" "$uid" "$(stat -c %u "$TB_BPFFS/ferry/$D0/ferry_xdp")"
tb_gen_up

# ---- byte-exact through the xconnect (no ferryd on the sink: AF_PACKET)
xconnect_exact() {
	local what=$1 cap file
	file=$TB_RUN/cap-${what//[^a-zA-Z0-9]/_}
	tb_do dut stats reset >/dev/null
	tb_capture_start sink s0 "$file" --count 2000 --timeout 30 --verify-gen 128
	tb_do gen gen start g0 count 2000 rate 20000 size 128 flows 4 >/dev/null
	tb_wait_gen_done gen g0 30
	tb_capture_wait "$file"
	cap=$TB_CAP
	assert_json .received 2000 "$cap"
	assert_json .bad 0 "$cap"
	assert_eq "$what: dut p1 tx_packets" 2000 "$(tb_stat dut p1 tx_packets)"
}
xconnect_exact first

# ---- a capture under the same filter: its reader of the classifier's
# frames is a BPF output perf buffer (perf_event_open, CAP_PERFMON)
capdir=$TB_RUN/capdir
mkdir -m 0700 "$capdir"
chown "$uid:$uid" "$capdir"
tb_do dut capture start c1 port p0 count 10 file "$capdir/c.pcapng" >/dev/null
xconnect_exact "with a capture"
for ((i = 0; i < 50; i++)); do
	[[ $(tb_do dut capture show | jq '.data | length') == 0 ]] && break
	sleep 0.1
done
assert_json '.data | length' 0 "$(tb_do dut capture show)"
assert_eq "frames in the capture file" 10 "$(tcpdump -r "$capdir/c.pcapng" 2>/dev/null | wc -l)"
# The XDP half is best effort (a warning, not an error): it must have started.
assert_eq "XDP half of the capture started (no warning)" 0 \
	"$(grep -c "frames dropped in XDP not captured" "$TB_RUN/dut.log")"

# ---- port del / add
tb_do dut xconnect del p0 >/dev/null
tb_do dut port del p1 >/dev/null
assert_eq "d1 after port del" none "$(tb_xdp_prog_id dut d1)"
tb_do dut port add p1 dev "$D1" >/dev/null
tb_do dut xconnect add p0 p1 >/dev/null
xconnect_exact "after port del/add"

# ---- what its privileges do not allow: a clear error, still serving
mkdir -m 0755 "$TB_RUN/roots"
out=$(tb_ctlj dut save "$TB_RUN/roots/ferry.conf" || true)
echo "save into a directory of root's: $out"
assert_json .error.code EACCES "$out"
assert_match "save: message" 'permission denied' "$(jq -r .error.message <<<"$out")"
# A pin directory of root's (a ferryd run as root before): refused, with
# the fix; the port is usable once it is the daemon user's.
mkdir -m 0700 "$TB_BPFFS/ferry/$D2"
out=$(tb_ctlj dut port add p2 dev "$D2" || true)
echo "port add with root's pin directory: $out"
assert_json .error.code EACCES "$out"
assert_match "port add: message" "chown -R ferry:ferry /sys/fs/bpf/ferry" "$(jq -r .error.message <<<"$out")"
chown "$uid:$uid" "$TB_BPFFS/ferry/$D2"
# The DPDK backend under the same privileges and filter (its EAL's iopl is
# refused: no PCI device is used).
tb_do dut port add p2 dev "$D2" backend dpdk queues 1 >/dev/null
assert_json '.data[0].backend' dpdk "$(tb_do dut port show p2)"
tb_do dut port del p2 >/dev/null
assert_ok tb_ctlj dut version
assert_eq "dut ferryd still running" "$pid" "$(pgrep -x ferryd | grep -x "$pid")"

# ---- SIGKILL, restart: its own stale programs replaced
stale0=$(tb_xdp_prog_id dut d0)
tb_kill9 dut
assert_eq "d0 keeps the killed ferryd's program" "$stale0" "$(tb_xdp_prog_id dut d0)"
FERRYD=$wrap tb_dut_xconnect
assert_match "restart replaced its stale program" "replaced stale ferry program id $stale0" \
	"$(cat "$TB_RUN/dut.log")"
xconnect_exact "after SIGKILL and restart"

# ---- hot restart: --takeover adopts the predecessor's programs
old_pid=${TB_PID_OF[dut]}
ip netns exec "$(tb_nsname dut)" sh -c "$TB_BPFFS_EXEC" sh \
	"$wrap" -f -s "$(tb_sock dut)" --takeover --metrics 9464 \
	</dev/null >>"$TB_RUN/dut2.log" 2>&1 &
TB_PID_OF["dut2"]=$!
tb_track "$!"
tb_wait_exit dut 20 || tb_die "old ferryd (pid $old_pid) did not exit"
assert_eq "old ferryd exit code" 0 "$TB_EXIT_RC"
for ((i = 0; i < 100; i++)); do
	grep -q "ready on" "$TB_RUN/dut2.log" && tb_ctl dut version >/dev/null 2>&1 && break
	kill -0 "${TB_PID_OF["dut2"]}" 2>/dev/null || tb_die "new ferryd exited"
	sleep 0.1
done
assert_match "took over" "took over from ferryd pid $old_pid" "$(cat "$TB_RUN/dut2.log")"
pid=${TB_PID_OF["dut2"]}
assert_eq "successor uid" "$uid" "$(st Uid)"
assert_eq "successor Seccomp (filter)" 2 "$(st Seccomp)"
xconnect_exact "after takeover"

# ---- metrics: a bare port is loopback only
assert_match "metrics on loopback" 'metrics on http://127\.0\.0\.1:9464/metrics' "$(cat "$TB_RUN/dut2.log")"
body=$(ip netns exec "$(tb_nsname dut)" "$PYTHON" -c \
	'import urllib.request as u; print(u.urlopen("http://127.0.0.1:9464/metrics").read().decode())')
assert_match "GET /metrics on loopback" '^ferry_queue_rx_packets_total' "$body"
