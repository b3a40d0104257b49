#!/bin/busybox sh
# PID 1 of the test guest's initramfs: load the modules needed to reach the root disk and the
# 9p share, mount /dev/vda, hand over to /sbin/utgt-init (scripts/vm/guest-init.sh).
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in $(cat /modules.order); do
	insmod "$m" 2>/dev/null || echo "initramfs: insmod $m failed"
done
# virtio-blk probes asynchronously: wait for vda, bounded.
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if ! mount -t ext4 /dev/vda /newroot; then
	echo "initramfs: cannot mount /dev/vda"
	echo "UTGT-VM-EXIT: 125"
	echo o >/proc/sysrq-trigger
fi
mount --move /dev /newroot/dev
mount --move /sys /newroot/sys
mount --move /proc /newroot/proc
exec switch_root /newroot /sbin/utgt-init
