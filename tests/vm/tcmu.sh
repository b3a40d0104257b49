#!/bin/bash
# vm-timeout: 900
# vm-target: none
# utgtd as an LIO TCMU backstore inside the guest: target_core_user hands the CDBs of an LIO
# "user" backstore (dev_config=utgt/ram0) to utgtd's tcmu driver, which runs them on the
# scst.conf DEVICE ram0 (a ramdisk).  tcm_loop puts a local SCSI disk on top, so Linux's own
# sd/sg_* drive it.  Checks: the device is picked up, READ CAPACITY and INQUIRY come from
# utgtd, data written with dd reads back identical, mkfs.ext4 + fsck, fio verify (crc32c) in
# 4 KiB and 1 MiB blocks; VPD B0's maximum transfer length = LIO's hw_max_sectors; a
# vdisk_fileio DEVICE whose LIO backstore exists before utgtd starts (found by the start scan)
# with data checked in its backing file; a dev_config naming no DEVICE is refused with a log
# line (utgtd keeps serving); LIO objects removed while utgtd runs; utgtd's clean stop; and a
# restart under I/O (SIGTERM while fio reads; a new utgtd resumes the ring; fio sees no error).
# Arguments: quick (smaller fio runs), build=DIR (run /src/DIR/utgtd; default build).
. /src/tests/vm/lib/common.sh
. /src/tests/vm/lib/tcmu.sh
MB=128
FILE_IMG=/var/tmp/tcmu-file0.img # ext4 root: fileio wants a real filesystem
FILE_MB=64
FIO_SIZE=$([ "$QUICK" = 1 ] && echo 32M || echo 96M)
on_fail() {
	echo "--- utgtd log (tail)"
	tail -40 "$LOG" 2>/dev/null
	echo "--- dmesg (tail)"
	dmesg | tail -30
}
trap '[ -n "$UTGTD_PID" ] && kill -KILL "$UTGTD_PID" 2>/dev/null; jobs -p | xargs -r kill 2>/dev/null || true' EXIT

step "modules, configfs, utgtd ($UTGTD)"
[ -x "$UTGTD" ] || fail "no $UTGTD (build it first)"
tcmu_modules
mkdir -p "$DIR"
rm -f "$FILE_IMG"
cat >"$CONF" <<CONF
HANDLER ramdisk {
	DEVICE ram0 {
		size_mb $MB
		blocksize 512
		t10_vend_id UTGT
		prod_id TCMURAM0
	}
}

HANDLER vdisk_fileio {
	DEVICE file0 {
		filename $FILE_IMG
		size_mb $FILE_MB
	}
}

TARGET_DRIVER tcmu {
	enabled 1
}
CONF
"$UTGTD" --check -c "$CONF" >/dev/null || fail "utgtd --check refused $CONF"
step "an LIO user backstore utgt/file0 made BEFORE utgtd starts (nl_reply_supported=-1)"
user_backstore tcmu2 utgt/file0 "$FILE_MB" nl_reply_supported=-1 hw_max_sectors=2048
ok "enabled with nobody serving it yet"
: >"$LOG"
utgtd_start
ok "utgtd (pid $UTGTD_PID) started with TARGET_DRIVER tcmu"
wait_until 60 "the start scan finds tcmu2" grep -q "'tcmu2' served by DEVICE file0" "$LOG"
ok "the existing backstore was found at start"

step "LIO user backstore dev_config=utgt/ram0, tcm_loop LUN 0 on it"
user_backstore tcmu0 utgt/ram0 "$MB"
wait_until 60 "utgtd serves the backstore" grep -q "served by DEVICE ram0" "$LOG"
grep "tcmu" "$LOG" | sed 's/^/    /'
mkdir -p "$LOOP/tpgt_1/lun/lun_0"
echo naa.5001405000000002 >"$LOOP/tpgt_1/nexus"
ln -s "$CORE/tcmu0" "$LOOP/tpgt_1/lun/lun_0/tcmu0"
wait_until 60 "a tcm_loop disk" loop_disk 0
dev=$(loop_disk 0)
ok "$dev appeared"

