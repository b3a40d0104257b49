#!/bin/bash
# Guest side of tests/vm/powerloss.sh (one boot): mount the persistent disk /dev/vdb (ext4
# replays its journal after the last boot's power cut), create the LU's backing file on the
# first boot, serve it from utgtd as a vdisk_fileio LU with the setting named in the arguments,
# say so in /out/ready, and keep serving until the host writes /out/stop (a clean end) or kills
# qemu (the power cut).
#
# Arguments: setting=default|write_through|nv_cache|o_direct bs=BYTES size_mb=N
. /src/tests/vm/lib/common.sh
setting=default bs=4096 size_mb=16
for a in "$@"; do
	case $a in
	setting=*) setting=${a#setting=} ;;
	bs=*) bs=${a#bs=} ;;
	size_mb=*) size_mb=${a#size_mb=} ;;
	esac
done
case $setting in
default) attr= ;;
write_through | nv_cache | o_direct) attr="$setting 1" ;;
*) fail "unknown setting '$setting'" ;;
esac
IQN=iqn.2024-01.org.utgt:vm.powerloss
MNT=/mnt/pl
SOCK=/tmp/utgt-admin.sock
LOG=/out/utgtd.log

# The kernel's page cache is the volatile cache under test: no periodic writeback, so what was
# not flushed is still only in RAM when qemu is killed (as it may be on a real server), and a
# setting that skips the flush shows it.
echo 0 >/proc/sys/vm/dirty_writeback_centisecs
echo 360000 >/proc/sys/vm/dirty_expire_centisecs

step "persistent disk"
[ -b /dev/vdb ] || fail "no /dev/vdb: run-guest.sh -d DISK attaches it"
mkdir -p "$MNT"
mount -t ext4 /dev/vdb "$MNT" || fail "cannot mount /dev/vdb"
dmesg | grep -i "vdb" | grep -i "recover" | tail -2 || true
say "write cache of vdb: $(cat /sys/block/vdb/queue/write_cache)"
if [ ! -f "$MNT/lu.img" ]; then
	# Allocated and written out once: the runs overwrite it in place (no block allocation).
	dd if=/dev/zero of="$MNT/lu.tmp" bs=1M count="$size_mb" conv=fsync status=none
	mv "$MNT/lu.tmp" "$MNT/lu.img"
	sync
	ok "backing file created: $size_mb MiB of zeros"
fi

step "utgtd: vdisk_fileio on $MNT/lu.img, blocksize $bs, setting: $setting"
cat >/tmp/pl.conf <<EOF
HANDLER vdisk_fileio {
	DEVICE pl0 {
		filename $MNT/lu.img
		blocksize $bs
		$attr
	}
}
TARGET_DRIVER iscsi {
	listen 0.0.0.0:3260
	TARGET $IQN {
		enabled 1
		LUN 0 pl0
	}
}
EOF
/src/build/utgtd --check -c /tmp/pl.conf >/dev/null || fail "utgtd --check refused the config"
/src/build/utgtd -f -c /tmp/pl.conf --state-dir "$MNT/state" --admin-socket "$SOCK" \
	>>"$LOG" 2>&1 &
pid=$!
wait_until 60 "utgtd's admin socket" /src/build/utgtadm -s "$SOCK" version
echo "$setting $bs" >/out/ready
ok "serving $IQN on port 3260"

# The host ends the boot: /out/stop, or SIGKILL to qemu (then nothing below runs).
until [ -f /out/stop ]; do
	kill -0 "$pid" 2>/dev/null || fail "utgtd exited (see $LOG)"
	sleep 1
done
kill "$pid"
wait "$pid" || true
umount "$MNT"
say "PASS powerloss (guest side, clean end)"
