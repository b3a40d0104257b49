#!/bin/bash
# vm-timeout: 600
# vm-target: none
# LIO's iSCSI fabric over a utgtd TCMU backstore, all inside the guest: an LIO user backstore
# dev_config=utgt/ram0 served by utgtd, an LIO iSCSI target (iscsi_target_mod, configfs) with
# that backstore as LUN 0 on 127.0.0.1, and the guest's own open-iscsi logging in over
# loopback.  Checks: login, the disk's INQUIRY and READ CAPACITY from utgtd, dd write + read
# back identical, fio verify (crc32c), the commands counted on utgtd's side (utgtadm show
# devices), logout, clean stop.
# Arguments: quick (smaller fio run), build=DIR (run /src/DIR/utgtd; default build).
. /src/tests/vm/lib/common.sh
. /src/tests/vm/lib/tcmu.sh
IQN=iqn.2026-12.org.utgt.test:tcmu-iscsi
PORT=3260
FIO_SIZE=$([ "$QUICK" = 1 ] && echo 16M || echo 48M)
TPG=$CFS/iscsi/$IQN/tpgt_1
on_fail() {
	echo "--- utgtd log (tail)"
	tail -30 "$LOG" 2>/dev/null
	echo "--- dmesg (tail)"
	dmesg | tail -30
}
trap '[ -n "$UTGTD_PID" ] && kill -KILL "$UTGTD_PID" 2>/dev/null; jobs -p | xargs -r kill 2>/dev/null || true' EXIT

step "utgtd, an LIO user backstore utgt/ram0, an LIO iSCSI target on 127.0.0.1:$PORT"
[ -x "$UTGTD" ] || fail "no $UTGTD (build it first)"
tcmu_modules
modprobe iscsi_target_mod
mkdir -p "$DIR"
cat >"$CONF" <<CONF
HANDLER ramdisk {
	DEVICE ram0 {
		size_mb 64
		t10_vend_id UTGT
		prod_id TCMUISCSI
	}
}

TARGET_DRIVER tcmu {
	enabled 1
}
CONF
: >"$LOG"
utgtd_start
user_backstore tcmui utgt/ram0 64 nl_reply_supported=-1
wait_until 60 "utgtd serves tcmui" grep -q "'tcmui' served by DEVICE ram0" "$LOG"
mkdir -p "$TPG/lun/lun_0" "$TPG/np/127.0.0.1:$PORT"
ln -s "$CORE/tcmui" "$TPG/lun/lun_0/tcmui"
echo 1 >"$TPG/attrib/generate_node_acls"
echo 1 >"$TPG/attrib/cache_dynamic_acls"
echo 0 >"$TPG/attrib/demo_mode_write_protect"
echo 0 >"$TPG/attrib/authentication"
echo 1 >"$TPG/enable"
ok "LIO iSCSI target $IQN, LUN 0 = user backstore tcmui"

step "open-iscsi in the guest logs in over loopback"
start_iscsid
TGT_HOST=127.0.0.1
iscsiadm -m discovery -t st -p "127.0.0.1:$PORT" | sed 's/^/    /'
iscsi_login "$IQN" "$PORT" >/dev/null || fail "login"
dev=$(session_disk "$IQN" "$PORT" 0)
ok "logged in: $dev"
tr -d "\0" <"$TPG/dynamic_sessions" | grep . | sed "s/^/    LIO session: /" || true
expect_eq "vendor" "$(sg_inq "$dev" 2>/dev/null | sed -n 's/^ *Vendor identification: *//p' | tr -d ' ')" UTGT
expect_eq "product" "$(sg_inq "$dev" 2>/dev/null | sed -n 's/^ *Product identification: *//p' | tr -d ' ')" TCMUISCSI
expect_eq "size" "$(blockdev --getsize64 "$dev")" $((64 << 20))

step "data through iSCSI -> LIO -> TCMU ring -> utgtd"
dd if=/dev/urandom of=/tmp/pat bs=1M count=16 status=none
dd if=/tmp/pat of="$dev" bs=1M oflag=direct status=none
dd if="$dev" of=/tmp/back bs=1M count=16 iflag=direct status=none
cmp /tmp/pat /tmp/back || fail "data differs on read back"
ok "16 MiB written and read back identical"
fio_run tcmu_iscsi --filename="$dev" --direct=1 --ioengine=libaio --rw=randwrite --bs=4k \
	--iodepth=16 --size="$FIO_SIZE" --verify=crc32c --do_verify=1 --verify_fatal=1 --randrepeat=0
ok "fio verify passed"
c=$(tcmu_counter tcmui commands)
expect_eq "tcmui refused completions" "$(tcmu_counter tcmui refused_completions)" 0
[ "$c" -gt 4096 ] || fail "utgtd counted only $c commands"
ok "utgtd served $c commands for the iSCSI LUN"

step "logout, remove the LIO objects, stop utgtd"
iscsi_logout "$IQN" "$PORT" >/dev/null || fail "logout"
echo 0 >"$TPG/enable"
rmdir "$TPG/np/127.0.0.1:$PORT"
rm "$TPG/lun/lun_0/tcmui"
rmdir "$TPG/lun/lun_0" "$TPG" "$CFS/iscsi/$IQN"
wait_until 30 "LIO to release tcmui" rmdir "$CORE/tcmui"
wait_until 60 "utgtd closes tcmui" grep -q "uio[0-9]*: closed" "$LOG"
utgtd_stop
expect_eq "utgtd exit status" "$UTGTD_RC" 0
grep -qE "AddressSanitizer|runtime error" "$LOG" && fail "sanitizer report in utgtd's log"
say "PASS tcmu_iscsi"