step "READ CAPACITY and INQUIRY answered by utgtd"
sg_readcap "$dev" >/tmp/cap 2>&1 || { cat /tmp/cap; fail "sg_readcap"; }
expect_eq "blocks" "$(sed -n 's/.*Number of logical blocks=\([0-9]*\).*/\1/p' /tmp/cap)" $((MB << 11))
expect_eq "block length" "$(sed -n 's/.*Logical block length=\([0-9]*\) bytes.*/\1/p' /tmp/cap)" 512
expect_eq "size" "$(blockdev --getsize64 "$dev")" $((MB << 20))
expect_eq "vendor" "$(sg_inq "$dev" 2>/dev/null | sed -n 's/^ *Vendor identification: *//p' | tr -d ' ')" UTGT
expect_eq "product" "$(sg_inq "$dev" 2>/dev/null | sed -n 's/^ *Product identification: *//p' | tr -d ' ')" TCMURAM0
sg_vpd -p bl "$dev" >/tmp/vpdb0 2>&1 || { cat /tmp/vpdb0; fail "VPD B0"; }
# LIO refuses commands past the device's hw_max_sectors: utgt must not announce more
expect_eq "VPD B0 maximum transfer length = LIO's hw_max_sectors" \
	"$(sed -n 's/.*Maximum transfer length: *\([0-9]*\).*/\1/p' /tmp/vpdb0)" \
	"$(cat "$CORE/tcmu0/attrib/hw_max_sectors")"

# LIO answers PERSISTENT RESERVE itself for a TCMU device (docs/tcmu.md): the registration
# must show in LIO's configfs, i.e. it never reached utgt.
step "PERSISTENT RESERVE OUT/IN are LIO's"
# LIO writes its PR metadata under its db_root (/etc/target, else /var/target) even without
# APTPL; with no such directory PR OUT fails NOT READY (seen in this guest).
mkdir -p /var/target/pr
sg_persist -n --out --register --param-sark=0xabc "$dev" || fail "PR register"
sg_persist -n --in -k "$dev" | grep -qi "0xabc" || fail "key not reported by READ KEYS"
grep -qi "abc" "$CORE/tcmu0/pr/res_pr_registered_i_pts" ||
	{ cat "$CORE/tcmu0/pr/res_pr_registered_i_pts"; fail "registration not in LIO's PR state"; }
sg_persist -n --out --register --param-rk=0xabc --param-sark=0 "$dev" || fail "PR unregister"
ok "registration held by LIO (core/user_0/tcmu0/pr), not by utgt"

step "data: 24 MiB in 1 MiB writes, 4 KiB writes, read back"
t0=$SECONDS
dd if=/dev/urandom of=/tmp/pat bs=1M count=24 status=none
dd if=/tmp/pat of="$dev" bs=1M oflag=direct status=none
dd if=/tmp/pat of="$dev" bs=4k count=1024 seek=12288 oflag=direct status=none # at 48 MiB
dd if="$dev" of=/tmp/back bs=1M count=24 iflag=direct status=none
cmp /tmp/pat /tmp/back || fail "1 MiB-write data differs on read back"
dd if="$dev" of=/tmp/back2 bs=4k count=1024 skip=12288 iflag=direct status=none
cmp <(head -c 4M /tmp/pat) /tmp/back2 || fail "4 KiB-write data differs on read back"
ok "28 MiB written and read back identical ($((SECONDS - t0)) s)"

step "vdisk_fileio DEVICE through LUN 1: data lands in its backing file"
mkdir -p "$LOOP/tpgt_1/lun/lun_1"
ln -s "$CORE/tcmu2" "$LOOP/tpgt_1/lun/lun_1/tcmu2"
wait_until 60 "the LUN 1 disk" loop_disk 1
fdev=$(loop_disk 1)
expect_eq "LUN 1 size" "$(blockdev --getsize64 "$fdev")" $((FILE_MB << 20))
expect_eq "LUN 1 maximum transfer length" \
	"$(sg_vpd -p bl "$fdev" | sed -n 's/.*Maximum transfer length: *\([0-9]*\).*/\1/p')" 2048
