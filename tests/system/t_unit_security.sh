#!/usr/bin/env bash
# The shipped systemd unit: `systemd-analyze verify` accepts it, and
# `systemd-analyze security --offline=yes` rates its exposure at most 3.0
# (--threshold=30 makes it exit non-zero above). Also checked: the unit runs
# ferryd as its own user, grants no CAP_SYS_ADMIN, and its ambient set is
# its bounding set. verify wants the ExecStart binary to exist: a copy of
# the unit points at this build's ferryd.
set -euo pipefail
# shellcheck source=../lib/testbed.sh
. "$(dirname "$0")/../lib/testbed.sh"
# shellcheck source=../lib/assert.sh
. "$(dirname "$0")/../lib/assert.sh"

tb_init
command -v systemd-analyze >/dev/null || tb_die "no systemd-analyze (package systemd)"
[[ -x $FERRYD ]] || tb_die "no ferryd at $FERRYD (build first)"
unit=$(tb_unit_file)
copy=$TB_RUN/ferryd.service
sed "s#@sbindir@/ferryd#$FERRYD#" "$unit" >"$copy"
grep -q "^ExecStart=$FERRYD " "$copy" || tb_die "no @sbindir@/ferryd in $unit's ExecStart="

# --man=no: the man pages are not installed where the test runs.
assert_ok systemd-analyze verify --man=no "$copy"
out=$(systemd-analyze security --offline=yes --threshold=30 "$copy" 2>&1) && rc=0 || rc=$?
printf '%s\n' "$out" | grep -E '✗|Overall'
score=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' <<<"$out")
echo "exposure: $score (at most 3.0)"
assert_eq "systemd-analyze security --threshold=30 exit status" 0 "$rc"
assert_match "exposure" '^([0-2]\.[0-9]|3\.0)$' "$score"

assert_eq "User=" ferry "$(tb_unit_values User | xargs)"
assert_eq "AmbientCapabilities= is CapabilityBoundingSet=" \
	"$(tb_unit_values CapabilityBoundingSet | xargs)" "$(tb_unit_values AmbientCapabilities | xargs)"
caps=$(tb_unit_values CapabilityBoundingSet)
if [[ $caps == *SYS_ADMIN* ]]; then
	assert__fail "no CAP_SYS_ADMIN in the unit" "seen: $caps"
fi
assert_eq "RestrictAddressFamilies=" "AF_UNIX AF_NETLINK AF_XDP AF_INET AF_INET6" \
	"$(tb_unit_values RestrictAddressFamilies | xargs)"
# The filter parses into names this systemd knows (the list the unprivileged
# test applies with seccomp_exec).
n=$(tb_unit_syscalls | wc -l)
assert_ge "system calls the unit allows" 100 "$n"
tb_unit_syscalls | grep -qx bpf || assert__fail "bpf in SystemCallFilter="
