#!/usr/bin/env bash
# tests/vm/fetch-kernel.sh: download the pinned guest kernel (kernel.pin) from
# Debian's archive with apt-get, using a private apt configuration under the
# cache dir (the host's sources are not touched), check its sha256 and unpack
# it with dpkg-deb -x. Idempotent: does nothing when the unpacked tree exists.
# FERRY_VM_PIN=FILE uses another pin file (same fields) instead of kernel.pin.
# Prints the unpacked tree's path.  Cache: $FERRY_VM_CACHE (/var/cache/ferry-vm).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=kernel.pin
. "${FERRY_VM_PIN:-$HERE/kernel.pin}"
CACHE=${FERRY_VM_CACHE:-/var/cache/ferry-vm}
TREE=$CACHE/kernel-$KVER
if [[ -f $TREE/.ok ]]; then
	echo "$TREE"
	exit 0
fi
APT=$CACHE/apt-$SUITE
mkdir -p "$APT/etc" "$APT/state/lists/partial" "$APT/cache/archives/partial" "$CACHE/deb"
echo "deb http://deb.debian.org/debian $SUITE main" >"$APT/etc/sources.list"
aptopts=(-o Dir::Etc::SourceList="$APT/etc/sources.list" -o Dir::Etc::SourceParts=/dev/null
	-o Dir::State="$APT/state" -o Dir::Cache="$APT/cache" -o APT::Sandbox::User=root -q)
DEB=$CACHE/deb/${PACKAGE}_${VERSION//:/%3a}_amd64.deb
check() { [[ -f $DEB ]] && echo "$SHA256  $DEB" | sha256sum -c --status; }
if ! check; then
	rm -f "$DEB"
	apt-get "${aptopts[@]}" update >&2
	(cd "$CACHE/deb" && apt-get "${aptopts[@]}" download "$PACKAGE=$VERSION" >&2)
	if ! check; then
		echo "fetch-kernel: $DEB: sha256 is not $SHA256" >&2
		sha256sum "$DEB" >&2 || true
		exit 1
	fi
fi
rm -rf "$TREE.tmp"
mkdir -p "$TREE.tmp"
dpkg-deb -x "$DEB" "$TREE.tmp"
# the package has no modules.dep (its postinst makes it): the guest's
# modprobe (8021q, vrf, veth for t_vm_route_vlan) needs one
depmod -b "$TREE.tmp/usr" "$KVER"
rm -rf "$TREE"
mv "$TREE.tmp" "$TREE"
touch "$TREE/.ok"
echo "$TREE"
