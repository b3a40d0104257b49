#!/bin/bash
# vm-timeout: 420
# vm-cdrom: 1
# SCST's vcdrom served by utgtd: Linux's open-iscsi logs in to the CD target, sr_mod makes
# /dev/srN (peripheral type 5, 2048-byte blocks, the image's size), isofs mounts the ISO the
# fixture made with xorriso and the files read back equal the host's; the raw device equals
# the image; eject is refused while mounted (the kernel's PREVENT), works after umount once
# removal is allowed (udev's cdrom_id keeps its own lock, as eject(1) knows), leaves no medium,
# and loading brings the medium back.
. /src/tests/vm/lib/common.sh
load_target_env
[ "$TGT_KIND" = utgtd ] || { say "vcdrom is utgtd's (SCST's vcdrom); nothing to test"; exit 0; }
modprobe sr_mod
modprobe isofs
start_udev
start_iscsid

step "login to $TGT_CD"
iscsi_node_new "$TGT_CD" "$TGT_PORT1"
iscsi_login "$TGT_CD" "$TGT_PORT1"
sess=$(session_of "$TGT_CD" "$TGT_PORT1") || fail "no session"
end=$((SECONDS + 120))
while :; do
	sdev=$(ls -d /sys/class/iscsi_session/"$sess"/device/target*/*:*:*:0 2>/dev/null | head -1)
	blk=$(ls "$sdev/block" 2>/dev/null | head -1)
	[ -n "$blk" ] && [ -b "/dev/$blk" ] && break
	[ $SECONDS -lt $end ] || fail "no block device for the CD LU after 120 s"
	sleep 0.2
done
dev=/dev/$blk
# START STOP UNIT goes through the generic device: opening /dev/srN makes the kernel lock the
# tray (PREVENT) for as long as it is open, as a desktop drive does
sg=/dev/$(ls "$sdev/scsi_generic" | head -1)
say "CD LU is $dev ($sg)"
case $blk in sr*) ok "sr_mod took it: $dev" ;; *) fail "$dev is not an sr device" ;; esac
expect_eq "peripheral type (sysfs)" "$(cat "$sdev/type")" 5
expect_eq "logical block size" "$(blockdev --getss "$dev")" 2048
expect_eq "size" "$(blockdev --getsize64 "$dev")" "$(stat -c %s "$CD_ISO")"
inq=$(sg_inq "$dev")
echo "$inq" | sed -n '1,12p'
grep -q "PDT=5" <<<"$inq" || fail "INQUIRY does not say PDT=5"
expect_eq "product" "$(sed -n 's/^ *Product identification: *//p' <<<"$inq" | sed 's/ *$//')" VMCDROM
dmesg | grep -E "sr[0-9]|scsi3-mmc|cdrom" | tail -5

step "raw read equals the image"
cmp "$dev" "$CD_ISO" || fail "$dev differs from the image"
ok "$(stat -c %s "$CD_ISO") bytes equal"

step "mount the ISO 9660 file system"
mkdir -p /mnt/cd
mount -t iso9660 -o ro "$dev" /mnt/cd || fail "mount failed"
mount | grep /mnt/cd
expect_eq "volume label" "$(blkid -o value -s LABEL "$dev")" UTGT_CD
cmp /mnt/cd/README.TXT "$CD_SRC/README.TXT" || fail "README.TXT differs"
cmp /mnt/cd/docs/random.bin "$CD_SRC/docs/random.bin" || fail "random.bin differs"
ok "files read back equal the host's"

step "eject while mounted is refused (PREVENT ALLOW MEDIUM REMOVAL)"
if out=$(sg_start -v --eject "$sg" 2>&1); then
	fail "eject succeeded while mounted: $out"
fi
echo "$out"
grep -qi "medium removal prevented" <<<"$out" || fail "not MEDIUM REMOVAL PREVENTED: $out"
ok "eject refused while mounted: medium removal prevented"

step "umount, eject, load"
umount /mnt/cd
# The kernel's PREVENT goes with the last close, but udev's 60-cdrom_id.rules runs
# `cdrom_id --lock-media` on every CD drive it sees, which locks the tray through SG_IO so the
# drive's eject button raises an event: after umount the tray is still locked, as on a
# desktop.  eject(1) and `cdrom_id --eject-media` allow removal first, and so does this.
if grep -qs -- --lock-media /usr/lib/udev/rules.d/60-cdrom_id.rules; then
	if out=$(sg_start -v --eject "$sg" 2>&1); then
		say "eject went through with udev's rule in place (udev had not probed yet)"
	else
		grep -qi "removal prevented" <<<"$out" ||
			fail "eject with udev's lock: not MEDIUM REMOVAL PREVENTED: $out"
		ok "udev's cdrom_id lock holds the tray after umount: MEDIUM REMOVAL PREVENTED"
	fi
fi
sg_prevent --allow "$sg" || fail "PREVENT ALLOW MEDIUM REMOVAL (allow) failed"
sg_start --eject "$sg" || fail "eject after umount failed"
if tur=$(sg_turs -v "$sg" 2>&1); then
	fail "TEST UNIT READY succeeded with the tray open"
fi
echo "$tur"
grep -qi "not present" <<<"$tur" || fail "no MEDIUM NOT PRESENT after eject: $tur"
ok "ejected: medium not present"
sg_start --load "$sg" || fail "load failed"
wait_until 60 "medium back" sg_turs "$sg"
mount -t iso9660 -o ro "$dev" /mnt/cd || fail "mount after load failed"
cmp /mnt/cd/docs/random.bin "$CD_SRC/docs/random.bin" || fail "random.bin differs after load"
umount /mnt/cd
ok "loaded and mounted again"

step "logout"
iscsi_logout "$TGT_CD" "$TGT_PORT1"
ok "done"