dd if=/tmp/pat of="$fdev" bs=1M count=8 seek=4 oflag=direct status=none
dd if="$fdev" of=/tmp/fback bs=1M count=8 skip=4 iflag=direct status=none
cmp <(head -c 8M /tmp/pat) /tmp/fback || fail "LUN 1 data differs on read back"
sync
cmp <(head -c 8M /tmp/pat) <(dd if="$FILE_IMG" bs=1M count=8 skip=4 status=none) ||
	fail "the backing file does not hold what was written"
ok "$fdev: 8 MiB read back identical, and found in $FILE_IMG at 4 MiB"

step "mkfs.ext4 + fsck, a file through the filesystem"
mkfs.ext4 -q -F "$dev"
fsck.ext4 -fn "$dev" >/tmp/fsck.log 2>&1 || { cat /tmp/fsck.log; fail "fsck after mkfs"; }
mkdir -p /mnt/tcmu
mount "$dev" /mnt/tcmu
cp /tmp/pat /mnt/tcmu/pat
sync
umount /mnt/tcmu
fsck.ext4 -fn "$dev" >/tmp/fsck.log 2>&1 || { cat /tmp/fsck.log; fail "fsck after writes"; }
echo 3 >/proc/sys/vm/drop_caches
mount "$dev" /mnt/tcmu
cmp /tmp/pat /mnt/tcmu/pat || fail "file differs after remount"
umount /mnt/tcmu
ok "mkfs.ext4, fsck clean twice, file identical after remount"

step "fio verify crc32c, 4 KiB random writes then 1 MiB sequential writes"
t0=$SECONDS
fio_run tcmu_4k --filename="$dev" --direct=1 --ioengine=libaio --rw=randwrite --bs=4k \
	--iodepth=16 --size="$FIO_SIZE" --verify=crc32c --do_verify=1 --verify_fatal=1 --randrepeat=0
fio_run tcmu_1m --filename="$dev" --direct=1 --ioengine=libaio --rw=write --bs=1M \
	--iodepth=4 --size="$FIO_SIZE" --verify=crc32c --do_verify=1 --verify_fatal=1
ok "fio verify passed ($((SECONDS - t0)) s)"

# With tmr_notification on, LIO queues a TMR entry in the ring for a task management function;
# utgtd aborts the commands it names (tests/vm/tcmu_tmr.sh tests that in depth).
step "LUN reset (sg_reset -d) with tmr_notification=1: the TMR entry is handled, I/O continues"
tmr=$CORE/tcmu0/attrib/tmr_notification
[ -w "$tmr" ] && echo 1 >"$tmr"
(dd if="$dev" of=/dev/null bs=64k count=2000 iflag=direct status=none) &
rd=$!
sg_reset -d "$dev" || fail "sg_reset -d"
wait "$rd" || say "(reads during the reset saw an error: $?)"
dd if="$dev" of=/dev/null bs=1M count=24 iflag=direct status=none || fail "I/O after the LUN reset"
kill -0 "$UTGTD_PID" || fail "utgtd died"
if grep -q "task management notification" "$LOG"; then
	grep "task management notification" "$LOG" | tail -2 | sed 's/^/    /'
	ok "TMR entry handled; I/O continues"
else
	ok "I/O continues (no TMR entry queued by this kernel: $([ -e "$tmr" ] && echo "tmr_notification=$(cat "$tmr")" || echo "no tmr_notification attribute"))"
fi

step "a dev_config naming no DEVICE: refused with a log line, utgtd keeps serving"
user_backstore tcmu1 utgt/nosuch "$MB"
wait_until 60 "the refusal logged" grep -q "has no DEVICE 'nosuch'" "$LOG"
grep "nosuch" "$LOG" | sed 's/^/    /'
kill -0 "$UTGTD_PID" || fail "utgtd died"
dd if="$dev" of=/dev/null bs=1M count=4 iflag=direct status=none || fail "I/O after the refusal"
rmdir "$CORE/tcmu1"
ok "refused, logged, I/O continues"

