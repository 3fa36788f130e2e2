#!/usr/bin/env bash
# tests/vm/mkinitramfs.sh KERNEL_TREE OUT: build the guest's initramfs: a
# static busybox, the modules the guest needs before it can see the host's
# root (decompressed, loaded in dependency order by /init), and /init itself
# (init.sh). Rebuilt only when an input is newer than OUT.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=kernel.pin
. "${FERRY_VM_PIN:-$HERE/kernel.pin}"
TREE=$1
OUT=$2
BUSYBOX=/bin/busybox
# Dependency order: each after what it needs (modinfo -F depends).
MODS=(net/core/failover drivers/net/net_failover drivers/net/virtio_net
	fs/netfs/netfs net/9p/9pnet net/9p/9pnet_virtio fs/9p/9p fs/overlayfs/overlay)
if ! file -L "$BUSYBOX" | grep -q 'statically linked'; then
	echo "mkinitramfs: $BUSYBOX is not static (apt-get install busybox-static)" >&2
	exit 1
fi
if [[ -s $OUT && $OUT -nt $HERE/init.sh && $OUT -nt $HERE/mkinitramfs.sh && $OUT -nt ${FERRY_VM_PIN:-$HERE/kernel.pin} ]]; then
	exit 0
fi
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W"/{bin,dev,proc,sys,mnt,newroot,lib/modules}
cp "$BUSYBOX" "$W/bin/busybox"
ln -s busybox "$W/bin/sh"
install -m 755 "$HERE/init.sh" "$W/init"
for m in "${MODS[@]}"; do
	xz -dc "$TREE/usr/lib/modules/$KVER/kernel/$m.ko.xz" >"$W/lib/modules/${m##*/}.ko"
	echo "${m##*/}" >>"$W/lib/modules/order"
done
(cd "$W" && find . | busybox cpio -o -H newc 2>/dev/null) | gzip -1 >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
