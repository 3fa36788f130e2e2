#!/usr/bin/env bash
# The testbed's trap ends every process its test started, however it was
# started (tests/lib/procs.sh). An inner test (its own tb_init) starts them
# in each way that once leaked or could, then exits; checked here:
#   - none of them is left: by PID and command line, and no process
#     carries the inner run's mark TB_RUN_ID;
#   - the inner run's namespace and cgroup are gone;
#   - the inner log names each of them: the trap found it (the tracked PID
#     is the subshell, not the command).
# The ways: `tb_exec ... &` tracked (the PID is a subshell: t_steer's
# steer_peer.py was left so), a subshell's `ip netns exec` child, setsid,
# a command with its environment cleared in a namespace, a stopped one, one
# that ignores SIGTERM in its own session, and a forked subshell loop
# orphaned by its parent (no mark in its environment: found by cgroup).
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init

inner=$TB_RUN/inner.sh
pids=$TB_RUN/inner.pids
# Each command writes "PID WAY" and execs; the loop writes its own PID.
cat >"$inner" <<'SH'
set -euo pipefail
. "$TB_LIB_DIR/testbed.sh"
pids=$1
tb_init
echo "$TB_P $TB_RUN_ID ${TB_RUN_CG:--}" >"$pids.run"
tb_ns a
ns=$(tb_nsname a)
ip=$(command -v ip) sleep=$(command -v sleep)
: >"$pids"
rec='echo "$$ $0" >>"$1"; shift; exec "$@"'
tb_exec a sh -c "$rec" tracked-subshell "$pids" sleep 3601 &
tb_track $!
(ip netns exec "$ns" sh -c "$rec" subshell-child "$pids" sleep 3602 &) &
setsid sh -c "$rec" setsid "$pids" sleep 3603 &
env -i /bin/sh -c "$rec" env-cleared "$pids" "$ip" netns exec "$ns" "$sleep" 3604 &
sh -c "$rec" stopped "$pids" sleep 3605 &
stopped=$!
(setsid sh -c "trap '' TERM; $rec" ignores-term "$pids" sleep 3606 &)
( (echo "$BASHPID orphaned-loop" >>"$pids"; while :; do sleep 0.2; done) &)
for ((i = 0; i < 50; i++)); do
	(($(wc -l <"$pids") >= 7)) && break
	sleep 0.1
done
kill -STOP "$stopped"
SH

TB_LIB_DIR=$TB_LIB_DIR bash "$inner" "$pids" >"$TB_RUN/inner.log" 2>&1 || {
	cat "$TB_RUN/inner.log"
	tb_die "the inner test failed"
}
cat "$TB_RUN/inner.log"
read -r ip iid icg <"$pids.run"
assert_eq "ways started" 7 "$(wc -l <"$pids")"

# Alive, and still the inner test's (a recycled PID runs something else).
alive() {
	[[ -e /proc/$1 && $(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) != Z ]] || return 1
	procs_cmdline "$1"
	[[ $REPLY == *"sleep 360"* || $REPLY == *inner.sh* ]]
}
while read -r pid way; do
	assert_eq "$way (pid $pid) ended" no "$(alive "$pid" && echo yes || echo no)"
	assert_ge "inner log: $way found and ended" 1 \
		"$(grep -c "not tracked: $pid " "$TB_RUN/inner.log" || true)"
done <"$pids"

procs_find_begin
procs_marked TB_RUN_ID "$iid"
assert_eq "processes with the inner mark" "" "${PROCS[*]}"
assert_eq "inner namespace" "" "$(ip netns list | grep "^$ip-" || true)"
[[ $icg == - ]] || assert_eq "inner cgroup $icg" gone "$([[ -d $icg ]] && echo there || echo gone)"