step "remove the LIO objects while utgtd runs"
rm "$LOOP/tpgt_1/lun/lun_0/tcmu0" "$LOOP/tpgt_1/lun/lun_1/tcmu2"
rmdir "$LOOP/tpgt_1/lun/lun_0" "$LOOP/tpgt_1/lun/lun_1"
rmdir "$LOOP/tpgt_1"
rmdir "$LOOP"
rmdir "$CORE/tcmu0" "$CORE/tcmu2"
wait_until 60 "utgtd closes both devices" eval '[ "$(grep -c "uio[0-9]*: closed" "$LOG")" -ge 2 ]'
grep -E "removed|gone|closed" "$LOG" | sed 's/^/    /'
ok "utgtd noticed the removal and closed the device"

step "stop utgtd"
utgtd_stop
say "utgtd exit status $UTGTD_RC"
tail -6 "$LOG" | sed 's/^/    /'
expect_eq "utgtd exit status" "$UTGTD_RC" 0
grep -q "exited cleanly" "$LOG" || fail "utgtd did not exit cleanly"

# utgtd stops while fio reads: the commands it took are drained and answered; those LIO queues
# afterwards wait in the ring, and a new utgtd serves them from cmd_tail, so fio never sees an
# error.  Those commands wait out the gap against LIO's cmd_time_out (30 s by default), which
# then fails them: the gap is under a second on a quiet machine, but a TCG guest on a loaded
# host can take seconds to start a process, so the device gets 120 s here.
step "restart under I/O: SIGTERM while fio reads, a new utgtd resumes the ring"
utgtd_start
user_backstore tcmu3 utgt/file0 "$FILE_MB" # fileio: asynchronous, so commands are in flight
# settable while the device has no LUN yet
echo 120 >"$CORE/tcmu3/attrib/cmd_time_out" || fail "cannot set tcmu3's cmd_time_out"
expect_eq "tcmu3 cmd_time_out" "$(cat "$CORE/tcmu3/attrib/cmd_time_out")" 120
wait_until 60 "utgtd serves tcmu3" grep -q "'tcmu3' served by DEVICE file0" "$LOG"
mkdir -p "$LOOP/tpgt_1/lun/lun_0"
echo naa.5001405000000002 >"$LOOP/tpgt_1/nexus"
ln -s "$CORE/tcmu3" "$LOOP/tpgt_1/lun/lun_0/tcmu3"
wait_until 60 "the disk again" loop_disk 0
dev=$(loop_disk 0)
(fio_run tcmu_restart --filename="$dev" --direct=1 --ioengine=libaio --rw=randread --bs=16k \
	--iodepth=16 --time_based --runtime=8) &
fiopid=$!
n0=$(blk_ios "$dev")
wait_until 60 "reads flowing" eval '[ $(($(blk_ios "$dev") - n0)) -ge 200 ]'
utgtd_stop
expect_eq "first utgtd exit status" "$UTGTD_RC" 0
grep "draining" "$LOG" | tail -1 | sed 's/^/    /'
grep -q "draining [1-9][0-9]* command" "$LOG" || say "(no command was in flight at SIGTERM this time)"
utgtd_start
wait "$fiopid" || fail "fio saw an error across the restart"
[ "$(grep -c "'tcmu3' served by DEVICE file0" "$LOG")" -ge 2 ] || fail "second utgtd did not take tcmu3"
ok "drained, exit 0, the second utgtd took over the ring, fio error-free"
rm "$LOOP/tpgt_1/lun/lun_0/tcmu3"
rmdir "$LOOP/tpgt_1/lun/lun_0" "$LOOP/tpgt_1" "$LOOP" "$CORE/tcmu3"
utgtd_stop
expect_eq "utgtd exit status" "$UTGTD_RC" 0
grep -qE "AddressSanitizer|runtime error" "$LOG" && fail "sanitizer report in utgtd's log"
say "PASS tcmu"
