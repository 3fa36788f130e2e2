#!/usr/bin/env bash
# tests/vm/guest_lib.sh: sourced by the guest tests (t_vm_*.sh), inside the
# guest. ferryd/ferryctl from the host's build (over 9p), ok/bad lines, and
# a trap that prints ferryd's log and dmesg on a failure, ends ferryd
# ($FPID) and exits with the test's result.
FERRYD=${FERRYD:-build/daemon/ferryd}
FERRYCTL=${FERRYCTL:-build/ctl/ferryctl}
SOCK=/run/ferry-vm.sock
fails=0
ok() { echo "ok   $*"; }
bad() {
	echo "FAIL $*"
	fails=$((fails + 1))
}
finish() {
	if ((fails)); then
		echo "--- ferryd log"
		tail -40 /run/ferry-vm.log 2>/dev/null
		echo "--- dmesg (last 40)"
		dmesg | tail -40
	fi
	[[ -n ${FPID:-} ]] && kill "$FPID" 2>/dev/null
	echo "$(basename "$0" .sh): $fails failed"
	exit $((fails ? 1 : 0))
}
trap finish EXIT
# The interface with MAC $1 (the NICs are told apart by the MACs run.sh gives).
nic_by_mac() {
	local n
	for n in /sys/class/net/*; do
		[[ $(cat "$n/address") == "$1" ]] && { echo "${n##*/}"; return 0; }
	done
	return 1
}
