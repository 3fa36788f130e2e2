#!/bin/sh
# /init of the ferry test guest (busybox). Loads the modules, mounts the host's
# root (9p, read-only) under a tmpfs overlay at /newroot, mounts proc, sys,
# dev, bpffs and a tmpfs /run there, puts the pinned kernel's modules at
# /lib/modules/$(uname -r), brings the NICs up, runs the script named by
# ferry.script= (and its ferry.args=, comma-separated) with bash in a chroot,
# prints "FERRY-VM-RESULT rc=N" and powers off.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
script='' args='' tree='' workdir=/ debug=''
for a in $(cat /proc/cmdline); do
	case $a in
	ferry.script=*) script=${a#ferry.script=} ;;
	ferry.args=*) args=$(echo "${a#ferry.args=}" | tr , ' ') ;;
	ferry.tree=*) tree=${a#ferry.tree=} ;;
	ferry.cwd=*) workdir=${a#ferry.cwd=} ;;
	ferry.debug=*) debug=${a#ferry.debug=} ;;
	esac
done
fail() {
	echo "FERRY-VM: $*"
	echo "FERRY-VM-RESULT rc=125"
	poweroff -f
}
for m in $(cat /lib/modules/order); do
	insmod /lib/modules/$m.ko || fail "insmod $m"
done
mkdir -p /mnt/lower /mnt/rw
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose hostroot /mnt/lower ||
	fail "mount 9p hostroot"
mount -t tmpfs -o size=1G rw /mnt/rw
mkdir -p /mnt/rw/upper /mnt/rw/work
mount -t overlay -o lowerdir=/mnt/lower,upperdir=/mnt/rw/upper,workdir=/mnt/rw/work overlay /newroot ||
	fail "mount overlay"
R=/newroot
mount -t proc proc $R/proc
mount -t sysfs sys $R/sys
mount -t devtmpfs dev $R/dev
mkdir -p $R/dev/pts $R/dev/shm
mount -t devpts devpts $R/dev/pts
# what udev would make: bash's <(...) needs /dev/fd
[ -e $R/dev/fd ] || ln -s /proc/self/fd $R/dev/fd
for i in 0:stdin 1:stdout 2:stderr; do
	[ -e "$R/dev/${i#*:}" ] || ln -s "/proc/self/fd/${i%%:*}" "$R/dev/${i#*:}"
done
mount -t tmpfs shm $R/dev/shm
mount -t tmpfs run $R/run
mount -t bpf bpf $R/sys/fs/bpf 2>/dev/null
mount -t cgroup2 cgroup2 $R/sys/fs/cgroup 2>/dev/null
kver=$(uname -r)
if [ -n "$tree" ] && [ -d "$R$tree/usr/lib/modules/$kver" ]; then
	mkdir -p $R/lib/modules/$kver
	mount --bind "$R$tree/usr/lib/modules/$kver" $R/lib/modules/$kver
fi
ip link set lo up
for n in /sys/class/net/*; do
	ip link set dev "${n##*/}" up
done
echo "FERRY-VM: booted $kver, running ${script:-nothing} $args"
rc=125
if [ -n "$script" ]; then
	chroot $R /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb \
		FERRY_VM=1 FERRY_VM_DEBUG=$debug /bin/bash -c 'cd "$1" && shift && exec /bin/bash "$@"' - "$workdir" "$script" $args
	rc=$?
fi
echo "FERRY-VM-RESULT rc=$rc"
sync
poweroff -f
