#!/usr/bin/env bash
# ferry-host-setup round trip on a veth in a namespace: hugepages (the real,
# host-wide pool, put back by --undo and by this test's trap), a hugetlbfs
# mount on a temporary directory, queue counts (veth: `ethtool -L rx N tx N`,
# it has no combined channels), IRQ affinity (veth has none: said and
# skipped) and the busy-poll sysfs knobs. --undo must restore every one.
# Bad configurations change nothing; a change failing half-way is undone.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

SETUP=$TB_REPO/drivers-cfg/ferry-host-setup
HUGE=/sys/kernel/mm/hugepages/hugepages-2048kB
HUGE_BEFORE=$(cat "$HUGE/nr_hugepages")
tb_init
# The hugepage pool is host-wide: whatever happens, put it back.
tb_defer tb_write "$HUGE/nr_hugepages" "$HUGE_BEFORE"
tb_ns dut
tb_ns peer
tb_veth dut d0 peer p0 4
D0=$(tb_ifname d0)
NS=$(tb_nsname dut)
STATE=$TB_RUN/host-setup.state
MNT=$TB_RUN/huge

cat >"$TB_RUN/good.conf" <<CONF
# test configuration
hugepages $((HUGE_BEFORE + 4))
hugetlbfs $MNT
queues $D0 2
irq-affinity $D0 0
busy-poll $D0 defer=2 gro_flush_timeout=200000
CONF

# Facts the setup touches, one line each, seen from inside the namespace.
# shellcheck disable=SC2016 # expanded by the inner shell
FACTS='
echo "hugepages $(cat '"$HUGE"'/nr_hugepages)"
echo "mount $(findmnt -n -o FSTYPE '"$MNT"' || echo none)"
echo "dir $([[ -d '"$MNT"' ]] && echo yes || echo no)"
echo "queues $(ethtool -l '"$D0"' | awk "/Current/ {c=1} c && /^RX:/ {print \$2}")"
echo "defer $(cat /sys/class/net/'"$D0"'/napi_defer_hard_irqs)"
echo "gro $(cat /sys/class/net/'"$D0"'/gro_flush_timeout)"
'
fact() { awk -v k="$1" '$1 == k {print $2}' <<<"$2"; }

# Setup, facts, undo, facts: in one mount namespace, so the hugetlbfs mount
# the script makes is visible to the checks (ip netns exec makes a new one).
cat >"$TB_RUN/roundtrip.sh" <<INNER
set -e
echo "--- before"; $FACTS
"$SETUP" -c "$TB_RUN/good.conf" -s "$STATE"
echo "--- after setup"; $FACTS
echo "--- state"; cat "$STATE"
"$SETUP" -s "$STATE" --undo
echo "--- after undo"; $FACTS
[[ -e "$STATE" ]] && echo "state left" || echo "state removed"
INNER
out=$(ip netns exec "$NS" bash "$TB_RUN/roundtrip.sh" 2>&1)
echo "$out"
before=$(sed -n '/^--- before/,/^--- after setup/p' <<<"$out")
setup=$(sed -n '/^--- after setup/,/^--- state/p' <<<"$out")
undone=$(sed -n '/^--- after undo/,$p' <<<"$out")

assert_eq "queues before" 4 "$(fact queues "$before")"
assert_eq "hugepages after setup" $((HUGE_BEFORE + 4)) "$(fact hugepages "$setup")"
assert_eq "hugetlbfs after setup" hugetlbfs "$(fact mount "$setup")"
assert_eq "queues after setup" 2 "$(fact queues "$setup")"
assert_eq "defer after setup" 2 "$(fact defer "$setup")"
assert_eq "gro_flush_timeout after setup" 200000 "$(fact gro "$setup")"
assert_match "veth IRQs said and skipped" "irq-affinity $D0: no IRQs \(virtual device" "$out"
assert_match "veth queues via rx/tx" "rx 4 tx 4 -> rx 2 tx 2" "$out"

assert_eq "hugepages after undo" "$HUGE_BEFORE" "$(fact hugepages "$undone")"
assert_eq "mount after undo" none "$(fact mount "$undone")"
assert_eq "mount dir after undo" no "$(fact dir "$undone")"
assert_eq "queues after undo" 4 "$(fact queues "$undone")"
assert_eq "defer after undo" "$(fact defer "$before")" "$(fact defer "$undone")"
assert_eq "gro after undo" "$(fact gro "$before")" "$(fact gro "$undone")"
assert_match "state file" "state removed" "$out"
assert_eq "host pool after undo" "$HUGE_BEFORE" "$(cat "$HUGE/nr_hugepages")"

# ---- undo with nothing to undo is fine
assert_match "second undo" "nothing to undo" \
	"$(ip netns exec "$NS" "$SETUP" -s "$STATE" --undo)"

# ---- bad configurations: an error naming the line, nothing changed
bad() { # REGEX CONFIG-LINE...
	local re=$1 rc=0 msg
	shift
	printf '%s\n' "hugepages $((HUGE_BEFORE + 2))" "$@" >"$TB_RUN/bad.conf"
	msg=$(ip netns exec "$NS" "$SETUP" -c "$TB_RUN/bad.conf" -s "$STATE" 2>&1) || rc=$?
	echo "bad config '$*': exit $rc: $msg"
	assert_eq "exit for '$*'" 1 "$rc"
	assert_match "message for '$*'" "bad.conf:2: $re" "$msg"
	assert_eq "hugepages untouched by '$*'" "$HUGE_BEFORE" "$(cat "$HUGE/nr_hugepages")"
	assert_eq "no state file after '$*'" no "$([[ -e $STATE ]] && echo yes || echo no)"
}
bad "$D0 has at most 4 queue\(s\), asked for 9" "queues $D0 9"
bad "no interface 'nosuch0' here" "queues nosuch0 2"
bad "CPU 63 does not exist" "irq-affinity $D0 63"
bad "bad CPU list" "irq-affinity $D0 x"
bad "'defer=fast': expected defer=N" "busy-poll $D0 defer=fast"
bad "unknown key 'hugepage'" "hugepage 4"
bad "usage: hugetlbfs /ABSOLUTE/DIR" "hugetlbfs relative/dir"

# ---- a change that fails half-way: what was done is undone
touch "$TB_RUN/file"
printf '%s\n' "hugepages $((HUGE_BEFORE + 2))" "queues $D0 3" \
	"hugetlbfs $TB_RUN/file/sub" >"$TB_RUN/half.conf"
rc=0
msg=$(ip netns exec "$NS" "$SETUP" -c "$TB_RUN/half.conf" -s "$STATE" 2>&1) || rc=$?
echo "half-way failure: exit $rc: $msg"
assert_eq "exit of the half-way failure" 1 "$rc"
assert_match "said it undid" "undoing what this run did" "$msg"
assert_eq "hugepages after the half-way failure" "$HUGE_BEFORE" "$(cat "$HUGE/nr_hugepages")"
assert_eq "queues after the half-way failure" 4 \
	"$(ip netns exec "$NS" ethtool -l "$D0" | awk '/Current/ {c=1} c && /^RX:/ {print $2}')"
assert_eq "no state file after the failure" no "$([[ -e $STATE ]] && echo yes || echo no)"
echo "PASS"
