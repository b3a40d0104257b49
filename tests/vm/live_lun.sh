#!/bin/bash
# vm-timeout: 600
# vm-target: none
# Live administration with Linux's initiators: utgtd runs INSIDE the guest (its admin socket
# is local there) with two portals on 127.0.0.1; open-iscsi logs in through both and
# dm-multipath makes one map of LUN 0, on which verified fio runs back to back for the whole
# test.  A LUN added with utgtadm appears after `iscsiadm -m session --rescan` (both paths,
# its own map, data written and read back); removed with utgtadm, it is no longer reported,
# reads of it fail, and its devices are deleted; a resize is seen by the kernel.  Throughout, LUN 0's map keeps both paths active, the iSCSI sessions are the same
# ones, and every fio run ends without error with its crc32c verification passed.
. /src/tests/vm/lib/common.sh
. /src/tests/vm/lib/mpath.sh
BUILD_DIR=build
for a in "$@"; do
	case $a in build=*) BUILD_DIR=${a#build=} ;; esac
done
UTGTD=/src/$BUILD_DIR/utgtd
UTGTADM=/src/$BUILD_DIR/utgtadm
TGT=iqn.2024-01.org.utgt:vm.live
TGT_HOST=127.0.0.1
P1=3260
P2=3261
SOCK=/tmp/utgt-state/utgtd.sock
CONF=/tmp/live.conf
LOG=/out/utgtd.log
adm() { "$UTGTADM" -s "$SOCK" "$@"; }

on_fail() {
	echo "---- multipathd show paths / multipath -ll / sessions / utgtadm"
	multipathd show paths || true
	multipath -ll || true
	iscsiadm -m session -P 1 || true
	adm show targets || true
	echo "---- utgtd log (last 30 lines)"
	tail -30 "$LOG" || true
}

modprobe -a dm_multipath dm_round_robin
start_udev
start_iscsid

step "utgtd in the guest: LUN 0 on $TGT, portals $P1 and $P2"
cat >"$CONF" <<EOF
HANDLER ramdisk {
	DEVICE live0 {
		size_mb 128
		prod_id LIVE0
	}
}
TARGET_DRIVER iscsi {
	listen 127.0.0.1:$P1
	listen 127.0.0.1:$P2
	TARGET $TGT {
		enabled 1
		LUN 0 live0
	}
}
EOF
"$UTGTD" --check -c "$CONF" >/dev/null || fail "utgtd --check refused $CONF"
"$UTGTD" -f -c "$CONF" --state-dir /tmp/utgt-state >>"$LOG" 2>&1 &
UTGTD_PID=$!
wait_until 60 "utgtd's admin socket" adm version
say "$(adm version)"

step "two sessions, one dm-multipath map of LUN 0"
for p in $P1 $P2; do
	iscsi_node_new "$TGT" "$p"
	iscsi_login "$TGT" "$p" >/dev/null
done
s1=$(session_of "$TGT" $P1)
s2=$(session_of "$TGT" $P2)
sd1=$(session_disk "$TGT" $P1 0)
sd2=$(session_disk "$TGT" $P2 0)
d1=${sd1#/dev/} d2=${sd2#/dev/}
udevadm settle -t 30
mpath_conf UTGT LIVE0
mpath_one_map "$d1" "$d2"
MAP0=$MAP
fio_loop_start

both_paths_active() { [ "$(path_state "$d1")" = "active ready" ] && [ "$(path_state "$d2")" = "active ready" ]; }
same_sessions() { [ "$(session_of "$TGT" $P1)" = "$s1" ] && [ "$(session_of "$TGT" $P2)" = "$s2" ]; }

step "a LUN added live appears after iscsiadm --rescan"
out=$(adm add device live1 handler=ramdisk size_mb=32 prod_id=LIVE1) || fail "add device: $out"
say "utgtadm: $out"
out=$(adm add lun 1 driver=iscsi target="$TGT" device=live1) || fail "add lun: $out"
say "utgtadm: $out"
iscsiadm -m session --rescan >/dev/null
n1=$(session_disk "$TGT" $P1 1)
n2=$(session_disk "$TGT" $P2 1)
ok "LUN 1 on both paths: $n1, $n2"
expect_eq "its size" "$(blockdev --getsize64 "$n1")" $((32 << 20))
expect_eq "its product" "$(sg_inq "$n1" | sed -n 's/^ *Product identification: *//p' | sed 's/ *$//')" LIVE1
wait_until 60 "a map for LUN 1" sh -c "multipathd show maps raw format '%n' | grep -vxq '$MAP0'"
MAP1=$(multipathd show maps raw format "%n" | grep -vx "$MAP0" | head -1)
ok "multipathd made a second map: $MAP1"
dd if=/dev/urandom of=/tmp/blob bs=1M count=4 status=none
dd if=/tmp/blob of="/dev/mapper/$MAP1" bs=1M oflag=direct status=none || fail "write to LUN 1 failed"
cmp -n $((4 << 20)) /tmp/blob "/dev/mapper/$MAP1" || fail "LUN 1 reads back other data"
ok "4 MiB written to LUN 1 through its map and read back"
both_paths_active && ok "LUN 0's map: both paths still active" || fail "LUN 0 lost a path"

step "a resize is seen by the kernel"
out=$(adm set device live0 size_mb=192 2>&1) && fail "resize of a ramdisk in use accepted: $out"
say "refused as it should: $out"
out=$(adm -resync_dev live0 2>&1) && fail "resync of a ramdisk accepted: $out"
out=$(adm add device live2 handler=vdisk_nullio size_mb=16) || fail "add nullio: $out"
out=$(adm add lun 2 driver=iscsi target="$TGT" device=live2) || fail "add lun 2: $out"
iscsiadm -m session --rescan >/dev/null
z1=$(session_disk "$TGT" $P1 2)
z2=$(session_disk "$TGT" $P2 2)
expect_eq "LUN 2 before" "$(blockdev --getsize64 "$z1")" $((16 << 20))
out=$(adm resize device live2 size=48M) || fail "resize: $out"
say "utgtadm: $out"
echo 1 >"/sys/block/${z1#/dev/}/device/rescan"
expect_eq "LUN 2 after resize (sd rescan)" "$(blockdev --getsize64 "$z1")" $((48 << 20))

step "LUNs removed live disappear"
out=$(adm remove device live1 2>&1) && fail "a device with a LUN was removed: $out"
ok "refused while LUN 1 uses it: $out"
# what an administrator does first: the maps of the LUNs that go are flushed
for m in $(multipathd show maps raw format "%n" | grep -vx "$MAP0"); do
	multipath -f "$m" || fail "cannot flush map $m"
done
for l in 1 2; do
	out=$(adm remove lun $l driver=iscsi target="$TGT") || fail "remove lun $l: $out"
	say "utgtadm: $out"
done
out=$(adm remove device live1) || fail "remove device: $out"
say "utgtadm: $out"
luns=$(sg_luns "$sd1")
echo "$luns"
expect_eq "LUNs in REPORT LUNS" "$(grep -Ec '^ +[0-9a-f]{16}$' <<<"$luns")" 1
grep -Eq '^ +0{16}$' <<<"$luns" || fail "REPORT LUNS lost LUN 0"
dd if="$n1" of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null && fail "LUN 1 still reads"
ok "a read of LUN 1's old path fails"
# the administrator's last step: the SCSI devices of the LUNs that went are deleted (not
# rescan-scsi-bus.sh -r: it also takes away LUN 0's paths when their TEST UNIT READY reports
# the REPORTED LUNS DATA HAS CHANGED this very change raised)
for d in "$n1" "$n2" "$z1" "$z2"; do
	echo 1 >"/sys/block/${d#/dev/}/device/delete"
done
gone() { ! ls /sys/class/iscsi_session/"$1"/device/target*/*:*:*:"$2" >/dev/null 2>&1; }
wait_until 60 "LUN 1 gone from session $s1" gone "$s1" 1
wait_until 60 "LUN 1 gone from session $s2" gone "$s2" 1
wait_until 60 "LUN 2 gone" gone "$s1" 2
ok "LUNs 1 and 2 are gone from both sessions"

step "LUN 0 kept running"
both_paths_active && ok "both paths of $MAP0 active ready" || fail "a path of LUN 0 failed"
same_sessions && ok "the same iSCSI sessions ($s1, $s2): no relogin" || fail "sessions changed"
fio_loop_finish "the live changes"
dmesg | grep -E "I/O error, dev (dm-|$d1|$d2)" && fail "I/O errors on LUN 0's map or paths"
ok "no I/O error on LUN 0's map or its paths"
sessions=$(adm show sessions --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["sessions"]))')
expect_eq "utgtd sessions" "$sessions" 2

step "teardown"
multipath -F || true
for p in $P1 $P2; do iscsi_logout "$TGT" "$p" >/dev/null || true; done
kill -TERM "$UTGTD_PID"
wait "$UTGTD_PID" || fail "utgtd exited non-zero"
grep -q "exited cleanly" "$LOG" && ok "utgtd exited cleanly" || fail "utgtd did not exit cleanly"
